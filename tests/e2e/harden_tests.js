// Browser tests of issue 13 (run by tests/e2e/run.js): big graphs grouped by
// module (collapse, expand, search, breadcrumb, minimap), a page that asks for
// nothing but its own files under a strict CSP, works offline once loaded,
// embeds one file or step with chosen panels hidden, and has keys for its actions.
"use strict";
const assert = require("assert/strict");
const { execFileSync } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { ROOT, serve, state, waitState, boxInView, pointInView, watchedPage, clickWidget, reloadOffline } = require("./lib");

const list = [];
const test = (name, run) => list.push({ name, run });

const violations = (page) => page.evaluate(() => window.__csp);

async function shot(ctx, page, file) {
  await page.mouse.move(2, (page.viewportSize() || { height: 900 }).height - 2);
  await page.waitForTimeout(150);
  await page.screenshot({ path: path.join(ctx.shots, file) });
}

// A synthetic 1k-node export (tools/make_big_graph.py), handed over like a dropped file.
async function openBig(page, nodes) {
  const file = path.join(os.tmpdir(), `pt2lab-big-${nodes}.json`);
  if (!fs.existsSync(file))
    execFileSync("/usr/bin/python3", [path.join(ROOT, "tools/make_big_graph.py"), file, String(nodes)]);
  const bytes = Array.from(fs.readFileSync(file));
  const name = path.basename(file);
  await page.evaluate(({ name, bytes }) => window.pt2lab.openBytes(name, new Uint8Array(bytes)), { name, bytes });
  return waitState(page, (s) => s.file === name && s.frames > 2, "the big graph", 60000);
}

test("a big graph opens collapsed to its modules; click, search and breadcrumb expand and collapse", async (ctx) => {
  const page = await watchedPage(ctx, ctx.server.url);
  let s = await openBig(page, 1000);
  assert.equal(s.modules.expand_all, false, "1000 nodes open collapsed");
  const groups = s.nodes.filter((n) => n.group);
  assert.ok(groups.length >= 3, "top-level modules are boxes");
  assert.ok(s.nodes.length < 30, "far fewer boxes than nodes");
  await shot(ctx, page, "big-collapsed.png");
  // A click on a module box expands it: its children appear inside a frame.
  assert.ok(groups.find((n) => n.name === "stages.0"));
  const stage = await boxInView(page, "stages.0", (n) => n.group);
  await page.mouse.click(stage.x, stage.y);
  s = await waitState(page, (st) => st.modules.frames.length === 1, "stages.0 expanded");
  assert.equal(s.modules.frames[0].path, "stages.0");
  assert.ok(s.nodes.some((n) => n.group && n.name === "stages.0.3"), "its blocks are boxes");
  await shot(ctx, page, "big-expanded-stage.png");
  // A click on the frame's header collapses it again.
  const header = await pointInView(page, (st) => {
    const w = st.widgets["frame:stages.0"], f = st.modules.frames[0];
    return w ? { x: w.x + w.w / 2, y: w.y + w.h / 2 } : f && { x: f.x + 20, y: f.y - 30 };
  }, "the frame's header");
  await page.mouse.click(header.point.x, header.point.y);
  s = await waitState(page, (st) => st.modules.frames.length === 0, "stages.0 collapsed");
  // Search for a node inside a collapsed module: Enter expands its modules and selects it.
  await clickWidget(page, "search");
  await page.keyboard.type("conv2d_100");
  await page.keyboard.press("Enter");
  s = await waitState(page, (st) => st.selected && st.selected.name === "conv2d_100", "search selects conv2d_100");
  const hit = s.nodes.find((n) => n.name === "conv2d_100" && n.id);
  assert.ok(hit, "the match is shown as its own box");
  assert.ok(s.modules.frames.length >= 2, "its modules are expanded");
  s = await waitState(page, (st) => st.modules.frames.length &&
                      st.widgets["crumb:" + st.modules.frames[0].path], "the breadcrumb shows where it sits");
  await page.keyboard.press("Escape");
  await shot(ctx, page, "big-search.png");
  // The breadcrumb's first module collapses everything under it.
  const crumb = Object.keys(s.widgets).filter((k) => k.startsWith("crumb:stages.")).sort()[0];
  await clickWidget(page, crumb);
  s = await waitState(page, (st) => !st.nodes.some((n) => n.name === "conv2d_100" && n.id), "collapsed by the breadcrumb");
  // Keys: E expands every module, C collapses them.
  await page.mouse.move(s.canvas.x + 5, s.canvas.y + 5);
  await page.keyboard.press("e");
  // Every node shown: a box, or a weight drawn inside the box that reads it.
  const shown = (st) => st.nodes.reduce((k, n) => k + 1 + (n.inside ? n.inside.length : 0),
                                        (st.unused_weights || []).length);
  s = await waitState(page, (st) => st.modules.expand_all && shown(st) >= 1000, "E expands all");
  // (the minimap follows the new layout from the frame after the camera refits)
  s = await waitState(page, (st) => st.widgets.minimap, "a minimap for the expanded big graph");
  await shot(ctx, page, "big-all-expanded.png");
  // The minimap moves the camera: zoomed in, a click near its bottom shows the graph's end.
  await page.keyboard.press("0");
  s = await waitState(page, (st) => Math.abs(st.canvas.zoom - 1) < 1e-6, "100%");
  const m = s.widgets.minimap;
  await page.mouse.click(m.x + m.w / 2, m.y + m.h - 4);
  s = await waitState(page, (st) => st.canvas.center[1] > 0.9 * st.canvas.layout[1], "the camera at the graph's end");
  await shot(ctx, page, "big-minimap-jump.png");
  await page.keyboard.press("c");
  s = await waitState(page, (st) => !st.modules.expand_all && st.nodes.length < 30, "C collapses all");
  assert.deepEqual(page.errors, []);
});

test("nothing but the site's own files; strict CSP with no violations", async (ctx) => {
  const page = await watchedPage(ctx, ctx.server.url + "?file=conv_relu.pt2");
  const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', "content");
  assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'/);
  assert.doesNotMatch(csp, /'unsafe-eval'|'unsafe-inline'/);
  // Act a little: another graph, a run, the help overlay.
  await clickWidget(page, "lesson:resnet_style.pt2");
  await waitState(page, (s) => s.file === "resnet_style.pt2", "resnet_style opened");
  await page.keyboard.press("r");
  await page.keyboard.type("?");
  await waitState(page, (s) => s.panels.includes("keyboard shortcuts"), "the ? overlay");
  await page.waitForFunction(() => window.pt2lab.serviceWorker === "ready", null, { timeout: 20000 });
  const origin = new URL(ctx.server.url).origin;
  const foreign = page.requests.filter((u) => new URL(u).origin !== origin);
  assert.deepEqual(foreign, [], "every request goes to the site itself");
  assert.ok(page.requests.length >= 8, "requests were recorded");
  assert.deepEqual(await violations(page), [], "no securitypolicyviolation events");
  assert.deepEqual(page.errors, []);
});

test("offline: once loaded, a reload with the server gone still works; a web manifest", async (ctx) => {
  const srv = await serve(ctx.dist);
  try {
    const page = await watchedPage(ctx, srv.url + "?file=conv_relu.pt2");
    const manifest = await page.evaluate(async () => {
      const href = document.querySelector('link[rel="manifest"]').href;
      return (await fetch(href)).json();
    });
    assert.equal(manifest.short_name, "pt2lab");
    assert.equal(manifest.start_url, "./");
    const s = await reloadOffline(page, srv);
    assert.equal(s.file, "conv_relu.pt2");
    // A lesson graph not opened before comes from the cache too.
    await clickWidget(page, "lesson:style_modules.pt2");
    await waitState(page, (st) => st.file === "style_modules.pt2", "a graph opened offline");
    await shot(ctx, page, "offline-reload.png");
  } finally {
    srv.close(); // again if the test failed before reloadOffline closed it
  }
});

test("embedding: ?file= and ?hide= in an iframe of a course page; ?step= reaches the app", async (ctx) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pt2lab-embed-"));
  fs.symlinkSync(ctx.dist, path.join(dir, "lab"));
  fs.writeFileSync(path.join(dir, "course.html"),
    '<!doctype html><meta charset="utf-8"><title>Week 1</title><h1>Week 1: the observer</h1>' +
    '<iframe id="lab" src="lab/?file=conv_relu.pt2&hide=left,inspector,dock&step=m00-4/3" ' +
    'width="900" height="520"></iframe>\n');
  const srv = await serve(dir);
  try {
    const context = await ctx.browser.newContext({ viewport: { width: 1000, height: 700 } });
    const page = await context.newPage();
    ctx.pages.push(page);
    await page.goto(srv.url + "course.html");
    const frame = page.frames().find((f) => f.url().includes("/lab/")) ||
      (await (await page.waitForSelector("#lab")).contentFrame());
    await frame.waitForFunction(() => { const s = window.pt2lab && window.pt2lab.state(); return s && s.ready && s.frames > 1; },
                                null, { timeout: 30000 });
    // ?step= opens that lesson step (its graph is conv_relu.pt2 too).
    await frame.waitForFunction(() => {
      const c = window.pt2lab.state().lessons.current;
      return c && c.id === "m00-4" && c.step === 3;
    }, null, { timeout: 30000 });
    const s = await frame.evaluate(() => window.pt2lab.state());
    assert.equal(s.file, "conv_relu.pt2");
    assert.deepEqual(s.panels, ["top bar", "graph"]);
    assert.equal(s.options.step, "m00-4/3");
    assert.ok(!s.widgets["panel:file"] && !s.widgets["panel:inspector"]);
    assert.ok(s.widgets["panel:graph"].w > 800, "the graph takes the frame's width");
    await page.screenshot({ path: path.join(ctx.shots, "embedded-iframe.png") });
  } finally {
    srv.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("keyboard: ? lists the keys; views, zoom, fit and modules have keys", async (ctx) => {
  const page = await watchedPage(ctx, ctx.server.url + "?file=resnet_style.pt2");
  let s = await state(page);
  await page.mouse.move(s.canvas.x + 5, s.canvas.y + 5);
  await page.keyboard.type("?");
  s = await waitState(page, (st) => st.panels.includes("keyboard shortcuts"), "the ? overlay");
  await shot(ctx, page, "keys-overlay.png");
  await page.keyboard.press("Escape");
  await waitState(page, (st) => !st.panels.includes("keyboard shortcuts"), "Esc closes it");
  await page.keyboard.press("c");
  s = await waitState(page, (st) => !st.modules.expand_all && st.nodes.some((n) => n.group), "C collapses modules");
  await page.keyboard.press("e");
  s = await waitState(page, (st) => st.modules.expand_all, "E expands modules");
  // The camera refits to the new layout on a later frame (the page draws on events):
  // nudge the mouse until three more frames have been drawn, then take the zoom.
  const after = s.frames;
  for (let k = 0; s.frames < after + 3 && k < 50; k++) {
    await page.mouse.move(s.canvas.x + 5 + (k % 2), s.canvas.y + 5);
    await page.waitForTimeout(40);
    s = await state(page);
  }
  const z = s.canvas.zoom;
  await page.keyboard.press("Equal");
  s = await waitState(page, (st) => st.canvas.zoom > z, "+ zooms in");
  await page.keyboard.press("f");
  await waitState(page, (st) => Math.abs(st.canvas.zoom - z) < 1e-6, "F fits again");
  await page.keyboard.press("2");
  await waitState(page, (st) => st.view === "ep.module()", "2 shows ep.module()");
  // The transformations have keys too: D lowers the program to the inference IR.
  await page.keyboard.press("d");
  await waitState(page, (st) => st.level === "Inference IR", "D decomposes");
  assert.deepEqual(page.errors, []);
});

test("at 768 px the panels stack and stay usable", async (ctx) => {
  const page = await watchedPage(ctx, ctx.server.url + "?file=conv_relu.pt2", { viewport: { width: 768, height: 1000 } });
  const s = await state(page);
  const g = s.widgets["panel:graph"], f = s.widgets["panel:file"], i = s.widgets["panel:inspector"], d = s.widgets["panel:dock"];
  assert.ok(g.w >= 760, "the graph takes the whole width");
  assert.ok(f.y >= g.y + g.h && i.y >= g.y + g.h, "file facts and inspector under the graph");
  assert.ok(d.y >= f.y + f.h, "the dock under them");
  assert.ok(f.w > 300 && i.w > 300, "each at least 300 px wide");
  const relu = await boxInView(page, "relu");
  await page.mouse.click(relu.x, relu.y);
  await waitState(page, (st) => st.selected && st.selected.name === "relu", "a node selected at 768 px");
  await shot(ctx, page, "narrow-768.png");
});

module.exports = { list };
