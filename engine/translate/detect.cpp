#include "mtdesk/translate/detect.h"

#include <cstdio>  // compact_lang_det.h uses FILE without including it

#include <cld2/public/compact_lang_det.h>

#include <string>

#include "mtdesk/tokenizer/tokenizer.h"
#include "mtdesk/translate/prompt.h"

namespace mtdesk {

Detection detect_language(std::string_view text) {
    Detection d;
    // CLD2 requires valid UTF-8.
    const std::string clean = sanitize_utf8(text);
    bool reliable = false;
    const CLD2::Language lang = CLD2::DetectLanguage(clean.data(), static_cast<int>(clean.size()),
                                                     /*is_plain_text=*/true, &reliable);
    if (lang == CLD2::UNKNOWN_LANGUAGE) return d;
    // CLD2's codes are ISO 639-1 where one exists ("zh", "zh-Hant", "bo", "ug", "iw", "tl");
    // find_language knows the legacy aliases.
    d.language = find_language(CLD2::LanguageCode(lang));
    d.reliable = reliable && d.language != nullptr;
    return d;
}

Detection detect_source_language(std::string_view text) {
    const Detection d = detect_language(text);
    if (d.reliable) return d;
    // An unreliable guess is often CLD2's default (English) whatever the script: not a guess
    // worth acting on, except that Han-majority text is Chinese.
    return {looks_chinese(text) ? find_language("zh") : nullptr, false};
}

}  // namespace mtdesk
