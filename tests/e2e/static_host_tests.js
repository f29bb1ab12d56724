// Browser tests of issue 24, "Any static host" (run by tests/e2e/run.js): dist/
// under a sub-path of a server that answers with the precompressed siblings
// (tools/precompress.js) as nginx / Caddy do, and of one that serves plain
// files only. The page draws its first lesson graph with no console error, the
// wasm and the scripts cross the wire compressed where the server offers it,
// and once loaded the page works offline from its service worker, which keeps
// the plain files only.
"use strict";
const assert = require("assert/strict");
const { execFileSync } = require("child_process");
const crypto = require("crypto");
const fs = require("fs");
const os = require("os");
const path = require("path");
const zlib = require("zlib");
const { ROOT, waitState, watchedPage, clickWidget, reloadOffline } = require("./lib");
const { serve } = require("./static_server");

const list = [];
const test = (name, run) => list.push({ name, run });

const PREFIX = "/course/pt2lab/";

// Every text the loader's progress label showed.
function recordLabels() {
  window.__labels = [];
  new MutationObserver(() => {
    const el = document.getElementById("loader-text");
    const t = el && el.textContent;
    if (t && t !== window.__labels[window.__labels.length - 1]) window.__labels.push(t);
  }).observe(document, { subtree: true, childList: true, characterData: true });
}

// The files build_web.sh gave the service worker (FILES in dist/sw.js).
function workerFiles(dist) {
  const m = /var FILES = (\[[^\]]*\]);/.exec(fs.readFileSync(path.join(dist, "sw.js"), "utf8"));
  assert.ok(m, "sw.js lists its files");
  return JSON.parse(m[1]);
}

test("precompress: siblings decode to their files; deterministic, idempotent; incompressible files stay plain", async (ctx) => {
  // dist/ as build_web.sh left it: a .br and a .gz beside every file, each decoding to it.
  const walk = (d) => fs.readdirSync(d, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  const plain = walk(ctx.dist).filter((f) => !/\.(br|gz)$/.test(f));
  for (const f of plain) {
    const bytes = fs.readFileSync(f);
    const rel = path.relative(ctx.dist, f);
    assert.ok(zlib.brotliDecompressSync(fs.readFileSync(f + ".br")).equals(bytes), `${rel}.br`);
    const gz = fs.readFileSync(f + ".gz");
    assert.ok(zlib.gunzipSync(gz).equals(bytes), `${rel}.gz`);
    assert.equal(gz.readUInt32LE(4), 0, `${rel}.gz: mtime 0`);
    assert.equal(gz[3] & 0x08, 0, `${rel}.gz: no file name`);
  }
  // A small folder: random bytes and a gzip file of the site's own (not a sibling) stay plain; a rerun
  // changes nothing.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pt2lab-precompress-"));
  try {
    fs.mkdirSync(path.join(dir, "sub"));
    fs.writeFileSync(path.join(dir, "a.js"), "console.log('pt2lab');\n".repeat(200));
    fs.writeFileSync(path.join(dir, "sub", "noise.bin"), crypto.randomBytes(4096));
    fs.writeFileSync(path.join(dir, "data.gz"), zlib.gzipSync("{}".repeat(500)));
    const run = () => execFileSync("node", [path.join(ROOT, "tools/precompress.js"), dir], { encoding: "utf8" });
    const listing = () => walk(dir).sort().map((f) => [path.relative(dir, f), fs.readFileSync(f).toString("base64")]);
    assert.match(run(), /left plain .*data\.gz .*sub\/noise\.bin/);
    const first = listing();
    assert.deepEqual(first.map(([f]) => f), ["a.js", "a.js.br", "a.js.gz", "data.gz", "sub/noise.bin"]);
    run();
    assert.deepEqual(listing(), first, "a second run writes the same bytes and no more files");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

for (const [kind, encodings] of [["br and gzip", ["br", "gzip"]], ["gzip only", ["gzip"]], ["plain files", []]]) {
  test(`a static host under ${PREFIX} (${kind}): first lesson graph, bytes on the wire, offline`, async (ctx) => {
    const srv = await serve(ctx.dist, { prefix: PREFIX, encodings });
    try {
      const page = await watchedPage(ctx, srv.url, { init: recordLabels });
      const s = await waitState(page, (st) => st.file === "conv_bn_relu_eval.pt2" && st.nodes.some((n) => n.id),
                                "the first lesson graph drawn");
      assert.ok(s.nodes.some((n) => n.name === "conv2d"), "its conv2d box is in the scene");
      assert.deepEqual(page.errors, [], "no console errors");
      const foreign = page.requests.filter((u) => !u.startsWith(srv.url));
      assert.deepEqual(foreign, [], "every request stays under the sub-path");

      // What the server sent for the page's own downloads (the first answer for each path).
      const sent = (rel) => srv.log.find((e) => e.path === PREFIX + rel);
      const want = encodings.length ? encodings[0] : null; // Chromium asks for br and gzip alike
      for (const rel of ["app.wasm", "app.js", "loader.js", "bridge.js", "fonts/ui.otf", "assets/graphs/conv_bn_relu_eval.pt2"]) {
        const e = sent(rel);
        assert.ok(e && e.status === 200, `${rel} was fetched`);
        assert.equal(e.encoding, want, `${rel} went out as ${want || "plain"}`);
        const file = path.join(ctx.dist, rel) + (want ? { br: ".br", gzip: ".gz" }[want] : "");
        assert.equal(e.bytes, fs.statSync(file).size, `${rel}: the bytes on the wire are ${path.basename(file)}'s`);
        if (want) assert.ok(e.bytes < fs.statSync(path.join(ctx.dist, rel)).size, `${rel} is smaller on the wire`);
      }
      // The first-frame budget (issue 20): what came before the first interactive frame,
      // as bytes of body on the wire, is within 1.0 MB when served as brotli.
      if (want === "br") {
        const before = await page.evaluate(() => {
          const first = window.pt2lab.firstFrameMs;
          return performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource"))
            .filter((e) => e.responseEnd <= first).reduce((n, e) => n + e.encodedBodySize, 0);
        });
        assert.ok(before > 100e3 && before <= 1.0e6, `${before} bytes before the first frame as brotli (budget 1,000,000)`);
      }
      // The browser saw them as such: encoded bytes, and what it decoded is the file itself.
      const wasm = await page.evaluate(() => {
        const e = performance.getEntriesByType("resource").find((r) => r.name.endsWith("/app.wasm"));
        return { encoded: e.encodedBodySize, decoded: e.decodedBodySize };
      });
      assert.equal(wasm.decoded, fs.statSync(path.join(ctx.dist, "app.wasm")).size);
      assert.equal(wasm.encoded, sent("app.wasm").bytes);
      // The progress bar counts decoded bytes against a total that is never below them
      // (a compressed answer's Content-Length is not the size of what is read).
      const labels = await page.evaluate(() => window.__labels);
      assert.ok(labels.some((t) => t.startsWith("Loading")), "the progress label showed");
      for (const t of labels) {
        const m = /^Loading ([\d.]+) MB of ([\d.]+) MB$/.exec(t);
        if (m) assert.ok(Number(m[1]) <= Number(m[2]), `progress "${t}"`);
      }

      // The worker keeps the plain files of this build, never a sibling.
      const files = workerFiles(ctx.dist);
      assert.ok(files.includes("app.wasm") && files.includes("app.js"), "the worker lists the app");
      assert.deepEqual(files.filter((f) => /\.(br|gz)$/.test(f)), [], "no .br / .gz in the worker's list");
      await page.waitForFunction(() => window.pt2lab.serviceWorker === "ready", null, { timeout: 20000 });
      const cached = await page.evaluate(async () => {
        const name = (await caches.keys()).find((k) => k.startsWith("pt2lab-"));
        return (await (await caches.open(name)).keys()).map((r) => r.url);
      });
      assert.equal(cached.length, files.length, "the cache holds every listed file");
      assert.deepEqual(cached.filter((u) => /\.(br|gz)$/.test(u)), [], "no .br / .gz in the cache");

      // Offline: the server gone, a reload draws from the cache, another graph opens from it.
      const after = await reloadOffline(page, srv);
      assert.equal(after.file, "conv_bn_relu_eval.pt2");
      await clickWidget(page, "lesson:conv_relu.pt2");
      await waitState(page, (st) => st.file === "conv_relu.pt2" && st.nodes.some((n) => n.id), "a graph opened offline");
      assert.deepEqual(page.errors, [], "no console errors offline");
    } finally {
      srv.close();
    }
  });
}

module.exports = { list };
