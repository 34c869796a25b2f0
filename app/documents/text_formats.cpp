// Line-based formats: plain text, Markdown, SubRip (.srt) and WebVTT (.vtt).
//
// Every format keeps the line structure: a segment never spans lines, so the translated file
// has the same lines as the source, and the text of each line is translated on its own.
//
// Markdown choices: one segment per line of text (not per paragraph), so line breaks inside a
// paragraph stay where they were. Kept literal: YAML front matter, fenced code (``` and ~~~),
// indented code (4 spaces or a tab after a blank line; this also catches list continuation
// paragraphs indented that far, which then stay untranslated), HTML comments, reference link
// definitions, the block prefix (indentation, '>', '#', list markers, task boxes), table pipes,
// and inside a line: code spans, URLs, link brackets and targets, HTML tags and <br>. Emphasis
// markers (**, _, ~~) stay inside the segment: the model sees them and usually keeps them,
// which translates "a **bold** word" as one sentence instead of three fragments.

#include "documents/formats.h"
#include "documents/pattern.h"

namespace mtdesk::app::documents {
namespace {

bool is_blank(std::string_view s) {
    return s.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}

Document start_document(const QByteArray& bytes, const QString& path, std::string& text) {
    DecodedText decoded = decode_text(bytes, path);
    text = std::move(decoded.text);
    Document doc;
    if (decoded.had_bom) doc.add_literal("\xEF\xBB\xBF");  // output is UTF-8; keep the mark
    return doc;
}

// ---- .txt: every non-blank line is a segment; whitespace, blank lines and line ends kept.

class TextFormat : public DocumentFormat {
  public:
    std::vector<std::string> extensions() const override { return {"txt", "text"}; }
    Document read(const QByteArray& bytes, const QString& path) const override {
        std::string text;
        Document doc = start_document(bytes, path, text);
        for (const Line& l : split_lines(text)) {
            doc.add_trimmed(l.content);
            doc.add_literal(l.eol);
        }
        return doc;
    }
};

// ---- .md

// Length of the fence ("```", "~~~~", ...) that `line` opens or closes, or 0.
std::size_t fence_length(std::string_view line, char& ch) {
    std::size_t i = 0;
    while (i < line.size() && i < 3 && line[i] == ' ')
        ++i;
    if (i >= line.size() || (line[i] != '`' && line[i] != '~')) return 0;
    const char c = line[i];
    std::size_t n = 0;
    while (i + n < line.size() && line[i + n] == c)
        ++n;
    if (n < 3) return 0;
    ch = c;
    return n;
}

// Block prefix kept outside the segment: indentation, blockquote '>', heading '#', list
// markers ("-", "*", "+", "1.", "1)") and task boxes ("[ ]").
std::size_t block_prefix(std::string_view line) {
    // Possessive (*+): a long run of '>' keeps no backtracking state.
    static const Pattern re(
        R"(^[ \t]*+(?:>[ \t]?+)*+[ \t]*+(?:#{1,6}[ \t]+|[-*+][ \t]+|\d{1,9}[.)][ \t]+)?(?:\[[ xX]\][ \t]+)?)");
    const std::optional<PatternMatch> m = re.search(line);
    return m ? m->length(0) : 0;
}

class MarkdownFormat : public DocumentFormat {
  public:
    std::vector<std::string> extensions() const override { return {"md", "markdown"}; }
    Document read(const QByteArray& bytes, const QString& path) const override {
        std::string text;
        Document doc = start_document(bytes, path, text);
        static const Pattern link_definition(R"( {0,3}\[[^\]]+\]:[ \t].*)");
        static const Pattern front_matter_end(R"((---|\.\.\.)[ \t]*)");
        const std::vector<Line> lines = split_lines(text);
        char fence_char = 0;
        std::size_t fence_len = 0;  // > 0: inside a fenced code block
        bool in_comment = false, prev_blank = true, prev_code = false, in_front_matter = false;
        for (std::size_t n = 0; n < lines.size(); ++n) {
            const std::string_view line = lines[n].content;
            bool literal = false, code = false;
            if (n == 0 && line == "---") {
                in_front_matter = true;
                literal = true;
            } else if (in_front_matter) {
                literal = true;
                if (front_matter_end.matches(line)) in_front_matter = false;
            } else if (fence_len > 0) {
                literal = true;
                char c = 0;
                const std::size_t len = fence_length(line, c);
                if (len >= fence_len && c == fence_char &&
                    is_blank(line.substr(line.find(c) + len)))
                    fence_len = 0;
            } else if (in_comment) {
                literal = true;
                if (line.find("-->") != std::string_view::npos) in_comment = false;
            } else if (char c = 0; std::size_t len = fence_length(line, c)) {
                literal = true;
                fence_char = c;
                fence_len = len;
            } else if (!is_blank(line) && (prev_blank || prev_code) &&
                       (line.starts_with("    ") || line.starts_with("\t"))) {
                literal = code = true;  // indented code block
            } else if (line.find("<!--") != std::string_view::npos &&
                       line.find("-->", line.find("<!--")) == std::string_view::npos) {
                literal = true;
                in_comment = true;
            } else if (link_definition.matches(line)) {
                literal = true;
            }
            if (literal) {
                doc.add_literal(line);
            } else {
                const std::size_t prefix = block_prefix(line);
                doc.add_literal(line.substr(0, prefix));
                std::string_view rest = line.substr(prefix);
                if (rest.find('|') != std::string_view::npos &&
                    (rest.starts_with('|') || rest.find(" | ") != std::string_view::npos)) {
                    // Table row: each cell separately, pipes kept.
                    std::size_t start = 0;
                    for (std::size_t i = 0; i <= rest.size(); ++i) {
                        if (i < rest.size() && (rest[i] != '|' || (i > 0 && rest[i - 1] == '\\')))
                            continue;
                        doc.add_inline(rest.substr(start, i - start));
                        if (i < rest.size()) doc.add_literal("|");
                        start = i + 1;
                    }
                } else {
                    doc.add_inline(rest);
                }
            }
            doc.add_literal(lines[n].eol);
            prev_blank = is_blank(line);
            prev_code = code || (prev_code && prev_blank);
        }
        return doc;
    }
};

// ---- subtitles

// A cue timing line's minutes and seconds (groups 1 to 4 of `m`) go up to 59. An end before
// the start is left alone: real files have that.
void check_minutes_and_seconds(const PatternMatch& m, std::string_view line, const QString& path,
                               std::size_t line_no) {
    for (int g = 1; g <= 4; ++g)
        if (std::stoi(std::string(m.str(g))) >= 60)
            fail_at(path, line_no,
                    "malformed cue timing '" + std::string(line) +
                        "': minutes and seconds go up to 59");
}

// Whether `line` was meant as a cue timing: it starts with a time ("00:00:01,000 -> ..." with
// a broken arrow is a malformed timing, not cue text).
bool timing_like(std::string_view line) {
    static const Pattern time(R"([ \t]*\d+:\d.*)");
    return time.matches(line);
}

// A line of WebVTT cue text: its timestamp tags ("<00:00:08.000>", karaoke timing) stay
// literal, like its other tags; the text between them goes to add_inline().
void add_vtt_cue_line(Document& doc, std::string_view line) {
    static const Pattern timestamp(R"(<(?:\d+:)?\d{2}:\d{2}\.\d{3}>)");
    std::size_t at = 0;
    for (const PatternMatch& m : timestamp.find_all(line)) {
        doc.add_inline(line.substr(at, m.position(0) - at));
        doc.add_literal(m.str(0));
        at = m.position(0) + m.length(0);
    }
    doc.add_inline(line.substr(at));
}

// Cue text lines: one segment per line (markup tags kept), up to the next blank line.
std::size_t add_cue_text(Document& doc, const std::vector<Line>& lines, std::size_t i,
                         bool vtt = false) {
    while (i < lines.size() && !is_blank(lines[i].content)) {
        if (vtt)
            add_vtt_cue_line(doc, lines[i].content);
        else
            doc.add_inline(lines[i].content);
        doc.add_literal(lines[i].eol);
        ++i;
    }
    return i;
}

class SrtFormat : public DocumentFormat {
  public:
    std::vector<std::string> extensions() const override { return {"srt"}; }
    Document read(const QByteArray& bytes, const QString& path) const override {
        static const Pattern index(R"([ \t]*\d+[ \t]*)");
        // Minutes and seconds of the start and the end in groups 1 to 4; milliseconds have
        // three digits at most.
        static const Pattern timing(R"([ \t]*\d+:(\d{2}):(\d{2})[,.]\d{1,3}[ \t]+-->)"
                                    R"([ \t]+\d+:(\d{2}):(\d{2})[,.]\d{1,3}([ \t].*)?)");
        std::string text;
        Document doc = start_document(bytes, path, text);
        const std::vector<Line> lines = split_lines(text);
        bool any_cue = false;
        std::size_t i = 0;
        while (i < lines.size()) {
            const std::string_view line = lines[i].content;
            if (is_blank(line)) {
                doc.add_literal(line);
                doc.add_literal(lines[i].eol);
                ++i;
                continue;
            }
            const bool is_index = index.matches(line);
            const std::size_t t = is_index ? i + 1 : i;
            const bool has_arrow =
                t < lines.size() && (lines[t].content.find("-->") != std::string_view::npos ||
                                     (is_index && timing_like(lines[t].content)));
            if (has_arrow || is_index) {
                const std::optional<PatternMatch> m =
                    t < lines.size() ? timing.match(lines[t].content) : std::nullopt;
                if (!m)
                    fail_at(path, t + 1,
                            has_arrow
                                ? "malformed cue timing '" + std::string(lines[t].content) + "'"
                                : "cue " + std::string(line) + " has no timing line");
                check_minutes_and_seconds(*m, lines[t].content, path, t + 1);
                for (std::size_t k = i; k <= t; ++k) {
                    doc.add_literal(lines[k].content);
                    doc.add_literal(lines[k].eol);
                }
                any_cue = true;
                i = add_cue_text(doc, lines, t + 1);
            } else if (any_cue) {
                i = add_cue_text(doc, lines, i);  // cue text after a blank line inside a cue
            } else {
                fail_at(path, i + 1,
                        "expected a cue number or timing, found '" + std::string(line) + "'");
            }
        }
        return doc;
    }
};

class VttFormat : public DocumentFormat {
  public:
    std::vector<std::string> extensions() const override { return {"vtt"}; }
    Document read(const QByteArray& bytes, const QString& path) const override {
        // Minutes and seconds of the start and the end in groups 1 to 4 (hours are optional).
        static const Pattern timing(R"([ \t]*(?:\d+:)?(\d{2}):(\d{2})\.\d{3}[ \t]+-->)"
                                    R"([ \t]+(?:\d+:)?(\d{2}):(\d{2})\.\d{3}([ \t].*)?)");
        static const Pattern special(R"((NOTE|STYLE|REGION)([ \t].*)?)");
        std::string text;
        Document doc = start_document(bytes, path, text);
        const std::vector<Line> lines = split_lines(text);
        if (lines.empty() || !lines[0].content.starts_with("WEBVTT") ||
            (lines[0].content.size() > 6 && lines[0].content[6] != ' ' &&
             lines[0].content[6] != '\t'))
            fail_at(path, 1, "a WebVTT file must start with 'WEBVTT'");
        auto literal_block = [&](std::size_t i) {
            while (i < lines.size() && !is_blank(lines[i].content)) {
                doc.add_literal(lines[i].content);
                doc.add_literal(lines[i].eol);
                ++i;
            }
            return i;
        };
        std::size_t i = literal_block(0);  // header
        while (i < lines.size()) {
            const std::string_view line = lines[i].content;
            if (is_blank(line)) {
                doc.add_literal(line);
                doc.add_literal(lines[i].eol);
                ++i;
                continue;
            }
            if (special.matches(line)) {
                i = literal_block(i);
                continue;
            }
            // The timing, or a cue identifier and then the timing. A line that starts with a time
            // and is not followed by a timing is a timing, malformed.
            const bool next_has_arrow =
                i + 1 < lines.size() && lines[i + 1].content.find("-->") != std::string_view::npos;
            const bool arrow_here = line.find("-->") != std::string_view::npos ||
                                    (!next_has_arrow && timing_like(line));
            const std::size_t t = arrow_here ? i : i + 1;
            const std::optional<PatternMatch> m =
                t < lines.size() ? timing.match(lines[t].content) : std::nullopt;
            if (!m)
                fail_at(path, t + 1,
                        t < lines.size()
                            ? "malformed cue timing '" + std::string(lines[t].content) + "'"
                            : "cue '" + std::string(line) + "' has no timing line");
            check_minutes_and_seconds(*m, lines[t].content, path, t + 1);
            for (std::size_t k = i; k <= t; ++k) {
                doc.add_literal(lines[k].content);
                doc.add_literal(lines[k].eol);
            }
            i = add_cue_text(doc, lines, t + 1, true);
        }
        return doc;
    }
};

}  // namespace

const DocumentFormat& text_format() {
    static const TextFormat f;
    return f;
}
const DocumentFormat& markdown_format() {
    static const MarkdownFormat f;
    return f;
}
const DocumentFormat& srt_format() {
    static const SrtFormat f;
    return f;
}
const DocumentFormat& vtt_format() {
    static const VttFormat f;
    return f;
}

}  // namespace mtdesk::app::documents
