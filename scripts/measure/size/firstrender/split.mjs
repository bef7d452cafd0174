// A two-way split of the page's wasm, to measure what splitting would cost
// (not used by the build). Usage: node split.mjs in.wasm plan.json outdir [unreachable]
// plan.json maps each defined function's index to 0 (stays in the primary)
// or 1 (moves). The primary keeps every function's name: a moved one becomes
// a stub that asks the host to load the secondary once (import split.load)
// and calls the real function through a table slot of its own, which the
// secondary's element segment fills. The secondary imports the primary's
// memory, tables, globals and the functions it calls. With `unreachable`,
// moved functions become `unreachable` instead (what no split can beat: the
// optimizer then also drops the primary's code that leads only to them).
// Both are optimized by `wasm-opt -Oz` (binaryen 132), as Trunk optimizes the page.
import binaryen from "binaryen";
import fs from "node:fs";
import { execFileSync } from "node:child_process";

const [input, planFile, outDir, mode] = process.argv.slice(2);
const bytes = fs.readFileSync(input);
const plan = JSON.parse(fs.readFileSync(planFile));
fs.mkdirSync(outDir, { recursive: true });

const each = (n, at, info) => Array.from({ length: n }, (_, i) => info(at(i)));
const P = binaryen.readBinary(bytes);
const funcs = each(P.getNumFunctions(), (i) => P.getFunctionByIndex(i), binaryen.getFunctionInfo);
const exports = each(P.getNumExports(), (i) => P.getExportByIndex(i), binaryen.getExportInfo);
const globals = each(P.getNumGlobals(), (i) => P.getGlobalByIndex(i), binaryen.getGlobalInfo);
const tableRefs = each(P.getNumTables(), (i) => P.getTableByIndex(i), (t) => t);
const tables = tableRefs.map(binaryen.getTableInfo);
const fnTable = tableRefs.find((t) => binaryen.Table.getType(t) === binaryen.funcref);
const memory = P.getMemoryInfo();
const pinned = new Set(exports.filter((e) => e.kind === binaryen.ExternalFunction).map((e) => e.value));

// Defined functions in order; exported ones stay (their export names are the JS glue's).
const moved = [];
let defined = -1;
for (const f of funcs) {
  if (f.module) continue;
  defined++;
  if (plan[defined] === 1 && !pinned.has(f.name)) moved.push(f);
}
const base = binaryen.Table.getInitial(fnTable);
const slot = new Map(moved.map((f, i) => [f.name, base + i]));
const isMoved = new Set(moved.map((f) => f.name));
const short = new Map();
const shortName = (n) => (short.has(n) ? short.get(n) : (short.set(n, short.size.toString(36)), short.get(n)));

function write(mod, name) {
  if (!mod.validate()) throw new Error(`${name} does not validate`);
  const raw = `${outDir}/${name}.unopt.wasm`;
  fs.writeFileSync(raw, mod.emitBinary());
  execFileSync("wasm-opt", ["-Oz", raw, "-o", `${outDir}/${name}.wasm`]);
  fs.unlinkSync(raw);
}

const wanted = new Set();
if (mode !== "unreachable") {
  const S = binaryen.readBinary(bytes);
  for (const e of exports) S.removeExport(e.name);
  for (let i = S.getNumElementSegments() - 1; i >= 0; i--)
    S.removeElementSegment(binaryen.getElementSegmentInfo(S.getElementSegmentByIndex(i)).name);
  for (const g of globals) {
    S.removeGlobal(g.name);
    S.addGlobalImport(g.name, "p", `g:${g.name}`, g.type, g.mutable);
  }
  for (const t of tables) S.addTableImport(t.name, "p", `t:${t.name}`);
  const mem = memory.name ?? "0";
  S.setMemory(memory.initial, memory.max ?? 65536, null, [], false, false, mem);
  S.addMemoryImport(mem, "p", "memory");
  for (const f of funcs) {
    if (isMoved.has(f.name)) continue;
    S.removeFunction(f.name);
    S.addFunctionImport(f.name, "p", shortName(f.name), f.params, f.results);
  }
  const fnTableName = binaryen.Table.getName(fnTable);
  S.addActiveElementSegment(fnTableName, "split", moved.map((f) => f.name), S.i32.const(base));
  S.runPasses(["remove-unused-module-elements"]);
  for (const f of each(S.getNumFunctions(), (i) => S.getFunctionByIndex(i), binaryen.getFunctionInfo))
    if (f.module === "p") wanted.add(f.name);
  write(S, "secondary");
}

binaryen.Table.setInitial(fnTable, base + moved.length);
if (binaryen.Table.hasMax(fnTable)) binaryen.Table.setMax(fnTable, binaryen.Table.getMax(fnTable) + moved.length);
P.addFunctionImport("split.load", "split", "load", binaryen.i32, binaryen.none);
P.addGlobal("split.loaded", binaryen.i32, true, P.i32.const(0));
const tableName = binaryen.Table.getName(fnTable);
for (const f of moved) {
  const args = binaryen.expandType(f.params).map((t, i) => P.local.get(i, t));
  const load = P.if(
    P.i32.eqz(P.global.get("split.loaded", binaryen.i32)),
    P.block(null, [P.call("split.load", [P.i32.const(1)], binaryen.none), P.global.set("split.loaded", P.i32.const(1))]),
  );
  const call = P.call_indirect(tableName, P.i32.const(slot.get(f.name)), args, f.params, f.results);
  binaryen.Function.setBody(P.getFunction(f.name), mode === "unreachable" ? P.unreachable() : P.block(null, [load, call], f.results));
}
if (mode !== "unreachable") {
  for (const g of globals) P.addGlobalExport(g.name, `g:${g.name}`);
  for (const t of tables) P.addTableExport(t.name, `t:${t.name}`);
  for (const n of wanted) P.addFunctionExport(n, shortName(n));
}
write(P, "primary");
console.error(`${outDir}: ${moved.length} functions moved, ${wanted.size} primary functions exported`);
