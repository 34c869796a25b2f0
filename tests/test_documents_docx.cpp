// Word .docx documents, built in the test with libzip: untouched members byte for byte, every
// paragraph's text translated and put back into its runs (format tags keep per-run formatting),
// tabs, breaks, fields, deleted text, text boxes, notes, headers kept in place, the XML
// structure unchanged, broken files named, the CLI, and LibreOffice reading the result when it
// is installed.

#include <QDir>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <zip.h>

#include <pugixml.hpp>

#include "document_test_helpers.h"
#include "documents/document.h"
#include "documents/formats.h"
#include "documents/placeholders.h"
#include "documents/tagged.h"
#include "mtdesk/error.h"

using namespace mtdesk;
using namespace mtdesk::app::documents;
using mtdesk::test::mark;
using mtdesk::test::upper;
using mtdesk::test::verify_format_read_fails;

namespace {

const QString kPath = QStringLiteral("report.docx");

struct Member {
    std::string name;
    std::string data;
    bool stored = false;  // uncompressed

    bool operator==(const Member& o) const {
        return name == o.name && data == o.data && stored == o.stored;
    }
};

// A zip archive of `members`, in order.
QByteArray make_zip(const std::vector<Member>& members) {
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
    zip_source_keep(buffer);
    zip_t* z = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
    for (const Member& m : members) {
        zip_source_t* s = zip_source_buffer(z, m.data.data(), m.data.size(), 0);
        const zip_int64_t i = zip_file_add(z, m.name.c_str(), s, ZIP_FL_ENC_UTF_8);
        zip_set_file_compression(z, static_cast<zip_uint64_t>(i),
                                 m.stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 0);
    }
    zip_close(z);
    zip_stat_t st;
    zip_source_open(buffer);
    zip_source_stat(buffer, &st);
    QByteArray out(static_cast<qsizetype>(st.size), '\0');
    zip_source_read(buffer, out.data(), st.size);
    zip_source_close(buffer);
    zip_source_free(buffer);
    return out;
}

// The members of a zip archive, in order ({} when it is not one).
std::vector<Member> unzip(const QByteArray& bytes) {
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* src = zip_source_buffer_create(
        bytes.constData(), static_cast<zip_uint64_t>(bytes.size()), 0, &error);
    zip_t* z = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &error);
    if (!z) {
        zip_source_free(src);
        return {};
    }
    std::vector<Member> out;
    for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); ++i) {
        zip_stat_t st;
        zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st);
        Member m{st.name, std::string(st.size, '\0'), st.comp_method == ZIP_CM_STORE};
        zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0);
        zip_fread(f, m.data.data(), st.size);
        zip_fclose(f);
        out.push_back(std::move(m));
    }
    zip_discard(z);
    return out;
}

const Member* member(const std::vector<Member>& members, const std::string& name) {
    for (const Member& m : members)
        if (m.name == name) return &m;
    return nullptr;
}

const char* const kDecl = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n";
const char* const kW =
    "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\" "
    "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\" "
    "xmlns:v=\"urn:schemas-microsoft-com:vml\" "
    "xmlns:m=\"http://schemas.openxmlformats.org/officeDocument/2006/math\"";

std::string paragraph(const std::string& runs, const std::string& ppr = "") {
    return "<w:p w:rsidR=\"00A1\">" + ppr + runs + "</w:p>";
}
std::string run(const std::string& text, const std::string& rpr = "", bool preserve = false) {
    return "<w:r>" + rpr + "<w:t" + (preserve ? " xml:space=\"preserve\"" : "") + ">" + text +
           "</w:t></w:r>";
}
const std::string kBold = "<w:rPr><w:b/><w:bCs/></w:rPr>";
const std::string kItalic = "<w:rPr><w:i/></w:rPr>";

std::string document_xml() {
    std::string body;
    body += paragraph(run("Getting started"), "<w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr>");
    body +=
        paragraph(run("This is ", "", true) + run("very", kBold) + run(" important.", "", true));
    // Word splits runs with the same formatting (spelling marks, revision ids): one span.
    body += paragraph(run("Open the ", kItalic, true) + "<w:proofErr w:type=\"spellStart\"/>" +
                      run("file menu.", kItalic));
    body += paragraph(run("Visit ", "", true) + "<w:hyperlink r:id=\"rId4\" w:history=\"1\">" +
                      run("our website", "<w:rPr><w:rStyle w:val=\"Hyperlink\"/></w:rPr>") +
                      "</w:hyperlink>" + run(" for help.", "", true));
    body += paragraph(run("Name:") + "<w:r><w:tab/><w:t>Value here</w:t><w:br/></w:r>" +
                      run("Second line"));
    body += "<w:tbl><w:tblPr><w:tblW w:w=\"0\" w:type=\"auto\"/></w:tblPr><w:tr><w:tc>" +
            paragraph(run("Cell one")) + "</w:tc><w:tc>" + paragraph(run("Cell two")) +
            "</w:tc></w:tr></w:tbl>";
    body += paragraph(run("  Spaced text ", "", true));
    body += paragraph(
        "<w:del w:id=\"1\" w:author=\"A\"><w:r><w:delText>old words</w:delText></w:r></w:del>"
        "<w:ins w:id=\"2\" w:author=\"A\">" +
        run("new words") + "</w:ins>");
    body += paragraph(run("Page ", "", true) +
                      "<w:r><w:fldChar w:fldCharType=\"begin\"/></w:r><w:r><w:instrText "
                      "xml:space=\"preserve\"> PAGE </w:instrText></w:r><w:r><w:fldChar "
                      "w:fldCharType=\"separate\"/></w:r>" +
                      run("1") + "<w:r><w:fldChar w:fldCharType=\"end\"/></w:r>");
    body += paragraph(run("Before box") + "<w:r><w:pict><v:shape><v:textbox><w:txbxContent>" +
                      paragraph(run("Text in a box")) +
                      "</w:txbxContent></v:textbox></v:shape></w:pict></w:r>" + run("after box"));
    body += paragraph(run("A claim") +
                      "<w:r><w:rPr><w:rStyle w:val=\"FootnoteReference\"/></w:rPr>"
                      "<w:footnoteReference w:id=\"1\"/></w:r>" +
                      run(" and more.", "", true));
    body += paragraph(run("Tom &amp; Jerry &lt;3 &lt;b&gt; ", "", true) + run("cheese", kBold));
    // Math is not text of the sentence: it stays where it is, between two segments.
    body += paragraph(run("Area ", "", true) + "<m:oMath><m:r><m:t>A=πr²</m:t></m:r></m:oMath>" +
                      run(" of a circle", "", true));
    body += paragraph("") + paragraph(run("2024"));
    body +=
        "<w:sectPr><w:headerReference w:type=\"default\" r:id=\"rId2\"/>"
        "<w:pgSz w:w=\"11906\" w:h=\"16838\"/></w:sectPr>";
    return std::string(kDecl) + "<w:document " + kW + "><w:body>" + body + "</w:body></w:document>";
}

std::vector<Member> sample_members(const std::string& document = document_xml()) {
    const std::string ct =
        std::string(kDecl) +
        "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
        "<Default Extension=\"rels\" "
        "ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
        "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
        "<Default Extension=\"png\" ContentType=\"image/png\"/>"
        "<Override PartName=\"/word/document.xml\" "
        "ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document."
        "main+xml\"/>"
        "<Override PartName=\"/word/styles.xml\" "
        "ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.styles+"
        "xml\"/>"
        "<Override PartName=\"/word/header1.xml\" "
        "ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.header+"
        "xml\"/>"
        "<Override PartName=\"/word/footnotes.xml\" "
        "ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml."
        "footnotes+xml\"/>"
        "<Override PartName=\"/docProps/core.xml\" "
        "ContentType=\"application/vnd.openxmlformats-package.core-properties+xml\"/>"
        "</Types>";
    const std::string rels =
        std::string(kDecl) +
        "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
        "<Relationship Id=\"rId1\" "
        "Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
        "officeDocument\" Target=\"word/document.xml\"/>"
        "<Relationship Id=\"rId2\" "
        "Type=\"http://schemas.openxmlformats.org/package/2006/relationships/metadata/"
        "core-properties\" Target=\"docProps/core.xml\"/></Relationships>";
    const std::string doc_rels =
        std::string(kDecl) +
        "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
        "<Relationship Id=\"rId1\" "
        "Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles\" "
        "Target=\"styles.xml\"/>"
        "<Relationship Id=\"rId2\" "
        "Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/header\" "
        "Target=\"header1.xml\"/>"
        "<Relationship Id=\"rId3\" "
        "Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes\" "
        "Target=\"footnotes.xml\"/>"
        "<Relationship Id=\"rId4\" "
        "Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink\" "
        "Target=\"https://example.com/\" TargetMode=\"External\"/>"
        "<Relationship Id=\"rId5\" "
        "Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/image\" "
        "Target=\"media/image1.png\"/></Relationships>";
    const std::string styles =
        std::string(kDecl) + "<w:styles " + kW +
        "><w:style w:type=\"paragraph\" w:styleId=\"Heading1\"><w:name w:val=\"heading "
        "1\"/><w:rPr><w:b/><w:sz w:val=\"32\"/></w:rPr></w:style><w:style "
        "w:type=\"character\" w:styleId=\"Hyperlink\"><w:name w:val=\"Hyperlink\"/><w:rPr><w:color "
        "w:val=\"0563C1\"/><w:u w:val=\"single\"/></w:rPr></w:style></w:styles>";
    const std::string header = std::string(kDecl) + "<w:hdr " + kW + ">" +
                               paragraph(run("Company confidential")) + "</w:hdr>";
    const std::string footnotes =
        std::string(kDecl) + "<w:footnotes " + kW +
        "><w:footnote w:type=\"separator\" w:id=\"-1\"><w:p><w:r><w:separator/></w:r></w:p>"
        "</w:footnote><w:footnote w:id=\"1\">" +
        paragraph(
            "<w:r><w:rPr><w:rStyle w:val=\"FootnoteReference\"/></w:rPr><w:footnoteRef/>"
            "</w:r>" +
            run(" Source: the annual report.", "", true)) +
        "</w:footnote></w:footnotes>";
    const std::string core =
        std::string(kDecl) +
        "<cp:coreProperties "
        "xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/core-properties\" "
        "xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>Quarterly "
        "report</dc:title></cp:coreProperties>";
    std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
    for (int i = 0; i < 200; ++i)
        png += static_cast<char>((i * 37) & 0xFF);
    return {{"[Content_Types].xml", ct},         {"_rels/.rels", rels},
            {"word/document.xml", document},     {"word/_rels/document.xml.rels", doc_rels},
            {"word/styles.xml", styles},         {"word/header1.xml", header},
            {"word/footnotes.xml", footnotes},   {"docProps/core.xml", core},
            {"word/media/image1.png", png, true}};
}

// Element names and attribute names (xml:space left out), in document order.
QStringList structure(const std::string& xml) {
    pugi::xml_document d;
    if (!d.load_buffer(xml.data(), xml.size())) return {"not well-formed"};
    QStringList out;
    struct Walker : pugi::xml_tree_walker {
        QStringList* out;
        bool for_each(pugi::xml_node& n) override {
            if (n.type() != pugi::node_element) return true;
            QString s = QString::fromUtf8(n.name());
            for (const pugi::xml_attribute a : n.attributes())
                if (std::string_view(a.name()) != "xml:space")
                    s += " " + QString::fromUtf8(a.name()) + "=" + QString::fromUtf8(a.value());
            *out << s;
            return true;
        }
    } w;
    w.out = &out;
    d.traverse(w);
    return out;
}

// The w:t texts of a part, in order.
std::vector<std::string> texts(const std::string& xml, const char* element = "w:t") {
    pugi::xml_document d;
    d.load_buffer(xml.data(), xml.size(), pugi::parse_default | pugi::parse_ws_pcdata);
    std::vector<std::string> out;
    for (const pugi::xpath_node& n : d.select_nodes((std::string("//") + element).c_str()))
        out.push_back(n.node().text().get());
    return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

class TestDocumentsDocx : public QObject {
    Q_OBJECT

  private slots:
    void identityRoundTrip() {
        const std::vector<Member> in = sample_members();
        const QByteArray zip = make_zip(in);
        const Document doc = docx_format().read(zip, kPath);
        const std::vector<Member> out = unzip(docx_format().write(doc, doc.segments));
        QCOMPARE(out.size(), in.size());
        for (std::size_t i = 0; i < in.size(); ++i)
            QVERIFY2(out[i] == in[i], in[i].name.c_str());  // names, order, method, bytes
    }

    void segments() {
        const Document doc = docx_format().read(make_zip(sample_members()), kPath);
        const std::vector<std::string> expected = {"Getting started",
                                                   "This is <s1>very</s1> important.",
                                                   "Open the file menu.",
                                                   "Visit <s1>our website</s1> for help.",
                                                   "Name:",
                                                   "Value here",
                                                   "Second line",
                                                   "Cell one",
                                                   "Cell two",
                                                   "Spaced text",
                                                   "new words",
                                                   "Page",
                                                   "Before box",
                                                   "after box",
                                                   "Text in a box",
                                                   "A claim",
                                                   "and more.",
                                                   "Tom & Jerry <3 <b> <s1>cheese</s1>",
                                                   "Area",
                                                   "of a circle",
                                                   "Company confidential",
                                                   "Source: the annual report."};
        QCOMPARE(doc.segments, expected);
        for (std::size_t i = 0; i < doc.segments.size(); ++i)
            QCOMPARE(doc.is_tagged(i), contains_tag(doc.segments[i]));
    }

    void markingTranslator() {
        const std::vector<Member> in = sample_members();
        const Document doc = docx_format().read(make_zip(in), kPath);
        int calls = 0;
        const std::vector<Member> out =
            unzip(docx_format().write(doc, translate_segments(doc, [&](const std::string& s) {
                                          ++calls;
                                          return mark(s);
                                      })));
        QCOMPARE(calls, static_cast<int>(doc.segments.size()) + 2 + 2 + 1);  // runs of tagged
        for (const Member& m : in) {
            const Member* o = member(out, m.name);
            QVERIFY(o);
            if (m.name == "word/document.xml" || m.name == "word/header1.xml" ||
                m.name == "word/footnotes.xml")
                QCOMPARE(structure(o->data), structure(m.data));
            else
                QVERIFY2(*o == m, m.name.c_str());
        }
        const std::string& d = member(out, "word/document.xml")->data;
        const std::vector<std::string> t = texts(d);
        for (const char* expected : {"«Getting started»",
                                     "«This is» ",
                                     "«very»",
                                     " «important.»",
                                     "«Open the file menu.»",
                                     "",
                                     "«Visit» ",
                                     "«our website»",
                                     " «for help.»",
                                     "«Name:»",
                                     "«Value here»",
                                     "«Second line»",
                                     "«Cell one»",
                                     "  «Spaced text» ",
                                     "«new words»",
                                     "«Page» ",
                                     "1",
                                     "«Before box»",
                                     "«Text in a box»",
                                     "«after box»",
                                     "«A claim»",
                                     " «and more.»",
                                     "«Area» ",
                                     " «of a circle»",
                                     "2024"})
            QVERIFY2(contains(t, expected), expected);
        QCOMPARE(texts(d, "w:delText"), std::vector<std::string>{"old words"});
        QCOMPARE(texts(d, "w:instrText"), std::vector<std::string>{" PAGE "});
        QCOMPARE(texts(d, "m:t"), std::vector<std::string>{"A=πr²"});
        QCOMPARE(texts(member(out, "word/header1.xml")->data),
                 std::vector<std::string>{"«Company confidential»"});
        QCOMPARE(texts(member(out, "word/footnotes.xml")->data),
                 std::vector<std::string>{" «Source: the annual report.»"});
        // Escaping in the XML text.
        QVERIFY(d.find("<w:t xml:space=\"preserve\">«Tom &amp; Jerry &lt;3 &lt;b&gt;» </w:t>") !=
                std::string::npos);
        // Re-read: the translated text, same segmentation.
        const Document again = docx_format().read(make_zip(out), kPath);
        QCOMPARE(again.segments.size(), doc.segments.size());
        QVERIFY(contains(again.segments, "«Open the file menu.»"));
    }

    void formattedTranslationKeepsRunFormatting() {
        const Document doc = docx_format().read(make_zip(sample_members()), kPath);
        std::vector<std::string> t = doc.segments;
        t[1] = "<s1>Sehr</s1> wichtig ist das.";  // the plain text before the tag moved away
        t[3] = "Besuchen Sie <s1>unsere Website</s1>, um Hilfe zu erhalten.";
        t[17] = "Tom & Jerry <3 <b> <s1>Käse</s1> und Brot";  // after the last tag: no run there
        const std::string d = unzip(docx_format().write(doc, t))[2].data;
        const std::vector<std::string> w = texts(d);
        // This is | very (bold) | important.
        const auto at = std::find(w.begin(), w.end(), "Sehr") - w.begin();
        QVERIFY(at > 0 && at + 1 < static_cast<long>(w.size()));
        QCOMPARE(w[static_cast<std::size_t>(at - 1)], std::string());
        QCOMPARE(w[static_cast<std::size_t>(at + 1)], std::string(" wichtig ist das."));
        QVERIFY(d.find("<w:r><w:rPr><w:b/><w:bCs/></w:rPr><w:t>Sehr</w:t></w:r>") !=
                std::string::npos);
        QVERIFY(d.find("<w:rStyle w:val=\"Hyperlink\"/></w:rPr><w:t>unsere Website</w:t>") !=
                std::string::npos);
        QVERIFY(d.find("<w:t xml:space=\"preserve\">, um Hilfe zu erhalten.</w:t>") !=
                std::string::npos);
        // Trailing text without a plain run of its own stays with the (bold) run before it.
        QVERIFY(d.find("<w:t>Käse und Brot</w:t>") != std::string::npos ||
                d.find("<w:t xml:space=\"preserve\">Käse und Brot</w:t>") != std::string::npos);
        QVERIFY(check_placeholders(doc, t).empty());
    }

    void lostTagsPutEverythingInTheFirstRun() {
        const Document doc = docx_format().read(make_zip(sample_members()), kPath);
        std::vector<std::string> t = doc.segments;
        t[1] = "Das ist sehr wichtig.";
        const std::string d = unzip(docx_format().write(doc, t))[2].data;
        QVERIFY(d.find("<w:t xml:space=\"preserve\">Das ist sehr wichtig.</w:t></w:r><w:r>" +
                       kBold + "<w:t></w:t></w:r><w:r><w:t xml:space=\"preserve\"></w:t>") !=
                std::string::npos);
        const auto issues = check_placeholders(doc, t);
        QCOMPARE(issues.size(), std::size_t(1));
        QCOMPARE(issues[0].segment, std::size_t(1));
    }

    void whitespaceNeedsPreserve() {
        const Document doc = docx_format().read(make_zip(sample_members()), kPath);
        std::vector<std::string> t = doc.segments;
        t[0] = "Erste  Schritte";  // two spaces: Word drops them without xml:space
        t[4] = "Name :";
        const std::string d = unzip(docx_format().write(doc, t))[2].data;
        QVERIFY(d.find("<w:t xml:space=\"preserve\">Erste  Schritte</w:t>") != std::string::npos);
        QVERIFY(d.find("<w:t>Name :</w:t>") != std::string::npos);
        QCOMPARE(structure(d), structure(document_xml()));
    }

    void otherNamespacePrefix() {
        std::string xml = document_xml();
        for (const auto& [from, to] :
             std::vector<std::pair<std::string, std::string>>{{"<w:", "<ns0:"},
                                                              {"</w:", "</ns0:"},
                                                              {" w:", " ns0:"},
                                                              {"xmlns:w=", "xmlns:ns0="}})
            for (std::size_t at; (at = xml.find(from)) != std::string::npos;)
                xml.replace(at, from.size(), to);
        std::vector<Member> members = sample_members(xml);
        const Document doc = docx_format().read(make_zip(members), kPath);
        QCOMPARE(doc.segments[1], std::string("This is <s1>very</s1> important."));
        const std::string d =
            unzip(docx_format().write(doc, translate_segments(doc, upper)))[2].data;
        QVERIFY(d.find("<ns0:t xml:space=\"preserve\">THIS IS </ns0:t>") != std::string::npos);
    }

    void brokenInputsNameTheFile_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("problem");
        QTest::newRow("not zip") << QByteArray("This is plain text, not a zip archive.")
                                 << "not a readable zip archive";
        std::vector<Member> m = sample_members();
        m.erase(m.begin());
        QTest::newRow("no content types") << make_zip(m) << "no [Content_Types].xml";
        m = sample_members();
        m[0].data =
            "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"/>";
        QTest::newRow("no main part") << make_zip(m) << "no main document part";
        // A valid zip with the content types only: the main part they name is missing.
        m = sample_members();
        m.resize(1);
        QTest::newRow("content types only") << make_zip(m) << "no word/document.xml";
        m = sample_members();
        m.erase(m.begin() + 2);
        QTest::newRow("no document.xml") << make_zip(m) << "no word/document.xml";
        m = sample_members();
        m[2].data = std::string(kDecl) + "<w:document " + kW + ">\n<w:body>\n<w:p></w:body>";
        QTest::newRow("bad xml") << make_zip(m) << "word/document.xml line 4: not well-formed XML";
        QByteArray truncated = make_zip(sample_members());
        truncated.truncate(truncated.size() / 2);
        QTest::newRow("truncated") << truncated << "not a readable zip archive";
    }
    void brokenInputsNameTheFile() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const QString path = dir.filePath("broken.docx");
        QVERIFY(test::write_bytes(path, bytes));
        test::verify_read_fails(path, problem);
    }

    // Elements nested 100,000 deep (customXml, a container of runs, around one paragraph)
    // are read and written without running out of stack.
    void deeplyNested() {
        constexpr int kDepth = 100000;
        std::string open, close;
        for (int i = 0; i < kDepth; ++i) {
            open += "<w:customXml w:element=\"x\">";
            close += "</w:customXml>";
        }
        const std::string xml = std::string(kDecl) + "<w:document " + kW + "><w:body>" + open +
                                paragraph(run("Deep text")) + close + "</w:body></w:document>";
        const Document doc = docx_format().read(make_zip(sample_members(xml)), kPath);
        QCOMPARE(doc.segments.front(), std::string("Deep text"));
        QCOMPARE(doc.segments.size(), std::size_t(3));  // and the header's and the note's
        const std::string out =
            unzip(docx_format().write(doc, translate_segments(doc, upper)))[2].data;
        QCOMPARE(texts(out), std::vector<std::string>{"DEEP TEXT"});
    }

    // Archives that unpack to far more than they are ("zip bombs") are refused before they are
    // unpacked, naming the member and the limit; a document never takes gigabytes of memory.
    void zipBombs_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QStringList>("problems");
        // A main part a little over the 64 MiB limit, as small paragraphs.
        std::string body;
        const std::string para = paragraph(run("Open the file"));
        while (body.size() < (std::size_t{66} << 20))
            body += para;
        std::vector<Member> m = sample_members(std::string(kDecl) + "<w:document " + kW +
                                               "><w:body>" + body + "</w:body></w:document>");
        body.clear();
        QTest::newRow("main part") << make_zip(m)
                                   << QStringList{
                                          "zip member word/document.xml unpacks to 67 MiB; "
                                          "mtdesk reads Word parts of at most 64 MiB"};
        // Another member that packs far more densely than real data does.
        m = sample_members();
        m.push_back({"word/media/blob.bin", std::string(std::size_t{20} << 20, '\0')});
        QTest::newRow("ratio") << make_zip(m)
                               << QStringList{
                                      "zip member word/media/blob.bin unpacks to 20 MiB "
                                      "from ",
                                      "KiB, more than 100 times its packed size"};
    }
    void zipBombs() {
        QFETCH(QByteArray, bytes);
        QFETCH(QStringList, problems);
        QVERIFY(bytes.size() < (1 << 20));
        for (const QString& problem : problems)
            verify_format_read_fails(docx_format(), bytes, kPath, problem);
    }

    // A file of 0 bytes is said to be empty (libzip opens it as an archive without members).
    void emptyFile() {
        verify_format_read_fails(docx_format(), QByteArray(), kPath,
                                 "is empty (0 bytes), not a Word document");
        const QByteArray no_members = QByteArray("PK\x05\x06", 4) + QByteArray(18, '\0');
        verify_format_read_fails(docx_format(), no_members, kPath,
                                 "is not a Word document: the zip archive is empty");
    }

    // A zip that is no Word document fails, named, with nothing written (not "0 segments").
    void cliFailsWithoutTheMainPart() {
        if (!QFile::exists(test::mtdesk_binary())) QSKIP("mtdesk executable not built");
        QTemporaryDir dir;
        const QString src = dir.filePath("empty.docx");
        std::vector<Member> m = sample_members();
        m.resize(1);  // [Content_Types].xml
        QVERIFY(test::write_bytes(src, make_zip(m)));
        const test::CliRun r =
            test::run_mtdesk({"translate", "--model", MTDESK_DEMO_MODEL_DIR, "--to", "de", src});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(src.toUtf8() + ": is not a Word document (no word/document.xml)"),
                 r.err.constData());
        QVERIFY(!QFile::exists(dir.filePath("empty.de.docx")));
    }

    void cli() {
        if (!QFile::exists(test::mtdesk_binary())) QSKIP("mtdesk executable not built");
        QTemporaryDir dir;
        const QString src = dir.filePath("report.docx");
        QVERIFY(test::write_bytes(src, make_zip(sample_members())));
        const test::CliRun r =
            test::run_mtdesk({"translate", "--model", MTDESK_DEMO_MODEL_DIR, "--to", "de", src});
        QVERIFY2(r.code == 0, r.err.constData());
        const QString target = dir.filePath("report.de.docx");
        const std::vector<Member> out = unzip(test::file_bytes(target));
        QCOMPARE(out.size(), sample_members().size());
        QCOMPARE(structure(out[2].data), structure(document_xml()));
        const Document doc = read_document(target);
        QCOMPARE(doc.segments.size(), std::size_t(22));  // the same paragraphs and runs
        QVERIFY(!contains(doc.segments, "Getting started"));

        // LibreOffice opens it (when installed): its text is the translation.
        const QString soffice = QStandardPaths::findExecutable("soffice");
        if (soffice.isEmpty()) QSKIP("LibreOffice (soffice) is not installed");
        QProcess lo;
        lo.setWorkingDirectory(dir.path());
        lo.start(soffice, {"-env:UserInstallation=file://" + dir.filePath("lo-profile"),
                           "--headless", "--convert-to", "txt:Text (encoded):UTF8", "--outdir",
                           dir.filePath("lo"), target});
        QVERIFY(lo.waitForFinished(180000));
        const QString text = QString::fromUtf8(test::file_bytes(dir.filePath("lo/report.de.txt")));
        QVERIFY2(!text.isEmpty(), lo.readAllStandardError().constData());
        // Body paragraphs without format tags (text boxes, headers and notes are not in the
        // text export).
        for (const std::size_t i : {0, 2, 4, 5, 6, 7, 8, 9, 10, 15, 16, 18, 19})
            QVERIFY2(text.contains(QString::fromStdString(doc.segments[i])),
                     doc.segments[i].c_str());
        QVERIFY(!text.contains("Getting started"));
    }
};

QTEST_GUILESS_MAIN(TestDocumentsDocx)
#include "test_documents_docx.moc"
