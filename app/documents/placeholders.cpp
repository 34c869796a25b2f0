#include "documents/placeholders.h"

#include <algorithm>
#include <iterator>

#include "documents/pattern.h"
#include "mtdesk/error.h"

namespace mtdesk::app::documents {

std::vector<std::string> placeholders(std::string_view text) {
    // One alternative per kind, most specific first: code spans, URLs, printf (with position or
    // name), Qt's %1 / %L1 / %n / %Ln, brace fields, tags, Markdown's ** and __.
    static const Pattern re(
        R"(`[^`\n]+`)"
        R"(|(?:https?|ftp)://[^\s<>"'`]*[^\s<>"'`.,;:!?)\]]|mailto:[^\s<>"'`]+[A-Za-z0-9])"
        R"(|%(?:\d+\$)?(?:\([A-Za-z_][A-Za-z0-9_]*\))?[-+#0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?)"
        R"((?:hh|h|ll|l|L|q|j|z|t|I64|I32)?[diouxXeEfFgGcrsaAp])"
        R"(|%L?(?:\d{1,2}|n))"
        R"(|\{[A-Za-z0-9_.:!\[\]]*\})"
        R"(|</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>)"
        // Markdown strong emphasis markers: "**file**" that comes back as "** Datei" lost one.
        R"(|\*\*|__)");
    std::vector<std::string> out;
    for (const PatternMatch& m : re.find_all(text))
        out.emplace_back(m.str(0));
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<PlaceholderIssue> check_placeholders(const Document& doc,
                                                 const std::vector<std::string>& translations) {
    if (translations.size() != doc.segments.size())
        throw Error("document has " + std::to_string(doc.segments.size()) + " segments but " +
                    std::to_string(translations.size()) + " translations were given");
    std::vector<PlaceholderIssue> out;
    for (std::size_t i = 0; i < doc.segments.size(); ++i) {
        const std::vector<std::string> src = placeholders(doc.segments[i]);
        if (src.empty() && translations[i].find_first_of("%{<`:*_") == std::string::npos) continue;
        const std::vector<std::string> tr = placeholders(translations[i]);
        if (src == tr) continue;
        PlaceholderIssue issue;
        issue.segment = i;
        std::set_difference(src.begin(), src.end(), tr.begin(), tr.end(),
                            std::back_inserter(issue.missing));
        std::set_difference(tr.begin(), tr.end(), src.begin(), src.end(),
                            std::back_inserter(issue.added));
        out.push_back(std::move(issue));
    }
    return out;
}

}  // namespace mtdesk::app::documents
