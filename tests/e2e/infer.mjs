// Running a model (task=infer): the task switch, the inference panels (a
// field shown while the run reads it), the engine's figures, the answers a
// click away, the charts, links, and accessibility; every number checked
// against the CLI on the same query.
import assert from "node:assert/strict";
import { test } from "./harness.mjs";
import { execFileSync } from "node:child_process";
import { cli, cliJson } from "./cli.mjs";
import { assertBothThemes, openAll } from "./a11y.mjs";
import * as ui from "./ui.mjs";

const GIB = 1n << 30n;

/** A field of the CLI's JSON document, as BigInt ('' when absent). */
function jsonBytes(query, field) {
  const m = cliJson(query).match(new RegExp(`"${field}": (\\d+)`));
  return m ? BigInt(m[1]) : "";
}

/** Waits until the address bar has `key` = `value` (null: absent). */
async function waitUrl(page, key, value) {
  await page.waitForFunction(
    ([k, v]) => new URL(location.href).searchParams.get(k) === v,
    [key, value === null ? null : String(value)],
  );
}

/** Every `data-testid` answer of the inference panel as {testid: data-value}. */
async function answers(page) {
  return page.$$eval('[data-testid="infer-fits"] [data-value]', (els) =>
    Object.fromEntries(els.map((e) => [e.dataset.testid, e.dataset.value])),
  );
}

test("run the model: set task=infer through the form; the page and the CLI agree", async ({ page, base, shot }) => {
  await page.goto(`${base}?model=llama3.1-8b&dtype=amp_bf16&seq=4096`);
  await ui.ready(page);
  assert.equal(await ui.fieldValue(page, "task"), "train");
  await ui.setField(page, "task", "infer");
  await page.waitForSelector('[data-testid="infer-panel"]');
  await waitUrl(page, "task", "infer");
  // The training panels and the steps chart are gone; the link carries
  // nothing of the training run.
  for (const key of ["dtype", "optim", "seq", "grad_ckpt", "lora_r", "gpus", "zero", "iters"]) {
    assert.equal(await ui.hasField(page, key), false, `${key} is a training field`);
  }
  assert.equal(await page.locator('[data-testid="steps-chart"]').count(), 0);
  for (const key of ["dtype", "seq", "batch"]) assert.equal(ui.urlParams(page).get(key), null, key);
  // transformers by default: no vLLM arguments, no context length.
  assert.equal(await page.locator('[data-testid="engine-panel"]').count(), 0);
  assert.equal(await ui.hasField(page, "ctx"), false);
  assert.equal(await ui.hasField(page, "kv_dtype"), false);
  assert.equal(await ui.hasField(page, "group_size"), false, "only GPTQ and AWQ have groups");
  await ui.setField(page, "weights", "nf4");
  await ui.setField(page, "double_quant", true);
  await ui.setField(page, "prompt", "8192");
  await ui.setField(page, "new", "512");
  await ui.setField(page, "gpu", "rtx-4090-laptop");
  await waitUrl(page, "gpu", "rtx-4090-laptop");
  const q = ui.urlQuery(page);
  const peak = cli(q);
  await ui.waitPeak(page, peak);
  assert.equal(await ui.peakBytes(page), cli("task=infer&model=llama3.1-8b&weights=nf4&double_quant=true&prompt=8192&new=512&gpu=rtx-4090-laptop"));
  // The engine's figures are the CLI's.
  assert.equal(BigInt(await ui.attr(page, "served-weights", "data-bytes")), jsonBytes(q, "weights_bytes"));
  assert.equal(BigInt(await ui.attr(page, "served-kv", "data-bytes")), jsonBytes(q, "kv_cache_bytes"));
  assert.match(await page.textContent('[data-testid="engine-figures"]'), /transformers generate/);
  // The verdict, the peak's phase, and the breakdown adding up.
  const v = await page.$eval('[data-testid="fit-verdict"]', (e) => ({ fits: e.dataset.fits, bytes: e.dataset.bytes }));
  assert.equal(v.fits, String(peak <= BigInt(v.bytes)));
  assert.match(await page.textContent(".totals .total"), / in the prefill$/);
  const rows = await page.$$eval("table.breakdown:not(.figures) tbody tr", (trs) => trs.map((tr) => tr.dataset.testid));
  assert.ok(rows.includes("row-kv_cache") && rows.includes("row-parameters"), rows.join());
  const sum = await page.$$eval("table.breakdown:not(.figures) tbody tr", (trs) => trs.reduce((a, tr) => a + BigInt(tr.dataset.bytes), 0n).toString());
  assert.equal(BigInt(sum), peak);
  const phases = await ui.chartState(page, "phase-chart");
  assert.ok(phases.bands >= 4 && phases.inked > 20000, JSON.stringify(phases));
  await shot();
  // Back to training: its settings come back as they were, and the link
  // carries no inference key; and back again.
  await ui.setField(page, "task", "train");
  await waitUrl(page, "dtype", "amp_bf16");
  assert.equal(await ui.fieldValue(page, "seq"), "4096");
  for (const key of ["weights", "prompt", "new", "double_quant"]) assert.equal(ui.urlParams(page).get(key), null, key);
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
  await ui.setField(page, "task", "infer");
  await waitUrl(page, "prompt", "8192");
  assert.equal(await ui.fieldValue(page, "weights"), "nf4");
  await ui.waitPeak(page, peak);
});

test("inference answers a click away: the longest prompt, the most sequences, lighter weights", async ({ page, base, shot }) => {
  await page.goto(`${base}?task=infer&model=llama3.1-8b&weights=nf4&prompt=8192&new=512&gpu=rtx-4090-laptop`);
  await ui.ready(page);
  await page.waitForSelector('[data-testid="max-context"]');
  const a = await answers(page);
  assert.ok(Number(a["max-context"]) > 8192, JSON.stringify(a));
  assert.ok(Number(a["max-batch"]) >= 1, JSON.stringify(a));
  // The longest prompt, applied: it fits, one token more does not.
  await page.click('[data-testid="max-context"]');
  await waitUrl(page, "prompt", a["max-context"]);
  assert.equal((await page.$eval('[data-testid="fit-verdict"]', (e) => e.dataset.fits)), "true");
  const cap = BigInt(await ui.attr(page, "fit-verdict", "data-bytes"));
  const over = new URLSearchParams(ui.urlQuery(page));
  over.set("prompt", String(Number(a["max-context"]) + 1));
  assert.ok(cli(over.toString()) > cap, "one more token does not fit");
  // The context chart marks the same limit (prompt + new tokens).
  await page.waitForFunction(
    (n) => document.querySelector('[data-testid="context-summary"]')?.dataset.limit === n,
    String(Number(a["max-context"]) + 512),
  );
  // A run that does not fit: 16-bit weights and a long prompt on 16 GiB.
  await ui.setField(page, "weights", "bf16");
  await ui.setField(page, "prompt", "16384");
  await page.waitForFunction(() => document.querySelector('[data-testid="fit-verdict"]').dataset.fits === "false");
  assert.match(await page.textContent('[data-testid="fits-h"], #fits-h'), /What would fit/);
  await page.waitForSelector('[data-testid="weights-that-fit"][data-value]');
  const w = await ui.attr(page, "weights-that-fit", "data-value");
  assert.ok(["fp8", "int8", "awq", "gptq", "nf4"].includes(w), w);
  // Ranked changes, each applied with a click, as the CLI computes it.
  const n = await page.locator('[data-testid="suggestion"]').count();
  assert.ok(n >= 3, `${n} suggestions`);
  await shot("-short");
  const first = page.locator('[data-testid="suggestion"]').first();
  const expected = await first.getAttribute("data-peak");
  await first.click();
  await page.waitForFunction(() => new URL(location.href).searchParams.get("weights") !== "bf16");
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
  assert.ok(BigInt(expected) > 0n);
  // The most precise weights that fit, applied: the run fits.
  await ui.setField(page, "weights", "bf16");
  await page.waitForFunction(() => document.querySelector('[data-testid="fit-verdict"]').dataset.fits === "false");
  await page.waitForSelector('button[data-testid="weights-that-fit"]');
  await page.click('[data-testid="weights-that-fit"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="fit-verdict"]').dataset.fits === "true");
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
});

test("the weights that fit, applied as offered, fit: vLLM's share of the GPU, every llama.cpp layer on it", async ({ page, base, shot }) => {
  // vLLM at 3.52% of the GPU: no format leaves room for one request (bf16
  // was offered, and did not fit once applied).
  await page.goto(`${base}?task=infer&engine=vllm&gpu_memory_utilization=0.0352`);
  await ui.ready(page);
  await page.waitForSelector('[data-testid="weights-that-fit"]');
  assert.equal(await ui.attr(page, "weights-that-fit", "data-value"), "");
  assert.match(await page.textContent('[data-testid="weights-that-fit"]'), /none of the formats/);
  // A refused run (Kimi Linear on transformers) has nothing to search from: the
  // answers say so, not that nothing fits.
  await page.goto(`${base}?task=infer&engine=transformers&model=kimi-linear-48b-a3b`);
  await ui.ready(page);
  await page.waitForSelector('[data-testid="weights-that-fit"]');
  assert.match(await page.textContent('[data-testid="weights-that-fit"]'), /no estimate to search from/);
  assert.match(await page.textContent('[data-testid="max-context"]'), /no estimate to search from/);
  // llama.cpp with 4 of Qwen3-8B's 37 layers on an 8 GB GPU: the answer
  // fits whole on the GPU, so applying it puts every layer there.
  const q = "task=infer&engine=llamacpp&model=qwen3-8b&weights=f16&ctx=8192&n_gpu_layers=4&fit=false&gpu=rtx-4060-laptop";
  await page.goto(`${base}?${q}`);
  await ui.ready(page);
  await page.waitForSelector('button[data-testid="weights-that-fit"]');
  assert.equal(await ui.attr(page, "weights-that-fit", "data-value"), "q6_k");
  await page.click('[data-testid="weights-that-fit"]');
  await waitUrl(page, "weights", "q6_k");
  await waitUrl(page, "n_gpu_layers", "37");
  await page.waitForFunction(() => document.querySelector('[data-testid="fit-verdict"]').dataset.fits === "true");
  assert.equal(await ui.attr(page, "served-ngl", "data-value"), "37");
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
  assert.match(await page.textContent('[data-testid="weights-that-fit"]'), /q6_k \(these\)/);
  await shot();
});

test("a vLLM link: the engine's arguments, no prompt or batch, the engine's figures as the CLI's", async ({ page, base, shot }) => {
  const q = "task=infer&engine=vllm&model=qwen3-8b&ctx=32768&max_num_seqs=64&gpu=l4-24";
  await page.goto(`${base}?${q}`);
  await ui.ready(page);
  await page.waitForSelector('[data-testid="engine-panel"]');
  for (const key of ["ctx", "kv_dtype", "gpu_memory_utilization", "max_num_seqs", "block_size", "enforce_eager", "tensor_parallel_size"]) {
    assert.ok(await ui.hasField(page, key), `${key} is shown`);
  }
  for (const key of ["prompt", "new", "batch", "min_new", "attn"]) {
    assert.equal(await ui.hasField(page, key), false, `vLLM does not read ${key}`);
  }
  assert.equal(await ui.fieldValue(page, "ctx"), "32768");
  assert.equal(await ui.fieldValue(page, "max_num_seqs"), "64");
  assert.equal(await ui.peakBytes(page), cli(q));
  for (const [testid, field] of [
    ["served-weights", "weights_bytes"], ["served-kv", "kv_cache_bytes"], ["served-activations", "activation_peak_bytes"],
    ["served-cudagraphs", "cudagraph_bytes"], ["served-requested", "requested_bytes"],
  ]) {
    assert.equal(BigInt(await ui.attr(page, testid, "data-bytes")), jsonBytes(q, field), testid);
  }
  assert.equal(BigInt(await ui.attr(page, "needed", "data-bytes")), jsonBytes(q, "needed_bytes"));
  assert.match(await page.textContent('[data-testid="served-pool"]'), /blocks of key\/value cache/);
  assert.match(await page.textContent('[data-testid="served-concurrency"]'), /Maximum concurrency for 32\u2009768 tokens per request: \d+\.\d\d×/);
  // The caveats are next to the answer.
  assert.match(await page.textContent('.totals [data-testid="caveats"]'), /Not modelled here/);
  // The verdict compares what it needs with its share of the GPU.
  const budget = BigInt(await ui.attr(page, "budget", "data-bytes"));
  assert.ok(budget < 24n * GIB);
  assert.match(await page.textContent(".totals .total"), / while serving$/);
  const phases = await ui.chartState(page, "phase-chart");
  assert.ok(phases.bands >= 4 && phases.inked > 20000, JSON.stringify(phases));
  await shot();
  // transformers does not read vLLM's keys: they go aside, and come back.
  await ui.setField(page, "engine", "transformers");
  await page.waitForFunction(() => !document.querySelector('[data-testid="engine-panel"]'));
  for (const key of ["ctx", "max_num_seqs"]) assert.equal(ui.urlParams(page).get(key), null, key);
  assert.ok(await ui.hasField(page, "prompt"));
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
  await ui.setField(page, "engine", "vllm");
  await waitUrl(page, "ctx", "32768");
  assert.equal(ui.urlParams(page).get("max_num_seqs"), "64");
  assert.equal(await ui.peakBytes(page), cli(q));
});

test("the context chart has one band per component and marks where it stops fitting", async ({ page, base, shot }) => {
  await page.goto(`${base}?task=infer&model=llama3.1-8b&weights=nf4&double_quant=true&prompt=8192&new=512&gpu=rtx-4090-laptop`);
  await ui.ready(page);
  await page.waitForFunction(() => document.querySelector('[data-testid="context-chart"]')?.dataset.bands);
  const chart = await ui.chartState(page, "context-chart");
  // weights, KV cache, activations, logits, engine buffers, overhead
  assert.equal(chart.bands, 6);
  assert.ok(chart.inked > 20000, `only ${chart.inked} pixels drawn`);
  const limit = await ui.attr(page, "context-summary", "data-limit");
  assert.equal(Number(limit), Number(await ui.attr(page, "max-context", "data-value")) + 512);
  assert.match(await page.textContent('[data-testid="context-summary"]'), /It fits up to [\d\u2009]+ tokens per sequence \(8\u2009704 now\)/);
  assert.match(await page.getAttribute('[data-testid="context-chart"]', "aria-label"), /^Memory against context length\. It fits up to/);
  // On an 80 GB GPU every length drawn fits.
  await ui.setField(page, "gpu", "h100-sxm-80");
  await page.waitForFunction(() => document.querySelector('[data-testid="context-summary"]').dataset.limit === "all");
  // The SVG export is the same chart.
  const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="context-chart-svg"]')]);
  assert.equal(download.suggestedFilename(), "vramfit-context.svg");
  await shot();
});

test("reloading an inference link restores every field and the same total", async ({ page, base }) => {
  await page.goto(`${base}?model=qwen2.5-7b`);
  await ui.ready(page);
  await ui.setField(page, "task", "infer");
  await page.waitForSelector('[data-testid="infer-panel"]');
  const set = [
    ["weights", "gptq"], ["group_size", "64"], ["prompt", "3000"], ["new", "100"], ["batch", "2"],
    ["min_new", "5"], ["attn", "eager"], ["ctx_mib", "600"], ["gpu", "custom"], ["capacity_gib", "20"],
  ];
  for (const [k, v] of set) await ui.setField(page, k, v);
  await waitUrl(page, "capacity_gib", "20");
  const before = await ui.peakBytes(page);
  const url = page.url();
  await page.reload();
  await ui.ready(page);
  assert.equal(page.url(), url);
  assert.equal(await ui.peakBytes(page), before);
  assert.equal(await ui.fieldValue(page, "task"), "infer");
  for (const [k, v] of [...set, ["model", "qwen2.5-7b"], ["engine", "transformers"]]) {
    assert.equal(await ui.fieldValue(page, k), v, k);
  }
  assert.equal(before, cli(ui.urlQuery(page)));
  // A vLLM link too.
  const q = "task=infer&model=llama3.1-8b&engine=vllm&weights=fp8&ctx=65536&kv_dtype=fp8&gpu_memory_utilization=0.85&max_num_seqs=32&max_num_batched_tokens=4096&block_size=32&enforce_eager=true&gpu=h100-sxm-80";
  await page.goto(`${base}?${q}`);
  await ui.ready(page);
  for (const pair of q.split("&")) {
    const [k, v] = pair.split("=");
    assert.equal(await ui.fieldValue(page, k), v, k);
  }
  assert.equal(await ui.peakBytes(page), cli(q));
});

test("a key the run does not read is said next to its field, and removed with a click", async ({ page, base, shot }) => {
  await page.goto(`${base}?task=infer&model=llama3.2-1b&weights=bf16&group_size=64&dtype=fp32`);
  await ui.ready(page);
  assert.match(await ui.fieldError(page, "group_size"), /^group_size is not used: only GPTQ and AWQ weights have groups; ignored/);
  assert.equal(await page.getAttribute('[name="group_size"]', "aria-invalid"), "false", "not a refusal");
  // A training key has no field here: said at the top.
  assert.match(await page.textContent('[data-testid="other-task-notices"]'), /dtype is not used: it is a training setting/);
  await shot();
  await page.click('[data-testid="remove-group_size"]');
  await waitUrl(page, "group_size", null);
  assert.equal(await ui.hasField(page, "group_size"), false);
  await page.click('[data-testid="drop-other-task"]');
  await waitUrl(page, "dtype", null);
  assert.equal(await page.locator('[data-testid="other-task-notices"]').count(), 0);
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
  // GPTQ reads its group size: the field appears.
  await ui.setField(page, "weights", "gptq");
  await page.waitForSelector('[name="group_size"]');
});

test("accessibility in inference mode: axe-core finds no violation, light and dark, every panel open", async ({ page, base, shot }) => {
  // transformers with a caveat (int8), then vLLM with every engine argument.
  // And llama.cpp, with its layers split between the GPU and the host.
  for (const q of [
    "task=infer&model=llama3.2-1b&weights=int8&prompt=4096&gpu=rtx-3060-12",
    "task=infer&engine=vllm&model=qwen3-8b&ctx=32768&gpu=l4-24&group_size=64",
    "task=infer&engine=llamacpp&model=qwen3-8b&weights=q4_k_m&ctx=32768&gpu=rtx-4060-laptop",
  ]) {
    await page.goto(`${base}?${q}`);
    await ui.ready(page);
    await openAll(page);
    await page.waitForSelector('[data-testid="probe-adapter"], [data-testid="probe-result"]');
    await openAll(page);
    await page.waitForFunction(() => document.querySelector('[data-testid="context-chart"]')?.dataset.bands);
    const engine = new URLSearchParams(q).get("engine") || "transformers";
    await assertBothThemes(page, (suffix) => shot(`-${engine}${suffix}`));
  }
});

test("inference at a phone width and in the dark theme: nothing overflows", async ({ browser, base }) => {
  const q = "task=infer&model=llama3.1-8b&weights=nf4&double_quant=true&prompt=8192&new=512&gpu=rtx-4090-laptop";
  for (const [name, opts] of [
    ["infer-phone-width", { viewport: { width: 390, height: 844 }, isMobile: true }],
    ["infer-dark-theme", { colorScheme: "dark", viewport: { width: 1280, height: 900 } }],
  ]) {
    const context = await browser.newContext(opts);
    const page = await context.newPage();
    await page.goto(`${base}?${q}`);
    await ui.ready(page);
    await page.waitForFunction(() => document.querySelector('[data-testid="context-chart"]')?.dataset.bands);
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(widths[0] <= widths[1], `${name}: page ${widths[0]}px wide in a ${widths[1]}px screen`);
    await page.screenshot({ path: `test-results/${name}.png`, fullPage: true });
    await context.close();
  }
});

// A LoRA adapter loaded beside the model (llama.cpp's --lora, Ollama's
// ADAPTER): the CLI's figure, the form's fields (its type only once a rank
// is given), and Ollama's own count leaving it out.
test("a LoRA adapter on llama.cpp and Ollama: its figure, its fields, ollama ps leaves it out", async ({ page, base, shot }) => {
  for (const engine of ["llamacpp", "ollama"]) {
    const bare = `task=infer&engine=${engine}&model=qwen3-8b&ctx=8192&gpu=rtx-4090`;
    await page.goto(`${base}?${bare}`);
    await ui.ready(page);
    assert.ok(await ui.hasField(page, "lora_r"), `${engine}: no lora_r field`);
    assert.ok(!(await ui.hasField(page, "lora_type")), `${engine}: lora_type without a rank`);
    assert.equal(await page.locator('[data-testid="served-lora"]').count(), 0);
    const q = `${bare}&lora_r=32&lora_targets=attn`;
    await page.goto(`${base}?${q}`);
    await ui.ready(page);
    await ui.waitPeak(page, cli(q));
    assert.ok(await ui.hasField(page, "lora_type"), `${engine}: no lora_type with a rank`);
    assert.equal(BigInt(await ui.attr(page, "served-lora", "data-bytes")), jsonBytes(q, "lora_bytes"));
    if (engine === "ollama") {
      assert.match(await page.textContent('[data-testid="served-ollama-ps-line"]'), /leaves out the LoRA adapter/);
    }
    await shot(`-${engine}`);
  }
});

/** The CLI's text report for a query (`vramfit --text`). */
function cliText(query) {
  return execFileSync("cargo", ["run", "-q", "--locked", "-p", "vramfit-cli", "--", "--text", query], { encoding: "utf8" });
}

/** `label: N bytes (X GiB)` of the CLI's text report: [bytes, "X GiB"]. */
function textFigure(text, label) {
  const m = text.match(new RegExp(`^${label}: (\\d+) bytes \\(([\\d.]+ GiB)\\)`, "m"));
  assert.ok(m, `the CLI printed no ${label} line:\n${text}`);
  return [BigInt(m[1]), m[2]];
}

// The local runners' links, each checked against the CLI on the same query
// (its JSON for exact bytes, its --text for the GiB as displayed).
for (const { engine, q, layers, host } of [
  { engine: "llama.cpp", q: "task=infer&engine=llamacpp&model=qwen3-8b&weights=q4_k_m&ctx=32768&gpu=rtx-4060-laptop", layers: true, host: true },
  { engine: "Ollama", q: "task=infer&engine=ollama&model=qwen3-8b&gpu=rtx-4090", layers: true, host: true },
  { engine: "MLX", q: "task=infer&engine=mlx&model=qwen3-8b&weights=4bit&gpu=m3-pro-18", layers: false, host: false },
]) {
  test(`a ${engine} link shows the CLI's numbers: the GPU's, the host's, the layers on the GPU`, async ({ page, base, shot }) => {
    const text = cliText(q);
    const [peak, peakGib] = textFigure(text, "peak");
    await page.goto(`${base}?${q}`);
    await ui.ready(page);
    await ui.waitPeak(page, peak);
    assert.equal(await page.textContent('[data-testid="peak-total"]'), peakGib);
    assert.equal(BigInt(await ui.attr(page, "served-weights", "data-bytes")), jsonBytes(q, "weights_bytes"));
    assert.equal(BigInt(await ui.attr(page, "served-kv", "data-bytes")), jsonBytes(q, "kv_cache_bytes"));
    assert.match(await page.textContent('[data-testid="engine-figures"]'), new RegExp(engine));
    // The engine's own group of fields, and no other engine's.
    const groups = await page.$$eval('[data-testid="engine-panel"]', (els) => els.map((e) => e.dataset.group));
    assert.equal(groups.length, 1, groups.join());
    if (layers) {
      const [hostBytes, hostGib] = textFigure(text, "host memory");
      assert.equal(BigInt(await ui.attr(page, "split-gpu", "data-bytes")), peak);
      assert.equal(await page.textContent('[data-testid="split-gpu"] strong'), peakGib);
      assert.equal(BigInt(await ui.attr(page, "split-host", "data-bytes")), hostBytes);
      assert.equal(await page.textContent('[data-testid="split-host"] strong'), hostGib);
      assert.equal(BigInt(await ui.attr(page, "host-memory", "data-bytes")), hostBytes);
      // `-ngl` as the CLI prints it, of the 36 layers and the output layer.
      const ngl = text.match(/layers on the GPU \(-ngl\): (\d+)/)[1];
      assert.equal(await ui.attr(page, "served-ngl", "data-value"), ngl);
      assert.equal(await ui.attr(page, "served-ngl", "data-total"), "37");
      assert.equal(await ui.attr(page, "served-nctx", "data-value"), text.match(/context \(n_ctx\): (\d+) tokens/)[1]);
      assert.equal(await page.textContent('[data-testid="served-fit"]'), text.match(/--fit: (.+)$/m)[1]);
      // What `ollama ps` reports, as the CLI has it; none for llama.cpp.
      const ps = text.match(/ollama ps: SIZE (.+), PROCESSOR (.+), CONTEXT (\d+) \(size (\d+) bytes, size_vram (\d+)\)/);
      if (engine === "Ollama") {
        assert.equal(await page.textContent('[data-testid="served-ollama-ps"]'), `SIZE ${ps[1]} · PROCESSOR ${ps[2]} · CONTEXT ${ps[3]}`);
        assert.equal(await ui.attr(page, "served-ollama-ps", "data-size"), ps[4]);
        assert.equal(await ui.attr(page, "served-ollama-ps", "data-size-vram"), ps[5]);
      } else {
        assert.equal(ps, null);
        assert.equal(await page.locator('[data-testid="served-ollama-ps"]').count(), 0);
      }
      // The host's terms add up to the host's figure.
      const sum = await page.$$eval('[data-testid="host-terms"] li', (lis) => lis.reduce((a, li) => a + BigInt(li.dataset.bytes), 0n).toString());
      assert.equal(BigInt(sum), hostBytes);
      // The context chart's line is the context it runs with.
      await page.waitForFunction(() => document.querySelector('[data-testid="context-chart"]')?.dataset.bands);
      assert.match(await page.textContent('[data-testid="context-summary"]'), /--fit/);
    } else {
      assert.equal(await page.locator('[data-testid="layer-split"]').count(), 0);
      assert.equal(await page.locator('[data-testid="host-memory"]').count(), 0);
      // A Mac: the verdict is against the GPU working set.
      assert.match(await page.textContent('[data-testid="fit-verdict"]'), /GPU working set/);
    }
    const v = await page.$eval('[data-testid="fit-verdict"]', (e) => ({ fits: e.dataset.fits, bytes: e.dataset.bytes }));
    assert.equal(v.fits, String(peak <= BigInt(v.bytes)));
    const phases = await ui.chartState(page, "phase-chart");
    assert.ok(phases.bands >= 3 && phases.inked > 20000, JSON.stringify(phases));
    assert.match(await page.textContent('[data-testid="caveats"]'), /Not modelled here/);
    await shot();
  });
}

test("llama.cpp over two GPUs (tensor_split=3,1): each GPU's figure as the CLI's, the peak the fullest's", async ({ page, base, shot }) => {
  const q = "task=infer&engine=llamacpp&model=qwen3-8b&weights=q4_k_m&ctx=32768&tensor_split=3,1&gpu=rtx-4090";
  const doc = JSON.parse(cliJson(q));
  assert.equal(doc.gpus.length, 2);
  await page.goto(`${base}?${q}`);
  await ui.ready(page);
  await ui.waitPeak(page, BigInt(doc.peak_total_bytes));
  const cells = await page.$$eval('[data-testid="split-gpu"]', (els) =>
    els.map((e) => ({ gpu: Number(e.dataset.gpu), bytes: e.dataset.bytes })),
  );
  assert.deepEqual(cells, doc.gpus.map((g) => ({ gpu: g.gpu, bytes: String(g.total_bytes) })));
  const fullest = doc.gpus.find((g) => g.phases);
  assert.equal(BigInt(fullest.total_bytes), BigInt(doc.peak_total_bytes));
  assert.match(await page.textContent('[data-testid="gpu-shown"]'), new RegExp(`GPU ${fullest.gpu}'s, the fullest of 2`));
  assert.equal(await ui.fieldValue(page, "tensor_split"), "3,1");
  await shot();
});

test("a llama.cpp run that places its own layers: the longest context keeps them all on the GPU; LFM2 as the CLI", async ({ page, base, shot }) => {
  // --fit would fit any context by moving layers to host memory: the
  // answer is the longest with every layer on the GPU, applied as offered.
  const q = "task=infer&engine=llamacpp&model=llama3.1-8b&weights=q4_k_m&gpu=rtx-4060-laptop";
  await page.goto(`${base}?${q}`);
  await ui.ready(page);
  await page.waitForSelector('button[data-testid="max-context"]');
  assert.equal(await ui.attr(page, "max-context", "data-value"), "16896");
  assert.match(await page.textContent("li:has(> button[data-testid=\"max-context\"])"), /with every layer on the GPU/);
  await page.click('[data-testid="max-context"]');
  await waitUrl(page, "ctx", "16896");
  await page.waitForFunction(() => document.querySelector('[data-testid="fit-verdict"]').dataset.fits === "true");
  assert.equal(await ui.attr(page, "served-ngl", "data-value"), "33");
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
  // Llama 4 Scout's 61 GB is never whole on a 24 GB card.
  await page.goto(`${base}?task=infer&engine=llamacpp&model=llama4-scout&gpu=rtx-4090`);
  await ui.ready(page);
  await page.waitForSelector('[data-testid="max-context"]');
  assert.equal(await ui.attr(page, "max-context", "data-value"), "");
  // LFM2's short convolutions: the page's total is the CLI's.
  const lfm2 = "task=infer&engine=llamacpp&model=lfm2-1.2b&gpu=rtx-4060-laptop";
  await page.goto(`${base}?${lfm2}`);
  await ui.ready(page);
  assert.equal(await ui.peakBytes(page), cli(lfm2));
  await shot();
});

/** The options of the weights list. */
function weightsOptions(page) {
  return page.$$eval('select[name="weights"] option', (os) => os.map((o) => o.value));
}

test("switching engine changes the weights' options, and each engine keeps its own", async ({ page, base }) => {
  await page.goto(`${base}?task=infer&model=qwen3-8b&weights=nf4`);
  await ui.ready(page);
  let options = await weightsOptions(page);
  assert.ok(options.includes("nf4") && options.includes("gptq"), options.join());
  assert.ok(!options.includes("q4_k_m"), options.join());
  // The GGUF's default (the link leaves it out, as the CLI's does not need it).
  await ui.setField(page, "engine", "llamacpp");
  await waitUrl(page, "weights", null);
  options = await weightsOptions(page);
  assert.ok(options.includes("q4_k_m") && options.includes("q8_0") && options.includes("iq2_xs"), options.join());
  assert.ok(!options.includes("nf4") && !options.includes("4bit"), options.join());
  assert.equal(await ui.fieldValue(page, "weights"), "q4_k_m");
  assert.equal(await ui.fieldError(page, "weights"), "");
  await ui.setField(page, "weights", "q8_0");
  await waitUrl(page, "weights", "q8_0");
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
  // Ollama runs the same GGUF files: the choice stays.
  await ui.setField(page, "engine", "ollama");
  await waitUrl(page, "engine", "ollama");
  assert.equal(ui.urlParams(page).get("weights"), "q8_0");
  await ui.setField(page, "engine", "mlx");
  await waitUrl(page, "weights", null);
  assert.equal(await ui.fieldValue(page, "weights"), "4bit");
  options = await weightsOptions(page);
  assert.ok(options.includes("4bit") && options.includes("8bit"), options.join());
  assert.ok(!options.includes("q4_k_m") && !options.includes("nf4"), options.join());
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
  // Back to transformers: its nf4 comes back, and the GGUF's for llama.cpp.
  await ui.setField(page, "engine", "transformers");
  await waitUrl(page, "weights", "nf4");
  assert.equal(await ui.fieldValue(page, "weights"), "nf4");
  await ui.setField(page, "engine", "llamacpp");
  await waitUrl(page, "weights", "q8_0");
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
});

test("an invalid engine value shows its message next to its field", async ({ page, base }) => {
  await page.goto(`${base}?task=infer&engine=llamacpp&model=qwen3-8b&weights=nf4&n_gpu_layers=abc`);
  await ui.ready(page);
  assert.match(await ui.fieldError(page, "weights"), /llama\.cpp and Ollama run GGUF files/);
  assert.match(await ui.fieldError(page, "n_gpu_layers"), /`abc` is not a number/);
  assert.equal(await page.getAttribute('[name="n_gpu_layers"]', "aria-invalid"), "true");
  // Typed in the form: said, then cleared when fixed.
  await ui.setField(page, "n_ubatch", "0");
  await page.waitForFunction(() => document.querySelector('[data-testid="error-n_ubatch"]')?.textContent !== "");
  assert.match(await ui.fieldError(page, "n_ubatch"), /at least 1/);
  await ui.setField(page, "n_ubatch", "256");
  await ui.setField(page, "n_gpu_layers", "20");
  await ui.setField(page, "weights", "q4_k_m");
  await page.waitForFunction(() => document.querySelector('[data-testid="error-n_ubatch"]').textContent === "");
  await waitUrl(page, "n_gpu_layers", "20");
  assert.equal(await ui.fieldError(page, "weights"), "");
  assert.equal(await ui.attr(page, "served-ngl", "data-value"), "20");
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
});
