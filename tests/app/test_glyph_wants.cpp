// GlyphWants: characters outside the page's font subset ask for their font page
// once, and reach the atlas when the page is there.
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

} // namespace

TEST_CASE("glyph wants: a file name outside the subset asks for its pages once", "[glyphs]") {
    GlyphWants g;
    // The subset has 的 (U+7684); pages 73 (王 U+738B), 80 (老 U+8001), 5e (師 U+5E2B),
    // 8c (貓 U+8C93) are in the index; page 00 too (é U+00E9).
    g.reset("的", "00 5e 73 80 8c");
    g.note("plain ascii.pt2");
    CHECK(g.take_fetches().empty());
    g.note("王老師的貓.pt2");
    CHECK(g.take_fetches() == std::vector<int>{0x73, 0x80, 0x5e, 0x8c});
    CHECK(text_of(g.missing()) == "師王老貓");
    g.note("王老師的貓 again");
    CHECK(g.take_fetches().empty()); // asked once
    CHECK(g.pending() == std::vector<int>{0x5e, 0x73, 0x80, 0x8c});
    CHECK_FALSE(g.atlas_behind());

    g.page_arrived(0x73);
    g.page_arrived(0x80);
    CHECK(g.atlas_behind());
    CHECK(text_of(g.atlas_extra()) == "王老");
    CHECK_FALSE(g.atlas_behind());
    CHECK(text_of(g.missing()) == "師貓");
    g.page_failed(0x5e);
    g.page_arrived(0x8c);
    CHECK(text_of(g.atlas_extra()) == "王老貓");
    CHECK(text_of(g.missing()) == "師"); // its page could not be fetched
    CHECK(g.pending().empty());

    // A new character of a page already there needs no fetch, only the atlas.
    g.note("王者");
    CHECK(g.take_fetches() == std::vector<int>{}); // 者 U+8005 is on page 80, here
    CHECK(g.atlas_behind());
    CHECK(text_of(g.atlas_extra()) == "王老者貓");
}

TEST_CASE("glyph wants: characters no page has are missing, never fetched", "[glyphs]") {
    GlyphWants g;
    g.reset("", "00 4e");
    g.note("caf\xC3\xA9 \xF0\x9F\x98\x80 \xE2\x86\x92"); // café, an emoji, → (U+2192, page 21)
    CHECK(g.take_fetches() == std::vector<int>{0x00});
    CHECK(text_of(g.missing()) == "\xC3\xA9\xE2\x86\x92\xF0\x9F\x98\x80");
    // Invalid UTF-8 and controls ask for nothing.
    g.note("\xFF\xFE bad \xC2\x85");
    CHECK(g.take_fetches().empty());
    // A page number outside the index, or arriving without being asked, is ignored.
    g.page_arrived(0x4e);
    CHECK_FALSE(g.atlas_behind());
    g.page_arrived(0x00);
    CHECK(text_of(g.atlas_extra()) == "\xC3\xA9");
}

TEST_CASE("glyph wants: the index is hex page numbers, any spacing", "[glyphs]") {
    GlyphWants g;
    g.reset("", " 00 4e\n9f  ff zz 100\n");
    CHECK(g.available(0x00));
    CHECK(g.available(0x4e));
    CHECK(g.available(0x9f));
    CHECK(g.available(0xff));
    CHECK_FALSE(g.available(0x10));
    CHECK_FALSE(g.available(0x100));
}
