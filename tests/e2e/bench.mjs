// Budgets, measured in headless Chromium against the release build served
// gzip-encoded on 127.0.0.1: the page's transfer size, the time from
// navigation to the first total, and the update latency from an input change
// to both charts redrawn. Prints all three; exits 1 if a budget is broken.
import { serve, launch } from "./harness.mjs";

const BUDGET_TRANSFER_KB = Number(process.env.BUDGET_TRANSFER_KB || 300);
const BUDGET_FIRST_MS = Number(process.env.BUDGET_FIRST_MS || 500);
const BUDGET_UPDATE_MS = Number(process.env.BUDGET_UPDATE_MS || 16);
const RUNS = Number(process.env.BENCH_RUNS || 15);
const UPDATES = Number(process.env.BENCH_UPDATES || 41);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

const server = await serve("dist");
const browser = await launch();
const firsts = [];
let transfer = null;
for (let i = 0; i < RUNS; i++) {
  // A fresh context per run: nothing cached, as for a first visit.
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.addInitScript(() => {
    new MutationObserver((_, obs) => {
      if (document.querySelector('[data-testid="peak-total"]')) {
        window.__firstTotalMs = performance.now();
        obs.disconnect();
      }
    }).observe(document, { childList: true, subtree: true });
  });
  await page.goto(`${server.url}?model=llama3.1-8b&dtype=amp_bf16&batch=4&seq=2048`);
  await page.waitForFunction(() => window.__firstTotalMs !== undefined, null, { timeout: 15000 });
  firsts.push(await page.evaluate(() => window.__firstTotalMs));
  if (i === 0) {
    transfer = await page.evaluate(() => {
      const entries = [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")];
      return entries.map((e) => ({ name: new URL(e.name).pathname, body: e.encodedBodySize, raw: e.decodedBodySize }));
    });
  }
  await context.close();
}

// Update latency: change a field as a user would (an input event) and time
// until both charts stamp a redraw. Training: the batch size, with the
// phase and steps charts; inference: the prompt, with the phase and
// context-length charts (the context curve re-estimates every length).
async function updateLatency(query, field, values, charts) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.url}?${query}`);
  await page.waitForFunction(
    (ids) => ids.every((id) => document.querySelector(`[data-testid="${id}"]`)?.dataset.bands),
    charts,
  );
  const out = [];
  for (let i = 0; i < UPDATES; i++) {
    const ms = await page.evaluate(
      async ([field, value, ids]) => {
        const input = document.querySelector(`[name="${field}"]`);
        const charts = ids.map((id) => document.querySelector(`[data-testid="${id}"]`));
        const t0 = performance.now();
        input.value = String(value);
        input.dispatchEvent(new Event("input", { bubbles: true }));
        const deadline = t0 + 5000;
        while (!charts.every((c) => Number(c.dataset.drawnMs) > t0)) {
          if (performance.now() > deadline) return NaN;
          await new Promise((r) => setTimeout(r, 0));
        }
        return Math.max(...charts.map((c) => Number(c.dataset.drawnMs))) - t0;
      },
      [field, values[i % values.length], charts],
    );
    out.push(ms);
  }
  await context.close();
  return out;
}
const updates = await updateLatency(
  "model=llama3.1-8b&dtype=amp_bf16&batch=4&seq=2048",
  "batch",
  [1, 2, 3, 4, 5, 6, 7, 8],
  ["phase-chart", "steps-chart"],
);
const inferUpdates = await updateLatency(
  "task=infer&model=llama3.1-8b&weights=nf4&double_quant=true&prompt=8192&new=512&gpu=rtx-4090-laptop",
  "prompt",
  [1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384],
  ["phase-chart", "context-chart"],
);
// llama.cpp: the context, with --fit's placement searched at every length.
const localUpdates = await updateLatency(
  "task=infer&engine=llamacpp&model=qwen3-8b&weights=q4_k_m&ctx=32768&gpu=rtx-4060-laptop",
  "ctx",
  [4096, 8192, 12288, 16384, 24576, 32768, 40960, 2048],
  ["phase-chart", "context-chart"],
);
await browser.close();
await server.close();

const totalBody = transfer.reduce((a, e) => a + e.body, 0);
console.log("transfer (gzip-encoded bodies, first visit):");
for (const e of transfer) console.log(`  ${e.name.padEnd(28)} ${(e.body / 1024).toFixed(1).padStart(7)} KB  (${(e.raw / 1024).toFixed(1)} KB raw)`);
console.log(`  ${"total".padEnd(28)} ${(totalBody / 1024).toFixed(1).padStart(7)} KB   budget ${BUDGET_TRANSFER_KB} KB`);
const sorted = [...firsts].sort((a, b) => a - b);
console.log(
  `time from navigation to the first total over ${RUNS} loads: median ${median(firsts).toFixed(0)} ms, ` +
    `min ${sorted[0].toFixed(0)} ms, max ${sorted[sorted.length - 1].toFixed(0)} ms   budget ${BUDGET_FIRST_MS} ms`,
);
const updSorted = [...updates].sort((a, b) => a - b);
console.log(
  `update latency (input change to both charts redrawn) over ${UPDATES} changes: median ${median(updates).toFixed(1)} ms, ` +
    `min ${updSorted[0].toFixed(1)} ms, max ${updSorted[updSorted.length - 1].toFixed(1)} ms   budget ${BUDGET_UPDATE_MS} ms`,
);
const infSorted = [...inferUpdates].sort((a, b) => a - b);
console.log(
  `update latency, inference (prompt change to the phase and context charts redrawn) over ${UPDATES} changes: ` +
    `median ${median(inferUpdates).toFixed(1)} ms, min ${infSorted[0].toFixed(1)} ms, ` +
    `max ${infSorted[infSorted.length - 1].toFixed(1)} ms   budget ${BUDGET_UPDATE_MS} ms`,
);
const locSorted = [...localUpdates].sort((a, b) => a - b);
console.log(
  `update latency, llama.cpp (ctx change to the phase and context charts redrawn) over ${UPDATES} changes: ` +
    `median ${median(localUpdates).toFixed(1)} ms, min ${locSorted[0].toFixed(1)} ms, ` +
    `max ${locSorted[locSorted.length - 1].toFixed(1)} ms   budget ${BUDGET_UPDATE_MS} ms`,
);
let ok = true;
if (!(median(localUpdates) <= BUDGET_UPDATE_MS)) {
  console.log(`OVER BUDGET: llama.cpp update ${median(localUpdates).toFixed(1)} ms > ${BUDGET_UPDATE_MS} ms`);
  ok = false;
}
if (!(median(updates) <= BUDGET_UPDATE_MS)) {
  console.log(`OVER BUDGET: update ${median(updates).toFixed(1)} ms > ${BUDGET_UPDATE_MS} ms`);
  ok = false;
}
if (!(median(inferUpdates) <= BUDGET_UPDATE_MS)) {
  console.log(`OVER BUDGET: inference update ${median(inferUpdates).toFixed(1)} ms > ${BUDGET_UPDATE_MS} ms`);
  ok = false;
}
if (totalBody / 1024 > BUDGET_TRANSFER_KB) {
  console.log(`OVER BUDGET: transfer ${(totalBody / 1024).toFixed(1)} KB > ${BUDGET_TRANSFER_KB} KB`);
  ok = false;
}
if (median(firsts) > BUDGET_FIRST_MS) {
  console.log(`OVER BUDGET: first total ${median(firsts).toFixed(0)} ms > ${BUDGET_FIRST_MS} ms`);
  ok = false;
}
process.exit(ok ? 0 : 1);
