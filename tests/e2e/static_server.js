// A small static server of the browser tests and tools/wire_bench.js: serves a
// folder under a sub-path (as a course site would host dist/) and, when given
// encodings, answers with the precompressed sibling NAME.br / NAME.gz that
// tools/precompress.js wrote, as nginx's gzip_static / Caddy's precompressed
// do: Content-Encoding, the original's Content-Type, Vary: Accept-Encoding.
// It logs every response with the bytes of body it sent. GET and HEAD only;
// not a general web server.
"use strict";
const fs = require("fs");
const http = require("http");
const path = require("path");

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".webmanifest": "application/manifest+json",
  ".svg": "image/svg+xml",
  ".wasm": "application/wasm",
  ".otf": "font/otf",
  ".ttf": "font/ttf",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
  ".pt2": "application/zip",
};
const SIBLING = { br: ".br", gzip: ".gz" };

// The codings an Accept-Encoding header allows ("gzip, deflate, br;q=0.5" ->
// gzip, deflate, br; a q of 0 refuses one; "*" allows any).
function accepted(header) {
  const ok = new Set();
  for (const part of String(header || "").split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    if (name && !(q && Number(q.slice(2)) === 0)) ok.add(name);
  }
  return ok;
}

// serve(dir, {prefix: "/course/pt2lab/", encodings: ["br", "gzip"]}) resolves to
// {url, port, log, close}: url is the folder's URL, log the responses in order
// ({path, status, encoding, bytes}), close() stops it and drops open connections
// (a browser's keep-alive socket would otherwise still reach it).
// encodings: the server's preference order; [] serves plain files only.
function serve(dir, { prefix = "/", encodings = [] } = {}) {
  const root = path.resolve(dir);
  const log = [];
  const server = http.createServer((req, res) => {
    const entry = { path: req.url, status: 200, encoding: null, bytes: 0 };
    log.push(entry);
    const send = (status, headers, body) => {
      entry.status = status;
      res.writeHead(status, headers);
      if (req.method === "HEAD" || !body) return res.end();
      entry.bytes = body.length;
      res.end(body);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, { Allow: "GET, HEAD" });
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, "http://x").pathname);
    } catch (e) {
      return send(400, {});
    }
    if (pathname + "/" === prefix) return send(301, { Location: prefix });
    if (!pathname.startsWith(prefix)) return send(404, {});
    const rel = pathname.slice(prefix.length);
    let file = path.join(root, rel);
    if (file !== root && !file.startsWith(root + path.sep)) return send(404, {});
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) {
      if (!pathname.endsWith("/")) return send(301, { Location: pathname + "/" });
      file = path.join(file, "index.html");
    }
    if (!fs.existsSync(file) || !fs.statSync(file).isFile()) return send(404, {});
    const headers = {
      "Content-Type": TYPES[path.extname(file)] || "application/octet-stream",
      "Cache-Control": "no-cache",
    };
    let body = null;
    const offered = encodings.filter((e) => fs.existsSync(file + SIBLING[e]));
    if (offered.length) {
      // The answer depends on the request's Accept-Encoding, served encoded or not.
      headers.Vary = "Accept-Encoding";
      const ok = accepted(req.headers["accept-encoding"]);
      const pick = offered.find((e) => ok.has(e) || ok.has("*"));
      if (pick) {
        body = fs.readFileSync(file + SIBLING[pick]);
        headers["Content-Encoding"] = pick;
        entry.encoding = pick;
      }
    }
    body = body || fs.readFileSync(file);
    headers["Content-Length"] = body.length;
    send(200, headers, body);
  });
  return new Promise((resolve, reject) => {
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = server.address().port;
      resolve({
        url: `http://127.0.0.1:${port}${prefix}`,
        port,
        log,
        close: () => {
          server.close();
          server.closeAllConnections();
        },
      });
    });
  });
}

module.exports = { serve, accepted };
