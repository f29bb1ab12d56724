// Browser test of a dropped lesson file (issue 24, "A dropped .md lesson file
// previews in the page as a lesson ... with the check's messages shown on the
// page"), run by tests/e2e/run.js. A teacher drops their lesson together with the
// graph it names (not on the site): it opens as a lesson and the page shows what
// `pt2lab lesson check` says of the same files. Then a copy with a claim that does
// not hold (the same graph, dropped before), and a file that does not parse: both
// named with file and line, as the CLI names them.
"use strict";
const assert = require("assert/strict");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { ROOT, waitState } = require("./lib");
const cli = require("./cli");
const { openPage, clickWidget, noErrors } = require("./page_tests");

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

module.exports = { list };
