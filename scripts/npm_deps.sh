#!/usr/bin/env bash
# Installs the npm packages of the browser tests and benchmarks, pinned in
# package-lock.json (playwright-core drives Debian's Chromium and downloads no browser).
# Idempotent: does nothing when node_modules already matches the lock file.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every devDependency at the version package-lock.json pins (playwright-core for the
# browser tests, onnxruntime-web for tools/model_bench.js).
missing=$(node -e '
const lock = require("./package-lock.json");
const want = Object.keys(require("./package.json").devDependencies);
const out = [];
for (const name of want) {
  const v = lock.packages["node_modules/" + name].version;
  let have = "";
  try { have = require("./node_modules/" + name + "/package.json").version; } catch (e) {}
  if (have !== v) out.push(name + "@" + v);
}
console.log(out.join(" "));')
if [ -z "$missing" ]; then
    echo "[npm] devDependencies present"
    exit 0
fi
echo "[npm] npm ci ($missing)"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
