// Browser test of issue 24's teacher kit (run by tests/e2e/run.js): a teacher
// follows docs/TEACHING.md on a fresh folder. Export the template's model with
// tools/teacher_export.py under real torch 2.14.1 (the Debian sid root of
// scripts/torch_env.sh), check what the CLI reads in the file (sample input,
// eager reference, run parity), copy the template lesson, break it once to see
// the check refuse it, check it (index.json written), serve the page and the
// course side by side under a sub-path of a plain static host, open
// ?course=, walk both steps with real clicks against what the CLI says about the
// same file, then reload with the server gone: the service worker kept the
// course. Without a torch root the test says so and passes, unless
// PT2LAB_REQUIRE_TORCH=1 (as the zoo tests do).
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

const TEMPLATE = path.join(ROOT, "tools/lesson_template");
const LANGS = ["zh-TW", "en"];
const PREFIX = "/school/";


// The template's title, step titles and step blocks, read from its files.
function template(lang) {
  const text = fs.readFileSync(path.join(TEMPLATE, `my-first.${lang}.md`), "utf8");
  return {
    title: /^# (.+)$/m.exec(text)[1],
    titles: [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1].trim()),
    steps: [...text.matchAll(/^```step\n([\s\S]*?)^```$/gm)].map((m) => JSON.parse(m[1])),
  };
}

// FNV-1a (64 bits) of float32 values, as the state hook hashes an output's bytes.
function fnv1a64(values) {
  const bytes = new Uint8Array(new Float32Array(values).buffer);
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h.toString(16).padStart(16, "0");
}

const boxes = (s) => s.nodes.filter((n) => n.id).map((n) => n.name);

// The pt2lab CLI's stdout (it must succeed).
function pt2lab(args) {
  const r = spawnSync(cli.CLI, args, { encoding: "utf8" });
  assert.equal(r.status, 0, `pt2lab ${args.join(" ")}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}

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

test("a teacher follows docs/TEACHING.md: export with the sid root's torch, the template lesson, check, a sub-path host, both steps, offline", async (ctx) => {
  const why = torchMissing();
  if (why) {
    console.log(`skip   ${why}`);
    return;
  }
  // Inside the clone: the sid root sees the clone (at /pt2lab), nothing else.
  fs.mkdirSync(path.join(ROOT, "build/e2e"), { recursive: true });
  const site = fs.mkdtempSync(path.join(ROOT, "build/e2e/teacher-"));
  try {
    const course = path.join(site, "my_course");
    const graph = path.join(course, "assets/graphs/tiny_mlp.pt2");

    // 1. Export (the guide's command, run by the sid root's torch 2.14.1).
    const exp = spawnSync("bash", ["scripts/torch_env.sh", "run", "sid", "python3", "tools/teacher_export.py",
      "tools/lesson_template/tiny_model.py:make", "--out", path.relative(ROOT, graph)], { cwd: ROOT, encoding: "utf8" });
    assert.equal(exp.status, 0, "teacher_export.py: " + exp.stdout + exp.stderr);
    assert.match(exp.stdout, /^wrote .*tiny_mlp\.pt2: TinyMLP in eval mode \(seed 0\), torch 2\.14\.1.*, 9 nodes; sample input float32\[3, 4\]; eager reference for linear_1$/m);

    // 2. What pt2lab reads in it: how it was made, the sample input, PyTorch's eager output.
    const info = pt2lab(["info", graph]);
    assert.match(info, /^made by: +torch\.export of torch 2\.14\.1\S* \(tools\/teacher_export\.py\)$/m);
    assert.match(info, /^model: +TinyMLP, eval mode \(seed 0\)$/m);
    assert.match(info, /^input: +x f32\[3, 4\]$/m);
    assert.match(info, /^reference: +linear_1 f32\[3, 2\] \(PyTorch eager output\)$/m);
    const run = pt2lab(["run", graph]);
    assert.match(run, /the file's sample input \(data\/sample_inputs\/model\.pt\)/);
    assert.match(run, /^ +linear_1 +f32\[3, 2\] +max\|diff\| \S+ +max rel \S+ +allclose yes/m);
    assert.match(run, /^ +verdict: (allclose|bit-identical)$/m);
    const nodes = cli.nodes(graph, true);
    const [want] = cli.runOutputs(graph);

    // 3. The template lesson, copied; a broken copy is refused with file and line, no index.json.
    for (const lang of LANGS)
      fs.copyFileSync(path.join(TEMPLATE, `my-first.${lang}.md`), path.join(course, `my-first.${lang}.md`));
    const en = path.join(course, "my-first.en.md");
    const good = fs.readFileSync(en, "utf8");
    fs.writeFileSync(en, good.replace('"removed": ["linear", "linear_1"]', '"removed": ["linear"]'));
    let check = spawnSync(cli.CLI, ["lesson", "check", course], { encoding: "utf8" });
    assert.equal(check.status, 1, "a claim that does not hold fails the check");
    assert.match(check.stderr, /my-first\.en\.md:\d+: step 2 "Chapter map: the same model in Core ATen": expect removed \[linear\] does not hold: the step gives \[linear, linear_1\]/);
    assert.match(check.stderr, /my-first\.en\.md:\d+: differs from .*my-first\.zh-TW\.md: step 2: expects something different/);
    assert.ok(!fs.existsSync(path.join(course, "index.json")), "no index.json for a course that fails");
    fs.writeFileSync(en, good);
    check = spawnSync(cli.CLI, ["lesson", "check", course], { encoding: "utf8" });
    assert.equal(check.status, 0, "pt2lab lesson check: " + check.stdout + check.stderr);
    assert.match(check.stdout, /^1 lessons \(2 files\), 4 steps, 12 expectations: all hold$/m);
    const index = JSON.parse(fs.readFileSync(path.join(course, "index.json"), "utf8"));
    assert.deepEqual(index.lessons.map((l) => [l.id, l.steps, l.graphs.main]), [["my-first", 2, "assets/graphs/tiny_mlp.pt2"]]);

    // 4. The page beside the course, both under a sub-path of a plain static host.
    fs.symlinkSync(ctx.dist, path.join(site, "lab"));
    const srv = await serve(site, { prefix: PREFIX });
    try {
      const zh = template("zh-TW");
      const page = await openPage(ctx, { base: srv.url + "lab/?course=../my_course/", hash: "#my-first/1" });
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

      // 5. Offline: the worker kept the course on this first visit; the server gone, a
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
    fs.rmSync(site, { recursive: true, force: true });
  }
});

module.exports = { list };
