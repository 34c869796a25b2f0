#include "demo_model.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include "mtdesk/error.h"

namespace mtdesk::app {
namespace {
const QString kDemoModel = QStringLiteral("models/mtdesk-demo");
}  // namespace

QStringList demo_model_candidates() {
    QStringList candidates;
    const QString bin = QCoreApplication::applicationDirPath();
    if (!bin.isEmpty())
        candidates << QDir::cleanPath(
            QDir(bin).filePath(QStringLiteral("../share/mtdesk/") + kDemoModel));
    for (const QString& data :
         QStandardPaths::standardLocations(QStandardPaths::GenericDataLocation))
        candidates << QDir(data).filePath(QStringLiteral("mtdesk/") + kDemoModel);
#ifdef MTDESK_SOURCE_DIR
    candidates << QStringLiteral(MTDESK_SOURCE_DIR "/resources/") + kDemoModel;
#endif
    return candidates;
}

QString demo_model_directory() {
    for (const QString& c : demo_model_candidates())
        if (QFileInfo::exists(c + QStringLiteral("/config.json")))
            return QDir::cleanPath(QFileInfo(c).absoluteFilePath());
    return {};
}

std::string default_model_dir() {
    const QString dir = demo_model_directory();
    if (!dir.isEmpty()) return dir.toStdString();
    throw Error("no --model given and the bundled demo model is not installed (looked in " +
                demo_model_candidates().join(QStringLiteral(", ")).toStdString() +
                "); pass --model DIR with a Hunyuan-MT or HY-MT1.5 model directory");
}

}  // namespace mtdesk::app
