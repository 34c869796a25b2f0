#pragma once
// Corpus-level chrF (chrF2: character n-grams 1..6, beta 2, whitespace removed), computed as
// sacrebleu 2.x does by default: n-gram statistics summed over the corpus, precision and
// recall averaged over the orders that occur, then the F-beta score. Hypothesis n-grams of an
// order its reference is too short to have are not counted (as in sacrebleu).
// Source: Popović, "chrF: character n-gram F-score for automatic MT evaluation" (WMT 2015);
// reference implementation sacrebleu/metrics/chrf.py (CHRF with eps_smoothing=False).

#include <unicode/uchar.h>
#include <unicode/ustring.h>

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mtdesk::test {

/// Code points of `utf8` without whitespace (Python's str.split() notion: White_Space plus
/// U+001C..U+001F). Invalid UTF-8 bytes become U+FFFD.
inline std::u32string chrf_chars(std::string_view utf8) {
    std::u32string out;
    int32_t i = 0;
    const auto n = static_cast<int32_t>(utf8.size());
    const auto* s = reinterpret_cast<const uint8_t*>(utf8.data());
    while (i < n) {
        UChar32 c;
        U8_NEXT(s, i, n, c);
        if (c < 0) c = 0xFFFD;
        if (u_hasBinaryProperty(c, UCHAR_WHITE_SPACE) || (c >= 0x1C && c <= 0x1F)) continue;
        out.push_back(static_cast<char32_t>(c));
    }
    return out;
}

/// chrF2 of `hypotheses` against one reference each, in [0, 100].
inline double corpus_chrf(const std::vector<std::string>& hypotheses,
                          const std::vector<std::string>& references) {
    constexpr int kOrder = 6;
    constexpr double kBeta2 = 4.0;
    std::array<double, kOrder> hyp_total{}, ref_total{}, match{};
    for (size_t k = 0; k < hypotheses.size() && k < references.size(); ++k) {
        const std::u32string h = chrf_chars(hypotheses[k]);
        const std::u32string r = chrf_chars(references[k]);
        for (int n = 1; n <= kOrder; ++n) {
            std::map<std::u32string, int> hc, rc;
            for (size_t i = 0; i + n <= h.size(); ++i)
                ++hc[h.substr(i, n)];
            for (size_t i = 0; i + n <= r.size(); ++i)
                ++rc[r.substr(i, n)];
            // sacrebleu counts no hypothesis n-grams of an order the reference lacks
            if (rc.empty()) continue;
            for (const auto& [g, c] : hc) {
                hyp_total[n - 1] += c;
                if (auto it = rc.find(g); it != rc.end()) match[n - 1] += std::min(c, it->second);
            }
            for (const auto& [g, c] : rc)
                ref_total[n - 1] += c;
        }
    }
    double precision = 0, recall = 0;
    int effective = 0;
    for (int n = 0; n < kOrder; ++n) {
        if (hyp_total[n] > 0 && ref_total[n] > 0) {
            precision += match[n] / hyp_total[n];
            recall += match[n] / ref_total[n];
            ++effective;
        }
    }
    if (effective == 0) return 0.0;
    precision /= effective;
    recall /= effective;
    if (precision + recall == 0) return 0.0;
    return 100.0 * (1 + kBeta2) * precision * recall / (kBeta2 * precision + recall);
}

}  // namespace mtdesk::test
