// Big-graph benchmark (figures, not a test): serves dist/, opens the page in
// headless Chromium with ?bench=1, hands it synthetic graphs of 1k, 3k and 10k
// nodes (tools/make_big_graph.py, written to build/bench/) and the real
// torchvision exports found there (tools/export_big.py), the way a dropped file
// arrives, and prints per graph:
//   open -> drawn   bytes given to the page -> first frame with every box placed
//   longest frame   the longest main-loop call from the open until 10 frames later
//   scene / layout  labels + layout, and the layered layout alone (WebAssembly)
//   frame build     median and p95 of NewFrame -> Render while panning and zooming
//   heap            the WebAssembly memory after everything
// for the graph as it opens (big graphs collapsed to their top-level modules)
// and with every module expanded (key E).
//   node tools/big_bench.js [dist] [filter]
"use strict";
const { execFileSync } = require("child_process");
const fs = require("fs");
const path = require("path");
const { ROOT, serve, launch } = require("../tests/e2e/lib");

const BENCH = path.join(ROOT, "build", "bench");

function ensureGraphs() {
  fs.mkdirSync(BENCH, { recursive: true });
  const out = [];
  for (const n of [1000, 3000, 10000]) {
    const file = path.join(BENCH, `big_${n}.json`);
    if (!fs.existsSync(file))
      execFileSync("/usr/bin/python3", [path.join(ROOT, "tools/make_big_graph.py"), file, String(n)]);
    out.push(file);
  }
  // Real exports (tools/export_big.py); ResNet-50's 100 MB of weights are left out.
  for (const f of fs.readdirSync(BENCH).sort())
    if (f.endsWith(".pt2") && fs.statSync(path.join(BENCH, f)).size < 64e6) out.push(path.join(BENCH, f));
  out.push(path.join(ROOT, "assets/graphs/resnet_style.pt2"));
  return out;
}

const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

async function bench(page) {
  return page.evaluate(() => window.pt2lab.bench());
}

async function waitBench(page, pred, what, timeoutMs = 60000) {
  const t0 = Date.now();
  for (;;) {
    const b = await bench(page);
    if (b && pred(b)) return b;
    if (Date.now() - t0 > timeoutMs) throw new Error("timed out waiting for " + what + ": " + JSON.stringify(b && { file: b.file, frames: b.frames }));
    await page.waitForTimeout(20);
  }
}

// Drags and wheels over the canvas for a while; returns the frame build times meanwhile.
async function panZoom(page, steps) {
  const s = (await bench(page)).canvas; // not state(): its JSON of 10k nodes would grow the heap
  const cx = s.x + s.w / 2, cy = s.y + s.h / 2;
  const before = (await bench(page)).frames;
  await page.mouse.move(cx, cy);
  for (let i = 0; i < steps; i++) {
    await page.mouse.down();
    await page.mouse.move(cx + 80 * Math.sin(i / 3), cy + 60 * Math.cos(i / 4), { steps: 4 });
    await page.mouse.up();
    await page.mouse.wheel(0, i % 8 < 4 ? -120 : 120);
    await page.waitForTimeout(16);
  }
  const b = await bench(page);
  const n = b.frames - before;
  return b.build_ms.slice(Math.max(0, b.build_ms.length - n));
}

async function openGraph(page, file) {
  const name = path.basename(file);
  const route = "bench/" + name;
  // The bytes reach the page first; the clock starts when they are handed over.
  const t0 = await page.evaluate(async ({ route, name }) => {
    const bytes = new Uint8Array(await (await fetch(route)).arrayBuffer());
    const t0 = performance.now();
    window.pt2lab.openBytes(name, bytes);
    return t0;
  }, { route, name });
  const drawn = await waitBench(page, (b) => b.file === name && b.t_drawn > t0, "open " + name);
  await page.waitForTimeout(300); // ten frames or more
  const b = await bench(page);
  const framesSinceOpen = b.loop_ms.slice(b.loop_ms.length - (b.frames - drawn.frames) - 1);
  return { open: drawn.t_drawn - t0, parse: drawn.t_opened - t0, longest: Math.max(...framesSinceOpen), b: drawn };
}

function row(label, r, frames, heap) {
  const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : "-");
  console.log(`  ${label.padEnd(24)} ${String(r.b.nodes).padStart(6)} ${String(r.b.shown).padStart(6)}` +
              ` ${f(r.open).padStart(8)} ${f(r.parse).padStart(8)} ${f(r.longest).padStart(8)}` +
              ` ${f(r.b.scene_ms).padStart(8)} ${f(r.b.layout_ms).padStart(8)}` +
              ` ${f(pct(frames, 0.5)).padStart(7)} ${f(pct(frames, 0.95)).padStart(7)}` +
              ` ${(heap / 1048576).toFixed(0).padStart(6)}`);
}

async function main() {
  const dist = path.resolve(process.argv[2] || path.join(ROOT, "dist"));
  const filter = process.argv[3] || "";
  const graphs = ensureGraphs().filter((g) => path.basename(g).includes(filter));
  const server = await serve(dist);
  const browser = await launch();
  console.log("  graph                     nodes  boxes  open->drawn  (parse) longest    scene   layout  build p50    p95  heap MB");
  console.log("                                          ms        ms      ms       ms       ms      ms      ms");
  try {
    for (const file of graphs) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      await context.route("**/bench/*", (r) => {
        const f = path.join(path.dirname(file), path.basename(new URL(r.request().url()).pathname));
        r.fulfill({ status: 200, body: fs.readFileSync(f), contentType: "application/octet-stream" });
      });
      const page = await context.newPage();
      await page.goto(server.url + "?bench=1&nosw=1");
      await waitBench(page, (b) => b.file && b.frames > 2, "the first frame");
      const name = path.basename(file);
      const r = await openGraph(page, file);
      const frames = await panZoom(page, 40);
      row(name, r, frames, (await bench(page)).heap_bytes);
      if (!(await bench(page)).expand_all) { // opened collapsed: now expand every module
        const t0 = await page.evaluate(() => performance.now());
        await page.keyboard.press("e");
        const b = await waitBench(page, (x) => x.shown === x.nodes || x.shown > r.b.shown * 2, "expand all");
        await page.keyboard.press("f");
        await page.waitForTimeout(300);
        const fit = await panZoom(page, 30);
        const heap = (await bench(page)).heap_bytes;
        row("  expanded, fitted", { open: b.t_drawn > t0 ? NaN : NaN, parse: NaN, longest: NaN, b }, fit, heap);
        await page.keyboard.press("0"); // 100%: text, culling does the work
        await page.waitForTimeout(200);
        const near = await panZoom(page, 30);
        row("  expanded, at 100%", { open: NaN, parse: NaN, longest: NaN, b }, near, (await bench(page)).heap_bytes);
      }
      await context.close();
    }
  } finally {
    await browser.close();
    server.close();
  }
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
