// Output files: next to the source, a new name, never over an existing file, written whole.

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "mtdesk/error.h"
#include "output_path.h"

using namespace mtdesk;
using namespace mtdesk::app;

class TestOutputPath : public QObject {
    Q_OBJECT

    static void touch(const QString& path, const QByteArray& data = "x") {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(data);
    }

  private slots:
    void naming() {
        QTemporaryDir dir;
        const QString src = dir.filePath("notes.txt");
        touch(src);
        QCOMPARE(translated_output_path(src, "zh"), dir.filePath("notes.zh.txt"));
        touch(dir.filePath("notes.zh.txt"));
        QCOMPARE(translated_output_path(src, "zh"), dir.filePath("notes.zh (2).txt"));
        touch(dir.filePath("notes.zh (2).txt"));
        QCOMPARE(translated_output_path(src, "zh"), dir.filePath("notes.zh (3).txt"));
        QCOMPARE(translated_output_path(dir.filePath("README"), "de"), dir.filePath("README.de"));
        QCOMPARE(translated_output_path(dir.filePath("a.b.srt"), "zh-Hant"),
                 dir.filePath("a.b.zh-Hant.srt"));
        QCOMPARE(translated_output_path(dir.filePath(".profile"), "fr"),
                 dir.filePath(".profile.fr"));
    }

    // A bare file name (in the working folder) gives a bare output name, checked there.
    void bareNames() {
        QTemporaryDir dir;
        const QString before = QDir::currentPath();
        QVERIFY(QDir::setCurrent(dir.path()));
        touch(QStringLiteral("notes.txt"));
        QCOMPARE(translated_output_path(QStringLiteral("notes.txt"), "zh"),
                 QStringLiteral("notes.zh.txt"));
        touch(QStringLiteral("notes.zh.txt"));
        QCOMPARE(translated_output_path(QStringLiteral("notes.txt"), "zh"),
                 QStringLiteral("notes.zh (2).txt"));
        QCOMPARE(translated_output_path(QStringLiteral("./notes.txt"), "zh"),
                 QStringLiteral("./notes.zh (2).txt"));
        QVERIFY(QDir::setCurrent(before));
    }

    // "%1" and the like in a file or folder name are text, never QString::arg() markers.
    void percentInNames() {
        QTemporaryDir parent;
        QVERIFY(QDir(parent.path()).mkdir("100%2 %1"));
        const QString dir = parent.filePath("100%2 %1");
        const QString src = dir + "/50%1 off.txt";
        touch(src);
        QCOMPARE(translated_output_path(src, "zh"), dir + "/50%1 off.zh.txt");
        touch(dir + "/50%1 off.zh.txt");
        QCOMPARE(translated_output_path(src, "zh"), dir + "/50%1 off.zh (2).txt");
        touch(dir + "/50%1 off.zh (2).txt");
        QCOMPARE(translated_output_path(src, "zh"), dir + "/50%1 off.zh (3).txt");
        const QString pdf = dir + "/%4%5.pdf";
        touch(dir + "/%4%5.de.txt");
        QCOMPARE(translated_output_path(pdf, "de", "txt"), dir + "/%4%5.de (2).txt");
    }

    void neverOverwrites() {
        QTemporaryDir dir;
        const QString path = dir.filePath("out.txt");
        touch(path, "original");
        QVERIFY_THROWS_EXCEPTION(FileError, write_new_file_atomically(path, "new"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("original"));
    }

    void writesNewFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath("new.txt");
        write_new_file_atomically(path, "héllo\n");
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("héllo\n"));
    }

    // A symbolic link whose target is missing takes its name too: writing through it would
    // create the target, wherever it points.
    void danglingSymlinkIsTaken() {
        QTemporaryDir dir;
        const QString src = dir.filePath("b.txt");
        touch(src);
        const QString victim = dir.filePath("elsewhere/victim.txt");
        QVERIFY(QDir(dir.path()).mkdir("elsewhere"));
        QVERIFY(QFile::link(victim, dir.filePath("b.de.txt")));
        QCOMPARE(translated_output_path(src, "de"), dir.filePath("b.de (2).txt"));
        QVERIFY_THROWS_EXCEPTION(FileError,
                                 write_new_file_atomically(dir.filePath("b.de.txt"), "x"));
        QVERIFY(!QFileInfo::exists(victim));
        QCOMPARE(QFileInfo(dir.filePath("b.de.txt")).symLinkTarget(), victim);
        // Nothing is left behind: no temporary file.
        QCOMPARE(
            QDir(dir.path())
                .entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot),
            (QStringList{"b.de.txt", "b.txt", "elsewhere"}));
    }

    // The written file has the usual permissions (those of a new file under the umask), not a
    // temporary file's owner-only ones, and no temporary file stays.
    void writtenFileIsAnOrdinaryFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath("new.txt");
        write_new_file_atomically(path, "x");
        const QString plain = dir.filePath("plain.txt");
        touch(plain);
        QCOMPARE(QFileInfo(path).permissions(), QFileInfo(plain).permissions());
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden),
                 (QStringList{"new.txt", "plain.txt"}));
    }

    // A folder where no file can be created is found before anything is translated; the
    // message names the source and the folder. (/proc refuses new files even to root.)
    void outputFolderMustBeWritable() {
        QTemporaryDir dir;
        check_output_folder(dir.filePath("notes.txt"));
        QCOMPARE(
            QDir(dir.path())
                .entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot),
            QStringList{});
        try {
            check_output_folder(QStringLiteral("/proc/notes.txt"));
            QFAIL("no exception");
        } catch (const FileError& e) {
            QCOMPARE(QString::fromStdString(e.file()), QStringLiteral("/proc/notes.txt"));
            QVERIFY2(QString::fromUtf8(e.what()).contains("cannot be written into /proc"),
                     e.what());
        }
    }

    void unwritableDirectoryNamesTheFile() {
        const QString path = "/nonexistent-mtdesk-dir/out.txt";
        try {
            write_new_file_atomically(path, "x");
            QFAIL("no exception");
        } catch (const FileError& e) {
            QVERIFY(QString::fromStdString(e.what()).contains(path));
        }
    }
};

QTEST_APPLESS_MAIN(TestOutputPath)
#include "test_output_path.moc"
