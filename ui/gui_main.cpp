#include "gui_main.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QPlainTextEdit>
#include <QStandardPaths>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "i18n.h"
#include "language_picker.h"
#include "live_panel.h"
#include "main_window.h"
#include "settings.h"
#include "settings_dialog.h"
#include "translation_controller.h"

// Q_INIT_RESOURCE must be used outside any namespace.
static void mtdesk_init_resources() {
    Q_INIT_RESOURCE(mtdesk);
}

namespace mtdesk::ui {
namespace {

bool env_set(const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
}

void wait_ms(int ms) {
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

// Renders the main window (with a finished translation) and the settings dialog (with a valid
// and with an invalid model directory) to PNG files in `dir`, then returns.
int render_screenshots(const QString& dir, const QString& model, const QString& language,
                       const QString& text, const QString& from, const QString& to) {
    QDir().mkpath(dir);
    Settings settings;
    settings.setSamplingMode(SamplingMode::Greedy);
    settings.setModelDirectory(model);
    settings.setSourceLanguage(from);
    settings.setTargetLanguage(to);
    TranslationController controller;
    MainWindow window(settings, controller);
    window.resize(1180, 660);
    window.show();
    window.loadModel(model);

    bool finished = false;
    QObject::connect(&controller, &TranslationController::translationFinished, &window,
                     [&](quint64, const QString&, const RequestStats&) { finished = true; });
    // An engine error ends a request too (the window shows it).
    QObject::connect(&controller, &TranslationController::error, &window,
                     [&](const QString&) { finished = true; });
    // A few requests so the history charts have points; the last one stays on screen.
    const QStringList warmup = {text.left(text.size() / 3), text.left(2 * text.size() / 3), text};
    for (const QString& t : warmup) {
        finished = false;
        window.sourceEdit()->setPlainText(t);
        window.translateNow();
        QElapsedTimer clock;
        clock.start();
        while (!finished && clock.elapsed() < 120000)
            wait_ms(20);
        if (!finished) {
            std::fprintf(stderr, "mtdesk: no translation within two minutes (%s)\n",
                         qPrintable(controller.lastError()));
            return 1;
        }
    }
    wait_ms(2 * LivePanel::kRefreshMs);
    const QString suffix = QStringLiteral("-") + language + QStringLiteral(".png");
    bool ok = window.grab().save(QDir(dir).filePath(QStringLiteral("main-window") + suffix));

    SettingsDialog dialog(settings, &window);
    dialog.setModelDirectory(model);
    dialog.show();
    wait_ms(200);
    ok = dialog.grab().save(QDir(dir).filePath(QStringLiteral("settings") + suffix)) && ok;
    dialog.setModelDirectory(QDir(model).filePath(QStringLiteral("../no-such-model")));
    wait_ms(200);
    ok = dialog.grab().save(QDir(dir).filePath(QStringLiteral("settings-error") + suffix)) && ok;
    dialog.close();
    window.close();
    return ok ? 0 : 1;
}

}  // namespace

bool display_available() {
    if (const char* p = std::getenv("QT_QPA_PLATFORM");
        p && (std::strncmp(p, "offscreen", 9) == 0 || std::strncmp(p, "minimal", 7) == 0))
        return false;
    return env_set("DISPLAY") || env_set("WAYLAND_DISPLAY");
}

void init_resources() {
    mtdesk_init_resources();
}

int run_gui(int argc, char** argv) {
    if (!display_available() && !env_set("QT_QPA_PLATFORM")) {
        std::fputs(
            "mtdesk: no display ($DISPLAY and $WAYLAND_DISPLAY are unset), so no window; "
            "see 'mtdesk --help' for the command line\n",
            stderr);
        return 1;
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("mtdesk"));
    QApplication::setApplicationName(QStringLiteral("mtdesk"));
    QApplication::setApplicationDisplayName(QStringLiteral("mtdesk"));
    QApplication::setApplicationVersion(QStringLiteral(MTDESK_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("io.github.mtdesk.Mtdesk"));
    init_resources();
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/mtdesk.svg")));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Opens the mtdesk window."));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("gui"), QStringLiteral("(the command itself)"));
    const QCommandLineOption model({QStringLiteral("m"), QStringLiteral("model")},
                                   QStringLiteral("Model directory for this session."),
                                   QStringLiteral("DIR"));
    const QCommandLineOption language(QStringLiteral("language"),
                                      QStringLiteral("UI language for this session: en, zh_CN."),
                                      QStringLiteral("LANG"));
    const QCommandLineOption screenshots(
        QStringLiteral("screenshots"),
        QStringLiteral("Render the main window and the settings dialog to PNG files in DIR, then "
                       "exit (needs --model; settings are kept apart from the user's)."),
        QStringLiteral("DIR"));
    const QCommandLineOption text(QStringLiteral("text"),
                                  QStringLiteral("Source text for --screenshots."),
                                  QStringLiteral("TEXT"));
    const QCommandLineOption from(QStringLiteral("from"),
                                  QStringLiteral("Source language for --screenshots."),
                                  QStringLiteral("LANG"), QStringLiteral("en"));
    const QCommandLineOption to(QStringLiteral("to"),
                                QStringLiteral("Target language for --screenshots."),
                                QStringLiteral("LANG"), QStringLiteral("zh"));
    parser.addOptions({model, language, screenshots, text, from, to});
    parser.process(app);

    if (parser.isSet(screenshots)) {
        if (!parser.isSet(model)) {
            std::fputs("mtdesk gui: --screenshots needs --model DIR\n", stderr);
            return 2;
        }
        QStandardPaths::setTestModeEnabled(true);  // leave the user's settings alone
        QSettings().clear();
        const QString lang = install_translations(app, parser.value(language));
        const QString sample = parser.isSet(text)
                                   ? parser.value(text)
                                   : QStringLiteral("Open the file and save your changes.");
        return render_screenshots(parser.value(screenshots), parser.value(model), lang, sample,
                                  parser.value(from), parser.value(to));
    }

    Settings settings;
    install_translations(app,
                         parser.isSet(language) ? parser.value(language) : settings.uiLanguage());
    TranslationController controller;
    MainWindow window(settings, controller);
    window.show();
    if (parser.isSet(model))
        window.loadModel(parser.value(model));
    else
        window.loadConfiguredModel();
    return app.exec();
}

}  // namespace mtdesk::ui
