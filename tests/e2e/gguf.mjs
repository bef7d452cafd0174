// The GGUF file itself (issue 19), for llama.cpp and Ollama: a file picked
// from disk, or a Hub repository's file read by HTTP range requests. The
// tools worker reads only the header, and the page applies the model and
// the exact bytes of the file's tensors. The real Hub is never called:
// https://huggingface.co is routed (page.route, which also sees the
// worker's requests) to a local server that answers range requests as the
// Hub does (206 and Content-Range) and records each one.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { test, artifacts } from "./harness.mjs";
import { cli } from "./cli.mjs";
import { assertBothThemes } from "./a11y.mjs";
import * as ui from "./ui.mjs";

const HUB = "https://huggingface.co";
const FIXTURE = "crates/core/tests/fixtures/gguf/tiny-llama-mixed.gguf";
/** tiny-llama-mixed.expected.json's `tensor_bytes` (the gguf package's reader). */
const TENSOR_BYTES = "153852";
const MiB = 1 << 20;

/**
 * The fixture with a string value of `n` bytes put first among its keys
 * (n + 32 a multiple of 32, so the data section stays aligned) and `tail`
 * zero bytes after its data: a multi-MiB header in a much larger file, the
 * same model and tensors.
 */
function withLongValue(n, tail) {
  const file = fs.readFileSync(FIXTURE);
  const key = Buffer.from("vramfit.test.pad");
  const u64 = (v) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    return b;
  };
  const u32 = (v) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    return b;
  };
  return Buffer.concat([
    file.subarray(0, 16),
    u64(file.readBigUInt64LE(16) + 1n),
    u64(key.length), key, u32(8), u64(n), Buffer.alloc(n, "x"),
    file.subarray(24),
    Buffer.alloc(tail),
  ]);
}

/** A GGUF v3 start whose first value claims a string of `n` bytes. */
function claimsString(n) {
  const b = Buffer.alloc(24 + 8 + 12 + 4 + 8);
  b.write("GGUF", 0);
  b.writeUInt32LE(3, 4);
  b.writeBigUInt64LE(0n, 8);
  b.writeBigUInt64LE(1n, 16);
  b.writeBigUInt64LE(12n, 24);
  b.write("general.name", 32);
  b.writeUInt32LE(8, 44);
  b.writeBigUInt64LE(BigInt(n), 48);
  return b;
}

const REPO = "test-owner/tiny-GGUF";
/** The fake Hub's files: `/<repo>/resolve/main/<path>`. */
const FILES = {
  [`${REPO}/tiny-llama-mixed.gguf`]: { body: withLongValue(3 * MiB - 32, 16 * MiB) },
  [`${REPO}/folder/small model.gguf`]: { body: fs.readFileSync(FIXTURE) },
  [`${REPO}/no-ranges.gguf`]: { body: withLongValue(3 * MiB - 32, 16 * MiB), ranges: false },
  [`${REPO}/README.md`]: { body: Buffer.from("# tiny-GGUF\n\nA model card, not a GGUF file.\n".repeat(10)) },
  [`${REPO}/huge-header.gguf`]: { body: claimsString(100 * MiB) },
  [`${REPO}/cut.gguf`]: { body: fs.readFileSync(FIXTURE).subarray(0, 1000) },
  "meta-llama/Llama-3.1-8B-GGUF/model.gguf": { status: 401 },
};

/** The local stand-in for the Hub; `hits` lists every request with its range and the bytes sent. */
async function fakeHub() {
  const hits = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    const headers = {
      "access-control-allow-origin": req.headers.origin || "*",
      "access-control-expose-headers": "Content-Range, Accept-Ranges, Content-Length",
      vary: "Origin",
    };
    const hit = { path: decodeURIComponent(url.pathname), range: req.headers.range ?? null, status: 0, sent: 0 };
    hits.push(hit);
    const m = hit.path.match(/^\/([^/]+\/[^/]+)\/resolve\/main\/(.+)$/);
    const file = m && FILES[`${m[1]}/${m[2]}`];
    const send = (status, extra, body) => {
      hit.status = status;
      hit.sent = body.length;
      res.writeHead(status, { ...headers, ...extra, "content-length": body.length }).end(body);
    };
    if (!file) return send(404, { "x-error-code": "EntryNotFound" }, Buffer.from("Entry not found"));
    if (file.status) return send(file.status, { "x-error-code": "GatedRepo" }, Buffer.from("Access restricted"));
    const body = file.body;
    const r = hit.range?.match(/^bytes=(\d+)-(\d*)$/);
    if (!r || file.ranges === false) return send(200, { "accept-ranges": "none" }, body);
    const start = Number(r[1]);
    const end = Math.min(r[2] === "" ? body.length - 1 : Number(r[2]), body.length - 1);
    if (start >= body.length) return send(416, { "content-range": `bytes */${body.length}` }, Buffer.alloc(0));
    send(206, { "accept-ranges": "bytes", "content-range": `bytes ${start}-${end}/${body.length}` }, body.subarray(start, end + 1));
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const base = `http://127.0.0.1:${server.address().port}`;
  return { base, hits, close: () => new Promise((ok) => server.close(ok)) };
}

/** Routes the page's (and its workers') requests to https://huggingface.co to the fake Hub. */
async function routeHub(page, hub) {
  await page.route(`${HUB}/**`, async (route) => {
    const u = new URL(route.request().url());
    const response = await route.fetch({ url: hub.base + u.pathname + u.search });
    await route.fulfill({ response });
  });
}

async function withHub(page, fn) {
  const hub = await fakeHub();
  try {
    await routeHub(page, hub);
    await fn(hub);
  } finally {
    await hub.close();
  }
}

const LINK = "task=infer&engine=llamacpp&model=llama3.2-1b&ctx=4096&gpu=rtx-4090";

/** Waits for the panel's status to reach `state` (idle, reading, done, error). */
function waitState(page, state) {
  return page.waitForSelector(`[data-testid="gguf-status"][data-state="${state}"]`, { state: "attached" });
}

const statusText = async (page) => (await page.textContent('[data-testid="gguf-status"] .gguf-message')).trim();

/** Names a Hub file and asks for its header. */
async function readHub(page, repo, file) {
  await page.fill('[data-testid="gguf-repo"]', repo);
  await page.fill('[data-testid="gguf-path"]', file);
  await page.click('[data-testid="gguf-hub-read"]');
}

/** Screenshot of the panel alone. */
const panelShot = (page, name) =>
  page.locator('[data-testid="gguf-panel"]').screenshot({ path: path.join(artifacts, `gguf-panel-${name}.png`) });

test("gguf: a file picked from disk gives the model and its exact bytes, in the link", async ({ page, base, shot }) => {
  await page.goto(`${base}?${LINK}`);
  await ui.ready(page);
  await waitState(page, "idle");
  assert.equal(await statusText(page), "");
  assert.equal(await page.isVisible('[data-testid="gguf-forget"]'), false);
  await panelShot(page, "before");
  await page.setInputFiles('[data-testid="gguf-file"]', FIXTURE);
  await waitState(page, "done");
  const m = (await statusText(page)).match(
    /^Read tiny-llama-mixed\.gguf's header: `llama` q4_k_m, ([\d\u2009]+) parameters\. The estimate uses the exact bytes of its tensors\.$/,
  );
  assert.ok(m, await statusText(page));
  const p = ui.urlParams(page);
  assert.equal(p.get("file"), "tiny-llama-mixed.gguf", "the link names the file");
  assert.equal(p.get("weights"), "q4_k_m");
  assert.notEqual(p.get("model"), "llama3.2-1b", "the file's architecture replaces the preset");
  assert.ok(p.get("file_bytes"), "the link carries the file's bytes");
  assert.equal(p.get("ctx"), "4096", "the run's settings stay");
  // The weights are the file's tensors, to the byte.
  await page.waitForSelector(`[data-testid="served-weights"][data-bytes="${TENSOR_BYTES}"]`);
  assert.match(await page.textContent('[data-testid="served-weights"]'), /153\u2009852/);
  assert.ok((await page.textContent('[data-testid="param-count"]')).includes(`${m[1]} parameters`), "the model read is the model shown");
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)), "the page and the CLI agree on the link");
  await panelShot(page, "after");
  await shot();
  // The link reproduces it without the file.
  const [url, peak] = [page.url(), await ui.peakBytes(page)];
  await page.reload();
  await ui.ready(page);
  assert.equal(page.url(), url);
  assert.equal(await ui.peakBytes(page), peak);
  assert.equal(await ui.attr(page, "served-weights", "data-bytes"), TENSOR_BYTES);
  assert.equal(await statusText(page), "The estimate uses the exact bytes of tiny-llama-mixed.gguf's tensors, read from its header.");
  // Forgetting the file: the weights are predicted for the file type again.
  await page.click('[data-testid="gguf-forget"]');
  await page.waitForFunction(() => !new URL(location.href).searchParams.has("file_bytes"));
  assert.equal(ui.urlParams(page).get("file"), null);
  assert.equal(ui.urlParams(page).get("weights"), "q4_k_m");
  assert.notEqual(await ui.attr(page, "served-weights", "data-bytes"), TENSOR_BYTES);
  assert.equal(await page.inputValue('[data-testid="gguf-file"]'), "", "the input is emptied");
  // Picking the same file again reads it again.
  await page.setInputFiles('[data-testid="gguf-file"]', FIXTURE);
  await waitState(page, "done");
  await page.waitForSelector(`[data-testid="served-weights"][data-bytes="${TENSOR_BYTES}"]`);
  // A file that is not a GGUF: said next to the inputs, nothing changes.
  const before = ui.urlQuery(page);
  await page.setInputFiles('[data-testid="gguf-file"]', { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("PK\x03\x04 not a gguf") });
  await waitState(page, "error");
  assert.equal(await statusText(page), "notes.txt: not a GGUF file (no GGUF magic)");
  await page.setInputFiles('[data-testid="gguf-file"]', { name: "cut.gguf", mimeType: "application/octet-stream", buffer: fs.readFileSync(FIXTURE).subarray(0, 1000) });
  await page.waitForFunction(() => /ends inside its GGUF header/.test(document.querySelector('[data-testid="gguf-status"]').textContent));
  assert.match(await statusText(page), /^cut\.gguf: the file ends inside its GGUF header \(after 1000 bytes\)/);
  assert.equal(ui.urlQuery(page), before);
});

test("gguf: shown for llama.cpp and Ollama only", async ({ page, base }) => {
  for (const [engine, shown] of [["llamacpp", true], ["ollama", true], ["vllm", false], ["transformers", false], ["mlx", false]]) {
    await page.goto(`${base}?task=infer&engine=${engine}&model=llama3.2-1b`);
    await ui.ready(page);
    assert.equal(await page.locator('[data-testid="gguf-panel"]').count(), shown ? 1 : 0, engine);
  }
  await page.goto(`${base}?model=llama3.2-1b`);
  await ui.ready(page);
  assert.equal(await page.locator('[data-testid="gguf-panel"]').count(), 0, "training");
});

test("gguf: a Hub file is read by range requests, never downloaded; the link records it", async ({ page, base, shot }) =>
  withHub(page, async (hub) => {
    await page.goto(`${base}?${LINK.replace("llamacpp", "ollama")}`);
    await ui.ready(page);
    await readHub(page, REPO, "tiny-llama-mixed.gguf");
    await waitState(page, "done");
    const name = `hf:${REPO}/tiny-llama-mixed.gguf`;
    assert.ok(
      (await statusText(page)).startsWith(`Read ${name}'s header: \`llama\` q4_k_m, `),
      await statusText(page),
    );
    const size = FILES[`${REPO}/tiny-llama-mixed.gguf`].body.length;
    // Ranges only, from the start, each asking for bytes not read yet, and
    // a small part of the file in all (its header is 3 MiB of 19).
    const reads = hub.hits.map((h) => [h.range, h.status]);
    console.log(`     range requests: ${JSON.stringify(reads)}`);
    assert.ok(hub.hits.every((h) => h.path === `/${REPO}/resolve/main/tiny-llama-mixed.gguf`));
    assert.ok(hub.hits.every((h) => h.status === 206 && /^bytes=\d+-\d+$/.test(h.range)), JSON.stringify(reads));
    assert.equal(hub.hits[0].range, `bytes=0-${MiB - 1}`, "the first read is 1 MiB");
    let next = 0;
    for (const h of hub.hits) {
      const [from, to] = h.range.slice(6).split("-").map(Number);
      assert.equal(from, next, "contiguous");
      next = to + 1;
    }
    const sent = hub.hits.reduce((n, h) => n + h.sent, 0);
    assert.ok(hub.hits.length <= 3, `${hub.hits.length} requests`);
    assert.ok(sent < 2 * 3.01 * MiB && sent < size / 3, `${sent} of ${size} bytes sent`);
    // The model and the exact bytes, and the link names the file.
    const p = ui.urlParams(page);
    assert.equal(p.get("file"), name);
    assert.equal(p.get("weights"), "q4_k_m");
    assert.equal(await ui.attr(page, "served-weights", "data-bytes"), TENSOR_BYTES);
    assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
    await shot();
    // A link that names the Hub file but not its bytes: the boxes are
    // filled, and reading it is one click.
    p.delete("file_bytes");
    await page.goto(`${base}?${p}`);
    await ui.ready(page);
    assert.equal(await page.inputValue('[data-testid="gguf-repo"]'), REPO);
    assert.equal(await page.inputValue('[data-testid="gguf-path"]'), "tiny-llama-mixed.gguf");
    assert.match(await statusText(page), new RegExp(`^This link names ${name.replace(/[.]/g, "\\.")} but not its bytes: read its header`));
    assert.notEqual(await ui.attr(page, "served-weights", "data-bytes"), TENSOR_BYTES, "predicted until read");
    await page.click('[data-testid="gguf-hub-read"]');
    await waitState(page, "done");
    assert.equal(await ui.attr(page, "served-weights", "data-bytes"), TENSOR_BYTES);
    // A path in a folder, with a space, given as the file's page address.
    hub.hits.length = 0;
    await readHub(page, `https://huggingface.co/${REPO}/blob/main/folder/small%20model.gguf`, "");
    await waitState(page, "done");
    assert.deepEqual(hub.hits.map((h) => h.path), [`/${REPO}/resolve/main/folder/small model.gguf`]);
    assert.equal(ui.urlParams(page).get("file"), `hf:${REPO}/folder/small model.gguf`);
  }));

test("gguf: a 404, a gated repository, not a GGUF, no range support, a huge header, offline: said next to the inputs", async ({ page, base, shot }) =>
  withHub(page, async (hub) => {
    await page.goto(`${base}?${LINK}`);
    await ui.ready(page);
    const before = { query: ui.urlQuery(page), peak: await ui.peakBytes(page) };
    const cases = [
      [REPO, "missing.gguf", new RegExp(`^hf:${REPO}/missing\\.gguf was not found on huggingface\\.co \\(no such repository, or no such file on its main branch\\)`)],
      ["meta-llama/Llama-3.1-8B-GGUF", "model.gguf", /^hf:meta-llama\/Llama-3\.1-8B-GGUF\/model\.gguf is in a gated or private repository .* Download the file while logged in and pick it from disk instead\./],
      [REPO, "README.md", new RegExp(`^hf:${REPO}/README\\.md: not a GGUF file \\(no GGUF magic\\)$`)],
      [REPO, "no-ranges.gguf", /^huggingface\.co sent the whole of .*no-ranges\.gguf instead of the part asked for \(it did not answer a range request\), so the page stopped rather than download the file/],
      [REPO, "huge-header.gguf", /huge-header\.gguf: its header would take more than the first 64 MiB of the file to read \(\d+ bytes\)/],
      [REPO, "cut.gguf", /cut\.gguf: the file ends inside its GGUF header \(after 1000 bytes\)/],
    ];
    for (const [repo, file, message] of cases) {
      hub.hits.length = 0;
      await readHub(page, repo, file);
      await page.waitForFunction(
        () => document.querySelector('[data-testid="gguf-status"]')?.dataset.state === "error",
      );
      const text = await statusText(page);
      assert.match(text, message, `${file}: ${text}`);
      assert.equal(ui.urlQuery(page), before.query, file);
      assert.equal(await ui.peakBytes(page), before.peak, file);
      if (file === "huge-header.gguf") assert.equal(hub.hits.length, 1, "refused after the first read");
      if (file === "no-ranges.gguf") await panelShot(page, "error");
      // Typing clears the message about the last file.
      await page.fill('[data-testid="gguf-path"]', "x");
      await waitState(page, "idle");
    }
    // Invalid names are refused before anything is fetched.
    hub.hits.length = 0;
    for (const [repo, file, message] of [
      ["Qwen3-8B-GGUF", "a.gguf", /is not a Hugging Face model id/],
      [REPO, "", /^Name the file in test-owner\/tiny-GGUF too/],
      [REPO, "../secrets.gguf", /is not a file's path in a repository/],
    ]) {
      await readHub(page, repo, file);
      await waitState(page, "error");
      assert.match(await statusText(page), message, `${repo} ${file}`);
    }
    assert.deepEqual(hub.hits, []);
    // Offline (or blocked by CORS: the same to the page).
    await page.unroute(`${HUB}/**`);
    await page.route(`${HUB}/**`, (route) => route.abort("internetdisconnected"));
    await readHub(page, REPO, "tiny-llama-mixed.gguf");
    await waitState(page, "error");
    assert.match(await statusText(page), /^Could not reach huggingface\.co for hf:test-owner\/tiny-GGUF\/tiny-llama-mixed\.gguf \(offline, or the answer was blocked\)/);
    await shot();
  }));

test("gguf: the panel on a phone, and its accessibility in both themes", async ({ page, base, shot }) =>
  withHub(page, async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}?${LINK}`);
    await ui.ready(page);
    await page.locator('[data-testid="gguf-panel"]').scrollIntoViewIfNeeded();
    await panelShot(page, "phone-before");
    await readHub(page, REPO, "tiny-llama-mixed.gguf");
    await waitState(page, "done");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the phone`);
    await panelShot(page, "phone-after");
    await readHub(page, REPO, "missing.gguf");
    await waitState(page, "error");
    await panelShot(page, "phone-error");
    await page.setViewportSize({ width: 1280, height: 900 });
    await assertBothThemes(page, shot);
  }));
