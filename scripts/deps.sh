#!/usr/bin/env bash
# Installs everything pt2lab needs on Debian bookworm (or this machine kind), idempotently.
# Debian's archive only (plus the npm registry for browser tests); nothing else is fetched.
# Usage: scripts/deps.sh            (all: native + wasm + debootstrap for real torch + browser)
#        PT2LAB_DEPS=native scripts/deps.sh   (just what the native build and tests need)
set -euo pipefail

say() { printf '[deps] %s\n' "$*"; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    say "not root and no sudo: cannot install packages"; exit 1; fi
fi

# Package list (see docs/TOOLCHAIN notes in README): one line per need.
PKGS_NATIVE="cmake g++ make git xz-utils dpkg-dev ca-certificates nlohmann-json3-dev catch2 clang-format"
PKGS_WASM="emscripten"
# Real PyTorch runs in Debian sid/trixie roots that scripts/torch_env.sh makes with debootstrap.
PKGS_TORCH="python3 debootstrap"
# The page's fonts (tools/subset_fonts.py): Noto Sans CJK TC for its own words,
# the others for any character a user's text brings (emoji, Arabic, Thai, CJK Ext. B...).
PKGS_WEB="chromium fonts-noto-cjk fonts-jetbrains-mono fonts-noto-core fonts-symbola fonts-hanazono fonts-unifont python3-fonttools brotli"
PKGS_FUZZ="clang-14 libclang-rt-14-dev" # libFuzzer + sanitizers for fuzz/ (scripts/fuzz.sh)

want="${PT2LAB_DEPS:-all}"
case "$want" in
  native) PKGS="$PKGS_NATIVE" ;;
  all)    PKGS="$PKGS_NATIVE $PKGS_WASM $PKGS_TORCH $PKGS_WEB $PKGS_FUZZ" ;;
  *) say "unknown PT2LAB_DEPS=$want (native|all)"; exit 2 ;;
esac

missing=""
for p in $PKGS; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
# Node.js + npm: this machine kind ships Node 20 from another package that conflicts
# with Debian's npm; take Debian's only when node/npm are absent.
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm  >/dev/null 2>&1 || missing="$missing npm"

if [ -n "$missing" ]; then
  say "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
else
  say "all Debian packages present ($want)"
fi
# The Dear ImGui source for the page (Debian source package, unpacked under build/).
# A failed download only warns here; the page's build (scripts/build_web.sh)
# runs scripts/fetch_imgui.sh itself and stops if the source is missing.
if [ "$want" = all ]; then
  bash "$(dirname "$0")/fetch_imgui.sh" || say "WARNING: could not fetch the Dear ImGui source (needed only for the page)"
fi
say "done"
