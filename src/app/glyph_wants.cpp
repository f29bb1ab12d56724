#include "glyph_wants.h"

#include <cstdlib>

#include "text_wrap.h"

namespace pt2lab::app {

void GlyphWants::reset(std::string_view base, std::string_view pages) {
    *this = GlyphWants{};
    for (size_t k = 0; k < base.size();)
        if (char32_t c = next_codepoint(base, k); c >= 0x80) base_.insert(c);
    std::string list(pages);
    const char* p = list.c_str();
    while (*p) {
        char* end = nullptr;
        long v = std::strtol(p, &end, 16);
        if (end == p) {
            ++p;
            continue;
        }
        if (v >= 0 && v <= 0xFF) available_.insert(static_cast<int>(v));
        p = end;
    }
}

void GlyphWants::note(std::string_view utf8) {
    bool ascii = true;
    for (char ch : utf8)
        if (static_cast<unsigned char>(ch) >= 0x80) {
            ascii = false;
            break;
        }
    if (ascii) return;
    for (size_t k = 0; k < utf8.size();) {
        const char32_t c = next_codepoint(utf8, k);
        if (c < 0x80 || base_.count(c) || noted_.count(c)) continue;
        // Controls and the replacement character are never drawn as themselves.
        if (c < 0xA0 || c == 0xFFFD) continue;
        noted_.insert(c);
        const int page = c < 0x10000 ? static_cast<int>(c >> 8) : -1;
        if (page < 0 || !available_.count(page)) continue;
        if (arrived_.count(page)) {
            to_add_.insert(c);
        } else if (!asked_.count(page)) {
            asked_.insert(page);
            fetches_.push_back(page);
        }
    }
}

std::vector<int> GlyphWants::take_fetches() {
    std::vector<int> out;
    out.swap(fetches_);
    return out;
}

void GlyphWants::page_arrived(int page) {
    if (!asked_.count(page) || arrived_.count(page) || failed_.count(page)) return;
    arrived_.insert(page);
    for (char32_t c : noted_)
        if (static_cast<int>(c >> 8) == page && c < 0x10000 && !in_atlas_.count(c))
            to_add_.insert(c);
}

void GlyphWants::page_failed(int page) {
    if (asked_.count(page) && !arrived_.count(page)) failed_.insert(page);
}

std::vector<char32_t> GlyphWants::atlas_extra() {
    in_atlas_.insert(to_add_.begin(), to_add_.end());
    to_add_.clear();
    return {in_atlas_.begin(), in_atlas_.end()};
}

std::vector<char32_t> GlyphWants::missing() const {
    std::vector<char32_t> out;
    for (char32_t c : noted_)
        if (!in_atlas_.count(c)) out.push_back(c);
    return out;
}

std::vector<int> GlyphWants::pending() const {
    std::vector<int> out;
    for (int p : asked_)
        if (!arrived_.count(p) && !failed_.count(p)) out.push_back(p);
    return out;
}

} // namespace pt2lab::app
