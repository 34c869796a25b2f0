#include "tokenizer/utf8.h"

#include <cstdint>

#include "mtdesk/tokenizer/tokenizer.h"

namespace mtdesk {
namespace detail {
namespace {

// What a lead byte needs: the number of continuation bytes and the range the first of them must
// fall in (Unicode Table 3-7, "Well-Formed UTF-8 Byte Sequences"). need == 0: not a lead byte.
struct Lead {
    int need = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
};

constexpr Lead lead_of(unsigned char b) noexcept {
    if (b >= 0xC2 && b <= 0xDF) return {1, 0x80, 0xBF};
    if (b == 0xE0) return {2, 0xA0, 0xBF};
    if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return {2, 0x80, 0xBF};
    if (b == 0xED) return {2, 0x80, 0x9F};
    if (b == 0xF0) return {3, 0x90, 0xBF};
    if (b >= 0xF1 && b <= 0xF3) return {3, 0x80, 0xBF};
    if (b == 0xF4) return {3, 0x80, 0x8F};
    return {};
}

// Length of the well-formed prefix of the sequence starting at `i` (a non-ASCII byte): the whole
// sequence length when it is complete, otherwise the length of its maximal valid subpart (>= 1).
// `complete` says which.
std::size_t scan_sequence(std::string_view s, std::size_t i, bool& complete) noexcept {
    const Lead lead = lead_of(static_cast<unsigned char>(s[i]));
    complete = false;
    if (lead.need == 0) return 1;
    std::size_t j = i + 1;
    int got = 0;
    while (got < lead.need && j < s.size()) {
        const auto c = static_cast<unsigned char>(s[j]);
        const unsigned char lo = got == 0 ? lead.lo : 0x80;
        const unsigned char hi = got == 0 ? lead.hi : 0xBF;
        if (c < lo || c > hi) break;
        ++j;
        ++got;
    }
    complete = got == lead.need;
    return j - i;
}

}  // namespace

std::size_t utf8_incomplete_tail(std::string_view bytes) noexcept {
    const std::size_t n = bytes.size();
    for (std::size_t t = 1; t <= 3 && t <= n; ++t) {
        const auto b = static_cast<unsigned char>(bytes[n - t]);
        if ((b & 0xC0) == 0x80) continue;  // a continuation byte: its lead is further back
        const Lead lead = lead_of(b);
        if (lead.need == 0 || static_cast<int>(t - 1) >= lead.need) return 0;
        bool complete = false;
        const std::size_t len = scan_sequence(bytes, n - t, complete);
        return len == t ? t : 0;  // every byte after the lead fits: more bytes may complete it
    }
    return 0;
}

char32_t utf8_next(std::string_view text, std::size_t& pos) noexcept {
    const auto b0 = static_cast<unsigned char>(text[pos]);
    if (b0 < 0x80) {
        ++pos;
        return b0;
    }
    int need = 0;
    char32_t c = 0;
    if (b0 >= 0xF0) {
        need = 3;
        c = b0 & 0x07;
    } else if (b0 >= 0xE0) {
        need = 2;
        c = b0 & 0x0F;
    } else {
        need = 1;
        c = b0 & 0x1F;
    }
    ++pos;
    for (int k = 0; k < need && pos < text.size(); ++k, ++pos) {
        c = (c << 6) | (static_cast<unsigned char>(text[pos]) & 0x3F);
    }
    return c;
}

void utf8_append(std::string& out, char32_t c) {
    if (c < 0x80) {
        out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (c >> 6)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (c >> 12)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (c >> 18)));
        out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
}

bool utf8_valid(std::string_view text) noexcept {
    std::size_t i = 0;
    while (i < text.size()) {
        if (static_cast<unsigned char>(text[i]) < 0x80) {
            ++i;
            continue;
        }
        bool complete = false;
        i += scan_sequence(text, i, complete);
        if (!complete) return false;
    }
    return true;
}

}  // namespace detail

std::string sanitize_utf8(std::string_view text) {
    if (detail::utf8_valid(text)) return std::string(text);
    static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
    std::string out;
    out.reserve(text.size() + 16);
    std::size_t i = 0;
    while (i < text.size()) {
        if (static_cast<unsigned char>(text[i]) < 0x80) {
            out.push_back(text[i++]);
            continue;
        }
        bool complete = false;
        const std::size_t len = detail::scan_sequence(text, i, complete);
        if (complete) {
            out.append(text.substr(i, len));
        } else {
            out.append(kReplacement);
        }
        i += len;
    }
    return out;
}

}  // namespace mtdesk
