#pragma once
// Segments with format tags, as HY-MT1.5's formatted-translation prompt takes them:
// "Click <s1>here</s1> to go on." Each <sN>…</sN> pair stands for one piece of the document's
// inline markup (an HTML <a>, a bold run of a Word paragraph); the format keeps the real markup
// and puts the translated text back between it. A translation is usable only when it has the
// same tags in the same order: then every piece of markup gets its text back in its place.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mtdesk::app::documents {

/// One piece of a tagged text.
struct TagToken {
    enum class Kind { Text, Open, Close };
    Kind kind = Kind::Text;
    std::string text;  ///< Text: the text; Open / Close: the tag as written ("<s1>", "</s1>")
    int id = 0;        ///< Open / Close: the N of <sN>
};

/// "<sN>".
std::string open_tag(int id);
/// "</sN>".
std::string close_tag(int id);

/// Splits `text` into text and <sN> / </sN> tags (N >= 1; anything else is text). Adjacent text
/// is one token; there are no empty text tokens.
std::vector<TagToken> tag_tokens(std::string_view text);

/// True when `text` contains something that reads as a format tag.
bool contains_tag(std::string_view text);

/// True when `translation` has exactly the tags of `source`, in the same order.
bool same_tags(std::string_view source, std::string_view translation);

/// True when `translation`, the output of the formatted prompt for `source`, can be used: the
/// same tags (same_tags) and none of the prompt's own markup (<source>, <target>, <sn>) that a
/// model not trained for the prompt echoes back.
bool usable_formatted(std::string_view source, std::string_view translation);

/// `text` without its tags.
std::string strip_tags(std::string_view text);

/// Translates a tagged text run by run: every text token that has a letter goes to `translate`
/// on its own (without its leading and trailing whitespace, which stay); the tags stay where
/// they are. Line breaks in a run's translation become spaces.
std::string translate_runs(std::string_view tagged,
                           const std::function<std::string(const std::string&)>& translate);

}  // namespace mtdesk::app::documents
