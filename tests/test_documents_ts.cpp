// Qt Linguist .ts files: untranslated messages filled (type="unfinished"), plural forms each
// filled, finished translations, drafts, vanished/obsolete messages, comments and locations
// untouched byte for byte, the TS language set to the target, placeholders checked, broken
// files named, and the CLI.

#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "document_test_helpers.h"
#include "documents/document.h"
#include "documents/formats.h"
#include "documents/placeholders.h"
#include "mtdesk/error.h"
#include "mtdesk/translate/languages.h"

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

    // A plural message gets as many <numerusform>s as the target language has in Qt's rules,
    // whatever the file's language was (lupdate wrote the forms of that one). Qt's lrelease
    // takes the result as it is for every target language: it neither drops nor adds forms.
    void numerusFormsOfTheTarget_data() {
        QTest::addColumn<QByteArray>("translation");
        QTest::newRow("no forms") << QByteArray("<translation type=\"unfinished\"/>");
        QTest::newRow("English forms") << QByteArray(
            "<translation type=\"unfinished\">\n            <numerusform>"
            "</numerusform>\n            <numerusform></numerusform>\n"
            "        </translation>");
    }
    void numerusFormsOfTheTarget() {
        QFETCH(QByteArray, translation);
        const QByteArray ts =
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!DOCTYPE TS>\n"
            "<TS version=\"2.1\" language=\"en_US\">\n<context>\n"
            "    <name>W</name>\n    <message numerus=\"yes\">\n"
            "        <source>Deleted %n files</source>\n        " +
            translation + "\n    </message>\n</context>\n</TS>\n";
        Document doc = ts_format().read(ts, kPath);
        auto write_for = [&](std::string_view language) {
            doc.target_language = std::string(language);
            return ts_format().write(doc, translate_segments(doc, mark));
        };
        QCOMPARE(write_for("ru").count("<numerusform>«Deleted %n files»</numerusform>"), 3);
        QCOMPARE(write_for("ja").count("<numerusform>"), 1);
        QCOMPARE(write_for("de").count("<numerusform>"), 2);
        QCOMPARE(write_for("ar").count("<numerusform>"), 6);
        QCOMPARE(write_for("tr").count("<numerusform>"), 1);  // Qt's rule (gettext has 2)
        if (translation.contains("numerusform")) {
            // The layout of the forms there were, continued for a third.
            QVERIFY(write_for("uk").contains(
                "<translation type=\"unfinished\">\n"
                "            <numerusform>«Deleted %n files»</numerusform>\n"
                "            <numerusform>«Deleted %n files»</numerusform>\n"
                "            <numerusform>«Deleted %n files»</numerusform>\n"
                "        </translation>"));
        }

        QString bin = QStandardPaths::findExecutable("lrelease", {"/usr/lib/qt6/bin"});
        if (bin.isEmpty()) bin = QStandardPaths::findExecutable("lrelease6");
        const QString lconvert =
            QStandardPaths::findExecutable("lconvert", {QFileInfo(bin).path()});
        if (bin.isEmpty() || lconvert.isEmpty()) QSKIP("Qt's lrelease is not installed");
        QTemporaryDir dir;
        for (const Language& l : languages()) {
            const QString code = QString::fromLatin1(l.code.data(), qsizetype(l.code.size()));
            const QString file = dir.filePath(code + ".ts");
            const QByteArray out = write_for(l.code);
            QVERIFY(test::write_bytes(file, out));
            // lrelease's .qm, read back: the forms it kept.
            QProcess lrelease;
            lrelease.setProcessChannelMode(QProcess::MergedChannels);
            lrelease.start(bin, {file, "-qm", dir.filePath(code + ".qm")});
            QVERIFY(lrelease.waitForFinished());
            const QByteArray said = lrelease.readAll();
            QVERIFY2(lrelease.exitCode() == 0 && !said.contains("Removed plural forms"),
                     (code.toUtf8() + ": " + said).constData());
            QProcess back;
            back.start(lconvert, {"-i", dir.filePath(code + ".qm"), "-o", file + ".back.ts"});
            QVERIFY(back.waitForFinished() && back.exitCode() == 0);
            QVERIFY2(test::file_bytes(file + ".back.ts").count("<numerusform") ==
                         out.count("<numerusform>"),
                     code.toUtf8().constData());
        }
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
