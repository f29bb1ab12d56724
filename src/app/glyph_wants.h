// GlyphWants: which characters the page has met that its font atlas cannot draw
// yet, and which font pages to fetch for them.
//
// The page starts with a font subset made for its own words and lessons
// (fonts/ui.otf; tools/subset_fonts.py). A user's file name, a teacher's lesson
// or a typed search can hold any character; Dear ImGui 1.90 would draw "?" for
// one outside the atlas. The rest of the UI font is cut into pages of 256 code
// points (fonts/more/XX.otf, XX = code point >> 8); the app notes every text
// that comes from outside, fetches the pages its new characters need, and
// rebuilds the atlas with exactly those characters added (not whole pages: the
// atlas texture grows by what is used).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace pt2lab::app {

class GlyphWants {
public:
    // `base`: the characters of the starting subset (fonts/chars.txt, UTF-8);
    // `pages`: fonts/more/index.txt, hex page numbers separated by spaces.
    // Code points below 0x80 are always in.
    void reset(std::string_view base, std::string_view pages);

    // Text the page is about to show. Cheap when it is all ASCII.
    void note(std::string_view utf8);

    // Pages to fetch now (each asked for once), lowest first.
    std::vector<int> take_fetches();
    // A fetched page arrived (its font bytes go to the atlas) or could not be fetched.
    void page_arrived(int page);
    void page_failed(int page);

    // True when noted characters of arrived pages are not yet in the atlas.
    bool atlas_behind() const { return !to_add_.empty(); }
    // Every character beyond `base` that the atlas should hold: noted ones
    // whose page arrived. Marks them as in the atlas.
    std::vector<char32_t> atlas_extra();

    // Noted characters the atlas cannot draw (yet or ever), in code point order.
    std::vector<char32_t> missing() const;
    // Every character noted beyond the subset.
    const std::set<char32_t>& noted() const { return noted_; }
    // Pages asked for and not yet arrived or failed.
    std::vector<int> pending() const;
    std::vector<int> arrived() const { return {arrived_.begin(), arrived_.end()}; }
    bool available(int page) const { return available_.count(page) != 0; }

private:
    std::set<char32_t> base_;
    std::set<int> available_, asked_, arrived_, failed_;
    std::set<char32_t> noted_; // beyond base
    std::set<char32_t> in_atlas_, to_add_;
    std::vector<int> fetches_;
};

} // namespace pt2lab::app
