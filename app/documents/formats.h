#pragma once
// The built-in document formats (registered in document.cpp).

#include "documents/document.h"

namespace mtdesk::app::documents {

const DocumentFormat& text_format();      // .txt
const DocumentFormat& markdown_format();  // .md, .markdown
const DocumentFormat& srt_format();       // .srt
const DocumentFormat& vtt_format();       // .vtt
const DocumentFormat& po_format();        // .po, .pot
const DocumentFormat& html_format();      // .html, .htm, .xhtml
const DocumentFormat& docx_format();      // .docx
const DocumentFormat& ts_format();        // .ts (Qt Linguist)
const DocumentFormat& pdf_format();       // .pdf (text out: .txt)

/// Whether `text` has a letter (any script), so that it is worth translating.
bool has_letters(std::string_view text);

/// Throws FileError(path, "line N: what").
[[noreturn]] void fail_at(const QString& path, std::size_t line, const std::string& what);

/// Placeholders a translation of `text` must keep (PO): printf conversions without a position, in
/// order; everything else (%1, %(name)s, {name}, tags, line breaks) sorted.
std::pair<std::vector<std::string>, std::vector<std::string>> po_placeholders(
    const std::string& text);

}  // namespace mtdesk::app::documents
