// StdinReader: text read from a pipe as it arrives, in whole lines, decoded the way the first
// bytes say; and the removal of terminal escape sequences.

#include <QTemporaryFile>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "mtdesk/error.h"
#include "stdin_reader.h"

using mtdesk::app::StdinReader;
using mtdesk::app::strip_terminal_escapes;

namespace {

// A pipe whose write end the test feeds between reads, as a producer over time would.
class Pipe {
  public:
    Pipe() {
        int fds[2];
        QVERIFY(::pipe(fds) == 0);
        read_ = fds[0];
        write_ = fds[1];
    }
    ~Pipe() {
        ::close(read_);
        close_writer();
    }
    int read_end() const { return read_; }
    void write(const std::string& bytes) {
        QCOMPARE(::write(write_, bytes.data(), bytes.size()), ssize_t(bytes.size()));
    }
    void close_writer() {
        if (write_ >= 0) ::close(write_);
        write_ = -1;
    }

  private:
    int read_ = -1, write_ = -1;
};

// Makes a read that would wait for more input fail instead (read_lines() throws), so that a
// reader that waits where it should not fails the test instead of hanging it.
bool never_block(int fd) {
    return ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) == 0;
}

}  // namespace

class TestStdinReader : public QObject {
    Q_OBJECT

  private slots:
    // Each whole line comes out while the writer is still open; the unfinished last line only
    // when more of it arrives or the input ends.
    void linesComeAsTheyArrive() {
        Pipe pipe;
        StdinReader reader(pipe.read_end());
        pipe.write("Open the file\nSave");
        QCOMPARE(reader.next_lines(), std::optional<std::string>("Open the file\n"));
        QVERIFY(reader.streaming());
        pipe.write(" changes\nClose\n");
        QCOMPARE(reader.next_lines(), std::optional<std::string>("Save changes\nClose\n"));
        pipe.write("Quit");
        QVERIFY(never_block(pipe.read_end()));
        QCOMPARE(reader.read_lines(), std::optional<std::string>(""));
        pipe.close_writer();
        QCOMPARE(reader.next_lines(), std::optional<std::string>("Quit"));
        QVERIFY(!reader.next_lines());
        QVERIFY(!reader.next_lines());
    }

    // A character or a CRLF cut between two reads stays whole.
    void cutsBetweenReads() {
        Pipe pipe;
        StdinReader reader(pipe.read_end());
        pipe.write("Gr\xC3");
        QVERIFY(never_block(pipe.read_end()));
        QCOMPARE(reader.read_lines(), std::optional<std::string>(""));
        pipe.write("\xBC\xC3\x9F\r");
        QCOMPARE(reader.read_lines(), std::optional<std::string>(""));
        QVERIFY(reader.streaming());
        pipe.write("\nok\n");
        QCOMPARE(reader.read_lines(), std::optional<std::string>("Grüß\r\nok\n"));
    }

    // A UTF-8 byte-order mark says UTF-8 and is not passed on.
    void utf8ByteOrderMark() {
        Pipe pipe;
        StdinReader reader(pipe.read_end());
        pipe.write("\xEF\xBB\xBFOpen\n");
        QCOMPARE(reader.next_lines(), std::optional<std::string>("Open\n"));
        QVERIFY(reader.streaming());
    }

    // Input whose first bytes are not UTF-8 is read to its end and decoded whole.
    void legacyEncodingDecodedWhole() {
        Pipe pipe;
        StdinReader reader(pipe.read_end());
        pipe.write(
            "Impossible d'acc\xE9"
            "der au r\xE9pertoire s\xE9lectionn\xE9.\n");
        pipe.write("V\xE9rifiez les param\xE8tres.\n");
        pipe.close_writer();
        QCOMPARE(reader.next_lines(),
                 std::optional<std::string>("Impossible d'accéder au répertoire sélectionné.\n"
                                            "Vérifiez les paramètres.\n"));
        QVERIFY(!reader.streaming());
        QVERIFY(!reader.next_lines());
    }

    void utf16ByteOrderMark() {
        Pipe pipe;
        StdinReader reader(pipe.read_end());
        pipe.write(std::string("\xFF\xFEO\0k\0\n\0", 8));
        pipe.close_writer();
        QCOMPARE(reader.next_lines(), std::optional<std::string>("Ok\n"));
        QVERIFY(!reader.streaming());
    }

    // Once lines stream, a later line that is not UTF-8 is decoded on its own, not passed on
    // as broken UTF-8; the lines around it are untouched.
    void laterLineInAnotherEncoding() {
        Pipe pipe;
        StdinReader reader(pipe.read_end());
        pipe.write("Open the file\n");
        QCOMPARE(reader.next_lines(), std::optional<std::string>("Open the file\n"));
        pipe.write("Le fichier s\xE9lectionn\xE9 est introuvable.\nDone\n");
        const std::optional<std::string> lines = reader.next_lines();
        QVERIFY(lines);
        QCOMPARE(*lines, std::string("Le fichier sélectionné est introuvable.\nDone\n"));
    }

    void binaryInputIsRefused() {
        Pipe pipe;
        StdinReader reader(pipe.read_end());
        pipe.write(std::string("Open\0the file\n", 14));
        pipe.close_writer();
        try {
            reader.next_lines();
            QFAIL("binary input was accepted");
        } catch (const mtdesk::FileError& e) {
            QVERIFY2(std::string(e.what()).starts_with("stdin: ") &&
                         std::string(e.what()).find("binary") != std::string::npos,
                     e.what());
        }
    }

    // A file (`mtdesk translate < notes.txt`) is decoded whole: its encoding from all of it.
    void regularFileIsReadWhole() {
        QTemporaryFile file;
        QVERIFY(file.open());
        file.write("Open the file\nCaf\xE9\n");
        file.flush();
        const int fd = ::open(file.fileName().toLocal8Bit().constData(), O_RDONLY);
        QVERIFY(fd >= 0);
        StdinReader reader(fd);
        QCOMPARE(reader.next_lines(), std::optional<std::string>("Open the file\nCafé\n"));
        QVERIFY(!reader.streaming());
        QVERIFY(!reader.next_lines());
        ::close(fd);
    }

    void emptyInput() {
        Pipe pipe;
        StdinReader reader(pipe.read_end());
        pipe.close_writer();
        const std::optional<std::string> lines = reader.next_lines();
        QVERIFY(!lines || lines->empty());
        QVERIFY(!reader.next_lines());
    }

    void terminalEscapes_data() {
        QTest::addColumn<QByteArray>("in");
        QTest::addColumn<QByteArray>("out");
        QTest::newRow("colours") << QByteArray("\x1b[1;31mError:\x1b[0m file \x1b[4mx\x1b[m")
                                 << QByteArray("Error: file x");
        QTest::newRow("osc link, BEL")
            << QByteArray("see \x1b]8;;http://a.b/\x07here\x1b]8;;\x07") << QByteArray("see here");
        QTest::newRow("osc title, ST")
            << QByteArray("\x1b]0;title\x1b\\Open") << QByteArray("Open");
        QTest::newRow("charset, two-byte") << QByteArray(
                                                  "\x1b(BOpen\x1b"
                                                  "7 the\x1b"
                                                  "8 file")
                                           << QByteArray("Open the file");
        QTest::newRow("lone escape at the end") << QByteArray("Open\x1b") << QByteArray("Open");
        QTest::newRow("cursor moves") << QByteArray("\x1b[2K\x1b[1GOpen") << QByteArray("Open");
    }
    void terminalEscapes() {
        QFETCH(QByteArray, in);
        QFETCH(QByteArray, out);
        std::string text = in.toStdString();
        QVERIFY(strip_terminal_escapes(text));
        QCOMPARE(QByteArray::fromStdString(text), out);
    }

    void textWithoutEscapesIsUntouched() {
        std::string text = "Open [the] file ] 8;; ok";
        QVERIFY(!strip_terminal_escapes(text));
        QCOMPARE(text, std::string("Open [the] file ] 8;; ok"));
    }
};

QTEST_GUILESS_MAIN(TestStdinReader)
#include "test_stdin_reader.moc"
