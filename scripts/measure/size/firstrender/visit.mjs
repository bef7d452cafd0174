// Loads each link of links.json ({name: query}) in a fresh context of the
// e2e harness's Chromium, from OUT/dist, waits for the first total, and
// writes the ids the instrumented wasm logged to OUT/hits.json.
import fs from "node:fs";
import { serve, launch } from "../../../../tests/e2e/harness.mjs";

const [out, linksFile] = process.argv.slice(2);
const links = JSON.parse(fs.readFileSync(linksFile));
const server = await serve(`${out}/dist`);
const browser = await launch({ webgpu: false });
const hits = {};
for (const [name, query] of Object.entries(links)) {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  page.on("pageerror", (e) => console.error(name, e.message));
  await page.goto(`${server.url}?${query}`);
  await page.waitForSelector('[data-testid="peak-total"]', { timeout: 120000 });
  hits[name] = await page.evaluate(() => [...(globalThis.__ran || [])]);
  await ctx.close();
}
fs.writeFileSync(`${out}/hits.json`, JSON.stringify(hits));
await browser.close();
await server.close();
