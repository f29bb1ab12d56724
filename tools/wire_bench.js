// Page weight as served (figures, not a test): serves dist/ under a sub-path
// with tests/e2e/static_server.js three times -- offering the precompressed
// siblings br then gzip, gzip only, and plain files only -- opens the page in
// headless Chromium with a cold cache each time and prints, file by file, the
// bytes of body the server sent for what the page fetched before its first
// interactive frame (window.pt2lab.firstFrameMs), and the total with the
// response headers as the browser counted them (transferSize).
// The server's log is checked against the browser's encodedBodySize.
//   node tools/wire_bench.js [dist]
"use strict";
const path = require("path");
const { ROOT, launch, waitState } = require("../tests/e2e/lib");
const { serve } = require("../tests/e2e/static_server");

const PREFIX = "/course/pt2lab/";
const MODES = [["br", ["br", "gzip"]], ["gzip", ["gzip"]], ["plain", []]];

// One cold load: {file: body bytes the server sent} for what came before the first frame.
async function load(browser, dist, encodings) {
  const srv = await serve(dist, { prefix: PREFIX, encodings });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await context.newPage();
    // No service worker: it registers after the first frame and would add its own fetches.
    await page.goto(srv.url + "?nosw=1");
    await waitState(page, (s) => s.ready && s.frames >= 1, "the first frame", 60000);
    const seen = await page.evaluate(() => {
      const first = window.pt2lab.firstFrameMs;
      return performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource"))
        .filter((e) => e.responseEnd <= first)
        .map((e) => ({ path: new URL(e.name).pathname, encoded: e.encodedBodySize, transfer: e.transferSize }));
    });
    const bytes = {};
    let transfer = 0;
    for (const e of seen) {
      const sent = srv.log.find((l) => l.path.split("?")[0] === e.path && l.status === 200);
      if (!sent) throw new Error(`${e.path}: the server did not log it`);
      if (sent.bytes !== e.encoded)
        throw new Error(`${e.path}: the server sent ${sent.bytes} B, the browser counted ${e.encoded} B`);
      const rel = e.path.slice(PREFIX.length) || "index.html";
      bytes[rel] = sent.bytes;
      transfer += e.transfer;
    }
    return { bytes, transfer };
  } finally {
    await context.close();
    srv.close();
  }
}

async function main() {
  const dist = path.resolve(process.argv[2] || path.join(ROOT, "dist"));
  const browser = await launch();
  const runs = {};
  try {
    for (const [name, encodings] of MODES) runs[name] = await load(browser, dist, encodings);
  } finally {
    await browser.close();
  }
  const names = MODES.map(([n]) => n);
  const files = Object.keys(runs.plain.bytes).sort((a, b) => runs.plain.bytes[b] - runs.plain.bytes[a]);
  const col = (v) => String(v).padStart(10);
  console.log(`bytes on the wire before the first interactive frame (body bytes the server sent, ${PREFIX}):`);
  console.log(`  ${"file".padEnd(38)}${names.map(col).join("")}`);
  for (const f of files)
    console.log(`  ${f.padEnd(38)}${names.map((n) => col(runs[n].bytes[f] === undefined ? "-" : runs[n].bytes[f])).join("")}`);
  const total = (n) => Object.values(runs[n].bytes).reduce((a, b) => a + b, 0);
  console.log(`  ${"total".padEnd(38)}${names.map((n) => col(total(n))).join("")}`);
  console.log(`  ${"total with response headers".padEnd(38)}${names.map((n) => col(runs[n].transfer)).join("")}`);
  console.log(names.map((n) => `${n} ${(total(n) / 1e6).toFixed(3)} MB`).join(", ") + ` (${files.length} files)`);
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
