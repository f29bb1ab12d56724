// Page benchmark (figures, not a test): serves dist/ on 127.0.0.1, opens it in
// headless Chromium with a cold cache several times, and prints
//  - the bytes fetched before the first interactive frame, each file counted
//    at its `brotli -q 11` size (the static server does not compress), and
//  - the time from navigation to the first interactive frame (the first frame
//    the app draws, with the first lesson graph open), and
//  - how long the scene of the largest lesson graph takes (labels + layout).
//   node tools/page_bench.js [dist] [runs]
"use strict";
const { execFileSync } = require("child_process");
const fs = require("fs");
const path = require("path");
const { ROOT, serve, launch, waitState } = require("../tests/e2e/lib");

function brotliSize(file) {
  return execFileSync("brotli", ["-q", "11", "-c", file], { maxBuffer: 1 << 30 }).length;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function main() {
  const dist = path.resolve(process.argv[2] || path.join(ROOT, "dist"));
  const runs = Number(process.argv[3] || 5);
  const server = await serve(dist);
  const browser = await launch();
  const times = [];
  let files = null;
  let scene = null;
  try {
    for (let i = 0; i < runs; i++) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      await page.goto(server.url);
      await waitState(page, (s) => s.ready && s.frames >= 1, "the first frame", 60000);
      const r = await page.evaluate(() => {
        const first = window.pt2lab.firstFrameMs;
        const fetched = performance.getEntriesByType("resource")
          .filter((e) => e.responseEnd <= first)
          .map((e) => new URL(e.name).pathname);
        return { first, fetched };
      });
      times.push(r.first);
      if (!files) files = ["/index.html"].concat(r.fetched);
      await context.close();
    }
    // The largest lesson graph: how long its scene (labels + layered layout) takes in WASM.
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await page.goto(server.url + "#file=resnet_style.pt2");
    const s = await waitState(page, (st) => st.ready && st.file === "resnet_style.pt2" && st.frames >= 1,
                              "resnet_style.pt2", 60000);
    scene = { nodes: s.nodes.length, edges: s.edges, ms: s.scene_ms };
    await context.close();
  } finally {
    await browser.close();
    server.close();
  }
  let total = 0, raw = 0;
  const rows = [];
  for (const p of files) {
    const rel = p === "/" ? "index.html" : p.replace(/^\//, "");
    const file = path.join(dist, rel);
    if (!fs.existsSync(file)) continue;
    const b = brotliSize(file);
    const size = fs.statSync(file).size;
    total += b;
    raw += size;
    rows.push([rel, size, b]);
  }
  rows.sort((a, b) => b[2] - a[2]);
  console.log("fetched before the first interactive frame (brotli -q 11):");
  for (const [rel, size, b] of rows)
    console.log(`  ${rel.padEnd(34)} ${String(size).padStart(9)} B raw  ${String(b).padStart(8)} B brotli`);
  console.log(`  ${"total".padEnd(34)} ${String(raw).padStart(9)} B raw  ${String(total).padStart(8)} B brotli` +
              `  (${(total / 1e6).toFixed(3)} MB; target <= 1.0 MB)`);
  console.log(`navigation -> first interactive frame, ${runs} cold loads: median ${median(times).toFixed(0)} ms` +
              ` (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)}; target <= 1000 ms)`);
  console.log(`scene of resnet_style.pt2 (${scene.nodes} nodes, ${scene.edges} edges: labels + layout) in WASM: ` +
              `${scene.ms.toFixed(1)} ms`);
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
