// The page people use (issue 4): one flow per capability, read through the
// data-testid and name hooks, checked against the CLI on the same query.
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "./harness.mjs";
import { cli, cliJson } from "./cli.mjs";
import * as ui from "./ui.mjs";

const GIB = 1n << 30n;
const fixture = (name) => fs.readFileSync(`crates/core/tests/fixtures/hf_configs/${name}.json`, "utf8");

test("pick a model by searching the presets; the exact parameter count shows", async ({ page, base, shot }) => {
  await page.goto(base);
  await ui.ready(page);
  // The search box offers every preset by name.
  const options = await page.$$eval("#presets option", (os) => os.map((o) => o.label || o.textContent));
  assert.ok(options.includes("Llama 3.1 8B") && options.length >= 25, options.join(", "));
  await ui.setField(page, "model", "llama3.1-8b");
  await page.waitForFunction(() => document.querySelector('[data-testid="param-count"]').dataset.count === "8030261248");
  assert.match(await page.textContent('[data-testid="param-count"]'), /8\u2009030\u2009261\u2009248 parameters · Llama 3.1 8B/);
  assert.equal(ui.urlParams(page).get("model"), "llama3.1-8b");
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
  await shot();
});

test("paste a config.json: a known one selects its preset, a new one sets the architecture", async ({ page, base, shot }) => {
  await page.goto(base);
  await ui.ready(page);
  const area = page.locator('[data-testid="config-json"]');
  await ui.ensureVisible(area);
  await area.fill(fixture("transformers4/llama3.2-1b"));
  await page.click('[data-testid="config-import"]');
  await page.waitForFunction(() => new URL(location.href).searchParams.get("model") === "llama3.2-1b");
  assert.match(await page.textContent('[data-testid="config-message"]'), /Imported `llama`: 1\u2009235\u2009814\u2009400 parameters, the Llama 3.2 1B preset/);
  // A family vramfit does not know is refused with its name; estimating it
  // as Llama-like is an explicit choice the link then carries.
  await area.fill(JSON.stringify({
    model_type: "stablelm", hidden_size: 2048, num_hidden_layers: 16, num_attention_heads: 16,
    intermediate_size: 8192, vocab_size: 100352, tie_word_embeddings: false,
  }));
  await page.click('[data-testid="config-import"]');
  await page.waitForSelector('[data-testid="config-message"][data-ok="false"]');
  assert.match(await page.textContent('[data-testid="config-message"]'), /model_type `stablelm` is not a family vramfit knows/);
  await page.click('[data-testid="config-message-as-llama"]');
  await page.waitForFunction(() => new URL(location.href).searchParams.get("like_llama") === "stablelm");
  const p = ui.urlParams(page);
  assert.deepEqual(["hidden", "layers", "ffn", "vocab", "tied"].map((k) => p.get(k)), ["2048", "16", "8192", "100352", "false"]);
  const count = await ui.attr(page, "param-count", "data-count");
  assert.equal(count, String(100352 * 2048 * 2 + 16 * (2 * 2048 + 4 * 2048 * 2048 + 3 * 2048 * 8192) + 2048));
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
  // A config transformers 5.23 refuses as written (Scout's
  // attn_temperature_tuning 4) is imported, and the message says so.
  await area.fill(fixture("llama4-scout"));
  await page.click('[data-testid="config-import"]');
  await page.waitForFunction(() => new URL(location.href).searchParams.get("model") === "llama4-scout");
  assert.match(
    await page.textContent('[data-testid="config-message"]'),
    /the Llama 4 Scout \(109B-A17B\) preset\. Note: transformers 5\.23 refuses this config\.json as written: `attn_temperature_tuning` is 4/,
  );
  await shot();
});

test("a broken config.json says which field is wrong and keeps the text", async ({ page, base, shot }) => {
  await page.goto(base);
  await ui.ready(page);
  const before = ui.urlQuery(page);
  const area = page.locator('[data-testid="config-json"]');
  await ui.ensureVisible(area);
  const broken = '{"model_type": "falcon", "hidden_size": 4544}';
  await area.fill(broken);
  await page.click('[data-testid="config-import"]');
  await page.waitForSelector('[data-testid="config-message"][data-ok="false"]');
  assert.match(
    await page.textContent('[data-testid="config-message"]'),
    /^model_type `falcon` is not a family vramfit knows/,
  );
  assert.equal(await area.inputValue(), broken);
  assert.equal(ui.urlQuery(page), before, "nothing changed");
  await shot();
});

test("type the architecture: the count and the estimate follow", async ({ page, base }) => {
  await page.goto(`${base}?model=llama3.1-8b`);
  await ui.ready(page);
  await ui.setField(page, "layers", "16");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("layers") === "16");
  const count = BigInt(await ui.attr(page, "param-count", "data-count"));
  const perLayer = 2n * 4096n + 4096n * 4096n * 2n + 2n * 4096n * 1024n + 3n * 4096n * 14336n;
  assert.equal(count, 8030261248n - 16n * perLayer);
  assert.match(await page.textContent('[data-testid="param-count"]'), /Llama 3.1 8B \(modified\)/);
  // A value that breaks a rule is explained next to its field.
  await ui.setField(page, "heads", "7");
  await page.waitForFunction(() => document.querySelector('[data-testid="error-heads"]').textContent.includes("must divide hidden"));
  assert.equal(await ui.fieldValue(page, "heads"), "7", "what was typed stays");
});

test("set the run: every knob updates the total and the URL, as the CLI computes it", async ({ page, base }) => {
  await page.goto(`${base}?model=qwen2.5-0.5b`);
  await ui.ready(page);
  const knobs = [
    ["dtype", "amp_bf16"], ["optim", "adamw_forloop", "may stay"], ["batch", "3"], ["seq", "777"],
    ["grad_accum", "4"], ["grad_ckpt", true], ["attn", "eager", "may stay under checkpointing"], ["lora_r", "8"],
    ["gpus", "4"], ["zero", "2"], ["ctx_mib", "700"], ["reserve_pct", "12"],
  ];
  let last = await ui.peakBytes(page);
  for (const [k, v, mayStay] of knobs) {
    await ui.setField(page, k, v);
    await page.waitForFunction(([k, v]) => new URL(location.href).searchParams.get(k) === String(v), [k, v]);
    const now = await ui.peakBytes(page);
    // The optimizer's temporaries only matter when the peak is in its step.
    if (!mayStay) assert.notEqual(now, last, `${k} changed the estimate`);
    last = now;
  }
  assert.equal(last, cli(ui.urlQuery(page)));
});

test("charts: bands per component, the GPU line, and a leak running out of memory", async ({ page, base, shot }) => {
  await page.goto(`${base}?model=gpt2-124m&dtype=fp32&batch=4&seq=1024&gpu=custom&capacity_gib=9&iters=10`);
  await ui.ready(page);
  await page.waitForFunction(() => document.querySelector('[data-testid="steps-chart"]')?.dataset.bands);
  const phases = await ui.chartState(page, "phase-chart");
  // parameters, state, gradients, temporaries, activations, logits,
  // retained (cuBLAS's workspaces: a typed capacity is taken as CUDA), overhead
  assert.equal(phases.bands, 8);
  assert.ok(phases.inked > 20000);
  assert.equal(await ui.attr(page, "steps-summary", "data-oom-step"), "");
  await ui.setField(page, "leak", "logits");
  await page.waitForFunction(() => document.querySelector('[data-testid="steps-summary"]').dataset.oomStep !== "");
  const k = Number(await ui.attr(page, "steps-summary", "data-oom-step"));
  assert.ok(k > 1 && k <= 10, `oom at ${k}`);
  assert.match(await page.textContent('[data-testid="steps-summary"]'), new RegExp(`runs out of memory at step ${k}`));
  assert.equal(await ui.attr(page, "oom-step", "data-step"), String(k));
  const steps = await ui.chartState(page, "steps-chart");
  // The leak is kept across steps: it grows the retained band (beside
  // cuBLAS's workspaces), the OOM step above is its effect.
  assert.equal(steps.bands, 8, "the leak in the retained band");
  await shot();
});

test("the breakdown adds up, shows each formula, and the seed formula sits beside it", async ({ page, base, shot }) => {
  await page.goto(`${base}?model=llama3.2-1b&dtype=bf16&batch=2&seq=1024`);
  await ui.ready(page);
  const rows = await page.$$eval("table.breakdown tbody tr", (trs) =>
    trs.map((tr) => ({ bytes: tr.dataset.bytes, formula: tr.querySelector(".formula").textContent })),
  );
  const sum = rows.reduce((a, r) => a + BigInt(r.bytes), 0n);
  assert.equal(sum, await ui.peakBytes(page));
  assert.ok(rows.every((r) => r.formula.length > 10), JSON.stringify(rows));
  assert.ok(rows.some((r) => r.formula.startsWith("weights: 1\u2009235\u2009814\u2009400 parameters × 2 B = ")));
  assert.match(await page.textContent('[data-testid="bytes-per-param"]'), /^10\.0 bytes per parameter at the optimizer step/);
  const seed = BigInt(await ui.attr(page, "seed-total", "data-bytes"));
  assert.ok(seed > 0n);
  assert.match(await page.textContent('[data-testid="seed-total"]'), /The seed formula says .* \([+-]\d+% vs vramfit\)/);
  await shot();
});

test("the verdict: a GPU from the list, a typed size; changes that would fit, applied with a click", async ({ page, base, shot }) => {
  await page.goto(`${base}?model=llama3.2-1b&dtype=amp_bf16&batch=8&seq=2048&gpu=h200-141`);
  await ui.ready(page);
  const verdict = () => page.$eval('[data-testid="fit-verdict"]', (e) => ({ fits: e.dataset.fits, bytes: e.dataset.bytes, text: e.textContent }));
  let v = await verdict();
  assert.equal(v.bytes, String(141n * GIB));
  const peak = await ui.peakBytes(page);
  assert.equal(v.fits, String(peak <= 141n * GIB));
  await ui.setField(page, "gpu", "custom");
  await ui.setField(page, "capacity_gib", "48");
  await page.waitForFunction(() => document.querySelector('[data-testid="fit-verdict"]').dataset.bytes === String(48 * 2 ** 30));
  v = await verdict();
  assert.equal(v.fits, "false");
  assert.match(v.text, /Does not fit: short by \d+\.\d\d GiB/);
  // The smallest listed GPU that would hold it really does.
  const closest = await ui.attr(page, "closest-gpu", "data-gpu");
  assert.ok(closest, "a listed GPU holds it");
  // Ranked by saving; each button applies its change and gives its number.
  const saves = await page.$$eval('[data-testid="suggestion"]', (bs) => bs.map((b) => BigInt(b.dataset.saves)).map(String));
  assert.ok(saves.length >= 5);
  const first = page.locator('[data-testid="suggestion"]').first();
  const expected = await first.getAttribute("data-peak");
  await shot("-before");
  await first.click();
  await ui.waitPeak(page, expected);
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
  // The largest batch that fits, applied: it fits, one more does not.
  await ui.setField(page, "grad_ckpt", true);
  await page.waitForFunction(() => document.querySelector('[data-testid="max-batch"]')?.dataset.value);
  const b = await ui.attr(page, "max-batch", "data-value");
  await page.click('[data-testid="max-batch"]');
  await page.waitForFunction((b) => new URL(location.href).searchParams.get("batch") === b, b);
  assert.equal((await verdict()).fits, "true");
  const q = new URLSearchParams(ui.urlQuery(page));
  q.set("batch", String(Number(b) + 1));
  assert.ok(cli(q.toString()) > 48n * GIB);
  await shot();
});

test("exports: chart PNG and SVG, breakdown CSV and JSON", async ({ page, base }) => {
  await page.goto(`${base}?model=gpt2-124m&batch=2&seq=256`);
  await ui.ready(page);
  await page.waitForFunction(() => document.querySelector('[data-testid="phase-chart"]')?.dataset.bands);
  const grab = async (testid) => {
    const [download] = await Promise.all([page.waitForEvent("download"), page.click(`[data-testid="${testid}"]`)]);
    const path = await download.path();
    return { name: download.suggestedFilename(), data: fs.readFileSync(path) };
  };
  const png = await grab("phase-chart-png");
  assert.equal(png.name, "vramfit-phases.png");
  assert.deepEqual([...png.data.subarray(1, 4)], [0x50, 0x4e, 0x47], "PNG signature");
  const svg = await grab("steps-chart-svg");
  assert.equal(svg.name, "vramfit-steps.svg");
  assert.match(svg.data.toString(), /^<svg[\s\S]*memory \(GiB\)[\s\S]*<\/svg>\s*$/);
  const csv = await grab("export-csv");
  assert.match(csv.data.toString(), /^component,bytes,share_percent,formula\nparameters,\d+,/);
  const json = await grab("export-json");
  const text = json.data.toString();
  const peak = text.match(/"peak_total_bytes": (\d+)/)[1];
  assert.equal(BigInt(peak), await ui.peakBytes(page));
  assert.equal(text, cliJson(ui.urlQuery(page)).trimEnd(), "the page's JSON is the CLI's");
});

test("GB toggle: every number switches unit", async ({ page, base }) => {
  await page.goto(`${base}?model=gpt2-124m`);
  await ui.ready(page);
  await ui.setField(page, "unit", "gb");
  await page.waitForFunction(() => document.querySelector('[data-testid="peak-total"]').textContent.endsWith(" GB"));
  const bytes = Number(await ui.peakBytes(page));
  assert.equal(await page.textContent('[data-testid="peak-total"]'), `${(bytes / 1e9).toFixed(2)} GB`);
  assert.equal(ui.urlParams(page).get("unit"), "gb");
  assert.ok(!(await page.textContent("table.breakdown")).includes("GiB"));
});

test("dark theme follows the system", async ({ browser, base }) => {
  const context = await browser.newContext({ colorScheme: "dark", viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${base}?model=llama3.2-1b`);
  await ui.ready(page);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, "rgb(17, 19, 22)");
  // The chart is drawn on a dark background too.
  await page.waitForFunction(() => document.querySelector('[data-testid="phase-chart"]')?.dataset.bands);
  const corner = await page.evaluate(() => [...document.querySelector('[data-testid="phase-chart"]').getContext("2d").getImageData(2, 2, 1, 1).data]);
  assert.deepEqual(corner.slice(0, 3), [0x1b, 0x1e, 0x23]);
  await page.screenshot({ path: "test-results/dark-theme.png", fullPage: true });
  await context.close();
});

test("phone width: nothing overflows sideways", async ({ browser, base }) => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
  const page = await context.newPage();
  await page.goto(`${base}?model=llama3.1-8b&gpu=rtx-4090-laptop`);
  await ui.ready(page);
  const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  assert.ok(widths[0] <= widths[1], `page ${widths[0]}px wide in a ${widths[1]}px screen`);
  await page.screenshot({ path: "test-results/phone-width.png", fullPage: true });
  await context.close();
});

test("every control is labelled and reachable from the keyboard", async ({ page, base }) => {
  await page.goto(base);
  await ui.ready(page);
  const unlabelled = await page.$$eval("input, select, textarea, button", (els) =>
    els
      .filter((e) => {
        if (e.closest("details:not([open])")) return false;
        const label = e.id && document.querySelector(`label[for="${e.id}"]`);
        return !(label || e.closest("label") || e.getAttribute("aria-label") || (e.tagName === "BUTTON" && e.textContent.trim()));
      })
      .map((e) => e.outerHTML.slice(0, 80)),
  );
  assert.deepEqual(unlabelled, []);
  // Tab from the top reaches the model search, then the copy-link button.
  const seen = [];
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press("Tab");
    seen.push(await page.evaluate(() => document.activeElement?.getAttribute("name") || document.activeElement?.dataset?.testid || ""));
  }
  assert.ok(seen.includes("model") && seen.includes("batch") && seen.includes("copy-link"), seen.join(","));
  // Tooltips in plain words.
  assert.match(await page.getAttribute('[name="grad_ckpt"]', "title"), /recompute/);
});

test("bad input: reasons appear as you type; a hostile link runs nothing and keeps the page", async ({ page, base, shot }) => {
  let dialogs = 0;
  page.on("dialog", async (d) => {
    dialogs++;
    await d.dismiss();
  });
  await page.goto(`${base}?model=%3Cscript%3Ealert(1)%3C/script%3E&batch=%3Cimg%20src=x%20onerror=alert(2)%3E&seq=1e99&layers=-4&evil=%22%3E%3Cb%3E`);
  await ui.ready(page);
  // Echoed values are cut at 24 characters and shown as text.
  assert.equal(await ui.fieldError(page, "batch"), "batch: `<img src=x onerror=alert…` is not a number; using the default 8");
  assert.match(await ui.fieldError(page, "seq"), /`1e99` must be written in digits alone/);
  assert.match(await ui.fieldError(page, "model"), /is not a known model/);
  assert.match(await page.textContent('[data-testid="link-notices"]'), /unknown parameter `evil`; ignored/);
  assert.equal(await page.$$eval("b, img", (e) => e.length), 0, "no markup from the link was rendered");
  assert.equal(dialogs, 0, "no script ran");
  // As-you-type validation, and the text stays.
  await ui.setField(page, "batch", "12x");
  await page.waitForFunction(() => document.querySelector('[data-testid="error-batch"]').textContent.includes("is not a number"));
  assert.equal(await ui.fieldValue(page, "batch"), "12x");
  await ui.setField(page, "batch", "12");
  await page.waitForFunction(() => document.querySelector('[data-testid="error-batch"]').textContent === "");
  await shot();
});

test("notes: a sequence past the trained context is noted next to seq and in the results, not as an error", async ({ page, base, shot }) => {
  await page.goto(`${base}?model=llama3.2-1b&seq=200000`);
  await ui.ready(page);
  const note = /^seq 200000 is longer than the 131072 tokens the model was trained for: it runs with rope scaling/;
  assert.match(await page.textContent('[data-testid="note-seq"]'), note);
  assert.match(await page.textContent('[data-testid="notes"] li[data-key="seq"]'), note);
  assert.equal(await ui.fieldError(page, "seq"), "", "a note is not an error");
  assert.equal(await page.getAttribute('[name="seq"]', "aria-invalid"), "false");
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)), "the estimate runs at the longer sequence");
  await shot();
  await ui.setField(page, "seq", "4096");
  await page.waitForFunction(() => !document.querySelector('[data-testid="notes"]'));
  assert.equal(await page.textContent('[data-testid="note-seq"]'), "");
});

test("a mixture of experts shows its total and its active parameters", async ({ page, base, shot }) => {
  await page.goto(`${base}?model=mixtral-8x7b`);
  await ui.ready(page);
  assert.equal(await ui.attr(page, "param-count", "data-count"), "46702792704", "data-count stays the total");
  assert.equal(await ui.attr(page, "param-count", "data-active"), "12879925248");
  assert.match(
    await page.textContent('[data-testid="param-count"]'),
    /^46\u2009702\u2009792\u2009704 parameters \(12\u202f879\u202f925\u202f248 active per token\) · Mixtral 8x7B$/,
  );
  await shot();
  // A dense model has no "active" part.
  await ui.setField(page, "model", "mistral-7b");
  await page.waitForFunction(() => document.querySelector('[data-testid="param-count"]').dataset.active === "");
  assert.doesNotMatch(await page.textContent('[data-testid="param-count"]'), /active/);
});

test("the presets are listed by family, dense makers first, then mixtures of experts", async ({ page, base }) => {
  await page.goto(`${base}?model=qwen3-8b`);
  await ui.ready(page);
  const groups = await page.$$eval("#model-browse optgroup", (gs) =>
    gs.map((g) => ({ label: g.label, names: [...g.querySelectorAll("option")].map((o) => o.textContent) })),
  );
  assert.deepEqual(groups.map((g) => g.label), [
    "Llama", "SmolLM3", "Qwen2", "Qwen3", "Qwen3.5 / 3.6 (hybrid)", "Mistral", "Ministral 3 / Devstral 2", "Gemma",
    "Gemma 2", "Gemma 3", "Gemma 3n", "Gemma 4", "Gemma 4 (unified, 12B)", "Phi-3", "OLMo 2", "OLMo 3", "LFM2 (hybrid)",
    "Granite 4.0-H (hybrid)", "Nemotron-H (hybrid)", "GPT-2", "GPTBigCode (StarCoder)", "GPT-NeoX / Pythia", "Mixtral (MoE)", "Qwen2-MoE", "Qwen3-MoE", "Qwen3.5 / 3.6 MoE (hybrid)",
    "Qwen3-Next (hybrid MoE)", "LFM2-MoE (hybrid MoE)", "Kimi Linear (hybrid MoE)", "Llama 4", "DeepSeek-V2", "DeepSeek-V3", "GLM-4.5 / 4.6 (MoE)", "GLM-4.7-Flash (MLA MoE)",
    "DeepSeek-V3.2 (sparse attention)", "GLM-5 (sparse attention)", "Mistral Small 4 / Large 3 (MLA MoE)",
    "MiniMax-M2 (MoE)", "gpt-oss (MoE)",
  ]);
  assert.ok(groups.find((g) => g.label === "Llama").names.includes("Llama 3.1 8B"));
  // Every preset once, in the list and in the search box's suggestions, in the same order.
  const listed = groups.flatMap((g) => g.names);
  const searchable = await page.$$eval("#presets option", (os) => os.map((o) => o.textContent));
  assert.deepEqual(searchable, listed);
  assert.equal(new Set(listed).size, listed.length);
  assert.ok(listed.length >= 59, `${listed.length} presets`);
  // The list shows the model and picks one.
  assert.equal(await page.inputValue("#model-browse"), "qwen3-8b");
  await page.selectOption("#model-browse", "gemma2-9b");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("model") === "gemma2-9b");
  assert.equal(await ui.fieldValue(page, "model"), "gemma2-9b");
});

test("tensor parallelism: tp splits each layer, the peak follows the CLI, and what transformers refuses is said next to tp", async ({ page, base, shot }) => {
  await page.goto(`${base}?model=llama3.1-8b&dtype=bf16&optim=adamw&batch=1&seq=2048&gpus=2`);
  await ui.ready(page);
  const one = await ui.peakBytes(page);
  await ui.setField(page, "tp", "2");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("tp") === "2");
  const two = await ui.peakBytes(page);
  assert.ok(two < one, `tp=2 lowers the peak: ${two} < ${one}`);
  assert.equal(two, cli(ui.urlQuery(page)));
  assert.equal(await ui.fieldError(page, "tp"), "");
  // Four GPUs at tp 2 need FSDP2 over the two groups: said next to tp, tp 1 used.
  await ui.setField(page, "gpus", "4");
  await page.waitForFunction(() => document.querySelector('[data-testid="error-tp"]').textContent.includes("FSDP2"));
  assert.match(await ui.fieldError(page, "tp"), /shards the 2 data-parallel ranks with FSDP2: set shard=fsdp2 and zero=3, or gpus=2; using the default 1/);
  await ui.setField(page, "zero", "3");
  await ui.setField(page, "shard", "fsdp2");
  await page.waitForFunction(() => document.querySelector('[data-testid="error-tp"]').textContent === "");
  assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
  await shot();
});

test("pipeline parallelism: pp cuts the layers into stages, each stage's peak beside the verdict, the fullest as the CLI says", async ({ page, base, shot }) => {
  await page.goto(`${base}?model=llama3.1-8b&dtype=bf16&optim=adamw&batch=8&seq=2048&gpus=4`);
  await ui.ready(page);
  const one = await ui.peakBytes(page);
  // More GPUs than stages: said next to pp, pp 1 used.
  await ui.setField(page, "pp", "2");
  await page.waitForFunction(() => document.querySelector('[data-testid="error-pp"]').textContent.includes("set gpus=2"));
  await ui.setField(page, "gpus", "2");
  await page.waitForFunction(() => document.querySelector('[data-testid="error-pp"]').textContent === "");
  await ui.setField(page, "micro_batches", "4");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("micro_batches") === "4");
  const two = await ui.peakBytes(page);
  assert.ok(two < one, `two stages lower the peak: ${two} < ${one}`);
  assert.equal(two, cli(ui.urlQuery(page)));
  const ranks = page.locator('[data-testid="verdict-ranks"]');
  assert.equal(await ranks.getAttribute("data-ranks"), "2");
  assert.match(await ranks.textContent(), /rank 0 \(16 layers, embedding\): .* · rank 1 \(16 layers, head and loss\): /);
  // A micro-batch count the batch does not divide: said next to it.
  await ui.setField(page, "micro_batches", "3");
  await page.waitForFunction(() => document.querySelector('[data-testid="error-micro_batches"]').textContent.includes("must divide the batch (8)"));
  await shot();
});
