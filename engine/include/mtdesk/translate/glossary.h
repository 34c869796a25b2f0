#pragma once
// A user's glossary (terminology): source term -> required target term, per language pair.
// Read from and written to TSV / CSV; the entries whose source term occurs in a segment go
// into HY-MT1.5's terminology prompt (PromptRequest::glossary), and the translation is checked
// for their target terms afterwards.
//
// File format (UTF-8, an optional byte-order mark is skipped), one entry per row:
//     source<TAB>target                                  (language pair given by the caller)
//     src_lang<TAB>tgt_lang<TAB>source<TAB>target
// CSV is the same with commas. Fields may be quoted as in RFC 4180 ("a ""quoted"" term",
// delimiters and line breaks inside quotes); a quote inside an unquoted field is an ordinary
// character. Fields are trimmed of surrounding spaces; blank rows are skipped. A first row
// made only of column names (src_lang, tgt_lang, source, target; also "source language",
// "target_lang", "source term", "target term", "translation", ...) is a header and decides the
// column order. Languages are codes or names as find_language() knows them; an empty language
// cell takes the caller's default, and without one means "any language".

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "mtdesk/translate/prompt.h"

namespace mtdesk {

/// One row of a glossary.
struct GlossaryTerm {
    std::string source_lang;  ///< language code as in languages() ("en"); "" = any
    std::string target_lang;  ///< language code ("zh"); "" = any
    std::string source;       ///< term as it appears in source text (matched case-insensitively)
    std::string target;       ///< its required translation
    bool operator==(const GlossaryTerm&) const = default;
};

enum class GlossaryFormat {
    Tsv,
    Csv,
    Auto,  ///< reading only: TSV when the first non-blank line has a tab, otherwise CSV
};

/// The format a file name stands for: ".csv" -> Csv, ".tsv" / ".tab" -> Tsv, anything else ->
/// Auto (case-insensitive).
GlossaryFormat glossary_format_for(const std::filesystem::path& file);

/// Languages that fill empty or missing language columns while reading.
struct GlossaryDefaults {
    std::string source_lang;  ///< code or name; "" = any
    std::string target_lang;  ///< code or name; "" = any
};

/// An ordered list of glossary terms with reading, writing, matching and checking.
class Glossary {
  public:
    std::vector<GlossaryTerm> terms;

    bool empty() const noexcept { return terms.empty(); }
    bool operator==(const Glossary&) const = default;

    /// Parses glossary text (see the file comment). `file` names the source in errors.
    /// Throws FileError "<file>: line N: <problem>" for a row with the wrong number of
    /// columns, an empty source or target term, a term with a tab or line break, an unknown
    /// language, an unterminated quote, text after a closing quote, or invalid UTF-8; and for
    /// UTF-16 / UTF-32 text (byte-order mark).
    static Glossary parse(std::string_view text, GlossaryFormat format, const std::string& file,
                          const GlossaryDefaults& defaults = {});

    /// Reads and parses a file; the format from glossary_format_for(file). Throws FileError
    /// naming the file when it cannot be read or is malformed.
    static Glossary read(const std::filesystem::path& file, const GlossaryDefaults& defaults = {});

    /// The glossary as text in `format` (Tsv or Csv; Auto writes TSV): a header row
    /// "src_lang, tgt_lang, source, target", then one row per term, quoted where needed so that
    /// parse() gives the same terms back. No byte-order mark; lines end with "\n".
    std::string write(GlossaryFormat format) const;

    /// The terms for translating `source_text` from `src_lang` into `tgt_lang` (codes or names;
    /// "" = unknown, which matches every term's language): those whose language pair fits and
    /// whose source term occurs in the text, case-insensitively, on word boundaries in scripts
    /// written with spaces and as a substring in Chinese, Japanese, Thai and the like. Text and
    /// terms are compared in Unicode NFC. In glossary order, without duplicates.
    std::vector<GlossaryEntry> matching_entries(std::string_view source_text,
                                                std::string_view src_lang,
                                                std::string_view tgt_lang) const;

    /// The entries of `entries` whose source term occurs in `text` (same matching as
    /// matching_entries), without duplicates: narrows a segment's entries to a piece of it.
    static std::vector<GlossaryEntry> entries_in(std::string_view text,
                                                 const std::vector<GlossaryEntry>& entries);

    /// The entries whose target term does not occur in `translation` (same matching:
    /// case-insensitive, word boundaries where the script has spaces), without duplicates.
    static std::vector<GlossaryEntry> check(std::string_view translation,
                                            const std::vector<GlossaryEntry>& entries);
};

}  // namespace mtdesk
