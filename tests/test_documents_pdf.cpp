// PDF documents, written by the test itself (a minimal PDF with the standard Helvetica font):
// the text of each page joined into paragraphs (lines, hyphenation, headings, pages), the
// translation written as name.<lang>.txt, encrypted and broken files named, and the CLI.

#include <QTemporaryDir>
#include <QTest>

#include "document_test_helpers.h"
#include "documents/document.h"
#include "documents/formats.h"
#include "mtdesk/error.h"
#include "output_path.h"

using namespace mtdesk;
using namespace mtdesk::app::documents;
using mtdesk::test::mark;

namespace {

const QString kPath = QStringLiteral("paper.pdf");

struct TextLine {
    double x, y, size;
    std::string text;  // Latin-1 (WinAnsi) bytes
};
using Page = std::vector<TextLine>;

std::string pdf_string(const std::string& s) {
    std::string out = "(";
    for (const char c : s) {
        if (c == '(' || c == ')' || c == '\\') out += '\\';
        out += c;
    }
    return out + ")";
}

// A PDF 1.4 file: one Helvetica text line per TextLine; `encrypted` adds a standard security
// handler whose user password is not empty (so it cannot be opened without one).
QByteArray make_pdf(const std::vector<Page>& pages, bool encrypted = false) {
    std::vector<std::string> objects;  // object n + 1
    objects.push_back("<< /Type /Catalog /Pages 2 0 R >>");
    std::string kids;
    for (std::size_t p = 0; p < pages.size(); ++p)
        kids += std::to_string(4 + 2 * p) + " 0 R ";
    objects.push_back("<< /Type /Pages /Kids [" + kids + "] /Count " +
                      std::to_string(pages.size()) + " >>");
    objects.push_back(
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
    for (std::size_t p = 0; p < pages.size(); ++p) {
        std::string content;
        for (const TextLine& l : pages[p])
            content += "BT /F1 " + std::to_string(l.size) + " Tf " + std::to_string(l.x) + " " +
                       std::to_string(l.y) + " Td " + pdf_string(l.text) + " Tj ET\n";
        objects.push_back(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << "
            "/Font << /F1 3 0 R >> >> /Contents " +
            std::to_string(5 + 2 * p) + " 0 R >>");
        objects.push_back("<< /Length " + std::to_string(content.size()) + " >>\nstream\n" +
                          content + "endstream");
    }
    if (encrypted)
        objects.push_back("<< /Filter /Standard /V 1 /R 2 /Length 40 /P -44 /O <" +
                          std::string(64, 'a') + "> /U <" + std::string(64, 'b') + "> >>");
    std::string out = "%PDF-1.4\n%\xE2\xE3\xCF\xD3\n";
    std::vector<std::size_t> offsets;
    for (std::size_t i = 0; i < objects.size(); ++i) {
        offsets.push_back(out.size());
        out += std::to_string(i + 1) + " 0 obj\n" + objects[i] + "\nendobj\n";
    }
    const std::size_t xref = out.size();
    out += "xref\n0 " + std::to_string(objects.size() + 1) + "\n0000000000 65535 f \n";
    for (const std::size_t o : offsets) {
        char entry[32];
        std::snprintf(entry, sizeof entry, "%010zu 00000 n \n", o);
        out += entry;
    }
    out += "trailer\n<< /Size " + std::to_string(objects.size() + 1) + " /Root 1 0 R";
    if (encrypted)
        out += " /Encrypt " + std::to_string(objects.size()) + " 0 R /ID [<" +
               std::string(32, '1') + "> <" + std::string(32, '1') + ">]";
    out += " >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
    return QByteArray::fromStdString(out);
}

std::vector<Page> sample_pages() {
    return {
        {{72, 740, 18, "Getting Started"},
         {72, 700, 11, "The quick brown fox jumps over the lazy dog and keeps on running"},
         {72, 686, 11, "through the forest until it reaches the river, where it stops to"},
         {72, 672, 11, "drink some water."},
         {72, 640, 11, "A second paragraph follows with a word that is hyphen-"},
         {72, 626, 11, "ated at the end of the line, and a caf\xE9 too."},
         {300, 40, 9, "1"}},
        {{72, 740, 11, "Page two starts here and the text goes on until the right"},
         {72, 726, 11, "margin, where it wraps to the next line."},
         {72, 712, 11, "A new paragraph without a gap starts here."},
         {72, 698, 11, "It goes on."}},
    };
}

}  // namespace

class TestDocumentsPdf : public QObject {
    Q_OBJECT

  private slots:
    void registered() {
        QCOMPARE(find_format("a/B.PDF"), &pdf_format());
        QCOMPARE(pdf_format().output_extension(), std::string("txt"));
        QTemporaryDir dir;
        QCOMPARE(app::translated_output_path(dir.filePath("paper.pdf"), "de", "txt"),
                 dir.filePath("paper.de.txt"));
        QVERIFY(test::write_bytes(dir.filePath("paper.de.txt"), "x"));
        QCOMPARE(app::translated_output_path(dir.filePath("paper.pdf"), "de", "txt"),
                 dir.filePath("paper.de (2).txt"));
    }

    void paragraphs() {
        const Document doc = pdf_format().read(make_pdf(sample_pages()), kPath);
        const std::vector<std::string> expected = {
            "Getting Started",
            "The quick brown fox jumps over the lazy dog and keeps on running through the "
            "forest until it reaches the river, where it stops to drink some water.",
            "A second paragraph follows with a word that is hyphenated at the end of the line, "
            "and a café too.",
            "Page two starts here and the text goes on until the right margin, where it wraps "
            "to the next line.",
            "A new paragraph without a gap starts here. It goes on."};
        QCOMPARE(doc.segments, expected);
        QVERIFY(!doc.is_tagged(0));
    }

    void translatedText() {
        const Document doc = pdf_format().read(make_pdf(sample_pages()), kPath);
        const QByteArray out = pdf_format().write(doc, translate_segments(doc, mark));
        // Paragraphs one a line with blank lines between; the page number stays untranslated.
        QCOMPARE(out, QByteArray("«Getting Started»\n\n«" + QByteArray(doc.segments[1].c_str()) +
                                 "»\n\n«" + QByteArray(doc.segments[2].c_str()) + "»\n\n1\n\n«" +
                                 QByteArray(doc.segments[3].c_str()) + "»\n\n«" +
                                 QByteArray(doc.segments[4].c_str()) + "»\n"));
        // A translation with line breaks stays one line.
        const QByteArray multi = pdf_format().write(
            doc, translate_segments(doc, [](const std::string& s) { return s + "\nmore"; }));
        QCOMPARE(multi.count('\n'), out.count('\n'));
    }

    void brokenInputsNameTheFile_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("problem");
        QTest::newRow("encrypted") << make_pdf(sample_pages(), true) << "is encrypted";
        QTest::newRow("not pdf") << QByteArray("Hello, this is text.") << "not a PDF file";
        QTest::newRow("damaged") << QByteArray("%PDF-1.4\nnothing here\n%%EOF\n") << "damaged";
        QTest::newRow("no text") << make_pdf({{}, {}}) << "has no text to translate";
    }
    void brokenInputsNameTheFile() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const QString path = dir.filePath("broken.pdf");
        QVERIFY(test::write_bytes(path, bytes));
        test::verify_read_fails(path, problem);
    }

    void cli() {
        if (!QFile::exists(test::mtdesk_binary())) QSKIP("mtdesk executable not built");
        QTemporaryDir dir;
        const QString src = dir.filePath("notes.pdf");
        QVERIFY(test::write_bytes(
            src, make_pdf({{{72, 700, 12, "Open the file"}, {72, 660, 12, "Save the document"}}})));
        QVERIFY(test::write_bytes(dir.filePath("notes.de.txt"), "keep me"));
        const test::CliRun r = test::run_mtdesk({"translate", "--model", MTDESK_DEMO_MODEL_DIR,
                                                 "--to", "de", src, dir.filePath("broken.pdf")});
        QCOMPARE(r.code, 1);  // one file failed (missing), the other was written
        QVERIFY2(r.err.contains("broken.pdf"), r.err.constData());
        QCOMPARE(test::file_bytes(dir.filePath("notes.de.txt")), QByteArray("keep me"));
        const QByteArray out = test::file_bytes(dir.filePath("notes.de (2).txt"));
        QCOMPARE(out.count("\n\n"), 1);
        QVERIFY2(out.contains("Datei"), out.constData());
        QVERIFY(!out.contains("Open the file"));
    }
};

QTEST_GUILESS_MAIN(TestDocumentsPdf)
#include "test_documents_pdf.moc"
