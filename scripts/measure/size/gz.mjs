// Prints each file's raw bytes, node zlib gzip level 9 (what the e2e
// harness serves, so what encodedBodySize reports) and KiB.
import fs from "node:fs";
import zlib from "node:zlib";
for (const f of process.argv.slice(2)) {
  const b = fs.readFileSync(f);
  const z = zlib.gzipSync(b, { level: 9 }).length;
  console.log(`${f.padEnd(44)} ${String(b.length).padStart(9)} raw ${String(z).padStart(8)} gzip ${(z / 1024).toFixed(1).padStart(7)} KiB`);
}
