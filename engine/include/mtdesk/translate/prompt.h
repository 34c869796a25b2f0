#pragma once
// The translation prompts the models were trained with, verbatim (whitespace included), from
// the published model cards of Hunyuan-MT-7B and HY-MT1.5. The result is the *user message*;
// the chat template (tokenizer/chat_template.h) wraps it in the model's special tokens.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mtdesk/translate/languages.h"

namespace mtdesk {

/// Which model family's wording to use.
enum class PromptStyle {
    HunyuanMT,  ///< Hunyuan-MT-7B / Hunyuan-MT-Chimera-7B (September 2025)
    HyMt15,     ///< HY-MT1.5-1.8B / HY-MT1.5-7B (December 2025); also the mtdesk demo model
};

struct GlossaryEntry {
    std::string source;  ///< term as it appears in the source text
    std::string target;  ///< its required translation
};

/// A chat given as it is, in place of a translation prompt: what an OpenAI-compatible client
/// sends to `mtdesk serve`. Both messages go into the model's chat template verbatim (encoded
/// as plain text, so they cannot inject special tokens).
struct ChatMessages {
    std::string system;  ///< "" = none
    std::string user;
};

/// What to translate and how.
struct PromptRequest {
    std::string text;                     ///< the source segment
    const Language* source = nullptr;     ///< nullptr = unknown (decided from the text)
    const Language* target = nullptr;     ///< required
    std::vector<GlossaryEntry> glossary;  ///< terminology intervention (HY-MT1.5)
    std::string context;                  ///< preceding text for contextual translation (HY-MT1.5)
    bool formatted = false;               ///< text carries <sN>…</sN> format tags (HY-MT1.5)
    /// When set, the prompt is this chat instead of build_translation_prompt() (source,
    /// target, glossary and context do not enter it), `text` should hold chat->user (the output
    /// bound is measured on it, see Translator::output_bound), and the job is never cut into
    /// pieces.
    std::optional<ChatMessages> chat;
};

/// Builds the user message.
///  - ZH<=>XX (either side Chinese, see is_chinese(); an unknown source counts as Chinese when
///    most of its letters are Han characters), Hunyuan-MT:
///      "把下面的文本翻译成{target}，不要额外解释。\n\n{text}"
///    HY-MT1.5:
///      "将以下文本翻译为{target}，注意只需要输出翻译后的结果，不要额外解释：\n\n{text}"
///  - XX<=>XX, both:
///      "Translate the following segment into {target}, without additional explanation.\n\n{text}"
///  - glossary (HY-MT1.5 terminology intervention):
///      "参考下面的翻译：\n{s1} 翻译成
///      {t1}\n…\n\n将以下文本翻译为{target}，注意只需要输出翻译后的结果，不要额外解释：\n{text}"
///  - context (HY-MT1.5 contextual translation):
///      "{context}\n参考上面的信息，把下面的文本翻译成{target}，注意不需要翻译上文，也不要额外解释：\n{text}"
///  - formatted (HY-MT1.5 formatted translation):
///      "将以下<source></source>之间的文本翻译为{target}，注意只需要输出翻译后的结果，不要额外解释，
///       原文中的<sn></sn>标签表示标签内文本包含格式信息，需要在译文中相应的位置尽量保留该标签。
///       输出格式为：<target>str</target>\n\n<source>{text}</source>"  (one line in reality)
/// {target} is the target's Chinese name in Chinese instructions, its English name in English
/// ones. Glossary, context and formatted are HY-MT1.5 features: with PromptStyle::HunyuanMT
/// they throw mtdesk::Error. Throws mtdesk::Error when target is null.
std::string build_translation_prompt(const PromptRequest& request, PromptStyle style);

/// Removes the wrapping the formatted prompt asks for ("<target>…</target>"), surrounding
/// whitespace the models sometimes add, and C0 control characters other than tab, CR and LF.
std::string clean_translation_output(std::string_view output, bool formatted);

/// `text` with every line break (CR, LF, CRLF) turned into one space, so a one-line source
/// gets a one-line translation (the 1:1 line mapping of documents and of translate_lines).
std::string single_line(std::string_view text);

/// True when more than half of the letters of `text` are Han ideographs.
bool looks_chinese(std::string_view text);

}  // namespace mtdesk
