// Qt Linguist .ts: the <source> of every untranslated message goes into its <translation>.
//
// A message is untranslated when its <translation> (not vanished or obsolete) is empty, and so
// are all its <numerusform>s. Its translation is marked type="unfinished", as Linguist marks
// machine and draft translations, so a person reviews it before lrelease uses it (lrelease
// leaves unfinished messages out unless told otherwise). Plural messages (numerus="yes") get
// the translation of the source (with its %n) in each <numerusform>, as many as the target
// language has in Qt's rules (lupdate wrote those of the file's language). Finished translations,
// drafts, comments, locations and everything else stay byte for byte: the file is parsed with
// pugixml to find the messages, and only the empty <translation> elements (and the language of
// <TS>, which becomes the target language) are rewritten in the original text.

#include <QLocale>

#include <pugixml.hpp>

#include <algorithm>

#include "documents/formats.h"
#include "documents/pattern.h"
#include "documents/plural_forms.h"
#include "mtdesk/error.h"
#include "mtdesk/translate/prompt.h"

namespace mtdesk::app::documents {
namespace {

constexpr int kLanguageSlot = -2;  // a Piece holding <TS language="...">, replaced on write
constexpr int kNumerusSlot = -3;   // the next TsState::numerus, written on write

// The <translation> of an untranslated plural message. How many <numerusform>s it gets is
// known on write only: as many as the target language has.
struct Numerus {
    int segment = -1;
    std::string start_tag;               // "<translation ... type=\"unfinished\">"
    std::vector<std::string> open_tags;  // of the (empty) <numerusform>s it has
    std::vector<std::string> gaps;       // the text around them: open_tags.size() + 1, or none
    std::string end_tag;                 // "</translation>"
};

struct TsState : FormatState {
    std::vector<std::string> prefix, suffix;  // per segment: whitespace around the source text
    bool language_attribute = false;          // <TS> has a language attribute (else one is added)
    std::string language;                     // its value
    std::vector<Numerus> numerus;             // in the order of their slots
};

struct Replacement {
    std::size_t begin = 0, end = 0;  // the text replaced
    std::vector<Piece> pieces;
    std::optional<Numerus> numerus;  // for a kNumerusSlot piece
};

std::size_t line_of(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    return 1 + static_cast<std::size_t>(std::count(
                   text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// An element's extent in the text, from pugixml's offset of its name.
struct Extent {
    std::size_t begin = 0;    // '<'
    std::size_t tag_end = 0;  // after the start tag's '>'
    std::size_t end = 0;      // after the end tag's '>' (== tag_end when self-closing)
    bool self_closing = false;
};

Extent extent_of(std::string_view text, const pugi::xml_node& node, const QString& path) {
    Extent e;
    const std::ptrdiff_t off = node.offset_debug();
    const std::string name = node.name();
    if (off < 1 || static_cast<std::size_t>(off) >= text.size() ||
        text[static_cast<std::size_t>(off) - 1] != '<' ||
        text.compare(static_cast<std::size_t>(off), name.size(), name) != 0)
        throw FileError(path.toStdString(), "cannot locate <" + name + "> in the file");
    e.begin = static_cast<std::size_t>(off) - 1;
    char quote = 0;
    std::size_t k = e.begin + 1;
    for (; k < text.size(); ++k) {
        const char c = text[k];
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '>') {
            break;
        }
    }
    e.tag_end = k + 1;
    e.self_closing = text[k - 1] == '/';
    if (e.self_closing) {
        e.end = e.tag_end;
        return e;
    }
    const std::size_t close = text.find("</" + name, e.tag_end);
    const std::size_t gt = close == std::string_view::npos ? close : text.find('>', close);
    if (gt == std::string_view::npos)
        throw FileError(path.toStdString(), "cannot locate the end of <" + name + ">");
    e.end = gt + 1;
    return e;
}

// The start tag `tag` ("<translation ...>" or "<translation/>") with type="unfinished" and
// without a self-closing slash.
std::string unfinished_start_tag(std::string tag) {
    static const Pattern type_attr(R"(\s+type\s*=\s*("[^"]*"|'[^']*'))");
    for (std::size_t at = 0; const std::optional<PatternMatch> m = type_attr.search(tag, at);) {
        tag.erase(m->position(0), m->length(0));
        at = m->position(0);
    }
    std::size_t end = tag.size() - 1;  // '>'
    if (end > 0 && tag[end - 1] == '/') --end;
    while (end > 0 && (tag[end - 1] == ' ' || tag[end - 1] == '\t' || tag[end - 1] == '\n'))
        --end;
    return tag.substr(0, end) + " type=\"unfinished\">";
}

// How many <numerusform>s Qt (Linguist, lrelease) expects for `lang` ("ru", "de_DE"): those
// of the target languages (qt_numerus_forms), else Qt's rules for a few more; 2 by default.
int numerus_forms(std::string_view lang) {
    std::string code(lang);
    std::replace(code.begin(), code.end(), '_', '-');
    for (std::string_view c = code;; c = c.substr(0, c.rfind('-'))) {
        if (const std::optional<int> n = qt_numerus_forms(c)) return *n;
        if (c.find('-') == std::string_view::npos) break;
    }
    const std::string base = code.substr(0, code.find('-'));
    for (const char* three : {"be", "sk", "hr", "sr", "bs"})
        if (base == three) return 3;
    return 2;
}

std::string escape(std::string_view s) {
    std::string out;
    for (const char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

bool blank(std::string_view s) {
    return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

class TsFormat : public DocumentFormat {
  public:
    std::vector<std::string> extensions() const override { return {"ts"}; }

    Document read(const QByteArray& bytes, const QString& path) const override {
        const DecodedText decoded = decode_text(bytes, path);
        if (decoded.encoding != "UTF-8")
            throw FileError(path.toStdString(), "is not UTF-8 (it looks like " + decoded.encoding +
                                                    "): Qt Linguist files must be UTF-8");
        const std::string& text = decoded.text;
        pugi::xml_document xml;
        const pugi::xml_parse_result parsed =
            xml.load_buffer(text.data(), text.size(),
                            pugi::parse_default | pugi::parse_ws_pcdata | pugi::parse_doctype |
                                pugi::parse_declaration | pugi::parse_comments | pugi::parse_pi,
                            pugi::encoding_utf8);
        if (!parsed)
            fail_at(path, line_of(text, static_cast<std::size_t>(parsed.offset)),
                    std::string("not well-formed XML: ") + parsed.description());
        const pugi::xml_node root = xml.document_element();
        if (std::string_view(root.name()) != "TS")
            throw FileError(path.toStdString(), std::string("is not a Qt Linguist file (its root "
                                                            "element is <") +
                                                    root.name() + ">, not <TS>)");
        auto state = std::make_shared<TsState>();
        Document doc;
        if (decoded.had_bom) doc.add_literal("\xEF\xBB\xBF");
        std::vector<Replacement> replacements;

        // <TS language="..."> becomes the target language.
        {
            const Extent ts = extent_of(text, root, path);
            const std::string tag = text.substr(ts.begin, ts.tag_end - ts.begin);
            static const Pattern lang_attr(R"(\slanguage\s*=\s*("[^"]*"|'[^']*'))");
            Replacement r;
            if (const std::optional<PatternMatch> m = lang_attr.search(tag)) {
                state->language_attribute = true;
                state->language = std::string(m->str(1).substr(1, m->length(1) - 2));
                r.begin = ts.begin + m->position(1);
                r.end = r.begin + m->length(1);
                r.pieces.push_back({std::string(m->str(1)), kLanguageSlot});
            } else {
                r.begin = r.end = ts.begin + 3;  // after "<TS"
                r.pieces.push_back({{}, kLanguageSlot});
            }
            replacements.push_back(std::move(r));
        }

        for (const pugi::xpath_node& x : root.select_nodes(".//message")) {
            const pugi::xml_node message = x.node();
            const pugi::xml_node source = message.child("source");
            const pugi::xml_node translation = message.child("translation");
            if (!source || !translation) continue;
            const std::string type = translation.attribute("type").value();
            if (type == "vanished" || type == "obsolete") continue;
            if (source.find_child([](pugi::xml_node n) { return n.type() == pugi::node_element; }))
                continue;  // <byte> elements: control characters we do not translate
            const std::string src = source.text().get();
            if (!has_letters(src)) continue;
            bool empty = true;
            std::vector<pugi::xml_node> forms;
            for (const pugi::xml_node child : translation.children()) {
                if (child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata)
                    empty = empty && blank(child.value());
                else if (child.type() == pugi::node_element) {
                    if (std::string_view(child.name()) != "numerusform") empty = false;
                    forms.push_back(child);
                    empty = empty && child.text().empty();
                }
            }
            if (!empty) continue;

            const std::size_t b = src.find_first_not_of(" \t\r\n");
            const std::size_t e = src.find_last_not_of(" \t\r\n");
            const int segment = static_cast<int>(doc.segments.size());
            check_segment_limit(doc);
            doc.segments.push_back(src.substr(b, e + 1 - b));
            state->prefix.push_back(src.substr(0, b));
            state->suffix.push_back(src.substr(e + 1));

            const Extent t = extent_of(text, translation, path);
            const std::string start_tag = text.substr(t.begin, t.tag_end - t.begin);
            const bool numerus = std::string_view(message.attribute("numerus").value()) == "yes";
            if (!numerus) {
                replacements.push_back(
                    {t.begin,
                     t.end,
                     {{unfinished_start_tag(start_tag), -1}, {{}, segment}, {"</translation>", -1}},
                     {}});
                continue;
            }
            // Plural forms: each <numerusform> filled, the layout between them kept; written
            // with as many as the target language has.
            Numerus n;
            n.segment = segment;
            n.start_tag = type == "unfinished" && !t.self_closing ? start_tag
                                                                  : unfinished_start_tag(start_tag);
            const std::size_t end_tag = t.self_closing ? t.end : text.rfind("</", t.end - 1);
            n.end_tag = t.self_closing ? "</translation>" : text.substr(end_tag, t.end - end_tag);
            std::size_t at = t.tag_end;
            for (const pugi::xml_node& form : forms) {
                const Extent f = extent_of(text, form, path);
                std::string open = text.substr(f.begin, f.tag_end - f.begin);
                if (f.self_closing) open = open.substr(0, open.rfind('/')) + ">";
                n.gaps.push_back(text.substr(at, f.begin - at));
                n.open_tags.push_back(std::move(open));
                at = f.end;
            }
            if (!forms.empty()) n.gaps.push_back(text.substr(at, end_tag - at));
            replacements.push_back({t.begin, t.end, {{{}, kNumerusSlot}}, std::move(n)});
        }

        std::sort(replacements.begin(), replacements.end(),
                  [](const Replacement& a, const Replacement& b) { return a.begin < b.begin; });
        std::size_t at = 0;
        for (const Replacement& r : replacements) {
            doc.add_literal(std::string_view(text).substr(at, r.begin - at));
            for (const Piece& p : r.pieces) {
                if (p.segment == -1) {
                    doc.add_literal(p.literal);
                } else {
                    doc.skeleton.push_back(p);
                    doc.skeleton.push_back({{}, -1});  // nothing merges into a slot
                }
            }
            if (r.numerus) state->numerus.push_back(*r.numerus);
            at = r.end;
        }
        doc.add_literal(std::string_view(text).substr(at));
        doc.state = state;
        return doc;
    }

    QByteArray write(const Document& doc,
                     const std::vector<std::string>& translations) const override {
        const TsState* state = &checked_state<TsState>(doc, translations, "a Qt Linguist document");
        // Qt's number of plural forms for the target language (or the file's).
        const int forms =
            numerus_forms(doc.target_language.empty() ? state->language : doc.target_language);
        auto text = [&](int segment) {
            const auto i = static_cast<std::size_t>(segment);
            const std::string& t = translations[i];
            const bool one_line = doc.segments[i].find('\n') == std::string::npos;
            return escape(state->prefix[i] + (one_line ? single_line(t) : t) + state->suffix[i]);
        };
        std::size_t next_numerus = 0;
        std::string out;
        for (const Piece& p : doc.skeleton) {
            if (p.segment == kNumerusSlot) {
                const Numerus& n = state->numerus.at(next_numerus++);
                // Without a target, a message keeps the forms it has.
                const int count = doc.target_language.empty() && !n.open_tags.empty()
                                      ? static_cast<int>(n.open_tags.size())
                                      : forms;
                const std::string value = text(n.segment);
                out += n.start_tag;
                for (int k = 0; k < count; ++k) {
                    const auto i = static_cast<std::size_t>(k);
                    // The layout of the forms there were; a form more is laid out like the
                    // second one (or the first).
                    if (!n.gaps.empty())
                        out += n.gaps[i < n.open_tags.size() ? i : n.open_tags.size() >= 2];
                    out += i < n.open_tags.size() ? n.open_tags[i] : std::string("<numerusform>");
                    out += value + "</numerusform>";
                }
                if (!n.gaps.empty()) out += n.gaps.back();
                out += n.end_tag;
            } else if (p.segment == kLanguageSlot) {
                if (doc.target_language.empty())
                    out += p.literal;
                else {
                    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive)
                    // on a chain of temporary strings here.
                    out.append(state->language_attribute ? "\"" : " language=\"")
                        .append(qt_language(doc.target_language))
                        .append("\"");
                }
            } else if (p.segment < 0) {
                out += p.literal;
            } else {
                out += text(p.segment);
            }
        }
        return QByteArray::fromStdString(out);
    }

  private:
    // Linguist's form of a language: "de" -> "de_DE", "zh-Hant" -> "zh_TW".
    static std::string qt_language(const std::string& code) {
        const QLocale locale(QString::fromStdString(code));
        if (locale.language() == QLocale::C) {
            std::string out = code;
            std::replace(out.begin(), out.end(), '-', '_');
            return out;
        }
        return locale.name().toStdString();
    }
};

}  // namespace

const DocumentFormat& ts_format() {
    static const TsFormat f;
    return f;
}

}  // namespace mtdesk::app::documents
