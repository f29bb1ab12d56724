// The lessons in the browser (run by tests/e2e/run.js): every step of every
// lesson in both languages through real input (the lesson list, the step's
// button, the check's options, Next and the arrow keys), the state hook after
// each step against the lesson-engine goldens that real PyTorch wrote
// (tests/golden/lessons, tools/lesson_goldens.py), deep links on load and on
// hashchange, progress and language across a reload, the HTML text view, no
// console errors, and a screenshot per step in build/e2e/lessons/.
"use strict";
const assert = require("assert/strict");
const fs = require("fs");
const path = require("path");
const os = require("os");
const { spawnSync } = require("child_process");
const { ROOT, serve, state, waitState } = require("./lib");
const cli = require("./cli");
const { openPage, clickAt, clickWidget, noErrors } = require("./page_tests");

const LANGS = ["zh-TW", "en"];
const golden = (id) => JSON.parse(fs.readFileSync(path.join(ROOT, "tests/golden/lessons", id + ".json"), "utf8"));
// The lessons in list order, read from the files themselves: ids, step titles
// (the "## " headings) and each step block's JSON (button, check answer).
function lessonFile(id, lang) {
  const text = fs.readFileSync(path.join(ROOT, "assets/lessons", `${id}.${lang}.md`), "utf8");
  const titles = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1].trim());
  const steps = [...text.matchAll(/^```step\n([\s\S]*?)^```$/gm)].map((m) => JSON.parse(m[1]));
  const order = JSON.parse(/^```lesson\n([\s\S]*?)^```$/m.exec(text)[1]).order;
  return { id, titles, steps, order };
}
const LESSONS = fs.readdirSync(path.join(ROOT, "assets/lessons"))
  .filter((n) => n.endsWith(".zh-TW.md")).map((n) => n.replace(".zh-TW.md", ""))
  .map((id) => lessonFile(id, "zh-TW")).sort((a, b) => a.order - b.order).map((l) => l.id);

// Node names of a graph torch printed (str(graph)): "%name : ..." lines, then output.
function goldenNames(text) {
  return [...text.matchAll(/^\s+%(\w+) :/gm)].map((m) => m[1]).concat(["output"]);
}
const pageNames = (s) => s.nodes.filter((n) => n.id).map((n) => n.name);
// A graph as torch left it after step k: the golden records the graphs a step
// shows or touches, so the latest record at or before k (null: never recorded).
function goldenGraphAt(g, key, k) {
  for (let i = k; i >= 1; i--) if (g.steps[i - 1].graphs[key]) return g.steps[i - 1].graphs[key];
  return null;
}

// After step k (performed): the shown graph, the compare graphs, lint and every
// action's parity and torch error, each against what torch did (golden step k).
function checkAgainstGolden(s, g, k, what) {
  const cur = s.lessons.current;
  const gs = g.steps[k - 1];
  assert.equal(gs.index, k);
  const key = cur.graph;
  const form = cur.view === "ExportedProgram" ? "program_graph" : "module_graph";
  assert.ok(gs.graphs[key], `${what}: the golden records graph ${key}`);
  assert.deepEqual(pageNames(s), goldenNames(gs.graphs[key][form]), `${what}: nodes of ${key} (${cur.view})`);
  for (const c of cur.compare) {
    if (!gs.graphs[c.key]) continue;
    const f = c.view === "ExportedProgram" ? "program_graph" : "module_graph";
    assert.deepEqual(c.nodes, goldenNames(gs.graphs[c.key][f]), `${what}: nodes of compare graph ${c.key}`);
  }
  for (const [gk, gg] of Object.entries(gs.graphs)) {
    if (!(gk in cur.lint) || gg.lint === undefined) continue; // symbolic_trace graphs: no lint recorded
    if (gg.lint === "ok") assert.equal(cur.lint[gk], "", `${what}: lint of ${gk} passes`);
    else assert.equal(cur.lint[gk], gg.lint, `${what}: lint of ${gk} fails as torch's does`);
  }
  if (!gs.actions.length) return;
  assert.ok(cur.report, `${what}: the step's actions ran`);
  assert.equal(cur.report.actions.length, gs.actions.length, `${what}: actions`);
  assert.equal(cur.report.changed, gs.changed, `${what}: whether the step changed anything`);
  gs.actions.forEach((ga, i) => {
    const pa = cur.report.actions[i];
    assert.equal(pa.kind, ga.kind);
    assert.equal(pa.torch_error_type, ga.torch_error ? ga.torch_error.type : "", `${what}: action ${i} torch error`);
    if (ga.parity) {
      assert.equal(pa.parity.length, ga.parity.length);
      ga.parity.forEach((gp, j) => {
        assert.equal(pa.parity[j].bit_identical, gp.bit_identical, `${what}: action ${i} output ${j} bit-identical`);
        assert.ok(Math.abs(pa.parity[j].max_abs - gp.max_abs) <= 1e-5,
          `${what}: action ${i} output ${j} max |diff| ${pa.parity[j].max_abs} vs torch ${gp.max_abs}`);
      });
    }
  });
  // A step that ran several graphs says whether their outputs agree, as torch's do.
  const torchOuts = gs.actions.filter((ga) => ga.outputs).map((ga) => JSON.stringify(ga.outputs));
  if (torchOuts.length >= 2) {
    const same = torchOuts.every((o) => o === torchOuts[0]);
    assert.ok(cur.report.runs_compared, `${what}: the runs set against each other`);
    assert.equal(cur.report.runs_compared.runs, torchOuts.length, `${what}: runs compared`);
    assert.equal(cur.report.runs_compared.bit_identical, same, `${what}: the runs' outputs ${same ? "agree" : "differ"} as torch's`);
  } else {
    assert.equal(cur.report.runs_compared, undefined, `${what}: one run, nothing to set against it`);
  }
}

// The state once a widget was drawn at the same place on two frames: the hook's
// widget rectangles are those of the last frame drawn, which may predate the
// last request (the step's text grows when its button ran).
async function settled(page, name) {
  let last = null;
  for (let i = 0; i < 60; i++) {
    const s = await waitState(page, (st) => st.widgets[name] && st.widgets["lesson:prev"], `widget ${name}`);
    if (last && last.frames !== s.frames && JSON.stringify(last.widgets[name]) === JSON.stringify(s.widgets[name])) return s;
    if (last && last.frames === s.frames && JSON.stringify(last.widgets[name]) === JSON.stringify(s.widgets[name]) && i > 3) return s;
    last = s;
    await page.waitForTimeout(40);
  }
  throw new Error(`widget ${name} does not settle`);
}

// Scrolls the lesson panel (mouse wheel over it) until a widget is inside it
// and above the footer; returns its rectangle.
async function reveal(page, name) {
  for (let i = 0; i < 40; i++) {
    const s = await settled(page, name);
    // The part of the widget on screen; `whole` when the lesson's scrolling text cuts it.
    const seen = s.widgets[name], r = seen.whole || seen, panel = s.widgets["panel:lesson"];
    const bottom = (s.widgets["lesson:perform"] || s.widgets["lesson:prev"]).y - 8;
    const top = s.widgets["lesson:counter"].y + 40;
    if (!seen.whole && r.y >= top && r.y + r.h <= bottom) return r;
    await page.mouse.move(panel.x + panel.w / 2, (top + bottom) / 2);
    const want = r.y < top ? r.y - top - 20 : r.y + r.h - bottom + 20;
    await page.mouse.wheel(0, Math.sign(want) * Math.min(Math.abs(want), 400));
    await page.waitForTimeout(60);
  }
  throw new Error(`could not scroll ${name} into view`);
}

async function clickRevealed(page, name) {
  const r = await reveal(page, name);
  await clickAt(page, r.x + r.w / 2, r.y + r.h / 2);
}

async function openLessonFromList(page, id) {
  const s = await state(page);
  const name = "lesson:open:" + id;
  if (s.lessons.current) {
    // The combo in the lesson panel: its popup is placed on the frame after it
    // appears, so wait until the entry stays put.
    await clickWidget(page, "lesson:select");
    let last = null;
    for (let i = 0; i < 40; i++) {
      const r = (await waitState(page, (st) => st.widgets[name], name)).widgets[name];
      if (last && JSON.stringify(last) === JSON.stringify(r)) break;
      last = r;
      await page.waitForTimeout(80);
    }
    await clickAt(page, last.x + last.w / 2, last.y + last.h / 2);
  } else {
    await clickWidget(page, name);
  }
  await waitState(page, (st) => st.lessons.current && st.lessons.current.id === id, `lesson ${id} open`);
}

async function stepShot(ctx, page, name) {
  const dir = path.join(ctx.shots, "lessons");
  fs.mkdirSync(dir, { recursive: true });
  await page.mouse.move(700, 2); // no tooltip in the way
  await page.waitForTimeout(40);
  await page.screenshot({ path: path.join(dir, name) });
}

const list = [];
const test = (name, run) => list.push({ name, run });

test("lessons: every step of every lesson in both languages, against the goldens", async (ctx) => {
  const page = await openPage(ctx, { hash: "#" + LESSONS[0] + "/1" });
  await waitState(page, (s) => s.lessons.current, "the first lesson");
  let steps = 0;
  const t0 = Date.now();
  for (const lang of LANGS) {
    await clickWidget(page, "lesson:lang:" + lang);
    await waitState(page, (s) => s.lessons.lang === lang, "language " + lang);
    for (const id of LESSONS) {
      const g = golden(id);
      const file = lessonFile(id, lang);
      await openLessonFromList(page, id);
      await clickWidget(page, "lesson:reset");
      // Reset forgets the progress (of the other language's walk) and reopens the graphs.
      let s = await waitState(page, (st) => st.lessons.current.step === 1 && !st.lessons.current.performed &&
        st.lessons.list.find((l) => l.id === id).done.length === 0, "reset");
      for (let k = 1; k <= file.steps.length; k++) {
        const what = `${lang} #${id}/${k}`;
        const st = file.steps[k - 1];
        s = await waitState(page, (x) => x.lessons.current.step === k, what);
        assert.equal(s.lessons.current.step_title, file.titles[k - 1], `${what}: title`);
        assert.equal(await page.evaluate(() => location.hash), `#${id}/${k}`, `${what}: the hash follows`);
        if (st.actions) {
          assert.equal(s.lessons.current.button, st.button);
          await clickWidget(page, "lesson:perform");
          s = await waitState(page, (x) => x.lessons.current.performed && x.lessons.current.step === k, `${what} performed`);
        }
        checkAgainstGolden(s, g, k, what);
        // The check by click: in the first language a wrong option first (the native
        // smoke test does both in both languages), then the right one.
        if (lang === LANGS[0]) {
          const wrong = st.check.answer === 0 ? 1 : 0;
          await clickRevealed(page, "lesson:option:" + wrong);
          await waitState(page, (x) => x.lessons.current.answer === wrong && x.lessons.current.correct === false, `${what} wrong answer`);
        }
        await clickRevealed(page, "lesson:option:" + st.check.answer);
        s = await waitState(page, (x) => x.lessons.current.correct === true, `${what} right answer`);
        await reveal(page, "lesson:feedback");
        await stepShot(ctx, page, `${id}-${lang}-${String(k).padStart(2, "0")}.png`);
        steps++;
        if (k === file.steps.length) break;
        if (k % 2) await clickWidget(page, "lesson:next");
        else {
          await page.locator("#canvas").focus();
          await page.keyboard.press("ArrowRight");
        }
      }
      s = await state(page);
      assert.equal(s.lessons.list.find((l) => l.id === id).done.length, file.steps.length, `${lang} ${id}: every step done`);
    }
  }
  assert.equal(steps, 82);
  console.log(`       walked ${steps} steps in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  noErrors(page);
});

test("lessons: a first visit is welcomed and offered M00; the list is above the fold at 1280 x 720; the last step of a lesson offers the next", async (ctx) => {
  const page = await openPage(ctx, { viewport: { width: 1280, height: 720 } });
  let s = await waitState(page, (st) => st.widgets["lesson:open:" + LESSONS[0]], "the lesson list");
  const inView = (r) => r && !r.whole && r.h > 0 && r.y + r.h <= 720;
  for (const id of LESSONS) assert.ok(inView(s.widgets["lesson:open:" + id]), `the lesson list is above the fold: ${id}`);
  // The welcome says what the page is, in the list (never over the graph), and starts M00.
  for (const w of ["welcome", "welcome:start", "welcome:dismiss"]) assert.ok(inView(s.widgets[w]), `${w} above the fold`);
  const graph = s.widgets["panel:graph"];
  assert.ok(s.widgets.welcome.x + s.widgets.welcome.w <= graph.x + 1, "the welcome is beside the graph, not over it");
  await clickWidget(page, "welcome:start");
  s = await waitState(page, (st) => st.lessons.current && st.lessons.current.id === LESSONS[0] &&
                      st.lessons.current.step === 1, "Start with M00");
  assert.ok(!s.widgets.welcome, "no welcome once a lesson is begun");
  // Not now: it stays away, across a reload.
  const p2 = await openPage(ctx, { viewport: { width: 1280, height: 720 } });
  await clickWidget(p2, "welcome:dismiss");
  await waitState(p2, (st) => !st.widgets.welcome && st.widgets["lesson:open:" + LESSONS[0]], "Not now");
  await p2.reload();
  s = await waitState(p2, (st) => st.ready && st.frames > 3 && st.widgets["lesson:open:" + LESSONS[0]], "reloaded");
  assert.ok(!s.widgets.welcome, "dismissed for good");
  // The first lesson's last step leads on to the next lesson.
  const first = lessonFile(LESSONS[0], "zh-TW");
  await page.evaluate((h) => { location.hash = h; }, `#${LESSONS[0]}/${first.steps.length}`);
  s = await waitState(page, (st) => st.lessons.current && st.lessons.current.step === first.steps.length &&
                      st.widgets["lesson:next-lesson"], "the last step's Next lesson");
  await clickWidget(page, "lesson:next-lesson");
  await waitState(page, (st) => st.lessons.current.id === LESSONS[1] && st.lessons.current.step === 1, "the next lesson");
  noErrors(page);
  noErrors(p2);
});

test("lessons: deep links on load, on hashchange and across a reload; progress and language kept", async (ctx) => {
  const page = await openPage(ctx, { hash: "#m00-4/3" });
  let s = await waitState(page, (st) => st.lessons.current && st.lessons.current.step === 3, "#m00-4/3");
  assert.equal(s.lessons.current.id, "m00-4");
  assert.equal(s.lessons.lang, "zh-TW", "Traditional Chinese by default");
  assert.equal(s.lessons.current.performed, false);
  // Standing at step 3 means steps 1 and 2 done: golden step 2's graph.
  const g4 = golden("m00-4");
  assert.deepEqual(pageNames(s), goldenNames(goldenGraphAt(g4, "main", 2).module_graph), "#m00-4/3: the graph after step 2");
  assert.equal(await page.evaluate(() => location.hash), "#m00-4/3");
  // hashchange (a link inside the page, the address bar).
  await page.evaluate(() => { location.hash = "#m00-2/4"; });
  s = await waitState(page, (st) => st.lessons.current && st.lessons.current.id === "m00-2" && st.lessons.current.step === 4, "#m00-2/4");
  const g2 = golden("m00-2");
  const cur = s.lessons.current;
  const form = cur.view === "ExportedProgram" ? "program_graph" : "module_graph";
  assert.deepEqual(pageNames(s), goldenNames(goldenGraphAt(g2, cur.graph, 3)[form]), "#m00-2/4: the graph after step 3");
  assert.equal(cur.compare.length, 1, "the step's compare graph beside it");
  await stepShot(ctx, page, "deep-link-m00-2-4.png");
  // Keys: back a step, the hash follows; answer, switch language, reload.
  await page.locator("#canvas").focus();
  await page.keyboard.press("ArrowLeft");
  s = await waitState(page, (st) => st.lessons.current.step === 3, "ArrowLeft");
  assert.equal(await page.evaluate(() => location.hash), "#m00-2/3");
  const st3 = lessonFile("m00-2", "en").steps[2];
  // Answered before the step's button ran: a prediction, judged once the button has run.
  await clickRevealed(page, "lesson:option:" + st3.check.answer);
  s = await waitState(page, (x) => x.lessons.current.answer === st3.check.answer && x.lessons.current.predicted === true, "predicted");
  assert.deepEqual(s.lessons.list.find((l) => l.id === "m00-2").done, [], "a prediction alone does not finish the step");
  await clickWidget(page, "lesson:perform");
  await waitState(page, (x) => x.lessons.current.performed && x.lessons.current.predicted === false &&
    x.lessons.current.correct === true, "the button ran: the prediction judged");
  await clickWidget(page, "lesson:lang:en");
  s = await waitState(page, (x) => x.lessons.lang === "en", "English");
  assert.equal(s.lessons.current.step, 3, "the language switch keeps the step");
  assert.equal(s.lessons.current.step_title, lessonFile("m00-2", "en").titles[2]);
  assert.equal(s.lessons.current.answer, st3.check.answer, "and the answer");
  await page.reload();
  s = await waitState(page, (x) => x.lessons && x.lessons.current && x.lessons.current.step === 3, "after the reload");
  assert.equal(s.lessons.current.id, "m00-2");
  assert.equal(s.lessons.lang, "en", "the language is remembered");
  assert.deepEqual(s.lessons.list.find((l) => l.id === "m00-2").done, [3], "the progress is remembered");
  assert.equal(s.lessons.current.answer, st3.check.answer);
  // Leaving the lesson goes back to the file the page had open.
  await clickWidget(page, "lesson:leave");
  s = await waitState(page, (x) => !x.lessons.current, "left the lesson");
  assert.equal(s.file, "conv_bn_relu_eval.pt2");
  assert.equal(await page.evaluate(() => location.hash), "#file=conv_bn_relu_eval.pt2");
  noErrors(page);
});

test("lessons: the text view mirrors the step as HTML text in both languages", async (ctx) => {
  const page = await openPage(ctx, { hash: "#m00-4/2" });
  await waitState(page, (st) => st.lessons.current && st.lessons.current.step === 2, "#m00-4/2");
  assert.ok(await page.locator("#text-view").isHidden(), "hidden until asked for");
  await clickWidget(page, "lesson:textview");
  await page.locator("#text-view").waitFor({ state: "visible" });
  const zh = lessonFile("m00-4", "zh-TW");
  assert.equal(await page.locator("#text-view h3").textContent(), zh.titles[1]);
  assert.ok((await page.locator("#text-view pre code").first().textContent()).includes("inserting_after(relu)"), "code as text");
  assert.equal(await page.locator("#text-view .check input[type=radio]").count(), zh.steps[1].check.options.length);
  // The canvas narrows beside it, and stays usable.
  const w = await page.evaluate(() => document.getElementById("canvas").getBoundingClientRect().width);
  assert.ok(w < 1440 - 300, "the canvas makes room: " + w);
  await waitState(page, (st) => st.widgets["panel:graph"] && st.widgets["lesson:perform"], "the page after the resize");
  await clickWidget(page, "lesson:perform");
  await waitState(page, (st) => st.lessons.current.performed, "performed");
  await page.waitForFunction(() => document.querySelector("#text-view-perform").textContent.startsWith("已執行："));
  await clickRevealed(page, "lesson:option:" + zh.steps[1].check.answer);
  await page.locator("#text-view .feedback").waitFor();
  assert.ok((await page.locator("#text-view .feedback").textContent()).includes("答對了。"));
  await clickWidget(page, "lesson:lang:en");
  const en = lessonFile("m00-4", "en");
  await page.waitForFunction((t) => document.querySelector("#text-view h3").textContent === t, en.titles[1]);
  await clickWidget(page, "lesson:next");
  await page.waitForFunction((t) => document.querySelector("#text-view h3").textContent === t, en.titles[2]);
  await stepShot(ctx, page, "text-view.png");
  await page.locator("#text-view-close").click();
  assert.ok(await page.locator("#text-view").isHidden());
  noErrors(page);
});


// A teacher's course (docs/LESSONS.md, "Hosting a course"): a folder beside the page
// on a plain static host, checked by pt2lab lesson check (which writes its
// index.json), opened with ?course=. Its lessons replace the shipped ones; a graph
// of its own comes from the folder, one it does not hold from the page's folder.
test("a teacher's course folder: ?course= lists its lessons and opens its graphs; a bad value says so", async (ctx) => {
  const site = fs.mkdtempSync(path.join(os.tmpdir(), "pt2lab-course-"));
  try {
    fs.symlinkSync(ctx.dist, path.join(site, "lab"));
    fs.symlinkSync(path.join(ctx.dist, "assets"), path.join(site, "assets")); // the check's "folders above"
    const folder = path.join(site, "my_course");
    fs.mkdirSync(path.join(folder, "assets", "graphs"), { recursive: true });
    fs.copyFileSync(path.join(ctx.dist, "assets/graphs/conv_bn_relu_train.pt2"),
                    path.join(folder, "assets/graphs/teacher_train.pt2"));
    const title = { "zh-TW": "王老師的模式課", en: "Ms Wang's lesson on modes" };
    for (const lang of LANGS) {
      let text = fs.readFileSync(path.join(ROOT, "assets/lessons", `m00-2.${lang}.md`), "utf8");
      text = text.replace(/^# .*$/m, "# " + title[lang])
                 .replace('"assets/graphs/conv_bn_relu_train.pt2"', '"assets/graphs/teacher_train.pt2"');
      fs.writeFileSync(path.join(folder, `m00-2.${lang}.md`), text);
    }
    const check = spawnSync(cli.CLI, ["lesson", "check", folder], { encoding: "utf8" });
    assert.equal(check.status, 0, "pt2lab lesson check: " + check.stdout + check.stderr);
    assert.ok(fs.existsSync(path.join(folder, "index.json")), "the check wrote index.json");
    const srv = await serve(site);
    try {
      const page = await openPage(ctx, { base: srv.url + "lab/?course=../my_course/", hash: "#m00-2/2" });
      let s = await waitState(page, (st) => st.lessons.current && st.lessons.current.step === 2, "the course's m00-2, step 2");
      assert.equal(s.lessons.course, srv.url + "my_course/");
      assert.deepEqual(s.lessons.list.map((l) => l.title), [title["zh-TW"]], "the course's lessons, not the shipped ones");
      assert.equal(s.lessons.error, "");
      // Both graphs opened: the one the folder holds, and the page's own for the other.
      const log = s.log.join("\n");
      assert.match(log, /my_course\/assets\/graphs\/conv_bn_relu_eval\.pt2: .*; fetching assets\/graphs\/conv_bn_relu_eval\.pt2/);
      assert.ok(!/teacher_train\.pt2: /.test(log), "the folder's own graph came from the folder");
      await clickWidget(page, "lesson:perform");
      s = await waitState(page, (st) => st.lessons.current.performed, "step 2's button");
      assert.equal(s.error, "");
      // What a 404 leaves in the console is the fallback's, nothing else.
      assert.deepEqual(page.errors.filter((e) => !/404/.test(e)), []);
      // A value that is not a folder of this site: the page says so.
      const bad = await openPage(ctx, { base: srv.url + "lab/?course=https://example.com/course/", expectFailure: true });
      await bad.waitForSelector("#failure", { state: "visible" });
      assert.match(await bad.textContent("#failure-text"), /is not a folder of this site/);
      // A folder without index.json: named, with what writes it.
      const none = await openPage(ctx, { base: srv.url + "lab/?course=nothing/", expectFailure: true });
      await none.waitForSelector("#failure", { state: "visible" });
      assert.match(await none.textContent("#failure-text"), /nothing\/index\.json: the server answered 404 \(run pt2lab lesson check/);
    } finally {
      srv.close();
    }
  } finally {
    fs.rmSync(site, { recursive: true, force: true });
  }
});

module.exports = { list, golden, lessonFile, goldenNames, goldenGraphAt, pageNames, checkAgainstGolden, clickRevealed };
