// Budgets, measured in headless Chromium against the release build served
// gzip-encoded on 127.0.0.1: the page's transfer size and the time from
// navigation to the first total. Prints both; exits 1 if a budget is broken.
import { serve, launch } from "./harness.mjs";

const BUDGET_TRANSFER_KB = Number(process.env.BUDGET_TRANSFER_KB || 250);
const BUDGET_FIRST_MS = Number(process.env.BUDGET_FIRST_MS || 500);
const RUNS = Number(process.env.BENCH_RUNS || 15);

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
  await page.goto(`${server.url}?params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048`);
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
let ok = true;
if (totalBody / 1024 > BUDGET_TRANSFER_KB) {
  console.log(`OVER BUDGET: transfer ${(totalBody / 1024).toFixed(1)} KB > ${BUDGET_TRANSFER_KB} KB`);
  ok = false;
}
if (median(firsts) > BUDGET_FIRST_MS) {
  console.log(`OVER BUDGET: first total ${median(firsts).toFixed(0)} ms > ${BUDGET_FIRST_MS} ms`);
  ok = false;
}
process.exit(ok ? 0 : 1);
