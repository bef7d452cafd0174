// Accessibility (issue 9): axe-core 4 (pinned in package.json) finds no
// violation on the page, in the light and the dark theme, with every
// <details> open (the advanced form panels and the probe section, the
// adapter's limits and a probe result included), so their controls are
// checked too.
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import { test } from "./harness.mjs";
import * as ui from "./ui.mjs";

const require = createRequire(import.meta.url);
const AXE = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/** Opens every <details>, including those rendered inside one just opened. */
export async function openAll(page) {
  for (let round = 0; round < 5; round++) {
    const opened = await page.evaluate(() => {
      const closed = [...document.querySelectorAll("details:not([open])")];
      for (const d of closed) d.open = true;
      return closed.length;
    });
    if (!opened) return;
    await page.waitForTimeout(100);
  }
}

/** axe's violations on the page as it is now, one line per failing node. */
async function violations(page) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) {
    await page.addScriptTag({ content: AXE });
  }
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => `${n.target.join(" ")}${n.failureSummary ? ` (${n.failureSummary.replace(/\s+/g, " ").trim()})` : ""}`),
    }));
  });
  return found.flatMap((v) => v.targets.map((t) => `${v.id} [${v.impact}] ${v.help}: ${t}`));
}

/** Zero violations in the light theme, then in the dark one. */
export async function assertBothThemes(page, shot) {
  const report = {};
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    // The theme is CSS only: let a frame pass before measuring contrast.
    await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
    assert.equal(
      await page.evaluate(() => matchMedia("(prefers-color-scheme: dark)").matches),
      scheme === "dark",
    );
    // The stylesheet is applied (a blocked one would leave browser defaults,
    // and a vacuous pass): the page's own background for this theme.
    assert.equal(
      await page.evaluate(() => getComputedStyle(document.body).backgroundColor),
      { light: "rgb(246, 247, 249)", dark: "rgb(17, 19, 22)" }[scheme],
    );
    report[scheme] = await violations(page);
    await shot(`-${scheme}`);
  }
  const lines = Object.entries(report).flatMap(([scheme, v]) => v.map((l) => `${scheme}: ${l}`));
  assert.deepEqual(lines, [], `axe-core found ${lines.length} violation(s):\n${lines.join("\n")}`);
}

test("accessibility: axe-core finds no violation, light and dark, every panel open, after a probe", async ({ page, base, shot }) => {
  await page.goto(`${base}?model=gpt2-124m`);
  await ui.ready(page);
  await openAll(page);
  // The probe section asks its worker for the adapter; wait for the report
  // and open its "Limits and features" too.
  await page.waitForSelector('[data-testid="probe-adapter"]');
  await openAll(page);
  // A small probe, so the result, its notes and the "use" button are checked.
  await page.fill('[data-testid="probe-ceiling"]', "0.25");
  await page.waitForSelector('[data-testid="probe-start"]:not([disabled])');
  await page.click('[data-testid="probe-start"]');
  await page.waitForSelector('[data-testid="probe-use"]', { timeout: 60000 });
  assert.ok((await page.locator("details:not([open])").count()) === 0, "every panel is open");
  await assertBothThemes(page, shot);
});

test("accessibility without WebGPU: the no-adapter result passes too [no-webgpu]", async ({ page, base, shot }) => {
  await page.goto(`${base}?model=gpt2-124m`);
  await ui.ready(page);
  await openAll(page);
  await page.waitForSelector('[data-testid="probe-result"]');
  await assertBothThemes(page, shot);
});
