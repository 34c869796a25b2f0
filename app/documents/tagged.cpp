#include "documents/tagged.h"

#include <QList>
#include <QString>

#include "documents/formats.h"
#include "mtdesk/translate/prompt.h"

namespace mtdesk::app::documents {
namespace {

// Length of the tag <sN> or </sN> at text[i], or 0; sets `id` and `close`.
std::size_t tag_at(std::string_view text, std::size_t i, int& id, bool& close) {
    if (text[i] != '<') return 0;
    std::size_t k = i + 1;
    close = k < text.size() && text[k] == '/';
    if (close) ++k;
    if (k >= text.size() || text[k] != 's') return 0;
    ++k;
    const std::size_t digits = k;
    long n = 0;
    while (k < text.size() && text[k] >= '0' && text[k] <= '9' && k - digits < 6)
        n = n * 10 + (text[k++] - '0');
    if (k == digits || text[digits] == '0' || k >= text.size() || text[k] != '>') return 0;
    id = static_cast<int>(n);
    return k + 1 - i;
}

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f';
}

}  // namespace

std::string open_tag(int id) {
    return "<s" + std::to_string(id) + ">";
}

std::string close_tag(int id) {
    return "</s" + std::to_string(id) + ">";
}

std::vector<TagToken> tag_tokens(std::string_view text) {
    std::vector<TagToken> out;
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size();) {
        int id = 0;
        bool close = false;
        const std::size_t n = tag_at(text, i, id, close);
        if (n == 0) {
            ++i;
            continue;
        }
        if (i > start)
            out.push_back({TagToken::Kind::Text, std::string(text.substr(start, i - start))});
        out.push_back({close ? TagToken::Kind::Close : TagToken::Kind::Open,
                       std::string(text.substr(i, n)), id});
        i += n;
        start = i;
    }
    if (start < text.size()) out.push_back({TagToken::Kind::Text, std::string(text.substr(start))});
    return out;
}

bool contains_tag(std::string_view text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        int id = 0;
        bool close = false;
        if (tag_at(text, i, id, close)) return true;
    }
    return false;
}

bool same_tags(std::string_view source, std::string_view translation) {
    auto tags = [](std::string_view s) {
        std::vector<std::pair<TagToken::Kind, int>> out;
        for (const TagToken& t : tag_tokens(s))
            if (t.kind != TagToken::Kind::Text) out.emplace_back(t.kind, t.id);
        return out;
    };
    return tags(source) == tags(translation);
}

bool usable_formatted(std::string_view source, std::string_view translation) {
    if (!same_tags(source, translation)) return false;
    for (const std::string_view echo :
         {"<source>", "</source>", "<target>", "</target>", "<sn>", "</sn>"})
        if (translation.find(echo) != std::string_view::npos &&
            source.find(echo) == std::string_view::npos)
            return false;
    return true;
}

std::string strip_tags(std::string_view text) {
    std::string out;
    for (const TagToken& t : tag_tokens(text))
        if (t.kind == TagToken::Kind::Text) out += t.text;
    return out;
}

std::string translate_runs(std::string_view tagged,
                           const std::function<std::string(const std::string&)>& translate) {
    std::string out;
    for (const TagToken& t : tag_tokens(tagged)) {
        if (t.kind != TagToken::Kind::Text) {
            out += t.text;
            continue;
        }
        std::size_t b = 0, e = t.text.size();
        while (b < e && is_space(t.text[b]))
            ++b;
        while (e > b && is_space(t.text[e - 1]))
            --e;
        const std::string body = t.text.substr(b, e - b);
        out += t.text.substr(0, b);
        out += has_letters(body) ? single_line(translate(body)) : body;
        out += t.text.substr(e);
    }
    return out;
}

bool has_letters(std::string_view text) {
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z')) return true;
    }
    const QString s = QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
    for (const char32_t c : s.toUcs4())
        if (QChar::isLetter(c)) return true;
    return false;
}

}  // namespace mtdesk::app::documents
