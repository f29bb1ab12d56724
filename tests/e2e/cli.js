// Expected values for the browser tests, from the native pt2lab CLI on the
// same files (never from the page): node lists, code, run outputs, the code
// after a decomposition or a convert, and error messages of bad files.
"use strict";
const { spawnSync } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { ROOT } = require("./lib");

const CLI = process.env.PT2LAB_CLI || path.join(ROOT, "build/native/src/cli/pt2lab");

function run(args, opts = {}) {
  const r = spawnSync(CLI, args, { encoding: "utf8", cwd: opts.cwd || ROOT });
  if (r.error) throw new Error(`cannot run ${CLI}: ${r.error.message}`);
  if (opts.fail) {
    if (r.status !== 1) throw new Error(`pt2lab ${args.join(" ")}: expected exit 1, got ${r.status}`);
    return r.stderr;
  }
  if (r.status !== 0) throw new Error(`pt2lab ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

// print(graph) lines -> [{name, op, target}], plus the output node.
function nodes(file, module = false) {
  const out = run(["graph", file].concat(module ? ["--module"] : []));
  const list = [];
  for (const line of out.split("\n")) {
    const m = /^\s+%(\S+) : \[num_users=\d+\] = (\w+)\[target=(.*?)\]/.exec(line);
    if (m) list.push({ name: m[1], op: m[2], target: m[3] });
    else if (/^\s+return /.test(line)) list.push({ name: "output", op: "output", target: "output" });
  }
  if (list.length === 0) throw new Error("no nodes parsed from pt2lab graph " + file);
  return list;
}

// gm.code as `pt2lab code` prints it (the CLI adds one newline).
function code(file, module = false) {
  const out = run(["code", file].concat(module ? ["--module"] : []));
  if (!out.endsWith("\n")) throw new Error("pt2lab code: no final newline");
  return out.slice(0, -1);
}

// The outputs of `pt2lab run FILE --module --out x.json [--seed N]`: [{name, shape, data}].
function runOutputs(file, seed) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pt2lab-e2e-"));
  const out = path.join(dir, "out.json");
  run(["run", file, "--module", "--out", out].concat(seed === undefined ? [] : ["--seed", String(seed)]));
  const j = JSON.parse(fs.readFileSync(out, "utf8"));
  fs.rmSync(dir, { recursive: true, force: true });
  return j.outputs;
}

// The gm.code a command prints: from the first "def forward" (with torch's
// three leading newlines) to its closing "\n    ".
function printedForward(text) {
  const start = text.indexOf("\n\n\ndef forward");
  if (start < 0) throw new Error("no forward() in:\n" + text);
  const rest = text.slice(start);
  const end = rest.search(/\n    \n/);
  return rest.slice(0, end + 5);
}

function decomposedCode(file, level) {
  return printedForward(run(["decompose", file, "--level", level]));
}

function convertedCode(file) {
  return printedForward(run(["convert", file]));
}

// What the CLI says about a bad file (the core's Error::str(), without the prefix).
function errorOf(file) {
  const err = run(["graph", path.basename(file)], { fail: true, cwd: path.dirname(file) });
  return err.replace(/^pt2lab: error: /, "").trim();
}

// The bytes `pt2lab save FILE <dir>/<name> [options]` writes (the archive's root folder
// is named after <name>, as the page names its download's).
function saved(file, name, options = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pt2lab-e2e-"));
  run(["save", file, path.join(dir, name)].concat(options));
  const bytes = fs.readFileSync(path.join(dir, name));
  fs.rmSync(dir, { recursive: true, force: true });
  return bytes;
}

module.exports = { CLI, nodes, code, runOutputs, decomposedCode, convertedCode, errorOf, saved };
