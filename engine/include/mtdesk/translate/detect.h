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

/// The source language to assume for `text` when none was given: the one rule of the command
/// line, the window, the document queue and the server. CLD2's language when it is reliable
/// (`reliable` set); otherwise Chinese when more than half of the letters are Han
/// (looks_chinese; CLD2 is seldom sure of a short Chinese line, and then names English for
/// it), and no language for anything else. Only a reliable answer is a language the text is
/// known to be in; the Chinese of the fallback comes with `reliable` false.
Detection detect_source_language(std::string_view text);

}  // namespace mtdesk
