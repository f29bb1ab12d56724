// Whole-model benchmark (figures, not a test): ResNet-18 and MobileNet v2
// (batch 1, 3x224x224) in headless Chromium, pt2lab's WASM executor
// (bench/model_bench.cpp) vs ONNX Runtime Web (npm onnxruntime-web, wasm
// backend, SIMD, one thread, no proxy worker) on the same model, in one browser
// run. Each model gets a fresh page with both runtimes, so each first run is cold:
// "load" is instantiating the runtime's wasm + reading the model, "first" the
// first forward (V8 still in its baseline compiler, weights being prepared),
// "steady" the median of N forwards after it, the two runtimes' forwards
// alternating (a pt2lab / ORT ratio per pair). Exits 1 if an output differs from
// PyTorch eager by more than 1e-4 relative to its magnitude.
// This VM's speed moves by up to 1.6x over seconds (other guests: steal time),
// so --trials T (default 3) repeats the whole set T times, the two runtimes of a
// model back to back within a trial; each ratio is taken within a trial (the
// same machine state), and the tables give the median over trials with the range.
//
//   bash scripts/torch_env.sh run sid python3 tools/onnx_models.py   # build/modelbench/
//   cmake --preset wasm && cmake --build --preset wasm --target pt2lab_model_bench
//   node tools/model_bench.js [--runs N] [--trials T] [--models resnet18,mobilenet_v2] [--reference] [--cold] [--json] [--calls N]
//                             [--js-flags "V8 flags"]   (experiments only: users run default V8)
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { ROOT, serve, launch } = require("../tests/e2e/lib");

const TOLERANCE = 1e-4;

function parseArgs(argv) {
  const a = { runs: 15, trials: 3, models: ["resnet18", "mobilenet_v2"], reference: false,
              json: false, referenceRuns: 3 };
  for (let k = 0; k < argv.length; k++) {
    if (argv[k] === "--runs") a.runs = Math.max(1, Number(argv[++k]));
    else if (argv[k] === "--trials") a.trials = Math.max(1, Number(argv[++k]));
    else if (argv[k] === "--models") a.models = argv[++k].split(",");
    else if (argv[k] === "--reference") a.reference = true;
    else if (argv[k] === "--cold") a.cold = true; // also pt2lab without the kernel warm-up
    else if (argv[k] === "--warm-runs") a.warmRuns = Math.max(1, Number(argv[++k])); // warm-up graph runs
    else if (argv[k] === "--json") a.json = true;
    else if (argv[k] === "--calls") a.calls = Math.max(0, Number(argv[++k])); // per-shape rows to print
    else if (argv[k] === "--js-flags") a.jsFlags = argv[++k]; // V8 experiments, e.g. --no-wasm-dynamic-tiering
    else throw new Error("usage: node tools/model_bench.js [--runs N] [--trials T] [--models a,b] [--reference] [--cold] [--json] [--calls N] [--js-flags F]");
  }
  return a;
}

// build/modelbench/site: the page, the two runtimes and the models, as symlinks.
function makeSite() {
  const site = path.join(ROOT, "build", "modelbench", "site");
  const need = {
    "index.html": path.join(ROOT, "tools", "model_bench.html"),
    "ort": path.join(ROOT, "node_modules", "onnxruntime-web", "dist"),
    "pt2lab": path.join(ROOT, "build", "wasm", "bench"),
    "models": path.join(ROOT, "build", "modelbench"),
  };
  const hints = {
    "ort": "npm ci (onnxruntime-web is a devDependency)",
    "pt2lab": "cmake --preset wasm && cmake --build --preset wasm --target pt2lab_model_bench",
    "models": "bash scripts/torch_env.sh run sid python3 tools/onnx_models.py",
  };
  const checks = {
    "ort": "ort-wasm-simd-threaded.wasm", "pt2lab": "pt2lab_model_bench.wasm",
    "models": "resnet18/model.onnx",
  };
  for (const [name, file] of Object.entries(checks))
    if (!fs.existsSync(path.join(need[name], file)))
      throw new Error(`missing ${path.join(need[name], file)}: ${hints[name]}`);
  fs.mkdirSync(site, { recursive: true });
  for (const [name, target] of Object.entries(need)) {
    const link = path.join(site, name);
    try { fs.unlinkSync(link); } catch (e) { /* not there yet */ }
    fs.symlinkSync(target, link);
  }
  return site;
}

const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
const mb = (b) => (b / 1e6).toFixed(1);

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const site = makeSite();
  const server = await serve(site);
  const browser = await launch(args.jsFlags ? [`--js-flags=${args.jsFlags}`] : []);
  const results = [];
  try {
    // "pair": ONNX Runtime Web and pt2lab in one page, steady runs alternating.
    const runtimes = ["pair"].concat(args.cold ? ["pt2lab-cold"] : [],
                                     args.reference ? ["pt2lab-reference"] : []);
    for (let trial = 0; trial < args.trials; trial++) {
      for (const model of args.models) {
        for (const runtime of runtimes) {
          const context = await browser.newContext();
          const page = await context.newPage();
          const errors = [];
          page.on("pageerror", (e) => errors.push(String(e)));
          page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
          await page.goto(server.url + "index.html" + (args.warmRuns ? `?warm=${args.warmRuns}` : ""));
          await page.waitForFunction(() => window.benchReady === true, null, { timeout: 30000 });
          const runs = runtime === "pt2lab-reference" ? args.referenceRuns : args.runs;
          let r;
          try {
            r = await page.evaluate(([rt, m, n]) => window.bench(rt, m, n), [runtime, model, runs]);
          } catch (e) {
            throw new Error(`${runtime} on ${model}: ${e.message}\n${errors.join("\n")}`);
          }
          for (const x of Array.isArray(r) ? r : [r]) {
            x.trial = trial;
            results.push(x);
            if (!args.json)
              console.error(`  trial ${trial + 1}: ${x.runtime.padEnd(16)} ${model.padEnd(13)} load ` +
                            `${fmt(x.init_ms + x.load_ms)} ms, first ${fmt(x.first_ms)} ms, ` +
                            `median of ${runs} ${fmt(x.median_ms)} ms`);
          }
          await context.close();
        }
      }
    }
  } finally {
    await browser.close();
    server.close();
  }
  const version = await browserVersion();
  if (args.json) {
    console.log(JSON.stringify({ chromium: version, load: os.loadavg(), results }, null, 2));
  } else {
    report(results, version, args);
  }
  const bad = results.filter((r) => !(r.diff.rel <= TOLERANCE));
  for (const r of bad)
    console.error(`FAIL ${r.runtime} on ${r.model}: output differs from eager by ${r.diff.abs} ` +
                  `(relative ${r.diff.rel} > ${TOLERANCE})`);
  process.exit(bad.length ? 1 : 0);
}

async function browserVersion() {
  const b = await launch();
  const v = b.version();
  await b.close();
  return v;
}

function report(results, version, args) {
  const ortVersion = require(path.join(ROOT, "node_modules", "onnxruntime-web", "package.json")).version;
  if (args.jsFlags) console.log(`V8 flags: ${args.jsFlags} (an experiment, not what users run)`);
  console.log(`Chromium ${version}, headless; onnxruntime-web ${ortVersion} (wasm, SIMD, numThreads 1, ` +
              `proxy off); pt2lab WASM (-O3 -msimd128, linked -Os as the page); ` +
              `load average ${os.loadavg().map((x) => x.toFixed(2)).join(" ")} on ${os.cpus().length} cores`);
  console.log("");
  const trials = [...new Set(results.map((r) => r.trial))].length;
  // "median (lowest - highest)" of a figure over the trials
  const spread = (xs, f = fmt) => xs.length === 1 ? f(xs[0]) :
    `${f(median(xs))} (${f(Math.min(...xs))}-${f(Math.max(...xs))})`;
  const ratio = (x) => x.toFixed(2);
  console.log(`${trials} trial(s); figures are the median over trials (lowest-highest)`);
  console.log("");
  console.log("| model | runtime | load ms (of it warm-up) | first run ms | steady ms (median of each trial's runs) | min ms | first / steady | max rel diff vs eager |");
  console.log("|---|---|---|---|---|---|---|---|");
  const models = [...new Set(results.map((r) => r.model))];
  const runtimes = [...new Set(results.map((r) => r.runtime))];
  const of = (m, rt) => results.filter((r) => r.model === m && r.runtime === rt);
  for (const m of models)
    for (const rt of runtimes) {
      const rs = of(m, rt);
      if (!rs.length) continue;
      const warm = rs.map((r) => r.warm_up_ms || 0);
      console.log(`| ${m} | ${rt} | ${spread(rs.map((r) => r.init_ms + r.load_ms))}` +
                  `${median(warm) ? ` (${fmt(median(warm))})` : ""} | ${spread(rs.map((r) => r.first_ms))} | ` +
                  `${spread(rs.map((r) => r.median_ms))} (${rs[0].steady_ms.length} runs) | ` +
                  `${fmt(Math.min(...rs.map((r) => r.min_ms)))} | ` +
                  `${spread(rs.map((r) => r.first_ms / r.median_ms), ratio)} | ` +
                  `${Math.max(...rs.map((r) => r.diff.rel)).toExponential(1)} |`);
    }
  console.log("");
  console.log("| model | pt2lab / ORT steady | pt2lab / ORT first run | pt2lab / ORT load |");
  console.log("|---|---|---|---|");
  for (const m of models) {
    const pairs = [];
    for (const p of of(m, "pt2lab")) {
      const o = of(m, "onnxruntime-web").find((r) => r.trial === p.trial);
      if (o) pairs.push([p, o]);
    }
    if (!pairs.length) continue;
    console.log(`| ${m} | ${spread(pairs.map(([p]) => median(p.pair_ratios)), ratio)} | ` +
                `${spread(pairs.map(([p, o]) => p.first_ms / o.first_ms), ratio)} | ` +
                `${spread(pairs.map(([p, o]) => (p.init_ms + p.load_ms) / (o.init_ms + o.load_ms)), ratio)} |`);
  }
  console.log("(time ratios within each trial: below 1 means pt2lab is faster; steady: the median " +
              "of the ratios of alternating runs)");
  // The memory and per-op figures of the last trial.
  const last = Math.max(...results.map((r) => r.trial));
  for (const r of results.filter((x) => x.runtime.startsWith("pt2lab") && x.trial === last)) {
    console.log("");
    console.log(`${r.runtime} ${r.model}: weights ${mb(r.weight_bytes)} MB; wasm memory ${mb(r.heap_after_load)} MB ` +
                `after load, ${mb(r.heap_peak)} MB at the end (peak / weights ` +
                `${(r.heap_peak / r.weight_bytes).toFixed(2)}); malloc's peak footprint ` +
                `${mb(r.malloc_peak_after_load)} MB after load, ${mb(r.malloc_peak)} MB at the end ` +
                `(${(r.malloc_peak / r.weight_bytes).toFixed(2)}x the weights), ` +
                `${mb(r.malloc_in_use_after_load)} MB in use after load`);
    const table = (title, rows, rowsFirst, count, width) => {
      const total = rows.reduce((s, e) => s + e.ms, 0);
      const first = new Map(rowsFirst.map((e) => [e.op, e.ms]));
      const firstTotal = rowsFirst.reduce((s, e) => s + e.ms, 0);
      console.log(`  ${title}: one steady run (${fmt(total)} ms in kernels) | the first run (${fmt(firstTotal)} ms):`);
      for (const e of rows.slice(0, count))
        console.log(`    ${e.op.replace("torch.ops.", "").padEnd(width)} ${String(e.calls).padStart(4)} calls ` +
                    `${fmt(e.ms).padStart(7)} ms  ${(100 * e.ms / total).toFixed(1).padStart(5)} %  | ` +
                    `${fmt(first.get(e.op) || 0).padStart(7)} ms`);
    };
    table("per op", r.profile.ops, r.profile_first.ops, 8, 34);
    if (args.calls) table("per call shape", r.profile.calls, r.profile_first.calls, args.calls, 100);
  }
}

main().catch((e) => { console.error(e.stack || String(e)); process.exit(2); });
