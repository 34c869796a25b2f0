#include "translate/term_search.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/uscript.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <array>

namespace mtdesk::detail {
namespace {

// Decodes UTF-8 into code points and their byte offsets (plus the end). Invalid bytes: U+FFFD.
void decode(std::string_view text, std::vector<char32_t>& chars, std::vector<std::size_t>* bytes) {
    const auto* s = reinterpret_cast<const uint8_t*>(text.data());
    const auto n = static_cast<int32_t>(text.size());
    int32_t i = 0;
    while (i < n) {
        if (bytes) bytes->push_back(static_cast<std::size_t>(i));
        UChar32 c;
        U8_NEXT(s, i, n, c);
        chars.push_back(c < 0 ? U'\uFFFD' : static_cast<char32_t>(c));
    }
    if (bytes) bytes->push_back(text.size());
}

// Appends the full case folding of one code point (one to three code points).
void fold_into(char32_t c, std::vector<char32_t>& out) {
    UChar src[2];
    int32_t len = 0;
    U16_APPEND_UNSAFE(src, len, static_cast<UChar32>(c));
    UChar dst[8];
    UErrorCode err = U_ZERO_ERROR;
    const int32_t n = u_strFoldCase(dst, 8, src, len, U_FOLD_CASE_DEFAULT, &err);
    if (U_FAILURE(err) || n > 8) {
        out.push_back(c);
        return;
    }
    for (int32_t i = 0; i < n;) {
        UChar32 f;
        U16_NEXT(dst, i, n, f);
        out.push_back(static_cast<char32_t>(f));
    }
}

bool valid_utf8(std::string_view text) {
    const auto* s = reinterpret_cast<const uint8_t*>(text.data());
    const auto n = static_cast<int32_t>(text.size());
    for (int32_t i = 0; i < n;) {
        UChar32 c;
        U8_NEXT(s, i, n, c);
        if (c < 0) return false;
    }
    return true;
}

}  // namespace

bool is_word_char(char32_t c) {
    const auto cp = static_cast<UChar32>(c);
    return (U_GET_GC_MASK(cp) & (U_GC_L_MASK | U_GC_M_MASK | U_GC_N_MASK | U_GC_PC_MASK)) != 0;
}

bool is_unspaced_script(char32_t c) {
    static constexpr std::array kScripts = {USCRIPT_HAN,     USCRIPT_HIRAGANA, USCRIPT_KATAKANA,
                                            USCRIPT_THAI,    USCRIPT_LAO,      USCRIPT_KHMER,
                                            USCRIPT_MYANMAR, USCRIPT_YI};
    // Script extensions too: the prolonged sound mark "ー" is Common, used with kana.
    return std::any_of(kScripts.begin(), kScripts.end(), [c](UScriptCode s) {
        return uscript_hasScript(static_cast<UChar32>(c), s) != 0;
    });
}

std::u32string case_fold(std::string_view utf8) {
    std::vector<char32_t> chars, folded;
    decode(utf8, chars, nullptr);
    for (char32_t c : chars)
        fold_into(c, folded);
    return {folded.begin(), folded.end()};
}

std::string nfc(std::string_view utf8) {
    if (!valid_utf8(utf8)) return std::string(utf8);
    UErrorCode err = U_ZERO_ERROR;
    const icu::Normalizer2* normalizer = icu::Normalizer2::getNFCInstance(err);
    if (U_FAILURE(err)) return std::string(utf8);
    const icu::UnicodeString in = icu::UnicodeString::fromUTF8(
        icu::StringPiece(utf8.data(), static_cast<int32_t>(utf8.size())));
    if (normalizer->isNormalized(in, err) && U_SUCCESS(err)) return std::string(utf8);
    err = U_ZERO_ERROR;
    const icu::UnicodeString out = normalizer->normalize(in, err);
    if (U_FAILURE(err)) return std::string(utf8);
    std::string result;
    out.toUTF8String(result);
    return result;
}

FoldedText::FoldedText(std::string_view utf8) {
    decode(utf8, chars_, &bytes_);
    for (std::size_t i = 0; i < chars_.size(); ++i) {
        const std::size_t before = folded_.size();
        fold_into(chars_[i], folded_);
        for (std::size_t k = before; k < folded_.size(); ++k) {
            origin_.push_back(i);
            starts_.push_back(k == before);
        }
    }
}

bool FoldedText::boundary_before(std::size_t cp) const {
    if (cp == 0 || cp >= chars_.size()) return true;
    const char32_t a = chars_[cp - 1], b = chars_[cp];
    return !(is_word_char(a) && is_word_char(b) && !is_unspaced_script(a) &&
             !is_unspaced_script(b));
}

std::vector<TextRange> FoldedText::find(std::string_view term, bool first_only) const {
    std::vector<TextRange> found;
    const std::u32string t = case_fold(term);
    const std::size_t m = t.size(), n = folded_.size();
    if (m == 0 || m > n) return found;
    for (std::size_t s = 0; s + m <= n;) {
        // A match covers whole code points of the text (a folding like "ß" -> "ss" is not
        // matched half).
        const bool aligned = starts_[s] && (s + m == n || starts_[s + m]);
        if (aligned && std::equal(t.begin(), t.end(), folded_.begin() + static_cast<long>(s))) {
            const std::size_t first = origin_[s];
            const std::size_t last = s + m == n ? chars_.size() : origin_[s + m];
            if (boundary_before(first) && boundary_before(last)) {
                found.push_back({bytes_[first], bytes_[last]});
                if (first_only) break;
                s += m;
                continue;
            }
        }
        ++s;
    }
    return found;
}

std::vector<TextRange> FoldedText::find_all(std::string_view term) const {
    return find(term, false);
}

bool FoldedText::contains(std::string_view term) const {
    return !find(term, true).empty();
}

}  // namespace mtdesk::detail
