#pragma once
// Source language detection with CLD2 (Compact Language Detector 2, Google; Debian's libcld2,
// full tables), mapped onto the models' 38 languages.

#include <string_view>

#include "mtdesk/translate/languages.h"

namespace mtdesk {

struct Detection {
    const Language* language = nullptr;  ///< nullptr when CLD2 found none of the 38
    bool reliable = false;               ///< CLD2's own judgement (enough text, clear margin)
};

/// Detects the language of `text` (UTF-8; invalid sequences are replaced before detection).
/// Very short or mixed text can come back unreliable or with no language.
Detection detect_language(std::string_view text);

}  // namespace mtdesk
