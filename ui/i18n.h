#pragma once
// The application's own UI language: English or Simplified Chinese, from the setting or the
// system locale. The .qm files are compiled from translations/*.ts at build time and embedded.

#include <QString>
#include <QStringList>

class QCoreApplication;

namespace mtdesk::ui {

/// The UI languages there are translations for: "en", "zh_CN".
QStringList available_ui_languages();

/// Picks the UI language ("" = from the system locale), installs mtdesk's translator and Qt's
/// own (for standard buttons and dialogs, when the system has them), and makes it the default
/// QLocale. Returns the language used ("en" or "zh_CN"). Call once, before widgets exist.
QString install_translations(QCoreApplication& app, const QString& setting);

/// One entry of a QFileDialog filter: "name (pattern pattern …)". Only the name is translated:
/// QFileDialog finds the patterns between ASCII parentheses, so a translation that writes them
/// with full-width ones (as Chinese text does) would hide every file the filter names.
QString file_filter(const QString& name, const QStringList& patterns);

}  // namespace mtdesk::ui
