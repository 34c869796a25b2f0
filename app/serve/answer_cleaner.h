#pragma once
// A chat answer as `mtdesk serve` sends it: the model's raw output with mtdesk's clean-up
// (clean_translation_output without the formatted-prompt unwrapping: surrounding whitespace and
// control characters removed), delivered while it is generated. Streamed and whole answers are
// made by the same class, so their texts are the same.

#include <string>
#include <string_view>

namespace mtdesk::serve {

/// Cleans raw output piece by piece. The pieces push() returns concatenate, at every moment, to
/// clean_translation_output(raw so far, false) (prompt.h): leading whitespace is dropped,
/// whitespace after the last other character is held back until more text follows it (the
/// answer may end there), and C0 control characters other than tab and line breaks (and DEL)
/// are dropped. Pieces of valid UTF-8 give valid UTF-8 (only ASCII bytes are held or dropped).
class AnswerCleaner {
  public:
    /// Takes the next raw piece; returns the cleaned text it makes certain (possibly empty).
    std::string push(std::string_view raw);
    /// Everything returned so far: the cleaned answer once the output is complete.
    const std::string& text() const noexcept { return text_; }

  private:
    bool started_ = false;  // a non-whitespace character was seen
    std::string held_;      // whitespace after the last non-whitespace character
    std::string text_;
};

}  // namespace mtdesk::serve
