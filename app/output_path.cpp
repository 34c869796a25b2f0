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
    QString candidate = QStringLiteral("%1/%2.%3%4").arg(dir, stem, target_code, ext);
    for (int n = 2; QFileInfo::exists(candidate); ++n)
        candidate = QStringLiteral("%1/%2.%3 (%4)%5").arg(dir, stem, target_code).arg(n).arg(ext);
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
