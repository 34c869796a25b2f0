#pragma once
// Placeholders a translation must keep, and the check that finds translations that lost one.
//
// What counts: printf conversions (%s, %d, %1$s, %(name)s), Qt's %1…%99 and %n / %Ln, brace
// fields ({name}, {0}), markup tags (<b>, </b>, <br/>, the <sN> format tags), URLs, Markdown
// code spans (`make install`) and Markdown's strong-emphasis markers (** and __, counted). Formats
// that can mark a doubtful entry do so (PO: "fuzzy"); for the others the caller reports what
// check_placeholders() finds.

#include <string>
#include <string_view>
#include <vector>

#include "documents/document.h"

namespace mtdesk::app::documents {

/// The placeholders in `text`, sorted (each occurrence once, so "%s %s" gives two).
std::vector<std::string> placeholders(std::string_view text);

/// A translated segment whose placeholders differ from its source's.
struct PlaceholderIssue {
    std::size_t segment = 0;
    std::vector<std::string> missing;  ///< in the source, not in the translation
    std::vector<std::string> added;    ///< in the translation, not in the source
};

/// The segments whose translation lost or gained a placeholder. Throws mtdesk::Error when the
/// number of translations differs from the number of segments.
std::vector<PlaceholderIssue> check_placeholders(const Document& doc,
                                                 const std::vector<std::string>& translations);

}  // namespace mtdesk::app::documents
