// Document formats: every format round-trips byte for byte, every text segment is translated
// exactly once with the structure unchanged, legacy encodings decode, broken inputs name the
// file; and the CLI end to end on the fixture model.

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <grp.h>
#include <unistd.h>

#include "document_test_helpers.h"
#include "documents/document.h"
#include "documents/formats.h"
#include "documents/placeholders.h"
#include "documents/plural_forms.h"
#include "mtdesk/error.h"
#include "mtdesk/translate/languages.h"

using namespace mtdesk;
using namespace mtdesk::app::documents;
using mtdesk::test::verify_format_read_fails;

namespace {

const QString kData = QStringLiteral(MTDESK_TEST_DATA_DIR "/documents/");
const QString kBinary = QStringLiteral(MTDESK_BINARY_DIR "/app/mtdesk");
const QString kModel = QStringLiteral(MTDESK_TEST_DATA_DIR "/models/hunyuan-gqa-alpha");

QByteArray read_file(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QByteArray translate_with(const QString& path,
                          const std::function<std::string(const std::string&)>& fn,
                          Document* doc_out = nullptr) {
    const DocumentFormat& f = format_for(path);
    const Document doc = f.read(read_file(path), path);
    if (doc_out) *doc_out = doc;
    return f.write(doc, translate_segments(doc, fn));
}

std::string mark(const std::string& s) {
    return "«" + s + "»";
}

// Removes the "«" "»" marks: what is left must be the input.
QByteArray unmark(QByteArray s) {
    return s.replace("«", "").replace("»", "");
}

// The lines of a PO file other than msgstr lines and their continuation strings.
QList<QByteArray> po_without_msgstr(const QByteArray& po) {
    QList<QByteArray> out;
    bool in_msgstr = false;
    for (const QByteArray& line : po.split('\n')) {
        const QByteArray t = line.trimmed();
        if (t.startsWith("msgstr")) {
            in_msgstr = true;
            continue;
        }
        if (in_msgstr && t.startsWith('"')) continue;
        in_msgstr = false;
        if (t.startsWith("#,")) continue;  // flags may gain "fuzzy"
        out.push_back(line);
    }
    return out;
}

}  // namespace

class TestDocuments : public QObject {
    Q_OBJECT

  private slots:
    void identityRoundTrip_data() {
        QTest::addColumn<QString>("file");
        for (const char* f : {"sample.txt", "crlf.txt", "bom.txt", "sample.md", "sample.srt",
                              "crlf.srt", "sample.vtt"})
            QTest::newRow(f) << QString::fromLatin1(f);
    }
    void identityRoundTrip() {
        QFETCH(QString, file);
        const QString path = kData + file;
        const QByteArray out = translate_with(path, [](const std::string& s) { return s; });
        QCOMPARE(out, read_file(path));
    }

    void markingTranslator_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("untouched");   // lines that must stay byte for byte
        QTest::addColumn<QStringList>("translated");  // text that must come out translated
        QTest::newRow("txt") << "sample.txt" << QStringList{"\n\n\n"}
                             << QStringList{"«Open the file menu.»",
                                            "    «Indented line with trailing spaces.»   \n",
                                            "«Last line without a newline»"};
        QTest::newRow("crlf.txt") << "crlf.txt" << QStringList{}
                                  << QStringList{"  «Second line.»\r\n"};
        QTest::newRow("md") << "sample.md"
                            << QStringList{"title: Sample",
                                           "```python",
                                           "    print(\"not translated\")",
                                           "plain fenced code",
                                           "    indented code block",
                                           "|------|-------------|",
                                           "a comment",
                                           "[ref]: https://example.com/ref",
                                           "***",
                                           "`apt install foo`",
                                           "](https://example.com/manual)",
                                           "https://example.org",
                                           "<br>",
                                           "<div class=\"note\">"}
                            << QStringList{"# «Getting started»",
                                           "> «Quoted text here.»",
                                           "- «First item»",
                                           "- [ ] «Task item»",
                                           "1. «Numbered item»",
                                           "| «foo»  | «A tool»      |",
                                           "«Install the **package** with» `apt",
                                           "[«the manual»](https://example.com/manual)"};
        QTest::newRow("srt") << "sample.srt"
                             << QStringList{"00:00:01,000 --> 00:00:04,000\n",
                                            "\n10\n01:02:03,004 --> 01:02:05,006 X1:100 X2:200 "
                                            "Y1:10 Y2:50\n"}
                             << QStringList{"«Hello, world!»", "<i>«two-line»</i>\n",
                                            "«subtitle cue.»"};
        QTest::newRow("vtt") << "sample.vtt"
                             << QStringList{"WEBVTT - Sample file\nKind: captions\n",
                                            "This note is not translated.",
                                            "::cue { color: yellow }",
                                            "intro\n00:00.000 --> 00:02.000 align:start\n"}
                             << QStringList{"<v Alice>«Good morning!»</v>",
                                            "«First line of the cue»\n«second line of the cue»"};
    }
    void markingTranslator() {
        QFETCH(QString, file);
        QFETCH(QStringList, untouched);
        QFETCH(QStringList, translated);
        const QString path = kData + file;
        const QByteArray in = read_file(path);
        int calls = 0;
        Document doc;
        const QByteArray out = translate_with(
            path,
            [&](const std::string& s) {
                ++calls;
                return mark(s);
            },
            &doc);
        QVERIFY(!doc.segments.empty());
        QCOMPARE(calls, static_cast<int>(doc.segments.size()));
        QCOMPARE(out.count("«"), static_cast<qsizetype>(doc.segments.size()));
        QCOMPARE(unmark(out), in);  // only the segments changed
        QCOMPARE(out.count('\n'), in.count('\n'));
        for (const QString& u : untouched) {
            QVERIFY2(in.contains(u.toUtf8()), qPrintable(u));
            QVERIFY2(out.contains(u.toUtf8()), qPrintable(u));
        }
        for (const QString& t : translated)
            QVERIFY2(out.contains(t.toUtf8()), qPrintable(t));
    }

    void multiLineTranslationKeepsLines() {
        const QString path = kData + "sample.srt";
        const QByteArray out =
            translate_with(path, [](const std::string& s) { return s + "\nextra\r\n"; });
        QCOMPARE(out.count('\n'), read_file(path).count('\n'));
    }

    void poRoundTrip() {
        const QString path = kData + "sample.po";
        const QByteArray in = read_file(path);
        Document doc;
        const QByteArray out = translate_with(
            path, [](const std::string& s) { return s; }, &doc);
        // Header, comments, msgctxt, msgids, translated and obsolete entries unchanged.
        QCOMPARE(po_without_msgstr(out), po_without_msgstr(in));
        QVERIFY(!out.contains("fuzzy"));
        QVERIFY(out.contains("msgstr \"Beenden\"\n"));
        QVERIFY(out.contains("msgstr \"Copied %d files to %s\"\n"));
        QVERIFY(out.contains("msgstr[0] \"%d file\"\nmsgstr[1] \"%d files\"\n"));
        QVERIFY(out.contains("#~ msgstr \"Veraltet\""));
        // The output is valid PO with nothing left to translate, and round-trips exactly.
        const DocumentFormat& f = format_for(path);
        const Document again = f.read(out, path);
        QCOMPARE(again.segments.size(), std::size_t(0));
        QCOMPARE(f.write(again, {}), out);
        // Multi-line strings keep their content and escaping.
        QVERIFY(std::find(doc.segments.begin(), doc.segments.end(),
                          "A long text that continues\non a second line with \"quotes\" and a "
                          "tab\t.") != doc.segments.end());
        QVERIFY(
            out.contains("msgstr \"\"\n\"A long text that continues\\n\"\n\"on a second "
                         "line with \\\"quotes\\\" and a tab\\t.\"\n"));
    }

    void poMarkingAndPlaceholders() {
        const QString path = kData + "sample.po";
        const QByteArray in = read_file(path);
        Document doc;
        const QByteArray out = translate_with(path, mark, &doc);
        QCOMPARE(doc.segments.size(), std::size_t(7));  // plural entry: msgid + msgid_plural
        QCOMPARE(po_without_msgstr(out), po_without_msgstr(in));
        QVERIFY(out.contains("msgstr \"«Open file»\"\n"));
        QVERIFY(out.contains("msgstr[0] \"«%d file»\"\nmsgstr[1] \"«%d files»\"\n"));
        QVERIFY(out.contains("msgstr \"«Hello %(name)s, you have {count} new messages»\""));
        QVERIFY(!out.contains("fuzzy"));
        QCOMPARE(format_for(path).entries_marked_for_review(doc, translate_segments(doc, mark)),
                 std::size_t(0));

        // A translator that loses placeholders: those entries get the source text and "fuzzy",
        // never a broken msgstr; the others are translated.
        const auto lose = [](const std::string& s) {
            std::string t = "X " + s;
            for (const char* p : {"%d", "%s", "%1", "{count}", "%(name)s"})
                for (std::size_t at; (at = t.find(p)) != std::string::npos;)
                    t.erase(at, std::strlen(p));
            return t;
        };
        const QByteArray lossy = translate_with(path, lose);
        // What the command line reports: as many entries as gained the flag.
        QCOMPARE(format_for(path).entries_marked_for_review(doc, translate_segments(doc, lose)),
                 std::size_t(lossy.count("fuzzy") - in.count("fuzzy")));
        QCOMPARE(lossy.count("fuzzy") - in.count("fuzzy"), 4);
        // An empty translation is marked too.
        const auto blank_open = [](const std::string& s) {
            return s == "Open file" ? std::string(" ") : s;
        };
        QVERIFY(translate_with(path, blank_open).contains("#, fuzzy\nmsgid \"Open file\""));
        QCOMPARE(
            format_for(path).entries_marked_for_review(doc, translate_segments(doc, blank_open)),
            std::size_t(1));
        QCOMPARE(po_without_msgstr(lossy), po_without_msgstr(in));
        QVERIFY(
            lossy.contains("#, c-format, fuzzy\nmsgid \"Copied %d files to %s\"\nmsgstr "
                           "\"Copied %d files to %s\"\n"));
        QVERIFY(lossy.contains("#, fuzzy\nmsgid \"Saved to %1\"\nmsgstr \"Saved to %1\"\n"));
        QVERIFY(lossy.contains("#, python-format, fuzzy\n"));
        QVERIFY(lossy.contains("msgstr \"X Open file\"\n"));
        QVERIFY(lossy.contains("#, c-format, fuzzy\nmsgid \"%d file\""));
        // Reordered or doubled placeholders.
        QCOMPARE(po_placeholders("%1 of %2"), po_placeholders("%2 von %1"));
        QVERIFY(po_placeholders("%s at %d") != po_placeholders("%d at %s"));
        QVERIFY(po_placeholders("{a} {b}") != po_placeholders("{a} {a}"));
    }

    // A PO file is read in the charset its header declares (as gettext does) and written as
    // UTF-8, its header saying so; the Language field is the target language.
    void poDeclaredCharset_data() {
        QTest::addColumn<QByteArray>("charset");
        QTest::addColumn<QByteArray>("msgid");  // in that charset
        QTest::addColumn<QString>("expected");
        QTest::newRow("ISO-8859-1") << QByteArray("ISO-8859-1") << QByteArray("Caf\xE9 cr\xE8me")
                                    << QString::fromUtf8("Café crème");
        QTest::newRow("windows-1252")
            << QByteArray("windows-1252") << QByteArray("\x80 5 \x93quoted\x94")
            << QString::fromUtf8("€ 5 “quoted”");
        QTest::newRow("ISO-8859-2") << QByteArray("ISO-8859-2")
                                    << QByteArray("Za\xBF\xF3\xB3\xE6 g\xEA\xB6l\xB1 ja\xBC\xF1")
                                    << QString::fromUtf8("Zażółć gęślą jaźń");
        QTest::newRow("KOI8-R") << QByteArray("KOI8-R") << QByteArray("\xF0\xD2\xC9\xD7\xC5\xD4")
                                << QString::fromUtf8("Привет");
    }
    void poDeclaredCharset() {
        QFETCH(QByteArray, charset);
        QFETCH(QByteArray, msgid);
        QFETCH(QString, expected);
        const QByteArray po =
            "# A catalog\n#, fuzzy\nmsgid \"\"\nmsgstr \"\"\n"
            "\"Project-Id-Version: sample 1.0\\n\"\n"
            "\"Language-Team: Team\\n\"\n"
            "\"Content-Type: text/plain; charset=" +
            charset + "\\n\"\n\n#: main.c:1\nmsgid \"" + msgid + "\"\nmsgstr \"\"\n";
        Document doc = po_format().read(po, "legacy.po");
        QCOMPARE(doc.segments, std::vector<std::string>{expected.toStdString()});
        doc.target_language = "de";
        const QByteArray out = po_format().write(doc, {mark(doc.segments[0])});
        const QByteArray header =
            "# A catalog\n#, fuzzy\nmsgid \"\"\nmsgstr \"\"\n"
            "\"Project-Id-Version: sample 1.0\\n\"\n\"Language-Team: Team\\n\"\n"
            "\"Language: de\\n\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\n";
        QCOMPARE(out, header + "#: main.c:1\nmsgid \"" + expected.toUtf8() + "\"\nmsgstr \"«" +
                          expected.toUtf8() + "»\"\n");
        // The output reads back as UTF-8, nothing left to translate.
        QCOMPARE(po_format().read(out, "legacy.de.po").segments.size(), std::size_t(0));
    }

    // The Language field: replaced, or added last; gettext's form of the code.
    // A plural entry gets the forms of the target language, the header saying so (as msginit
    // writes it); GNU gettext's msgfmt --check, the reference, accepts the catalog for every
    // language mtdesk translates into.
    void poPluralFormsOfTheTarget() {
        const QString path = kData + "sample.po";
        const DocumentFormat& f = format_for(path);
        Document doc = f.read(read_file(path), path);
        const std::vector<std::string> t = translate_segments(doc, mark);
        auto write_for = [&](std::string_view language) {
            doc.target_language = std::string(language);
            return f.write(doc, t);
        };
        const QByteArray ru = write_for("ru");
        QVERIFY2(ru.contains("\"Plural-Forms: nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : "
                             "n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);\\n\"\n"),
                 ru.constData());
        QVERIFY(
            ru.contains("msgid_plural \"%d files\"\nmsgstr[0] \"«%d file»\"\n"
                        "msgstr[1] \"«%d files»\"\nmsgstr[2] \"«%d files»\"\n\n"));
        const QByteArray zh = write_for("zh");  // one form: the plural's translation
        QVERIFY(zh.contains("\"Plural-Forms: nplurals=1; plural=0;\\n\"\n"));
        QVERIFY(zh.contains("msgid_plural \"%d files\"\nmsgstr[0] \"«%d files»\"\n\n"));
        QCOMPARE(zh.count("msgstr[1]"), 0);
        const QByteArray de = write_for("de");  // two, as the file has
        QVERIFY(de.contains("msgstr[0] \"«%d file»\"\nmsgstr[1] \"«%d files»\"\n\n"));
        QCOMPARE(de.count("Plural-Forms"), 1);

        QTemporaryDir tmp;
        for (const Language& l : languages()) {
            QVERIFY2(gettext_plural_forms(l.code), l.code.data());
            const QString file =
                tmp.filePath(QString::fromLatin1(l.code.data(), qsizetype(l.code.size())) + ".po");
            QFile out(file);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(write_for(l.code));
            out.close();
            QProcess msgfmt;  // tools/install-deps.sh installs gettext
            msgfmt.start(QStringLiteral("msgfmt"), {"--check", "-o", "/dev/null", file});
            QVERIFY2(msgfmt.waitForFinished(), "msgfmt (gettext) is not installed");
            QVERIFY2(
                msgfmt.exitStatus() == QProcess::NormalExit && msgfmt.exitCode() == 0,
                (l.code.data() + QByteArray(": ") + msgfmt.readAllStandardError()).constData());
        }
        // A catalog with translated plurals keeps its own forms (a new header would not match
        // them).
        Document partial = f.read(
            "msgid \"\"\nmsgstr \"\"\n\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\"\n\n"
            "msgid \"a\"\nmsgid_plural \"as\"\nmsgstr[0] \"x\"\nmsgstr[1] \"xs\"\n\n"
            "msgid \"b\"\nmsgid_plural \"bs\"\nmsgstr[0] \"\"\nmsgstr[1] \"\"\n",
            "p.po");
        partial.target_language = "ru";
        const QByteArray kept = f.write(partial, {"y", "ys"});
        QVERIFY2(kept.contains("nplurals=2; plural=(n != 1);") &&
                     kept.contains("msgstr[0] \"y\"\nmsgstr[1] \"ys\"\n") &&
                     !kept.contains("msgstr[2]"),
                 kept.constData());
    }

    // A singular without the plural's number ("One file deleted" / "%d files deleted"): the
    // form of 1 gets the singular's translation only where it is used for 1 alone; where it
    // stands for other numbers too (Russian 21, 31 ...; French 0) it gets the plural's, with
    // the %d. msgfmt --check accepts the catalog for every target language.
    void poSingularWithoutTheNumber() {
        Document doc = po_format().read(
            "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n"
            "\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\"\n\n#, c-format\n"
            "msgid \"One file deleted\"\nmsgid_plural \"%d files deleted\"\n"
            "msgstr[0] \"\"\nmsgstr[1] \"\"\n",
            "plural.po");
        const std::vector<std::string> t = translate_segments(doc, mark);
        auto write_for = [&](std::string_view language) {
            doc.target_language = std::string(language);
            return po_format().write(doc, t);
        };
        QVERIFY(
            write_for("ru").contains("msgstr[0] \"«%d files deleted»\"\n"
                                     "msgstr[1] \"«%d files deleted»\"\n"
                                     "msgstr[2] \"«%d files deleted»\"\n"));
        QVERIFY(
            write_for("fr").contains("msgstr[0] \"«%d files deleted»\"\n"
                                     "msgstr[1] \"«%d files deleted»\"\n"));
        QVERIFY(
            write_for("de").contains("msgstr[0] \"«One file deleted»\"\n"
                                     "msgstr[1] \"«%d files deleted»\"\n"));
        QVERIFY(
            write_for("pl").contains("msgstr[0] \"«One file deleted»\"\n"
                                     "msgstr[1] \"«%d files deleted»\"\n"));
        // Arabic's form 1 is n == 1; form 0 is zero.
        QVERIFY(
            write_for("ar").contains("msgstr[0] \"«%d files deleted»\"\n"
                                     "msgstr[1] \"«One file deleted»\"\n"
                                     "msgstr[2] \"«%d files deleted»\"\n"));
        QTemporaryDir tmp;
        for (const Language& l : languages()) {
            const QString file =
                tmp.filePath(QString::fromLatin1(l.code.data(), qsizetype(l.code.size())) + ".po");
            QVERIFY(mtdesk::test::write_bytes(file, write_for(l.code)));
            QProcess msgfmt;
            msgfmt.start(QStringLiteral("msgfmt"), {"--check", "-o", "/dev/null", file});
            QVERIFY2(msgfmt.waitForFinished(), "msgfmt (gettext) is not installed");
            QVERIFY2(
                msgfmt.exitStatus() == QProcess::NormalExit && msgfmt.exitCode() == 0,
                (l.code.data() + QByteArray(": ") + msgfmt.readAllStandardError()).constData());
        }
    }

    void poLanguageField() {
        const QByteArray head = "msgid \"\"\nmsgstr \"\"\n\"Project-Id-Version: x\\n\"\n";
        const QByteArray tail =
            "\"Content-Type: text/plain; charset=UTF-8\\n\"\n\nmsgid \"Open\"\nmsgstr \"\"\n";
        Document doc = po_format().read(head + "\"Language: fr\\n\"\n" + tail, "a.po");
        doc.target_language = "zh-Hant";
        QByteArray out = po_format().write(doc, {"開啟"});
        QVERIFY2(
            out.startsWith(head + "\"Language: zh_Hant\\n\"\n" + tail.left(tail.indexOf('\n'))),
            out.constData());
        QCOMPARE(out.count("Language"), 1);
        doc = po_format().read(head + tail, "a.po");
        doc.target_language = "ja";
        out = po_format().write(doc, {"開く"});
        QVERIFY2(out.contains("charset=UTF-8\\n\"\n\"Language: ja\\n\"\n\nmsgid"), out.constData());
        // A template's placeholder charset: read as UTF-8, written as UTF-8 saying so.
        doc = po_format().read(
            "msgid \"\"\nmsgstr \"\"\n\"Language: \\n\"\n"
            "\"Content-Type: text/plain; charset=CHARSET\\n\"\n\n"
            "msgid \"Café\"\nmsgstr \"\"\n",
            "a.pot");
        doc.target_language = "de";
        QCOMPARE(po_format().write(doc, {"Kaffee"}),
                 QByteArray("msgid \"\"\nmsgstr \"\"\n\"Language: de\\n\"\n"
                            "\"Content-Type: text/plain; charset=UTF-8\\n\"\n\n"
                            "msgid \"Café\"\nmsgstr \"Kaffee\"\n"));
    }

    // Errors name the file, and the charset the header declares (not a guess).
    void poCharsetErrors_data() {
        QTest::addColumn<QByteArray>("po");
        QTest::addColumn<QString>("problem");
        const QByteArray entry = "\n\nmsgid \"Caf\xE9\"\nmsgstr \"\"\n";
        QTest::newRow("unknown charset")
            << "msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=X-NO-SUCH-9\\n\"" + entry
            << "its header declares charset X-NO-SUCH-9, which this system cannot decode";
        QTest::newRow("no charset") << "msgid \"\"\nmsgstr \"Project-Id-Version: x\\n\"" + entry
                                    << "is not UTF-8 and its header declares no charset";
        QTest::newRow("no header")
            << entry.mid(2) << "is not UTF-8 and its header declares no charset";
        QTest::newRow("template charset")
            << "msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=CHARSET\\n\"" + entry
            << "is not UTF-8 and its header declares no charset";
        QTest::newRow("not UTF-8 as declared")
            << "msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=UTF-8\\n\"" + entry
            << "is not valid UTF-8 text (the charset its header declares)";
        QTest::newRow("not shift_jis as declared")
            << QByteArray(
                   "msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=Shift_JIS\\n\"\n\n"
                   "msgid \"\x82\"\nmsgstr \"\"\n")
            << "is not valid Shift_JIS text (the charset its header declares)";
    }
    void poCharsetErrors() {
        QFETCH(QByteArray, po);
        QFETCH(QString, problem);
        verify_format_read_fails(po_format(), po, QStringLiteral("catalog.po"), problem);
    }

    void legacyEncodings_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QTest::newRow("latin1") << "latin1.txt"
                                << QString::fromUtf8("Café crème brûlée à la façon de l'été.");
        QTest::newRow("gb18030") << "gb18030.txt"
                                 << QString::fromUtf8(
                                        "这是一个中文文本文件，用于测试编码检测功能。");
        QTest::newRow("shift_jis")
            << "shiftjis.txt"
            << QString::fromUtf8(
                   "これは日本語のテキストファイルです。文字コードの検出をテストします。");
    }
    void legacyEncodings() {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        const QString path = kData + file;
        Document doc;
        const QByteArray out = translate_with(
            path, [](const std::string& s) { return s; }, &doc);
        QCOMPARE(doc.segments.size(), std::size_t(file == "gb18030.txt" ? 3 : 2));
        QCOMPARE(QString::fromStdString(doc.segments[0]), expected);
        QVERIFY(out.startsWith(expected.toUtf8()));  // written as UTF-8
        QCOMPARE(out.count('\n'), read_file(path).count('\n'));
    }

    void brokenInputsNameTheFile_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("problem");
        QTest::newRow("srt timing") << "broken.srt"
                                    << "line 6";
        QTest::newRow("po string") << "broken.po"
                                   << "unterminated string";
        QTest::newRow("vtt header") << "broken.vtt"
                                    << "WEBVTT";
        QTest::newRow("unknown extension") << "notes.xyz"
                                           << "unsupported document type";
    }
    void brokenInputsNameTheFile() {
        QFETCH(QString, file);
        QFETCH(QString, problem);
        try {
            (void)read_document(kData + file);
            QFAIL("no error");
        } catch (const FileError& e) {
            QVERIFY2(QString::fromStdString(e.file()).endsWith(file), e.what());
            QVERIFY2(QString::fromUtf8(e.what()).contains(problem), e.what());
        }
    }

    // Minutes and seconds go up to 59, milliseconds up to 999; the error names the file and
    // the line of the timing.
    void srtTimingOutOfRange_data() {
        QTest::addColumn<QByteArray>("srt");
        QTest::addColumn<QString>("problem");
        QTest::newRow("seconds 99") << QByteArray("1\n00:00:99,000 --> 00:00:02,000\nHello\n")
                                    << "line 2: malformed cue timing '00:00:99,000 --> "
                                       "00:00:02,000': minutes and seconds go up to 59";
        QTest::newRow("end minutes 60")
            << QByteArray(
                   "1\n00:00:01,000 --> 00:00:02,000\nOne\n\n2\n00:00:03,000 --> 00:60:00,000\n"
                   "Two\n")
            << "line 6: malformed cue timing";
        QTest::newRow("start minutes 75")
            << QByteArray("1\n00:75:00,000 --> 01:16:00,000\nHello\n") << "line 2: malformed";
        QTest::newRow("milliseconds 1000")
            << QByteArray("1\n00:00:01,1000 --> 00:00:02,000\nHello\n")
            << "line 2: malformed cue timing";
    }
    void srtTimingOutOfRange() {
        QFETCH(QByteArray, srt);
        QFETCH(QString, problem);
        verify_format_read_fails(srt_format(), srt, QStringLiteral("movie.srt"), problem);
    }

    // A timing line with a broken arrow is reported as a malformed timing, on its own line.
    void malformedArrow() {
        verify_format_read_fails(srt_format(), "1\n00:00:01,000 -> 00:00:02,000\nOpen the file\n",
                                 QStringLiteral("movie.srt"),
                                 "line 2: malformed cue timing '00:00:01,000 -> 00:00:02,000'");
        verify_format_read_fails(srt_format(), "1\nOpen the file\n", QStringLiteral("movie.srt"),
                                 "line 2: cue 1 has no timing line");
        verify_format_read_fails(
            vtt_format(),
            "WEBVTT\n\n00:01.000 --> 00:02.000\nOpen the file\n\n00:02.000 -> 00:03.000\nSave\n",
            QStringLiteral("talk.vtt"), "line 6: malformed cue timing '00:02.000 -> 00:03.000'");
        verify_format_read_fails(vtt_format(), "WEBVTT\n\nintro\n00:02.000 -> 00:03.000\nSave\n",
                                 QStringLiteral("talk.vtt"),
                                 "line 4: malformed cue timing '00:02.000 -> 00:03.000'");
        // A cue identifier that looks like a time is still one.
        QCOMPARE(vtt_format()
                     .read("WEBVTT\n\n10:30\n00:02.000 --> 00:03.000\nSave\n", "talk.vtt")
                     .segments,
                 std::vector<std::string>{"Save"});
    }

    // Times at the top of their ranges, and an end before the start (real files have that),
    // are read.
    void srtTimingEdges() {
        const QByteArray srt =
            "1\n00:59:59,999 --> 01:00:00,000\nTop\n\n2\n00:00:05,000 --> 00:00:02,000\nBack\n";
        const Document doc = srt_format().read(srt, "movie.srt");
        QCOMPARE(doc.segments, (std::vector<std::string>{"Top", "Back"}));
    }

    // WebVTT: minutes and seconds (hours optional) up to 59, as in SubRip.
    void vttTimingRange() {
        const QByteArray good =
            "WEBVTT\n\n00:59.999 --> 01:02:00.000\nTop\n\n"
            "00:05.000 --> 00:02.000\nBack\n";
        QCOMPARE(vtt_format().read(good, "talk.vtt").segments,
                 (std::vector<std::string>{"Top", "Back"}));
        for (const QByteArray& cue :
             {QByteArray("00:75.000 --> 00:80.000"), QByteArray("00:00:01.000 --> 00:60:00.000"),
              QByteArray("01:61:00.000 --> 01:62:00.000")}) {
            verify_format_read_fails(
                vtt_format(), "WEBVTT\n\nx\n" + cue + "\nHello\n", QStringLiteral("talk.vtt"),
                "line 4: malformed cue timing '" + cue + "': minutes and seconds go up to 59");
        }
    }

    // A line of a megabyte (minified text, an inline data URL, a broken export) is read like
    // any other: no format's parsing may need stack space per character of a line.
    void longLines_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("segments");
        const QByteArray x(1 << 20, 'x');
        const QByteArray words = QByteArray("Open the file. ").repeated((1 << 20) / 15);
        QTest::newRow("po msgstr") << "a.po"
                                   << "msgid \"Open the file\"\nmsgstr \"" + x + "\"\n"
                                   << 0;
        QTest::newRow("po msgid") << "a.po"
                                  << "msgid \"<b " + x + ">\"\nmsgstr \"\"\n"
                                  << 1;
        QTest::newRow("srt timing") << "a.srt"
                                    << "1\n00:00:01,000 --> 00:00:02,000 " + x + "\nHello\n"
                                    << 1;
        QTest::newRow("srt text") << "a.srt"
                                  << "1\n00:00:01,000 --> 00:00:02,000\n" + words + "\n"
                                  << 1;
        QTest::newRow("vtt note") << "a.vtt"
                                  << "WEBVTT\n\nNOTE " + x + "\n\n00:01.000 --> 00:02.000\nHi\n"
                                  << 1;
        QTest::newRow("md link definition") << "a.md"
                                            << "[ref]: " + x + "\n\nText\n"
                                            << 1;
        QTest::newRow("md text") << "a.md"
                                 << "> - " + words + "\n"
                                 << 1;
        QTest::newRow("md quotes") << "a.md" << QByteArray(1 << 20, '>') + " text\n" << 1;
        QTest::newRow("txt url") << "a.txt"
                                 << "See https://example.com/" + x + " now\n"
                                 << 1;
        QTest::newRow("html") << "a.html"
                              << "<p title=\"" + x + "\">" + words + "</p>\n"
                              << 2;
    }
    void longLines() {
        QFETCH(QString, name);
        QFETCH(QByteArray, bytes);
        QFETCH(int, segments);
        const DocumentFormat& f = format_for(name);
        const Document doc = f.read(bytes, name);
        QCOMPARE(doc.segments.size(), std::size_t(segments));
        const std::vector<std::string> same = doc.segments;
        QVERIFY(check_placeholders(doc, same).empty());
        const QByteArray out = f.write(doc, same);
        if (!name.endsWith(".po")) {
            QCOMPARE(out, bytes);
        } else {  // the msgstr filled with the msgid, whose placeholders it has
            QVERIFY(!out.contains("fuzzy"));
            QCOMPARE(f.read(out, name).segments.size(), std::size_t(0));
        }
    }

    // No document takes gigabytes of memory: a file larger than its format's limit, or one
    // with more than a million segments, fails with the limit named.
    void sizeLimits() {
        QTemporaryDir dir;
        const QString big = dir.filePath("big.txt");
        QFile f(big);
        QVERIFY(f.open(QIODevice::WriteOnly) && f.resize((qint64{256} << 20) + 1));  // sparse
        f.close();
        mtdesk::test::verify_read_fails(big,
                                        "is 257 MiB; mtdesk reads .txt documents of at most "
                                        "256 MiB");
        const QString many = dir.filePath("many.txt");
        QVERIFY(mtdesk::test::write_bytes(many, QByteArray("a\n").repeated(kMaxSegments)));
        QCOMPARE(read_document(many).segments.size(), kMaxSegments);
        QVERIFY(mtdesk::test::write_bytes(many, QByteArray("a\n").repeated(kMaxSegments + 1)));
        mtdesk::test::verify_read_fails(many, "has more than 1000000 segments");
        const QString html = dir.filePath("many.html");
        QVERIFY(mtdesk::test::write_bytes(html, QByteArray("<p>a</p>").repeated(kMaxSegments + 1)));
        mtdesk::test::verify_read_fails(html, "has more than 1000000 segments");
    }

    // The command line goes on with the next file after a long line, as after any other.
    void cliLongLine() {
        if (!QFile::exists(kBinary)) QSKIP("mtdesk executable not built");
        QTemporaryDir dir;
        QVERIFY(mtdesk::test::write_bytes(
            dir.filePath("p.po"),
            "msgid \"Open the file\"\nmsgstr \"" + QByteArray(50000, 'x') + "\"\n"));
        QVERIFY(mtdesk::test::write_bytes(dir.filePath("ok.txt"), "Open the file\n"));
        QProcess p;
        p.start(kBinary, {"translate", "--model", kModel, "--from", "en", "--to", "de", "--greedy",
                          "--max-tokens", "4", dir.filePath("p.po"), dir.filePath("ok.txt")});
        QVERIFY(p.waitForFinished(300000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(QFile::exists(dir.filePath("p.de.po")));
        QVERIFY(QFile::exists(dir.filePath("ok.de.txt")));
    }

    // A dangling symbolic link where the translation would go takes that name: the output goes
    // to the next free name, and the link's target is not created.
    void cliDanglingSymlink() {
        if (!QFile::exists(kBinary)) QSKIP("mtdesk executable not built");
        QTemporaryDir dir;
        QVERIFY(mtdesk::test::write_bytes(dir.filePath("b.txt"), "Open the file\n"));
        QVERIFY(QDir(dir.path()).mkdir("elsewhere"));
        const QString victim = dir.filePath("elsewhere/victim.txt");
        QVERIFY(QFile::link(victim, dir.filePath("b.de.txt")));
        QProcess p;
        p.start(kBinary, {"translate", "--model", kModel, "--from", "en", "--to", "de", "--greedy",
                          "--max-tokens", "4", dir.filePath("b.txt")});
        QVERIFY(p.waitForFinished(300000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QVERIFY(!QFileInfo::exists(victim));
        QVERIFY(QFileInfo(dir.filePath("b.de.txt")).isSymLink());
        QVERIFY(QFileInfo(dir.filePath("b.de (2).txt")).isFile());
    }

    // A folder where the translation cannot be written fails its file before it is translated
    // (not after all the work); the other files go on.
    void cliReadOnlyFolder() {
        if (!QFile::exists(kBinary)) QSKIP("mtdesk executable not built");
        QTemporaryDir dir;
        QDir(dir.path()).mkdir("ro");
        QDir(dir.path()).mkdir("rw");
        const QString ro = dir.filePath("ro"), rw = dir.filePath("rw");
        QVERIFY(mtdesk::test::write_bytes(ro + "/a.txt", "Open the file\n"));
        QVERIFY(mtdesk::test::write_bytes(rw + "/b.txt", "Save the document\n"));
        const auto rx = QFile::ReadOwner | QFile::ExeOwner | QFile::ReadGroup | QFile::ExeGroup |
                        QFile::ReadOther | QFile::ExeOther;
        QVERIFY(QFile::setPermissions(dir.path(), rx | QFile::WriteOwner));
        QVERIFY(QFile::setPermissions(ro, rx));
        QVERIFY(QFile::setPermissions(
            rw, rx | QFile::WriteOwner | QFile::WriteGroup | QFile::WriteOther));
        QProcess p;
        // Root may write anywhere: the program runs as "nobody" then.
        if (geteuid() == 0)
            p.setChildProcessModifier([] {
                if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
                    _exit(99);
            });
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("HOME", rw);
        p.setProcessEnvironment(env);
        p.start(kBinary, {"translate", "--model", kModel, "--from", "en", "--to", "de", "--greedy",
                          "--max-tokens", "4", ro + "/a.txt", rw + "/b.txt"});
        QVERIFY(p.waitForFinished(300000));
        const QByteArray err = p.readAllStandardError();
        QFile::setPermissions(ro, rx | QFile::WriteOwner);  // so that the folder can be removed
        QCOMPARE(p.exitCode(), 1);
        QVERIFY2(
            err.contains((ro + "/a.txt: its translation cannot be written into " + ro).toUtf8()) &&
                err.contains("nothing was translated"),
            err.constData());
        QVERIFY(!QFileInfo::exists(ro + "/a.de.txt"));
        QVERIFY(QFileInfo(rw + "/b.de.txt").isFile());
    }

    // WebVTT timestamp tags inside cue text (karaoke timing) are markup, not text: they stay
    // as they are, like <c.yellow>, and never reach the translator.
    void vttTimestampTags() {
        const QByteArray vtt =
            "WEBVTT\n\n00:00:07.000 --> 00:00:09.000\n"
            "<c.yellow>Print the page</c> <00:00:08.000>now <01:00:08.500>please\n";
        const Document doc = vtt_format().read(vtt, "karaoke.vtt");
        QCOMPARE(doc.segments, (std::vector<std::string>{"Print the page", "now", "please"}));
        QCOMPARE(vtt_format().write(doc, translate_segments(doc, mark)),
                 QByteArray("WEBVTT\n\n00:00:07.000 --> 00:00:09.000\n<c.yellow>«Print the "
                            "page»</c> <00:00:08.000>«now» <01:00:08.500>«please»\n"));
    }

    // Old Mac line ends (CR alone) separate lines as LF and CRLF do, and stay as they were.
    void carriageReturnLineEnds() {
        const QByteArray txt = "Open the file\rSave the document\r\rPrint\r\nQuit";
        const Document doc = text_format().read(txt, "mac.txt");
        QCOMPARE(doc.segments,
                 (std::vector<std::string>{"Open the file", "Save the document", "Print", "Quit"}));
        QCOMPARE(text_format().write(doc, translate_segments(doc, mark)),
                 QByteArray("«Open the file»\r«Save the document»\r\r«Print»\r\n«Quit»"));
        const QByteArray srt =
            "1\r00:00:01,000 --> 00:00:02,000\rOpen the file\r\r2\r"
            "00:00:03,000 --> 00:00:04,000\rSave\r";
        const Document cues = srt_format().read(srt, "mac.srt");
        QCOMPARE(cues.segments, (std::vector<std::string>{"Open the file", "Save"}));
        QCOMPARE(srt_format().write(cues, cues.segments), srt);
    }

    void undecodableText() {
        const QByteArray binary("\x00\x01\x02\xff", 4);
        QVERIFY_THROWS_EXCEPTION(FileError, text_format().read(binary, "bin.txt"));
        try {
            text_format().read(binary, "bin.txt");
        } catch (const FileError& e) {
            QCOMPARE(QString::fromStdString(e.file()), QStringLiteral("bin.txt"));
        }
    }

    void cliEndToEnd() {
        if (!QFile::exists(kBinary)) QSKIP("mtdesk executable not built");
        QTemporaryDir dir;
        for (const char* f : {"sample.srt", "sample.po", "broken.srt", "broken.po", "notes.xyz"})
            QVERIFY(QFile::copy(kData + f, dir.filePath(f)));
        QFile keep(dir.filePath("sample.zh.po"));  // an existing file is never replaced
        QVERIFY(keep.open(QIODevice::WriteOnly));
        keep.write("keep me");
        keep.close();
        QProcess p;
        p.start(kBinary,
                {"translate", "--model", kModel, "--to", "zh", "--greedy", "--max-tokens", "4",
                 dir.filePath("broken.srt"), dir.filePath("sample.srt"), dir.filePath("notes.xyz"),
                 dir.filePath("broken.po"), dir.filePath("sample.po")});
        QVERIFY(p.waitForFinished(300000));
        const QByteArray err = p.readAllStandardError();
        QCOMPARE(p.exitCode(), 1);
        QVERIFY2(
            err.contains("broken.srt") && err.contains("broken.po") && err.contains("notes.xyz"),
            err.constData());
        QVERIFY(!QFile::exists(dir.filePath("broken.zh.srt")));
        QVERIFY(!QFile::exists(dir.filePath("broken.zh.po")));

        // .srt: same lines, cue numbers and timings untouched.
        const QList<QByteArray> in = read_file(kData + "sample.srt").split('\n');
        const QList<QByteArray> out = read_file(dir.filePath("sample.zh.srt")).split('\n');
        QCOMPARE(out.size(), in.size());
        for (qsizetype i = 0; i < in.size(); ++i)
            if (in[i].contains("-->") || in[i].trimmed().isEmpty() || in[i].trimmed().toInt() > 0)
                QCOMPARE(out[i], in[i]);

        // .po: msgids untouched; every msgstr filled (or the entry marked fuzzy); valid PO.
        QCOMPARE(read_file(dir.filePath("sample.zh.po")), QByteArray("keep me"));
        const QString po = dir.filePath("sample.zh (2).po");
        const QByteArray translated = read_file(po);
        QCOMPARE(po_without_msgstr(translated), po_without_msgstr(read_file(kData + "sample.po")));
        const Document again = po_format().read(translated, po);
        QCOMPARE(again.segments.size(), std::size_t(0));  // no empty msgstr left
        QVERIFY(!translated.contains("msgstr \"\"\nmsgid") &&
                !translated.contains("msgstr \"\"\n\n"));
        QVERIFY(!translated.contains("msgstr[1] \"\"\n"));
        QVERIFY(translated.contains("\"Language: zh\\n\"\n"));  // the target language
    }
};

QTEST_GUILESS_MAIN(TestDocuments)
#include "test_documents.moc"
