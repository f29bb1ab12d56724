// Phones and tablets (run by tests/e2e/run.js): a lesson on a 390 x 844 phone
// (touch, devicePixelRatio 3) and a 768 x 1024 tablet (touch, 2), driven by taps
// only. The page shows one panel at a time there, the lesson first, with a row of
// buttons to switch to the graph, the node and the code & run panels; every
// control the lesson needs is on screen and at least 44 px tall.
// Screenshots in build/e2e/phone/.
"use strict";
const assert = require("assert/strict");
const fs = require("fs");
const path = require("path");
const { state, waitState } = require("./lib");
const { lessonFile } = require("./lesson_tests");

const LESSON = "m00-4";
const TOUCH_TARGET = 44;

const list = [];
const test = (name, run) => list.push({ name, run });

async function shot(ctx, page, name) {
  const dir = path.join(ctx.shots, "phone");
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, name) });
}

async function openTouchPage(ctx, viewport, dpr, hash) {
  const context = await ctx.browser.newContext({ viewport, deviceScaleFactor: dpr, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  ctx.pages.push(page);
  page.errors = [];
  page.on("console", (m) => { if (m.type() === "error") page.errors.push(m.text()); });
  page.on("pageerror", (e) => page.errors.push(e.message));
  await page.goto(ctx.server.url + hash);
  await waitState(page, (s) => s.ready && s.frames > 1, "the first frame");
  return page;
}

// A widget the state hook reports, checked to be on screen and big enough to tap.
function onScreen(s, name, viewport, what) {
  const w = s.widgets[name];
  assert.ok(w, `${what}: ${name} is drawn`);
  const [x, y, width, height] = Array.isArray(w) ? w : [w.x, w.y, w.w, w.h];
  assert.ok(x >= 0 && y >= 0 && x + width <= viewport.width + 0.5 && y + height <= viewport.height + 0.5,
            `${what}: ${name} inside the ${viewport.width} x ${viewport.height} window (at ${x}, ${y}, ${width} x ${height})`);
  assert.ok(height >= TOUCH_TARGET - 0.5, `${what}: ${name} is ${height.toFixed(1)} px tall (at least ${TOUCH_TARGET})`);
  return { x: x + width / 2, y: y + height / 2 };
}

async function tap(page, s, name, viewport, what) {
  const p = onScreen(s, name, viewport, what);
  await page.touchscreen.tap(p.x, p.y);
}

// A finger dragged from (x, y0) to (x, y1) in steps, as a user scrolls a phone's page.
async function swipe(page, x, y0, y1) {
  const cdp = await page.context().newCDPSession(page);
  const steps = 8;
  await cdp.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [{ x, y: y0 }] });
  for (let i = 1; i <= steps; i++) {
    await cdp.send("Input.dispatchTouchEvent", { type: "touchMove", touchPoints: [{ x, y: y0 + (y1 - y0) * i / steps }] });
    await page.waitForTimeout(30);
  }
  await cdp.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
  await cdp.detach();
}

// Swipes the region that scrolls `name` (the lesson's text) until the whole of it
// is on screen, as a user scrolls a phone's page: the state hook gives the part of a
// widget that can be seen, and the whole of it when a scrolling region cuts it.
// The swipe starts on whatever is there (prose, an option), so it must press nothing.
async function scrollTo(page, s, name, viewport, what) {
  const threshold = 10; // the page's drag threshold (ui/frame.cpp, touch_scroll)
  for (let k = 0; k < 12; k++) {
    const w = s.widgets[name];
    assert.ok(w, `${what}: ${name} is drawn`);
    if (!w.whole) return s;
    const down = w.whole.y + w.whole.h > w.y + w.h; // cut at the bottom: scroll the text up
    const frames = s.frames;
    const x = w.x + w.w / 2;
    if (down) {
      const edge = w.y + w.h, by = Math.min(w.whole.y + w.whole.h - edge + 16 + threshold, edge - 10);
      await swipe(page, x, edge - 8, edge - 8 - by);
    } else {
      const edge = w.y, by = Math.min(edge - w.whole.y + 16 + threshold, viewport.height - edge - 10);
      await swipe(page, x, edge + 8, edge + 8 + by);
    }
    s = await waitState(page, (x) => x.frames > frames + 2, `${what}: scrolled`);
  }
  throw new Error(`${what}: ${name} still cut after swiping`);
}

for (const [label, viewport, dpr] of [["a 390 x 844 phone", { width: 390, height: 844 }, 3],
                                      ["a 768 x 1024 tablet", { width: 768, height: 1024 }, 2]]) {
  test(`touch: a lesson on ${label}, one panel at a time, every control on screen and 44 px tall`, async (ctx) => {
    const page = await openTouchPage(ctx, viewport, dpr, `#${LESSON}/1`);
    const file = lessonFile(LESSON, "zh-TW");
    const tag = `${viewport.width}x${viewport.height}`;
    let s = await waitState(page, (x) => x.lessons.current && x.lessons.current.step === 1 && !x.busy &&
                            x.waiting === 0 && x.log.some((l) => l.startsWith(`lesson ${LESSON}, step 1`)),
                            "step 1 shown");
    // The lesson fills the window under the switch; the graph and the rest are a tap away.
    const lessonPanel = s.widgets["panel:lesson"];
    if (!(lessonPanel && lessonPanel.w >= viewport.width - 1)) console.log(JSON.stringify(s.widgets));
    assert.ok(lessonPanel && lessonPanel.w >= viewport.width - 1, "the lesson panel takes the whole width");
    assert.equal(s.widgets["panel:graph"], undefined, "the graph waits behind its button");
    for (const v of ["view:side", "view:graph", "view:node", "view:panels"]) onScreen(s, v, viewport, "the switch");
    // The top bar wraps rather than clips: opening a file, saving, the lesson list and help
    // stay on screen and tappable.
    for (const v of ["open", "save", "top:lessons", "help"]) onScreen(s, v, viewport, "the top bar");
    await shot(ctx, page, `${tag}-lesson.png`);
    for (let k = 1; k <= 2; k++) {
      const what = `${label}, step ${k}`;
      const st = file.steps[k - 1];
      s = await waitState(page, (x) => x.lessons.current.step === k && !x.busy && x.waiting === 0, what);
      if (st.actions) {
        s = await scrollTo(page, s, "lesson:perform", viewport, what);
        await tap(page, s, "lesson:perform", viewport, what);
        s = await waitState(page, (x) => x.lessons.current.performed && !x.busy && x.waiting === 0, `${what}: performed`);
      }
      for (let i = 0; i < st.check.options.length; i++) {
        s = await scrollTo(page, s, "lesson:option:" + i, viewport, what);
        onScreen(s, "lesson:option:" + i, viewport, what);
      }
      assert.equal(s.lessons.current.correct, undefined, `${what}: swiping answered nothing`);
      s = await scrollTo(page, s, "lesson:option:" + st.check.answer, viewport, what);
      await tap(page, s, "lesson:option:" + st.check.answer, viewport, what);
      s = await waitState(page, (x) => x.lessons.current.correct === true, `${what}: answered`);
      s = await scrollTo(page, s, "lesson:prev", viewport, what);
      onScreen(s, "lesson:prev", viewport, what);
      if (k === 1) {
        // The graph is one tap away, and the lesson one tap back.
        await tap(page, s, "view:graph", viewport, what);
        s = await waitState(page, (x) => x.widgets["panel:graph"] && !x.widgets["panel:lesson"], `${what}: the graph`);
        assert.ok(s.widgets["panel:graph"].w >= viewport.width - 1, "the graph takes the whole width");
        // The toolbar wraps on the narrow screen: its controls stay on screen and tappable.
        for (const w of ["view:ExportedProgram", "view:ep.module()", "fit", "search", "run"])
          onScreen(s, w, viewport, `${what}: the graph's toolbar`);
        await shot(ctx, page, `${tag}-graph.png`);
        await tap(page, s, "view:panels", viewport, what);
        s = await waitState(page, (x) => x.widgets["panel:dock"], `${what}: code & run`);
        await shot(ctx, page, `${tag}-dock.png`);
        await tap(page, s, "view:side", viewport, what);
        s = await waitState(page, (x) => x.widgets["panel:lesson"], `${what}: the lesson again`);
      }
      s = await scrollTo(page, s, "lesson:next", viewport, what);
      await tap(page, s, "lesson:next", viewport, what);
    }
    await waitState(page, (x) => x.lessons.current.step === 3, "step 3 after two taps on Next");
    await shot(ctx, page, `${tag}-step3.png`);
    assert.deepEqual(page.errors, [], "no console errors");
  });
}

test("touch: a first visit on a phone opens on the welcome and the lessons; Start with M00 is a tap", async (ctx) => {
  const viewport = { width: 390, height: 844 };
  const page = await openTouchPage(ctx, viewport, 3, "");
  let s = await waitState(page, (x) => x.widgets["welcome:start"] && x.widgets["lesson:open:m00"], "the welcome");
  assert.equal(s.widgets["panel:graph"], undefined, "the graph waits behind its button");
  for (const w of ["welcome:start", "welcome:dismiss", "view:graph"]) onScreen(s, w, viewport, "first visit");
  await shot(ctx, page, "390x844-welcome.png");
  await tap(page, s, "welcome:start", viewport, "Start with M00");
  s = await waitState(page, (x) => x.lessons.current && x.lessons.current.id === "m00" && x.widgets["panel:lesson"],
                      "M00 by a tap");
  assert.ok(s.widgets["panel:lesson"].w >= viewport.width - 1, "the lesson fills the phone");
  assert.deepEqual(page.errors, [], "no console errors");
});

module.exports = { list };
