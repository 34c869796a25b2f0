#include "mtdesk/translate/casing_guard.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <map>
#include <set>

#include "translate/term_search.h"

namespace mtdesk {
namespace {

struct Char {
    char32_t c;
    std::size_t byte;  // offset in the text
};

// Joins two words into one (Wi-Fi, ASP.NET, McDonald's) when it stands alone between them.
bool is_joiner(char32_t c) {
    return c == U'-' || c == U'.' || c == U'\'' || c == U'\u2019' || c == U'\u2011';
}

// Part of a word run: a word character of a script written with spaces. Characters of
// unspaced scripts (Han, kana, Thai, ...) end runs, so "iPhoneを買う" yields "iPhone".
bool in_run(char32_t c) {
    return detail::is_word_char(c) && !detail::is_unspaced_script(c);
}

// An upper- or title-case letter after the first character.
bool casing_is_meaningful(const std::vector<Char>& chars, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin + 1; i < end; ++i) {
        const auto c = static_cast<UChar32>(chars[i].c);
        if (u_isUUppercase(c) || u_istitle(c)) return true;
    }
    return false;
}

}  // namespace

std::vector<std::string> casing_guarded_words(std::string_view source) {
    std::vector<Char> chars;
    {
        const auto* s = reinterpret_cast<const uint8_t*>(source.data());
        const auto n = static_cast<int32_t>(source.size());
        for (int32_t i = 0; i < n;) {
            const auto at = static_cast<std::size_t>(i);
            UChar32 c;
            U8_NEXT(s, i, n, c);
            chars.push_back({c < 0 ? U'\uFFFD' : static_cast<char32_t>(c), at});
        }
    }
    auto byte_at = [&](std::size_t i) { return i < chars.size() ? chars[i].byte : source.size(); };

    // Word runs as [begin, end) code point indices.
    std::vector<std::pair<std::size_t, std::size_t>> runs;
    for (std::size_t i = 0; i < chars.size();) {
        if (!in_run(chars[i].c)) {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < chars.size() && in_run(chars[j].c))
            ++j;
        runs.push_back({i, j});
        i = j;
    }
    // Candidates: every run, and every maximal chain of runs joined by single joiners.
    std::vector<std::pair<std::size_t, std::size_t>> candidates;
    for (std::size_t r = 0; r < runs.size();) {
        std::size_t last = r;
        while (last + 1 < runs.size() && runs[last + 1].first == runs[last].second + 1 &&
               is_joiner(chars[runs[last].second].c))
            ++last;
        for (std::size_t k = r; k <= last; ++k)
            candidates.push_back(runs[k]);
        if (last > r) candidates.push_back({runs[r].first, runs[last].second});
        r = last + 1;
    }

    // Forms per case folding, to leave out words the source writes in more than one casing.
    std::map<std::u32string, std::set<std::string>> forms;
    for (const auto& [b, e] : candidates) {
        const std::string word(source.substr(byte_at(b), byte_at(e) - byte_at(b)));
        forms[detail::case_fold(word)].insert(word);
    }
    std::vector<std::string> guarded;
    for (const auto& [b, e] : candidates) {
        if (!casing_is_meaningful(chars, b, e)) continue;
        std::string word(source.substr(byte_at(b), byte_at(e) - byte_at(b)));
        if (forms[detail::case_fold(word)].size() != 1) continue;
        if (std::find(guarded.begin(), guarded.end(), word) == guarded.end())
            guarded.push_back(std::move(word));
    }
    return guarded;
}

std::string apply_casing_guard(std::string_view source, std::string_view translation) {
    const std::vector<std::string> words = casing_guarded_words(source);
    if (words.empty()) return std::string(translation);

    struct Hit {
        detail::TextRange range;
        const std::string* word;
    };
    std::vector<Hit> hits;
    const detail::FoldedText text(translation);
    for (const std::string& w : words)
        for (const detail::TextRange& r : text.find_all(w))
            hits.push_back({r, &w});
    // Left to right; at the same place the longer word wins (Wi-Fi over Wi); no overlaps.
    std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
        if (a.range.begin != b.range.begin) return a.range.begin < b.range.begin;
        return a.range.end > b.range.end;
    });
    std::string out;
    out.reserve(translation.size());
    std::size_t done = 0;
    for (const Hit& h : hits) {
        if (h.range.begin < done) continue;
        out.append(translation.substr(done, h.range.begin - done));
        out.append(*h.word);
        done = h.range.end;
    }
    out.append(translation.substr(done));
    return out;
}

}  // namespace mtdesk
