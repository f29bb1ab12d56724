// The browser tests of the page (run by tests/e2e/run.js). Each test opens a
// fresh browser context, acts through real input (mouse, keys, drop, file
// picker, clipboard) and checks the state hook against the pt2lab CLI.
"use strict";
const assert = require("assert/strict");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { spawnSync } = require("child_process");
const { ROOT, serve, state, waitState, boxInView, watchedPage, reloadOffline, steadyWidget } = require("./lib");
const cli = require("./cli");

const GRAPHS = path.join(ROOT, "assets/graphs");
const FIRST = "conv_bn_relu_eval.pt2";
const asset = (name) => path.join(GRAPHS, name);

// --- helpers ---------------------------------------------------------------------

// A fresh context on the page. Its browser speaks zh-TW unless opts.locale says
// otherwise: the page starts in the browser's language, and the course's is zh-TW.
async function openPage(ctx, opts = {}) {
  const context = await ctx.browser.newContext({
    locale: opts.locale || "zh-TW",
    viewport: opts.viewport || { width: 1440, height: 900 },
    deviceScaleFactor: opts.dpr || 1,
    permissions: opts.permissions || [],
  });
  if (opts.init) await context.addInitScript(opts.init);
  const page = await context.newPage();
  ctx.pages.push(page);
  page.errors = [];
  page.on("console", (m) => { if (m.type() === "error") page.errors.push(m.text()); });
  page.on("pageerror", (e) => page.errors.push(e.message));
  await page.goto((opts.base || ctx.server.url) + (opts.hash || ""));
  if (opts.expectFailure) return page;
  await waitState(page, (s) => s.ready && s.frames > 1 && s.widgets["panel:graph"], "the first frame");
  return page;
}

const names = (s) => s.nodes.filter((n) => n.id).map((n) => n.name);
const ops = (s) => s.nodes.filter((n) => n.id).map((n) => n.op);

// The page shows the graph the CLI prints: a box per node in graph order, except
// the weights one's own file draws inside the node that reads them ("inside").
function assertGraph(s, expected, what) {
  const inside = s.nodes.flatMap((n) => n.inside || []).concat(s.unused_weights || []);
  const boxed = expected.filter((n) => !inside.includes(n.name));
  assert.deepEqual(names(s), boxed.map((n) => n.name), `${what}: node names in graph order`);
  assert.deepEqual(ops(s), boxed.map((n) => n.op), `${what}: node ops`);
  assert.equal(boxed.length + inside.length, expected.length, `${what}: every node shown once`);
  for (const name of inside)
    assert.ok(expected.some((n) => n.name === name && ["placeholder", "get_attr"].includes(n.op)),
              `${what}: ${name}, drawn inside its reader (or unused), is a weight of the graph`);
}

function node(s, name) {
  const n = s.nodes.find((x) => x.name === name && x.id);
  assert.ok(n, `node ${name} is in the scene`);
  return n;
}

async function clickAt(page, x, y) {
  await page.mouse.move(x, y);
  await page.waitForTimeout(30);
  await page.mouse.click(x, y);
}

// Clicks a widget the app exposed in the state hook (waits for it to be drawn).
async function clickWidget(page, name) {
  const r = await steadyWidget(page, name);
  await clickAt(page, r.x + r.w / 2, r.y + r.h / 2);
}

// Types `text` into the input field the app exposed as `name`, replacing what it held.
async function typeInWidget(page, name, text) {
  await clickWidget(page, name);
  await page.keyboard.press("Control+a");
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
}

async function shot(ctx, page, file, panel) {
  const opts = { path: path.join(ctx.shots, file) };
  await page.mouse.move(2, (page.viewportSize() || { height: 900 }).height - 2); // no tooltip in the way
  if (panel) {
    const r = (await state(page)).widgets["panel:" + panel];
    opts.clip = { x: r.x, y: r.y, width: r.w, height: r.h };
  }
  await page.waitForTimeout(150);
  await page.screenshot(opts);
}

async function dropFile(page, file, name) {
  const bytes = Array.from(fs.readFileSync(file));
  await page.evaluate(({ bytes, name }) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(bytes)], name));
    const canvas = document.getElementById("canvas");
    for (const type of ["dragenter", "dragover", "drop"])
      canvas.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, { bytes, name: name || path.basename(file) });
}

// The font page of a character ("4e", "1f4", "200"), and the font page files a page fetched.
const pageOf = (c) => (c.codePointAt(0) >> 8).toString(16).padStart(2, "0");
const fetchedFiles = (page) => [...new Set(page.requests
  .map((u) => (/\/fonts\/more\/([0-9a-f]{2,4}(-[0-9]+)?)\.otf$/.exec(u) || [])[1]).filter(Boolean))];

function noErrors(page) {
  assert.deepEqual(page.errors, [], "no console errors");
}

// --- the tests ---------------------------------------------------------------------

const list = [];
const test = (name, run) => list.push({ name, run });

test("loads the first lesson graph with no console errors", async (ctx) => {
  const page = await openPage(ctx);
  const s = await state(page);
  assert.equal(s.file, FIRST);
  assert.equal(s.view, "ExportedProgram");
  assert.equal(s.level, "Training IR");
  assertGraph(s, cli.nodes(asset(FIRST)), "ep.graph");
  assert.equal(s.code.text, cli.code(asset(FIRST)), "ep.graph_module.code");
  assert.ok(s.nodes.every((n) => n.visible), "the fitted graph is entirely on screen");
  assert.ok(await page.locator("#loader").isHidden(), "the loading bar is gone");
  assert.ok(s.lesson_files.includes("conv_relu.pt2"));
  // An idle page draws nothing (no input, no animation).
  await page.waitForTimeout(300);
  const before = (await state(page)).frames;
  await page.waitForTimeout(1000);
  assert.ok((await state(page)).frames - before <= 1, "no frames while idle");
  // While idle (no frames drawn), the page ran the kernel warm-up (exec/warm_up.h).
  const warm = (await waitState(page, (st) => st.startup_ms.warm_up >= 0, "the kernel warm-up"))
    .startup_ms.warm_up;
  assert.ok(warm < 20000, `the kernel warm-up ran (${warm} ms)`);
  noErrors(page);
  await shot(ctx, page, "page.png");
  await shot(ctx, page, "panel-file.png", "file");
  await shot(ctx, page, "panel-graph.png", "graph");
});

test("clicking a node selects it; hovering highlights it and its neighbours", async (ctx) => {
  const page = await openPage(ctx);
  let s = await state(page);
  node(s, "conv2d");
  const conv = await boxInView(page, "conv2d");
  await page.mouse.move(conv.x, conv.y);
  s = await waitState(page, (st) => st.hovered && st.hovered.name === "conv2d", "hover on conv2d");
  await page.mouse.click(conv.x, conv.y);
  s = await waitState(page, (st) => st.selected && st.selected.name === "conv2d", "conv2d selected");
  assert.equal(s.selected.id, conv.id);
  await shot(ctx, page, "panel-inspector.png", "inspector");
  // A click on empty canvas clears the selection.
  const c = s.canvas;
  await clickAt(page, c.x + 8, c.y + c.h - 8);
  await waitState(page, (st) => st.selected === null, "selection cleared");
  // The code line of relu highlights relu.
  s = await state(page);
  const line = s.code.text.split("\n").findIndex((l) => l.startsWith("    relu = "));
  assert.ok(line > 0);
  const first = s.widgets["code:line 1"];
  await page.mouse.move(first.x + 200, first.y + first.h * (line + 0.5));
  await waitState(page, (st) => st.hovered && st.hovered.name === "relu", "code line -> node");
  noErrors(page);
});

test("keys: views, zoom, fit, next / previous node, help, escape", async (ctx) => {
  const file = asset(FIRST);
  const page = await openPage(ctx);
  await page.keyboard.press("2");
  let s = await waitState(page, (st) => st.view === "ep.module()", "key 2");
  assertGraph(s, cli.nodes(file, true), "ep.module().graph");
  assert.equal(s.code.text, cli.code(file, true), "ep.module().code");
  await page.keyboard.press("1");
  s = await waitState(page, (st) => st.view === "ExportedProgram", "key 1");
  const fitted = s.canvas.zoom;
  await page.keyboard.press("Equal");
  s = await waitState(page, (st) => st.canvas.zoom > fitted * 1.2, "zoom in");
  await page.keyboard.press("Minus");
  await page.keyboard.press("Minus");
  s = await waitState(page, (st) => st.canvas.zoom < fitted * 0.9, "zoom out");
  await page.keyboard.press("f");
  s = await waitState(page, (st) => Math.abs(st.canvas.zoom - fitted) < 1e-4, "fit");
  // The wheel zooms around the mouse; a drag pans.
  await page.mouse.move(s.canvas.x + s.canvas.w / 2, s.canvas.y + s.canvas.h / 2);
  await page.mouse.wheel(0, -300);
  s = await waitState(page, (st) => st.canvas.zoom > fitted * 1.1, "wheel zoom");
  await page.keyboard.press("f");
  s = await waitState(page, (st) => Math.abs(st.canvas.zoom - fitted) < 1e-4, "fit again");
  const before = node(s, "relu");
  const at = { x: s.canvas.x + 10, y: s.canvas.y + s.canvas.h - 10 };
  await page.mouse.move(at.x, at.y);
  await page.mouse.down();
  await page.mouse.move(at.x + 60, at.y - 40, { steps: 6 });
  await page.mouse.up();
  s = await waitState(page, (st) => Math.abs(node(st, "relu").x - before.x - 60) < 2, "drag pans");
  assert.ok(Math.abs(node(s, "relu").y - before.y + 40) < 2);
  // N / P walk the graph order; Escape clears.
  const order = names(s);
  await page.keyboard.press("n");
  s = await waitState(page, (st) => st.selected && st.selected.name === order[0], "N");
  await page.keyboard.press("n");
  s = await waitState(page, (st) => st.selected && st.selected.name === order[1], "N again");
  await page.keyboard.press("p");
  s = await waitState(page, (st) => st.selected && st.selected.name === order[0], "P");
  await page.keyboard.press("Escape");
  await waitState(page, (st) => st.selected === null, "Escape");
  await page.keyboard.press("Shift+Slash");
  await waitState(page, (st) => st.panels.includes("keyboard shortcuts"), "? opens the shortcuts");
  await shot(ctx, page, "help.png");
  await page.keyboard.press("Escape");
  await waitState(page, (st) => !st.panels.includes("keyboard shortcuts"), "Escape closes them");
  noErrors(page);
});

test("search by name or op selects the match", async (ctx) => {
  const page = await openPage(ctx);
  await clickWidget(page, "search");
  await page.keyboard.type("batch_norm");
  await page.keyboard.press("Enter");
  const s = await waitState(page, (st) => st.selected && st.selected.name === "batch_norm", "search + Enter");
  assert.deepEqual(s.search.matches, ["batch_norm"]);
  noErrors(page);
});

test("the ExportedProgram / ep.module() switch", async (ctx) => {
  const file = asset(FIRST);
  const page = await openPage(ctx);
  await clickWidget(page, "view:ep.module()");
  let s = await waitState(page, (st) => st.view === "ep.module()", "ep.module() button");
  assertGraph(s, cli.nodes(file, true), "ep.module()");
  assert.ok(names(s).includes("_guards_fn"));
  await clickWidget(page, "view:ExportedProgram");
  s = await waitState(page, (st) => st.view === "ExportedProgram", "ExportedProgram button");
  assertGraph(s, cli.nodes(file), "ep.graph");
  await clickWidget(page, "tab:Signature & weights");
  await waitState(page, (st) => st.tab === "Signature & weights", "signature tab");
  await shot(ctx, page, "panel-signature.png", "dock");
  noErrors(page);
});

test("a dropped file, a lesson graph from the list, and the URL hash on reload", async (ctx) => {
  const page = await openPage(ctx);
  await dropFile(page, asset("conv_relu.pt2"));
  let s = await waitState(page, (st) => st.file === "conv_relu.pt2", "the dropped file opens");
  assertGraph(s, cli.nodes(asset("conv_relu.pt2")), "dropped conv_relu");
  assert.equal(s.code.text, cli.code(asset("conv_relu.pt2")));
  await clickWidget(page, "lesson:style_modules.pt2");
  s = await waitState(page, (st) => st.file === "style_modules.pt2", "a lesson graph opens");
  assertGraph(s, cli.nodes(asset("style_modules.pt2")), "style_modules");
  assert.match(page.url(), /#file=style_modules\.pt2$/);
  await clickWidget(page, "tab:Log"); // remembered in localStorage
  await waitState(page, (st) => st.tab === "Log", "log tab");
  await page.reload();
  s = await waitState(page, (st) => st.ready && st.file === "style_modules.pt2", "the hash reopens it");
  assert.equal(s.tab, "Log", "the tab survives a reload");
  noErrors(page);
});

test("the file picker opens a real .pt2", async (ctx) => {
  const page = await openPage(ctx);
  const [chooser] = await Promise.all([page.waitForEvent("filechooser"), clickWidget(page, "open")]);
  await chooser.setFiles(asset("resnet_style.pt2"));
  const s = await waitState(page, (st) => st.file === "resnet_style.pt2", "picked file opens");
  assertGraph(s, cli.nodes(asset("resnet_style.pt2")), "resnet_style");
  await shot(ctx, page, "resnet_style.png");
  noErrors(page);
});

test("every good corpus file and a symbolic_trace graph open, and run or say why not", async (ctx) => {
  const page = await openPage(ctx);
  const good = fs.readdirSync(path.join(ROOT, "tests/corpus/good")).filter((f) => /\.(pt2|json)$/.test(f)).sort();
  assert.ok(good.length >= 5);
  for (const name of good) {
    const file = path.join(ROOT, "tests/corpus/good", name);
    await dropFile(page, file);
    let s = await waitState(page, (st) => st.file === name, `${name} opens`);
    assert.equal(s.error, "", name);
    assertGraph(s, cli.nodes(file), name);
    const version = s.version;
    await page.keyboard.press("r");
    // Either a run of this version, or an error saying why (an op pt2lab has no kernel for).
    s = await waitState(page, (st) => (st.run && st.run.version > version) || st.error !== "", `${name} runs`);
    if (s.error) {
      assert.match(s.error, new RegExp("^" + name.replace(/\./g, "\\.")), `${name}: the error names the file`);
      await clickWidget(page, "dismiss error");
      await waitState(page, (st) => st.error === "", "dismissed");
    }
    if (name === "unknown_op.pt2") {
      assert.ok(s.error, "unknown_op.pt2 cannot run");
      const fancy = s.nodes.filter((n) => n.runnable === false).map((n) => n.name);
      assert.deepEqual(fancy, ["relu"], "the node without a kernel is marked");
      await shot(ctx, page, "unknown-op.png");
    }
  }
  // A symbolic_trace graph (assets/fx): a module only, no ExportedProgram.
  const fx = path.join(ROOT, "assets/fx/style_modules.json");
  await dropFile(page, fx);
  const s = await waitState(page, (st) => st.file === "style_modules.json", "the fx graph opens");
  assert.equal(s.has_program, false);
  assert.equal(s.view, "ep.module()");
  assertGraph(s, cli.nodes(fx), "style_modules.json");
  await page.keyboard.press("1"); // no ExportedProgram to switch to
  await page.waitForTimeout(200);
  assert.equal((await state(page)).view, "ep.module()");
  await shot(ctx, page, "symbolic-trace.png");
  noErrors(page);
});

test("bad files show what is wrong and keep the previous graph", async (ctx) => {
  const page = await openPage(ctx);
  const before = await state(page);
  for (const bad of ["truncated_half.pt2", "invalid_json.pt2", "missing_required_argument.pt2"]) {
    const file = path.join(ROOT, "tests/corpus/bad", bad);
    await dropFile(page, file);
    const s = await waitState(page, (st) => st.error.startsWith(bad), `the error for ${bad}`);
    assert.equal(s.error, cli.errorOf(file), `${bad}: the core's message, as the CLI prints it`);
    assert.equal(s.file, FIRST, "the previous file stays open");
    assert.equal(s.version, before.version, "nothing changed");
    assert.deepEqual(names(s), names(before));
    if (bad === "missing_required_argument.pt2") await shot(ctx, page, "error.png");
    await clickWidget(page, "dismiss error");
    await waitState(page, (st) => st.error === "", "dismissed");
  }
  noErrors(page);
});

test("files with Chinese names: the name shows in the page and in errors", async (ctx) => {
  const page = await openPage(ctx);
  const name = "量化模型_conv_relu.pt2"; // characters the lesson texts use, so the fonts have them
  await dropFile(page, asset("conv_relu.pt2"), name);
  let s = await waitState(page, (st) => st.file === name, "a Chinese file name");
  assertGraph(s, cli.nodes(asset("conv_relu.pt2")), name);
  const bad = "節點計算圖_truncated_half.pt2";
  await dropFile(page, path.join(ROOT, "tests/corpus/bad/truncated_half.pt2"), bad);
  s = await waitState(page, (st) => st.error.startsWith(bad + ":"), "the error names the file");
  assert.equal(s.file, name, "the previous file stays open");
  await shot(ctx, page, "chinese-names.png");
  noErrors(page);
});

test("characters beyond the font subset: their font page is fetched when met, drawn, kept offline", async (ctx) => {
  const chars = fs.readFileSync(path.join(ctx.dist, "fonts/chars.txt"), "utf8");
  const index = fs.readFileSync(path.join(ctx.dist, "fonts/more/index.txt"), "utf8").trim().split(/\s+/);
  const name = "王老師的貓.pt2";
  const outside = [...name].filter((c) => !chars.includes(c));
  assert.ok(outside.length >= 2, `the subset has most of ${name}: pick other characters (${outside.join("")})`);
  const pages = [...new Set(outside.map(pageOf))].sort();
  for (const p of pages) assert.ok(index.includes(p), `page ${p} is in fonts/more/index.txt`);
  const fetched = (page) => [...new Set(fetchedFiles(page).map((f) => f.split("-")[0]))].sort();
  const srv = await serve(ctx.dist);
  try {
    const page = await watchedPage(ctx, srv.url + "?file=conv_relu.pt2");
    let s = await state(page);
    assert.equal(s.glyphs.missing, "", "the page's own words are all in the subset");
    assert.deepEqual(fetched(page), [], "no font page at start");
    // The service worker keeps what it fetched once it controls the page.
    await page.waitForFunction(() => !!navigator.serviceWorker.controller, null, { timeout: 20000 });
    await dropFile(page, asset("conv_relu.pt2"), name);
    s = await waitState(page, (st) => st.file === name && st.glyphs.missing === "" && !st.glyphs.pending.length,
                        "the name's characters in the atlas");
    assert.deepEqual(fetched(page), pages, "exactly the pages of the characters the subset lacks");
    assert.deepEqual(s.glyphs.pages.map((p) => p.toString(16).padStart(2, "0")).sort(), pages);
    await shot(ctx, page, "font-pages.png");
    // A character no font of the pages has (CJK Extension G, past every font of
    // tools/subset_fonts.py): named as missing, nothing fetched for it, nothing breaks.
    assert.ok(!index.some((f) => f.startsWith("300")), "no page of CJK Extension G");
    const none = "cat_\u{30000}.pt2";
    await dropFile(page, asset("conv_relu.pt2"), none);
    s = await waitState(page, (st) => st.file === none, "a character no font has in a name");
    assert.equal(s.glyphs.missing, "\u{30000}");
    assert.deepEqual(fetched(page), pages, "no page asked for it");
    // Offline, the pages fetched before come from the service worker's cache.
    page.requests.length = 0;
    await reloadOffline(page, srv);
    await dropFile(page, asset("conv_relu.pt2"), name);
    s = await waitState(page, (st) => st.file === name && st.glyphs.missing === "" && !st.glyphs.pending.length,
                        "offline: the name's characters in the atlas");
    assert.deepEqual(s.glyphs.pages.map((p) => p.toString(16).padStart(2, "0")).sort(), pages);
    assert.ok(!s.log.some((l) => l.startsWith("font page")), s.log.join("\n"));
    noErrors(page);
  } finally {
    srv.close();
  }
});

// Types `text` as keys of a keyboard that has its characters (one key each, a
// keydown with the character and a keyup): Chromium sends the keypress that
// Emscripten's GLFW reads, an emoji's too. (Playwright's keyboard.type sends a
// character off the US layout as inserted text, which a canvas never receives.)
async function typeKeys(page, text) {
  const cdp = await page.context().newCDPSession(page);
  for (const ch of text) {
    await cdp.send("Input.dispatchKeyEvent", { type: "keyDown", key: ch, text: ch, unmodifiedText: ch });
    await cdp.send("Input.dispatchKeyEvent", { type: "keyUp", key: ch });
  }
  await cdp.detach();
}

test("any script, an emoji, CJK Extension B, a symbol: a file's name and typed text draw after their pages come", async (ctx) => {
  const base = "貓🐱 مرحبا नमस्ते สวัสดี 𠀀 ✓";
  const name = base + ".pt2";
  const chars = fs.readFileSync(path.join(ctx.dist, "fonts/chars.txt"), "utf8");
  const index = fs.readFileSync(path.join(ctx.dist, "fonts/more/index.txt"), "utf8").trim().split(/\s+/);
  const outside = [...new Set(base)].filter((c) => c !== " " && !chars.includes(c));
  const pages = [...new Set(outside.map(pageOf))].sort();
  // 🐱 on page 1f4, 𠀀 on page 200: above ff, past the Basic Multilingual Plane.
  assert.ok(pages.includes("1f4") && pages.includes("200"), pages.join(" "));
  const files = index.filter((f) => pages.includes(f.split("-")[0])).sort();
  for (const p of pages) assert.ok(files.includes(p), `page ${p} is in fonts/more/index.txt`);
  assert.ok(files.some((f) => f.includes("-")), `a page of two fonts among ${files.join(" ")}`);
  // Each page file is one font; 𠀀's page has Noto Sans CJK's Extension B characters and HanaMinB's.
  assert.ok(files.includes("200-1"), "page 200 is two files");
  const srv = await serve(ctx.dist);
  try {
    const page = await watchedPage(ctx, srv.url + "?file=conv_relu.pt2");
    let s = await state(page);
    assert.equal(s.glyphs.missing, "");
    assert.deepEqual(fetchedFiles(page), [], "no font page before the first frame");
    // The file, through the page's file picker.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pt2lab-scripts-"));
    const file = path.join(dir, name);
    fs.copyFileSync(asset("conv_relu.pt2"), file);
    const [chooser] = await Promise.all([page.waitForEvent("filechooser"), clickWidget(page, "open")]);
    await chooser.setFiles(file);
    s = await waitState(page, (st) => st.file === name && st.glyphs.pending.length === 0 && st.glyphs.pages.length > 0,
                        "the name's pages settled");
    assert.equal(s.glyphs.missing, "", "every character of the name draws");
    assert.deepEqual(fetchedFiles(page).sort(), files, "every file of the name's pages, no other");
    assert.deepEqual(s.glyphs.pages.map((p) => p.toString(16).padStart(2, "0")).sort(), pages);
    assertGraph(s, cli.nodes(asset("conv_relu.pt2")), name);
    // The same typed into the graph's search box, key by key.
    await clickWidget(page, "search");
    await typeKeys(page, base);
    s = await waitState(page, (st) => st.search.query === base, "the typed query, one character per key");
    assert.equal(s.glyphs.missing, "", "every typed character draws");
    assert.deepEqual(s.glyphs.pending, []);
    assert.deepEqual(fetchedFiles(page).sort(), files, "the typed characters' pages are there already");
    await page.mouse.move(2, 898);
    await page.waitForTimeout(200);
    const bar = s.widgets["search"];
    await page.screenshot({ path: path.join(ctx.shots, "any-script.png"),
                            clip: { x: 0, y: 0, width: 1440, height: Math.ceil(bar.y + bar.h + 12) } });
    await page.screenshot({ path: path.join(ctx.shots, "any-script-full.png") });
    // Characters typed beyond those: their pages are fetched when typed.
    const more = " שלום ★ 😀 ⌘";
    await typeKeys(page, more);
    s = await waitState(page, (st) => st.search.query === base + more && !st.glyphs.pending.length,
                        "the longer query's pages settled");
    assert.equal(s.glyphs.missing, "");
    const added = [...new Set(more)].filter((c) => c !== " " && !chars.includes(c)).map(pageOf);
    for (const p of added) assert.ok(fetchedFiles(page).some((f) => f.split("-")[0] === p), `page ${p} fetched`);
    fs.rmSync(dir, { recursive: true, force: true });
    noErrors(page);
  } finally {
    srv.close();
  }
});

test("subset_fonts.py refuses the page's own text when its UI font lacks a character", async () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "pt2lab-fonts-"));
  try {
    // U+30000 (CJK Extension G): no font has it; 🐱: only a fallback font has it.
    const r = spawnSync("/usr/bin/python3", [path.join(ROOT, "tools/subset_fonts.py"), "--out", out, "--no-pages",
                                             "--extra-text", "\u{30000}🐱"], { encoding: "utf8" });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /U\+30000 .*no font has it/);
    assert.match(r.stderr, /U\+1F431 .*only Symbola_hint\.ttf has it/);
    assert.ok(!fs.existsSync(path.join(out, "ui.otf")), "nothing written");
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test("Copy puts the code on the system clipboard", async (ctx) => {
  const page = await openPage(ctx, { permissions: ["clipboard-read", "clipboard-write"] });
  await clickWidget(page, "copy code");
  await waitState(page, (st) => st.copied.bytes > 0, "copied");
  await page.waitForFunction(() => window.pt2lab.lastCopy && window.pt2lab.lastCopy.ok);
  const text = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(text, cli.code(asset(FIRST)));
  noErrors(page);
});

test("Save .pt2 downloads what pt2lab save writes, as loaded and decomposed", async (ctx) => {
  const file = asset(FIRST);
  const page = await openPage(ctx);
  const download = async () => {
    const [d] = await Promise.all([page.waitForEvent("download"), clickWidget(page, "save")]);
    return { name: d.suggestedFilename(), bytes: fs.readFileSync(await d.path()) };
  };
  let d = await download();
  assert.equal(d.name, FIRST);
  assert.ok(d.bytes.equals(cli.saved(file, FIRST)), "the same bytes as pt2lab save");
  await clickWidget(page, "decompose");
  await clickWidget(page, "decompose:inference");
  await waitState(page, (st) => st.level === "Inference IR" && st.run && st.run.current,
                  "decomposed and run");
  d = await download();
  assert.equal(d.name, "conv_bn_relu_eval.inference.pt2");
  assert.ok(d.bytes.equals(cli.saved(file, d.name, ["--decompose", "inference"])),
            "the decomposed program: the same bytes as pt2lab save --decompose inference");
  const last = await page.evaluate(() => window.pt2lab.lastDownload);
  assert.deepEqual(last, { name: d.name, bytes: d.bytes.length });
  noErrors(page);
});

test("decompose to the inference IR, with the diff, parity, undo and redo", async (ctx) => {
  const file = asset(FIRST);
  const page = await openPage(ctx);
  await clickWidget(page, "decompose");
  await clickWidget(page, "decompose:inference");
  let s = await waitState(page, (st) => st.level === "Inference IR" && st.run && st.run.current,
                          "decomposed and run");
  assert.equal(s.code.text, cli.decomposedCode(file, "inference"));
  assert.ok(s.diff.added.includes("_native_batch_norm_legit_no_training"));
  assert.deepEqual(s.diff.removed, ["batch_norm"]);
  const ghost = s.nodes.find((n) => n.name === "batch_norm");
  assert.ok(ghost && ghost.mark === "removed" && ghost.id === 0, "batch_norm stays as a ghost");
  assert.equal(s.run.parity.bit_identical, true, "the CLI reports bit-identical");
  assert.deepEqual(s.undo, ["decompose to Inference IR"], "the history after decompose");
  node(s, "_native_batch_norm_legit_no_training");
  const legit = await boxInView(page, "_native_batch_norm_legit_no_training");
  await clickAt(page, legit.x, legit.y);
  await waitState(page, (st) => st.selected && st.selected.name === legit.name, "select the new node");
  await clickWidget(page, "tab:Run & parity");
  await waitState(page, (st) => st.tab === "Run & parity", "run tab");
  await shot(ctx, page, "decompose.png"); // also the README's picture (docs/page.png)
  await page.keyboard.press("Control+z");
  s = await waitState(page, (st) => st.level === "Training IR", "undo");
  assertGraph(s, cli.nodes(file), "after undo");
  assert.deepEqual(s.redo, ["decompose to Inference IR"], "the redo list after undo: " + JSON.stringify(s.log));
  await page.keyboard.press("Control+Shift+z");
  s = await waitState(page, (st) => st.level === "Inference IR", "redo");
  assert.equal(s.code.text, cli.decomposedCode(file, "inference"));
  await clickWidget(page, "undo");
  s = await waitState(page, (st) => st.level === "Training IR" && st.undo.length === 0, "undo button");
  noErrors(page);
});

test("module.train() on ep.module() shows what torch raises and changes nothing", async (ctx) => {
  const page = await openPage(ctx, { hash: "#file=conv_bn_relu_eval.pt2" });
  const before = await state(page);
  await clickWidget(page, "more");
  await clickWidget(page, "more:train");
  const s = await waitState(page, (st) => st.error !== "", "the refusal");
  // The banner in the page's language (zh-TW here), torch's own message as torch says it.
  assert.equal(s.error, "torch 拋出 NotImplementedError：Calling train() is not supported yet.");
  assert.deepEqual(s.undo, [], "no history entry");
  assert.deepEqual(names(s), names(before));
  noErrors(page);
});

test("prepare, calibrate and convert conv_relu, then undo all three", async (ctx) => {
  const file = asset("conv_relu.pt2");
  const page = await openPage(ctx, { hash: "#file=conv_relu.pt2" });
  await waitState(page, (st) => st.file === "conv_relu.pt2", "conv_relu");
  await clickWidget(page, "prepare");
  let s = await waitState(page, (st) => st.observers.length === 3, "prepare_pt2e");
  assert.equal(s.view, "ep.module()", "the page shows the module the pass changed");
  assert.ok(s.observers.every((o) => o.calls === 0));
  await clickWidget(page, "calibrate");
  s = await waitState(page, (st) => st.observers.every((o) => o.calls === 9), "calibrated on 9 batches");
  assert.ok(s.observers.every((o) => o.scale > 0));
  await clickWidget(page, "tab:Observers");
  await waitState(page, (st) => st.tab === "Observers", "observers tab");
  await shot(ctx, page, "panel-observers.png", "dock");
  await clickWidget(page, "convert");
  s = await waitState(page, (st) => st.undo.length === 3 && st.run && st.run.current, "converted and run");
  assert.equal(s.code.text, cli.convertedCode(file), "the page's convert = pt2lab convert");
  assert.equal(s.run.parity.bit_identical, false, "quantization changes the output");
  assert.ok(s.run.parity.max_abs > 1e-3 && s.run.parity.max_abs < 0.1, "a quantization-sized error");
  await shot(ctx, page, "convert.png");
  for (let i = 0; i < 3; i++) await page.keyboard.press("Control+z");
  s = await waitState(page, (st) => st.undo.length === 0, "three undos");
  assertGraph(s, cli.nodes(file, true), "ep.module() as loaded");
  assert.equal(s.observers.length, 0);
  noErrors(page);
});

test("a quantized run's per-layer table: graph order, the worst layer is the lowest SQNR", async (ctx) => {
  const page = await openPage(ctx, { hash: "#file=resnet_style.pt2", locale: "en-US" });
  await waitState(page, (st) => st.file === "resnet_style.pt2", "resnet_style");
  await clickWidget(page, "prepare");
  let s = await waitState(page, (st) => st.observers.length > 0, "prepare_pt2e");
  await clickWidget(page, "calibrate");
  // A shared observer instance is called once per reader: wait for the history entry.
  await waitState(page, (st) => st.undo.length === 2 && st.observers.every((o) => o.calls >= 9), "calibrated");
  await clickWidget(page, "convert");
  // After convert the page runs once by itself; then Run, pressed in the Run tab.
  s = await waitState(page, (st) => st.undo.length === 3 && st.run && st.run.current, "converted and run");
  await clickWidget(page, "tab:Run & parity");
  await waitState(page, (st) => st.tab === "Run & parity", "run tab");
  const logged = s.log.length;
  await clickWidget(page, "run tab:run");
  s = await waitState(page, (st) => st.log.length > logged && st.run && st.run.current && !st.busy, "Run pressed");
  const run = s.run;
  assert.equal(run.parity.approximate, true, "a quantized run");
  assert.ok(Array.isArray(run.layers) && run.layers.length >= 5, "a row per layer: " + JSON.stringify(run.layers));
  assert.equal(run.layers_not_kept, 0, "a small model keeps every value");
  // Graph order: the module's code defines the layers in the table's order.
  const code = s.code.text;
  const at = run.layers.map((l) => code.indexOf("    " + l.node + " = "));
  assert.ok(at.every((i) => i >= 0), "every layer is a node of the converted module");
  for (let i = 1; i < at.length; i++) assert.ok(at[i] > at[i - 1], `graph order at ${run.layers[i].node}`);
  assert.ok(run.layers.every((l) => !/quantize/.test(l.op)), "no quantize / dequantize is a layer");
  // Folded batch norms: their conv is compared with the batch norm's output.
  assert.ok(run.layers.some((l) => /conv/.test(l.op) && /batch_norm|getitem/.test(l.reference)),
            "a folded conv stands for its batch norm: " + JSON.stringify(run.layers.map((l) => [l.node, l.reference])));
  // The worst layer: the lowest SQNR (null is inf: identical), the first on a tie.
  let worst = null;
  for (const l of run.layers)
    if (l.sqnr_db !== null && (worst === null || l.sqnr_db < worst.sqnr_db)) worst = l;
  assert.ok(worst, "some layer loses something");
  assert.equal(run.worst_layer, worst.node, "worst_layer is the minimum over the rows");
  assert.ok(s.widgets["run tab:worst layer"], "the sentence naming the worst layer is drawn");
  // Scrolled down as a user would (the wheel over the tab, right of the table) until
  // the sentence is at the top of the tab: it and the table's first rows are in the dock.
  const dock = s.widgets["panel:dock"];
  const inDock = (w) => w && w.y >= dock.y && w.y + w.h <= dock.y + dock.h;
  let lastY = null;
  for (let i = 0; i < 30; i++) {
    const y = (await state(page)).widgets["run tab:worst layer"].y;
    if (y < dock.y + 80 || y === lastY) break; // at the top, or at the end
    lastY = y;
    await page.mouse.move(dock.x + dock.w - 30, dock.y + 60);
    await page.mouse.wheel(0, 60);
    await page.waitForTimeout(80);
  }
  s = await state(page);
  assert.ok(inDock(s.widgets["run tab:first layer"]), "the table's first row scrolled into the dock");
  assert.ok(inDock(s.widgets["run tab:worst layer"]), "and the sentence above it");
  await shot(ctx, page, "run-layers.png");
  await shot(ctx, page, "panel-run-layers.png", "dock");
  // torch's eager outputs are the float model's: judged by SQNR too, no allclose.
  assert.ok(run.reference, "the file carries torch's eager outputs");
  assert.equal(run.reference.approximate, true, "the eager reference of a quantized run");
  assert.match(run.reference.verdict, /^SQNR [\d.]+ dB: /);
  // A layer is a link: it selects its node in the graph.
  await clickWidget(page, "run tab:first layer");
  s = await waitState(page, (st) => st.selected && st.selected.name === run.layers[0].node, "the first layer selected");
  noErrors(page);
});

test("run: outputs equal the CLI's, parity against PyTorch eager", async (ctx) => {
  const file = asset(FIRST);
  const page = await openPage(ctx);
  await clickWidget(page, "tab:Run & parity");
  await waitState(page, (st) => st.tab === "Run & parity", "run tab");
  await page.keyboard.press("r");
  const s = await waitState(page, (st) => st.run && st.run.current, "a run");
  const expected = cli.runOutputs(file);
  assert.equal(s.run.outputs.length, expected.length);
  assert.deepEqual(s.run.outputs[0].first, expected[0].data.slice(0, 8), "the same executor values");
  assert.match(s.run.inputs, /^sample inputs \(data\/sample_inputs\/model\.pt\)$/);
  assert.equal(s.run.reference.allclose, true, "within PyTorch's tolerance of eager");
  await shot(ctx, page, "panel-run.png", "dock");
  // Seeded inputs: SeededRng(3).normal(), the same as `pt2lab run --seed 3`.
  await clickWidget(page, "run tab:seeded");
  await typeInWidget(page, "run tab:seed", "3");
  await clickWidget(page, "run tab:run");
  const seeded = await waitState(page, (st) => st.run && /SeededRng\(3\)/.test(st.run.inputs), "a seeded run");
  assert.deepEqual(seeded.run.outputs[0].first, cli.runOutputs(file, 3)[0].data.slice(0, 8), "seed 3");
  assert.equal(seeded.run.reference, undefined, "no eager reference for seeded inputs");
  await clickWidget(page, "tab:Log");
  await waitState(page, (st) => st.tab === "Log", "log tab");
  await shot(ctx, page, "panel-log.png", "dock");
  noErrors(page);
});

test("HiDPI: the backing store follows devicePixelRatio 2; clicks still land", async (ctx) => {
  const page = await openPage(ctx, { dpr: 2 });
  let s = await state(page);
  assert.equal(s.scale, 2);
  const size = await page.evaluate(() => [document.getElementById("canvas").width, innerWidth]);
  assert.equal(size[0], 2 * size[1], "canvas.width = 2 x CSS width");
  node(s, "relu");
  const relu = await boxInView(page, "relu");
  await clickAt(page, relu.x, relu.y);
  await waitState(page, (st) => st.selected && st.selected.name === "relu", "click at DPR 2");
  await shot(ctx, page, "page@2x.png");
  // A resize keeps the backing store in step.
  await page.setViewportSize({ width: 1100, height: 760 });
  s = await waitState(page, (st) => st.widgets["panel:graph"] && st.widgets["panel:dock"].x + st.widgets["panel:dock"].w <= 1100.5, "resize");
  const after = await page.evaluate(() => [document.getElementById("canvas").width, innerWidth]);
  assert.equal(after[0], 2 * after[1]);
  await shot(ctx, page, "resized@2x.png");
  // devicePixelRatio changing under a live page (a window moved to another
  // screen): the backing store and the font atlas follow.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Emulation.setDeviceMetricsOverride", { width: 1100, height: 760, deviceScaleFactor: 1, mobile: false });
  s = await waitState(page, (st) => st.scale === 1, "devicePixelRatio 2 -> 1");
  const one = await page.evaluate(() => [document.getElementById("canvas").width, innerWidth]);
  assert.equal(one[0], one[1]);
  node(s, "conv2d");
  const conv = await boxInView(page, "conv2d");
  await clickAt(page, conv.x, conv.y);
  await waitState(page, (st) => st.selected && st.selected.name === "conv2d", "click at DPR 1");
  noErrors(page);
});

test("no WebGL2: a readable error screen", async (ctx) => {
  const page = await openPage(ctx, {
    expectFailure: true,
    init: () => {
      const get = HTMLCanvasElement.prototype.getContext;
      HTMLCanvasElement.prototype.getContext = function (type, ...rest) {
        return type === "webgl2" ? null : get.call(this, type, ...rest);
      };
    },
  });
  await page.waitForSelector("#failure", { state: "visible" });
  assert.match(await page.textContent("#failure-text"), /WebGL2/);
  await shot(ctx, page, "no-webgl2.png");
});

test("a failed download: a readable error screen", async (ctx) => {
  const context = await ctx.browser.newContext({ viewport: { width: 1000, height: 600 } });
  const page = await context.newPage();
  ctx.pages.push(page);
  await page.route("**/app.wasm", (r) => r.fulfill({ status: 404, body: "" }));
  await page.goto(ctx.server.url);
  await page.waitForSelector("#failure", { state: "visible" });
  assert.match(await page.textContent("#failure-text"), /app\.wasm.*404/);
});

test("the folder works under any sub-path", async (ctx) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pt2lab-subpath-"));
  fs.mkdirSync(path.join(dir, "course", "week1"), { recursive: true });
  fs.symlinkSync(ctx.dist, path.join(dir, "course", "week1", "lab"));
  const srv = await serve(dir);
  try {
    const page = await openPage(ctx, { base: srv.url + "course/week1/lab/" });
    const s = await state(page);
    assert.equal(s.file, FIRST);
    noErrors(page);
  } finally {
    srv.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

module.exports = { list, openPage, clickAt, clickWidget, typeInWidget, noErrors };
