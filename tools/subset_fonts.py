"""Subsets the page's two fonts from Debian's font packages to the glyphs it
can show: every character of the app's sources (its UI strings, among them
the page's word table src/app/page_strings.inc in both languages) and of the
lesson texts (assets/lessons/*.md), plus printable ASCII.

  /usr/bin/python3 tools/subset_fonts.py --out dist/fonts

writes ui.otf (Noto Sans CJK TC, face 3 of NotoSansCJK-Regular.ttc, from
fonts-noto-cjk), mono.ttf (JetBrains Mono Regular, from fonts-jetbrains-mono)
and chars.txt (the characters, from which the app builds its glyph ranges).
It fails when the UI font lacks a character the text uses (no box glyphs in
the page). Layout tables and hinting are dropped: Dear ImGui uses neither.

Text the page meets later (a file named 王老師的貓.pt2, a teacher's lesson, a
search typed in) can hold characters outside that subset. For those it also
writes more/XX.otf: the rest of Noto Sans CJK TC cut into pages of 256 code
points (XX = code point >> 8, two hex digits; the Basic Multilingual Plane), and
more/index.txt, the pages there are. The app fetches a page when a character of
it first appears (src/app/glyph_wants.h); the service worker keeps the pages
it fetched, not all of them.
"""

import argparse
import glob
import multiprocessing
import os
import sys

from fontTools import subset
from fontTools.ttLib import TTFont

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CJK_TTC = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
CJK_FACE = 3  # Noto Sans CJK TC
MONO_TTF = "/usr/share/fonts/truetype/jetbrains-mono/JetBrainsMono-Regular.ttf"

# Where the page's visible text comes from.
TEXT_GLOBS = ["src/app/**/*.cpp", "src/app/**/*.h", "src/app/**/*.inc", "assets/lessons/*.md"]


def wanted_characters() -> str:
    chars = {chr(c) for c in range(0x20, 0x7F)}
    for pattern in TEXT_GLOBS:
        for path in sorted(glob.glob(os.path.join(REPO_ROOT, pattern), recursive=True)):
            with open(path, encoding="utf-8") as f:
                chars.update(ch for ch in f.read() if ch >= " " and ch != "\x7f")
    return "".join(sorted(chars))


def missing_characters(src: str, face: int, text: str) -> str:
    """The characters of `text` the font has no glyph for."""
    cmap = TTFont(src, fontNumber=face, lazy=True).getBestCmap()
    return "".join(ch for ch in text if ord(ch) not in cmap)


def subset_font(src: str, face: int, dst: str, text: str = "", unicodes=(),
                notdef: bool = True) -> None:
    """Writes the glyphs of `text` / `unicodes` from face `face` of `src` to `dst`."""
    opts = subset.Options()
    opts.layout_features = []
    opts.hinting = False
    opts.name_IDs = [1, 2]  # family and style: enough to identify the file
    opts.notdef_outline = notdef
    opts.glyph_names = False
    opts.font_number = face
    font = subset.load_font(src, opts, dontLoadGlyphNames=True)
    sub = subset.Subsetter(opts)
    sub.populate(text=text, unicodes=list(unicodes))
    sub.subset(font)
    subset.save_font(font, dst, opts)


def _subset_page(job) -> tuple:
    page, unicodes, dst = job
    # A page is merged under the subset, whose .notdef is the one drawn.
    subset_font(CJK_TTC, CJK_FACE, dst, unicodes=unicodes, notdef=False)
    return page, len(unicodes), os.path.getsize(dst)


def write_pages(text: str, out: str) -> None:
    """more/XX.otf for every page of the BMP where the UI font has characters the
    subset left out, and more/index.txt naming them (hex, space-separated)."""
    folder = os.path.join(out, "more")
    os.makedirs(folder, exist_ok=True)
    have = {ord(c) for c in text}
    pages = {}
    for cp in TTFont(CJK_TTC, fontNumber=CJK_FACE, lazy=True).getBestCmap():
        if cp < 0x10000 and cp not in have:
            pages.setdefault(cp >> 8, []).append(cp)
    jobs = [(p, sorted(cps), os.path.join(folder, f"{p:02x}.otf")) for p, cps in sorted(pages.items())]
    with multiprocessing.Pool(os.cpu_count() or 2) as pool:
        done = pool.map(_subset_page, jobs)
    with open(os.path.join(folder, "index.txt"), "w") as f:
        f.write(" ".join(f"{p:02x}" for p, _, _ in done) + "\n")
    print(f"[fonts] more/: {len(done)} pages, {sum(n for _, n, _ in done)} characters, "
          f"{sum(b for _, _, b in done)} bytes")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for ui.otf, mono.ttf and chars.txt")
    ap.add_argument("--no-pages", action="store_true", help="skip more/ (the fallback pages)")
    args = ap.parse_args()
    for path in (CJK_TTC, MONO_TTF):
        if not os.path.exists(path):
            print(f"error: {path} is missing (install fonts-noto-cjk and fonts-jetbrains-mono)",
                  file=sys.stderr)
            return 1
    os.makedirs(args.out, exist_ok=True)
    text = wanted_characters()
    # The UI font must cover everything (the code font falls back to it, merged
    # in by the app): a character in neither would show as a box.
    missing = missing_characters(CJK_TTC, CJK_FACE, text)
    if missing:
        print("error: Noto Sans CJK TC has no glyph for " +
              " ".join(f"U+{ord(c):04X} {c!r}" for c in missing) +
              " (used in " + ", ".join(TEXT_GLOBS) + ")", file=sys.stderr)
        return 1
    subset_font(CJK_TTC, CJK_FACE, os.path.join(args.out, "ui.otf"), text=text)
    subset_font(MONO_TTF, 0, os.path.join(args.out, "mono.ttf"), text=text)
    ui, mono = (len(TTFont(os.path.join(args.out, n)).getGlyphOrder())
                for n in ("ui.otf", "mono.ttf"))
    with open(os.path.join(args.out, "chars.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    sizes = {n: os.path.getsize(os.path.join(args.out, n)) for n in ("ui.otf", "mono.ttf")}
    print(f"[fonts] {len(text)} characters: ui.otf {ui} glyphs {sizes['ui.otf']} bytes, "
          f"mono.ttf {mono} glyphs {sizes['mono.ttf']} bytes")
    if not args.no_pages:
        write_pages(text, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
