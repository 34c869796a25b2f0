// The progress line of `mtdesk translate FILE...`: its layout, width limit and time estimate,
// drawing only on a terminal, and the CLI's messages with and without one.

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstdio>

#include "document_test_helpers.h"
#include "progress_bar.h"

using namespace mtdesk::app;

namespace {

// Columns of UTF-8 text (one per code point).
int columns(const std::string& s) {
    return static_cast<int>(QString::fromStdString(s).toUcs4().size());
}

std::string contents(std::FILE* f) {
    std::fflush(f);
    std::rewind(f);
    std::string out;
    for (int c; (c = std::fgetc(f)) != EOF;)
        out += static_cast<char>(c);
    return out;
}

}  // namespace

class TestProgressBar : public QObject {
    Q_OBJECT

  private slots:
    void durations() {
        QCOMPARE(format_duration(0), std::string("0:00"));
        QCOMPARE(format_duration(5.9), std::string("0:05"));
        QCOMPARE(format_duration(65), std::string("1:05"));
        QCOMPARE(format_duration(754), std::string("12:34"));
        QCOMPARE(format_duration(3723), std::string("1:02:03"));
        QCOMPARE(format_duration(-3), std::string("0:00"));
        QCOMPARE(format_duration(std::nan("")), std::string("0:00"));
    }

    void line() {
        QCOMPARE(progress_line("notes.md", 12, 40, 5.0, 80),
                 std::string("notes.md  [######..............]  12/40 segments  0:05 elapsed, "
                             "~0:11 left"));
        // Nothing done yet: no estimate. All done: a full bar, no estimate.
        QCOMPARE(progress_line("a.srt", 0, 3, 0.4, 80),
                 std::string("a.srt  [....................]  0/3 segments  0:00 elapsed"));
        QCOMPARE(progress_line("a.srt", 3, 3, 17.2, 80),
                 std::string("a.srt  [####################]  3/3 segments  0:17 elapsed"));
        // An empty document is complete at once.
        QCOMPARE(progress_line("e.txt", 0, 0, 0, 80),
                 std::string("e.txt  [####################]  0/0 segments  0:00 elapsed"));
        // The estimate: elapsed per segment times the segments left.
        QVERIFY(progress_line("x", 1, 10, 60, 80).ends_with("1:00 elapsed, ~9:00 left"));
    }

    void neverWiderThanTheTerminal() {
        const std::string name =
            "/home/user/Documents/a rather long directory name/Übersetzung "
            "des Handbuchs, Kapitel 12.md";
        for (int width : {100, 80, 60, 50}) {
            const std::string l = progress_line(name, 7, 120, 33, width);
            QVERIFY2(columns(l) <= width, l.c_str());
            QVERIFY2(l.find("7/120 segments") != std::string::npos, l.c_str());
            // The name is cut at the front: its end (the file name) stays.
            QVERIFY2(l.find("12.md") != std::string::npos, l.c_str());
            if (columns(name) + 50 > width) QVERIFY(l.starts_with("\u2026"));
        }
        // The bar shrinks before the name goes.
        const std::string narrow = progress_line("file.txt", 5, 10, 10, 60);
        QVERIFY2(narrow.starts_with("file.txt  [###....]") && columns(narrow) <= 60,
                 narrow.c_str());
    }

    void drawsOnlyOnATerminal() {
        std::FILE* f = std::tmpfile();
        QVERIFY(f);
        ProgressBar plain(f, false);
        plain.start("a.txt", 4);
        plain.update(2, 4);
        plain.finish();
        QCOMPARE(contents(f), std::string());
        QVERIFY(plain.elapsed() >= 0 && plain.elapsed() < 60);
        std::fclose(f);

        f = std::tmpfile();
        ProgressBar bar(f, true);
        bar.start("a.txt", 4);
        bar.update(2, 4);
        bar.finish();
        bar.finish();  // a second end adds nothing
        const std::string out = contents(f);
        // Drawn at 0 and 2 of 4, then cleared for the caller's result line.
        QVERIFY2(out.starts_with("\ra.txt  [") && out.ends_with("\x1b[K\r\x1b[K"), out.c_str());
        QVERIFY(out.find("0/4 segments") != std::string::npos);
        QVERIFY(out.find("2/4 segments") != std::string::npos);
        QCOMPARE(std::count(out.begin(), out.end(), '\r'), 3);
        QCOMPARE(std::count(out.begin(), out.end(), '\n'), 0);
        std::fclose(f);
    }

    // Without a terminal (a pipe): one plain line per file, no redrawing.
    void cliWithoutTerminal() {
        if (!QFile::exists(mtdesk::test::mtdesk_binary())) QSKIP("mtdesk executable not built");
        QTemporaryDir dir;
        QVERIFY(mtdesk::test::write_bytes(dir.filePath("a.txt"), "One\nTwo\n"));
        QVERIFY(mtdesk::test::write_bytes(dir.filePath("b.txt"), "Three\n"));
        const mtdesk::test::CliRun r = mtdesk::test::run_mtdesk(
            {"translate", "--model", MTDESK_TEST_DATA_DIR "/models/hunyuan-gqa-alpha", "--to", "zh",
             "--greedy", "--max-tokens", "2", dir.filePath("a.txt"), dir.filePath("b.txt")});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY(!r.err.contains('\r') && !r.err.contains("\x1b["));
        QVERIFY2(r.err.contains(dir.filePath("a.txt").toUtf8() + " -> " +
                                dir.filePath("a.zh.txt").toUtf8() + " (2 segments, 0:0"),
                 r.err.constData());
        QVERIFY(r.err.contains(dir.filePath("b.zh.txt").toUtf8() + " (1 segment, 0:0"));
        QCOMPARE(r.err.count('\n'), 2);
    }

    // On a terminal (a pseudo-terminal from script(1)): the line is redrawn in place.
    void cliOnATerminal() {
        if (!QFile::exists(mtdesk::test::mtdesk_binary())) QSKIP("mtdesk executable not built");
        const QString script = QStandardPaths::findExecutable("script");
        if (script.isEmpty()) QSKIP("script(1) is not installed");
        QTemporaryDir dir;
        QVERIFY(mtdesk::test::write_bytes(dir.filePath("a.txt"), "One\nTwo\nThree\n"));
        const QString command =
            QStringLiteral("'%1' translate --model '%2' --to zh --greedy --max-tokens 2 '%3'")
                .arg(mtdesk::test::mtdesk_binary(),
                     QStringLiteral(MTDESK_TEST_DATA_DIR "/models/hunyuan-gqa-alpha"),
                     dir.filePath("a.txt"));
        QProcess p;
        p.start(script, {"-qec", command, "/dev/null"});
        QVERIFY(p.waitForFinished(120000));
        const QByteArray out = p.readAllStandardOutput();
        QVERIFY2(p.exitCode() == 0, out.constData());
        for (const char* drawn : {"0/3 segments", "1/3 segments", "2/3 segments", "3/3 segments",
                                  "[####################]"})
            QVERIFY2(out.contains(drawn), out.constData());
        QVERIFY(out.count('\r') >= 4);
        // The progress line is cleared and the result line takes its place: one line per file.
        QVERIFY2(out.contains(QByteArray("\r\x1b[K") + dir.filePath("a.txt").toUtf8() + " -> "),
                 out.constData());
        QVERIFY(out.contains("a.zh.txt (3 segments"));
    }
};

QTEST_GUILESS_MAIN(TestProgressBar)
#include "test_progress_bar.moc"
