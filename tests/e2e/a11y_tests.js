// Keyboard and screen-reader use of the lessons (run by tests/e2e/run.js): a whole
// lesson done with key presses alone on the canvas (Tab through the lesson panel,
// Enter / Space on its controls, the arrows between steps; Tab out to the page's
// HTML and back), the same lesson done in the HTML text view alone (focus and
// keys on real buttons and a radio group, as a screen reader's user would), each
// checked at the end against the lesson-engine goldens real PyTorch wrote; browser
// Back / Forward between steps, and bad deep links. Screenshots in build/e2e/a11y/.
"use strict";
const assert = require("assert/strict");
const fs = require("fs");
const path = require("path");
const { state, waitState } = require("./lib");
const { openPage, noErrors } = require("./page_tests");
const { golden, lessonFile, goldenNames, goldenGraphAt, pageNames, checkAgainstGolden } = require("./lesson_tests");

const LESSON = "m00-4";

async function shot(ctx, page, name) {
  const dir = path.join(ctx.shots, "a11y");
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, name) });
}

// The page's element with focus: its id, else its tag.
const active = (page) => page.evaluate(() => {
  const a = document.activeElement;
  return a ? a.id || a.tagName.toLowerCase() : "";
});

// Presses Tab (dir > 0) or Shift+Tab until the canvas control `name` has keyboard
// focus (the state hook's "focused": the control whose ring is drawn).
async function tabToControl(page, name, dir = 1) {
  const key = dir > 0 ? "Tab" : "Shift+Tab";
  for (let i = 0; i < 60; i++) {
    const s = await state(page);
    if (s.focused === name) return s;
    await page.keyboard.press(key);
    await waitState(page, (x) => x.frames > s.frames + 1, `a frame after ${key}`);
  }
  throw new Error(`${key} never reached ${name}; last: ` + (await state(page)).focused);
}

// Presses Tab (or Shift+Tab) until the HTML element `pred` accepts has focus.
async function tabToElement(page, pred, what, dir = 1) {
  const key = dir > 0 ? "Tab" : "Shift+Tab";
  for (let i = 0; i < 60; i++) {
    if (await page.evaluate(pred)) return;
    await page.keyboard.press(key);
  }
  throw new Error(`${key} never reached ${what}; focus is on ${await active(page)}`);
}

const list = [];
const test = (name, run) => list.push({ name, run });

test("a11y: a whole lesson with the keyboard alone (Tab, Enter, Space, arrows), focus always visible", async (ctx) => {
  const page = await openPage(ctx, { hash: `#${LESSON}/1` });
  const file = lessonFile(LESSON, "zh-TW");
  const g = golden(LESSON);
  let s = await waitState(page, (x) => x.lessons.current && x.lessons.current.step === 1, "step 1");
  // The step's graph opens in pieces over frames: Tab walks the panel it ends in.
  // After the open the step is shown (it selects its dock tab, which takes the focus).
  s = await waitState(page, (x) => !x.busy && x.waiting === 0 && x.log.some((l) => l.startsWith("opened ")) &&
                      x.log.some((l) => l.startsWith(`lesson ${LESSON}, step 1`)),
                      "the step's graph open and the step shown");
  // The page draws a few frames after a change and then idles: let them pass
  // (the tab is selected in one of them), at most a second.
  for (let k = 0, f0 = s.frames; k < 20 && (await state(page)).frames < f0 + 3; k++)
    await new Promise((r) => setTimeout(r, 50));
  assert.equal(await active(page), "canvas", "the canvas has focus after load");
  // Tab order is the reading order: the lesson selector, the language, the step's
  // text (options), its button, Previous / Next and the small buttons.
  // Tab from wherever the load left the focus to the panel's first control, then on.
  s = await tabToControl(page, "lesson:select");
  const order = [s.focused];
  for (let i = 1; i < 10; i++) {
    await page.keyboard.press("Tab");
    const moved = (x) => x.focused && !order.includes(x.focused);
    s = await waitState(page, moved, `control ${i + 1} after Tab`);
    order.push(s.focused);
  }
  const steps1 = file.steps[0];
  assert.deepEqual(order, ["lesson:select", "lesson:lang:zh-TW", "lesson:lang:en",
    ...steps1.check.options.map((_, i) => "lesson:option:" + i), "lesson:perform", "lesson:prev", "lesson:next", "lesson:reset",
    "lesson:textview", "lesson:leave"].slice(0, 10), "Tab walks the panel in reading order");
  await shot(ctx, page, "keyboard-focus-ring.png");
  // Past the last control Tab leaves the canvas for the page's HTML ("Lesson as
  // text", shown while focused), and the next Tab comes back to the first control.
  await tabToControl(page, "lesson:leave");
  await page.keyboard.press("Tab");
  await page.waitForFunction(() => document.activeElement.id === "text-view-toggle");
  const toggle = await page.evaluate(() => document.getElementById("text-view-toggle").getBoundingClientRect());
  assert.ok(toggle.top >= 0 && toggle.height > 10, "the skip link is on screen while it has focus");
  s = await state(page);
  assert.equal(s.focused, "", "no ring on the canvas while the HTML has focus");
  await shot(ctx, page, "keyboard-skip-link.png");
  // Keys for the HTML stay there: an arrow does not move the lesson.
  await page.keyboard.press("ArrowRight");
  await page.waitForTimeout(200);
  assert.equal((await state(page)).lessons.current.step, 1, "ArrowRight on the link leaves the step alone");
  await page.keyboard.press("Tab");
  await waitState(page, (x) => x.focused === "lesson:select", "Tab back into the canvas: its first control");
  assert.equal(await active(page), "canvas");
  // Shift+Tab from the first control goes back out, and Shift+Tab into the canvas
  // from the HTML after it lands on its last control.
  await page.keyboard.press("Shift+Tab");
  await page.waitForFunction(() => document.activeElement.id === "text-view-toggle");
  await page.keyboard.press("Tab");
  await waitState(page, (x) => x.focused === "lesson:select", "back in");

  for (let k = 1; k <= file.steps.length; k++) {
    const what = `keyboard #${LESSON}/${k}`;
    const st = file.steps[k - 1];
    s = await waitState(page, (x) => x.lessons.current.step === k, what);
    assert.equal(s.lessons.current.step_title, file.titles[k - 1], `${what}: title`);
    if (st.actions) {
      // The step's button: Tab to it, Enter.
      await tabToControl(page, "lesson:perform", 1);
      await page.keyboard.press("Enter");
      await waitState(page, (x) => x.lessons.current.performed, `${what}: performed`);
      s = await waitState(page, (x) => x.focused === "lesson:perform", `${what}: focus stays on the button once it ran`, 3000);
      checkAgainstGolden(s, g, k, what);
    }
    // The check: back to its options, a wrong one first on the first step (Enter),
    // then the right one (Space).
    if (k === 1) {
      const wrong = st.check.answer === 0 ? 1 : 0;
      await tabToControl(page, "lesson:option:" + wrong, -1);
      await page.keyboard.press("Enter");
      await waitState(page, (x) => x.lessons.current.answer === wrong && x.lessons.current.correct === false, `${what}: wrong answer`);
    }
    await tabToControl(page, "lesson:option:" + st.check.answer, -1);
    await shot(ctx, page, `keyboard-${String(k).padStart(2, "0")}.png`);
    await page.keyboard.press("Space");
    s = await waitState(page, (x) => x.lessons.current.correct === true, `${what}: right answer`);
    if (k === file.steps.length) break;
    // Next: the button (Tab to it, Enter) on odd steps, ArrowRight on even ones.
    if (k % 2) {
      await tabToControl(page, "lesson:next", 1);
      await page.keyboard.press("Enter");
    } else {
      await page.keyboard.press("ArrowRight");
    }
  }
  s = await state(page);
  const entry = s.lessons.list.find((l) => l.id === LESSON);
  assert.equal(entry.done.length, file.steps.length, "every step done with the keyboard alone");
  const last = goldenGraphAt(g, s.lessons.current.graph, file.steps.length);
  assert.deepEqual(pageNames(s), goldenNames(last.module_graph), "the graph is the last step's");
  noErrors(page);
});

// The text view's current step as a screen reader meets it.
function textView(page) {
  return page.evaluate(() => {
    const q = (sel) => document.querySelector("#text-view " + sel);
    const t = (sel) => (q(sel) ? q(sel).textContent : "");
    return {
      title: t("h3"),
      counter: t(".counter"),
      perform: q("#text-view-perform") ? { text: t("#text-view-perform"), off: q("#text-view-perform").getAttribute("aria-disabled") === "true",
        tag: q("#text-view-perform").tagName, hidden: q(".action").hidden } : null,
      results: t("#text-view-results"),
      resultsLive: q("#text-view-results") ? q("#text-view-results").getAttribute("aria-live") : "",
      graph: t(".graph"),
      legend: t("fieldset legend"),
      radios: document.querySelectorAll("#text-view fieldset input[type=radio]").length,
      feedback: t("#text-view-feedback"),
      feedbackRole: q("#text-view-feedback") ? q("#text-view-feedback").getAttribute("role") : "",
      notice: document.getElementById("text-view-notice").hidden ? "" : document.getElementById("text-view-notice").textContent,
    };
  });
}

test("a11y: the same lesson in the text view alone (buttons, radio group, live regions), in step with the canvas", async (ctx) => {
  const page = await openPage(ctx, {
    hash: `#${LESSON}/1`,
    init: () => { try { localStorage.setItem("pt2lab.lesson_lang", "en"); } catch (e) { /* none */ } },
  });
  const file = lessonFile(LESSON, "en");
  const g = golden(LESSON);
  await waitState(page, (x) => x.lessons.current && x.lessons.current.step === 1 && x.lessons.lang === "en", "step 1 in English");
  // The "Lesson as text" link is the page's first control: focus it, press Enter.
  await page.locator("#text-view-toggle").focus();
  await page.keyboard.press("Enter");
  await page.locator("#text-view").waitFor({ state: "visible" });
  assert.equal(await page.evaluate(() => document.activeElement.tagName), "H3", "the step's heading takes focus");
  for (let k = 1; k <= file.steps.length; k++) {
    const what = `text view #${LESSON}/${k}`;
    const st = file.steps[k - 1];
    await page.waitForFunction((t) => document.querySelector("#text-view h3").textContent === t, file.titles[k - 1]);
    let v = await textView(page);
    assert.equal(v.counter, `Step ${k} of ${file.steps.length}`, `${what}: counter`);
    let s = await state(page);
    assert.equal(s.lessons.current.step, k, `${what}: the canvas shows the same step`);
    assert.match(v.graph, new RegExp(`Graph ${s.lessons.current.graph}, shown as .*: ${pageNames(s).length} nodes`), `${what}: the graph in words`);
    if (st.actions) {
      assert.equal(v.perform.tag, "BUTTON");
      assert.equal(v.perform.text, st.button, `${what}: the step's button`);
      await tabToElement(page, () => document.activeElement.id === "text-view-perform", "the step's button");
      await page.keyboard.press("Enter");
      await page.waitForFunction(() => document.querySelector("#text-view-results").textContent.length > 0);
      v = await textView(page);
      s = await waitState(page, (x) => x.lessons.current.performed, `${what}: performed`);
      checkAgainstGolden(s, g, k, what);
      assert.ok(v.perform.off && v.perform.text.startsWith("Done: "), `${what}: the button says it ran`);
      assert.equal(v.resultsLive, "polite", "the results are a live region");
      assert.equal(await active(page), "text-view-perform", `${what}: focus stays on the button`);
      // What it did: every action's line, torch's own message, parity, the diff.
      g.steps[k - 1].actions.forEach((ga) => {
        assert.ok(v.results.includes(": " + ga.kind + ": "), `${what}: ${ga.kind} is reported`);
        if (ga.torch_error)
          assert.ok(v.results.includes(`torch raises ${ga.torch_error.type}: `) &&
            v.results.includes(ga.torch_error.message.slice(0, 40)), `${what}: torch's message: ${v.results}`);
      });
      for (const pa of s.lessons.current.report.actions) {
        if (!pa.parity || !pa.parity.length) continue;
        // The verdict the canvas shows, and the largest difference it measured.
        const max = Math.max(...pa.parity.map((p) => p.max_abs));
        assert.ok(v.results.includes("outputs vs the file as loaded: "), `${what}: parity verdict`);
        if (pa.parity.every((p) => p.bit_identical)) assert.ok(v.results.includes("bit-identical"), `${what}: bit-identical`);
        assert.ok(v.results.includes("max |diff| " + max.toPrecision(3)), `${what}: max |diff| ${max} in ${v.results}`);
      }
      const rc = s.lessons.current.report.runs_compared;
      if (rc) assert.ok(v.results.includes(`the ${rc.runs} runs' outputs against each other: ${rc.bit_identical ? "bit-identical" : "differs"}`), `${what}: the runs against each other in ${v.results}`);
      assert.match(v.results, /What changed in the graph: |The shown graph did not change\./, `${what}: the diff`);
      for (const n of st.expect && st.expect.added ? st.expect.added : [])
        assert.ok(v.results.includes("added ") && v.results.includes(n), `${what}: added ${n} in the diff`);
    } else {
      assert.ok(v.perform === null || v.perform.hidden, `${what}: no button`);
    }
    // The check: a radio group under its question (fieldset / legend).
    assert.equal(v.radios, st.check.options.length, `${what}: one radio per option`);
    assert.ok(v.legend.length > 0, `${what}: the question is the group's legend`);
    await tabToElement(page, () => document.activeElement.name === "text-view-option", "the radio group");
    // Arrow keys move the choice inside the group (the browser's own radio keys).
    const want = st.check.answer;
    const tries = k === 1 ? [want === 0 ? 1 : 0, want] : [want];
    for (const opt of tries) {
      for (let i = 0; i < st.check.options.length; i++) {
        const at = await page.evaluate(() => Number(document.activeElement.value));
        if (at === opt) break;
        await page.keyboard.press(at < opt ? "ArrowDown" : "ArrowUp");
      }
      await page.keyboard.press("Space");
      assert.ok(await page.evaluate((o) => document.getElementById("text-view-option-" + o).checked, opt), `${what}: option ${opt} chosen`);
      await tabToElement(page, () => document.activeElement.id === "text-view-answer", "Check my answer");
      await page.keyboard.press("Enter");
      const right = opt === want;
      await page.waitForFunction((r) => document.querySelector("#text-view-feedback").textContent.includes(r ? "Right. " : "Not quite. "), right);
      s = await waitState(page, (x) => x.lessons.current.answer === opt, `${what}: answer ${opt} reached the app`);
      assert.equal(s.lessons.current.correct, right);
      if (!right) await tabToElement(page, () => document.activeElement.name === "text-view-option", "the radio group again", -1);
    }
    v = await textView(page);
    assert.equal(v.feedbackRole, "status", "the feedback is a live region");
    if (k === 1) await shot(ctx, page, "text-view-step-1.png");
    if (k === file.steps.length) {
      await shot(ctx, page, "text-view-last-step.png");
      assert.equal(await page.evaluate(() => document.getElementById("text-view-next").getAttribute("aria-disabled")), "true");
      break;
    }
    await tabToElement(page, () => document.activeElement.id === "text-view-next", "Next step");
    await page.keyboard.press("Enter");
    await page.waitForFunction((t) => document.querySelector("#text-view h3").textContent === t, file.titles[k]);
    assert.equal(await page.evaluate(() => document.activeElement.tagName), "H3", `${what}: the next step's heading takes focus`);
  }
  const s = await state(page);
  assert.equal(s.lessons.list.find((l) => l.id === LESSON).done.length, file.steps.length, "every step done in the text view alone");
  const last = goldenGraphAt(g, s.lessons.current.graph, file.steps.length);
  assert.deepEqual(pageNames(s), goldenNames(last.module_graph), "the graph is the last step's");
  // Previous goes back, and the canvas follows.
  await tabToElement(page, () => document.activeElement.id === "text-view-prev", "Previous step");
  await page.keyboard.press("Enter");
  await waitState(page, (x) => x.lessons.current.step === file.steps.length - 1, "Previous in the text view moves the canvas");
  // The last step of a lesson that has a next one: the text view leads on to it.
  await page.evaluate(() => { location.hash = "#m00/5"; });
  await waitState(page, (x) => x.lessons.current.id === "m00" && x.lessons.current.step === 5, "M00's last step");
  await page.waitForFunction(() => !document.getElementById("text-view-next-lesson").hidden &&
    document.getElementById("text-view-next").hidden);
  const label = await page.evaluate(() => document.getElementById("text-view-next-lesson").getAttribute("aria-label"));
  assert.match(label, /M00-1/, `the button names the next lesson: ${label}`);
  await tabToElement(page, () => document.activeElement.id === "text-view-next-lesson", "Next lesson");
  await page.keyboard.press("Enter");
  await waitState(page, (x) => x.lessons.current.id === "m00-1" && x.lessons.current.step === 1, "the next lesson from the text view");
  await page.waitForFunction(() => document.getElementById("text-view-next-lesson").hidden &&
    !document.getElementById("text-view-next").hidden);
  noErrors(page);
});

test("a11y: Back and Forward walk the steps; a bad deep link says so", async (ctx) => {
  const page = await openPage(ctx, { hash: `#${LESSON}/1` });
  const g = golden(LESSON);
  await waitState(page, (x) => x.lessons.current && x.lessons.current.step === 1, "step 1");
  await page.locator("#canvas").focus();
  const entries = await page.evaluate(() => history.length);
  for (const k of [2, 3, 4]) {
    await page.keyboard.press("ArrowRight");
    await waitState(page, (x) => x.lessons.current.step === k, `step ${k}`);
  }
  assert.equal(await page.evaluate(() => history.length), entries + 3, "one history entry per step");
  await page.goBack();
  let s = await waitState(page, (x) => x.lessons.current.step === 3, "Back: step 3");
  assert.equal(await page.evaluate(() => location.hash), `#${LESSON}/3`);
  assert.deepEqual(pageNames(s), goldenNames(goldenGraphAt(g, "main", 2).module_graph), "Back: the graph before step 3");
  await page.goBack();
  await waitState(page, (x) => x.lessons.current.step === 2, "Back: step 2");
  await page.goForward();
  await waitState(page, (x) => x.lessons.current.step === 3, "Forward: step 3");
  assert.equal(await page.evaluate(() => history.length), entries + 3, "Back and Forward add no entries");
  await page.goBack();
  await page.goBack();
  await waitState(page, (x) => x.lessons.current.step === 1, "Back: step 1");
  // Back at the entry the visit began on: the page says one more Back leaves.
  await page.locator("#history-note").waitFor({ state: "visible" });
  assert.equal(await page.evaluate(() => location.hash), `#${LESSON}/1`, "still in the course");
  await shot(ctx, page, "history-start.png");

  // Bad links, followed in the page: the lesson stays, a notice says what was wrong.
  await page.locator("#text-view-toggle").focus();
  await page.keyboard.press("Enter");
  for (const [link, says] of [
    ["#m00-9/1", /m00-9\/1 .*(no lesson|不存在)/],
    ["#m00-4/0", /m00-4\/0 .*(numbered from 1|從 1 開始)/],
    ["#m00-4", /m00-4 .*(numbered from 1|從 1 開始)/],
    ["#hello", /hello .*(not a lesson step|不是課程的一步)/],
  ]) {
    const before = s.lessons.link_notice;
    await page.evaluate((h) => { location.hash = h; }, link);
    // Wait for this link's notice, not the one the previous link left.
    s = await waitState(page, (x) => x.lessons.link_notice && x.lessons.link_notice !== before, `${link}: a notice`);
    assert.match(s.lessons.link_notice, says, `${link}: ${s.lessons.link_notice}`);
    assert.equal(s.lessons.current.id, LESSON, `${link}: the lesson stays`);
    assert.ok(s.widgets["lesson:link_notice"], `${link}: shown in the lesson panel`);
    await page.waitForFunction((t) => document.getElementById("text-view-notice").textContent === t, s.lessons.link_notice);
    assert.equal(await page.evaluate(() => document.getElementById("text-view-notice").getAttribute("role")), "alert");
  }
  await shot(ctx, page, "bad-link.png");
  // A good link clears it.
  await page.evaluate(() => { location.hash = "#m00-4/2"; });
  s = await waitState(page, (x) => x.lessons.current.step === 2 && !x.lessons.link_notice, "#m00-4/2 clears the notice");
  assert.ok(await page.locator("#text-view-notice").isHidden());

  // Opened with a bad link: no lesson, and the notice in the panel and the text view.
  const p2 = await openPage(ctx, { hash: "#m00-9/1" });
  s = await waitState(p2, (x) => x.lessons.link_notice, "a notice on load");
  assert.equal(s.lessons.current, undefined, "no lesson opened");
  assert.ok(s.widgets["lesson:link_notice"], "in the lesson list");
  await p2.locator("#text-view-toggle").focus();
  await p2.keyboard.press("Enter");
  await p2.waitForFunction(() => !document.getElementById("text-view-notice").hidden);
  // A step past the end opens the last one and says so.
  const p3 = await openPage(ctx, { hash: "#m00-4/99" });
  s = await waitState(p3, (x) => x.lessons.current && x.lessons.current.step === 12 && x.lessons.link_notice, "#m00-4/99");
  assert.match(s.lessons.link_notice, /12/);
  assert.equal(await p3.evaluate(() => location.hash), "#m00-4/12", "the hash names the step shown");
  noErrors(page);
  noErrors(p2);
  noErrors(p3);
});

module.exports = { list };
