// GlyphWants: which characters the page has met that its font atlas cannot draw
// yet, and which font files to fetch for them.
//
// The page starts with a font subset made for its own words and lessons
// (fonts/ui.otf; tools/subset_fonts.py). A user's file name, a teacher's lesson
// or a typed search can hold any character up to U+10FFFF; Dear ImGui 1.90 would
// draw "?" for one outside the atlas. Every character some fallback font draws
// (Noto Sans CJK TC first, then Noto's other scripts and symbols, Symbola's
// emoji, HanaMin's CJK extensions, Unifont) is in a page of 256 code points
// (page = code point >> 8); a page is one font file per source font it draws
// from (fonts/more/PP.otf, PP-1.otf, ...; PP the page in hex), all listed in
// fonts/more/index.txt. The app notes every text that comes from outside, fetches
// every file of the pages its new characters need, and once all of a page's files
// are settled rebuilds the atlas with exactly those characters added (not whole
// pages: the atlas texture grows by what is used).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace pt2lab::app {

// One file of a font page: fonts/more/<page in hex, two digits at least>.otf for
// part 0, <page>-<part>.otf for the next.
struct FontFile {
    int page = 0;
    int part = 0;
    bool operator==(const FontFile& o) const { return page == o.page && part == o.part; }
    bool operator<(const FontFile& o) const {
        return page != o.page ? page < o.page : part < o.part;
    }
};
// "4e", "1f4", "20-1": the file's name without .otf, as index.txt has it.
std::string font_file_stem(FontFile f);
// The inverse; nullopt for anything else (a page past 0x10FF, a bad part).
std::optional<FontFile> parse_font_file_stem(std::string_view stem);

class GlyphWants {
public:
    // `base`: the characters of the starting subset (fonts/chars.txt, UTF-8);
    // `index`: fonts/more/index.txt, file stems separated by white space (others
    // are ignored). Code points below 0x80 are always in.
    void reset(std::string_view base, std::string_view index);

    // Text the page is about to show. Cheap when it is all ASCII.
    void note(std::string_view utf8);

    // Files to fetch now: every file of each page newly needed, pages in the order
    // met, each asked for once.
    std::vector<FontFile> take_fetches();
    // A fetched file arrived (its font bytes go to the atlas) or could not be fetched.
    void file_arrived(FontFile f);
    void file_failed(FontFile f);

    // True when noted characters of arrived pages are not yet in the atlas.
    bool atlas_behind() const { return !to_add_.empty(); }
    // Every character beyond `base` that the atlas should hold: noted ones
    // whose page arrived. Marks them as in the atlas.
    std::vector<char32_t> atlas_extra();

    // Noted characters not handed to the atlas (their page is not there, or has
    // none of them), in code point order. Whether a font of the page draws one
    // is the atlas's to say (the state hook asks it).
    std::vector<char32_t> missing() const;
    // Every character noted beyond the subset.
    const std::set<char32_t>& noted() const { return noted_; }
    // Pages asked for and not yet settled (some file neither arrived nor failed).
    std::vector<int> pending() const;
    // Pages settled with at least one file arrived.
    std::vector<int> arrived() const { return {arrived_.begin(), arrived_.end()}; }
    bool available(int page) const { return parts_.count(page) != 0; }
    // The files of a page, part 0 first (empty when the index has none).
    std::vector<FontFile> files_of(int page) const;

private:
    void settle(int page);

    std::set<char32_t> base_;
    std::map<int, std::set<int>> parts_;      // page -> its files' parts (the index)
    std::map<int, std::set<int>> got_, lost_; // page -> parts arrived / failed
    std::set<int> asked_, arrived_, failed_;  // pages
    std::set<char32_t> noted_;                // beyond base
    std::set<char32_t> in_atlas_, to_add_;
    std::vector<FontFile> fetches_;
};

} // namespace pt2lab::app
