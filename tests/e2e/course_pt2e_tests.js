// The course folder courses/pt2e served beside the built page, as docs/LESSONS.md
// section 8 hosts a teacher's course (site/lab/ = dist, site/pt2e/ = the folder with its own
// graphs): lesson M01-2 walked step by step in both languages
// with the page's buttons, each check answered right; the observers after the calibrate
// steps are torch.ao's (tests/golden/pt2e/conv_bn_relu_eval.json, "lesson_m01_2"), the node
// the prepare step selects shows torch.ao's quantization annotation, the quantized run has
// its per-layer table, as torch.ao's converted module gives it; the lesson's characters beyond
// the page's font subset are drawn (the fallback font), none as "?". Screenshots: build/e2e/course_pt2e/<lang>-<k>.png.
"use strict";
const assert = require("assert/strict");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { ROOT, serve, launch, waitState, clickWidget } = require("./lib");
const { clickRevealed } = require("./lesson_tests");

const list = [];
const test = (name, run) => list.push({ name, run });

const COURSE = path.join(ROOT, "courses", "pt2e");
const LANGS = ["zh-TW", "en"];

function stepsOf(lang) {
  const text = fs.readFileSync(path.join(COURSE, `m01-2.${lang}.md`), "utf8");
  return [...text.matchAll(/```step\n([\s\S]*?)\n```/g)].map((m) => JSON.parse(m[1]));
}

function checkObservers(s, golden, what) {
  assert.equal(s.observers.length, golden.observers.length, `${what}: observers`);
  for (const o of golden.observers) {
    const mine = s.observers.find((x) => x.name === o.name);
    assert.ok(mine, `${what}: ${o.name}`);
    assert.ok(Math.abs(mine.min - o.min_val) <= 1e-5 * Math.abs(o.min_val) + 1e-12, `${what}: ${o.name} min ${mine.min} vs torch ${o.min_val}`);
    assert.ok(Math.abs(mine.max - o.max_val) <= 1e-5 * Math.abs(o.max_val), `${what}: ${o.name} max ${mine.max} vs torch ${o.max_val}`);
    assert.ok(Math.abs(mine.scale - o.scale) <= 1e-4 * o.scale, `${what}: ${o.name} scale ${mine.scale} vs torch ${o.scale}`);
    assert.ok(Math.abs(mine.zero_point - o.zero_point) <= 1, `${what}: ${o.name} zero_point`);
  }
}

test("courses/pt2e: M01-2 walked in the page in both languages, with torch.ao's observers", async (ctx) => {
  const asset = JSON.parse(fs.readFileSync(path.join(ROOT, "tests/golden/pt2e/conv_bn_relu_eval.json"), "utf8"));
  const golden = asset.lesson_m01_2;
  const annotations = new Map(asset.annotations);
  const site = fs.mkdtempSync(path.join(os.tmpdir(), "pt2lab-course-pt2e-"));
  const shots = path.join(ctx.shots, "course_pt2e");
  fs.mkdirSync(shots, { recursive: true });
  const srv = await (async () => {
    fs.symlinkSync(ctx.dist, path.join(site, "lab"));
    fs.symlinkSync(COURSE, path.join(site, "pt2e"));
    return serve(site);
  })();
  try {
    for (const lang of LANGS) {
      const steps = stepsOf(lang);
      const context = await ctx.browser.newContext({ locale: lang, viewport: { width: 1440, height: 900 } });
      await context.addInitScript((l) => localStorage.setItem("pt2lab.lesson_lang", l), lang);
      const page = await context.newPage();
      ctx.pages.push(page);
      const errors = [];
      page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(srv.url + "lab/?course=../pt2e/#m01-2/1");
      let s = await waitState(page, (st) => st.ready && st.lessons && st.lessons.current && st.lessons.current.step === 1, `${lang}: step 1`, 60000);
      assert.equal(s.lessons.error, "");
      assert.equal(s.lessons.lang, lang);
      assert.deepEqual(s.lessons.list.map((l) => l.id), ["m01-2"], "the course's lessons, not the shipped ones");
      // Every character of the lesson is drawn: those beyond the subset come with the
      // fallback glyphs, none is left missing.
      s = await waitState(page, (x) => x.glyphs.missing === "" && !x.glyphs.pending.length, `${lang}: the lesson's glyphs`, 60000);
      if (lang === "zh-TW") assert.ok(s.glyphs.pages.length > 0, "the zh-TW lesson needs characters beyond the subset");
      let calibrations = 0, annotated = 0;
      for (let k = 1; k <= steps.length; k++) {
        const what = `${lang} #m01-2/${k}`;
        const st = steps[k - 1];
        s = await waitState(page, (x) => x.lessons.current.step === k, what, 60000);
        if (st.actions) {
          await clickWidget(page, "lesson:perform");
          s = await waitState(page, (x) => x.lessons.current.performed && x.lessons.current.step === k, `${what} performed`, 60000);
          assert.equal(s.error, "", `${what}: no error`);
          // The Node panel's node: after prepare, its meta["quantization_annotation"] is
          // the one torch.ao wrote on the same node.
          if (st.select && st.actions.some((a) => a.kind === "prepare")) {
            assert.equal(s.selected && s.selected.name, st.select, `${what}: the selected node`);
            assert.ok(annotations.has(st.select), `${what}: torch.ao annotates ${st.select}`);
            assert.equal(s.selected.annotation, annotations.get(st.select), `${what}: the annotation`);
            annotated++;
          }
          if (st.actions.some((a) => a.kind === "calibrate"))
            checkObservers(s, golden.calibrate[calibrations++], what);
          if (st.expect && st.expect.parity === "differs") {
            assert.ok(s.run && Array.isArray(s.run.layers) && s.run.layers.length > 0, `${what}: the per-layer table`);
            // torch.ao's converted module against the float one, layer by layer
            assert.deepEqual(s.run.layers.map((l) => l.node), golden.layers.map((l) => l.node), `${what}: the layers`);
            for (const [i, l] of golden.layers.entries())
              assert.ok(Math.abs(s.run.layers[i].sqnr_db - l.sqnr_db) <= 0.05, `${what}: ${l.node} SQNR ${s.run.layers[i].sqnr_db} vs torch.ao ${l.sqnr_db}`);
          }
        }
        // as a learner does: scroll the lesson's text to the option, then click it
        await clickRevealed(page, "lesson:option:" + st.check.answer);
        s = await waitState(page, (x) => x.lessons.current.correct === true, `${what} right answer`);
        await page.screenshot({ path: path.join(shots, `${lang}-${String(k).padStart(2, "0")}.png`) });
        if (k < steps.length) await clickWidget(page, "lesson:next");
      }
      assert.equal(calibrations, golden.calibrate.length);
      assert.equal(annotated, 1, `${lang}: the prepare step shows an annotation`);
      s = await waitState(page, (x) => x.lessons.list[0].done.length === steps.length, `${lang}: every step done`);
      // The folder holds its own graphs: nothing is fetched that is not there.
      assert.deepEqual(errors, [], `${lang}: console errors`);
    }
  } finally {
    srv.close();
    fs.rmSync(site, { recursive: true, force: true });
  }
});

module.exports = { list };
