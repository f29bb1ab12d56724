#!/usr/bin/env bash
# Builds the page into a self-contained dist/ (or $PT2LAB_DIST): index.html and
# its scripts from web/, app.js + app.wasm from the `wasm` preset (src/app),
# the fonts subset to the page's text (tools/subset_fonts.py), the lesson
# graphs with their index, the lessons (assets/lessons) and their fx graphs,
# the service worker, then NAME.br / NAME.gz beside every file that compresses
# (tools/precompress.js) for hosts that serve them (docs/EMBEDDING.md).
# Every URL in it is relative: copy it anywhere.
# Needs the packages of scripts/deps.sh; fetches the Dear ImGui source if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${PT2LAB_DIST:-dist}
JOBS=${PT2LAB_JOBS:-2}
export NODE_PATH=/usr/share/nodejs

bash scripts/fetch_imgui.sh
cmake --preset wasm >/dev/null
cmake --build --preset wasm -j"$JOBS" --target pt2lab_page

tmp="$OUT.tmp"
rm -rf "$tmp"
mkdir -p "$tmp/fonts" "$tmp/assets/graphs" "$tmp/assets/lessons" "$tmp/assets/fx"
cp web/index.html web/style.css web/loader.js web/bridge.js web/text_view.js web/favicon.svg "$tmp/"
cp build/wasm/src/app/app.js build/wasm/src/app/app.wasm "$tmp/"
# The font pages (fonts/more/, minutes to cut) are kept in build/font_pages and
# made again only when the script or a font file changes.
/usr/bin/python3 tools/subset_fonts.py --out "$tmp/fonts" --cache build/font_pages
cp assets/graphs/*.pt2 "$tmp/assets/graphs/"
# The lessons (the loader fetches every file assets/lessons/index.json names)
# and the symbolic_trace graphs they show beside the exported ones.
cp assets/lessons/*.md "$tmp/assets/lessons/"
cp assets/fx/*.json "$tmp/assets/fx/"
/usr/bin/python3 - "$tmp/assets/graphs" <<'PY'
import json, os, sys
folder = sys.argv[1]
names = sorted(n for n in os.listdir(folder) if n.endswith((".pt2", ".json")) and n != "index.json")
with open(os.path.join(folder, "index.json"), "w") as f:
    json.dump(names, f)
    f.write("\n")
PY
/usr/bin/python3 - "$tmp/assets/lessons" <<'PY'
import json, os, sys
folder = sys.argv[1]
names = sorted(n for n in os.listdir(folder) if n.endswith(".md"))
with open(os.path.join(folder, "index.json"), "w") as f:
    json.dump(names, f)
    f.write("\n")
PY
cp web/manifest.webmanifest "$tmp/"
# The service worker: this build's version and the files it keeps for offline use.
/usr/bin/python3 - "$tmp" web/sw.js <<'PY'
import hashlib, json, os, sys
root, src = sys.argv[1], sys.argv[2]
files, digest = [], hashlib.sha256()
for d, _, names in sorted(os.walk(root)):
    for n in sorted(names):
        rel = os.path.relpath(os.path.join(d, n), root)
        # Precompressed siblings are the host's business: the page never asks for them.
        if rel.endswith((".br", ".gz")) and os.path.exists(os.path.join(root, rel[:-3])):
            continue
        # The font pages (50 MB) are fetched one by one when a character needs them;
        # the service worker keeps the ones fetched, and a new build's version covers them.
        if rel.startswith("fonts/more/") and rel.endswith(".otf"):
            with open(os.path.join(d, n), "rb") as f:
                digest.update(rel.encode() + b"\0" + f.read())
            continue
        files.append(rel)
        with open(os.path.join(d, n), "rb") as f:
            digest.update(rel.encode() + b"\0" + f.read())
files = ["./"] + sorted(files)
text = open(src).read().replace("__PT2LAB_VERSION__", digest.hexdigest()[:16])
with open(os.path.join(root, "sw.js"), "w") as f:
    f.write(text.replace("__PT2LAB_FILES__", json.dumps(files)))
PY
# Last, so that sw.js is compressed too and its list and version stay those of the plain files.
# build/precompress keeps what it compressed before (the font pages: 2.5 minutes).
node tools/precompress.js "$tmp" --cache build/precompress
rm -rf "$OUT"
mv "$tmp" "$OUT"
echo "[web] wrote $OUT/: $(du -sh --exclude='*.br' --exclude='*.gz' "$OUT" | cut -f1) plain, $(du -sh "$OUT" | cut -f1) with the siblings, app.wasm $(stat -c %s "$OUT/app.wasm") bytes"
