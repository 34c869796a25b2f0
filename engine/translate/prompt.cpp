#include "mtdesk/translate/prompt.h"

#include <unicode/uchar.h>
#include <unicode/uscript.h>
#include <unicode/utf8.h>

#include "mtdesk/error.h"

namespace mtdesk {
namespace {

constexpr std::string_view kXxInstruction1 = "Translate the following segment into ";
constexpr std::string_view kXxInstruction2 = ", without additional explanation.\n\n";
constexpr std::string_view kZhHunyuanMt1 = "把下面的文本翻译成";
constexpr std::string_view kZhHunyuanMt2 = "，不要额外解释。\n\n";
constexpr std::string_view kZhHyMt1 = "将以下文本翻译为";
constexpr std::string_view kZhHyMt2 = "，注意只需要输出翻译后的结果，不要额外解释：";

std::string concat(std::initializer_list<std::string_view> parts) {
    std::string out;
    for (auto p : parts)
        out.append(p);
    return out;
}

}  // namespace

bool looks_chinese(std::string_view text) {
    int han = 0, letters = 0;
    int32_t i = 0;
    const auto* s = reinterpret_cast<const uint8_t*>(text.data());
    const auto n = static_cast<int32_t>(text.size());
    while (i < n) {
        UChar32 c;
        U8_NEXT(s, i, n, c);
        if (c < 0 || !u_isalpha(c)) continue;
        ++letters;
        UErrorCode err = U_ZERO_ERROR;
        if (uscript_getScript(c, &err) == USCRIPT_HAN) ++han;
    }
    return letters > 0 && 2 * han > letters;
}

std::string build_translation_prompt(const PromptRequest& r, PromptStyle style) {
    if (r.target == nullptr) throw Error("translation prompt: no target language given");
    const bool extended = !r.glossary.empty() || !r.context.empty() || r.formatted;
    if (extended && style == PromptStyle::HunyuanMT)
        throw Error(
            "translation prompt: glossary, context and formatted translation need an HY-MT1.5 "
            "model; Hunyuan-MT-7B was not trained with these prompts");
    const std::string_view zh_target = r.target->chinese_name;

    if (r.formatted) {
        return concat(
            {"将以下<source></source>之间的文本翻译为", zh_target,
             "，注意只需要输出翻译后的结果，不要额外解释，原文中的<sn></sn>标签表示标签内文本"
             "包含格式信息，需要在译文中相应的位置尽量保留该标签。输出格式为：<target>str</"
             "target>\n\n<source>",
             r.text, "</source>"});
    }
    if (!r.glossary.empty()) {
        std::string out = "参考下面的翻译：";
        for (const auto& g : r.glossary)
            out += concat({"\n", g.source, " 翻译成 ", g.target});
        out += concat({"\n\n", kZhHyMt1, zh_target, kZhHyMt2, "\n", r.text});
        return out;
    }
    if (!r.context.empty()) {
        return concat({r.context, "\n参考上面的信息，把下面的文本翻译成", zh_target,
                       "，注意不需要翻译上文，也不要额外解释：\n", r.text});
    }
    const bool source_chinese = r.source ? is_chinese(*r.source) : looks_chinese(r.text);
    if (source_chinese || is_chinese(*r.target)) {
        if (style == PromptStyle::HunyuanMT)
            return concat({kZhHunyuanMt1, zh_target, kZhHunyuanMt2, r.text});
        return concat({kZhHyMt1, zh_target, kZhHyMt2, "\n\n", r.text});
    }
    return concat({kXxInstruction1, r.target->english_name, kXxInstruction2, r.text});
}

std::string clean_translation_output(std::string_view out, bool formatted) {
    auto trim = [](std::string_view s) {
        const char* ws = " \t\r\n";
        const auto b = s.find_first_not_of(ws);
        if (b == std::string_view::npos) return std::string_view{};
        return s.substr(b, s.find_last_not_of(ws) - b + 1);
    };
    out = trim(out);
    if (formatted) {
        constexpr std::string_view open = "<target>", close = "</target>";
        if (out.starts_with(open)) out.remove_prefix(open.size());
        if (out.ends_with(close)) out.remove_suffix(close.size());
        out = trim(out);
    }
    // C0 control characters other than tab and line breaks (and DEL) are never part of a
    // translation; a model that emits them would corrupt terminals and files.
    std::string cleaned;
    cleaned.reserve(out.size());
    for (const char c : out) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7F) continue;
        cleaned.push_back(c);
    }
    return cleaned;
}

std::string single_line(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\r' || text[i] == '\n') {
            if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            if (!out.empty() && out.back() != ' ') out.push_back(' ');
            continue;
        }
        out.push_back(text[i]);
    }
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    return out;
}

}  // namespace mtdesk
