#!/usr/bin/env bash
# Builds pt2lab's page from scratch and serves it: installs what it needs
# (scripts/deps.sh, Debian packages only), builds dist/ (scripts/build_web.sh)
# and serves it on http://127.0.0.1:$PORT (default 8000) until Ctrl+C.
#   bash scripts/serve.sh            PORT=8080 bash scripts/serve.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8000}

bash scripts/deps.sh
bash scripts/build_web.sh
printf '\npt2lab is at  http://127.0.0.1:%s/   (Ctrl+C stops it)\n\n' "$PORT"
exec python3 -m http.server "$PORT" --bind 127.0.0.1 -d dist
