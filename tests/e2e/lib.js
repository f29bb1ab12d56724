// Helpers of pt2lab's browser tests and page benchmark: a static server on
// 127.0.0.1 for dist/, Debian's Chromium headless through playwright-core
// (WebGL2 through SwiftShader), and waiting on the page's state hook.
"use strict";
const { spawn, spawnSync } = require("child_process");
const net = require("net");
const path = require("path");
const { chromium } = require("playwright-core");

const ROOT = path.resolve(__dirname, "..", "..");

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

// python3 -m http.server on a free port, serving `dir`; resolves once it answers.
async function serve(dir) {
  const port = await freePort();
  const proc = spawn("python3", ["-m", "http.server", String(port), "--bind", "127.0.0.1", "-d", dir], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (d) => { stderr += d; });
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(url);
      if (res.ok) return { url, port, close: () => proc.kill() };
    } catch (e) { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  proc.kill();
  throw new Error("the static server did not start: " + stderr);
}

// playwright gives every launch a fresh temporary profile (TOOLCHAIN.md's --user-data-dir).
async function launch(extraArgs = []) {
  const browser = await chromium.launch({
    executablePath: process.env.PT2LAB_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      "--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
      ...extraArgs,
    ],
  });
  return browser;
}

// The page's state hook (null until the app runs).
// The page's state hook. A new version's scene is laid out a frame or two after
// the change (App::may_derive): until then the hook says views_current false and
// lists the last version's boxes, so this waits (up to 3 s) for the current ones.
async function state(page) {
  const read = () => page.evaluate(() => (window.pt2lab && window.pt2lab.state ? window.pt2lab.state() : null));
  let s = await read();
  for (let t0 = Date.now(); s && s.views_current === false && Date.now() - t0 < 3000;) {
    await page.waitForTimeout(16);
    s = await read();
  }
  return s;
}

// Polls the state hook until pred(state) holds; returns that state.
async function waitState(page, pred, what, timeoutMs = 20000) {
  const t0 = Date.now();
  let last = null;
  while (Date.now() - t0 < timeoutMs) {
    last = await state(page);
    if (last && pred(last)) return last;
    const failed = await page.evaluate(() => window.pt2lab && window.pt2lab.failed);
    if (failed) throw new Error("the page failed: " + failed);
    await page.waitForTimeout(50);
  }
  throw new Error(`timed out waiting for ${what}; last state: ` + JSON.stringify(last && {
    file: last.file, view: last.view, error: last.error, selected: last.selected, log: last.log }));
}

// A point of the canvas that locate(state) names ({x, y}, CSS pixels), dragged
// into the canvas first as a user would: a graph opens at a legible zoom, so a
// big one is larger than the canvas. Returns the point and the state it is in.
async function pointInView(page, locate, what) {
  for (let tries = 0; tries < 12; ++tries) {
    const s = await state(page);
    const p = locate(s);
    if (!p) throw new Error(`${what} is not in the scene`);
    const c = s.canvas;
    if (p.x > c.x + 20 && p.x < c.x + c.w - 20 && p.y > c.y + 20 && p.y < c.y + c.h - 20)
      return { point: p, state: s };
    const dx = Math.max(-c.w / 2 + 10, Math.min(c.w / 2 - 10, c.x + c.w / 2 - p.x));
    const dy = Math.max(-c.h / 2 + 10, Math.min(c.h / 2 - 10, c.y + c.h / 2 - p.y));
    const from = { x: c.x + c.w / 2 - dx / 2, y: c.y + c.h / 2 - dy / 2 };
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(from.x + dx, from.y + dy, { steps: 8 });
    await page.mouse.up();
    await page.waitForTimeout(60);
  }
  throw new Error(`could not drag ${what} into view`);
}

// The state's entry for the box named `name` (pred picks among same-named
// ones), dragged into view first (pointInView).
async function boxInView(page, name, pred = (n) => n.id) {
  const r = await pointInView(page, (s) => s.nodes.find((x) => x.name === name && pred(x)), name);
  return r.point;
}

// A fresh context's page at `url`, once its first frame is drawn, recording every
// request (page.requests), console error and page error (page.errors) and CSP
// violation (window.__csp). opts: viewport, init (a script run before the page's own).
async function watchedPage(ctx, url, opts = {}) {
  const context = await ctx.browser.newContext({ viewport: opts.viewport || { width: 1440, height: 900 } });
  const page = await context.newPage();
  ctx.pages.push(page);
  page.requests = [];
  page.errors = [];
  context.on("request", (r) => page.requests.push(r.url()));
  page.on("console", (m) => { if (m.type() === "error") page.errors.push(m.text()); });
  page.on("pageerror", (e) => page.errors.push(e.message));
  await context.addInitScript(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) => {
      window.__csp.push(e.violatedDirective + " " + e.blockedURI);
    });
  });
  if (opts.init) await context.addInitScript(opts.init);
  await page.goto(url);
  await waitState(page, (s) => s.ready && s.frames > 1 && s.widgets["panel:graph"], "the first frame");
  return page;
}

// Clicks a widget the app exposed in the state hook (waits for it to be drawn).
// The widget's box once it has held still for a frame: a menu or popup places its
// items on the frame after it first measures them, and a slow machine may show
// that first frame's box (a click there landed on the menu's next item).
async function steadyWidget(page, name) {
  let r = (await waitState(page, (st) => st.widgets[name], `widget ${name}`)).widgets[name];
  for (let i = 0; i < 40; i++) {
    await page.waitForTimeout(50);
    const s = await waitState(page, (st) => st.widgets[name], `widget ${name}`);
    const b = s.widgets[name];
    if (r.x === b.x && r.y === b.y && r.w === b.w && r.h === b.h) return b; // idle, or held still
    r = b;
  }
  return r;
}

async function clickWidget(page, name) {
  const r = await steadyWidget(page, name);
  await page.mouse.move(r.x + r.w / 2, r.y + r.h / 2);
  await page.waitForTimeout(30);
  await page.mouse.click(r.x + r.w / 2, r.y + r.h / 2);
}

// Once the service worker controls the page: stops `server` (its close()) and
// reloads, so everything the page asks for must come from the worker's cache.
// Resolves to the state of the page's first frame after the reload.
async function reloadOffline(page, server) {
  await page.waitForFunction(() => window.pt2lab.serviceWorker === "ready", null, { timeout: 20000 });
  await page.waitForFunction(() => !!navigator.serviceWorker.controller, null, { timeout: 10000 });
  server.close();
  await page.waitForTimeout(300);
  await page.reload();
  return waitState(page, (st) => st.ready && st.frames > 1, "the page after a reload offline", 30000);
}

// Real torch (the sid root of scripts/torch_env.sh), or null; else the reason this
// machine cannot run it, and a test that needs it says so and passes, unless
// PT2LAB_REQUIRE_TORCH=1.
function torchMissing() {
  const can = spawnSync("bash", ["scripts/torch_env.sh", "can"], { cwd: ROOT, encoding: "utf8" });
  if (can.status === 0) return null;
  const why = `real PyTorch cannot run here (scripts/torch_env.sh can: ${(can.stdout + can.stderr).trim()})`;
  if (process.env.PT2LAB_REQUIRE_TORCH === "1") throw new Error(why + "; PT2LAB_REQUIRE_TORCH=1");
  return why;
}

module.exports = { torchMissing, ROOT, serve, launch, state, waitState, boxInView, pointInView, watchedPage, clickWidget, steadyWidget,
  reloadOffline };
