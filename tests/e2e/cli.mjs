// The CLI, run on the same query string as the page: the two must agree.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";

/** The CLI's JSON document for a query (bytes kept exact as strings). */
export function cliJson(query) {
  const out = execFileSync("cargo", ["run", "-q", "--locked", "-p", "vramfit-cli", "--", query], {
    encoding: "utf8",
  });
  return out;
}

/** The CLI's peak total for a query, as BigInt. */
export function cli(query) {
  const out = cliJson(query);
  const m = out.match(/"peak_total_bytes": (\d+)/);
  assert.ok(m, `CLI printed no peak_total_bytes:\n${out}`);
  return BigInt(m[1]);
}
