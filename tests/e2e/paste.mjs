// Issue 33, "bring your own": a published start-up log, a vllm serve
// command, a TRL config and a PyTorch OOM message pasted into the page,
// read in the tools worker, each reproduced beside the CLI's `--from`.
import assert from "node:assert/strict";
import fs from "node:fs";
import { execFileSync } from "node:child_process";
import { test } from "./harness.mjs";
import { cli } from "./cli.mjs";
import * as ui from "./ui.mjs";

const PASTES = "crates/core/tests/fixtures/pastes";

/** The CLI's `--from` document for a fixture and a query on top. */
function cliFrom(file, query = "") {
  const out = execFileSync("cargo", ["run", "-q", "--locked", "-p", "vramfit-cli", "--", "--from", `${PASTES}/${file}`, query], {
    encoding: "utf8",
  });
  return JSON.parse(out);
}

async function paste(page, text) {
  const area = page.locator('[data-testid="config-json"]');
  await ui.ensureVisible(area);
  await area.fill(text);
  await page.click('[data-testid="config-import"]');
  await page.waitForSelector('[data-testid="config-message"]');
}

/** The outcome's lines under a section's title (two-space indented). */
async function section(page, title) {
  const lines = (await page.textContent('[data-testid="config-message"]')).split("\n");
  const at = lines.indexOf(title);
  if (at < 0) return [];
  const out = [];
  for (const l of lines.slice(at + 1)) {
    if (!l.startsWith("  ")) break;
    out.push(l.slice(2));
  }
  return out;
}

for (const [file, start, expect] of [
  ["llamacpp-qwen3-0.6b-orin-b5489.log", "", { model: "qwen3-0.6b", engine: "llamacpp", ctx: "4096", weights: "q4_k_m" }],
  ["vllm-serve-qwen2.5-3b-awq.txt", "", { model: "qwen2.5-3b", engine: "vllm", weights: "awq" }],
  ["trl-example_config.yaml", "", { model: "qwen2.5-0.5b" }],
  ["pytorch-oom-23.65gib.txt", "model=llama3.1-8b&dtype=bf16&batch=1&seq=512", { gpu: "custom", capacity_gib: "23.65" }],
  // A LoRA adapter's buffers, measured; its rank (32, as the link gives
  // it) is not in the log.
  // A PEFT adapter's config over an inference link: the adapter llama.cpp loads.
  ["peft-adapter_config-llama3.2-3b-r8.json", "task=infer&engine=llamacpp", { task: "infer", model: "llama3.2-3b", lora_r: "8" }],
  ["llamacpp-lora-llama3-8b-f16-2gpu.log", "task=infer&engine=llamacpp&model=llama3.1-8b&weights=f16&lora_r=32", { engine: "llamacpp", n_gpu_layers: "30", lora_r: "32" }],
]) {
  test(`paste ${file}: its settings set the form, measured beside estimated as the CLI's --from`, async ({ page, base, shot }) => {
    await page.goto(start ? `${base}?${start}` : base);
    await ui.ready(page);
    await paste(page, fs.readFileSync(`${PASTES}/${file}`, "utf8"));
    assert.equal(await ui.attr(page, "config-message", "data-ok"), "true", await page.textContent('[data-testid="config-message"]'));
    const p = ui.urlParams(page);
    for (const [k, v] of Object.entries(expect)) {
      assert.equal(p.get(k), v, `${k} in ${ui.urlQuery(page)}`);
    }
    // The same figures as the CLI reading the same file over the page's
    // query before the paste.
    const doc = cliFrom(file, start);
    const measured = await section(page, "Measured, beside vramfit's estimate:");
    assert.equal(measured.length, doc.measured.length, measured.join("\n"));
    for (const [i, m] of doc.measured.entries()) {
      assert.ok(measured[i].startsWith(`${m.field}: measured ${m.measured} bytes`), measured[i]);
      assert.ok(measured[i].includes(`estimated ${m.estimated} bytes`), `${measured[i]} vs ${m.estimated}`);
    }
    assert.deepEqual(await section(page, "Not read:"), doc.unknown);
    // The page's estimate is the CLI's for the link it now holds.
    assert.equal(await ui.peakBytes(page), cli(ui.urlQuery(page)));
    await shot();
  });
}

test("a paste that is not one says so and changes nothing", async ({ page, base }) => {
  await page.goto(base);
  await ui.ready(page);
  const before = ui.urlQuery(page);
  await paste(page, "   Compiling serde v1.0.200\n    Finished `dev` profile\n");
  assert.equal(await ui.attr(page, "config-message", "data-ok"), "false");
  assert.match(await page.textContent('[data-testid="config-message"]'), /^not a command, a training config, a start-up log or an out-of-memory message/);
  assert.equal(ui.urlQuery(page), before);
});
