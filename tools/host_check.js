// Checks docs/EMBEDDING.md's "On a static host" on real servers (a manual check,
// not a test suite: it needs Debian's archive the first time). Debian bookworm's
// nginx (+ libnginx-mod-http-brotli-static), Apache httpd and Caddy are unpacked
// into build/hosts/ (apt-get download + dpkg -x: nothing is installed) and run on
// 127.0.0.1 with the doc's own snippets (its ```nginx, ```apache and ```caddy
// blocks, /var/www/html and example.org replaced) over a copy of dist/ at
// /course/pt2lab/; python3 -m http.server too. For each server it asks for a few
// files with Accept-Encoding "br, gzip", "gzip" and "identity" and prints what came
// back (Content-Encoding, Content-Type, Vary, bytes; the decoded body must be the
// file), then opens the page in headless Chromium and waits for its first frame.
//   node tools/host_check.js [dist]
"use strict";
const { execFileSync, spawn } = require("child_process");
const fs = require("fs");
const http = require("http");
const path = require("path");
const zlib = require("zlib");
const { ROOT, launch, waitState } = require("../tests/e2e/lib");

const HOSTS = path.join(ROOT, "build", "hosts");
const SYS = path.join(HOSTS, "root"); // the unpacked packages
const WWW = path.join(HOSTS, "www");
const PREFIX = "/course/pt2lab/";
const PACKAGES = ["nginx", "nginx-common", "libnginx-mod-http-brotli-static", "apache2-bin", "libapr1", "libaprutil1", "caddy"];
const FILES = ["", "app.wasm", "app.js", "style.css", "fonts/ui.otf", "assets/graphs/index.json",
  "manifest.webmanifest", "assets/lessons/index.json", "assets/graphs/conv_relu.pt2"];
const ASKS = ["br, gzip", "gzip", "identity"];

function unpackServers() {
  if (fs.existsSync(path.join(SYS, "usr/bin/caddy"))) return;
  const debs = path.join(HOSTS, "debs");
  fs.mkdirSync(debs, { recursive: true });
  console.log(`[hosts] apt-get download ${PACKAGES.join(" ")}`);
  execFileSync("apt-get", ["download", ...PACKAGES], { cwd: debs, stdio: ["ignore", "ignore", "inherit"] });
  for (const d of fs.readdirSync(debs).filter((n) => n.endsWith(".deb")))
    execFileSync("dpkg", ["-x", path.join(debs, d), SYS]);
}

// The doc's first ```lang block of the section "On a static host".
function snippet(doc, lang) {
  const section = doc.slice(doc.indexOf("## On a static host"));
  const m = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(section);
  if (!m) throw new Error(`docs/EMBEDDING.md has no \`\`\`${lang} block under "On a static host"`);
  return m[1].replace(/\/var\/www\/html/g, WWW);
}

// The servers: each writes its config from the doc's snippet and returns the command to run.
function servers(doc) {
  const lib = { LD_LIBRARY_PATH: path.join(SYS, "usr/lib/x86_64-linux-gnu") };
  return [
    { name: "nginx 1.22 (Debian), gzip_static + brotli_static", start(port, dir) {
      const tmp = (n) => `${n}_temp_path ${dir}/${n};`;
      fs.writeFileSync(path.join(dir, "nginx.conf"), `
load_module ${SYS}/usr/lib/nginx/modules/ngx_http_brotli_static_module.so;
daemon off; master_process off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events {}
http {
  include ${SYS}/etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log off;
  ${["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map(tmp).join(" ")}
  server {
    listen 127.0.0.1:${port};
    root ${WWW};
${snippet(doc, "nginx")}
  }
}
`);
      return [path.join(SYS, "usr/sbin/nginx"), ["-e", `${dir}/error.log`, "-c", `${dir}/nginx.conf`], {}];
    } },
    { name: "Apache httpd 2.4 (Debian), .htaccess", start(port, dir) {
      fs.writeFileSync(path.join(WWW, PREFIX, ".htaccess"), snippet(doc, "apache"));
      const mods = ["mpm_event", "authz_core", "mime", "dir", "rewrite", "headers", "filter", "deflate", "env"];
      const m = path.join(SYS, "usr/lib/apache2/modules");
      // Debian's defaults that matter here: mime.types, mime.conf's .gz type, deflate.conf's types.
      fs.writeFileSync(path.join(dir, "httpd.conf"), `
ServerRoot ${dir}
ServerName 127.0.0.1
Listen 127.0.0.1:${port}
PidFile ${dir}/httpd.pid
ErrorLog ${dir}/error.log
${mods.map((n) => `LoadModule ${n}_module ${m}/mod_${n}.so`).join("\n")}
User nobody
Group nogroup
TypesConfig /etc/mime.types
AddType application/x-gzip .gz .tgz
AddOutputFilterByType DEFLATE text/html text/plain text/xml text/css text/javascript
AddOutputFilterByType DEFLATE application/x-javascript application/javascript application/ecmascript
AddOutputFilterByType DEFLATE application/rss+xml application/wasm application/xml
DirectoryIndex index.html
DocumentRoot ${WWW}
<Directory />
  AllowOverride None
  Require all denied
</Directory>
<Directory ${WWW}>
  Options FollowSymLinks
  AllowOverride FileInfo
  Require all granted
</Directory>
`);
      return [path.join(SYS, "usr/sbin/apache2"), ["-f", `${dir}/httpd.conf`, "-DFOREGROUND"], lib];
    } },
    { name: "Caddy 2.6 (Debian), file_server precompressed", start(port, dir) {
      const site = snippet(doc, "caddy").replace("example.org", `http://127.0.0.1:${port}`);
      fs.writeFileSync(path.join(dir, "Caddyfile"), `{\n  admin off\n  auto_https off\n}\n${site}`);
      return [path.join(SYS, "usr/bin/caddy"), ["run", "--config", `${dir}/Caddyfile`, "--adapter", "caddyfile"],
              { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir }];
    } },
    { name: "python3 -m http.server", start(port) {
      return ["python3", ["-m", "http.server", String(port), "--bind", "127.0.0.1", "-d", WWW], {}];
    } },
  ];
}

function get(port, rel, ae) {
  return new Promise((resolve, reject) => {
    http.get({ host: "127.0.0.1", port, path: PREFIX + rel, headers: { "Accept-Encoding": ae } }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on("error", reject);
  });
}

function decode(res) {
  const enc = res.headers["content-encoding"];
  if (enc === "br") return zlib.brotliDecompressSync(res.body);
  if (enc === "gzip") return zlib.gunzipSync(res.body);
  if (enc) throw new Error("unexpected Content-Encoding " + enc);
  return res.body;
}

async function waitUp(port, proc, dir) {
  for (let i = 0; i < 100; i++) {
    if (proc.exitCode !== null) break;
    try { await get(port, "", "identity"); return; } catch (e) { /* not yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  const log = path.join(dir, "error.log");
  throw new Error("the server did not start" + (fs.existsSync(log) ? ": " + fs.readFileSync(log, "utf8") : ""));
}

async function check(server, port, dist, browser) {
  let ok = true;
  for (const rel of FILES) {
    const file = fs.readFileSync(path.join(dist, rel || "index.html"));
    const row = [];
    let type;
    for (const ae of ASKS) {
      const res = await get(port, rel, ae);
      // The decoded body is the file, and an encoded answer has the plain answer's type.
      const t = res.headers["content-type"] || "-";
      const same = res.status === 200 && decode(res).equals(file) && (type === undefined || t === type);
      ok = ok && same;
      row.push(`${res.headers["content-encoding"] || "plain"} ${res.body.length} B` +
               (same ? "" : ` WRONG (${res.status}, ${t})`));
      if (type === undefined) {
        type = t;
        row.unshift(`${t} `.padEnd(34) + `Vary: ${res.headers.vary || "-"}`.padEnd(24));
      }
    }
    console.log(`  ${(rel || "(index)").padEnd(28)} ${row.join("  ")}`);
  }
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`http://127.0.0.1:${port}${PREFIX}`);
    const s = await waitState(page, (st) => st.ready && st.frames > 1 && st.file === "conv_bn_relu_eval.pt2",
                              "the first frame", 60000);
    const wasm = await page.evaluate(() => {
      const e = performance.getEntriesByType("resource").find((r) => r.name.endsWith("/app.wasm"));
      return e.encodedBodySize;
    });
    await page.waitForFunction(() => window.pt2lab.serviceWorker === "ready", null, { timeout: 20000 });
    console.log(`  page: first frame with ${s.file} (${s.nodes.length} boxes), app.wasm ${wasm} B on the wire, ` +
                `service worker ready, console errors: ${errors.length ? errors.join(" | ") : "none"}`);
    ok = ok && errors.length === 0;
  } catch (e) {
    console.log(`  page: FAILED ${e.message}`);
    ok = false;
  } finally {
    await context.close();
  }
  return ok;
}

async function main() {
  const dist = path.resolve(process.argv[2] || path.join(ROOT, "dist"));
  const doc = fs.readFileSync(path.join(ROOT, "docs/EMBEDDING.md"), "utf8");
  unpackServers();
  fs.rmSync(WWW, { recursive: true, force: true });
  fs.cpSync(dist, path.join(WWW, PREFIX), { recursive: true });
  execFileSync("chmod", ["-R", "a+rX", HOSTS]); // Apache's workers run as nobody
  const browser = await launch();
  let failed = 0;
  try {
    let port = 18431;
    for (const server of servers(doc)) {
      const dir = path.join(HOSTS, "run", server.name.split(" ")[0]);
      fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true });
      const [cmd, args, env] = server.start(++port, dir);
      const proc = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
      proc.stderr.on("data", (d) => fs.appendFileSync(path.join(dir, "error.log"), d));
      console.log(`${server.name} on ${PREFIX} (Accept-Encoding: ${ASKS.join(" / ")}):`);
      try {
        await waitUp(port, proc, dir);
        if (!(await check(server, port, dist, browser))) failed++;
      } catch (e) {
        console.log(`  FAILED: ${e.message}`);
        failed++;
      } finally {
        proc.kill();
      }
    }
  } finally {
    await browser.close();
  }
  console.log(failed ? `${failed} server(s) failed` : "every server served the page");
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
