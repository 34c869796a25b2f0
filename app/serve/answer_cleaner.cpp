#include "serve/answer_cleaner.h"

namespace mtdesk::serve {
namespace {

// The whitespace clean_translation_output trims.
bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// The characters clean_translation_output drops (after trimming, so a control character still
// keeps the whitespace next to it from being trimmed, as there).
bool is_dropped(char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && !is_space(c)) || u == 0x7F;
}

}  // namespace

std::string AnswerCleaner::push(std::string_view raw) {
    std::string out;
    for (const char c : raw) {
        if (is_space(c)) {
            if (started_) held_.push_back(c);
            continue;
        }
        started_ = true;
        out += held_;
        held_.clear();
        if (!is_dropped(c)) out.push_back(c);
    }
    text_ += out;
    return out;
}

}  // namespace mtdesk::serve
