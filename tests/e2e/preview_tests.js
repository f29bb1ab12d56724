// Browser test of a dropped lesson file (issue 24, "A dropped .md lesson file
// previews in the page as a lesson ... with the check's messages shown on the
// page"), run by tests/e2e/run.js. A teacher drops their lesson together with the
// graph it names (not on the site): it opens as a lesson and the page shows what
// `pt2lab lesson check` says of the same files. Then a copy with a claim that does
// not hold (the same graph, dropped before), and a file that does not parse: both
// named with file and line, as the CLI names them. And a lesson dropped alone, whose
// graph the site has (docs/TEACHING.md: "A graph you did not drop is fetched from the
// site, as a course's would be"): on the bare page from the page's assets/graphs/, on a
// page opened with ?course= from the course folder first, the page's folder after.
"use strict";
const assert = require("assert/strict");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { spawnSync } = require("child_process");
const { ROOT, waitState } = require("./lib");
const { serve } = require("./static_server");
const cli = require("./cli");
const { openPage, clickWidget, noErrors } = require("./page_tests");
const { golden, lessonFile, checkAgainstGolden } = require("./lesson_tests");

const list = [];
const test = (name, run) => list.push({ name, run });

// Drops several files at once, as a user drags a selection from a folder.
async function dropFiles(page, files) {
  const items = files.map((f) => ({ name: f.name, bytes: Array.from(f.bytes) }));
  await page.evaluate((items) => {
    const dt = new DataTransfer();
    for (const it of items) dt.items.add(new File([new Uint8Array(it.bytes)], it.name));
    const canvas = document.getElementById("canvas");
    for (const type of ["dragenter", "dragover", "drop"])
      canvas.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, items);
}

test("a dropped lesson file with its graph opens as a lesson and shows pt2lab lesson check's verdict", async (ctx) => {
  // The teacher's folder: M00-4 as their own lesson "my-4", on a graph of their own name.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pt2lab-preview-"));
  const text = fs.readFileSync(path.join(ROOT, "assets/lessons/m00-4.en.md"), "utf8")
    .replace('"id": "m00-4"', '"id": "my-4"')
    .replace("assets/graphs/conv_relu.pt2", "assets/graphs/mine.pt2");
  fs.mkdirSync(path.join(dir, "assets/graphs"), { recursive: true });
  const graph = fs.readFileSync(path.join(ROOT, "assets/graphs/conv_relu.pt2"));
  fs.writeFileSync(path.join(dir, "assets/graphs/mine.pt2"), graph);
  fs.writeFileSync(path.join(dir, "my-4.en.md"), text);
  // What the CLI says of the same files (its summary line is the page's first note).
  const checked = cli.CLI && require("child_process").spawnSync(cli.CLI, ["lesson", "check", path.join(dir, "my-4.en.md")], { encoding: "utf8" });
  assert.equal(checked.status, 0, checked.stderr);
  const summary = checked.stdout.trim().split("\n").pop();
  assert.match(summary, /expectations: all hold$/);

  const page = await openPage(ctx, { locale: "en" });
  await dropFiles(page, [{ name: "my-4.en.md", bytes: Buffer.from(text) }, { name: "mine.pt2", bytes: graph }]);
  let s = await waitState(page, (st) => st.lessons.preview && st.lessons.preview.checked &&
                          st.lessons.current && st.lessons.current.id === "my-4", "the dropped lesson, checked");
  assert.equal(s.lessons.preview.file, "my-4.en.md");
  assert.equal(s.lessons.preview.ok, true, s.lessons.preview.notes);
  assert.equal(s.lessons.preview.notes, summary);
  assert.equal(s.lessons.preview.shown, true);
  assert.equal(s.lessons.current.step, 1);
  assert.ok(s.lessons.list.some((l) => l.id === "my-4"), "the lesson list has it");
  assert.ok(s.widgets["lesson:preview"], "the lesson panel says it is a preview");
  assert.notEqual(s.file, "mine.pt2", "the graph dropped with the lesson is the lesson's, not opened as the file");
  // It walks as any lesson: step 1's button runs on the dropped graph.
  await clickWidget(page, "lesson:perform");
  s = await waitState(page, (st) => st.lessons.current.performed, "step 1 performed");
  await page.screenshot({ path: path.join(ROOT, "build/e2e/lesson-preview.png") });
  noErrors(page);

  // A claim that does not hold: the insert step claims lint "error". The graph came
  // with the first drop; the page names the file and the claim's line, as the CLI does.
  const claim = '"expect": {"lint": "ok", "added": ["activation_post_process_0"]';
  assert.ok(text.includes(claim));
  const broken = text.replace(claim, claim.replace('"ok"', '"error"'));
  fs.writeFileSync(path.join(dir, "my-4.en.md"), broken);
  const cliBad = require("child_process").spawnSync(cli.CLI, ["lesson", "check", path.join(dir, "my-4.en.md")], { encoding: "utf8" });
  assert.equal(cliBad.status, 1);
  const problem = cliBad.stderr.trim().split("\n")[0].replace(dir + "/", "");
  assert.match(problem, /^my-4\.en\.md:\d+: step \d+ .*expect lint error does not hold/);
  await dropFiles(page, [{ name: "my-4.en.md", bytes: Buffer.from(broken) }]);
  s = await waitState(page, (st) => st.lessons.preview && st.lessons.preview.checked && !st.lessons.preview.ok,
                      "the broken copy, checked");
  const notes = s.lessons.preview.notes.split("\n");
  assert.match(notes[0], /1 do not hold, 0 other problems$/);
  assert.equal(notes[1], problem);

  // A file that does not parse: the error names the file and line; the lesson stays.
  await dropFiles(page, [{ name: "my-4.en.md", bytes: Buffer.from(text.replace("```step", "```stepp")) }]);
  s = await waitState(page, (st) => /^my-4\.en\.md: line \d+: step .* has no ```step block/.test(st.error), "the parse error");
  assert.equal(s.lessons.current.id, "my-4");
  fs.rmSync(dir, { recursive: true, force: true });
});

// M00-4 (English) as a teacher's own lesson `id`, on the graph `graph` (a path the
// lesson's graphs line names).
function myLesson(id, graph) {
  return fs.readFileSync(path.join(ROOT, "assets/lessons/m00-4.en.md"), "utf8")
    .replace('"id": "m00-4"', `"id": "${id}"`)
    .replace("assets/graphs/conv_relu.pt2", graph);
}

// The summary line `pt2lab lesson check FILE` prints (the check must hold).
function checkSummary(file) {
  const r = spawnSync(cli.CLI, ["lesson", "check", file], { encoding: "utf8" });
  assert.equal(r.status, 0, `pt2lab lesson check ${file}: ${r.stdout}${r.stderr}`);
  const summary = r.stdout.trim().split("\n").pop();
  assert.match(summary, /^1 lessons \(1 files\), 12 steps, \d+ expectations: all hold$/);
  return summary;
}

// The URL paths (and statuses) the page asked for, from now on.
function responses(page) {
  const seen = [];
  page.on("response", (r) => seen.push([new URL(r.url()).pathname, r.status()]));
  return seen;
}

// Waits for the dropped lesson `id` checked as the CLI checks it, then walks every
// step: each button pressed, the page against the golden torch wrote for M00-4.
async function walkPreview(page, id, file, summary, what) {
  let s = await waitState(page, (st) => st.lessons.preview && st.lessons.preview.checked &&
                          st.lessons.current && st.lessons.current.id === id && st.nodes.some((n) => n.id),
                          `${what}: the dropped lesson, checked`);
  assert.equal(s.lessons.preview.file, file);
  assert.equal(s.lessons.preview.ok, true, s.lessons.preview.notes);
  assert.equal(s.lessons.preview.notes, summary, `${what}: the page's check says what the CLI says`);
  assert.equal(s.lessons.preview.shown, true);
  assert.equal(s.error, "");
  const steps = lessonFile("m00-4", "en").steps, g = golden("m00-4");
  for (let k = 1; k <= steps.length; k++) {
    s = await waitState(page, (x) => x.lessons.current.step === k, `${what}: step ${k}`);
    if (steps[k - 1].actions) {
      await clickWidget(page, "lesson:perform");
      s = await waitState(page, (x) => x.lessons.current.performed && x.lessons.current.step === k, `${what}: step ${k} performed`);
    }
    checkAgainstGolden(s, g, k, `${what} #${id}/${k}`);
    if (k < steps.length) await clickWidget(page, "lesson:next");
  }
  return s;
}

test("a dropped lesson file alone opens a graph the site has: from the page's folder, and with ?course= from the course folder", async (ctx) => {
  // Inside the clone, as a teacher's folder in a clone would be: the CLI finds the
  // page's graphs in the folders above (the clone's assets/graphs/).
  fs.mkdirSync(path.join(ROOT, "build/e2e"), { recursive: true });
  const site = fs.mkdtempSync(path.join(ROOT, "build/e2e/preview-"));
  try {
    // The bare page: the lesson names assets/graphs/conv_relu.pt2, dropped without it.
    const text = myLesson("my-4", "assets/graphs/conv_relu.pt2");
    fs.writeFileSync(path.join(site, "my-4.en.md"), text);
    const summary = checkSummary(path.join(site, "my-4.en.md"));
    let page = await openPage(ctx, { locale: "en" });
    let seen = responses(page);
    await dropFiles(page, [{ name: "my-4.en.md", bytes: Buffer.from(text) }]);
    await walkPreview(page, "my-4", "my-4.en.md", summary, "bare page");
    assert.deepEqual(seen.filter(([p]) => p.endsWith(".pt2")), [["/assets/graphs/conv_relu.pt2", 200]],
                     "the graph came from the page's own folder");
    noErrors(page);

    // A course beside the page (site/lab = dist, site/my_course), with a graph of its
    // own (mine.pt2, not on the page) that a lesson dropped alone names.
    const course = path.join(site, "my_course");
    fs.mkdirSync(path.join(course, "assets/graphs"), { recursive: true });
    fs.copyFileSync(path.join(ctx.dist, "assets/graphs/conv_relu.pt2"), path.join(course, "assets/graphs/mine.pt2"));
    for (const lang of ["zh-TW", "en"])
      fs.writeFileSync(path.join(course, `course-4.${lang}.md`),
                       fs.readFileSync(path.join(ROOT, "assets/lessons", `m00-4.${lang}.md`), "utf8")
                         .replace('"id": "m00-4"', '"id": "course-4"'));
    const check = spawnSync(cli.CLI, ["lesson", "check", course], { encoding: "utf8" });
    assert.equal(check.status, 0, "pt2lab lesson check: " + check.stdout + check.stderr);
    const mine = myLesson("my-5", "assets/graphs/mine.pt2");
    fs.writeFileSync(path.join(course, "my-5.en.md"), mine);
    const mineSummary = checkSummary(path.join(course, "my-5.en.md"));
    fs.symlinkSync(ctx.dist, path.join(site, "lab"));
    const srv = await serve(site);
    try {
      page = await openPage(ctx, { locale: "en", base: srv.url + "lab/?course=../my_course/" });
      await waitState(page, (st) => st.lessons.course === srv.url + "my_course/" &&
                      st.lessons.list.some((l) => l.id === "course-4"), "the course's lessons");
      seen = responses(page);
      await dropFiles(page, [{ name: "my-5.en.md", bytes: Buffer.from(mine) }]);
      await walkPreview(page, "my-5", "my-5.en.md", mineSummary, "?course=");
      assert.deepEqual(seen.filter(([p]) => p.endsWith(".pt2")), [["/my_course/assets/graphs/mine.pt2", 200]],
                       "the graph came from the course folder");
      // One the course does not hold (conv_relu.pt2): the course folder, then the page's.
      seen.length = 0;
      await dropFiles(page, [{ name: "my-4.en.md", bytes: Buffer.from(text) }]);
      let s = await waitState(page, (st) => st.lessons.preview && st.lessons.preview.checked &&
                              st.lessons.current && st.lessons.current.id === "my-4" && st.nodes.some((n) => n.id),
                              "?course=: the page's graph, checked");
      assert.equal(s.lessons.preview.ok, true, s.lessons.preview.notes);
      assert.equal(s.lessons.preview.notes, summary);
      assert.deepEqual(seen.filter(([p]) => p.endsWith(".pt2")),
                       [["/my_course/assets/graphs/conv_relu.pt2", 404], ["/lab/assets/graphs/conv_relu.pt2", 200]],
                       "the course folder first, then the page's");
      await clickWidget(page, "lesson:perform");
      s = await waitState(page, (st) => st.lessons.current.performed, "?course=: step 1 of the page's graph");
      checkAgainstGolden(s, golden("m00-4"), 1, "?course= #my-4/1");
      assert.deepEqual(page.errors.filter((e) => !/404/.test(e)), [], "no console errors but the fallback's 404");
    } finally {
      srv.close();
    }
  } finally {
    fs.rmSync(site, { recursive: true, force: true });
  }
});

module.exports = { list };
