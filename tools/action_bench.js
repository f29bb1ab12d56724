// Action benchmark (figures, not a test; issue 20's "the page never freezes"):
// serves dist/, opens the page with ?bench=1 in headless Chromium at 1440x900,
// and per model (a fresh browser context each) does what a user does:
//   opens the file through the page's "Open file..." button and its file input;
//   then, each once the page is idle again, presses the page's keys:
//   R run, Q prepare_pt2e, K calibrate (9 batches), V convert_pt2e (the page then
//   runs the new graph by itself), R again;
//   opens the file again; D decompose to the inference IR (and the page's own run
//   after the change), Ctrl+Z, Shift+D decompose to core ATen (and its run), Ctrl+Z;
//   clicks the Run tab's "fast kernels" box off and presses R, Q, K with the
//   reference kernels.
// Per job the page ran it prints what window.pt2lab.bench() recorded (App::record_frame):
//   begin     the key (its keydown's timeStamp) -> the job's begin, in the next frame
//   wall      the key -> the end of the frame that draws the job's result (the frame
//             after the one that ended it); for a job the page began by itself after
//             another (the run after a change), still from the key
//   compute   time inside Workspace::begin / advance / finish
//   frames    main-loop calls from the one that began the job to the one that ended it
//   loop      the longest of them (the app's own time in one frame: the main figure)
//   task      the longest of the page's tasks between frames that moved the job
//             (App::work_between_frames, about 8 ms each; "*" marks a row whose loop or
//             task is over 50 ms)
//   gap       the longest time between two calls' starts, from the job's first call to
//             the one after its last (requestAnimationFrame's period plus whatever else
//             the browser did; SwiftShader drawing 1440x900 headless makes 40-100 ms
//             gaps on an idle page on this 2-core machine)
//   next      the frame after the job ended (it builds and draws the new graph's scene)
// and for the open: "bytes in at" = the file input's change event -> the app took the
// bytes (the browser read the file, the page copied it into the heap), begin = change
// event -> the open began (App's Opening, stepped a slice per frame like any job),
// wall = change event -> the end of the first frame with every box drawn (big graphs
// open collapsed to their top-level modules), compute = time inside Opening::step and
// finish, frames / loop / gap = the open's job record (from the frame that began it
// to the one that adopted the file), next = the frame that drew the new file.
//
//   node tools/action_bench.js [dist] [--models a,b,...] [--fast-only] [--opens N] [--json]
// --fast-only leaves out the reference-kernel steps (minutes on the bigger models);
// --opens N only opens each file, N times.
// Models (a name, or a path to a .pt2 / .json):
//   resnet18, mobilenet_v2   build/modelbench/<name>/model.pt2 (224x224; tools/onnx_models.py)
//   densenet121, efficientnet_b0
//                            build/bench/<name>.pt2 (224x224; tools/export_big.py)
//   big_10000                build/bench/big_10000.json (tools/make_big_graph.py; made if missing)
//   zoo/<name>               build/zoo/<name>/model.pt2 (64x64; tools/zoo_models.py)
"use strict";
const { execFileSync } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { ROOT, serve, launch, waitState } = require("../tests/e2e/lib");
const { clickWidget } = require("../tests/e2e/page_tests");

const DEFAULT_MODELS = ["resnet18", "mobilenet_v2", "densenet121", "efficientnet_b0", "big_10000"];
const TARGET_MS = 50;
const ACTION_TIMEOUT_MS = 15 * 60 * 1000;
const AWAY = [2, 898]; // the mouse's rest: over nothing that reacts

function usage() {
  return "usage: node tools/action_bench.js [dist] [--models a,b,...] [--fast-only] [--opens N] [--json]";
}

function parseArgs(argv) {
  const a = { dist: path.join(ROOT, "dist"), models: DEFAULT_MODELS, json: false, fast: false, opens: 1 };
  for (let k = 0; k < argv.length; k++) {
    if (argv[k] === "--models") a.models = argv[++k].split(",").filter(Boolean);
    else if (argv[k] === "--fast-only") a.fast = true;
    else if (argv[k] === "--opens") a.opens = Math.max(1, parseInt(argv[++k], 10) || 1);
    else if (argv[k] === "--json") a.json = true;
    else if (argv[k].startsWith("--")) throw new Error(usage());
    else a.dist = path.resolve(argv[k]);
  }
  return a;
}

// A model's file, with how to make it when it is missing.
function modelFile(name) {
  const torchvision = "bash scripts/torch_env.sh run sid python3 tools/export_big.py build/bench densenet121 efficientnet_b0";
  const hint = {
    resnet18: "bash scripts/torch_env.sh run sid python3 tools/onnx_models.py",
    mobilenet_v2: "bash scripts/torch_env.sh run sid python3 tools/onnx_models.py",
    densenet121: torchvision,
    efficientnet_b0: torchvision,
  };
  let file;
  if (name === "resnet18" || name === "mobilenet_v2") file = path.join(ROOT, "build/modelbench", name, "model.pt2");
  else if (name.startsWith("zoo/")) file = path.join(ROOT, "build/zoo", name.slice(4), "model.pt2");
  else if (/^big_\d+$/.test(name)) {
    file = path.join(ROOT, "build/bench", name + ".json");
    if (!fs.existsSync(file)) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      execFileSync("/usr/bin/python3", [path.join(ROOT, "tools/make_big_graph.py"), file, name.slice(4)]);
    }
  } else if (fs.existsSync(name)) file = path.resolve(name);
  else file = path.join(ROOT, "build/bench", name + ".pt2");
  if (!fs.existsSync(file)) {
    const how = hint[name] || (name.startsWith("zoo/") ? "bash scripts/torch_env.sh run sid python3 tools/zoo_models.py" : "give a path");
    throw new Error(`${path.relative(ROOT, file)} is missing: ${how}`);
  }
  return file;
}

// window.pt2lab.bench(): frame times and job records, no graph (light enough to
// poll while a job runs; the state hook serializes the whole graph and its code).
// null until the runtime is up.
const bench = (page) => page.evaluate(() => {
  try { return window.pt2lab && window.pt2lab.firstFrameMs !== null ? window.pt2lab.bench() : null; } catch (e) { return null; }
});

async function waitBench(page, pred, what, timeoutMs = 60000, every = 250) {
  const t0 = Date.now();
  let last = null;
  for (;;) {
    last = await bench(page);
    if (last && pred(last)) return last;
    if (Date.now() - t0 > timeoutMs)
      throw new Error(`timed out waiting for ${what}: ` + JSON.stringify(last && { file: last.file, busy: last.busy, waiting: last.waiting, jobs_done: last.jobs_done }));
    const failed = await page.evaluate(() => window.pt2lab && window.pt2lab.failed);
    if (failed) throw new Error("the page failed: " + failed);
    await page.waitForTimeout(every);
  }
}

// Idle: nothing in flight, nothing waiting, and every job's result drawn.
const idle = (b) => b.busy === null && b.waiting === 0 && b.jobs.every((j) => j.ended && j.t_shown !== null);

// Every keydown's timeStamp and every file input change (page clock), recorded
// before the app sees them.
function inputRecorder() {
  window.__keys = [];
  window.__changes = [];
  window.addEventListener("keydown", (e) => window.__keys.push([e.key, e.timeStamp]), true);
  window.addEventListener("change", (e) => {
    if (e.target && e.target.id === "file-input") window.__changes.push(e.timeStamp);
  }, true);
}

// The frames [since, now) of the bench log: loop_ms and gap_ms hold the last ones.
function framesSince(b, since) {
  const n = Math.min(b.frames - since, b.loop_ms.length);
  return { loop: b.loop_ms.slice(b.loop_ms.length - n), gap: b.gap_ms.slice(b.gap_ms.length - n) };
}

const rest = (page) => page.mouse.move(AWAY[0], AWAY[1]);

// Opens `file` as a user does: the "Open file..." button, then the file chooser.
async function openModel(page, model, file, label) {
  await waitBench(page, idle, "idle before the open", ACTION_TIMEOUT_MS);
  const base = path.basename(file);
  const [chooser] = await Promise.all([page.waitForEvent("filechooser"), clickWidget(page, "open")]);
  await rest(page);
  const nChanges = await page.evaluate(() => window.__changes.length);
  const before = await bench(page);
  await chooser.setFiles(file);
  const t0 = await page.waitForFunction((n) => window.__changes[n], nChanges).then((h) => h.jsonValue());
  const drawn = await waitBench(page, (b) => (b.file === base && b.t_drawn > t0) || (b.error && b.error !== before.error),
                                "open " + model, ACTION_TIMEOUT_MS, 50);
  if (!(drawn.t_drawn > t0)) return [{ model, action: label, job: "error: " + drawn.error, error: true }];
  // The page draws only what changes (as for a user): the open is over once it is idle.
  const after = await waitBench(page, idle, "idle after the open", 60000, 50);
  const job = after.jobs.filter((j) => j.kind === "open" && j.t_start >= t0).pop();
  if (!job) throw new Error(`no open job recorded for ${model}`);
  const read = drawn.t_arrived - t0; // the browser read the file, the page copied it in
  return [{
    model, action: label, job: `open (bytes in at ${fmt(read)} ms)`, ok: job.ok,
    latency: drawn.t_open_call - t0, read, wall: drawn.t_drawn - t0,
    compute: job.compute_ms,
    frames: job.frames, loop: job.max_loop_ms, task: job.max_task_ms, gap: job.max_gap_ms, next: job.next_loop_ms,
    why: whyLong(job),
    nodes: drawn.nodes, shown: drawn.shown, heap: after.heap_bytes,
  }];
}

// Presses a key once the page is idle; waits until it is idle again. Returns a row
// per job begun after the key (an undo begins no job of its own: a row says so).
async function press(page, model, key, label, { jobless = false } = {}) {
  await waitBench(page, idle, "idle before " + label, ACTION_TIMEOUT_MS);
  const before = await bench(page);
  const nKeys = await page.evaluate(() => window.__keys.length);
  await page.keyboard.press(key);
  const tKey = await page.waitForFunction((n) => window.__keys[n] && window.__keys[n][1], nKeys)
    .then((h) => h.jsonValue());
  // Something began (or, after 3 s idle, nothing did: the key was refused, or it
  // was an undo), then everything it led to ended and was drawn.
  const t0 = Date.now();
  const b = await waitBench(page, (x) => idle(x) && (x.jobs.some((j) => j.t_start >= tKey) || Date.now() - t0 > 3000),
                            label, ACTION_TIMEOUT_MS);
  const jobs = b.jobs.filter((j) => j.t_start >= tKey);
  const name = (j) => j.kind + (j.label.startsWith("decompose to ") ? ` (${j.label.slice(13)})` : "");
  const rows = jobs.map((j, i) => ({
    model, action: label, job: i > 0 || jobless ? `+ ${name(j)}${j.label.startsWith("run after") ? " after" : ""}` : name(j),
    ok: j.ok, cancelled: j.cancelled, fast: j.fast_kernels,
    latency: j.t_start - tKey, wall: j.t_shown - tKey, compute: j.compute_ms, frames: j.frames,
    // The gaps the job's frames made: between them, and from its last one to the next.
    loop: j.max_loop_ms, task: j.max_task_ms, gap: Math.max(j.frames > 1 ? j.max_gap_ms : 0, j.next_gap_ms), next: j.next_loop_ms,
    why: whyLong(j),
    heap: b.heap_bytes,
  }));
  if (!jobs.length) rows.push({ model, action: label, job: jobless ? "(no job)" : "nothing began", error: !jobless });
  // The page's error banner: a new one, or the same text again from a job that failed.
  if (b.error && (b.error !== before.error || jobs.some((j) => !j.ok && !j.cancelled)))
    rows.push({ model, action: label, job: "error: " + b.error, error: true });
  return rows;
}

// Turns the Run tab's "fast kernels" box off, by clicking it as a user does.
async function referenceKernels(page) {
  await clickWidget(page, "tab:Run & parity");
  await clickWidget(page, "run tab:fast kernels");
  await waitState(page, (s) => s.fast_kernels === false, "fast kernels off");
  await rest(page);
}

const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

const load = () => os.loadavg().map((x) => x.toFixed(2)).join(" ");

function fmt(x) {
  if (x === null || x === undefined || !Number.isFinite(x) || x < 0) return "-";
  return x >= 100 ? x.toFixed(0) : x.toFixed(1);
}

// Where a job's longest main-loop call and task went, for a row over the target.
function whyLong(j) {
  const parts = [];
  if (j.max_loop_ms > TARGET_MS)
    parts.push(`loop ${fmt(j.max_loop_ms)} ms = frame ${fmt(j.max_loop_build_ms)} + job ${fmt(j.max_loop_end_ms)}` +
               (j.max_loop_what ? ` (${j.max_loop_what})` : ""));
  if (j.max_task_ms > TARGET_MS) parts.push(`task ${fmt(j.max_task_ms)} ms (${j.max_task_what || "?"})`);
  return parts.join("; ");
}

// The longest the main thread was ours in one go: a frame's main-loop call or a task between frames.
const longest = (r) => Math.max(r.loop, r.task || 0);

function printRow(r) {
  if (r.error || r.frames === undefined) {
    const text = r.job.length > 150 ? r.job.slice(0, 147) + "..." : r.job;
    console.log(`  ${r.model.padEnd(16)} ${r.action.padEnd(15)} ${text}`);
    return;
  }
  const mark = longest(r) > TARGET_MS ? " *" : "";
  const job = r.job + (r.ok === false ? (r.cancelled ? " CANCELLED" : " FAILED") : "");
  console.log(`  ${r.model.padEnd(16)} ${r.action.padEnd(15)} ${job.padEnd(34)} ${fmt(r.latency).padStart(6)} ${fmt(r.wall).padStart(8)}` +
              ` ${fmt(r.compute).padStart(8)} ${String(r.frames).padStart(6)} ${fmt(r.loop).padStart(7)} ${fmt(r.task).padStart(6)}${mark.padEnd(2)}` +
              ` ${fmt(r.gap).padStart(7)} ${fmt(r.next).padStart(7)}`);
  if (mark && r.why) console.log(`  ${"".padEnd(32)} * ${r.why}`);
}

// What is done to each model, in order: [kind, key or label, what the row says, options].
const SCRIPT = [
  ["open", "open"],
  ["key", "r", "R run"],
  ["key", "q", "Q prepare"],
  ["key", "k", "K calibrate"],
  ["key", "v", "V convert"],
  ["key", "r", "R run"],
  ["open", "open again"],
  ["key", "d", "D decompose"],
  ["key", "Control+z", "Ctrl+Z", { jobless: true }],
  ["key", "Shift+D", "Shift+D decomp."],
  ["key", "Control+z", "Ctrl+Z", { jobless: true }],
  ["reference"],
  ["key", "r", "R run ref"],
  ["key", "q", "Q prepare"],
  ["key", "k", "K calib. ref"],
];

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(path.join(args.dist, "index.html"))) throw new Error(`${args.dist}/index.html missing: run scripts/build_web.sh`);
  const files = args.models.map((m) => [m, modelFile(m)]);
  const server = await serve(args.dist);
  const browser = await launch();
  const all = [];
  const started = new Date();
  const version = browser.version();
  if (!args.json) {
    console.log(`Chromium ${version} headless (SwiftShader WebGL2), 1440x900, ?bench=1; ` +
                `${os.cpus().length} x ${os.cpus()[0].model}; load average ${load()} (1, 5, 15 min)`);
    console.log(`  ${"model".padEnd(16)} ${"action".padEnd(15)} ${"job".padEnd(34)}  begin     wall  compute frames    loop   task      gap    next`);
    console.log(`  ${"".padEnd(67)}     ms       ms       ms             ms     ms       ms      ms`);
  }
  try {
    for (const [name, file] of files) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      await context.addInitScript(inputRecorder);
      const page = await context.newPage();
      const errors = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
      await page.goto(server.url + "?bench=1&nosw=1");
      await waitBench(page, (b) => b.file && b.frames > 2, "the first frame");
      // A user takes seconds to pick a file; the page spends them warming up (main.cpp).
      await waitBench(page, (b) => b.warm_up_ms >= 0, "the idle warm-up", ACTION_TIMEOUT_MS);
      await rest(page);
      const idle0 = await bench(page);
      await page.waitForTimeout(1500);
      const quiet = framesSince(await bench(page), idle0.frames);
      const rows = [];
      const add = (rs) => { for (const r of rs) { rows.push(r); if (!args.json) printRow(r); } };
      const loadBefore = load();
      // --opens N: only opens, N times (the open's figures); --fast-only: no reference-kernel steps.
      const script = args.opens > 1 ? Array.from({ length: args.opens }, (_, i) => ["open", i ? "open again" : "open"])
        : args.fast ? SCRIPT.slice(0, SCRIPT.findIndex((s) => s[0] === "reference")) : SCRIPT;
      for (const [kind, what, label, opts] of script) {
        if (kind === "open") add(await openModel(page, name, file, what));
        else if (kind === "reference") await referenceKernels(page);
        else add(await press(page, name, what, label, opts));
      }
      if (!args.json)
        console.log(`  ${"".padEnd(16)} (idle before the open: loop p50 ${fmt(pct(quiet.loop, 0.5))} ms, gap p50 ${fmt(pct(quiet.gap, 0.5))} ms;` +
                    ` load average ${loadBefore} before, ${load()} after; heap ${((await bench(page)).heap_bytes / 1048576).toFixed(0)} MB` +
                    (errors.length ? `; page errors: ${errors.join("; ")}` : "") + ")");
      all.push(...rows);
      await context.close();
    }
  } finally {
    await browser.close();
    server.close();
  }
  if (args.json) {
    console.log(JSON.stringify({ started: started.toISOString(), chromium: version, load: os.loadavg(), rows: all }, null, 2));
    return;
  }
  const timed = all.filter((r) => !r.error && r.frames !== undefined);
  const over = timed.filter((r) => longest(r) > TARGET_MS);
  console.log(`\n${started.toISOString()} - ${new Date().toISOString()}; load average ${load()} at the end`);
  console.log(`* longest frame or task over ${TARGET_MS} ms: ${over.length} of ${timed.length} rows`);
}

// tools/run_bench.js drives the page's Run with these.
module.exports = { bench, waitBench, idle, inputRecorder, openModel, press, rest, load, fmt };

if (require.main === module) {
  main().catch((e) => {
    console.error(e && e.stack ? e.stack : e);
    process.exit(1);
  });
}
