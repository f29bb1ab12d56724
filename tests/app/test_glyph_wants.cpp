// GlyphWants: characters outside the page's font subset ask for the files of
// their font page once, and reach the atlas when all of the page's files are there.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "glyph_wants.h"
#include "util/utf8.h"

using namespace pt2lab::app;

namespace {

std::string text_of(const std::vector<char32_t>& cps) {
    std::string s;
    for (char32_t c : cps) pt2lab::append_utf8(s, c);
    return s;
}

std::vector<std::string> stems(const std::vector<FontFile>& files) {
    std::vector<std::string> out;
    for (FontFile f : files) out.push_back(font_file_stem(f));
    return out;
}

} // namespace

TEST_CASE("glyph wants: a file name outside the subset asks for its pages once", "[glyphs]") {
    GlyphWants g;
    // The subset has 的 (U+7684); pages 73 (王 U+738B), 80 (老 U+8001), 5e (師 U+5E2B),
    // 8c (貓 U+8C93) are in the index; page 00 too (é U+00E9).
    g.reset("的", "00 5e 73 80 8c");
    g.note("plain ascii.pt2");
    CHECK(g.take_fetches().empty());
    g.note("王老師的貓.pt2");
    CHECK(stems(g.take_fetches()) == std::vector<std::string>{"73", "80", "5e", "8c"});
    CHECK(text_of(g.missing()) == "師王老貓");
    g.note("王老師的貓 again");
    CHECK(g.take_fetches().empty()); // asked once
    CHECK(g.pending() == std::vector<int>{0x5e, 0x73, 0x80, 0x8c});
    CHECK_FALSE(g.atlas_behind());

    g.file_arrived({0x73, 0});
    g.file_arrived({0x80, 0});
    CHECK(g.atlas_behind());
    CHECK(text_of(g.atlas_extra()) == "王老");
    CHECK_FALSE(g.atlas_behind());
    CHECK(text_of(g.missing()) == "師貓");
    g.file_failed({0x5e, 0});
    g.file_arrived({0x8c, 0});
    CHECK(text_of(g.atlas_extra()) == "王老貓");
    CHECK(text_of(g.missing()) == "師"); // its page could not be fetched
    CHECK(g.pending().empty());
    CHECK(g.arrived() == std::vector<int>{0x73, 0x80, 0x8c});

    // A new character of a page already there needs no fetch, only the atlas.
    g.note("王者");
    CHECK(g.take_fetches().empty()); // 者 U+8005 is on page 80, here
    CHECK(g.atlas_behind());
    CHECK(text_of(g.atlas_extra()) == "王老者貓");
}

TEST_CASE("glyph wants: past the Basic Multilingual Plane, pages above ff", "[glyphs]") {
    GlyphWants g;
    // 🐱 U+1F431 and 😀 U+1F600 (pages 1f4, 1f6), 𠀀 U+20000 (page 200), a tag character
    // U+E0067 (page e00), the last code point U+10FFFD (page 10ff).
    g.reset("", "1f4 1f6 200 e00 10ff");
    g.note(
        "cat \xF0\x9F\x90\xB1 \xF0\x9F\x98\x80 \xF0\xA0\x80\x80 \xF3\xA0\x81\xA7 \xF4\x8F\xBF\xBD");
    CHECK(stems(g.take_fetches()) == std::vector<std::string>{"1f4", "1f6", "200", "e00", "10ff"});
    CHECK(text_of(g.missing()) ==
          "\xF0\x9F\x90\xB1\xF0\x9F\x98\x80\xF0\xA0\x80\x80\xF3\xA0\x81\xA7\xF4\x8F\xBF\xBD");
    g.file_arrived({0x1f4, 0});
    g.file_arrived({0x200, 0});
    CHECK(text_of(g.atlas_extra()) == "\xF0\x9F\x90\xB1\xF0\xA0\x80\x80");
    // Not an emoji's page: 0x1f4 is page 1f4, never page f4 (a two-digit reading).
    CHECK_FALSE(g.available(0xf4));
    CHECK(g.pending() == std::vector<int>{0x1f6, 0xe00, 0x10ff});
    // UTF-8 for numbers past U+10FFFF, and encoded surrogates, ask for nothing.
    g.note("\xF4\x90\x80\x80 \xF7\xBF\xBF\xBF \xED\xA0\xBD");
    CHECK(g.take_fetches().empty());
    CHECK(g.noted().size() == 5);
}

TEST_CASE("glyph wants: a page drawn from several fonts is settled when all its files are",
          "[glyphs]") {
    GlyphWants g;
    // Page 06 from Noto Sans CJK (06.otf) and Noto Sans Arabic (06-1.otf); page 20 from
    // the blank font, Noto Sans CJK, Noto Sans (20.otf, 20-1.otf, 20-2.otf).
    g.reset("", "06 06-1 09 20 20-1 20-2");
    CHECK(g.files_of(0x20) == std::vector<FontFile>{{0x20, 0}, {0x20, 1}, {0x20, 2}});
    // مرحبا (U+0645 ...) on page 06, a zero-width joiner U+200D and ‽ U+203D on page 20.
    g.note("\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 \xE2\x80\x8D\xE2\x80\xBD");
    CHECK(stems(g.take_fetches()) == std::vector<std::string>{"06", "06-1", "20", "20-1", "20-2"});
    g.file_arrived({0x06, 1});
    CHECK_FALSE(g.atlas_behind()); // 06.otf is not here yet: no rebuild for half a page
    CHECK(g.pending() == std::vector<int>{0x06, 0x20});
    g.file_arrived({0x06, 1}); // twice: nothing more
    g.file_arrived({0x06, 0});
    CHECK(g.atlas_behind());
    CHECK(text_of(g.atlas_extra()) == "\xD8\xA7\xD8\xA8\xD8\xAD\xD8\xB1\xD9\x85");
    // One file of page 20 fails: the page is still settled, its characters go to the
    // atlas, which draws those the files that came have.
    g.file_arrived({0x20, 0});
    g.file_failed({0x20, 2});
    CHECK_FALSE(g.atlas_behind());
    g.file_arrived({0x20, 1});
    CHECK(g.atlas_behind());
    CHECK(g.pending().empty());
    CHECK(g.arrived() == std::vector<int>{0x06, 0x20});
    CHECK(text_of(g.atlas_extra()).size() == 10 + 6);
    CHECK(g.missing().empty());
    // A file the index does not name, or one of a page never asked for, changes nothing.
    g.file_arrived({0x20, 3});
    g.file_arrived({0x09, 0});
    CHECK(g.arrived() == std::vector<int>{0x06, 0x20});
    // Every file of a page failing: the page failed, its characters stay missing.
    g.note("\xE0\xA4\xA8"); // न U+0928, page 09
    CHECK(stems(g.take_fetches()) == std::vector<std::string>{"09"});
    g.file_failed({0x09, 0});
    CHECK(g.pending().empty());
    CHECK_FALSE(g.atlas_behind());
    CHECK(text_of(g.missing()) == "\xE0\xA4\xA8");
}

TEST_CASE("glyph wants: characters no page has are missing, never fetched", "[glyphs]") {
    GlyphWants g;
    g.reset("", "00 4e");
    g.note("caf\xC3\xA9 \xF0\x9F\x98\x80 \xE2\x86\x92"); // café, an emoji, → (U+2192, page 21)
    CHECK(stems(g.take_fetches()) == std::vector<std::string>{"00"});
    CHECK(text_of(g.missing()) == "\xC3\xA9\xE2\x86\x92\xF0\x9F\x98\x80");
    // Invalid UTF-8 and controls ask for nothing.
    g.note("\xFF\xFE bad \xC2\x85");
    CHECK(g.take_fetches().empty());
    // A page outside the index, or arriving without being asked, is ignored.
    g.file_arrived({0x4e, 0});
    CHECK_FALSE(g.atlas_behind());
    g.file_arrived({0x00, 0});
    CHECK(text_of(g.atlas_extra()) == "\xC3\xA9");
}

TEST_CASE("glyph wants: the index is file stems, any spacing", "[glyphs]") {
    GlyphWants g;
    g.reset("", " 00 4e\n9f  ff zz 100 1f4-1 1f4 10ff 1100 4e-0 4e-01 -1 20- 2a6-x\r\n");
    for (int page : {0x00, 0x4e, 0x9f, 0xff, 0x100, 0x1f4, 0x10ff}) CHECK(g.available(page));
    CHECK_FALSE(g.available(0x10));
    CHECK_FALSE(g.available(0x1100)); // past U+10FFFF
    CHECK_FALSE(g.available(0x20));
    CHECK_FALSE(g.available(0x2a6));
    CHECK(g.files_of(0x1f4) == std::vector<FontFile>{{0x1f4, 0}, {0x1f4, 1}});
    CHECK(g.files_of(0x4e) == std::vector<FontFile>{{0x4e, 0}}); // "4e-0", "4e-01" are not names
}

TEST_CASE("glyph wants: file stems", "[glyphs]") {
    CHECK(font_file_stem({0x00, 0}) == "00");
    CHECK(font_file_stem({0x4e, 0}) == "4e");
    CHECK(font_file_stem({0x1f4, 2}) == "1f4-2");
    CHECK(font_file_stem({0x10ff, 12}) == "10ff-12");
    for (FontFile f : {FontFile{0, 0}, FontFile{0x4e, 1}, FontFile{0x200, 3}, FontFile{0x10ff, 0}})
        CHECK(parse_font_file_stem(font_file_stem(f)) == f);
    CHECK(parse_font_file_stem("1F4") == FontFile{0x1f4, 0});
    CHECK_FALSE(parse_font_file_stem(""));
    CHECK_FALSE(parse_font_file_stem("1100"));
    CHECK_FALSE(parse_font_file_stem("ffffffff"));
    CHECK_FALSE(parse_font_file_stem("4e.otf"));
    CHECK_FALSE(parse_font_file_stem("4e-1234"));
}
