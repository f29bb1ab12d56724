#!/usr/bin/env bash
# Fetches the Dear ImGui source (1.90.1, with backends/) from Debian's trixie
# source packages into build/third_party/imgui, without touching the system's
# apt configuration (private sources, lists and cache folders under build/).
# Nothing from trixie is installed; only the source tarball is downloaded.
# Idempotent: does nothing when the source is already unpacked.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=build/third_party/imgui
if [ -f "$DEST/imgui.cpp" ] && [ -f "$DEST/backends/imgui_impl_opengl3.cpp" ]; then
    echo "[imgui] source present in $DEST"
    exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO=sudo
APT=build/third_party/apt
mkdir -p "$APT/sources" "$APT/lists/partial" "$APT/cache/archives/partial" "$DEST"

# The mirror this machine already uses (so no host name is written here).
uri=""
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^(http|https|file):/) {print $i; exit}}' /etc/apt/sources.list)
fi
[ -n "$uri" ] || { echo "[imgui] cannot find the Debian mirror in /etc/apt"; exit 1; }
cat > "$APT/sources/trixie-src.sources" <<SRC
Types: deb-src
URIs: $uri
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$PWD/$APT/sources"
      -o "Dir::State::Lists=$PWD/$APT/lists" -o "Dir::Cache=$PWD/$APT/cache" -o Debug::NoLocking=1)
echo "[imgui] downloading the imgui source package from $uri (trixie, deb-src)"
$SUDO apt-get "${opts[@]}" -qq update
work=$(mktemp -d)
( cd "$work" && $SUDO apt-get "${opts[@]}" -qq source --download-only imgui ) || true
tarball=$(ls "$work"/imgui_*.orig.tar.* 2>/dev/null | head -n 1)
[ -n "$tarball" ] || { echo "[imgui] the source tarball did not arrive"; exit 1; }
tar -xf "$tarball" -C "$DEST" --strip-components=1
rm -rf "$work"
[ -f "$DEST/imgui.cpp" ] || { echo "[imgui] unexpected tarball layout"; exit 1; }
echo "[imgui] unpacked $(basename "$tarball") into $DEST"
