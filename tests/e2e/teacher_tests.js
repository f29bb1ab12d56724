// Browser test of issue 24's teacher kit (run by tests/e2e/run.js): a teacher
// follows docs/TEACHING.md on a fresh folder, with the guide's own commands (its
// indented code blocks, read from the file: the guide and the test cannot drift;
// my_course/, site/ and dist are mapped to the test's folders). Export the template's
// model with tools/teacher_export.py under real torch 2.14.1 (the Debian sid root of
// scripts/torch_env.sh) and see it print the guide's line, check what the CLI reads in
// the file (the guide's sample input and eager reference, run parity), copy the
// template lesson into the folder the guide shows and write a lesson of one's own from
// it (title, introduction, summary and step 1's check rewritten in both languages),
// break it once to see the check refuse it with the guide's messages, check it (the
// guide's summary, index.json written), copy the page and the course side by side as
// the guide does, serve them under a sub-path of a plain static host, open the guide's
// ?course=, walk both steps with real clicks against what the CLI says about the same
// file, then reload with the server gone: the service worker kept the course. Without
// a torch root the test says so and passes, unless PT2LAB_REQUIRE_TORCH=1 (as the zoo
// tests do).
"use strict";
const assert = require("assert/strict");
const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");
const { ROOT, waitState, steadyWidget, reloadOffline, torchMissing } = require("./lib");
const { serve } = require("./static_server");
const cli = require("./cli");
const { openPage, clickWidget, noErrors } = require("./page_tests");

const list = [];
const test = (name, run) => list.push({ name, run });

const LANGS = ["zh-TW", "en"];
const PREFIX = "/school/";
const GUIDE = path.join(ROOT, "docs/TEACHING.md");
const GUIDE_CLI = "build/native/src/cli/pt2lab";

// The guide's indented code blocks (commands and what they print), outside its
// fenced blocks: one array of lines per block.
function guideBlocks(file = GUIDE) {
  const blocks = [];
  let fenced = false, cur = null;
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (!fenced && /^ {4}/.test(line) && line.trim()) {
      if (!cur) blocks.push(cur = []);
      cur.push(line.slice(4));
    } else if (line.trim() !== "" || fenced) {
      cur = null;
    }
  }
  return blocks;
}

// The one line of the guide's code blocks that starts with `start`.
function guideLine(start) {
  const found = guideBlocks().flat().filter((l) => l.startsWith(start));
  assert.equal(found.length, 1, `docs/TEACHING.md has one code line starting ${JSON.stringify(start)}: ${found.join(" | ")}`);
  return found[0];
}

// The guide's block whose first line starts with `start`.
function guideBlock(start) {
  const b = guideBlocks().find((x) => x[0].startsWith(start));
  assert.ok(b, `docs/TEACHING.md has a code block starting ${JSON.stringify(start)}`);
  return b;
}

// A text of the guide with its folders made the test's: my_course/ and site/ are
// folders of the test (relative to the clone, which the sid root sees), dist the page.
function mapper(work, dist) {
  const rel = path.relative(ROOT, work);
  return (arg) => arg.replace(/^(my_course|site)(?=\/|$)/, (m) => rel + "/" + m)
    .replace(/^dist$/, dist).replace(GUIDE_CLI, cli.CLI);
}

// Runs one of the guide's command lines (plain words, no quoting) from the clone's root.
function guideRun(line, map) {
  const [cmd, ...args] = line.split(/\s+/).map(map);
  return spawnSync(cmd, args, { cwd: ROOT, encoding: "utf8" });
}

// The lesson's title, step titles and step blocks, read from its files.
function lessonOf(dir, lang) {
  const text = fs.readFileSync(path.join(dir, `my-first.${lang}.md`), "utf8");
  return {
    title: /^# (.+)$/m.exec(text)[1],
    titles: [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1].trim()),
    steps: [...text.matchAll(/^```step\n([\s\S]*?)^```$/gm)].map((m) => JSON.parse(m[1])),
  };
}

// The teacher's own lesson, written over the copied template: a title, an
// introduction and a summary of its own, and a new check for step 1 (its answer is
// the second option, where the template's is the first). Both languages alike.
const OWN = {
  "zh-TW": {
    title: "陳老師的 MLP：先跑再拆",
    intro: "這一課用兩層的 `TinyMLP` 看 export 之後的圖：先用檔案裡的範例輸入執行，和 PyTorch 的輸出比對；再把它拆解到 Core ATen。",
    summary: "陳老師的 MLP：範例輸入、比對，再拆解",
    check: {
      question: "按下按鈕時，圖是用哪一份輸入執行的？",
      options: [
        { text: "頁面每次隨機產生的新輸入", feedback: "不是。隨機輸入每次都不同，就無法和 PyTorch 存下的輸出比對了。" },
        { text: "export 時的範例輸入，torch.export.save 把它存在 .pt2 裡", feedback: "對。它在 data/sample_inputs/model.pt，PyTorch 的參考輸出也是用它算的。" },
        { text: "fc1 的權重", feedback: "權重是圖的參數，不是模型的輸入 x。" },
      ],
      answer: 1,
    },
  },
  en: {
    title: "Ms Chen's MLP: run it, then take it apart",
    intro: "This lesson looks at the graph `torch.export` made of the two-layer `TinyMLP`: run it on the file's sample input against PyTorch's own output, then decompose it to Core ATen.",
    summary: "Ms Chen's MLP: the sample input, parity, then Core ATen",
    check: {
      question: "When you press the button, which input does the graph run on?",
      options: [
        { text: "A new random input the page draws each time", feedback: "No: a random input would differ every time, and nothing stored in the file could be compared with its output." },
        { text: "The example input of the export, which torch.export.save stored in the .pt2", feedback: "Right. It is data/sample_inputs/model.pt, the input PyTorch's reference output was computed from." },
        { text: "The weights of fc1", feedback: "The weights are parameters of the graph, not the model's input x." },
      ],
      answer: 1,
    },
  },
};

// Rewrites the copied template in `dir` into the teacher's lesson (asserting that each
// part it replaces is there).
function writeOwnLesson(dir) {
  for (const lang of LANGS) {
    const file = path.join(dir, `my-first.${lang}.md`), own = OWN[lang];
    let text = fs.readFileSync(file, "utf8");
    const edit = (re, to, what) => {
      assert.match(text, re, `the template's ${what} (${lang})`);
      text = text.replace(re, to);
    };
    edit(/^# .*\n\n.*\n/, `# ${own.title}\n\n${own.intro}\n`, "title and introduction");
    edit(/^ {2}"summary": ".*",$/m, `  "summary": ${JSON.stringify(own.summary)},`, "summary");
    const first = /^```step\n([\s\S]*?)^```$/m.exec(text);
    const step = JSON.parse(first[1]);
    assert.notEqual(step.check.answer, own.check.answer, "the new check has another answer than the template's");
    step.check = own.check;
    text = text.replace(first[0], "```step\n" + JSON.stringify(step, null, 2) + "\n```");
    fs.writeFileSync(file, text);
  }
}

// FNV-1a (64 bits) of float32 values, as the state hook hashes an output's bytes.
function fnv1a64(values) {
  const bytes = new Uint8Array(new Float32Array(values).buffer);
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h.toString(16).padStart(16, "0");
}

const boxes = (s) => s.nodes.filter((n) => n.id).map((n) => n.name);

// Clicks a check's option, scrolling the lesson panel (mouse wheel over it) until the
// option is whole and above the panel's footer.
async function clickOption(page, k) {
  const name = "lesson:option:" + k;
  for (let i = 0; i < 40; i++) {
    const seen = await steadyWidget(page, name);
    const s = await waitState(page, (st) => st.widgets[name] && st.widgets["lesson:prev"], name);
    const r = seen.whole || seen, panel = s.widgets["panel:lesson"];
    const bottom = (s.widgets["lesson:perform"] || s.widgets["lesson:prev"]).y - 8;
    const top = s.widgets["lesson:counter"].y + 40;
    if (!seen.whole && r.y >= top && r.y + r.h <= bottom) {
      await page.mouse.move(r.x + r.w / 2, r.y + r.h / 2);
      await page.waitForTimeout(30);
      await page.mouse.click(r.x + r.w / 2, r.y + r.h / 2);
      return;
    }
    await page.mouse.move(panel.x + panel.w / 2, (top + bottom) / 2);
    const want = r.y < top ? r.y - top - 20 : r.y + r.h - bottom + 20;
    await page.mouse.wheel(0, Math.sign(want) * Math.min(Math.abs(want), 400));
    await page.waitForTimeout(60);
  }
  throw new Error(`could not scroll ${name} into view`);
}

test("docs/TEACHING.zh-TW.md gives the same commands and printouts as docs/TEACHING.md", async () => {
  // The browser test below follows the English guide's blocks; the Chinese guide's
  // must be the very same, so it is followed too.
  const en = guideBlocks(), zh = guideBlocks(path.join(ROOT, "docs/TEACHING.zh-TW.md"));
  assert.ok(en.length >= 8, `the guide has its code blocks (${en.length})`);
  assert.deepEqual(zh, en, "the zh-TW guide's code blocks are the English guide's");
});

test("a teacher follows docs/TEACHING.md: its commands, the sid root's torch, a lesson of their own, check, a sub-path host, both steps, offline", async (ctx) => {
  const why = torchMissing();
  if (why) {
    console.log(`skip   ${why}`);
    return;
  }
  // Inside the clone: the sid root sees the clone (at /pt2lab), nothing else. The
  // guide's my_course/ and site/ are folders of `work`.
  fs.mkdirSync(path.join(ROOT, "build/e2e"), { recursive: true });
  const work = fs.mkdtempSync(path.join(ROOT, "build/e2e/teacher-"));
  const map = mapper(work, ctx.dist);
  try {
    const course = path.join(work, "my_course");
    const site = path.join(work, "site");
    const graph = path.join(course, "assets/graphs/tiny_mlp.pt2");

    // 1. Export: the guide's command with the repository's torch (the sid root's 2.14.1)
    // prints the guide's line.
    const exportLine = guideLine("bash scripts/torch_env.sh run sid python3 tools/teacher_export.py ");
    assert.match(exportLine, /--out my_course\/assets\/graphs\/tiny_mlp\.pt2$/);
    const exp = guideRun(exportLine, map);
    assert.equal(exp.status, 0, "teacher_export.py: " + exp.stdout + exp.stderr);
    assert.equal(exp.stdout.trim(), guideLine("wrote my_course/assets/").replace(/^wrote my_course/, "wrote " + map("my_course")),
                 "it prints what the guide shows");
    assert.match(exp.stdout, /^wrote .*tiny_mlp\.pt2: TinyMLP in eval mode \(seed 0\), torch 2\.14\.1.*, 9 nodes; sample input float32\[3, 4\]; eager reference for linear_1$/m);

    // 2. What pt2lab reads in it (the guide's info and run): how it was made, the
    // sample input and PyTorch's eager output the guide names, the run's verdict.
    const guideOut = (r, what) => {
      assert.equal(r.status, 0, `${what}: ${r.stdout}${r.stderr}`);
      return r.stdout;
    };
    const info = guideOut(guideRun(guideLine(GUIDE_CLI + " info "), map), "pt2lab info");
    const named = /`info` names the sample input \(`([^`]+)`\) and the reference\s+\(`([^`]+)`\)/.exec(fs.readFileSync(GUIDE, "utf8"));
    assert.ok(named, "the guide says what info names");
    const infoLines = info.split("\n").map((l) => l.replace(/\s+/g, " ").trim());
    for (const line of named.slice(1)) assert.ok(infoLines.includes(line), `pt2lab info shows the guide's "${line}": ${info}`);
    assert.match(info, /^made by: +torch\.export of torch 2\.14\.1\S* \(tools\/teacher_export\.py\)$/m);
    assert.match(info, /^model: +TinyMLP, eval mode \(seed 0\)$/m);
    assert.match(info, /^input: +x f32\[3, 4\]$/m);
    assert.match(info, /^reference: +linear_1 f32\[3, 2\] \(PyTorch eager output\)$/m);
    const run = guideOut(guideRun(guideLine(GUIDE_CLI + " run "), map), "pt2lab run");
    assert.match(run, /the file's sample input \(data\/sample_inputs\/model\.pt\)/);
    assert.match(run, /^ +linear_1 +f32\[3, 2\] +max\|diff\| \S+ +max rel \S+ +allclose yes/m);
    assert.match(run, /^ +verdict: (allclose|bit-identical)$/m);
    const nodes = cli.nodes(graph, true);
    const [want] = cli.runOutputs(graph);

    // 3. The template copied with the guide's command: the folder holds what the guide
    // lists. Then the teacher's own lesson written over it.
    guideOut(guideRun(guideLine("cp tools/lesson_template/"), map), "cp");
    const tree = guideBlock("my_course/").slice(1).map((l) => l.trim());
    const files = (dir, pre = "") => fs.readdirSync(dir, { withFileTypes: true })
      .flatMap((e) => e.isDirectory() ? files(path.join(dir, e.name), pre + e.name + "/") : [pre + e.name]);
    assert.deepEqual(files(course).sort(), tree.sort(), "the folder holds what the guide lists");
    writeOwnLesson(course);

    // 4. Check: a broken copy is refused with the guide's messages (file and line), no
    // index.json; the lesson as written passes with the guide's summary and index.json.
    const checkLine = guideLine(GUIDE_CLI + " lesson check ");
    const en = path.join(course, "my-first.en.md");
    const good = fs.readFileSync(en, "utf8");
    fs.writeFileSync(en, good.replace('"removed": ["linear", "linear_1"]', '"removed": ["linear"]'));
    let check = guideRun(checkLine, map);
    assert.equal(check.status, 1, "a claim that does not hold fails the check");
    const errors = guideBlocks().flat().filter((l) => l.startsWith("my_course/my-first.en.md:"));
    const expectRe = (l) => new RegExp("^" + l.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/my_course\//g, map("my_course") + "/")
      .replace(/:\d+:/g, ":\\d+:") + "$", "m");
    for (const l of errors.slice(0, 2)) assert.match(check.stderr, expectRe(l), "the guide's message");
    assert.match(check.stderr, /my-first\.en\.md:\d+: step 2 "Chapter map: the same model in Core ATen": expect removed \[linear\] does not hold: the step gives \[linear, linear_1\]/);
    assert.match(check.stderr, /my-first\.en\.md:\d+: differs from .*my-first\.zh-TW\.md: step 2: expects something different/);
    assert.ok(!fs.existsSync(path.join(course, "index.json")), "no index.json for a course that fails");
    fs.writeFileSync(en, good);
    check = guideRun(checkLine, map);
    assert.equal(check.status, 0, "pt2lab lesson check: " + check.stdout + check.stderr);
    const said = guideBlock("my-first.en.md:14 step 1 ");
    for (const l of said.slice(-2)) assert.match(check.stdout, expectRe(l), "the guide's summary and index.json");
    assert.match(check.stdout, /^1 lessons \(2 files\), 4 steps, 12 expectations: all hold$/m);
    const index = JSON.parse(fs.readFileSync(path.join(course, "index.json"), "utf8"));
    assert.deepEqual(index.lessons.map((l) => [l.id, l.steps, l.graphs.main]), [["my-first", 2, "assets/graphs/tiny_mlp.pt2"]]);

    // 5. The page and the course copied side by side as the guide does, served under a
    // sub-path of a plain static host, opened with the guide's ?course=.
    for (const l of guideBlock("mkdir -p site")) guideOut(guideRun(l, map), l);
    const open = guideLine("http://127.0.0.1:8000/");
    const at = /^http:\/\/127\.0\.0\.1:8000\/(lab\/\?course=\S+\/)$/.exec(open);
    assert.ok(at, "the guide's address: " + open);
    const srv = await serve(site, { prefix: PREFIX });
    try {
      const zh = lessonOf(course, "zh-TW");
      assert.equal(zh.title, OWN["zh-TW"].title, "the page shows the teacher's lesson, not the template");
      assert.deepEqual(zh.steps[0].check, OWN["zh-TW"].check);
      const page = await openPage(ctx, { base: srv.url + at[1], hash: "#my-first/1" });
      let s = await waitState(page, (st) => st.lessons.current && st.lessons.current.step === 1 && st.nodes.some((n) => n.id),
                              "the course's lesson, step 1");
      assert.equal(s.lessons.course, srv.url + "my_course/");
      assert.equal(s.lessons.error, "");
      assert.deepEqual(s.lessons.list.map((l) => [l.id, l.title, l.steps]), [["my-first", zh.title, 2]]);
      assert.equal(s.lessons.current.step_title, zh.titles[0]);
      assert.equal(s.lessons.current.button, zh.steps[0].button);
      // The exported graph, as the CLI reads it (ep.module(): weights are get_attr boxes or drawn inside their reader).
      const inside = s.nodes.flatMap((n) => n.inside || []).concat(s.unused_weights || []);
      assert.deepEqual(boxes(s), nodes.map((n) => n.name).filter((n) => !inside.includes(n)), "the graph's boxes");
      assert.deepEqual(s.lessons.current.highlight, ["linear", "relu", "linear_1"]);
      assert.ok(!srv.log.some((e) => e.path.includes("/lab/assets/graphs/tiny_mlp.pt2")), "the graph came from the course");

      // Step 1: predict, press, judge; the run against the file and PyTorch's eager output.
      const wrong1 = (zh.steps[0].check.answer + 1) % 3;
      await clickOption(page, wrong1);
      await waitState(page, (st) => st.lessons.current.answer === wrong1 && st.lessons.current.predicted === true, "a prediction");
      await clickWidget(page, "lesson:perform");
      s = await waitState(page, (st) => st.lessons.current.performed && st.run, "step 1's run");
      assert.equal(s.lessons.current.correct, false, "the wrong prediction is judged wrong");
      const [act] = s.lessons.current.report.actions;
      assert.equal(act.kind, "run");
      assert.deepEqual(act.parity.map((p) => p.bit_identical), [true], "bit-identical with the file as loaded");
      assert.equal(s.run.inputs.includes("sample"), true, "ran on the file's sample input: " + s.run.inputs);
      assert.deepEqual(s.run.outputs.map((o) => [o.name, o.type]), [["linear_1", "f32[3, 2]"]]);
      assert.equal(s.run.outputs[0].fnv1a64, fnv1a64(want.data.flat(Infinity)), "the output the CLI computes");
      assert.ok(s.run.reference, "parity against PyTorch's eager output, stored in the file");
      assert.equal(s.run.reference.allclose, true);
      assert.ok(s.run.reference.max_abs < 1e-5, "max |diff| vs eager " + s.run.reference.max_abs);
      assert.deepEqual(s.run.reference.outputs.map((o) => o.name), ["linear_1"]);
      await clickOption(page, zh.steps[0].check.answer);
      s = await waitState(page, (st) => st.lessons.current.correct === true, "step 1 answered right");
      assert.deepEqual(s.lessons.list[0].done, [1]);
      await clickWidget(page, "lesson:next");

      // Step 2, the chapter map: decompose to Core ATen and run.
      s = await waitState(page, (st) => st.lessons.current.step === 2, "step 2");
      assert.equal(s.lessons.current.step_title, zh.titles[1]);
      assert.equal(s.lessons.current.quiz, true);
      await clickWidget(page, "lesson:perform");
      s = await waitState(page, (st) => st.lessons.current.performed && boxes(st).includes("addmm_1"), "step 2's decomposition");
      assert.deepEqual(s.lessons.current.report.actions.map((a) => [a.kind, a.changed]), [["decompose", true], ["run", false]]);
      assert.deepEqual(s.lessons.current.report.actions[1].parity.map((p) => p.bit_identical), [true]);
      for (const n of ["permute", "addmm", "relu", "permute_1", "addmm_1"]) assert.ok(boxes(s).includes(n), n + " is drawn");
      assert.ok(!boxes(s).includes("linear"), "linear is gone");
      assert.equal(s.run.outputs[0].fnv1a64, fnv1a64(want.data.flat(Infinity)), "Core ATen gives the same output");
      await clickOption(page, zh.steps[1].check.answer);
      s = await waitState(page, (st) => st.lessons.current.correct === true, "step 2 answered right");
      assert.deepEqual(s.lessons.list[0].done, [1, 2]);
      noErrors(page);

      // 6. Offline: the worker kept the course on this first visit; the server gone, a
      // reload opens it again at step 2 (step 1 performed) and its button works.
      const failed = [];
      page.on("requestfailed", (r) => failed.push(r.url() + ": " + (r.failure() && r.failure().errorText)));
      const off = await reloadOffline(page, srv);
      assert.equal(off.lessons.course, srv.url + "my_course/");
      const kept = await page.evaluate(async () =>
        (await (await caches.open("pt2lab.courses")).keys()).map((r) => r.url).sort());
      assert.deepEqual(kept, ["assets/graphs/tiny_mlp.pt2", "index.json", "my-first.en.md", "my-first.zh-TW.md"]
        .map((f) => srv.url + "my_course/" + f).sort(), "the course's files are kept");
      s = await waitState(page, (st) => st.lessons.current && st.lessons.current.step === 2 && st.nodes.some((n) => n.id),
                          "the course offline, step 2");
      assert.deepEqual(s.lessons.list.map((l) => l.title), [zh.title]);
      assert.deepEqual(s.lessons.list[0].done, [1, 2], "the progress survived the reload");
      await clickWidget(page, "lesson:perform");
      s = await waitState(page, (st) => st.lessons.current.performed && boxes(st).includes("addmm_1"), "step 2 offline");
      assert.equal(s.run.reference.allclose, true);
      assert.equal(s.error, "");
      assert.deepEqual(failed, [], "every request offline was answered from the worker's caches");
      noErrors(page);
    } finally {
      srv.close();
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
});

module.exports = { list };
