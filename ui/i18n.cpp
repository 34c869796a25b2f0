#include "i18n.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>

namespace mtdesk::ui {

QStringList available_ui_languages() {
    return {QStringLiteral("en"), QStringLiteral("zh_CN")};
}

QString install_translations(QCoreApplication& app, const QString& setting) {
    QString language = setting;
    if (!available_ui_languages().contains(language)) {
        // Any Chinese locale gets the Simplified Chinese UI; everything else English.
        language = QLocale::system().language() == QLocale::Chinese ? QStringLiteral("zh_CN")
                                                                    : QStringLiteral("en");
    }
    QLocale::setDefault(QLocale(language));

    auto* own = new QTranslator(&app);
    if (own->load(QStringLiteral(":/i18n/mtdesk_") + language))
        QCoreApplication::installTranslator(own);
    else
        delete own;
    auto* qt = new QTranslator(&app);
    if (qt->load(QLocale(language), QStringLiteral("qtbase"), QStringLiteral("_"),
                 QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QCoreApplication::installTranslator(qt);
    else
        delete qt;
    return language;
}

QString file_filter(const QString& name, const QStringList& patterns) {
    return name + QStringLiteral(" (") + patterns.join(QLatin1Char(' ')) + QLatin1Char(')');
}

}  // namespace mtdesk::ui
