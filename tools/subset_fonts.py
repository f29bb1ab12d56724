"""Subsets the page's two fonts from Debian's font packages to the glyphs it
can show: every character of the app's sources (its UI strings, among them
the page's word table src/app/page_strings.inc in both languages) and of the
lesson texts (assets/lessons/*.md), plus printable ASCII; and cuts every other
character a fallback font draws into pages fetched when needed.

  /usr/bin/python3 tools/subset_fonts.py --out dist/fonts

writes ui.otf (Noto Sans CJK TC, face 3 of NotoSansCJK-Regular.ttc, from
fonts-noto-cjk), mono.ttf (JetBrains Mono Regular, from fonts-jetbrains-mono)
and chars.txt (the characters, from which the app builds its glyph ranges).
It fails when the UI font lacks a character the page's own text uses (no box
or "?" in the page's own words; the page draws its first frame with ui.otf
alone). Layout tables and hinting are dropped: Dear ImGui uses neither.

Text the page meets later (a file named 王老師的貓.pt2 or 貓🐱 مرحبا.pt2, a
teacher's lesson, a search typed in) can hold any character. For those it
writes more/: every character that a font of FALLBACKS draws (the subset's
too, so that more/ depends on the fonts alone), each taken from the first font there that has it (Noto Sans CJK TC
first, then Noto's per-script and symbol fonts, Symbola's emoji, HanaMin's
CJK extensions, Unifont last), cut into pages of 256 code points (page = code
point >> 8, all of Unicode up to U+10FFFF). A file is one font, so a page whose
characters come from several fonts is one file per font, in FALLBACKS order:
more/PP.otf for the first, more/PP-1.otf, more/PP-2.otf ... for the next (PP =
the page in hex, two digits at least: 4e, 1f4, 200). more/index.txt names every
file (without .otf), space-separated; the app fetches all the files of a page
when a character of it first appears (src/app/glyph_wants.h), and the service
worker keeps the files fetched, not all of them. Only pages with a glyph are
written.

The files are OpenType with CFF (Noto CJK, Unifont) or TrueType outlines.
Dear ImGui scales a font so that hhea ascent - descent fills the pixel size it
is given, and the fonts' ratios of that to their em differ (Noto Sans CJK 1.448,
Symbola 1.27, Unifont 1.0): every page file therefore gets Noto Sans CJK TC's
hhea ascent and descent per em, so merged at the UI font's size its glyphs have
the UI font's em, and ImGui puts them on the UI font's baseline. Characters
that are never drawn (Unicode's default ignorables: joiners, variation
selectors, bidi marks, tags) come from a generated font whose one glyph is
blank and zero-width, before every other font: Unifont would draw them as
labelled boxes.

  --extra-text TEXT   characters added to the page's own text (checks a
                      lesson's characters; tests use it for the failure)
  --no-pages          skip more/
  --cache DIR         make more/ in DIR/more and reuse it while this script and
                      the font files are the same (scripts/build_web.sh: it takes
                      minutes, ~1200 files)
"""

import argparse
import glob
import hashlib
import logging
import multiprocessing
import os
import re
import shutil
import sys
import unicodedata

from fontTools import subset
from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fontTools.ttLib import TTFont

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FONTS = "/usr/share/fonts"
CJK_TTC = FONTS + "/opentype/noto/NotoSansCJK-Regular.ttc"
CJK_FACE = 3  # Noto Sans CJK TC
MONO_TTF = FONTS + "/truetype/jetbrains-mono/JetBrainsMono-Regular.ttf"

# Where the page's visible text comes from.
TEXT_GLOBS = ["src/app/**/*.cpp", "src/app/**/*.h", "src/app/**/*.inc", "assets/lessons/*.md"]

# The fonts a character of more/ is looked up in, in this order: (Debian package,
# path under /usr/share/fonts, face). A glob takes its files by name, leaving out
# the files listed on their own and those GLOB_SKIP names.
FALLBACKS = [
    ("fonts-noto-cjk", "opentype/noto/NotoSansCJK-Regular.ttc", CJK_FACE),  # the UI font
    ("fonts-noto-core", "truetype/noto/NotoSans-Regular.ttf", 0),  # Latin, Greek, Cyrillic
    ("fonts-noto-core", "truetype/noto/NotoSans*-Regular.ttf", 0),  # Arabic ... Yi, a font each
    ("fonts-noto-core", "truetype/noto/NotoSansSymbols-Regular.ttf", 0),
    ("fonts-noto-core", "truetype/noto/NotoSansSymbols2-Regular.ttf", 0),  # ✓ ★ ♥, some emoji
    ("fonts-noto-core", "truetype/noto/NotoSansMath-Regular.ttf", 0),
    ("fonts-noto-core", "truetype/noto/NotoMusic-Regular.ttf", 0),
    ("fonts-noto-core", "truetype/noto/NotoSerif*-Regular.ttf", 0),  # scripts with no Sans: Tangut, Tibetan...
    ("fonts-symbola", "truetype/ancient-scripts/Symbola_hint.ttf", 0),  # emoji to Unicode 9, outlines
    ("fonts-hanazono", "truetype/hanazono/HanaMinA.ttf", 0),  # ideographs Noto CJK lacks
    ("fonts-hanazono", "truetype/hanazono/HanaMinB.ttf", 0),  # CJK Extensions B to F
    ("fonts-unifont", "opentype/unifont/unifont.otf", 0),  # last: any BMP character
    ("fonts-unifont", "opentype/unifont/unifont_upper.otf", 0),  # and newer emoji (Unicode 15)
]
# Other styles of a script a Sans already has.
GLOB_SKIP = re.compile(r"Noto(Sans|Serif)(Display|AdlamUnjoined|Tifinagh.+|TamilSlanted)?-Regular")
BLANK = "blank"  # the generated font of the default ignorables

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 15), the
# assigned ones of U+E0000..E0FFF: drawn as nothing, never as a glyph of their own.
DEFAULT_IGNORABLE = [
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F), (0xE0100, 0xE01EF),
]


def is_ignorable(cp: int) -> bool:
    return any(a <= cp <= b for a, b in DEFAULT_IGNORABLE)


def never_paged(cp: int) -> bool:
    """Code points the app never asks a page for (src/app/glyph_wants.cpp): ASCII and
    the C1 controls, U+FFFD, surrogates, private use, noncharacters."""
    if cp < 0xA0 or cp == 0xFFFD or (cp & 0xFFFE) == 0xFFFE or 0xFDD0 <= cp <= 0xFDEF:
        return True
    return unicodedata.category(chr(cp)) in ("Cs", "Co")


def fallback_fonts() -> list:
    """FALLBACKS with the globs expanded: (package, path, face) in lookup order."""
    listed = {os.path.join(FONTS, p) for _, p, _ in FALLBACKS if "*" not in p}
    out, seen = [], set()
    for package, pattern, face in FALLBACKS:
        paths = sorted(glob.glob(os.path.join(FONTS, pattern))) if "*" in pattern else \
            [os.path.join(FONTS, pattern)]
        for path in paths:
            if "*" in pattern and (path in listed or GLOB_SKIP.search(os.path.basename(path))):
                continue
            if (path, face) not in seen:
                seen.add((path, face))
                out.append((package, path, face))
    return out


def wanted_characters(extra: str = "") -> str:
    chars = {chr(c) for c in range(0x20, 0x7F)}
    for pattern in TEXT_GLOBS:
        for path in sorted(glob.glob(os.path.join(REPO_ROOT, pattern), recursive=True)):
            with open(path, encoding="utf-8") as f:
                chars.update(ch for ch in f.read() if ch >= " " and ch != "\x7f")
    chars.update(ch for ch in extra if ch >= " " and ch != "\x7f")
    return "".join(sorted(chars))


def cmap_of(src: str, face: int) -> dict:
    return TTFont(src, fontNumber=face, lazy=True).getBestCmap()


def subset_options(face: int, notdef: bool) -> subset.Options:
    opts = subset.Options()
    opts.layout_features = []
    opts.hinting = False
    opts.name_IDs = [1, 2]  # family and style: enough to identify the file
    opts.notdef_outline = notdef
    opts.glyph_names = False
    opts.font_number = face
    opts.prune_unicode_ranges = False  # fontTools 4.38 fails on Unifont's OS/2 bits
    return opts


def subset_font(src: str, face: int, dst: str, text: str = "", unicodes=(),
                notdef: bool = True, hhea=None) -> None:
    """Writes the glyphs of `text` / `unicodes` from face `face` of `src` to `dst`;
    `hhea` = (ascent, descent) per em replaces the font's (see the module comment)."""
    opts = subset_options(face, notdef)
    font = subset.load_font(src, opts, dontLoadGlyphNames=True)
    sub = subset.Subsetter(opts)
    sub.populate(text=text, unicodes=list(unicodes))
    sub.subset(font)
    if hhea:
        set_hhea(font, hhea)
    subset.save_font(font, dst, opts)


def set_hhea(font: TTFont, hhea) -> None:
    upm = font["head"].unitsPerEm
    total = round((hhea[0] - hhea[1]) * upm)  # what ImGui scales by, kept whole
    font["hhea"].ascent = round(hhea[0] * upm)
    font["hhea"].descent = font["hhea"].ascent - total
    font["hhea"].lineGap = 0


def write_blank(dst: str, unicodes, hhea) -> None:
    """A font whose every character is one blank, zero-width glyph."""
    fb = FontBuilder(1000, isTTF=True)
    fb.setupGlyphOrder([".notdef", "blank"])
    fb.setupCharacterMap({cp: "blank" for cp in unicodes})
    empty = TTGlyphPen(None).glyph()
    fb.setupGlyf({".notdef": empty, "blank": empty})
    fb.setupHorizontalMetrics({".notdef": (500, 0), "blank": (0, 0)})
    fb.setupHorizontalHeader(ascent=round(hhea[0] * 1000), descent=round(hhea[1] * 1000))
    fb.setupNameTable({"familyName": "pt2lab blank", "styleName": "Regular"})
    fb.setupOS2()
    fb.setupPost()
    fb.save(dst)


def drawn_cmap(path: str) -> dict:
    """The cmap stb_truetype (Dear ImGui's rasterizer) reads: the last Unicode or
    Windows Unicode subtable in the file's order."""
    tables = [t for t in TTFont(path)["cmap"].tables
              if t.platformID == 0 or (t.platformID == 3 and t.platEncID in (1, 10))]
    return tables[-1].cmap if tables else {}


def _write_file(job) -> tuple:
    stem, (package, src, face), unicodes, dst, hhea = job
    logging.getLogger("fontTools").setLevel(logging.ERROR)  # Unifont's old timestamps, FFTM
    if src == BLANK:
        write_blank(dst, unicodes, hhea)
    else:
        # A page is merged under the subset, whose .notdef is the one drawn.
        subset_font(src, face, dst, unicodes=unicodes, notdef=False,
                    hhea=None if (src, face) == (CJK_TTC, CJK_FACE) else hhea)
    lost = set(unicodes) - set(drawn_cmap(dst))
    return stem, os.path.basename(src), len(unicodes), os.path.getsize(dst), sorted(lost)


def plan_pages(fonts: list) -> dict:
    """(page, font index) -> code points: every code point a font draws, from the
    first font that has it (font index -1: the blank one). The subset's characters
    are there too, so that more/ depends on the fonts only (--cache)."""
    owner = {}
    for i, (_, src, face) in enumerate(fonts):
        for cp in cmap_of(src, face):
            if cp not in owner and not never_paged(cp):
                owner[cp] = -1 if is_ignorable(cp) else i
    for a, b in DEFAULT_IGNORABLE:
        for cp in range(a, b + 1):
            owner[cp] = -1
    plan = {}
    for cp, i in owner.items():
        plan.setdefault((cp >> 8, i), []).append(cp)
    return plan


def cache_key(fonts: list) -> str:
    """What more/ is made from: this script and the font files."""
    h = hashlib.sha256(open(os.path.abspath(__file__), "rb").read())
    for _, path, face in fonts:
        st = os.stat(path)
        h.update(f"{path}#{face} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def write_pages(folder: str, fonts: list, hhea) -> int:
    """folder/PP[-K].otf for every page a fallback font has characters of, and
    folder/index.txt naming them (see the module comment)."""
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    plan = plan_pages(fonts)
    jobs, parts = [], {}
    # Each page's files in FALLBACKS order, the blank font first.
    for (page, i) in sorted(plan):
        k = parts.get(page, 0)
        parts[page] = k + 1
        stem = f"{page:02x}" + (f"-{k}" if k else "")
        font = ("", BLANK, 0) if i < 0 else fonts[i]
        jobs.append((stem, font, sorted(plan[(page, i)]), os.path.join(folder, stem + ".otf"), hhea))
    # The longest first (a HanaMin glyph costs about four of another's), so that
    # the pool's last jobs are short.
    cost = [len(j[2]) * (4 if "hanazono" in j[1][1] else 1) for j in jobs]
    order = sorted(range(len(jobs)), key=lambda j: -cost[j])
    with multiprocessing.Pool(os.cpu_count() or 2) as pool:
        done = pool.map(_write_file, [jobs[j] for j in order], chunksize=1)
    done.sort(key=lambda d: (int(d[0].split("-")[0], 16), d[0]))
    lost = [(stem, cp) for stem, _, _, _, cps in done for cp in cps]
    if lost:
        print("error: characters lost from a page file's cmap: " +
              ", ".join(f"U+{cp:04X} in {stem}.otf" for stem, cp in lost[:20]), file=sys.stderr)
        return 1
    with open(os.path.join(folder, "index.txt"), "w") as f:
        f.write(" ".join(stem for stem, *_ in done) + "\n")
    by_font = {}
    for _, name, n, size, _ in done:
        c = by_font.setdefault(name, [0, 0, 0])
        c[0], c[1], c[2] = c[0] + 1, c[1] + n, c[2] + size
    for name, (files, n, size) in sorted(by_font.items(), key=lambda kv: -kv[1][2])[:12]:
        print(f"[fonts]   {name}: {files} files, {n} characters, {size} bytes")
    print(f"[fonts] more/: {len(done)} files on {len(parts)} pages, "
          f"{sum(d[2] for d in done)} characters, {sum(d[3] for d in done)} bytes")
    return 0


def pages(out: str, fonts: list, cache: str) -> int:
    """out/more/, made in `cache`/more/ (kept for the next run while this script
    and the fonts stay the same) when a cache folder is given."""
    head = TTFont(CJK_TTC, fontNumber=CJK_FACE, lazy=True)
    upm = head["head"].unitsPerEm
    hhea = (head["hhea"].ascent / upm, head["hhea"].descent / upm)
    dst = os.path.join(out, "more")
    if not cache:
        return write_pages(dst, fonts, hhea)
    key, stamp = cache_key(fonts), os.path.join(cache, "key.txt")
    made = os.path.join(cache, "more")
    if not (os.path.exists(stamp) and open(stamp).read() == key):
        if os.path.exists(stamp):
            os.remove(stamp)
        if write_pages(made, fonts, hhea):
            return 1
        with open(stamp, "w") as f:
            f.write(key)
    else:
        print(f"[fonts] more/ from {cache} (the fonts and this script are unchanged)")
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(made, dst)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for ui.otf, mono.ttf and chars.txt")
    ap.add_argument("--no-pages", action="store_true", help="skip more/ (the fallback pages)")
    ap.add_argument("--extra-text", default="", help="characters added to the page's own text")
    ap.add_argument("--cache", default="", help="folder that keeps more/ between runs")
    args = ap.parse_args()
    logging.getLogger("fontTools").setLevel(logging.ERROR)
    fonts = fallback_fonts()
    absent = [(pkg, path) for pkg, path, _ in fonts + [("fonts-jetbrains-mono", MONO_TTF, 0)]
              if not os.path.exists(path)]
    if absent:
        print("error: " + ", ".join(p for _, p in absent) + " missing (install " +
              " ".join(sorted({pkg for pkg, _ in absent})) + "; scripts/deps.sh does)",
              file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    text = wanted_characters(args.extra_text)
    # The UI font must cover everything (the code font falls back to it, merged
    # in by the app): a character in neither would show as a box.
    cjk = cmap_of(CJK_TTC, CJK_FACE)
    missing = [c for c in text if ord(c) not in cjk]
    if missing:
        cmaps = [(os.path.basename(p), cmap_of(p, f)) for _, p, f in fonts[1:]]
        def where(c):
            found = next((name for name, m in cmaps if ord(c) in m), None)
            return f"only {found} has it" if found else "no font has it"
        print("error: Noto Sans CJK TC has no glyph for " +
              ", ".join(f"U+{ord(c):04X} {c!r} ({where(c)})" for c in missing) +
              " (used in " + ", ".join(TEXT_GLOBS) + (" or --extra-text" if args.extra_text else "") +
              "): the page's own words must be in its UI font", file=sys.stderr)
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
    return 0 if args.no_pages else pages(args.out, fonts, args.cache)


if __name__ == "__main__":
    sys.exit(main())
