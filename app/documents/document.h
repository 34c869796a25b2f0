#pragma once
// Documents for translation, independent of their file format.
//
// A Document is a list of segments (the text to translate, UTF-8, one sentence or line each)
// and a skeleton: the file cut into literal pieces and numbered slots, one slot per segment.
// Reading a file gives a Document; translating each segment independently (1:1 by index, so
// segments can be batched in any order) and writing puts every translation into its slot and
// leaves everything else (markup, timings, code, msgids, blank lines, line ends) byte for byte
// as it was. write(read(x), segments) == x for every format: that is what the tests check.
// The exceptions by nature: .po and .ts fill their empty translations (with the source text,
// then), .docx is a new zip archive with the same members, a legacy-encoded file is written as
// UTF-8, and a PDF's translation is plain text. Formats whose markup the model should see
// (HTML inline tags, Word runs) give segments with format tags (documents/tagged.h).

#include <QByteArray>
#include <QString>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mtdesk/error.h"

namespace mtdesk::app::documents {

/// One piece of the skeleton: literal text, or the slot of segment `segment`.
struct Piece {
    std::string literal;  ///< used when segment < 0
    int segment = -1;
};

/// Per-format data a format needs to write the document back (beyond the skeleton).
struct FormatState {
    virtual ~FormatState() = default;
};

/// The most segments a document may have. A million sentences is far more than anyone
/// translates at once; the limit keeps a crafted file from taking all memory.
inline constexpr std::size_t kMaxSegments = 1'000'000;

struct Document {
    std::vector<std::string> segments;  ///< source text of each segment, UTF-8, trimmed
    std::vector<Piece> skeleton;
    std::shared_ptr<const FormatState> state;  ///< set by formats that need more than the skeleton
    /// Segments whose text carries HY-MT1.5 format tags ("Click <s1>here</s1> now", see
    /// documents/tagged.h): 1:1 with `segments`, or shorter (missing entries are false). The
    /// translation of such a segment must have the same tags in the same order.
    std::vector<bool> tagged;
    /// Code of the translation's language ("de", "zh-Hant"), set by the caller before writing;
    /// formats that record a document's language (.ts, HTML lang) write it. "" keeps theirs.
    std::string target_language;

    /// Whether segment `index` carries format tags.
    bool is_tagged(std::size_t index) const { return index < tagged.size() && tagged[index]; }
    /// Marks segment `index` as carrying format tags.
    void set_tagged(std::size_t index);

    /// Adds literal text (merged with a preceding literal).
    void add_literal(std::string_view text);
    /// Adds a segment slot for `text`. Returns its index. Throws mtdesk::Error when the
    /// document has kMaxSegments already.
    int add_segment(std::string text);
    /// Adds `text` as one segment with its leading and trailing whitespace kept literal; text
    /// that is blank (or, with `need_letter`, has no letter at all) stays literal.
    void add_trimmed(std::string_view text, bool need_letter = false);
    /// Adds one line of running text: code spans (`x`), URLs, link brackets and targets ("[",
    /// "![", "](url)") and HTML tags stay literal; the text between them becomes segments (see
    /// add_trimmed). Emphasis markers (**, _) stay inside the segment, as the model sees them.
    void add_inline(std::string_view text);
};

/// Throws mtdesk::Error when `doc` has kMaxSegments segments already: formats that add
/// segments themselves (not with Document::add_segment) call it first.
void check_segment_limit(const Document& doc);

/// Throws mtdesk::Error when `translations` does not have one entry per segment of `doc`.
void check_translation_count(const Document& doc, const std::vector<std::string>& translations);

/// Puts `translations` (one per segment) into the skeleton. A translation of a segment that had
/// no line break has its line breaks replaced by spaces, so line structure cannot change.
/// Throws mtdesk::Error when the number of translations differs from the number of segments.
std::string assemble(const Document& doc, const std::vector<std::string>& translations);

/// For a format's write(): checks that there is one translation per segment and that `doc`
/// carries this format's state, and returns it. Throws mtdesk::Error naming `kind` ("a PO
/// document") otherwise.
template <typename State>
const State& checked_state(const Document& doc, const std::vector<std::string>& translations,
                           const char* kind) {
    check_translation_count(doc, translations);
    const auto* state = dynamic_cast<const State*>(doc.state.get());
    if (!state) throw Error(std::string("not ") + kind);
    return *state;
}

class DocumentFormat {
  public:
    virtual ~DocumentFormat() = default;
    /// Lower-case extensions without the dot ("srt").
    virtual std::vector<std::string> extensions() const = 0;
    /// Parses a file's content. Throws mtdesk::FileError naming `path` when it is malformed or
    /// cannot be decoded.
    virtual Document read(const QByteArray& bytes, const QString& path) const = 0;
    /// The translated file, UTF-8. Default: assemble().
    virtual QByteArray write(const Document& doc,
                             const std::vector<std::string>& translations) const;
    /// The largest file read_document() reads in this format, in bytes: what it takes in memory
    /// while it is translated is several times its size. Default: 256 MiB.
    virtual qint64 max_file_size() const { return qint64{256} << 20; }
    /// Extension of the translated file (without the dot) when it differs from the source's:
    /// "txt" for text taken out of a PDF. Default: "" (same as the source).
    virtual std::string output_extension() const { return {}; }
    /// How many entries write() marks for review instead of translating them (PO: "fuzzy",
    /// with the source kept, for an empty translation or changed placeholders), so that the
    /// caller can say so. Default: 0 (formats without such a mark; check_placeholders()
    /// finds their doubtful segments).
    virtual std::size_t entries_marked_for_review(
        const Document& doc, const std::vector<std::string>& translations) const {
        (void)doc;
        (void)translations;
        return 0;
    }
};

/// The format for `path`'s extension (case-insensitive), or nullptr.
const DocumentFormat* find_format(const QString& path);
/// Same, but throws mtdesk::FileError naming the file for an unknown extension.
const DocumentFormat& format_for(const QString& path);
/// Every registered extension ("txt", "md", ...).
std::vector<std::string> supported_extensions();

/// The start of `doc`'s text that its language is detected from: its segments, one per line,
/// until at least 16 KiB (all of them when shorter).
std::string detection_sample(const Document& doc);

/// Reads and parses a file. Throws mtdesk::FileError naming it, also when it is larger than
/// its format's max_file_size() or has more than kMaxSegments segments.
Document read_document(const QString& path, const DocumentFormat** format = nullptr);

/// Translates every segment with `translate` (called once per segment, in order, and once per
/// text run for a tagged segment); `progress`
/// (optional) gets (done, total) after each. Returns the translations, 1:1 with doc.segments.
/// A tagged segment (Document::is_tagged) is translated run by run: each text between its tags
/// on its own, the tags kept, so the markup cannot break.
std::vector<std::string> translate_segments(
    const Document& doc, const std::function<std::string(const std::string&)>& translate,
    const std::function<void(std::size_t, std::size_t)>& progress = {});

/// Translates one segment; `formatted` is true for a tagged segment, which is to be translated
/// with HY-MT1.5's formatted-translation prompt (PromptRequest::formatted).
using FormattedTranslate = std::function<std::string(const std::string& text, bool formatted)>;

/// Same, for a translator that keeps format tags: a tagged segment is translated whole with
/// `formatted` true; when the result lost, added or reordered a tag (or echoes the prompt, see
/// usable_formatted()), it is translated again run by run (with `formatted` false), so a
/// segment never loses or reorders markup. With `formatted_prompt` false (a model not trained
/// with that prompt), tagged segments go run by run at once.
std::vector<std::string> translate_segments(
    const Document& doc, const FormattedTranslate& translate,
    const std::function<void(std::size_t, std::size_t)>& progress = {},
    bool formatted_prompt = true);

/// Decoded text of a file: UTF-8, without byte-order mark.
struct DecodedText {
    std::string text;
    bool had_bom = false;
    std::string encoding;  ///< e.g. "UTF-8", "WINDOWS-1252", "GB18030"
};

/// Decodes text in any encoding: a byte-order mark decides when present, otherwise valid UTF-8
/// is UTF-8 and anything else is detected with uchardet and converted with QStringDecoder
/// (ICU). Throws mtdesk::FileError naming `path` when the content is binary or undecodable.
DecodedText decode_text(const QByteArray& bytes, const QString& path);

/// Lines of `text`, each with its line end ("\n", "\r\n", "\r", or "" for the last line).
struct Line {
    std::string_view content;
    std::string_view eol;
};
std::vector<Line> split_lines(std::string_view text);

}  // namespace mtdesk::app::documents
