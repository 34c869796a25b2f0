#include "mtdesk/translate/languages.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace mtdesk {
namespace {

constexpr std::array<Language, 38> kLanguages{{
    {"zh", "Chinese", "中文", "中文"},
    {"en", "English", "英语", "English"},
    {"fr", "French", "法语", "Français"},
    {"pt", "Portuguese", "葡萄牙语", "Português"},
    {"es", "Spanish", "西班牙语", "Español"},
    {"ja", "Japanese", "日语", "日本語"},
    {"tr", "Turkish", "土耳其语", "Türkçe"},
    {"ru", "Russian", "俄语", "Русский"},
    {"ar", "Arabic", "阿拉伯语", "العربية"},
    {"ko", "Korean", "韩语", "한국어"},
    {"th", "Thai", "泰语", "ไทย"},
    {"it", "Italian", "意大利语", "Italiano"},
    {"de", "German", "德语", "Deutsch"},
    {"vi", "Vietnamese", "越南语", "Tiếng Việt"},
    {"ms", "Malay", "马来语", "Bahasa Melayu"},
    {"id", "Indonesian", "印尼语", "Bahasa Indonesia"},
    {"tl", "Filipino", "菲律宾语", "Filipino"},
    {"hi", "Hindi", "印地语", "हिन्दी"},
    {"zh-Hant", "Traditional Chinese", "繁体中文", "繁體中文"},
    {"pl", "Polish", "波兰语", "Polski"},
    {"cs", "Czech", "捷克语", "Čeština"},
    {"nl", "Dutch", "荷兰语", "Nederlands"},
    {"km", "Khmer", "高棉语", "ភាសាខ្មែរ"},
    {"my", "Burmese", "缅甸语", "မြန်မာဘာသာ"},
    {"fa", "Persian", "波斯语", "فارسی"},
    {"gu", "Gujarati", "古吉拉特语", "ગુજરાતી"},
    {"ur", "Urdu", "乌尔都语", "اردو"},
    {"te", "Telugu", "泰卢固语", "తెలుగు"},
    {"mr", "Marathi", "马拉地语", "मराठी"},
    {"he", "Hebrew", "希伯来语", "עברית"},
    {"bn", "Bengali", "孟加拉语", "বাংলা"},
    {"ta", "Tamil", "泰米尔语", "தமிழ்"},
    {"uk", "Ukrainian", "乌克兰语", "Українська"},
    {"bo", "Tibetan", "藏语", "བོད་ཡིག"},
    {"kk", "Kazakh", "哈萨克语", "Қазақ тілі"},
    {"mn", "Mongolian", "蒙古语", "Монгол хэл"},
    {"ug", "Uyghur", "维吾尔语", "ئۇيغۇرچە"},
    {"yue", "Cantonese", "粤语", "粵語"},
}};

// BCP-47 / ISO forms people type, mapped to the models' codes.
struct Alias {
    std::string_view alias;
    std::string_view code;
};
constexpr std::array<Alias, 16> kAliases{{
    {"zh-cn", "zh"},
    {"zh-hans", "zh"},
    {"zh-sg", "zh"},
    {"cmn", "zh"},
    {"zh-tw", "zh-Hant"},
    {"zh-hk", "zh-Hant"},
    {"zh-mo", "zh-Hant"},
    {"zht", "zh-Hant"},
    {"fil", "tl"},
    {"pt-br", "pt"},
    {"pt-pt", "pt"},
    {"iw", "he"},
    {"in", "id"},
    {"zh-yue", "yue"},
    {"en-us", "en"},
    {"en-gb", "en"},
}};

// ASCII-lowercase with '_' read as '-': enough for codes; names in other scripts compare as-is.
std::string fold(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        if (c == '_') c = '-';
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

}  // namespace

std::span<const Language> languages() noexcept {
    return kLanguages;
}

const Language* find_language(std::string_view code_or_name) noexcept {
    const std::string key = fold(code_or_name);
    if (key.empty()) return nullptr;
    std::string_view code = key;
    for (const Alias& a : kAliases)
        if (a.alias == key) code = a.code;
    for (const Language& l : kLanguages)
        if (fold(l.code) == fold(code)) return &l;
    for (const Language& l : kLanguages)
        if (fold(l.english_name) == key || l.chinese_name == code_or_name ||
            fold(l.native_name) == key)
            return &l;
    return nullptr;
}

bool is_chinese(const Language& language) noexcept {
    return language.code == "zh" || language.code == "zh-Hant" || language.code == "yue";
}

}  // namespace mtdesk
