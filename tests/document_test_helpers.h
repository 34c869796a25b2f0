#pragma once
// Helpers shared by the document format suites (test_documents_*.cpp): deterministic
// "translators" and running the mtdesk executable.

#include <QByteArray>
#include <QFile>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTest>

#include <string>

#include "documents/document.h"
#include "mtdesk/error.h"

namespace mtdesk::test {

/// The mtdesk executable of this build.
inline QString mtdesk_binary() {
    return QStringLiteral(MTDESK_BINARY_DIR "/app/mtdesk");
}

/// A translation that is easy to recognise: the text between « and ».
inline std::string mark(const std::string& s) {
    return "\xC2\xAB" + s + "\xC2\xBB";
}

/// `s` with the marks of mark() removed.
inline QByteArray unmark(QByteArray s) {
    return s.replace("\xC2\xAB", "").replace("\xC2\xBB", "");
}

/// ASCII letters upper-cased, the rest (tags such as <s1> included) unchanged.
inline std::string upper(const std::string& s) {
    std::string out = s;
    bool in_tag = false;
    for (char& c : out) {
        if (c == '<') in_tag = true;
        if (!in_tag && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        if (c == '>') in_tag = false;
    }
    return out;
}

inline QByteArray file_bytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

inline bool write_bytes(const QString& path, const QByteArray& data) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(data) == data.size();
}

struct CliRun {
    int code = -1;
    QByteArray out, err;
};

/// Runs mtdesk with `args` (waits up to 5 minutes).
inline CliRun run_mtdesk(const QStringList& args) {
    QProcess p;
    p.start(mtdesk_binary(), args);
    p.closeWriteChannel();
    if (!p.waitForFinished(300000)) p.kill();
    return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

/// Reading `path` as a document fails with a FileError that names the file and whose message
/// contains `problem`.
inline void verify_read_fails(const QString& path, const QString& problem) {
    try {
        (void)app::documents::read_document(path);
        QFAIL("no error");
    } catch (const FileError& e) {
        QCOMPARE(QString::fromStdString(e.file()), path);
        QVERIFY2(QString::fromUtf8(e.what()).contains(problem), e.what());
    }
}

/// Reading `bytes` with `format` as `name` fails with a FileError that names `name` and whose
/// message contains `problem`.
inline void verify_format_read_fails(const app::documents::DocumentFormat& format,
                                     const QByteArray& bytes, const QString& name,
                                     const QString& problem) {
    try {
        (void)format.read(bytes, name);
        QFAIL("no error");
    } catch (const FileError& e) {
        QCOMPARE(QString::fromStdString(e.file()), name);
        QVERIFY2(QString::fromUtf8(e.what()).contains(problem), e.what());
    }
}

}  // namespace mtdesk::test
