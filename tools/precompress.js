// Writes NAME.br and NAME.gz beside every file of a built dist/ that compresses
// usefully, for static hosts that serve precompressed siblings (docs/EMBEDDING.md,
// "On a static host"). It only adds files: the page never asks for the siblings.
// Node's own zlib, so no dependency beyond node:
//  - brotli at quality 11, window 24 (the format's largest a browser accepts),
//  - gzip at level 9; node's gzip header carries no file name and mtime 0,
// so the same input gives the same bytes on every run. Idempotent: siblings
// left by an earlier run are replaced, and each sibling takes its original's
// mtime (hosts that derive Last-Modified / ETag from the sibling stay stable).
//   node tools/precompress.js DIST [--cache DIR]
// --cache DIR keeps the compressed bytes of each file by the SHA-256 of its
// content, so the next build compresses only what changed (the ~1200 font page
// files of fonts/more/, 50 MB, take minutes at quality 11); DIR keeps the
// entries of the last run only. The output is the same with or without it.
"use strict";
const crypto = require("crypto");
const fs = require("fs");
const path = require("path");
const zlib = require("zlib");

const SIBLINGS = [".br", ".gz"];

// A file is kept plain when brotli does not save at least this fraction of it.
// Measured on dist/ (2026-12-05): every file clears it. Brotli leaves the
// scripts, the lessons and the JSON at 12-40% of their size (those under 2 KB
// at 32-60%), app.wasm at 26%, the lesson .pt2 archives at 41-56% (torch
// writes them as stored zips: JSON and raw float32 weights, nothing compressed
// yet), mono.ttf at 63% and the CFF subset ui.otf at 81% (gzip: 89%). The rule
// is for files already compressed (a zip with deflated entries, an image) that
// a teacher may add.
const MIN_SAVING = 0.1;

function brotli(bytes) {
  return zlib.brotliCompressSync(bytes, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
      [zlib.constants.BROTLI_PARAM_LGWIN]: zlib.constants.BROTLI_MAX_WINDOW_BITS,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
    },
  });
}

function gzip(bytes) {
  return zlib.gzipSync(bytes, { level: 9 });
}

// Every file under root (relative paths, sorted), siblings excluded.
function originals(root) {
  const out = [];
  (function walk(rel) {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const r = rel ? rel + "/" + e.name : e.name;
      if (e.isDirectory()) walk(r);
      else if (!isSibling(root, r)) out.push(r);
    }
  })("");
  return out;
}

// NAME.br / NAME.gz beside an existing NAME is ours; a lone .gz is a file of the site.
function isSibling(root, rel) {
  const ext = path.extname(rel);
  return SIBLINGS.includes(ext) && fs.existsSync(path.join(root, rel.slice(0, -ext.length)));
}

// The brotli and gzip bytes of `bytes`, from the cache folder when it has them
// (gzip made only when asked: a file left plain needs none).
function compressor(cache) {
  const used = new Set();
  let hits = 0;
  function of(bytes) {
    if (!cache) return { br: brotli(bytes), gz: () => gzip(bytes) };
    const key = crypto.createHash("sha256").update(bytes).digest("hex");
    const entry = (ext) => path.join(cache, key + ext);
    used.add(key + ".br").add(key + ".gz");
    let b;
    if (fs.existsSync(entry(".br"))) {
      b = fs.readFileSync(entry(".br"));
      hits++;
    } else {
      b = brotli(bytes);
      fs.writeFileSync(entry(".br"), b);
    }
    return {
      br: b,
      gz: () => {
        if (fs.existsSync(entry(".gz"))) return fs.readFileSync(entry(".gz"));
        const g = gzip(bytes);
        fs.writeFileSync(entry(".gz"), g);
        return g;
      },
    };
  }
  // Forgets what this run did not use.
  function prune() {
    if (!cache) return "";
    for (const name of fs.readdirSync(cache)) if (!used.has(name)) fs.rmSync(path.join(cache, name));
    return `; ${hits} from the cache`;
  }
  return { of, prune };
}

function main() {
  const args = process.argv.slice(2);
  const at = args.indexOf("--cache");
  const cache = at >= 0 ? args.splice(at, 2)[1] : null;
  const root = args[0];
  if (!root || !fs.statSync(root).isDirectory() || args.length !== 1 || (at >= 0 && !cache))
    throw new Error("usage: node tools/precompress.js DIST [--cache DIR]");
  if (cache) fs.mkdirSync(cache, { recursive: true });
  const z = compressor(cache);
  let raw = 0, br = 0, gz = 0, n = 0;
  const plain = [];
  for (const rel of originals(root)) {
    const file = path.join(root, rel);
    const bytes = fs.readFileSync(file);
    const c = z.of(bytes);
    const b = c.br;
    for (const ext of SIBLINGS) fs.rmSync(file + ext, { force: true });
    if (b.length > (1 - MIN_SAVING) * bytes.length) {
      plain.push(`${rel} (brotli ${b.length} of ${bytes.length} B)`);
      continue;
    }
    const g = c.gz();
    const { atime, mtime } = fs.statSync(file);
    fs.writeFileSync(file + ".br", b);
    fs.writeFileSync(file + ".gz", g);
    fs.utimesSync(file + ".br", atime, mtime);
    fs.utimesSync(file + ".gz", atime, mtime);
    raw += bytes.length;
    br += b.length;
    gz += g.length;
    n++;
  }
  const hits = z.prune();
  console.log(`[precompress] ${n} files: ${raw} B -> ${br} B .br, ${gz} B .gz${hits}` +
              (plain.length ? `; left plain (saves < ${MIN_SAVING * 100}%): ${plain.join(", ")}` : ""));
}

main();
