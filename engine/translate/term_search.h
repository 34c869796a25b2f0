#pragma once
// Case-insensitive search for words and terms in UTF-8 text, shared by the glossary and the
// casing guard (private to the engine). Matching uses Unicode full case folding; a match must
// sit on word boundaries wherever both of the characters that meet there are word characters
// of a script written with spaces between words (Latin, Cyrillic, Greek, Arabic, ...). In
// scripts without spaces (Han, kana, Thai, Lao, Khmer, Myanmar, Yi) any substring matches.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mtdesk::detail {

/// A byte range [begin, end) of a UTF-8 text.
struct TextRange {
    std::size_t begin = 0, end = 0;
};

/// A UTF-8 text prepared for repeated case-insensitive searches. Invalid UTF-8 bytes count as
/// U+FFFD (they never match a valid term).
class FoldedText {
  public:
    explicit FoldedText(std::string_view utf8);

    /// Every non-overlapping occurrence of `term` (UTF-8), left to right, as byte ranges of
    /// the text given to the constructor. An empty term never matches.
    std::vector<TextRange> find_all(std::string_view term) const;
    /// True when find_all(term) is not empty (stops at the first match).
    bool contains(std::string_view term) const;

  private:
    std::vector<TextRange> find(std::string_view term, bool first_only) const;
    bool boundary_before(std::size_t cp) const;  // between code points cp - 1 and cp

    std::vector<char32_t> chars_;      // the text's code points
    std::vector<std::size_t> bytes_;   // byte offset of each code point, plus the text's size
    std::vector<char32_t> folded_;     // case-folded code points
    std::vector<std::size_t> origin_;  // per folded code point: its code point in chars_
    std::vector<bool> starts_;         // per folded code point: first of its code point's fold
};

/// Unicode full case folding of `utf8` (for comparing two words case-insensitively).
std::u32string case_fold(std::string_view utf8);

/// `utf8` in Unicode normalisation form C (invalid UTF-8 is returned as it is).
std::string nfc(std::string_view utf8);

/// A letter, digit, combining mark or connector ('_'): what words are made of.
bool is_word_char(char32_t c);

/// True when `c` belongs to a script written without spaces between words.
bool is_unspaced_script(char32_t c);

}  // namespace mtdesk::detail
