// gettext .po / .pot: msgid kept, empty msgstr filled.
//
// Untranslated entries (every msgstr empty) become segments: msgid, and msgid_plural for
// plural entries (the form of n == 1 gets the msgid's translation, the others the plural's, see
// output_slots(); there are as many as the target language has, its Plural-Forms in the
// header, unless the catalog has translated plural entries already, whose forms then stay). The
// header entry, translated entries, obsolete entries (#~) and all comments, flags, msgctxt and
// previous-msgid lines stay as they are. A translation that loses or adds a placeholder (%s,
// %d, %1, %(name)s, {name}, <tag>) or a line break is never written as is: the entry gets the
// source text as msgstr and the "fuzzy" flag, so gettext tools ignore it until someone checks.
//
// As gettext (msgconv) does, the file is read in the charset its header's Content-Type declares
// (UTF-8 when it declares none, or the template's "CHARSET") and written as UTF-8: the header
// then says charset=UTF-8, and its Language field is the target language (added if missing).

#include <QStringDecoder>

#include <algorithm>

#include "documents/formats.h"
#include "documents/pattern.h"
#include "documents/plural_forms.h"
#include "mtdesk/error.h"

namespace mtdesk::app::documents {
namespace {

bool is_blank(std::string_view s) {
    return s.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}

std::string_view trim_left(std::string_view s) {
    const std::size_t b = s.find_first_not_of(" \t");
    return b == std::string_view::npos ? std::string_view{} : s.substr(b);
}

// Parses the quoted string at the start of `s` (after optional blanks). Returns the value;
// throws for an unterminated string or text after it.
std::string parse_quoted(std::string_view s, const QString& path, std::size_t line_no) {
    s = trim_left(s);
    if (s.empty() || s[0] != '"') fail_at(path, line_no, "expected a quoted string");
    std::string out;
    std::size_t i = 1;
    for (;;) {
        if (i >= s.size()) fail_at(path, line_no, "unterminated string");
        const char c = s[i++];
        if (c == '"') break;
        if (c != '\\') {
            out += c;
            continue;
        }
        if (i >= s.size()) fail_at(path, line_no, "unterminated string");
        const char e = s[i++];
        switch (e) {
            case 'n':
                out += '\n';
                break;
            case 't':
                out += '\t';
                break;
            case 'r':
                out += '\r';
                break;
            case 'a':
                out += '\a';
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'v':
                out += '\v';
                break;
            case '\\':
                out += '\\';
                break;
            case '"':
                out += '"';
                break;
            case '?':
                out += '?';
                break;
            case '\'':
                out += '\'';
                break;
            default:
                if (e >= '0' && e <= '7') {
                    int v = e - '0';
                    for (int k = 0; k < 2 && i < s.size() && s[i] >= '0' && s[i] <= '7'; ++k)
                        v = v * 8 + (s[i++] - '0');
                    out += static_cast<char>(v);
                } else {
                    fail_at(path, line_no, std::string("invalid escape sequence \\") + e);
                }
        }
    }
    if (!is_blank(s.substr(i))) fail_at(path, line_no, "unexpected text after the string");
    return out;
}

std::string escape(std::string_view s) {
    std::string out;
    for (const char c : s) {
        switch (c) {
            case '\\':
                out += "\\\\";
                break;
            case '"':
                out += "\\\"";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\r':
                out += "\\r";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    const char oct[] = {'\\', static_cast<char>('0' + ((c >> 6) & 7)),
                                        static_cast<char>('0' + ((c >> 3) & 7)),
                                        static_cast<char>('0' + (c & 7))};
                    out.append(oct, 4);
                } else {
                    out += c;
                }
        }
    }
    return out;
}

// keyword "value" in gettext's layout: long values with line breaks split after each "\n".
std::string format_keyword(const std::string& keyword, const std::string& value,
                           const std::string& eol) {
    const std::size_t first_nl = value.find('\n');
    if (first_nl == std::string::npos || first_nl + 1 == value.size())
        return keyword + " \"" + escape(value) + "\"" + eol;
    std::string out = keyword + " \"\"" + eol;
    std::size_t start = 0;
    while (start < value.size()) {
        std::size_t nl = value.find('\n', start);
        nl = nl == std::string::npos ? value.size() : nl + 1;
        out += "\"" + escape(std::string_view(value).substr(start, nl - start)) + "\"" + eol;
        start = nl;
    }
    return out;
}

bool is_utf8_name(std::string_view charset) {
    const QByteArray name = QByteArray(charset.data(), static_cast<qsizetype>(charset.size()));
    return name.compare("UTF-8", Qt::CaseInsensitive) == 0 ||
           name.compare("UTF8", Qt::CaseInsensitive) == 0;
}

// Where the value of "charset=" starts and ends in `header`, or {npos, npos}.
std::pair<std::size_t, std::size_t> charset_span(std::string_view header) {
    const std::size_t at = header.find("charset=");
    if (at == std::string_view::npos) return {at, at};
    const std::size_t end = header.find_first_of(" \t\r\n;\\\"", at + 8);
    return {at + 8, end == std::string_view::npos ? header.size() : end};
}

// The charset the header entry (the first entry, msgid "") declares in its Content-Type, as
// written ("ISO-8859-1"); "" when it declares none, or the template's placeholder "CHARSET".
// Read from the bytes as they are, as gettext does: the header is ASCII in any charset.
std::string declared_charset(std::string_view bytes) {
    static const Pattern header_msgid(R"(msgid[ \t]+""[ \t\r]*)");
    enum { Before, Msgid, Msgstr } at = Before;
    std::string msgstr;  // the header's msgstr lines, still quoted
    for (const Line& line : split_lines(bytes)) {
        const std::string_view l = trim_left(line.content);
        if (is_blank(l) || l.starts_with('#')) {
            if (at != Before) break;
        } else if (l.starts_with('"')) {
            if (at == Msgstr) msgstr += l;
            if (at == Msgid && l.find_first_not_of("\" \t\r") != std::string_view::npos)
                return {};  // msgid "" "text": not the header
        } else if (at == Before && header_msgid.matches(l)) {
            at = Msgid;
        } else if (at == Msgid && l.starts_with("msgstr") && !l.starts_with("msgstr[")) {
            at = Msgstr;
            msgstr += l;
        } else {
            break;  // another entry first, or the next one
        }
    }
    const auto [b, e] = charset_span(msgstr);
    if (b == std::string::npos) return {};
    const std::string charset = msgstr.substr(b, e - b);
    return charset == "CHARSET" ? std::string() : charset;
}

// The text of a PO file, UTF-8, in the charset its header declares (or UTF-8).
DecodedText decode_po(const QByteArray& bytes, const QString& path) {
    const std::string file = path.toStdString();
    if (bytes.startsWith("\xFF\xFE") || bytes.startsWith("\xFE\xFF"))  // nor can gettext
        throw FileError(file, "is UTF-16: PO files must be UTF-8 or an ASCII-based charset");
    const bool bom = bytes.startsWith("\xEF\xBB\xBF");
    const std::string charset =
        declared_charset(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size()))
                             .substr(bom ? 3 : 0));
    if (!charset.empty() && !is_utf8_name(charset) && !bom) {
        QStringDecoder decoder(charset.c_str(), QStringDecoder::Flag::Stateless);
        if (!decoder.isValid())
            throw FileError(file, "its header declares charset " + charset +
                                      ", which this system cannot decode");
        const QString text = decoder.decode(bytes);
        if (decoder.hasError())
            throw FileError(file,
                            "is not valid " + charset + " text (the charset its header declares)");
        return {text.toStdString(), false, charset};
    }
    QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    (void)QString(utf8.decode(QByteArrayView(bytes).sliced(bom ? 3 : 0)));
    if (utf8.hasError())
        throw FileError(file, charset.empty() ? "is not UTF-8 and its header declares no charset"
                                              : "is not valid UTF-8 text (the charset its "
                                                "header declares)");
    return decode_text(bytes, path);  // a binary file is refused there
}

// Whether the header has a field `name` ("Plural-Forms").
bool has_header_field(std::string_view fields, const std::string& name) {
    const std::string key = name + ":";
    return fields.starts_with(key) || fields.find("\n" + key) != std::string_view::npos;
}

// Sets the header field `name` to `value`: in its line when there is one, else on a new line
// after the field `after` (where gettext puts it), else last.
void set_header_field(std::string& fields, const std::string& name, const std::string& value,
                      const std::string& after) {
    const std::string line = name + ": " + value;
    std::size_t insert_at = std::string::npos;
    for (std::size_t start = 0; start < fields.size();) {
        const std::size_t nl = std::min(fields.find('\n', start), fields.size());
        if (fields.compare(start, name.size() + 1, name + ":") == 0) {
            fields.replace(start, nl - start, line);
            return;
        }
        if (fields.compare(start, after.size() + 1, after + ":") == 0)
            insert_at = std::min(nl + 1, fields.size());
        start = nl + 1;
    }
    if (insert_at == std::string::npos) insert_at = fields.size();
    if (insert_at == fields.size() && !fields.empty() && !fields.ends_with('\n')) {
        fields += '\n';
        insert_at = fields.size();
    }
    fields.insert(insert_at, line + "\n");
}

// The header as written: UTF-8, the target language, and `forms` (when given) where the
// catalog has plural entries (`plurals`) or states its forms already.
std::string output_header(std::string fields, const std::string& language,
                          const std::optional<PluralForms>& forms, bool plurals) {
    const auto [b, e] = charset_span(fields);
    if (b != std::string::npos && !is_utf8_name(std::string_view(fields).substr(b, e - b)))
        fields.replace(b, e - b, "UTF-8");
    if (language.empty()) return fields;
    // gettext's form of the code, as Poedit and Weblate write it: "zh-Hant" -> "zh_Hant".
    std::string code = language;
    std::replace(code.begin(), code.end(), '-', '_');
    set_header_field(fields, "Language", code, "Language-Team");
    // The target's plural forms, which the entries are written with (as msginit sets them).
    if (forms && (plurals || has_header_field(fields, "Plural-Forms")))
        set_header_field(fields, "Plural-Forms", forms->header_value(),
                         "Content-Transfer-Encoding");
    return fields;
}

}  // namespace

/// Placeholders of `text` that a translation must keep: printf conversions without position
/// (in order), and the rest (positional %1, %(name)s, {name}, tags, line breaks) in any order.
std::pair<std::vector<std::string>, std::vector<std::string>> po_placeholders(
    const std::string& text) {
    static const Pattern re(
        R"(%(\d+\$)?(\([A-Za-z_][A-Za-z0-9_]*\))?[-+ #0']*(\d+|\*)?(\.(\d+|\*))?(hh|h|ll|l|L|q|j|z|t|I64|I32)?[diouxXeEfFgGcrsaAp%]|%L?\d+|\{[A-Za-z0-9_.:!\[\]]*\}|</?[A-Za-z][^<>]*>|\n)");
    std::vector<std::string> ordered, unordered;
    for (const PatternMatch& match : re.find_all(text)) {
        const std::string m(match.str(0));
        const bool positional =
            match.matched(1) || match.matched(2) || m[0] != '%' ||
            (m.size() > 1 && (std::isdigit(static_cast<unsigned char>(m.back())) || m[1] == 'L'));
        (positional ? unordered : ordered).push_back(m);
    }
    std::sort(unordered.begin(), unordered.end());
    return {ordered, unordered};
}

namespace {

struct MsgstrSlot {
    std::string keyword;  // "msgstr" or "msgstr[N]"
    int segment = -1;
    std::string prefix, suffix;  // whitespace around the segment in the source text
    std::string eol;
};

struct PoEntry {
    std::string literal;  // an entry (or blank lines) kept as is; or the text before the flags
    bool translate = false;
    std::string flags_line;  // an existing "#, ..." line without its end, or empty
    std::string flags_eol;
    std::string body;  // lines between the flags position and the first msgstr
    std::vector<MsgstrSlot> targets;
    std::string tail;  // lines after the msgstr lines
};

PoEntry literal_entry(std::string text) {
    PoEntry e;
    e.literal = std::move(text);
    return e;
}

// The header entry (msgid ""), whose msgstr changes on write: charset, Language.
struct PoHeader {
    std::size_t entry = std::string::npos;  // index in PoState::entries; npos: no header
    std::string before;                     // the entry's text before its msgstr
    std::string fields;                     // the msgstr's value
    std::string eol;                        // line end of the msgstr lines
    bool last_eol = true;                   // the msgstr's last line has a line end
    std::string after;                      // the entry's text after its msgstr
};

// A plural entry: its msgstr lines are msgstr[N].
bool is_plural(const PoEntry& e) {
    return !e.targets.empty() && e.targets.front().keyword.starts_with("msgstr[");
}

struct PoState : FormatState {
    std::vector<PoEntry> entries;
    PoHeader header;
    // Some plural entry is translated already: the catalog's forms are its language's, and
    // stay as they are (a header changed under them would no longer match them).
    bool translated_plurals = false;
};

struct Item {
    std::string keyword;  // "" for a comment line
    std::string value;
    std::size_t first = 0, last = 0;  // line indices
};

// Whether every msgstr of a translated entry can be written as translated: not empty, and
// with the placeholders and line breaks of its source.
bool usable(const PoEntry& e, const Document& doc, const std::vector<std::string>& translations) {
    for (const MsgstrSlot& s : e.targets) {
        const std::string& src = doc.segments[static_cast<std::size_t>(s.segment)];
        const std::string& tr = translations[static_cast<std::size_t>(s.segment)];
        if (is_blank(tr) || po_placeholders(src) != po_placeholders(tr)) return false;
    }
    return true;
}

class PoFormat : public DocumentFormat {
  public:
    std::vector<std::string> extensions() const override { return {"po", "pot"}; }

    Document read(const QByteArray& bytes, const QString& path) const override {
        const DecodedText decoded = decode_po(bytes, path);
        const std::string& text = decoded.text;
        const std::vector<Line> lines = split_lines(text);
        auto state = std::make_shared<PoState>();
        Document doc;
        if (decoded.had_bom) state->entries.push_back(literal_entry("\xEF\xBB\xBF"));

        static const Pattern keyword_re(R"((msgctxt|msgid|msgid_plural|msgstr(\[\d+\])?)\b.*)");
        std::size_t i = 0;
        while (i < lines.size()) {
            if (is_blank(lines[i].content)) {
                state->entries.push_back(
                    literal_entry(std::string(lines[i].content) + std::string(lines[i].eol)));
                ++i;
                continue;
            }
            // One entry: its items up to a blank line (or the next entry's start).
            std::vector<Item> items;
            bool seen_msgstr = false;
            const std::size_t begin = i;
            while (i < lines.size() && !is_blank(lines[i].content)) {
                const std::string_view l = trim_left(lines[i].content);
                if (l.starts_with('#')) {
                    if (seen_msgstr) break;
                    items.push_back({"", "", i, i});
                } else if (l.starts_with('"')) {
                    if (items.empty() || items.back().keyword.empty())
                        fail_at(path, i + 1, "string without a keyword");
                    items.back().value += parse_quoted(l, path, i + 1);
                    items.back().last = i;
                } else {
                    const std::string s(l);
                    if (!keyword_re.matches(s)) fail_at(path, i + 1, "unknown line '" + s + "'");
                    const std::size_t sp = s.find_first_of(" \t\"");
                    const std::string kw = s.substr(0, sp);
                    const bool is_str = kw.starts_with("msgstr");
                    if (seen_msgstr && !is_str) break;
                    seen_msgstr = seen_msgstr || is_str;
                    if (sp == std::string::npos) fail_at(path, i + 1, kw + " without a string");
                    items.push_back({kw, parse_quoted(s.substr(sp), path, i + 1), i, i});
                }
                ++i;
            }
            add_entry(doc, *state, lines, begin, i, items, path);
        }
        doc.state = state;
        return doc;
    }

    std::size_t entries_marked_for_review(
        const Document& doc, const std::vector<std::string>& translations) const override {
        const PoState& state = checked_state<PoState>(doc, translations, "a PO document");
        return static_cast<std::size_t>(std::count_if(
            state.entries.begin(), state.entries.end(),
            [&](const PoEntry& e) { return e.translate && !usable(e, doc, translations); }));
    }

    QByteArray write(const Document& doc,
                     const std::vector<std::string>& translations) const override {
        const PoState* state = &checked_state<PoState>(doc, translations, "a PO document");
        std::string out;
        // The target's plural forms, unless the catalog has translated plurals of its own.
        const std::optional<PluralForms> forms =
            state->translated_plurals ? std::nullopt : gettext_plural_forms(doc.target_language);
        const bool plurals = std::any_of(state->entries.begin(), state->entries.end(), is_plural);
        for (std::size_t k = 0; k < state->entries.size(); ++k) {
            const PoEntry& e = state->entries[k];
            if (k == state->header.entry) {
                out += header_text(state->header, e.literal, doc.target_language, forms, plurals);
                continue;
            }
            out += e.literal;
            if (!e.translate) continue;
            const bool ok = usable(e, doc, translations);
            std::string flags = e.flags_line;
            if (!ok && flags.find("fuzzy") == std::string::npos)
                flags = flags.empty() ? "#, fuzzy" : flags + ", fuzzy";
            if (!flags.empty()) out += flags + e.flags_eol;
            out += e.body;
            for (const MsgstrSlot& s : output_slots(e, doc, forms)) {
                const std::size_t k = static_cast<std::size_t>(s.segment);
                const std::string& value = ok ? translations[k] : doc.segments[k];
                out += format_keyword(s.keyword, s.prefix + value + s.suffix, s.eol);
            }
            out += e.tail;
        }
        return QByteArray::fromStdString(out);
    }

  private:
    // The msgstr lines an entry is written with: its own, except that a plural entry gets as
    // many forms as `forms` (the target language's) has, the header saying so. The form of
    // n == 1 gets the singular's translation, every other form the plural's. Where the form of
    // 1 also stands for other numbers (Russian 21, 31, ...; French 0) and the singular lacks a
    // placeholder of the plural ("One file" / "%d files"), it gets the plural's too: else the
    // number would be missing there (msgfmt --check refuses that). A language with one form
    // gets the plural's.
    static std::vector<MsgstrSlot> output_slots(const PoEntry& e, const Document& doc,
                                                const std::optional<PluralForms>& forms) {
        if (!forms || !is_plural(e)) return e.targets;
        const MsgstrSlot* singular = &e.targets.front();
        const MsgstrSlot* other = nullptr;
        for (const MsgstrSlot& s : e.targets) {
            if (s.keyword == "msgstr[0]")
                singular = &s;
            else if (!other)
                other = &s;
        }
        if (!other) other = singular;
        auto source = [&](const MsgstrSlot* s) {
            return s->prefix + doc.segments[static_cast<std::size_t>(s->segment)] + s->suffix;
        };
        const bool singular_for_one =
            forms->nplurals > 1 && (forms->one_only || po_placeholders(source(singular)) ==
                                                           po_placeholders(source(other)));
        const std::string eol = e.targets.front().eol.empty() ? "\n" : e.targets.front().eol;
        std::vector<MsgstrSlot> out;
        for (int k = 0; k < forms->nplurals; ++k) {
            MsgstrSlot s = k == forms->one && singular_for_one ? *singular : *other;
            s.keyword = "msgstr[" + std::to_string(k) + "]";
            s.eol = k + 1 < forms->nplurals ? eol : e.targets.back().eol;
            out.push_back(std::move(s));
        }
        return out;
    }

    // The header entry as the output has it: its text as it was when nothing changes.
    static std::string header_text(const PoHeader& h, const std::string& literal,
                                   const std::string& language,
                                   const std::optional<PluralForms>& forms, bool plurals) {
        const std::string fields = output_header(h.fields, language, forms, plurals);
        if (fields == h.fields) return literal;
        std::string msgstr = format_keyword("msgstr", fields, h.eol);
        if (!h.last_eol) msgstr.resize(msgstr.size() - h.eol.size());
        return h.before + msgstr + h.after;
    }

    static void add_entry(Document& doc, PoState& state, const std::vector<Line>& lines,
                          std::size_t begin, std::size_t end, const std::vector<Item>& items,
                          const QString& path) {
        auto text_of = [&](std::size_t from, std::size_t to) {
            std::string s;
            for (std::size_t k = from; k < to; ++k)
                s += std::string(lines[k].content) + std::string(lines[k].eol);
            return s;
        };
        const Item *msgid = nullptr, *plural = nullptr, *ctxt = nullptr;
        std::vector<const Item*> msgstrs;
        for (const Item& it : items) {
            if (it.keyword == "msgid") msgid = &it;
            if (it.keyword == "msgid_plural") plural = &it;
            if (it.keyword == "msgctxt") ctxt = &it;
            if (it.keyword.starts_with("msgstr")) msgstrs.push_back(&it);
        }
        const bool has_keyword = std::any_of(items.begin(), items.end(),
                                             [](const Item& it) { return !it.keyword.empty(); });
        if (has_keyword && (!msgid || msgstrs.empty()))
            fail_at(path, begin + 1, msgid ? "entry without msgstr" : "entry without msgid");
        const bool untranslated =
            has_keyword && std::all_of(msgstrs.begin(), msgstrs.end(),
                                       [](const Item* s) { return s->value.empty(); });
        const bool header = msgid && msgid->value.empty() && !ctxt;
        if (header && msgstrs.size() == 1 && msgstrs[0]->keyword == "msgstr" &&
            state.header.entry == std::string::npos) {
            const Item& s = *msgstrs[0];
            PoHeader& h = state.header;
            h.entry = state.entries.size();
            h.before = text_of(begin, s.first);
            h.fields = s.value;
            h.eol = lines[s.first].eol.empty() ? "\n" : std::string(lines[s.first].eol);
            h.last_eol = !lines[s.last].eol.empty();
            h.after = text_of(s.last + 1, end);
        }
        if (!untranslated && plural && !header) state.translated_plurals = true;
        if (!untranslated || header || is_blank(msgid->value)) {
            state.entries.push_back(literal_entry(text_of(begin, end)));
            return;
        }
        PoEntry e;
        e.translate = true;
        // The flags line, or the place a new one goes: before "#|" lines and the keywords.
        std::size_t flags_at = end, flags_idx = end;
        for (const Item& it : items) {
            const std::string_view l = trim_left(lines[it.first].content);
            if (it.keyword.empty() && l.starts_with("#,")) {
                flags_idx = it.first;
                break;
            }
        }
        for (const Item& it : items) {
            const std::string_view l = trim_left(lines[it.first].content);
            if (!it.keyword.empty() || l.starts_with("#|")) {
                flags_at = it.first;
                break;
            }
        }
        const std::size_t first_str = msgstrs.front()->first;
        if (flags_idx < end) {
            e.literal = text_of(begin, flags_idx);
            e.flags_line = std::string(lines[flags_idx].content);
            e.flags_eol = std::string(lines[flags_idx].eol);
            e.body = text_of(flags_idx + 1, first_str);
        } else {
            e.literal = text_of(begin, flags_at);
            e.flags_eol = lines[begin].eol.empty() ? "\n" : std::string(lines[begin].eol);
            e.body = text_of(flags_at, first_str);
        }
        auto segment_of = [&](const std::string& value, MsgstrSlot& slot) {
            const std::size_t b = value.find_first_not_of(" \t\r\n");
            const std::size_t last = value.find_last_not_of(" \t\r\n");
            slot.prefix = value.substr(0, b);
            slot.suffix = value.substr(last + 1);
            doc.add_literal("");
            slot.segment = doc.add_segment(value.substr(b, last + 1 - b));
        };
        int singular = -1, plural_seg = -1;
        std::size_t tail_from = first_str;
        for (const Item* s : msgstrs) {
            MsgstrSlot slot;
            slot.keyword = s->keyword;
            slot.eol = std::string(lines[s->last].eol);
            const bool use_plural = plural && s->keyword != "msgstr" && s->keyword != "msgstr[0]";
            const std::string& source = use_plural ? plural->value : msgid->value;
            int& cached = use_plural ? plural_seg : singular;
            if (cached < 0) {
                segment_of(source, slot);
                cached = slot.segment;
            } else {
                const std::size_t b = source.find_first_not_of(" \t\r\n");
                const std::size_t last = source.find_last_not_of(" \t\r\n");
                slot.prefix = source.substr(0, b);
                slot.suffix = source.substr(last + 1);
                slot.segment = cached;
            }
            e.targets.push_back(std::move(slot));
            tail_from = s->last + 1;
        }
        // A last msgstr line without a line end: keep it that way; others need "\n".
        for (std::size_t k = 0; k + 1 < e.targets.size(); ++k)
            if (e.targets[k].eol.empty()) e.targets[k].eol = "\n";
        e.tail = text_of(tail_from, end);
        state.entries.push_back(std::move(e));
    }
};

}  // namespace

const DocumentFormat& po_format() {
    static const PoFormat f;
    return f;
}

}  // namespace mtdesk::app::documents
