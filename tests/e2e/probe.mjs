// The WebGPU probe (issue 5) in headless Chromium: SwiftShader with
// --enable-unsafe-webgpu, and no adapter without it.
import assert from "node:assert/strict";
import { test } from "./harness.mjs";
import * as ui from "./ui.mjs";

const GIB = 2 ** 30;

/** Opens the probe panel and waits for the adapter report. */
async function openProbe(page) {
  const start = page.locator('[data-testid="probe-start"]');
  await ui.ensureVisible(start);
  await page.waitForSelector('[data-testid="probe-adapter"]');
}

/** Clicks a probe button and waits for its result. */
async function runProbe(page, button = "probe-start") {
  await page.waitForSelector(`[data-testid="${button}"]:not([disabled])`);
  const before = await page.$('[data-testid="probe-result"]');
  await page.click(`[data-testid="${button}"]`);
  await page.waitForFunction(
    (old) => {
      const r = document.querySelector('[data-testid="probe-result"]');
      return r && r !== old && !document.querySelector('[data-testid="probe-cancel"]:not([disabled])');
    },
    before,
    { timeout: 60000 },
  );
  return page.$eval('[data-testid="probe-result"]', (r) => ({
    bytes: Number(r.dataset.bytes),
    outcome: r.dataset.outcome,
    text: r.textContent,
  }));
}

test("probe: the adapter report lists SwiftShader, its limits and features, as JSON too", async ({ page, base, shot }) => {
  // Every request, the worker's included.
  const requested = [];
  page.on("request", (r) => requested.push(new URL(r.url()).pathname));
  const fetched = (part) => requested.filter((p) => p.includes(part)).length;
  await page.goto(`${base}?model=gpt2-124m`);
  await ui.ready(page);
  // The probe (wgpu, in a Web Worker) is not downloaded until it is opened.
  await page.waitForTimeout(300);
  assert.equal(fetched("vramfit-probe-worker"), 0, requested.join(" "));
  await openProbe(page);
  assert.equal(fetched("vramfit-probe-worker_bg.wasm"), 1, requested.join(" "));
  assert.equal(await ui.attr(page, "probe-adapter", "data-fallback"), "true");
  assert.match(await page.textContent('[data-testid="probe-fallback"]'), /software adapter/i);
  const limits = await page.$$eval("[data-limit]", (rows) => Object.fromEntries(rows.map((r) => [r.dataset.limit, Number(r.querySelector("td").textContent)])));
  assert.equal(limits.maxBufferSize, GIB);
  assert.ok(Object.keys(limits).length >= 20, Object.keys(limits).join(","));
  const href = await ui.attr(page, "probe-export", "href");
  const json = JSON.parse(decodeURIComponent(href.replace(/^data:application\/json[^,]*,/, "")));
  assert.equal(json.fallback, true);
  assert.match(JSON.stringify(json), /swiftshader/i);
  // Nothing is allocated until the user clicks.
  assert.equal(await page.$('[data-testid="probe-result"]'), null);
  assert.match(await page.textContent('[data-testid="probe-status"]'), /starts only when you click/);
  await shot();
});

test("probe: a 1 GiB chunk takes the out-of-memory path", async ({ page, base }) => {
  await page.goto(`${base}?model=gpt2-124m`);
  await ui.ready(page);
  await openProbe(page);
  await page.fill('[data-testid="probe-ceiling"]', "2");
  await page.fill('[data-testid="probe-chunk"]', "1024");
  const r = await runProbe(page);
  assert.equal(r.outcome, "oom");
  assert.equal(r.bytes, 0);
  assert.match(r.text, /Nothing could be allocated: the GPU refused even the first buffer/);
  assert.equal(await page.$('[data-testid="probe-use"]'), null, "no figure to use");
});

test("probe: it reaches its ceiling, frees everything, and the figure becomes the capacity", async ({ page, base, shot }) => {
  await page.goto(`${base}?model=gpt2-124m`);
  await ui.ready(page);
  await openProbe(page);
  await page.fill('[data-testid="probe-ceiling"]', "1");
  const first = await runProbe(page);
  assert.deepEqual([first.outcome, first.bytes], ["ceiling", GIB]);
  assert.match(first.text, /At least 1\.00 GiB could be allocated \(4 buffers, /);
  assert.match(await page.textContent('[data-testid="probe-status"]'), /Everything allocated was freed/);
  // Freed: a second probe gives the same figure.
  const second = await runProbe(page);
  assert.deepEqual([second.outcome, second.bytes], ["ceiling", GIB]);
  await page.click('[data-testid="probe-use"]');
  await page.waitForFunction(() => new URL(location.href).searchParams.get("gpu") === "probe");
  const p = ui.urlParams(page);
  assert.equal(p.get("probe_bytes"), String(GIB));
  assert.match(p.get("probe_adapter"), /swiftshader/i);
  assert.equal(await ui.attr(page, "fit-verdict", "data-bytes"), String(GIB));
  assert.match(await page.textContent('[data-testid="capacity-source"]'), /1\.00 GiB measured on .*\(a lower bound\)/);
  await shot();
  // Shared: the link keeps the measured figure and the adapter's name.
  await page.reload();
  await ui.ready(page);
  assert.equal(await ui.attr(page, "fit-verdict", "data-bytes"), String(GIB));
  assert.match(await page.textContent('[data-testid="fit-verdict"]'), /measured on/);
});

test("probe: cancel stops it part way", async ({ page, base }) => {
  await page.goto(`${base}?model=gpt2-124m`);
  await ui.ready(page);
  await openProbe(page);
  await page.fill('[data-testid="probe-ceiling"]', "2");
  await page.fill('[data-testid="probe-chunk"]', "64");
  await page.click('[data-testid="probe-start"]');
  await page.waitForFunction(() => /Measuring… [\d.]+ GiB allocated in [1-9]/.test(document.querySelector('[data-testid="probe-status"]').textContent));
  await page.click('[data-testid="probe-cancel"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="probe-result"]'), null, { timeout: 60000 });
  const r = await page.$eval('[data-testid="probe-result"]', (e) => ({ bytes: Number(e.dataset.bytes), outcome: e.dataset.outcome }));
  assert.equal(r.outcome, "cancelled");
  assert.ok(r.bytes > 0 && r.bytes < 2 * GIB, String(r.bytes));
});

test("probe: does my workload fit? allocates exactly the estimated peak", async ({ page, base }) => {
  await page.goto(`${base}?model=llama-20m&batch=1&seq=128&ctx_mib=0&reserve_pct=0`);
  await ui.ready(page);
  await openProbe(page);
  const peak = Number(await ui.peakBytes(page));
  const r = await runProbe(page, "probe-fit");
  assert.equal(r.outcome, "ceiling");
  // The ceiling is the peak rounded down to a multiple of 4 bytes.
  assert.equal(r.bytes, peak - (peak % 4));
  assert.equal(await ui.attr(page, "probe-fit-result", "data-fits"), "true");
  // Bigger than a software adapter may be probed: it says it cannot confirm.
  await ui.setField(page, "model", "llama3.1-8b");
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="peak-total"]').dataset.bytes) > 3 * 2 ** 30);
  const big = await runProbe(page, "probe-fit");
  assert.equal(big.outcome, "ceiling");
  assert.equal(await ui.attr(page, "probe-fit-result", "data-fits"), "");
  assert.match(await page.textContent('[data-testid="probe-fit-result"]'), /Could not confirm: a software adapter is probed to 2\.00 GiB at most/);
});

test("probe: a typed ceiling that is not a number is refused next to it [probe]", async ({ page, base }) => {
  await page.goto(`${base}?model=gpt2-124m`);
  await ui.ready(page);
  await openProbe(page);
  await page.fill('[data-testid="probe-ceiling"]', "lots");
  await page.waitForSelector('[data-testid="probe-start"][disabled]');
  assert.equal(await page.textContent('[data-testid="probe-error"]'), "ceiling: `lots` is not a positive number");
});

test("probe without WebGPU: the no-adapter message and what to do [no-webgpu]", async ({ page, base, shot }) => {
  await page.goto(`${base}?model=gpt2-124m`);
  await ui.ready(page);
  await openProbe(page);
  const outcome = await ui.attr(page, "probe-adapter", "data-outcome");
  assert.ok(["no-adapter", "unsupported"].includes(outcome), outcome);
  const text = await page.textContent('[data-testid="probe-adapter"]');
  assert.match(text, /WebGPU/);
  assert.match(text, /choose your GPU from the list|type its memory/);
  assert.ok(await page.$('[data-testid="probe-start"][disabled]'), "nothing to start");
  // The documented hook (issue 9): probe-result with the outcome key, 0
  // bytes and the message, without any click.
  await page.waitForSelector('[data-testid="probe-result"]');
  assert.equal(await page.locator('[data-testid="probe-result"]').count(), 1);
  const result = await page.$eval('[data-testid="probe-result"]', (r) => ({
    outcome: r.dataset.outcome,
    bytes: r.dataset.bytes,
    text: r.textContent,
  }));
  assert.equal(result.outcome, outcome);
  assert.equal(result.bytes, "0");
  assert.match(result.text, /No GPU memory can be measured in this browser\./);
  const message = {
    "no-adapter": "This browser exposes no WebGPU adapter. Try a browser with WebGPU (recent Chrome or Edge), choose your GPU from the list, or type its memory.",
    unsupported: "This browser has no WebGPU, so GPU memory cannot be measured here. Try a browser with WebGPU (recent Chrome or Edge), choose your GPU from the list, or type its memory.",
  }[outcome];
  assert.ok(result.text.includes(message), result.text);
  assert.equal(await page.$('[data-testid="probe-use"]'), null, "no figure to use");
  assert.equal(
    await page.textContent('[data-testid="probe-status"]'),
    `Not measured (${outcome}); nothing was allocated.`,
  );
  // The rest of the page works as before.
  assert.ok((await ui.peakBytes(page)) > 0n);
  await shot();
});
