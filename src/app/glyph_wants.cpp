#include "glyph_wants.h"

#include <cstdio>

#include "text_wrap.h"

namespace pt2lab::app {

namespace {

constexpr int kLastPage = 0x10FFFF >> 8;

// The hex number at the start of `s` (lowercase or uppercase), its digit count in `n`.
long hex_prefix(std::string_view s, size_t& n) {
    long v = 0;
    for (n = 0; n < s.size() && n < 7; ++n) {
        const char c = s[n];
        const int d = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
        if (d < 0) break;
        v = v * 16 + d;
    }
    return v;
}

} // namespace

std::string font_file_stem(FontFile f) {
    char name[24];
    if (f.part == 0)
        std::snprintf(name, sizeof name, "%02x", f.page);
    else
        std::snprintf(name, sizeof name, "%02x-%d", f.page, f.part);
    return name;
}

std::optional<FontFile> parse_font_file_stem(std::string_view stem) {
    size_t n = 0;
    const long page = hex_prefix(stem, n);
    if (n == 0 || n == 7 || page > kLastPage) return std::nullopt;
    FontFile f{static_cast<int>(page), 0};
    if (n == stem.size()) return f;
    if (stem[n] != '-' || n + 1 == stem.size() || stem.size() - n - 1 > 3) return std::nullopt;
    for (size_t k = n + 1; k < stem.size(); ++k) {
        if (stem[k] < '0' || stem[k] > '9') return std::nullopt;
        f.part = f.part * 10 + (stem[k] - '0');
    }
    if (f.part == 0 || stem[n + 1] == '0') return std::nullopt; // "4e-0", "4e-01": not a name
    return f;
}

void GlyphWants::reset(std::string_view base, std::string_view index) {
    *this = GlyphWants{};
    for (size_t k = 0; k < base.size();)
        if (char32_t c = next_codepoint(base, k); c >= 0x80) base_.insert(c);
    size_t k = 0;
    while (k < index.size()) {
        while (k < index.size() &&
               (index[k] == ' ' || index[k] == '\n' || index[k] == '\t' || index[k] == '\r'))
            ++k;
        size_t end = k;
        while (end < index.size() && index[end] != ' ' && index[end] != '\n' &&
               index[end] != '\t' && index[end] != '\r')
            ++end;
        if (end > k)
            if (std::optional<FontFile> f = parse_font_file_stem(index.substr(k, end - k)))
                parts_[f->page].insert(f->part);
        k = end;
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
        // Controls, the replacement character (what bad UTF-8 decodes to), surrogates
        // and numbers past Unicode are never drawn as themselves.
        if (c < 0xA0 || c == 0xFFFD || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) continue;
        noted_.insert(c);
        const int page = static_cast<int>(c >> 8);
        if (!parts_.count(page)) continue;
        if (arrived_.count(page)) {
            to_add_.insert(c);
        } else if (!asked_.count(page)) {
            asked_.insert(page);
            for (int part : parts_.at(page)) fetches_.push_back({page, part});
        }
    }
}

std::vector<FontFile> GlyphWants::take_fetches() {
    std::vector<FontFile> out;
    out.swap(fetches_);
    return out;
}

void GlyphWants::file_arrived(FontFile f) {
    if (!asked_.count(f.page) || !parts_.at(f.page).count(f.part) || lost_[f.page].count(f.part))
        return;
    got_[f.page].insert(f.part);
    settle(f.page);
}

void GlyphWants::file_failed(FontFile f) {
    if (!asked_.count(f.page) || !parts_.at(f.page).count(f.part) || got_[f.page].count(f.part))
        return;
    lost_[f.page].insert(f.part);
    settle(f.page);
}

// Once every file of the page arrived or failed: its noted characters go to the
// atlas if any file arrived (the atlas takes each from the file that has it).
void GlyphWants::settle(int page) {
    if (arrived_.count(page) || failed_.count(page)) return;
    const size_t got = got_[page].size(), lost = lost_[page].size();
    if (got + lost < parts_.at(page).size()) return;
    if (got == 0) {
        failed_.insert(page);
        return;
    }
    arrived_.insert(page);
    for (char32_t c : noted_)
        if (static_cast<int>(c >> 8) == page && !in_atlas_.count(c)) to_add_.insert(c);
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

std::vector<FontFile> GlyphWants::files_of(int page) const {
    std::vector<FontFile> out;
    if (auto it = parts_.find(page); it != parts_.end())
        for (int part : it->second) out.push_back({page, part});
    return out;
}

} // namespace pt2lab::app
