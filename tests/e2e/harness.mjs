// A small end-to-end harness: a static server for dist/ on 127.0.0.1 (gzip,
// like a real host), headless Chromium through playwright-core, and a
// sequential test runner that saves screenshots under test-results/.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { chromium } from "playwright-core";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
};

/** Serves `dir` on 127.0.0.1 (a free port), gzip-encoded when asked for. */
export async function serve(dir) {
  const root = path.resolve(dir);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    let file = path.join(root, decodeURIComponent(url.pathname));
    if (!file.startsWith(root)) {
      res.writeHead(403).end();
      return;
    }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, "index.html");
    if (!fs.existsSync(file)) {
      res.writeHead(404).end("not found");
      return;
    }
    let body = fs.readFileSync(file);
    const headers = { "content-type": TYPES[path.extname(file)] || "application/octet-stream", "cache-control": "no-store" };
    if (/\bgzip\b/.test(req.headers["accept-encoding"] || "")) {
      body = zlib.gzipSync(body, { level: 9 });
      headers["content-encoding"] = "gzip";
    }
    res.writeHead(200, headers).end(body);
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((ok) => server.close(ok)) };
}

/** Headless Chromium as this machine runs it; `webgpu` adds the flag that exposes SwiftShader's adapter. */
export async function launch({ webgpu = true } = {}) {
  const args = [
    "--headless=new",
    "--no-sandbox",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
  ];
  if (webgpu) args.push("--enable-unsafe-webgpu");
  return chromium.launch({ executablePath: "/usr/bin/chromium", args });
}

const tests = [];
/** Registers a test: `fn({ page, base, browser, shot })`. */
export function test(name, fn) {
  tests.push({ name, fn });
}

export const artifacts = path.resolve("test-results");

/** Runs every registered test against a fresh page; exits non-zero on failure. */
export async function run({ dist = "dist", only = process.env.E2E_ONLY } = {}) {
  fs.mkdirSync(artifacts, { recursive: true });
  const server = await serve(dist);
  let failed = 0;
  let ran = 0;
  const browsers = {};
  for (const t of tests) {
    if (only && !t.name.includes(only)) continue;
    ran++;
    const webgpu = !t.name.includes("[no-webgpu]");
    const key = webgpu ? "gpu" : "plain";
    browsers[key] ??= await launch({ webgpu });
    const context = await browsers[key].newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const slug = t.name.replace(/[^a-z0-9]+/gi, "-").toLowerCase();
    const shot = (suffix = "") =>
      page.screenshot({ path: path.join(artifacts, `${slug}${suffix}.png`), fullPage: true });
    const started = Date.now();
    try {
      await t.fn({ page, base: server.url, browser: browsers[key], context, shot });
      if (errors.length) throw new Error(`uncaught page errors: ${errors.join(" | ")}`);
      console.log(`ok   ${t.name} (${Date.now() - started} ms)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${t.name}\n     ${String(e.stack || e).split("\n").join("\n     ")}`);
      await shot("-failure").catch(() => {});
    } finally {
      await context.close();
    }
  }
  for (const b of Object.values(browsers)) await b.close();
  await server.close();
  console.log(`\n${ran - failed} passed, ${failed} failed; screenshots in ${artifacts}`);
  if (failed) process.exit(1);
}
