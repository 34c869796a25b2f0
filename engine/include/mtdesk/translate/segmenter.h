#pragma once
// Splitting a text that is too long for one prompt into pieces that fit, at sentence boundaries
// (ICU's sentence break rules, UAX #29), then at spaces, then between characters.

#include <functional>
#include <string_view>
#include <vector>

namespace mtdesk {

/// Sentences of `text` (UTF-8), in order, each with its trailing spaces; their concatenation is
/// `text`. Uses ICU's root-locale sentence rules. Invalid UTF-8 is kept inside the sentences.
std::vector<std::string_view> split_sentences(std::string_view text);

/// Cuts `text` into consecutive pieces, each of at most `budget` units as `count` measures them
/// (e.g. tokens), preferring sentence boundaries, then spaces, then any character boundary
/// (a single character over budget becomes a piece of its own). The pieces concatenate to
/// `text`. `budget` must be >= 1.
std::vector<std::string_view> split_to_budget(std::string_view text, int budget,
                                              const std::function<int(std::string_view)>& count);

}  // namespace mtdesk
