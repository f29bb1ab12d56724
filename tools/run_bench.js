// Run benchmark (figures, not a test; issue 23 "Speed where the user waits"): the
// page's own Run against ONNX Runtime Web on the same model and input, in one
// headless Chromium. Per trial and model, the two back to back (which goes first
// swaps every trial):
//   the page   a fresh context on the built page (?bench=1); the model opened as a
//              user does (Open file..., the file chooser); then R pressed once (the
//              first run after the open) and --runs more times, each once the page
//              is idle: the time from the key (its keydown) to the end of the frame
//              that draws the result (tools/action_bench.js "wall"), on the page's
//              default settings (the file's sample input, fast kernels);
//   ORT-web    a fresh context on tools/run_bench_ort.html: onnxruntime-web 1.30,
//              wasm, SIMD, one thread, no proxy worker: session.run's time, first
//              and --runs more.
// Each ratio (page / ORT) is taken within a trial (the same machine state); the
// table gives every trial and the median with its range. Outputs: the page's
// first values (its state hook) and ORT's whole output against PyTorch eager
// (output.bin), relative to the output's magnitude; over 1e-4 fails (exit 1).
// --quantized: then, in the same page, Q prepare, K calibrate (9 batches), V convert as
// a user presses them, and the converted model's Runs timed the same way (first and
// --runs steady): the "quantized runs at most 2x the float run's time".
//
//   bash scripts/torch_env.sh run sid python3 tools/onnx_models.py   # build/modelbench/
//   node tools/run_bench.js [dist] [--models resnet18,mobilenet_v2] [--trials 5] [--runs 10] [--quantized] [--json]
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { ROOT, serve, launch, state } = require("../tests/e2e/lib");
const ab = require("./action_bench");

const TOLERANCE = 1e-4;

function parseArgs(argv) {
  const a = { dist: path.join(ROOT, "dist"), models: ["resnet18", "mobilenet_v2"], trials: 5, runs: 10, json: false, quantized: false };
  for (let k = 0; k < argv.length; k++) {
    if (argv[k] === "--models") a.models = argv[++k].split(",").filter(Boolean);
    else if (argv[k] === "--trials") a.trials = Math.max(1, parseInt(argv[++k], 10) || 1);
    else if (argv[k] === "--runs") a.runs = Math.max(1, parseInt(argv[++k], 10) || 1);
    else if (argv[k] === "--json") a.json = true;
    else if (argv[k] === "--quantized") a.quantized = true;
    else if (argv[k].startsWith("--"))
      throw new Error("usage: node tools/run_bench.js [dist] [--models a,b] [--trials T] [--runs N] [--quantized] [--json]");
    else a.dist = path.resolve(argv[k]);
  }
  return a;
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// build/runbench/site: the page (lab/), ONNX Runtime Web (ort/), the models and the ORT page.
function makeSite(dist) {
  const site = path.join(ROOT, "build", "runbench", "site");
  fs.rmSync(site, { recursive: true, force: true });
  fs.mkdirSync(site, { recursive: true });
  const links = {
    "lab": [dist, "scripts/build_web.sh"],
    "ort": [path.join(ROOT, "node_modules/onnxruntime-web/dist"), "npm ci"],
    "models": [path.join(ROOT, "build/modelbench"), "bash scripts/torch_env.sh run sid python3 tools/onnx_models.py"],
    "ort.html": [path.join(ROOT, "tools/run_bench_ort.html"), ""],
  };
  for (const [name, [target, hint]] of Object.entries(links)) {
    if (!fs.existsSync(target)) throw new Error(`${path.relative(ROOT, target)} is missing: ${hint}`);
    fs.symlinkSync(target, path.join(site, name));
  }
  return site;
}

async function pageTrial(browser, url, model, runs, quantized) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.addInitScript(ab.inputRecorder);
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  try {
    await page.goto(url + "lab/?bench=1&nosw=1");
    await ab.waitBench(page, (b) => b.file && b.frames > 2, "the first frame");
    // A user takes seconds to pick a file; the page spends them warming up (main.cpp).
    await ab.waitBench(page, (b) => b.warm_up_ms >= 0, "the idle warm-up", 120000);
    await ab.rest(page);
    const file = path.join(ROOT, "build/modelbench", model, "model.pt2");
    const open = await ab.openModel(page, model, file, "open");
    if (open[0].error) throw new Error(`${model}: the page could not open it: ${open[0].job}`);
    const wallOf = async () => {
      const rows = await ab.press(page, model, "r", "R run");
      const run = rows.find((r) => r.job === "run");
      if (!run || !run.ok) throw new Error(`${model}: Run did not finish: ${JSON.stringify(rows)}`);
      return run.wall;
    };
    const first = await wallOf();
    const steady = [];
    for (let k = 0; k < runs; k++) steady.push(await wallOf());
    const s = await state(page);
    const out = s.run && s.run.outputs && s.run.outputs[0];
    if (!out || !out.first) throw new Error(`${model}: no run output in the state`);
    const bin = fs.readFileSync(path.join(ROOT, "build/modelbench", model, "output.bin"));
    const want = new Float32Array(bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.length));
    if (errors.length) throw new Error(`${model}: page errors: ${errors.join("; ")}`);
    // The state hook gives the first values; their error is taken relative to the whole
    // output's magnitude, as ORT's is.
    let scale = 0;
    for (const w of want) scale = Math.max(scale, Math.abs(w));
    let diff = 0;
    out.first.forEach((v, i) => { diff = Math.max(diff, Math.abs(v - want[i])); });
    const r = { open_ms: open[0].wall, first_ms: first, steady, rel_diff: diff / Math.max(scale, 1e-30), first: out.first,
                profile: s.run.profile };
    if (quantized) {
      for (const [key, label] of [["q", "Q prepare"], ["k", "K calibrate"], ["v", "V convert"]]) {
        const rows = await ab.press(page, model, key, label);
        const bad = rows.find((x) => x.error || x.ok === false);
        if (bad) throw new Error(`${model}: ${label} failed: ${JSON.stringify(bad)}`);
      }
      r.q_first_ms = await wallOf();
      r.q_steady = [];
      for (let k = 0; k < runs; k++) r.q_steady.push(await wallOf());
      const qs = (await state(page)).run;
      r.q_profile = qs.profile;
      r.q_extra = { float_run_ms: qs.float_run_ms, layers_ms: qs.layers_ms, reused: qs.layers_float_reused };
      if (errors.length) throw new Error(`${model}: page errors: ${errors.join("; ")}`);
    }
    return r;
  } finally {
    await context.close();
  }
}

async function ortTrial(browser, url, model, runs) {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(url + "ort.html");
    return await page.evaluate(([m, n]) => window.ortBench(m, n), [model, runs]);
  } finally {
    await context.close();
  }
}

const f = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const site = makeSite(args.dist);
  const server = await serve(site);
  const browser = await launch();
  const started = new Date();
  const rows = [];
  if (!args.json) {
    console.log(`Chromium ${browser.version()} headless, ${os.cpus().length} x ${os.cpus()[0].model}; ` +
                `load average ${ab.load()}; ${args.trials} trials x (first + ${args.runs} steady) per runtime`);
    console.log(`  ${"model".padEnd(14)} trial  page: open   first  steady |  ORT: load  first  steady | steady ratio  first/steady (page)`);
  }
  try {
    for (let t = 1; t <= args.trials; t++) {
      for (const model of args.models) {
        const order = t % 2 ? ["page", "ort"] : ["ort", "page"];
        const r = { model, trial: t, load: os.loadavg()[0] };
        for (const who of order) {
          if (who === "page") r.page = await pageTrial(browser, server.url, model, args.runs, args.quantized);
          else r.ort = await ortTrial(browser, server.url, model, args.runs);
        }
        r.page.median_ms = median(r.page.steady);
        r.ort.median_ms = median(r.ort.steady);
        r.ratio = r.page.median_ms / r.ort.median_ms;
        r.first_over_steady = r.page.first_ms / r.page.median_ms;
        if (args.quantized) {
          r.page.q_median_ms = median(r.page.q_steady);
          r.q_over_float = r.page.q_median_ms / r.page.median_ms;
        }
        rows.push(r);
        if (!args.json)
          console.log(`  ${model.padEnd(14)} ${String(t).padStart(5)}  ${f(r.page.open_ms).padStart(10)} ${f(r.page.first_ms).padStart(7)} ${f(r.page.median_ms).padStart(7)} |` +
                      ` ${f(r.ort.load_ms).padStart(9)} ${f(r.ort.first_ms).padStart(6)} ${f(r.ort.median_ms).padStart(7)} |` +
                      ` ${r.ratio.toFixed(2).padStart(12)}  ${r.first_over_steady.toFixed(2).padStart(18)}` +
                      (args.quantized ? ` | converted: first ${f(r.page.q_first_ms)} steady ${f(r.page.q_median_ms)}` +
                                        ` = ${r.q_over_float.toFixed(2)} x float` : ""));
      }
    }
  } finally {
    await browser.close();
    server.close();
  }
  let bad = false;
  const summary = args.models.map((model) => {
    const mine = rows.filter((r) => r.model === model);
    const ratios = mine.map((r) => r.ratio), fs_ = mine.map((r) => r.first_over_steady);
    const pageDiff = Math.max(...mine.map((r) => r.page.rel_diff));
    const ortDiff = Math.max(...mine.map((r) => r.ort.rel_diff));
    if (Math.max(pageDiff, ortDiff) > TOLERANCE) bad = true;
    return { model, ratio: median(ratios), ratio_min: Math.min(...ratios), ratio_max: Math.max(...ratios),
             page_steady_ms: median(mine.map((r) => r.page.median_ms)), ort_steady_ms: median(mine.map((r) => r.ort.median_ms)),
             first_over_steady: median(fs_), first_over_steady_max: Math.max(...fs_), page_diff: pageDiff, ort_diff: ortDiff,
             ...(args.quantized ? { q_over_float: median(mine.map((r) => r.q_over_float)),
                                    q_over_float_min: Math.min(...mine.map((r) => r.q_over_float)),
                                    q_over_float_max: Math.max(...mine.map((r) => r.q_over_float)),
                                    q_steady_ms: median(mine.map((r) => r.page.q_median_ms)) } : {}) };
  });
  if (args.json) {
    console.log(JSON.stringify({ started: started.toISOString(), load: os.loadavg(), rows, summary }, null, 2));
  } else {
    console.log(`\n  ${"model".padEnd(14)} page steady  ORT steady  page/ORT (range)       first/steady page (max)  rel diff vs eager: page, ORT`);
    for (const s of summary)
      console.log(`  ${s.model.padEnd(14)} ${f(s.page_steady_ms).padStart(8)} ms ${f(s.ort_steady_ms).padStart(8)} ms` +
                  `  ${s.ratio.toFixed(2)} (${s.ratio_min.toFixed(2)}-${s.ratio_max.toFixed(2)})` +
                  `       ${s.first_over_steady.toFixed(2)} (${s.first_over_steady_max.toFixed(2)})` +
                  `              ${s.page_diff.toExponential(1)}, ${s.ort_diff.toExponential(1)}`);
    if (args.quantized) {
      console.log(`\n  ${"model".padEnd(14)} converted steady  / float steady (range)`);
      for (const s of summary)
        console.log(`  ${s.model.padEnd(14)} ${f(s.q_steady_ms).padStart(8)} ms  ${s.q_over_float.toFixed(2)} x` +
                    ` (${s.q_over_float_min.toFixed(2)}-${s.q_over_float_max.toFixed(2)})`);
    }
    // Where the page's time went: the last Run's profile (the Run tab's "Where the time
    // went"), per op, from the last trial; one forward, on the page's 0.1 ms clock.
    console.log("\n  the last Run's profile (Run tab), ops over 2 % of its nodes' time:");
    for (const model of args.models) {
      const p = rows.filter((r) => r.model === model).pop().page.profile;
      if (!p) continue;
      const ops = p.ops.filter((o) => o.ms >= 0.02 * p.nodes_ms)
        .map((o) => `${o.op.replace(/^aten\./, "").replace(/\.default$/, "")} ${(100 * o.ms / p.nodes_ms).toFixed(0)} %`);
      console.log(`  ${model.padEnd(18)} ${f(p.nodes_ms)} of ${f(p.run_ms)} ms: ${ops.join(", ")}`);
      const q = rows.filter((r) => r.model === model).pop().page.q_profile;
      if (!q) continue;
      const qops = q.ops.filter((o) => o.ms >= 0.02 * q.nodes_ms)
        .map((o) => `${o.op.replace(/^aten\./, "").replace(/^quantized_decomposed\./, "").replace(/\.default$/, "")} ${(100 * o.ms / q.nodes_ms).toFixed(0)} %`);
      console.log(`  ${(model + " converted").padEnd(18)} ${f(q.nodes_ms)} of ${f(q.run_ms)} ms: ${qops.join(", ")}`);
      const x = rows.filter((r) => r.model === model).pop().page.q_extra;
      console.log(`  ${"".padEnd(18)} besides the forward: the float run for the layers ` +
                  `${x.reused ? "reused" : f(x.float_run_ms) + " ms"}, comparing the layers ${f(x.layers_ms)} ms`);
    }
    console.log(`${started.toISOString()} - ${new Date().toISOString()}; load average ${ab.load()} at the end`);
  }
  if (bad) {
    console.error(`an output is further than ${TOLERANCE} (relative) from PyTorch eager`);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
