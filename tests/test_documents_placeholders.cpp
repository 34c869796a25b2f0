// What every document format shares: the placeholder check (%s, %1, {name}, tags, URLs, code
// spans), the HY-MT1.5 format tags of segments with inline markup and their run-by-run
// fallback, translate_segments with and without the formatted prompt, and the CLI's report of
// translations that lost placeholders.

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

#include "document_test_helpers.h"
#include "documents/document.h"
#include "documents/formats.h"
#include "documents/placeholders.h"
#include "documents/tagged.h"
#include "mtdesk/error.h"

using namespace mtdesk;
using namespace mtdesk::app::documents;
using mtdesk::test::mark;

using Strings = std::vector<std::string>;

class TestDocumentsPlaceholders : public QObject {
    Q_OBJECT

  private slots:
    // Markdown strong emphasis: the markers are counted, so a translation that drops one is
    // reported ("**file**" -> "** Datei").
    void markdownEmphasisMarkersCount() {
        const auto found = placeholders("Open the **file** or __this__ one");
        QCOMPARE(std::count(found.begin(), found.end(), std::string("**")), 2);
        QCOMPARE(std::count(found.begin(), found.end(), std::string("__")), 2);
        Document doc;
        doc.add_segment("Open the **file**");
        doc.add_segment("Save **all**");
        const auto issues = check_placeholders(doc, {"Öffne die ** Datei", "**Alle** speichern"});
        QCOMPARE(issues.size(), size_t(1));
        QCOMPARE(issues[0].segment, size_t(0));
        QCOMPARE(issues[0].missing, std::vector<std::string>{"**"});
    }

    void placeholdersFound_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("expected");  // sorted
        QTest::newRow("printf") << "Copied %d files to %s (%-5.2f%%)"
                                << QStringList{"%-5.2f", "%d", "%s"};
        QTest::newRow("positional")
            << "%2$s of %1$s, %(name)s" << QStringList{"%(name)s", "%1$s", "%2$s"};
        QTest::newRow("qt") << "%n file(s) in %1, %L2" << QStringList{"%1", "%L2", "%n"};
        QTest::newRow("braces") << "Hello {name}, {0} and {}" << QStringList{"{0}", "{name}", "{}"};
        QTest::newRow("tags") << "<b>Bold</b> <br/> <a href=\"x\">link</a> <s1>t</s1>"
                              << QStringList{"</a>", "</b>",  "</s1>", "<a href=\"x\">",
                                             "<b>",  "<br/>", "<s1>"};
        QTest::newRow("urls") << "See https://example.com/a?b=1. Or mailto:me@example.org, "
                                 "ftp://x.org/f)"
                              << QStringList{"ftp://x.org/f", "https://example.com/a?b=1",
                                             "mailto:me@example.org"};
        QTest::newRow("code") << "Run `make install` now" << QStringList{"`make install`"};
        QTest::newRow("plain percent") << "100% sure, 50 % off, 3 < 4" << QStringList{};
    }
    void placeholdersFound() {
        QFETCH(QString, text);
        QFETCH(QStringList, expected);
        QStringList got;
        for (const std::string& p : placeholders(text.toStdString()))
            got << QString::fromStdString(p);
        QCOMPARE(got, expected);
    }

    void checkFindsLostAndAdded() {
        Document doc;
        doc.add_segment("Copy %s to %d files");
        doc.add_segment("Open {name}");
        doc.add_segment("No placeholders here");
        doc.add_segment("See <b>this</b>");
        const auto issues = check_placeholders(
            doc, {"Kopiere %s nach %d Dateien", "Öffne", "Keine %s hier", "Siehe <b>das"});
        QCOMPARE(issues.size(), std::size_t(3));
        QCOMPARE(issues[0].segment, std::size_t(1));
        QCOMPARE(issues[0].missing, Strings{"{name}"});
        QCOMPARE(issues[0].added, Strings{});
        QCOMPARE(issues[1].segment, std::size_t(2));
        QCOMPARE(issues[1].added, Strings{"%s"});
        QCOMPARE(issues[2].missing, Strings{"</b>"});
        // Reordered placeholders are fine; a doubled one is not.
        QVERIFY(check_placeholders(doc, {"%d Dateien: %s", "{name} öffnen", "x", "<b>Das</b>"})
                    .empty());
        QCOMPARE(check_placeholders(doc, {"%s %s %d", "{name}", "x", "<b>a</b>"}).size(),
                 std::size_t(1));
        QVERIFY_THROWS_EXCEPTION(Error, check_placeholders(doc, {"one"}));
    }

    void formatTags() {
        const std::string s = "Click <s1>here</s1> or <s2>there <s3>now</s3></s2>.";
        const auto tokens = tag_tokens(s);
        QCOMPARE(tokens.size(), std::size_t(12));
        QCOMPARE(tokens[1].kind, TagToken::Kind::Open);
        QCOMPARE(tokens[1].id, 1);
        QCOMPARE(tokens[10].kind, TagToken::Kind::Close);
        QCOMPARE(tokens[10].id, 2);
        QCOMPARE(tokens[11].text, std::string("."));
        QCOMPARE(strip_tags(s), std::string("Click here or there now."));
        QVERIFY(contains_tag(s));
        for (const char* not_tag : {"<s>", "<s0>", "<s1 >", "< s1>", "<b>", "<s1", "s1>"})
            QVERIFY2(!contains_tag(not_tag), not_tag);
        QVERIFY(contains_tag("x</s12>"));
        QCOMPARE(open_tag(3), std::string("<s3>"));
        QCOMPARE(close_tag(3), std::string("</s3>"));

        QVERIFY(same_tags(s, "Klick <s1>hier</s1> oder <s2>dort <s3>jetzt</s3></s2>."));
        QVERIFY(!same_tags(s, "Klick <s1>hier</s1> oder dort jetzt."));
        QVERIFY(!same_tags(s, "<s2>dort <s3>jetzt</s3></s2> oder <s1>hier</s1>"));  // reordered
        QVERIFY(!same_tags(s, s + "<s4></s4>"));
        QVERIFY(usable_formatted("a <s1>b</s1>", "x <s1>y</s1>"));
        QVERIFY(!usable_formatted("a <s1>b</s1>", "<target>x <s1>y</s1>"));
        QVERIFY(!usable_formatted("a <s1>b</s1>", "x <s1>y</s1> <sn></sn>"));
        QVERIFY(!usable_formatted("a <s1>b</s1>", "<source>a <s1>b</s1></source>"));
    }

    void translateRuns() {
        Strings runs;
        const std::string out =
            translate_runs("  Click <s1>here </s1>to <s2>42</s2> go.\n", [&](const std::string& r) {
                runs.push_back(r);
                return "[" + r + "]\nx";
            });
        QCOMPARE(runs, (Strings{"Click", "here", "to", "go."}));  // "42" has no letter
        QCOMPARE(out, std::string("  [Click] x <s1>[here] x </s1>[to] x <s2>42</s2> [go.] x\n"));
    }

    void translateSegmentsWithTags() {
        Document doc;
        doc.add_segment("Plain text");
        doc.set_tagged(static_cast<std::size_t>(doc.add_segment("Save <s1>all</s1> files")));
        QVERIFY(!doc.is_tagged(0) && doc.is_tagged(1) && !doc.is_tagged(7));
        std::vector<std::pair<std::size_t, std::size_t>> progress;
        auto on_progress = [&](std::size_t done, std::size_t total) {
            progress.emplace_back(done, total);
        };

        // A plain translator: the tagged segment run by run.
        Strings calls;
        Strings t = translate_segments(
            doc,
            [&](const std::string& s) {
                calls.push_back(s);
                return mark(s);
            },
            on_progress);
        QCOMPARE(calls, (Strings{"Plain text", "Save", "all", "files"}));
        QCOMPARE(t, (Strings{"«Plain text»", "«Save» <s1>«all»</s1> «files»"}));
        QCOMPARE(progress, (std::vector<std::pair<std::size_t, std::size_t>>{{1, 2}, {2, 2}}));

        // A formatted translator: whole, with `formatted` set.
        std::vector<std::pair<std::string, bool>> fcalls;
        auto formatted = [&](const std::string& s, bool f) {
            fcalls.emplace_back(s, f);
            return mark(s);
        };
        t = translate_segments(doc, formatted);
        QCOMPARE(fcalls, (std::vector<std::pair<std::string, bool>>{
                             {"Plain text", false}, {"Save <s1>all</s1> files", true}}));
        QCOMPARE(t[1], std::string("«Save <s1>all</s1> files»"));

        // ... unless the model is not trained for the prompt.
        fcalls.clear();
        t = translate_segments(doc, formatted, {}, false);
        QCOMPARE(fcalls,
                 (std::vector<std::pair<std::string, bool>>{
                     {"Plain text", false}, {"Save", false}, {"all", false}, {"files", false}}));
        QCOMPARE(t[1], std::string("«Save» <s1>«all»</s1> «files»"));
    }

    // The CLI counts what it cannot fix: a translation that lost placeholders is reported.
    void cliReportsLostPlaceholders() {
        if (!QFile::exists(test::mtdesk_binary())) QSKIP("mtdesk executable not built");
        QTemporaryDir dir;
        const QString src = dir.filePath("strings.txt");
        QVERIFY(test::write_bytes(src, "Copied %d files to %s and {name}\nHello world\n"));
        // The fixture model writes nonsense: placeholders are lost.
        const test::CliRun r = test::run_mtdesk(
            {"translate", "--model", MTDESK_TEST_DATA_DIR "/models/hunyuan-gqa-alpha", "--to", "zh",
             "--greedy", "--max-tokens", "4", src});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.err.contains("strings.txt: 1 segment may have lost placeholders (segment 1: "
                                "lost %d, %s, {name}"),
                 r.err.constData());
        QVERIFY(QFile::exists(dir.filePath("strings.zh.txt")));
    }
};

QTEST_GUILESS_MAIN(TestDocumentsPlaceholders)
#include "test_documents_placeholders.moc"
