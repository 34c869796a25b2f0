#include "gui_main.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QPlainTextEdit>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "document_queue.h"
#include "i18n.h"
#include "job_queue.h"
#include "language_picker.h"
#include "live_panel.h"
#include "main_window.h"
#include "mtdesk/translate/translation_engine.h"
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

// For the document queue's picture: passes the first `allowed` jobs to `inner` and holds the
// others unanswered (cancelled when asked, or when it goes), so that a document stays part-way.
class HoldingEngine final : public TranslationEngine {
  public:
    HoldingEngine(std::shared_ptr<TranslationEngine> inner, int allowed)
        : inner_(std::move(inner)), allowed_(allowed) {}
    ~HoldingEngine() override {
        for (auto& [id, callbacks] : held_)
            if (callbacks.on_done) callbacks.on_done(cancelled());
    }
    uint64_t submit(TranslationJob job, JobCallbacks callbacks) override {
        std::unique_lock lock(m_);
        const uint64_t id = ++last_;
        if (allowed_ == 0) {
            held_[id] = std::move(callbacks);
            return id;
        }
        --allowed_;
        lock.unlock();
        const uint64_t inner = inner_->submit(std::move(job), std::move(callbacks));
        lock.lock();
        passed_[id] = inner;
        return id;
    }
    void cancel(uint64_t id) override {
        std::unique_lock lock(m_);
        if (auto it = held_.find(id); it != held_.end()) {
            JobCallbacks callbacks = std::move(it->second);
            held_.erase(it);
            lock.unlock();
            if (callbacks.on_done) callbacks.on_done(cancelled());
        } else if (auto p = passed_.find(id); p != passed_.end()) {
            const uint64_t inner = p->second;
            lock.unlock();
            inner_->cancel(inner);
        }
    }
    int max_in_flight() const override { return 1; }
    EngineStatistics statistics() const override { return inner_->statistics(); }
    const Translator* translator() const noexcept override { return inner_->translator(); }

  private:
    static JobOutcome cancelled() {
        JobOutcome o;
        o.status = JobOutcome::Status::Cancelled;
        return o;
    }
    std::shared_ptr<TranslationEngine> inner_;
    std::mutex m_;
    int allowed_;
    uint64_t last_ = 0;
    std::map<uint64_t, JobCallbacks> held_;
    std::map<uint64_t, uint64_t> passed_;
};

bool write_file(const QString& path, const QByteArray& content) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(content) == content.size();
}

// The window with the document queue: a document done, one that failed with its message, one
// running at 40 % and one queued, in the language of `from`.
bool render_documents(MainWindow& window, TranslationController& controller, const QString& file,
                      const QString& from) {
    QTemporaryDir tmp;
    if (!tmp.isValid()) return false;
    const bool zh = from.startsWith(QLatin1String("zh"));
    const QStringList names =
        zh ? QStringList{QStringLiteral("欢迎.md"), QStringLiteral("字幕.srt"),
                         QStringLiteral("用户指南.txt"), QStringLiteral("发行说明.txt")}
           : QStringList{QStringLiteral("welcome.md"), QStringLiteral("subtitles.srt"),
                         QStringLiteral("user-guide.txt"), QStringLiteral("release-notes.txt")};
    const QStringList lines =
        zh ? QStringList{QStringLiteral("打开文件。"), QStringLiteral("保存更改。"),
                         QStringLiteral("关闭窗口。"), QStringLiteral("打印文档。"),
                         QStringLiteral("检查更新。"), QStringLiteral("选择语言。"),
                         QStringLiteral("下载完成。"), QStringLiteral("设置已保存。"),
                         QStringLiteral("网络错误。"), QStringLiteral("磁盘已满。")}
           : QStringList{
                 QStringLiteral("Open the file."),     QStringLiteral("Save your changes."),
                 QStringLiteral("Close the window."),  QStringLiteral("Print the document."),
                 QStringLiteral("Check for updates."), QStringLiteral("Select a language."),
                 QStringLiteral("Download complete."), QStringLiteral("Settings saved."),
                 QStringLiteral("Network error."),     QStringLiteral("The disk is full.")};
    QStringList paths;
    for (const QString& name : names)
        paths.append(tmp.filePath(name));
    const QByteArray md =
        "# " + lines[0].toUtf8() + "\n\n" + lines[1].toUtf8() + "\n\n- " + lines[2].toUtf8() + "\n";
    const QByteArray srt = "1\n00:00:01,000 --> 00:00:04,000\n" + lines[3].toUtf8() +
                           "\n\n2\n00:00:05,000 --> 00:00:0\n" + lines[4].toUtf8() + "\n";
    const QByteArray guide = (lines.join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8();
    const QByteArray notes = (lines.mid(5).join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8();
    if (!write_file(paths[0], md) || !write_file(paths[1], srt) || !write_file(paths[2], guide) ||
        !write_file(paths[3], notes))
        return false;

    // 3 segments of the first document, then 4 of the guide's 10: the guide stops at 40 %.
    app::JobQueue& queue = *window.jobQueue();
    queue.setEngine(std::make_shared<HoldingEngine>(controller.engine(), 3 + 4));
    window.resize(1180, 840);
    window.addDocuments(paths);
    const QList<app::DocumentJob> jobs = queue.jobs();
    QElapsedTimer clock;
    clock.start();
    auto ready = [&] {
        const auto guide_job = queue.job(jobs.value(2).id);
        return queue.job(jobs.value(0).id)->state == app::JobState::Done &&
               queue.job(jobs.value(1).id)->state == app::JobState::Failed && guide_job &&
               guide_job->segments_done == 4;
    };
    while (jobs.size() == 4 && !ready() && clock.elapsed() < 120000)
        wait_ms(20);
    if (jobs.size() != 4 || !ready()) {
        std::fputs("mtdesk: the document queue did not reach its picture's state\n", stderr);
        return false;
    }
    wait_ms(1600);  // elapsed and remaining times tick
    const bool ok = window.grab().save(file);
    queue.setEngine(nullptr);
    return ok;
}

// Renders the main window (with a finished translation), the settings dialog (with a valid
// and with an invalid model directory) and the window with the document queue to PNG files in
// `dir`, then returns.
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
        // A model that failed to load answers nothing: stop at once, with its error.
        while (!finished && clock.elapsed() < 120000 &&
               controller.state() != TranslationController::State::Failed)
            wait_ms(20);
        if (controller.state() == TranslationController::State::Failed) {
            std::fprintf(stderr, "mtdesk: %s\n", qPrintable(controller.lastError()));
            return 1;
        }
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
    ok = render_documents(window, controller,
                          QDir(dir).filePath(QStringLiteral("documents") + suffix), from) &&
         ok;
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
    // --help and --version need no window: without a display they go through the offscreen
    // platform, which prints them as with one.
    const bool info_only = std::any_of(argv + 1, argv + argc, [](const char* a) {
        const std::string_view s(a);
        return s == "--help" || s == "-h" || s == "--help-all" || s == "--version" || s == "-v";
    });
    if (info_only && !display_available() && !env_set("QT_QPA_PLATFORM"))
        setenv("QT_QPA_PLATFORM", "offscreen", 1);
    if (!display_available() && !env_set("QT_QPA_PLATFORM")) {
        std::fputs(
            "mtdesk: no display ($DISPLAY and $WAYLAND_DISPLAY are unset), so no window; "
            "see 'mtdesk --help' for the command line\n",
            stderr);
        return 1;
    }
    // A display that is named but does not answer (a stale $DISPLAY, ssh without X
    // forwarding) would make Qt abort; with the offscreen platform as the last fallback the
    // application starts, and says what is wrong.
    const bool platform_given = env_set("QT_QPA_PLATFORM");
    if (!platform_given)
        setenv("QT_QPA_PLATFORM",
               env_set("WAYLAND_DISPLAY") ? "wayland;xcb;offscreen" : "xcb;offscreen", 1);
    QApplication app(argc, argv);
    if (!platform_given) {
        unsetenv("QT_QPA_PLATFORM");  // not for the programs the window starts
        if (QGuiApplication::platformName() == QLatin1String("offscreen") && !info_only) {
            const char* display = std::getenv("DISPLAY");
            const char* wayland = std::getenv("WAYLAND_DISPLAY");
            std::fprintf(stderr,
                         "mtdesk: cannot open a window: the display does not answer "
                         "(DISPLAY=%s, WAYLAND_DISPLAY=%s); see 'mtdesk --help' for the command "
                         "line\n",
                         display ? display : "", wayland ? wayland : "");
            return 1;
        }
    }
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
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("gui"), QStringLiteral("(the command itself)"));
    const QCommandLineOption model({QStringLiteral("m"), QStringLiteral("model")},
                                   QStringLiteral("Model directory for this session."),
                                   QStringLiteral("DIR"));
    const QCommandLineOption language(QStringLiteral("language"),
                                      QStringLiteral("UI language for this session: en, zh_CN."),
                                      QStringLiteral("LANG"));
    const QCommandLineOption screenshots(
        QStringLiteral("screenshots"),
        QStringLiteral("Render the main window, the settings dialog and the document queue to PNG "
                       "files in DIR, then exit (needs --model; settings and queue are kept "
                       "apart from the user's)."),
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
        QDir(app::JobQueue::defaultStateDirectory()).removeRecursively();  // and queue
        const QString lang = install_translations(app, parser.value(language));
        const QString sample = parser.isSet(text)
                                   ? parser.value(text)
                                   : QStringLiteral("Open the file and save your changes.");
        const int rc = render_screenshots(parser.value(screenshots), parser.value(model), lang,
                                          sample, parser.value(from), parser.value(to));
        QDir(app::JobQueue::defaultStateDirectory()).removeRecursively();
        return rc;
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
