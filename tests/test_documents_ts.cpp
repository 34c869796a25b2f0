// Qt Linguist .ts files: untranslated messages filled (type="unfinished"), plural forms each
// filled, finished translations, drafts, vanished/obsolete messages, comments and locations
// untouched byte for byte, the TS language set to the target, placeholders checked, broken
// files named, and the CLI.

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include "document_test_helpers.h"
#include "documents/document.h"
#include "documents/formats.h"
#include "documents/placeholders.h"
#include "mtdesk/error.h"

using namespace mtdesk;
using namespace mtdesk::app::documents;
using mtdesk::test::mark;

namespace {

const QString kPath = QStringLiteral("app_de.ts");

// As lupdate writes it (plus the cases lupdate does not produce but people do).
const QByteArray kSample = R"(<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE" sourcelanguage="en">
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../ui/main_window.cpp" line="42"/>
        <source>&amp;Open File…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="43"/>
        <source>Quit</source>
        <translation>Beenden</translation>
    </message>
    <message>
        <source>Saved %1 to &quot;%2&quot;</source>
        <comment>status bar</comment>
        <extracomment>%1 is a file name</extracomment>
        <translation type="unfinished"/>
    </message>
    <message numerus="yes">
        <source>%n file(s) copied</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Old text</source>
        <translation type="vanished">Alter Text</translation>
    </message>
    <message>
        <source>Gone</source>
        <translation type="obsolete"></translation>
    </message>
    <message>
        <source>Draft here</source>
        <translatorcomment>check this</translatorcomment>
        <translation type="unfinished">Entwurf hier</translation>
    </message>
    <message>
        <source>  Padded &lt;b&gt;text&lt;/b&gt; </source>
        <translation></translation>
    </message>
    <message>
        <source>...</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Dialog</name>
    <message id="dialog.title" numerus="yes">
        <source>%n item(s)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
)";

// The file without the content of <translation> elements and the TS language: what must not
// change.
QString skeleton(const QByteArray& ts) {
    QString s = QString::fromUtf8(ts);
    s.remove(QRegularExpression(R"(<translation[^>]*/>|<translation[^>]*>.*?</translation>)",
                                QRegularExpression::DotMatchesEverythingOption));
    s.remove(QRegularExpression("language=\"[^\"]*\""));
    return s;
}

}  // namespace

class TestDocumentsTs : public QObject {
    Q_OBJECT

  private slots:
    void registered() { QCOMPARE(find_format("x/app_zh_CN.ts"), &ts_format()); }

    void segments() {
        const Document doc = ts_format().read(kSample, kPath);
        QCOMPARE(doc.segments,
                 (std::vector<std::string>{"&Open File…", "Saved %1 to \"%2\"", "%n file(s) copied",
                                           "Padded <b>text</b>", "%n item(s)"}));
    }

    void marking() {
        Document doc = ts_format().read(kSample, kPath);
        const QByteArray out = ts_format().write(doc, translate_segments(doc, mark));
        QCOMPARE(skeleton(out), skeleton(kSample));
        QVERIFY(
            out.contains("<source>&amp;Open File…</source>\n        <translation "
                         "type=\"unfinished\">«&amp;Open File…»</translation>"));
        QVERIFY(
            out.contains("<translation type=\"unfinished\">«Saved %1 to &quot;%2&quot;»"
                         "</translation>\n    </message>"));
        QVERIFY(
            out.contains("<translation type=\"unfinished\">\n"
                         "            <numerusform>«%n file(s) copied»</numerusform>\n"
                         "            <numerusform>«%n file(s) copied»</numerusform>\n"
                         "        </translation>"));
        // Finished, vanished, obsolete and draft translations are left alone.
        for (const char* kept : {"<translation>Beenden</translation>",
                                 "<translation type=\"vanished\">Alter Text</translation>",
                                 "<translation type=\"obsolete\"></translation>",
                                 "<translation type=\"unfinished\">Entwurf hier</translation>",
                                 "<source>...</source>\n        <translation "
                                 "type=\"unfinished\"></translation>"})
            QVERIFY2(out.contains(kept), kept);
        // A translation without a type becomes unfinished; the source's outer spaces are kept.
        QVERIFY(out.contains(
            "<translation type=\"unfinished\">  «Padded &lt;b&gt;text&lt;/b&gt;» </translation>"));
        // A plural message without forms gets the file's language's number (German: 2).
        QVERIFY(
            out.contains("<translation type=\"unfinished\"><numerusform>«%n item(s)»"
                         "</numerusform><numerusform>«%n item(s)»</numerusform>"
                         "</translation>"));
        QCOMPARE(out.count("«"), 7);
        QVERIFY(out.contains("language=\"de_DE\""));  // no target given: kept

        // The output is a valid .ts with nothing left to translate, and round-trips exactly.
        const Document again = ts_format().read(out, kPath);
        QCOMPARE(again.segments.size(), std::size_t(0));
        QCOMPARE(ts_format().write(again, {}), out);
    }

    void targetLanguage_data() {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("attribute");
        QTest::newRow("de") << "de"
                            << "language=\"de_DE\"";
        QTest::newRow("zh") << "zh"
                            << "language=\"zh_CN\"";
        QTest::newRow("zh-Hant") << "zh-Hant"
                                 << "language=\"zh_TW\"";
        QTest::newRow("ug") << "ug"
                            << "language=\"ug_CN\"";
    }
    void targetLanguage() {
        QFETCH(QString, code);
        QFETCH(QString, attribute);
        Document doc = ts_format().read(kSample, kPath);
        doc.target_language = code.toStdString();
        const QByteArray out = ts_format().write(doc, doc.segments);
        QVERIFY2(
            out.contains("<TS version=\"2.1\" " + attribute.toUtf8() + " sourcelanguage=\"en\">"),
            out.left(200).constData());
        // A file without a language attribute gets one.
        Document bare = ts_format().read(
            "<TS version=\"2.1\"><context><name>A</name><message>"
            "<source>Hi</source><translation type=\"unfinished\"/>"
            "</message></context></TS>",
            kPath);
        bare.target_language = code.toStdString();
        QVERIFY(ts_format()
                    .write(bare, {"x"})
                    .startsWith("<TS " + attribute.toUtf8() + " version=\"2.1\">"));
    }

    void lostPlaceholdersAreReported() {
        const Document doc = ts_format().read(kSample, kPath);
        std::vector<std::string> t = doc.segments;
        t[1] = "Gespeichert unter %2";  // lost %1
        t[2] = "Dateien kopiert";       // lost %n
        const auto issues = check_placeholders(doc, t);
        QCOMPARE(issues.size(), std::size_t(2));
        QCOMPARE(issues[0].segment, std::size_t(1));
        QCOMPARE(issues[0].missing, std::vector<std::string>{"%1"});
        QCOMPARE(issues[1].missing, std::vector<std::string>{"%n"});
        // Still written (for a person to review: type="unfinished").
        QVERIFY(ts_format().write(doc, t).contains(
            "<translation type=\"unfinished\">Gespeichert unter %2</translation>"));
    }

    void brokenInputsNameTheFile_data() {
        QTest::addColumn<QByteArray>("ts");
        QTest::addColumn<QString>("problem");
        QTest::newRow("xml") << QByteArray("<TS>\n<context>\n<message><source>x</source>\n</TS>")
                             << "line 4: not well-formed XML";
        QTest::newRow("not ts") << QByteArray("<html><p>x</p></html>") << "not a Qt Linguist file";
        QTest::newRow("typescript")
            << QByteArray("const x: number = 1;\n") << "not well-formed XML";
        QTest::newRow("latin1") << QByteArray(
                                       "<TS><context><message><source>Caf\xE9 cr\xE8me "
                                       "br\xFBl\xE9\x65 \xE0 la fa\xE7on</source>"
                                       "</message></context></TS>")
                                << "is not UTF-8 (it looks like ";
    }
    void brokenInputsNameTheFile() {
        QFETCH(QByteArray, ts);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const QString path = dir.filePath("broken.ts");
        QVERIFY(test::write_bytes(path, ts));
        test::verify_read_fails(path, problem);
    }

    void cli() {
        if (!QFile::exists(test::mtdesk_binary())) QSKIP("mtdesk executable not built");
        QTemporaryDir dir;
        const QString src = dir.filePath("app.ts");
        QVERIFY(test::write_bytes(src, kSample));
        const test::CliRun r =
            test::run_mtdesk({"translate", "--model", MTDESK_DEMO_MODEL_DIR, "--to", "fr", src});
        QVERIFY2(r.code == 0, r.err.constData());
        const QByteArray out = test::file_bytes(dir.filePath("app.fr.ts"));
        QCOMPARE(skeleton(out), skeleton(kSample));
        QVERIFY(out.contains("language=\"fr_FR\""));
        QVERIFY(out.contains("<translation>Beenden</translation>"));
        QCOMPARE(ts_format().read(out, src).segments.size(), std::size_t(0));
        QCOMPARE(out.count("<numerusform></numerusform>"), 0);
    }
};

QTEST_GUILESS_MAIN(TestDocumentsTs)
#include "test_documents_ts.moc"
