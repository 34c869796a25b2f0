#include "mtdesk/translate/segmenter.h"

#include <unicode/ubrk.h>
#include <unicode/utext.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <memory>

#include "mtdesk/error.h"

namespace mtdesk {
namespace {

// Boundaries (byte offsets, first 0 and last text.size()) of ICU break type `type`.
std::vector<std::size_t> boundaries(std::string_view text, UBreakIteratorType type) {
    std::vector<std::size_t> cuts{0};
    UErrorCode err = U_ZERO_ERROR;
    UText* ut = utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &err);
    std::unique_ptr<UText, decltype(&utext_close)> ut_guard(ut, utext_close);
    UBreakIterator* bi = ubrk_open(type, "", nullptr, 0, &err);
    std::unique_ptr<UBreakIterator, decltype(&ubrk_close)> bi_guard(bi, ubrk_close);
    if (U_SUCCESS(err)) ubrk_setUText(bi, ut, &err);
    if (U_FAILURE(err)) throw Error(std::string("ICU break iterator: ") + u_errorName(err));
    // With a UTF-8 UText, ICU's indices are byte offsets.
    for (int32_t b = ubrk_next(bi); b != UBRK_DONE; b = ubrk_next(bi))
        if (static_cast<std::size_t>(b) > cuts.back()) cuts.push_back(static_cast<std::size_t>(b));
    if (cuts.back() != text.size()) cuts.push_back(text.size());
    return cuts;
}

std::vector<std::size_t> space_cuts(std::string_view text) {
    std::vector<std::size_t> cuts{0};
    for (std::size_t i = 1; i < text.size(); ++i)
        if (text[i - 1] == ' ' && text[i] != ' ') cuts.push_back(i);
    cuts.push_back(text.size());
    return cuts;
}

// Cuts at character boundaries every `max_bytes` bytes or less. A token covers at least one
// byte, so a piece of at most `budget` bytes holds at most `budget` tokens: no counting needed.
std::vector<std::size_t> byte_cuts(std::string_view text, std::size_t max_bytes) {
    std::vector<std::size_t> cuts{0};
    const auto* s = reinterpret_cast<const uint8_t*>(text.data());
    const auto n = static_cast<int32_t>(text.size());
    int32_t piece_start = 0;
    for (int32_t i = 0; i < n;) {
        const int32_t char_start = i;
        UChar32 c;
        U8_NEXT(s, i, n, c);
        (void)c;
        if (static_cast<std::size_t>(i - piece_start) > max_bytes && char_start > piece_start) {
            cuts.push_back(static_cast<std::size_t>(char_start));
            piece_start = char_start;
        }
    }
    cuts.push_back(text.size());
    return cuts;
}

// Greedy packing of the units between `cuts` into pieces under budget; a unit over budget is
// refined with the next, finer kind of cut.
void pack(std::string_view text, int level, int budget,
          const std::function<int(std::string_view)>& count, std::vector<std::string_view>& out) {
    if (level == 2) {  // no sentence or space boundary left: cut between characters
        const std::vector<std::size_t> cuts = byte_cuts(text, static_cast<std::size_t>(budget));
        for (std::size_t k = 1; k < cuts.size(); ++k)
            out.push_back(text.substr(cuts[k - 1], cuts[k] - cuts[k - 1]));
        return;
    }
    if (count(text) <= budget) {
        out.push_back(text);
        return;
    }
    const std::vector<std::size_t> cuts =
        level == 0 ? boundaries(text, UBRK_SENTENCE) : space_cuts(text);
    std::size_t start = 0;  // start of the piece being grown
    std::size_t end = 0;    // its end so far (a cut)
    for (std::size_t k = 1; k < cuts.size(); ++k) {
        const std::size_t next = cuts[k];
        if (count(text.substr(start, next - start)) <= budget) {
            end = next;
            continue;
        }
        if (end > start) out.push_back(text.substr(start, end - start));
        start = end = std::max(start, end);
        if (count(text.substr(start, next - start)) > budget) {
            // The unit [start, next) alone is over budget: cut it finer.
            pack(text.substr(start, next - start), level + 1, budget, count, out);
            start = end = next;
        } else {
            end = next;
        }
    }
    if (end > start) out.push_back(text.substr(start, end - start));
}

}  // namespace

std::vector<std::string_view> split_sentences(std::string_view text) {
    std::vector<std::string_view> out;
    const std::vector<std::size_t> cuts = boundaries(text, UBRK_SENTENCE);
    for (std::size_t k = 1; k < cuts.size(); ++k)
        out.push_back(text.substr(cuts[k - 1], cuts[k] - cuts[k - 1]));
    return out;
}

std::vector<std::string_view> split_to_budget(std::string_view text, int budget,
                                              const std::function<int(std::string_view)>& count) {
    if (budget < 1) throw Error("split_to_budget: budget must be >= 1");
    std::vector<std::string_view> out;
    if (!text.empty()) pack(text, 0, budget, count, out);
    return out;
}

}  // namespace mtdesk
