#pragma once
// The 38 languages of Hunyuan-MT-7B and HY-MT1.5 (33 languages plus five Chinese minority
// languages and dialects), as listed in the models' published README.

#include <span>
#include <string_view>

namespace mtdesk {

struct Language {
    std::string_view code;          ///< the models' abbreviation: "zh", "zh-Hant", "yue", "bo"
    std::string_view english_name;  ///< used in English prompts: "Tibetan"
    std::string_view chinese_name;  ///< used in Chinese prompts: "藏语"
    std::string_view native_name;   ///< shown in the UI: "བོད་ཡིག"
};

/// All 38 languages, in the order of the models' README.
std::span<const Language> languages() noexcept;

/// Finds a language by code (case-insensitive; "zh-TW"/"zh_Hant" style aliases and BCP-47 forms
/// such as "zh-CN", "pt-BR", "fil" are mapped to the models' codes), or by English, Chinese or
/// native name (case-insensitive). nullptr when none matches.
const Language* find_language(std::string_view code_or_name) noexcept;

/// True for the Chinese varieties (zh, zh-Hant, yue): the models' ZH<=>XX prompt applies
/// when either side is one of them.
bool is_chinese(const Language& language) noexcept;

}  // namespace mtdesk
