// Loading a config.json from the Hugging Face Hub by model id (issue 10).
// The real Hub is never called: every request the page makes to
// https://huggingface.co is routed (page.route) to a local server that
// answers as the Hub does: a 307 to /api/resolve-cache/… then the file, 404,
// 401 for a gated model, a page that is not JSON, a masked LM's config, a
// server error; and route.abort() stands for being offline.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { test, artifacts } from "./harness.mjs";
import { cli } from "./cli.mjs";
import { assertBothThemes, openAll } from "./a11y.mjs";
import * as ui from "./ui.mjs";

const HUB = "https://huggingface.co";
const fixture = (name) => fs.readFileSync(`crates/core/tests/fixtures/hf_configs/${name}.json`, "utf8");

/** bert-base-uncased's config.json as published: a masked LM. */
const BERT = JSON.stringify({
  architectures: ["BertForMaskedLM"], attention_probs_dropout_prob: 0.1, gradient_checkpointing: false,
  hidden_act: "gelu", hidden_dropout_prob: 0.1, hidden_size: 768, initializer_range: 0.02,
  intermediate_size: 3072, layer_norm_eps: 1e-12, max_position_embeddings: 512, model_type: "bert",
  num_attention_heads: 12, num_hidden_layers: 12, pad_token_id: 0, position_embedding_type: "absolute",
  transformers_version: "4.6.0.dev0", type_vocab_size: 2, use_cache: true, vocab_size: 30522,
});

/** A family vramfit does not know (StableLM 2 1.6B's numbers). */
const STABLELM = JSON.stringify({
  architectures: ["StableLmForCausalLM"], model_type: "stablelm", hidden_size: 2048, num_hidden_layers: 24,
  num_attention_heads: 32, num_key_value_heads: 32, intermediate_size: 5632, vocab_size: 100352,
  tie_word_embeddings: false, max_position_embeddings: 4096,
});

/** What the fake Hub answers for `/<id>/resolve/main/config.json`. */
const MODELS = {
  "Qwen/Qwen3-8B": { status: 200, body: fixture("qwen3-8b"), redirect: true },
  "mistralai/Mixtral-8x7B-v0.1": { status: 200, body: fixture("mixtral-8x7b") },
  "stabilityai/stablelm-2-1_6b": { status: 200, body: STABLELM },
  "google-bert/bert-base-uncased": { status: 200, body: BERT },
  "example/not-json": { status: 200, body: "<!doctype html><title>Hugging Face – The AI community</title>" },
  "meta-llama/Llama-3.1-8B": {
    status: 401,
    error: "GatedRepo",
    body: "Access to model meta-llama/Llama-3.1-8B is restricted. You must have access to it and be authenticated to access it. Please log in.",
  },
  "example/overloaded": { status: 503, body: "Service Unavailable" },
};
const COMMIT = "b968826d9c46dd6066d109eabc6255188de91218";

/** The local stand-in for the Hub; `hits` lists every path asked for. */
async function fakeHub() {
  const hits = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    hits.push(url.pathname);
    // The Hub answers CORS requests from any origin (Vary: Origin).
    const headers = { "access-control-allow-origin": req.headers.origin || "*", vary: "Origin" };
    const resolve = url.pathname.match(/^\/([^/]+\/[^/]+)\/resolve\/main\/config\.json$/);
    const cached = url.pathname.match(/^\/api\/resolve-cache\/models\/([^/]+\/[^/]+)\/[0-9a-f]{40}\/config\.json$/);
    const id = (resolve || cached)?.[1];
    const model = MODELS[id];
    if (!model) {
      res.writeHead(404, { ...headers, "content-type": "text/plain", "x-error-code": "RepoNotFound" });
      res.end("Repository not found");
    } else if (resolve && model.redirect) {
      // What the Hub does today for a small file: a relative 307.
      const to = `/api/resolve-cache/models/${id}/${COMMIT}/config.json?etag=%22d6ceb92c%22`;
      res.writeHead(307, { ...headers, location: to, "x-repo-commit": COMMIT });
      res.end(`Temporary Redirect. Redirecting to ${to}`);
    } else {
      const type = model.status === 200 && model.body.startsWith("{") ? "application/json" : "text/plain";
      res.writeHead(model.status, { ...headers, "content-type": type, ...(model.error ? { "x-error-code": model.error } : {}) });
      res.end(model.body);
    }
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const base = `http://127.0.0.1:${server.address().port}`;
  return { base, hits, close: () => new Promise((ok) => server.close(ok)) };
}

/**
 * Routes the page's requests to https://huggingface.co to the fake Hub.
 * `hold`, when given, is awaited before answering (to see "loading").
 */
async function routeHub(page, hub, { hold } = {}) {
  await page.route(`${HUB}/**`, async (route) => {
    if (hold) await hold();
    const u = new URL(route.request().url());
    // The Hub's 307 is followed here: Playwright does not route the request
    // a browser makes after a fulfilled redirect (it would go to the real
    // Hub), so the page gets the final answer of the two.
    const response = await route.fetch({ url: hub.base + u.pathname + u.search });
    await route.fulfill({ response });
  });
}

/** A gate the route waits on: `open()` lets the answers through. */
function gate() {
  let open;
  const shut = new Promise((ok) => (open = ok));
  return { hold: () => shut, open: () => open() };
}

/** Types an id into the Hub box (typing alone fetches nothing). */
async function typeId(page, id) {
  const box = page.locator('[data-testid="hub-id"]');
  await ui.ensureVisible(box);
  await box.fill(id);
}

/** Types an id and clicks "Load from the Hub". */
async function load(page, id) {
  await typeId(page, id);
  await page.click('[data-testid="hub-load"]');
}

/** Waits for the Hub box to reach `state` (idle, loading, done, error). */
function waitState(page, state) {
  return page.waitForSelector(`[data-testid="hub-status"][data-state="${state}"]`, { state: "attached" });
}

/** The Hub box's message (the buttons beside it are not part of it). */
const statusText = (page) => page.textContent('[data-testid="hub-status"] .hub-message');

/** Runs `fn(hub)` with a fresh fake Hub, closed afterwards. */
async function withHub(fn) {
  const hub = await fakeHub();
  try {
    await fn(hub);
  } finally {
    await hub.close();
  }
}

test("hub: load a config by model id; typing fetches nothing; the link reloads it", ({ page, base, shot }) =>
  withHub(async (hub) => {
    const g = gate();
    await routeHub(page, hub, g);
    await page.goto(`${base}?model=llama3.2-1b&batch=2&seq=1024`);
    await ui.ready(page);
    await shot("-idle");
    await typeId(page, "Qwen/Qwen3-8B");
    await page.waitForTimeout(300);
    assert.deepEqual(hub.hits, [], "typing alone fetches nothing");
    await page.click('[data-testid="hub-load"]');
    await waitState(page, "loading");
    assert.match(await statusText(page), /Loading the config\.json of Qwen\/Qwen3-8B from huggingface\.co…/);
    await shot("-loading");
    g.open();
    await waitState(page, "done");
    // The Hub's relative 307 was followed.
    assert.deepEqual(hub.hits, [
      "/Qwen/Qwen3-8B/resolve/main/config.json",
      `/api/resolve-cache/models/Qwen/Qwen3-8B/${COMMIT}/config.json`,
    ]);
    // Qwen3-8B's published parameter count, as its card states it.
    assert.equal(await ui.attr(page, "param-count", "data-count"), "8190735360");
    assert.match(await page.textContent('[data-testid="param-count"]'), /8\u2009190\u2009735\u2009360 parameters · Qwen\/Qwen3-8B from the Hub \(the Qwen3 8B preset\)/);
    assert.match(await statusText(page), /Loaded from the Hub\. Imported `qwen3`: 8\u2009190\u2009735\u2009360 parameters, the Qwen3 8B preset\./);
    const p = ui.urlParams(page);
    assert.equal(p.get("hub"), "Qwen/Qwen3-8B");
    assert.equal(p.get("model"), "qwen3-8b");
    assert.equal(p.get("batch"), "2", "the run settings stay");
    assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)), "the page and the CLI agree on the link");
    await shot("-done");
    // Opening the link loads the config again, and shows the same numbers.
    const url = page.url();
    const peak = await ui.peakBytes(page);
    await page.reload();
    await ui.ready(page);
    await waitState(page, "done");
    assert.equal(hub.hits.length, 4, "the link fetched the config again");
    assert.equal(page.url(), url);
    assert.equal(await ui.peakBytes(page), peak);
    assert.equal(await page.inputValue('[data-testid="hub-id"]'), "Qwen/Qwen3-8B");
    // Picking a preset replaces the Hub model (and its key).
    await ui.setField(page, "model", "gpt2-124m");
    await page.waitForFunction(() => !new URL(location.href).searchParams.has("hub"));
    assert.equal(await ui.attr(page, "hub-status", "data-state"), "done");
    assert.equal((await statusText(page)).trim(), "", "the loaded message goes with the model");
  }));

test("hub: a shared link shows its own keys' estimate while the config loads", ({ page, base, shot }) =>
  withHub(async (hub) => {
    const g = gate();
    await routeHub(page, hub, g);
    await page.goto(`${base}?hub=mistralai/Mixtral-8x7B-v0.1&batch=1&seq=512&dtype=bf16`);
    await ui.ready(page);
    await waitState(page, "loading");
    // Meanwhile: the default model with the link's run settings.
    assert.equal(await ui.peakBytes(page), cli("batch=1&seq=512&dtype=bf16"));
    assert.match(await page.textContent('[data-testid="param-count"]'), /until the config\.json of mistralai\/Mixtral-8x7B-v0\.1 is loaded/);
    assert.equal(await ui.fieldError(page, "hub"), "", "no warning while it loads");
    assert.equal(await page.locator('[name="params"]').count(), 0, "not a parameter count alone");
    await shot("-loading");
    g.open();
    await waitState(page, "done");
    assert.equal(await ui.attr(page, "param-count", "data-count"), "46702792704");
    assert.equal(await ui.attr(page, "param-count", "data-active"), "12879925248");
    const p = ui.urlParams(page);
    assert.deepEqual(["hub", "model", "batch", "seq"].map((k) => p.get(k)), ["mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b", "1", "512"]);
    assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
  }));

test("hub: not found, gated, a server error, not JSON, not a causal LM: said next to the box", ({ page, base, shot }) =>
  withHub(async (hub) => {
    await routeHub(page, hub);
    await page.goto(`${base}?model=llama3.2-1b`);
    await ui.ready(page);
    const before = { query: ui.urlQuery(page), peak: await ui.peakBytes(page) };
    const cases = [
      ["nobody/no-such-model", /^`nobody\/no-such-model` was not found on the Hub/, false],
      ["meta-llama/Llama-3.1-8B", /^`meta-llama\/Llama-3\.1-8B` is gated or private on the Hub \(or does not exist: .*\)\. Open its config\.json while logged in to huggingface\.co, download or copy it, and paste it below\./, true],
      ["example/overloaded", /^The Hub answered HTTP 503 for `example\/overloaded`/, true],
      ["example/not-json", /^`example\/not-json` on the Hub: not a valid config\.json/, false],
      ["google-bert/bert-base-uncased", /^`google-bert\/bert-base-uncased` on the Hub: `BertForMaskedLM` is not a causal language model/, false],
    ];
    for (const [id, message, pasteOffered] of cases) {
      await load(page, id);
      await waitState(page, "error");
      const text = await statusText(page);
      assert.match(text, message, id);
      assert.equal(await page.isVisible('[data-testid="hub-paste"]'), pasteOffered, id);
      assert.equal(await page.isVisible('[data-testid="hub-as-llama"]'), false, id);
      if (id.startsWith("meta-llama")) {
        // The file can be opened on the Hub while logged in.
        assert.equal(
          await page.getAttribute('[data-testid="hub-status"] a', "href"),
          "https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json",
        );
        await shot("-gated");
      }
      if (id.startsWith("google-bert")) await shot("-not-causal");
      // Nothing changed, and the page keeps working.
      assert.equal(ui.urlQuery(page), before.query, id);
      assert.equal(await ui.peakBytes(page), before.peak, id);
    }
    await ui.setField(page, "batch", "3");
    await page.waitForFunction(() => new URL(location.href).searchParams.get("batch") === "3");
    assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
    // Editing the id clears the message about the old one.
    await typeId(page, "google-bert/bert-base-cased");
    await waitState(page, "idle");
  }));

test("hub: offline, the message offers pasting instead", async ({ page, base, shot }) => {
  await page.route(`${HUB}/**`, (route) => route.abort("internetdisconnected"));
  await page.goto(`${base}?model=llama3.2-1b`);
  await ui.ready(page);
  const before = ui.urlQuery(page);
  await load(page, "Qwen/Qwen3-8B");
  await waitState(page, "error");
  assert.match(
    await statusText(page),
    /^Could not reach huggingface\.co \(offline\?\)\. Try again when connected, or paste the model's config\.json below\./,
  );
  assert.equal(ui.urlQuery(page), before);
  await shot();
  // "Paste it here" opens the paste section with the cursor in it.
  await page.click('[data-testid="hub-paste"]');
  await page.waitForFunction(() => document.activeElement?.dataset.testid === "config-json");
  // A link with hub, opened offline: the link's keys stay, and the box says why.
  await page.goto(`${base}?hub=Qwen/Qwen3-8B&batch=2`);
  await ui.ready(page);
  await waitState(page, "error");
  assert.match(await ui.fieldError(page, "hub"), /hub: the config\.json of `Qwen\/Qwen3-8B` is not loaded/);
  assert.equal(await ui.peakBytes(page), cli("batch=2"));
  await shot("-link");
});

test("hub: an invalid id is refused before anything is fetched", ({ page, base, shot }) =>
  withHub(async (hub) => {
    await routeHub(page, hub);
    await page.goto(`${base}?model=llama3.2-1b`);
    await ui.ready(page);
    for (const id of ["Qwen3-8B", "Qwen//Qwen3-8B", "-qwen/x", "a/b c", "https://example.com/Qwen/Qwen3-8B"]) {
      await load(page, id);
      await waitState(page, "error");
      const text = await statusText(page);
      assert.match(text, /is not a Hugging Face model id: write it as owner\/name/, id);
    }
    await shot();
    // In a link, a bad id is shown next to the box, and nothing is fetched.
    await page.goto(`${base}?hub=not%20an%20id&model=llama3.2-1b`);
    await ui.ready(page);
    assert.match(await ui.fieldError(page, "hub"), /^hub: `not an id` is not a Hugging Face model id/);
    await page.waitForTimeout(300);
    assert.deepEqual(hub.hits, []);
    // The address of the model's page is taken for its id.
    await load(page, "https://huggingface.co/Qwen/Qwen3-8B/");
    await waitState(page, "done");
    assert.equal(ui.urlParams(page).get("hub"), "Qwen/Qwen3-8B");
  }));

test("hub: a family vramfit does not know, read as Llama-like by choice, and the link keeps the choice", ({ page, base }) =>
  withHub(async (hub) => {
    await routeHub(page, hub);
    await page.goto(`${base}?model=llama3.2-1b`);
    await ui.ready(page);
    await load(page, "stabilityai/stablelm-2-1_6b");
    await waitState(page, "error");
    assert.match(await statusText(page), /model_type `stablelm` is not a family vramfit knows/);
    assert.equal(await page.isVisible('[data-testid="hub-paste"]'), false);
    await page.click('[data-testid="hub-as-llama"]');
    await waitState(page, "done");
    const p = ui.urlParams(page);
    assert.deepEqual(["hub", "like_llama", "layers"].map((k) => p.get(k)), ["stabilityai/stablelm-2-1_6b", "stablelm", "24"]);
    assert.equal(hub.hits.length, 1, "the choice re-reads the text fetched, not the Hub");
    // The choice is a note next to the model, and in the results.
    assert.match(await page.textContent('[data-testid="note-model"]'), /`stablelm` is not a family vramfit knows: it is estimated as a Llama-like decoder/);
    assert.match(await page.textContent('[data-testid="notes"]'), /estimated as a Llama-like decoder/);
    const count = await ui.attr(page, "param-count", "data-count");
    await page.reload();
    await ui.ready(page);
    await waitState(page, "done");
    assert.equal(hub.hits.length, 2);
    assert.equal(await ui.attr(page, "param-count", "data-count"), count);
    assert.equal(ui.urlParams(page).get("like_llama"), "stablelm");
  }));

test("hub: a hand-typed architecture drops the hub key; the run's dropout survives a reload", ({ page, base }) =>
  withHub(async (hub) => {
    await routeHub(page, hub);
    await page.goto(`${base}?model=llama3.2-1b`);
    await ui.ready(page);
    await load(page, "Qwen/Qwen3-8B");
    await waitState(page, "done");
    await ui.setField(page, "dropout", "0.1");
    await page.waitForFunction(() => new URL(location.href).searchParams.get("dropout") === "0.1");
    await page.reload();
    await ui.ready(page);
    await waitState(page, "done");
    assert.equal(ui.urlParams(page).get("dropout"), "0.1", "the link's dropout stays");
    await ui.setField(page, "layers", "18");
    await page.waitForFunction(() => !new URL(location.href).searchParams.has("hub"));
    assert.match(await page.textContent('[data-testid="param-count"]'), /Qwen3 8B \(modified\)/);
  }));

test("hub: accessibility of the box's error, with the Llama-like choice and the paste links", ({ page, base, shot }) =>
  withHub(async (hub) => {
    await routeHub(page, hub);
    await page.goto(`${base}?model=llama3.2-1b&seq=200000`);
    await ui.ready(page);
    await load(page, "meta-llama/Llama-3.1-8B");
    await waitState(page, "error");
    await openAll(page);
    await assertBothThemes(page, shot);
    await load(page, "stabilityai/stablelm-2-1_6b");
    await waitState(page, "error");
    await assertBothThemes(page, (s) => shot(`-llama${s}`));
  }));

test("hub: the box on a phone", ({ page, base, shot }) =>
  withHub(async (hub) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await routeHub(page, hub);
    await page.goto(`${base}?model=llama3.2-1b`);
    await ui.ready(page);
    await load(page, "meta-llama/Llama-3.1-8B");
    await waitState(page, "error");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the phone`);
    await page.locator('[data-testid="hub-form"]').screenshot({ path: path.join(artifacts, "hub-the-box-on-a-phone-box-error.png") });
    await load(page, "Qwen/Qwen3-8B");
    await waitState(page, "done");
    await page.locator('[data-testid="hub-form"]').screenshot({ path: path.join(artifacts, "hub-the-box-on-a-phone-box-done.png") });
    await shot();
  }));
