// PDF: the text of every page (Poppler), joined into paragraphs; the translation is plain text
// (name.<lang>.txt), one paragraph a line with a blank line between paragraphs.
//
// Poppler gives the words of a page in reading order, with the next word of the same line.
// Lines join into a paragraph until the vertical gap to the next line is larger than about
// two thirds of a line, the text goes back up the page (a new column), the font size changes
// (a heading), or a line that ends a sentence stops well short of the paragraph's right edge.
// A word hyphenated across lines is joined ("exam-" + "ple" -> "example") when the next line
// goes on in lower case; lines of Chinese or Japanese join without a space. Lines without a
// letter (page numbers) are kept as they are, untranslated. Layout, images and fonts are not
// kept: this is the text of the PDF, translated.

#include <QRectF>
#include <QVariant>

#include <poppler-qt6.h>

#include <algorithm>
#include <cmath>

#include "documents/formats.h"
#include "mtdesk/error.h"

namespace mtdesk::app::documents {
namespace {

struct Line {
    QString text;
    QRectF box;
};

// Poppler reports problems through this function (by default to qDebug, i.e. stderr); the
// reader turns them into one FileError instead.
void quiet(const QString&, const QVariant&) {}

bool is_cjk(QChar c) {
    const char16_t u = c.unicode();
    return (u >= 0x3040 && u <= 0x30FF) || (u >= 0x3400 && u <= 0x4DBF) ||
           (u >= 0x4E00 && u <= 0x9FFF) || (u >= 0xF900 && u <= 0xFAFF) ||
           (u >= 0xFF00 && u <= 0xFFEF) || (u >= 0x3000 && u <= 0x303F);
}

QString expand_ligatures(QString s) {
    static const std::pair<char16_t, const char*> ligatures[] = {
        {0xFB00, "ff"},  {0xFB01, "fi"}, {0xFB02, "fl"}, {0xFB03, "ffi"},
        {0xFB04, "ffl"}, {0xFB05, "st"}, {0xFB06, "st"}};
    for (const auto& [c, text] : ligatures)
        s.replace(QChar(c), QLatin1String(text));
    return s;
}

std::vector<Line> page_lines(const Poppler::Page& page) {
    std::vector<Line> lines;
    Line current;
    for (const std::unique_ptr<Poppler::TextBox>& word : page.textList()) {
        current.text += expand_ligatures(word->text());
        current.box =
            current.box.isNull() ? word->boundingBox() : current.box.united(word->boundingBox());
        if (word->nextWord()) {
            if (word->hasSpaceAfter()) current.text += QLatin1Char(' ');
            continue;
        }
        current.text = current.text.trimmed();
        if (!current.text.isEmpty()) lines.push_back(current);
        current = Line{};
    }
    if (!current.text.trimmed().isEmpty()) {
        current.text = current.text.trimmed();
        lines.push_back(current);
    }
    return lines;
}

bool ends_sentence(const QString& s) {
    if (s.isEmpty()) return false;
    const QChar c = s.back();
    return c == QLatin1Char('.') || c == QLatin1Char('!') || c == QLatin1Char('?') ||
           c == QLatin1Char(':') || c == QChar(0x3002) || c == QChar(0xFF01) || c == QChar(0xFF1F);
}

// Paragraphs of a page, in order.
std::vector<QString> paragraphs(const std::vector<Line>& lines) {
    std::vector<QString> out;
    QString text;
    const Line* prev = nullptr;
    double right = 0;  // the paragraph's right edge so far
    for (const Line& line : lines) {
        bool new_paragraph = prev == nullptr;
        if (prev) {
            const double h = std::max(prev->box.height(), line.box.height());
            const double gap = line.box.top() - prev->box.bottom();
            const bool size_change = std::abs(line.box.height() - prev->box.height()) > 0.3 * h;
            const bool short_end =
                ends_sentence(prev->text) &&
                prev->box.right() < right - 0.15 * std::max(1.0, right - prev->box.left());
            new_paragraph = gap > 0.7 * h || line.box.top() < prev->box.top() - 0.5 * h ||
                            size_change || short_end;
        }
        if (new_paragraph) {
            if (!text.isEmpty()) out.push_back(text);
            text = line.text;
            right = line.box.right();
        } else {
            const QChar last = text.back();
            const QChar first = line.text.front();
            if (last == QLatin1Char('-') && text.size() > 1 && text[text.size() - 2].isLetter() &&
                first.isLower()) {
                text.chop(1);  // hyphenated at the line end
            } else if (!is_cjk(last) && !is_cjk(first)) {
                text += QLatin1Char(' ');
            }
            text += line.text;
            right = std::max(right, line.box.right());
        }
        prev = &line;
    }
    if (!text.isEmpty()) out.push_back(text);
    return out;
}

class PdfFormat : public DocumentFormat {
  public:
    std::vector<std::string> extensions() const override { return {"pdf"}; }
    // Scanned pages make PDFs large; only their text is kept in memory.
    qint64 max_file_size() const override { return qint64{1} << 30; }
    std::string output_extension() const override { return "txt"; }

    Document read(const QByteArray& bytes, const QString& path) const override {
        static const bool silenced = [] {
            Poppler::setDebugErrorFunction(quiet, QVariant());
            return true;
        }();
        (void)silenced;
        const std::string file = path.toStdString();
        if (!bytes.startsWith("%PDF-") && !bytes.left(1024).contains("%PDF-"))
            throw FileError(file, "is not a PDF file (no %PDF- header)");
        const std::unique_ptr<Poppler::Document> pdf = Poppler::Document::loadFromData(bytes);
        if (!pdf) throw FileError(file, "is damaged: Poppler cannot read this PDF");
        // Before anything else: a locked document has no catalog to ask.
        if (pdf->isLocked())
            throw FileError(file,
                            "is encrypted: it needs a password to open, which mtdesk does "
                            "not ask for");
        if (pdf->numPages() == 0) throw FileError(file, "is damaged: Poppler finds no pages in it");
        Document doc;
        bool first = true;
        for (int i = 0; i < pdf->numPages(); ++i) {
            const std::unique_ptr<Poppler::Page> page = pdf->page(i);
            if (!page) throw FileError(file, "page " + std::to_string(i + 1) + " is damaged");
            for (const QString& p : paragraphs(page_lines(*page))) {
                if (!first) doc.add_literal("\n\n");
                first = false;
                doc.add_trimmed(p.toStdString(), true);
            }
        }
        if (doc.segments.empty())
            throw FileError(file,
                            "has no text to translate (only images? mtdesk does not read "
                            "text in images)");
        doc.add_literal("\n");
        return doc;
    }
};

}  // namespace

const DocumentFormat& pdf_format() {
    static const PdfFormat f;
    return f;
}

}  // namespace mtdesk::app::documents
