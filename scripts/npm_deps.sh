#!/usr/bin/env bash
# Installs the browser tests' npm packages (playwright-core, pinned in
# package-lock.json; it drives Debian's Chromium and downloads no browser).
# Idempotent: does nothing when node_modules already matches the lock file.
set -euo pipefail
cd "$(dirname "$0")/.."
want=$(node -e 'console.log(require("./package-lock.json").packages["node_modules/playwright-core"].version)')
have=$(node -e 'try { console.log(require("./node_modules/playwright-core/package.json").version) } catch (e) { console.log("") }')
if [ "$want" = "$have" ]; then
    echo "[npm] playwright-core $have present"
    exit 0
fi
echo "[npm] npm ci (playwright-core $want)"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
