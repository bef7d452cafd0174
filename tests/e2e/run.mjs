// End-to-end flows in headless Chromium against the release build in dist/.
// Run by scripts/test.sh after `trunk build --release`.
import assert from "node:assert/strict";
import { test, run } from "./harness.mjs";
import { cli } from "./cli.mjs";
import * as ui from "./ui.mjs";
import "./page.mjs";
import "./probe.mjs";
import "./a11y.mjs";
import "./hub.mjs";
import "./infer.mjs";
import "./gguf.mjs";
import "./paste.mjs";
import "./budget.mjs";

test("set a configuration through the form; the page and the CLI agree", async ({ page, base, shot }) => {
  await page.goto(base);
  await ui.ready(page);
  await ui.setField(page, "model", ""); // parameter count only: the seed formula
  await ui.setField(page, "params", "1.5e9");
  await ui.setField(page, "dtype", "bf16");
  await ui.setField(page, "optim", "adamw");
  await ui.setField(page, "batch", "8");
  await ui.setField(page, "seq", "2048");
  await page.waitForFunction(
    () => document.querySelector('[data-testid="peak-total"]')?.dataset.bytes === "92650478080",
  );
  assert.equal(await ui.peakBytes(page), cli("params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048"));
  // Every field is in the URL.
  const p = ui.urlParams(page);
  assert.deepEqual(
    ["params", "dtype", "optim", "batch", "seq"].map((k) => p.get(k)),
    ["1.5e9", "bf16", "adamw", "8", "2048"],
  );
  await shot();
});

test("the chart is drawn with one band per component", async ({ page, base }) => {
  await page.goto(`${base}?params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048`);
  await ui.ready(page);
  await page.waitForFunction(() => document.querySelector('[data-testid="phase-chart"]')?.dataset.bands);
  const chart = await ui.chartState(page);
  // parameters, optimizer state, gradients, optimizer temporaries, activations
  assert.equal(chart.bands, 5);
  assert.ok(chart.inked > 20000, `only ${chart.inked} pixels drawn`);
  const legend = await page.locator("table.breakdown tbody tr").count();
  assert.equal(legend, 3, "params, state and activations are alive at the peak");
});

test("reloading the URL restores every field and the same total", async ({ page, base }) => {
  await page.goto(base);
  await ui.ready(page);
  await ui.setField(page, "model", "");
  await ui.setField(page, "params", "7B");
  await ui.setField(page, "dtype", "fp32");
  await ui.setField(page, "optim", "sgd_mom");
  await ui.setField(page, "batch", "3");
  await ui.setField(page, "seq", "512");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("seq") === "512");
  const before = await ui.peakBytes(page);
  const url = page.url();
  await page.reload();
  await ui.ready(page);
  assert.equal(page.url(), url);
  assert.equal(await ui.peakBytes(page), before);
  for (const [k, v] of [["params", "7B"], ["dtype", "fp32"], ["optim", "sgd_mom"], ["batch", "3"], ["seq", "512"]]) {
    assert.equal(await ui.fieldValue(page, k), v, k);
  }
  assert.equal(before, cli("params=7B&dtype=fp32&optim=sgd_mom&batch=3&seq=512"));
});

test("a malformed URL shows what was ignored, next to the field, and uses defaults", async ({ page, base, shot }) => {
  await page.goto(`${base}?batch=abc&seq=%3Cscript%3Ealert(1)%3C/script%3E&colour=blue&dtype=fp32`);
  await ui.ready(page);
  assert.match(await ui.fieldError(page, "batch"), /batch: `abc` is not a number; using the default 8/);
  assert.match(await ui.fieldError(page, "seq"), /is not a number; using the default 2048/);
  assert.match(await page.textContent('[data-testid="link-notices"]'), /unknown parameter `colour`; ignored/);
  // What was typed is kept in the field, and the estimate uses the defaults.
  assert.equal(await ui.fieldValue(page, "batch"), "abc");
  assert.equal(await ui.peakBytes(page), cli("batch=8&seq=2048&dtype=fp32"));
  assert.equal(await page.locator('[aria-invalid="true"]').count(), 2);
  await shot();
});

test("a fixed field clears its message and updates the estimate", async ({ page, base }) => {
  await page.goto(`${base}?batch=0`);
  await ui.ready(page);
  assert.match(await ui.fieldError(page, "batch"), /must be at least 1/);
  await ui.setField(page, "batch", "16");
  await page.waitForFunction(() => document.querySelector('[data-testid="error-batch"]').textContent === "");
  assert.equal(await ui.peakBytes(page), cli("batch=16"));
});

test("the copy-link button copies the URL", async ({ page, base, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  await page.goto(`${base}?batch=4`);
  await ui.ready(page);
  await page.click('[data-testid="copy-link"]');
  await page.waitForSelector("text=Link copied");
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, page.url());
});

await run();
