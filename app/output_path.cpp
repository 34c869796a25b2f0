#include "output_path.h"

#include <QFileInfo>
#include <QSaveFile>

#include "mtdesk/error.h"

namespace mtdesk::app {

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
    for (int n = 2; QFileInfo::exists(candidate); ++n)
        candidate = prefix + QStringLiteral(" (") + QString::number(n) + QLatin1Char(')') + ext;
    return candidate;
}

void write_new_file_atomically(const QString& path, const QByteArray& data) {
    if (QFileInfo::exists(path))
        throw FileError(path.toStdString(), "already exists; mtdesk never writes over a file");
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        throw FileError(path.toStdString(), "cannot create: " + file.errorString().toStdString());
    if (file.write(data) != data.size() || !file.commit())
        throw FileError(path.toStdString(), "cannot write: " + file.errorString().toStdString());
}

}  // namespace mtdesk::app
