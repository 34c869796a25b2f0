#include "output_path.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>

#include "mtdesk/error.h"

namespace mtdesk::app {
namespace {

// Whether `path` names a directory entry of any kind. A symbolic link counts even when its
// target is missing: QFileInfo::exists() is false for it, and writing "there" would create
// the target, wherever it points.
bool taken(const QString& path) {
    const QFileInfo info(path);
    return info.exists() || info.isSymLink();
}

// A new, empty file next to `path` with a name of its own ("dir/.name.1a2b3c4d.part").
// QIODevice::NewOnly is O_CREAT | O_EXCL: it never opens an existing file or follows a link.
void create_temporary(const QString& path, QFile& file) {
    const QFileInfo info(path);
    const QString prefix = info.path() + QStringLiteral("/.") + info.fileName() + QLatin1Char('.');
    for (int attempt = 0;; ++attempt) {
        file.setFileName(prefix + QString::number(QRandomGenerator::global()->generate(), 16) +
                         QStringLiteral(".part"));
        if (file.open(QIODevice::WriteOnly | QIODevice::NewOnly)) return;
        if (attempt >= 100 || !taken(file.fileName()))  // not a clash of names
            throw FileError(path.toStdString(),
                            "cannot create: " + file.errorString().toStdString());
    }
}

// Renames `from` to `to` unless `to` exists (as anything, a dangling link included), in one
// step: renameat2(RENAME_NOREPLACE), or link() and unlink() on file systems without it.
// Returns 0 or an errno value (EEXIST when `to` exists).
int rename_no_replace(const QByteArray& from, const QByteArray& to) {
    if (::renameat2(AT_FDCWD, from.constData(), AT_FDCWD, to.constData(), RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return errno;
    if (::link(from.constData(), to.constData()) != 0) return errno;
    ::unlink(from.constData());
    return 0;
}

}  // namespace

QString translated_output_path(const QString& source_path, const QString& target_code,
                               const QString& extension) {
    const QFileInfo info(source_path);
    const QString dir = info.path();
    const QString base = info.completeBaseName();
    const QString suffix =
        info.suffix().isEmpty() ? QString() : QStringLiteral(".") + info.suffix();
    // A hidden file such as ".profile" has an empty base name: keep the whole name as the stem.
    const QString stem = base.isEmpty() ? info.fileName() : base;
    const QString ext = !extension.isEmpty() ? QStringLiteral(".") + extension
                                             : (base.isEmpty() ? QString() : suffix);
    // Concatenated, not QString::arg(): a "%1" in a file or folder name is text, not a marker.
    // A bare file name gives a bare output name ("notes.zh.txt", not "./notes.zh.txt").
    const QString folder =
        source_path.contains(QLatin1Char('/')) ? dir + QLatin1Char('/') : QString();
    const QString prefix = folder + stem + QLatin1Char('.') + target_code;
    QString candidate = prefix + ext;
    for (int n = 2; taken(candidate); ++n)
        candidate = prefix + QStringLiteral(" (") + QString::number(n) + QLatin1Char(')') + ext;
    return candidate;
}

void check_output_folder(const QString& source_path) {
    const QString folder = QFileInfo(source_path).absolutePath();
    // A file made and removed again, rather than permission bits: those do not tell about
    // read-only mounts, ACLs or a full disk's quota, nor what root may do.
    QFile probe;
    try {
        create_temporary(QDir(folder).filePath(QStringLiteral("mtdesk-check")), probe);
    } catch (const FileError&) {
        throw FileError(source_path.toStdString(),
                        "its translation cannot be written into " + folder.toStdString() + " (" +
                            probe.errorString().toStdString() + "); nothing was translated");
    }
    probe.close();
    probe.remove();
}

void write_new_file_atomically(const QString& path, const QByteArray& data) {
    if (taken(path))
        throw FileError(path.toStdString(), "already exists; mtdesk never writes over a file");
    QFile file;
    create_temporary(path, file);
    const QByteArray temp = QFile::encodeName(file.fileName());
    auto fail = [&](const std::string& what) {
        file.close();
        ::unlink(temp.constData());
        throw FileError(path.toStdString(), what);
    };
    if (file.write(data) != data.size() || !file.flush() || ::fsync(file.handle()) != 0)
        fail("cannot write: " + file.errorString().toStdString());
    file.close();
    if (file.error() != QFileDevice::NoError)
        fail("cannot write: " + file.errorString().toStdString());
    if (const int error = rename_no_replace(temp, QFile::encodeName(path)); error != 0)
        fail(error == EEXIST ? "already exists; mtdesk never writes over a file"
                             : "cannot create: " + qt_error_string(error).toStdString());
}

}  // namespace mtdesk::app
