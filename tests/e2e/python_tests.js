// Browser test of Copy as Python (issue 21, "Back to Python"), run by
// tests/e2e/run.js: change a file in the page with its own buttons, copy what
// was done as Python from the top bar, and run that script with real torch
// 2.14.1 (the Debian sid root of scripts/torch_env.sh) beside the same file:
// torch's program must print the code pt2lab prints for the same change. Undo
// takes the step out of the script, redo brings it back; the Code tab shows the
// same script. Without a torch root the torch part says so and the rest runs,
// unless PT2LAB_REQUIRE_TORCH=1.
"use strict";
const assert = require("assert/strict");
const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");
const { ROOT, waitState, torchMissing } = require("./lib");
const cli = require("./cli");
const { openPage, clickWidget, noErrors } = require("./page_tests");

const list = [];
const test = (name, run) => list.push({ name, run });

const FILE = "conv_bn_relu_eval.pt2"; // the page's first graph
const asset = path.join(ROOT, "assets/graphs", FILE);

async function copied(page, before) {
  await clickWidget(page, "copy python");
  await waitState(page, (st) => st.copied.what === "Python" && st.copied.bytes !== before, "Python copied");
  await page.waitForFunction(() => window.pt2lab.lastCopy && window.pt2lab.lastCopy.ok);
  return page.evaluate(() => navigator.clipboard.readText());
}

test("Copy as Python: the page's change, run by real torch beside the file, prints what pt2lab prints", async (ctx) => {
  const page = await openPage(ctx, { locale: "en", permissions: ["clipboard-read", "clipboard-write"] });
  let s = await waitState(page, (st) => st.file === FILE && st.undo.length === 0, "the first graph");

  // Decompose -> Core ATen, as a user picks it from the top bar.
  await clickWidget(page, "decompose");
  await clickWidget(page, "decompose:core");
  s = await waitState(page, (st) => st.undo.length === 1 && !st.busy, "decomposed");
  const script = await copied(page, -1);
  assert.match(script, /^ep = torch\.export\.load\('conv_bn_relu_eval\.pt2'\)$/m);
  assert.match(script, /^# 1\. .*\nep = ep\.run_decompositions\(\)/m);
  assert.match(script, /^gm = ep\.module\(\)/m);

  // The Code tab shows the same script.
  await clickWidget(page, "tab:Code");
  await clickWidget(page, "code:Python");
  s = await waitState(page, (st) => st.code_form === "script", "the Code tab's Python form");

  // Undo takes the step out; redo brings it back.
  await clickWidget(page, "undo");
  await waitState(page, (st) => st.undo.length === 0 && st.redo.length === 1, "undone");
  const undone = await copied(page, script.length);
  assert.ok(!undone.includes("run_decompositions"), undone);
  assert.match(undone, /# Nothing was changed/);
  await clickWidget(page, "redo");
  await waitState(page, (st) => st.undo.length === 1, "redone");
  assert.equal(await copied(page, undone.length), script);
  await page.screenshot({ path: path.join(ROOT, "build/e2e/copy-python.png") });
  noErrors(page);

  const why = torchMissing();
  if (why) {
    console.log(`    (torch part skipped: ${why})`);
    return;
  }
  // The user's run: the script beside a copy of the file, in real torch.
  const dir = path.join(ROOT, "build/e2e/python");
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(asset, path.join(dir, FILE));
  fs.writeFileSync(path.join(dir, "script.py"), script);
  const rel = path.relative(ROOT, dir);
  const py = `import os, runpy; os.chdir(${JSON.stringify(rel)}); g = runpy.run_path("script.py", run_name="__main__"); ` +
             `print("=== ep code ==="); print(g["ep"].graph_module.code, end="")`;
  const r = spawnSync("bash", ["scripts/torch_env.sh", "run", "sid", "python3", "-c", py],
                      { cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 26 });
  assert.equal(r.status, 0, r.stderr);
  const [graph, code] = r.stdout.split("=== ep code ===\n");
  assert.match(graph, /torch\.ops\.aten\.convolution\.default/, "torch's gm after the script is at Core ATen");
  assert.equal(code, cli.decomposedCode(asset, "core"), "torch's ep.graph_module.code equals pt2lab's after the same decompose");
});

module.exports = { list };
