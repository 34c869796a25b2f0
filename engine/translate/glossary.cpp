#include "mtdesk/translate/glossary.h"

#include <unicode/utf8.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <optional>
#include <system_error>

#include "mtdesk/error.h"
#include "mtdesk/translate/languages.h"
#include "translate/term_search.h"

namespace mtdesk {
namespace {

enum class Column { SourceLang, TargetLang, Source, Target };

struct Record {
    std::size_t line = 0;  // where the record starts (1-based)
    std::vector<std::string> cells;
};

std::string lower_ascii(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string_view trim(std::string_view s) {
    const char* ws = " \t\r\n";
    const auto b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string column_count(std::size_t n) {
    return std::to_string(n) + (n == 1 ? " column" : " columns");
}

[[noreturn]] void fail(const std::string& file, std::size_t line, const std::string& problem) {
    throw FileError(file, "line " + std::to_string(line) + ": " + problem);
}

// Encoding problems are reported before any parsing, with the line they are on.
void check_encoding(std::string_view text, const std::string& file) {
    const auto* s = reinterpret_cast<const uint8_t*>(text.data());
    const auto n = static_cast<int32_t>(text.size());
    std::size_t line = 1;
    for (int32_t i = 0; i < n;) {
        const int32_t at = i;
        UChar32 c;
        U8_NEXT(s, i, n, c);
        if (c < 0)
            fail(file, line,
                 "not valid UTF-8 (byte " + std::to_string(at + 1) +
                     "); save the glossary as UTF-8");
        if (c == 0) fail(file, line, "contains NUL bytes: not a text file");
        if (c == '\n') ++line;
    }
}

// Splits delimiter-separated text into records, RFC 4180 style: quoted fields may hold the
// delimiter, line breaks and doubled quotes; a quote inside an unquoted field is kept as is.
std::vector<Record> split_records(std::string_view text, char delim, const std::string& file) {
    std::vector<Record> records;
    std::size_t pos = 0, line = 1;
    const std::size_t n = text.size();
    auto at_line_end = [&](std::size_t p) { return text[p] == '\n' || text[p] == '\r'; };
    auto skip_line_end = [&] {
        if (pos < n && text[pos] == '\r') ++pos;
        if (pos < n && text[pos] == '\n') ++pos;
        ++line;
    };
    while (pos < n) {
        Record record;
        record.line = line;
        for (;;) {
            std::string field;
            std::size_t p = pos;
            while (p < n && text[p] == ' ')
                ++p;
            if (p < n && text[p] == '"') {
                const std::size_t opened = line;
                pos = p + 1;
                for (;;) {
                    if (pos >= n)
                        fail(file, opened,
                             "a quoted field is never closed (a \" without its closing \")");
                    const char c = text[pos];
                    if (c == '"') {
                        if (pos + 1 < n && text[pos + 1] == '"') {
                            field.push_back('"');
                            pos += 2;
                            continue;
                        }
                        ++pos;
                        break;
                    }
                    if (c == '\n' || (c == '\r' && !(pos + 1 < n && text[pos + 1] == '\n'))) ++line;
                    field.push_back(c);
                    ++pos;
                }
                while (pos < n && (text[pos] == ' ' || (text[pos] == '\t' && delim != '\t')))
                    ++pos;
                if (pos < n && text[pos] != delim && !at_line_end(pos))
                    fail(file, line,
                         "text after the closing quote of a field (write a quote inside a "
                         "quoted field as \"\")");
            } else {
                while (pos < n && text[pos] != delim && !at_line_end(pos))
                    field.push_back(text[pos++]);
            }
            record.cells.emplace_back(trim(field));
            if (pos < n && text[pos] == delim) {
                ++pos;
                continue;
            }
            if (pos < n) skip_line_end();
            break;
        }
        const bool blank = std::all_of(record.cells.begin(), record.cells.end(),
                                       [](const std::string& c) { return c.empty(); });
        if (!blank) records.push_back(std::move(record));
    }
    return records;
}

std::optional<Column> column_named(std::string_view cell) {
    std::string name = lower_ascii(cell);
    std::replace(name.begin(), name.end(), ' ', '_');
    std::replace(name.begin(), name.end(), '-', '_');
    static const std::pair<std::string_view, Column> kNames[] = {
        {"src_lang", Column::SourceLang},
        {"source_lang", Column::SourceLang},
        {"source_language", Column::SourceLang},
        {"src_language", Column::SourceLang},
        {"tgt_lang", Column::TargetLang},
        {"trg_lang", Column::TargetLang},
        {"target_lang", Column::TargetLang},
        {"target_language", Column::TargetLang},
        {"tgt_language", Column::TargetLang},
        {"source", Column::Source},
        {"source_term", Column::Source},
        {"src_term", Column::Source},
        {"term", Column::Source},
        {"target", Column::Target},
        {"target_term", Column::Target},
        {"tgt_term", Column::Target},
        {"translation", Column::Target},
    };
    for (const auto& [n, c] : kNames)
        if (name == n) return c;
    return std::nullopt;
}

// The header's columns when `cells` is one: every cell a known name, none twice, both terms.
std::optional<std::vector<Column>> header_columns(const std::vector<std::string>& cells) {
    std::vector<Column> columns;
    for (const std::string& cell : cells) {
        const auto c = column_named(cell);
        if (!c || std::find(columns.begin(), columns.end(), *c) != columns.end())
            return std::nullopt;
        columns.push_back(*c);
    }
    const auto has = [&](Column c) {
        return std::find(columns.begin(), columns.end(), c) != columns.end();
    };
    if (!has(Column::Source) || !has(Column::Target)) return std::nullopt;
    return columns;
}

std::string canonical_language(std::string_view code_or_name) {
    if (code_or_name.empty()) return {};
    const Language* l = find_language(code_or_name);
    return l ? std::string(l->code) : std::string(code_or_name);
}

bool language_fits(const std::string& term_lang, const std::string& wanted) {
    return term_lang.empty() || wanted.empty() ||
           lower_ascii(canonical_language(term_lang)) == lower_ascii(wanted);
}

bool same_entry(const GlossaryEntry& a, const GlossaryEntry& b) {
    return a.target == b.target && detail::case_fold(a.source) == detail::case_fold(b.source);
}

void add_unique(std::vector<GlossaryEntry>& out, GlossaryEntry e) {
    if (std::none_of(out.begin(), out.end(),
                     [&](const GlossaryEntry& x) { return same_entry(x, e); }))
        out.push_back(std::move(e));
}

std::string quoted(std::string_view cell, char delim) {
    const bool needs =
        cell.find_first_of(std::string{delim, '"', '\n', '\r'}) != std::string_view::npos;
    if (!needs) return std::string(cell);
    std::string out = "\"";
    for (char c : cell) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
    return out;
}

}  // namespace

GlossaryFormat glossary_format_for(const std::filesystem::path& file) {
    const std::string ext = lower_ascii(file.extension().string());
    if (ext == ".csv") return GlossaryFormat::Csv;
    if (ext == ".tsv" || ext == ".tab") return GlossaryFormat::Tsv;
    return GlossaryFormat::Auto;
}

Glossary Glossary::parse(std::string_view text, GlossaryFormat format, const std::string& file,
                         const GlossaryDefaults& defaults) {
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    if (text.starts_with("\xFF\xFE") || text.starts_with("\xFE\xFF") ||
        text.starts_with(std::string_view("\0\0\xFE\xFF", 4)))
        throw FileError(file, "UTF-16 or UTF-32 text; save the glossary as UTF-8");
    check_encoding(text, file);

    if (format == GlossaryFormat::Auto) {
        const auto first = text.find_first_not_of(" \r\n");
        const auto eol = first == std::string_view::npos ? first : text.find('\n', first);
        const std::string_view first_line =
            first == std::string_view::npos ? std::string_view{} : text.substr(first, eol - first);
        format = first_line.find('\t') != std::string_view::npos ? GlossaryFormat::Tsv
                                                                 : GlossaryFormat::Csv;
    }
    const char delim = format == GlossaryFormat::Csv ? ',' : '\t';

    auto default_language = [](const std::string& value, const char* what) {
        if (value.empty()) return std::string();
        const Language* l = find_language(value);
        if (!l) throw Error(std::string("glossary: unknown ") + what + " language '" + value + "'");
        return std::string(l->code);
    };
    const std::string default_source = default_language(defaults.source_lang, "source");
    const std::string default_target = default_language(defaults.target_lang, "target");

    Glossary glossary;
    std::vector<Record> records = split_records(text, delim, file);
    std::optional<std::vector<Column>> header;
    std::size_t header_line = 0;
    if (!records.empty()) {
        header = header_columns(records.front().cells);
        if (header) header_line = records.front().line;
    }
    for (std::size_t r = header ? 1 : 0; r < records.size(); ++r) {
        Record& rec = records[r];
        std::vector<std::string>& cells = rec.cells;
        std::vector<Column> columns;
        if (header) {
            // Spreadsheets often add empty columns on the right.
            while (cells.size() > header->size() && cells.back().empty())
                cells.pop_back();
            if (cells.size() != header->size())
                fail(file, rec.line,
                     column_count(cells.size()) + ", but the header on line " +
                         std::to_string(header_line) + " has " + std::to_string(header->size()));
            columns = *header;
        } else {
            // Spreadsheets often add empty columns on the right; three cells left of four or
            // more are a four-column row without its target term.
            const std::size_t given = cells.size();
            while (cells.size() > 2 && cells.back().empty())
                cells.pop_back();
            if (cells.size() == 3 && given >= 4) cells.resize(4);
            if (cells.size() == 2)
                columns = {Column::Source, Column::Target};
            else if (cells.size() == 4)
                columns = {Column::SourceLang, Column::TargetLang, Column::Source, Column::Target};
            else
                fail(file, rec.line,
                     column_count(cells.size()) +
                         "; a glossary row has 2 (source, target) or 4 (src_lang, "
                         "tgt_lang, source, target)");
        }
        GlossaryTerm term{default_source, default_target, {}, {}};
        for (std::size_t i = 0; i < columns.size(); ++i) {
            const std::string& cell = cells[i];
            switch (columns[i]) {
                case Column::SourceLang:
                case Column::TargetLang: {
                    if (cell.empty()) break;
                    const Language* l = find_language(cell);
                    const bool src = columns[i] == Column::SourceLang;
                    if (!l)
                        fail(file, rec.line,
                             "unknown " + std::string(src ? "source" : "target") + " language '" +
                                 cell + "'");
                    (src ? term.source_lang : term.target_lang) = std::string(l->code);
                    break;
                }
                case Column::Source:
                    term.source = cell;
                    break;
                case Column::Target:
                    term.target = cell;
                    break;
            }
        }
        for (const auto& [value, what] :
             {std::pair{&term.source, "source"}, std::pair{&term.target, "target"}}) {
            if (value->empty()) fail(file, rec.line, std::string("empty ") + what + " term");
            // The terminology prompt has one "term 翻译成 translation" per line.
            if (value->find_first_of("\t\r\n") != std::string::npos)
                fail(file, rec.line,
                     std::string("the ") + what + " term contains a tab or a line break");
        }
        glossary.terms.push_back(std::move(term));
    }
    return glossary;
}

Glossary Glossary::read(const std::filesystem::path& file, const GlossaryDefaults& defaults) {
    const std::string name = file.string();
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) throw FileError(name, "is a directory");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw FileError(name, "cannot be opened (missing or not readable)");
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (in.bad()) throw FileError(name, "read error");
    return parse(text, glossary_format_for(file), name, defaults);
}

std::string Glossary::write(GlossaryFormat format) const {
    const char delim = format == GlossaryFormat::Csv ? ',' : '\t';
    std::string out;
    auto row = [&](std::initializer_list<std::string_view> cells) {
        bool first = true;
        for (std::string_view c : cells) {
            if (!first) out.push_back(delim);
            first = false;
            out += quoted(c, delim);
        }
        out.push_back('\n');
    };
    row({"src_lang", "tgt_lang", "source", "target"});
    for (const GlossaryTerm& t : terms)
        row({t.source_lang, t.target_lang, t.source, t.target});
    return out;
}

std::vector<GlossaryEntry> Glossary::matching_entries(std::string_view source_text,
                                                      std::string_view src_lang,
                                                      std::string_view tgt_lang) const {
    std::vector<GlossaryEntry> out;
    if (terms.empty()) return out;
    const std::string src = lower_ascii(canonical_language(src_lang));
    const std::string tgt = lower_ascii(canonical_language(tgt_lang));
    const detail::FoldedText text(detail::nfc(source_text));
    for (const GlossaryTerm& t : terms) {
        if (!language_fits(t.source_lang, src) || !language_fits(t.target_lang, tgt)) continue;
        if (text.contains(detail::nfc(t.source))) add_unique(out, {t.source, t.target});
    }
    return out;
}

std::vector<GlossaryEntry> Glossary::entries_in(std::string_view text,
                                                const std::vector<GlossaryEntry>& entries) {
    std::vector<GlossaryEntry> out;
    if (entries.empty()) return out;
    const detail::FoldedText folded(detail::nfc(text));
    for (const GlossaryEntry& e : entries)
        if (folded.contains(detail::nfc(e.source))) add_unique(out, e);
    return out;
}

std::vector<GlossaryEntry> Glossary::check(std::string_view translation,
                                           const std::vector<GlossaryEntry>& entries) {
    std::vector<GlossaryEntry> missing;
    if (entries.empty()) return missing;
    const detail::FoldedText folded(detail::nfc(translation));
    for (const GlossaryEntry& e : entries)
        if (!folded.contains(detail::nfc(e.target))) add_unique(missing, e);
    return missing;
}

}  // namespace mtdesk
