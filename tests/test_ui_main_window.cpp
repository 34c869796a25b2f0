// The translation window on the offscreen platform, with a tiny random-weight fixture model (its
// output is nonsense text made of real tokens): typing translates, the streamed result equals the
// engine's own greedy translation, swap, detect, stale requests, settings, language search, the
// settings dialog's inline error, the live panel and the Chinese UI.

#include <QAbstractItemView>
#include <QApplication>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QCompleter>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QInputMethodEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolButton>

#include <exception>
#include <memory>
#include <optional>

#include "document_queue.h"
#include "gui_main.h"
#include "i18n.h"
#include "language_picker.h"
#include "live_panel.h"
#include "main_window.h"
#include "mtdesk/model/model_dir.h"
#include "mtdesk/quant/tiers.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translator.h"
#include "settings.h"
#include "settings_dialog.h"
#include "translation_controller.h"

using namespace mtdesk;
using namespace mtdesk::ui;

namespace {

const QString kModel = QStringLiteral(MTDESK_TEST_DATA_DIR "/models/hunyuan-gqa-alpha");
constexpr int kTimeout = 60000;

// What the engine itself gives for one segment with greedy decoding, on one line as the window
// shows a line's translation (single_line); nullopt when the engine throws. (The fixture's random
// weights sometimes pick an id past the tokenizer's last token, which the engine reports as an
// error.)
std::optional<QString> reference_translation(const QString& text, const char* from,
                                             const char* to) {
    static std::unique_ptr<Translator> translator = Translator::open_cpu(kModel.toStdString());
    PromptRequest request;
    request.text = text.toStdString();
    request.source = from ? find_language(from) : nullptr;
    request.target = find_language(to);
    TranslateOptions options;
    options.sampling = SamplingParams::greedy_decoding();
    try {
        return QString::fromStdString(single_line(translator->translate(request, options).text));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// The first of `candidates` that the fixture translates from `from` to `to` without an error.
QString sample(const char* from, const char* to, const QStringList& candidates) {
    for (const QString& c : candidates)
        if (reference_translation(c, from, to)) return c;
    return {};
}

const QStringList kSentences = {
    QStringLiteral("Open the file and save your changes."),
    QStringLiteral("Thank you."),
    QStringLiteral("Hello"),
    QStringLiteral("Where is the station?"),
    QStringLiteral("Good morning."),
    QStringLiteral("Save the file."),
    QStringLiteral("Short."),
    QStringLiteral("One."),
    QStringLiteral("Two."),
    QStringLiteral("See you tomorrow."),
};

// QPlainTextEdit keeps paragraphs, not line-end characters: \r\n and \r read back as \n.
QString as_shown(QString text) {
    text.replace(QStringLiteral("\r\n"), QStringLiteral("\n"));
    text.replace(QLatin1Char('\r'), QLatin1Char('\n'));
    return text;
}

// A window with the fixture model loaded and greedy sampling.
struct Window {
    Settings settings;
    TranslationController controller;
    std::unique_ptr<MainWindow> window;
    QList<quint64> finished;
    QStringList finishedTexts;
    QList<quint64> partials;

    explicit Window(const QString& from = QStringLiteral("en"),
                    const QString& to = QStringLiteral("zh")) {
        settings.setSamplingMode(SamplingMode::Greedy);
        settings.setModelDirectory(kModel);
        settings.setSourceLanguage(from);
        settings.setTargetLanguage(to);
        window = std::make_unique<MainWindow>(settings, controller);
        QObject::connect(&controller, &TranslationController::translationFinished, window.get(),
                         [this](quint64 id, const QString& text, const RequestStats&) {
                             finished.append(id);
                             finishedTexts.append(text);
                         });
        QObject::connect(&controller, &TranslationController::partialTranslation, window.get(),
                         [this](quint64 id, const QString&) { partials.append(id); });
        QObject::connect(
            &controller, &TranslationController::error, window.get(),
            [](const QString& message) { qWarning("engine error: %s", qPrintable(message)); });
        window->show();
        window->loadConfiguredModel();
    }
    bool ready() const { return controller.state() == TranslationController::State::Ready; }
};

// Runs `inspect` on the settings dialog that `open` shows modally, then closes it: accepted when
// `inspect` returns true. Returns whether the dialog was seen.
template <class Open, class Inspect>
bool with_settings_dialog(Open open, Inspect inspect) {
    bool seen = false;
    QTimer::singleShot(0, [&] {
        auto* dialog = qobject_cast<SettingsDialog*>(QApplication::activeModalWidget());
        if (!dialog) {  // not to hang the test on a dialog that is something else
            if (QWidget* other = QApplication::activeModalWidget()) other->close();
            return;
        }
        seen = true;
        if (inspect(*dialog))
            dialog->accept();
        else
            dialog->reject();
    });
    open();
    return seen;
}

QString clean(const QString& dir) {
    return QDir::cleanPath(QDir(dir).absolutePath());
}

}  // namespace

class TestUiMainWindow : public QObject {
    Q_OBJECT

    // No two entries of a menu (nor two menus of the bar) share an Alt letter.
    static void checkMnemonics(QMainWindow& window) {
        auto letter = [](const QString& text) {
            const qsizetype i = text.indexOf(QRegularExpression(QStringLiteral("&[^&]")));
            return i < 0 ? QString() : text.mid(i + 1, 1).toLower();
        };
        auto distinct = [&](const QList<QAction*>& actions, const QString& where) {
            QMap<QString, QString> seen;
            for (QAction* a : actions) {
                const QString l = letter(a->text());
                if (l.isEmpty()) continue;
                QVERIFY2(!seen.contains(l),
                         qPrintable(where + QStringLiteral(": '") + a->text() +
                                    QStringLiteral("' and '") + seen[l] + QStringLiteral("'")));
                seen.insert(l, a->text());
            }
        };
        distinct(window.menuBar()->actions(), QStringLiteral("menu bar"));
        for (QAction* m : window.menuBar()->actions())
            if (m->menu()) distinct(m->menu()->actions(), m->text());
    }

  private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("mtdesk-test"));
        QCoreApplication::setApplicationName(QStringLiteral("test_ui_main_window"));
        init_resources();
    }

    void init() { QSettings().clear(); }

    void typingProducesTranslation() {
        Window w;
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        QVERIFY(w.window->statusText().contains(QStringLiteral("hunyuan-gqa-alpha")));
        const QString text = sample("en", "zh", kSentences);
        QVERIFY(!text.isEmpty());
        QTest::keyClicks(w.window->sourceEdit(), text);
        QVERIFY(w.window->debounceTimer()->isActive());  // waits for the typing to pause
        QTRY_VERIFY_WITH_TIMEOUT(w.finished.size() == 1, kTimeout);
        QVERIFY(!w.partials.isEmpty());  // streamed before it finished
        const QString expected = *reference_translation(text, "en", "zh");
        QVERIFY(!expected.isEmpty());
        QCOMPARE(w.finishedTexts.front(), expected);
        QCOMPARE(w.window->targetEdit()->toPlainText(), as_shown(expected));
        QCOMPARE(w.window->translation(), expected);  // what Copy puts on the clipboard
    }

    void ctrlEnterTranslatesNow() {
        Window w;
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        QVERIFY(QTest::qWaitForWindowExposed(w.window.get()));
        w.window->activateWindow();
        w.window->sourceEdit()->setFocus();
        const QString text = sample("en", "zh", kSentences);
        w.window->sourceEdit()->setPlainText(text);
        QVERIFY(w.window->debounceTimer()->isActive());
        const quint64 before = w.controller.latestRequestId();
        QTest::keyClick(w.window->sourceEdit(), Qt::Key_Return, Qt::ControlModifier);
        QVERIFY(!w.window->debounceTimer()->isActive());
        QCOMPARE(w.controller.latestRequestId(), before + 1);
        QCOMPARE(w.window->sourceEdit()->toPlainText(), text);  // no newline typed
        QTRY_VERIFY_WITH_TIMEOUT(w.finished.size() == 1, kTimeout);
        QCOMPARE(w.finishedTexts.front(), *reference_translation(text, "en", "zh"));
    }

    void swapSwapsLanguagesAndTexts() {
        Window w(QStringLiteral("en"), QStringLiteral("fr"));
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        const QString text = sample("en", "fr", kSentences);
        w.window->sourceEdit()->setPlainText(text);
        w.window->translateNow();
        QTRY_VERIFY_WITH_TIMEOUT(w.finished.size() == 1, kTimeout);
        const QString translated = w.window->targetEdit()->toPlainText();
        QVERIFY(!translated.isEmpty());
        w.window->swapLanguages();
        QCOMPARE(w.window->sourcePicker()->currentCode(), QStringLiteral("fr"));
        QCOMPARE(w.window->targetPicker()->currentCode(), QStringLiteral("en"));
        QCOMPARE(w.window->sourceEdit()->toPlainText(), translated);
        QCOMPARE(w.window->targetEdit()->toPlainText(), text);
        QCOMPARE(w.settings.sourceLanguage(), QStringLiteral("fr"));
        QCOMPARE(w.settings.targetLanguage(), QStringLiteral("en"));
        // New documents take the swapped pair too.
        QCOMPARE(w.window->documentQueue()->sourceLanguage(), QStringLiteral("fr"));
        QCOMPARE(w.window->documentQueue()->targetLanguage(), QStringLiteral("en"));
        // Swapping back restores the pickers.
        w.window->swapLanguages();
        QCOMPARE(w.window->sourcePicker()->currentCode(), QStringLiteral("en"));
        QCOMPARE(w.window->targetPicker()->currentCode(), QStringLiteral("fr"));
    }

    void detectAndSwapFromDetect() {
        Window w(QString(), QStringLiteral("en"));
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        QCOMPARE(w.window->sourcePicker()->currentCode(), QString());  // Detect
        const QString text = sample(
            nullptr, "en",
            {QStringLiteral("今天天气很好，我们去公园散步。"), QStringLiteral("谢谢你的帮助。"),
             QStringLiteral("请打开文件并保存修改。"), QStringLiteral("你好")});
        QVERIFY(!text.isEmpty());
        w.window->sourceEdit()->setPlainText(text);
        w.window->translateNow();
        QCOMPARE(w.window->sourcePicker()->detected(), QStringLiteral("zh"));
        QVERIFY(w.window->sourcePicker()->currentText().contains(QStringLiteral("Chinese")));
        QTRY_VERIFY_WITH_TIMEOUT(w.finished.size() == 1, kTimeout);
        QCOMPARE(w.finishedTexts.front(), *reference_translation(text, "zh", "en"));
        // The detected language goes to the target side on swap.
        w.window->swapLanguages();
        QCOMPARE(w.window->sourcePicker()->currentCode(), QStringLiteral("en"));
        QCOMPARE(w.window->targetPicker()->currentCode(), QStringLiteral("zh"));

        // Other languages are detected with CLD2; text too short to be sure is left to the
        // prompt ("unknown").
        Window v(QString(), QStringLiteral("zh"));
        v.window->sourceEdit()->setPlainText(QStringLiteral("Where is the station?"));
        v.window->translateNow();
        QCOMPARE(v.window->sourcePicker()->detected(), QStringLiteral("en"));
        v.window->sourceEdit()->setPlainText(QStringLiteral("ok"));
        v.window->translateNow();
        QCOMPARE(v.window->sourcePicker()->detected(), QString());
    }

    void newerEditCancelsStaleRequest() {
        TranslationController controller;
        TranslationOptions options;
        options.mode = SamplingMode::Greedy;
        controller.setOptions(options);
        QList<quint64> finished, partial;
        QStringList finishedTexts;
        connect(&controller, &TranslationController::translationFinished, this,
                [&](quint64 id, const QString& text, const RequestStats&) {
                    finished.append(id);
                    finishedTexts.append(text);
                });
        connect(&controller, &TranslationController::partialTranslation, this,
                [&](quint64 id, const QString&) { partial.append(id); });
        controller.loadModel(kModel);
        QTRY_VERIFY_WITH_TIMEOUT(controller.state() == TranslationController::State::Ready,
                                 kTimeout);

        // A long request (many lines), superseded once it is running.
        const QString line = sample("en", "de", kSentences);
        QVERIFY(!line.isEmpty());
        // Distinct lines: a repeated one would come from the line cache at once.
        QStringList lines;
        for (int i = 1; i <= 40; ++i)
            lines << QStringLiteral("%1 (%2)").arg(line).arg(i);
        const quint64 stale =
            controller.translate(lines.join('\n'), QStringLiteral("en"), QStringLiteral("de"));
        QTRY_VERIFY_WITH_TIMEOUT(partial.contains(stale), kTimeout);  // it is running
        QVERIFY(controller.busy());
        const QString short_text = sample("en", "de", kSentences.mid(1));
        const quint64 fresh =
            controller.translate(short_text, QStringLiteral("en"), QStringLiteral("de"));
        QVERIFY(fresh > stale);
        QTRY_VERIFY_WITH_TIMEOUT(finished.contains(fresh), kTimeout);
        QTest::qWait(300);  // anything stale still queued would arrive now
        QCOMPARE(finished, QList<quint64>{fresh});
        QCOMPARE(finishedTexts.front(), *reference_translation(short_text, "en", "de"));
        QVERIFY(!controller.busy());
        // Only the finished request counts in the figures: the stale one was cut short.
        QCOMPARE(controller.stats().finished_requests, quint64(1));

        // A pending request that never started is replaced the same way.
        finished.clear();
        const quint64 a =
            controller.translate(lines.join('\n'), QStringLiteral("en"), QStringLiteral("de"));
        const quint64 b = controller.translate(sample("en", "fr", kSentences), QStringLiteral("en"),
                                               QStringLiteral("fr"));
        QTRY_VERIFY_WITH_TIMEOUT(finished.contains(b), kTimeout);
        QTest::qWait(300);
        QVERIFY(!finished.contains(a));
        QCOMPARE(finished.size(), 1);
    }

    void newerEditInTheWindowWins() {
        Window w;
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        // Long enough to be still running when the edit's debounce ends.
        // Distinct lines: a repeated one would come from the line cache at once.
        QStringList lines;
        for (int i = 1; i <= 300; ++i)
            lines << QStringLiteral("%1 (%2)").arg(sample("en", "zh", kSentences)).arg(i);
        w.window->sourceEdit()->setPlainText(lines.join('\n'));
        w.window->translateNow();
        const quint64 stale = w.controller.latestRequestId();
        QTRY_VERIFY_WITH_TIMEOUT(w.partials.contains(stale), kTimeout);
        // The user edits: select all and type a new text.
        w.window->sourceEdit()->selectAll();
        const QString text = sample("en", "zh", kSentences.mid(1));
        QTest::keyClicks(w.window->sourceEdit(), text);
        QTRY_VERIFY_WITH_TIMEOUT(!w.finished.isEmpty(), kTimeout);
        QTest::qWait(300);
        QCOMPARE(w.finished.size(), 1);
        QVERIFY(w.finished.front() != stale);
        QCOMPARE(w.finishedTexts.front(), *reference_translation(text, "en", "zh"));
    }

    void livePanelShowsFigures() {
        Window w;
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        w.window->sourceEdit()->setPlainText(sample("en", "zh", kSentences));
        w.window->translateNow();
        QTRY_VERIFY_WITH_TIMEOUT(w.finished.size() == 1, kTimeout);
        const EngineStats s = w.controller.stats();
        QVERIFY(s.ram_bytes > 1024 * 1024);
        QCOMPARE(s.device, QStringLiteral("CPU"));
        QVERIFY(s.ttft_ms.last && *s.ttft_ms.last > 0);
        QVERIFY(s.ttft_ms.p50 && s.ttft_ms.p95);
        QCOMPARE(s.ttft_history.size(), 1);
        QCOMPARE(s.queue_depth, 0);
        QVERIFY(!s.vram_total_bytes);  // the CPU engine has none
        LivePanel* panel = w.window->livePanel();
        panel->refresh();
        QCOMPARE(panel->rowText(QStringLiteral("device")), QStringLiteral("CPU"));
        QCOMPARE(panel->rowText(QStringLiteral("tier")), QStringLiteral("fp32 (CPU)"));
        QVERIFY(panel->rowText(QStringLiteral("memory")).contains(QStringLiteral("MiB")));
        QVERIFY(panel->rowText(QStringLiteral("ttft")).contains(QStringLiteral("p95")));
        QVERIFY(!panel->rowText(QStringLiteral("ttft")).startsWith(QStringLiteral("–")));
        // One sample so far: the charts show it as a point (a line needs two).
        QList<QLineSeries*> series;
        for (QChartView* view : panel->findChildren<QChartView*>())
            for (QAbstractSeries* s : view->chart()->series())
                if (auto* line = qobject_cast<QLineSeries*>(s)) series.append(line);
        QVERIFY(!series.isEmpty());
        for (QLineSeries* s : series)
            QVERIFY(s->count() != 1 || s->pointsVisible());
        QVERIFY(std::any_of(series.begin(), series.end(),
                            [](QLineSeries* s) { return s->count() == 1; }));
    }

    void percentiles() {
        QCOMPARE(percentile({}, 50), std::nullopt);
        QCOMPARE(*percentile({5}, 95), 5.0);
        QVector<double> v;
        for (int i = 1; i <= 100; ++i)
            v << i;
        QCOMPARE(*percentile(v, 50), 50.0);
        QCOMPARE(*percentile(v, 95), 95.0);
        QCOMPARE(*percentile({3, 1, 2}, 50), 2.0);
    }

    void settingsPersist() {
        {
            Settings a;
            a.setModelDirectory(QStringLiteral("/models/x"));
            a.setSamplingMode(SamplingMode::Custom);
            SamplingParams p;
            p.temperature = 0.3f;
            p.top_k = 7;
            p.top_p = 0.9f;
            p.repetition_penalty = 1.2f;
            p.seed = 42;
            a.setCustomSampling(p);
            a.setMaxNewTokens(300);
            a.setUiLanguage(QStringLiteral("zh_CN"));
            a.setFontPointSize(17);
            a.setSourceLanguage(QStringLiteral("bo"));
            a.setTargetLanguage(QStringLiteral("yue"));
            a.setTier(QStringLiteral("int8"));
            a.setContextTokens(4096);
            a.setMaxBatch(4);
            a.setInt8KvCache(true);
            a.setCpuTier(QStringLiteral("int4"));
            a.sync();
        }
        Settings b;
        QCOMPARE(b.modelDirectory(), QStringLiteral("/models/x"));
        QCOMPARE(b.samplingMode(), SamplingMode::Custom);
        const SamplingParams p = b.customSampling();
        QCOMPARE(p.temperature, 0.3f);
        QCOMPARE(p.top_k, 7);
        QCOMPARE(p.top_p, 0.9f);
        QCOMPARE(p.repetition_penalty, 1.2f);
        QCOMPARE(p.seed.value_or(0), uint64_t(42));
        QCOMPARE(b.maxNewTokens(), 300);
        QCOMPARE(b.uiLanguage(), QStringLiteral("zh_CN"));
        QCOMPARE(b.fontPointSize(), 17);
        QCOMPARE(b.sourceLanguage(), QStringLiteral("bo"));
        QCOMPARE(b.targetLanguage(), QStringLiteral("yue"));
        QCOMPARE(b.tier(), QStringLiteral("int8"));
        QCOMPARE(b.cpuTier(), QStringLiteral("int4"));
        QCOMPARE(b.contextTokens(), 4096);
        QCOMPARE(b.maxBatch(), 4);
        QVERIFY(b.int8KvCache());
        const TranslationOptions o = b.translationOptions();
        QCOMPARE(o.mode, SamplingMode::Custom);
        QCOMPARE(o.max_new_tokens, 300);
    }

    void untrainedPairIsWarned() {
        Window w(QStringLiteral("en"), QStringLiteral("bo"));
        QLabel* warning = w.window->pairWarning();
        QVERIFY(warning->isHidden());  // the fixture model says nothing of its training
        w.window->loadModel(QStringLiteral(MTDESK_DEMO_MODEL_DIR));  // English <-> 13 languages
        QVERIFY(!warning->isHidden());
        QVERIFY2(warning->text().contains(QStringLiteral("English → Tibetan is outside that")),
                 qPrintable(warning->text()));
        QVERIFY(warning->text().contains(QStringLiteral("Uyghur")));
        w.window->targetPicker()->setCurrentCode(QStringLiteral("zh"));
        QVERIFY(warning->isHidden());
        w.window->sourcePicker()->setCurrentCode(QStringLiteral("de"));
        QVERIFY(warning->text().contains(QStringLiteral("German → Chinese")));
        QVERIFY(!warning->isHidden());
        w.window->swapLanguages();  // zh -> de: still no English side
        QVERIFY(warning->text().contains(QStringLiteral("Chinese → German")));
        w.window->targetPicker()->setCurrentCode(QStringLiteral("en"));
        QVERIFY(warning->isHidden());
        // Detect: the detected source counts.
        w.window->sourcePicker()->setCurrentCode(QString());
        w.window->targetPicker()->setCurrentCode(QStringLiteral("ja"));
        w.window->sourceEdit()->setPlainText(
            QStringLiteral("Die Datei konnte nicht gespeichert werden, weil der Datenträger voll "
                           "ist."));
        w.window->translateNow();
        QVERIFY2(warning->text().contains(QStringLiteral("German → Japanese")),
                 qPrintable(warning->text()));
        QVERIFY(!warning->isHidden());
    }

    // A text is not sent to the model for its own language: a pair picked equal gets no
    // translation, a text detected to be in the target language is its own result, and the
    // banner says which instead of warning of a poor translation.
    void sameLanguageIsNotTranslated() {
        Window w(QStringLiteral("en"), QStringLiteral("en"));
        w.window->loadModel(QStringLiteral(MTDESK_DEMO_MODEL_DIR));  // knows its pairs
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        QLabel* banner = w.window->pairWarning();
        const QString english = QStringLiteral(
            "The file could not be saved because the disk is full. Free some space and try "
            "again.");
        w.window->sourceEdit()->setPlainText(english);
        w.window->translateNow();
        QVERIFY(!w.controller.busy());  // nothing was queued
        QCOMPARE(w.window->targetEdit()->toPlainText(), QString());
        QVERIFY(!banner->isHidden());
        QVERIFY2(banner->text().contains(QStringLiteral("both English")),
                 qPrintable(banner->text()));
        QVERIFY(!banner->text().contains(QStringLiteral("poor translation")));

        // Detect finds English, the target language: the text is shown as it is.
        w.window->sourcePicker()->setCurrentCode(QString());
        w.window->translateNow();
        QVERIFY(!w.controller.busy());
        QCOMPARE(w.window->sourcePicker()->detected(), QStringLiteral("en"));
        QCOMPARE(w.window->targetEdit()->toPlainText(), english);
        QCOMPARE(w.window->translation(), english);
        QVERIFY2(banner->text().contains(QStringLiteral("already in English")),
                 qPrintable(banner->text()));

        // Another target: translated, and the banner goes.
        w.window->targetPicker()->setCurrentCode(QStringLiteral("de"));
        QVERIFY(banner->isHidden());
        w.window->translateNow();
        QVERIFY(w.controller.busy());
        QTRY_VERIFY_WITH_TIMEOUT(!w.finished.isEmpty(), kTimeout);
        QVERIFY(w.window->translation() != english);
    }

    // Keyboard use: typing starts in the text pane, each menu's Alt letters are distinct and
    // the document table lets Tab leave it.
    void keyboard() {
        Window w;
        QCOMPARE(w.window->focusWidget(), static_cast<QWidget*>(w.window->sourceEdit()));
        checkMnemonics(*w.window);
        QVERIFY(!w.window->documentQueue()->findChild<QTableView*>()->tabKeyNavigation());
        bool settingsShowsCtrlComma = false;
        for (QAction* a : w.window->findChildren<QAction*>())
            if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_Comma))
                settingsShowsCtrlComma = true;
        QVERIFY(settingsShowsCtrlComma);  // the first shortcut is the one the menu shows
    }

    void livePanelVisibilityPersists() {
        for (const bool shown : {true, false}) {
            {
                Window w;
                QAction* toggle = w.window->findChild<QDockWidget*>(QStringLiteral("livePanel"))
                                      ->toggleViewAction();
                if (toggle->isChecked() != shown) toggle->trigger();
                // Quitting (Ctrl+Q closes the window, then it is destroyed) must not count
                // as the user hiding the panel.
                w.window->close();
            }
            Window again;
            QCOMPARE(Settings().livePanelVisible(), shown);
            QCOMPARE(
                again.window->findChild<QDockWidget*>(QStringLiteral("livePanel"))->isVisible(),
                shown);
        }
    }

    void fontSizeChangesAndPersists() {
        int before = 0;
        {
            Window w;
            before = w.window->textPointSize();
            QVERIFY(before > 0);
            w.window->zoomIn();
            w.window->zoomIn();
            QCOMPARE(w.window->textPointSize(), before + 2);
            QCOMPARE(w.window->targetEdit()->font().pointSize(), before + 2);
            w.window->zoomOut();
            QCOMPARE(w.window->textPointSize(), before + 1);
        }
        {
            Window w;  // a new window reads the setting
            QCOMPARE(w.window->textPointSize(), before + 1);
            w.window->zoomReset();
            QCOMPARE(w.window->textPointSize(), QApplication::font().pointSize());
            QCOMPARE(Settings().fontPointSize(), 0);
        }
    }

    void languageSearch_data() {
        QTest::addColumn<QString>("query");
        QTest::addColumn<QString>("code");
        QTest::newRow("Chinese name") << QStringLiteral("藏语") << QStringLiteral("bo");
        QTest::newRow("code") << QStringLiteral("bo") << QStringLiteral("bo");
        QTest::newRow("English name") << QStringLiteral("Tibetan") << QStringLiteral("bo");
        QTest::newRow("native name") << QStringLiteral("བོད་ཡིག") << QStringLiteral("bo");
        QTest::newRow("prefix, any case") << QStringLiteral("tibe") << QStringLiteral("bo");
        QTest::newRow("native prefix") << QStringLiteral("Deut") << QStringLiteral("de");
        QTest::newRow("code beats substring") << QStringLiteral("de") << QStringLiteral("de");
        QTest::newRow("alias zh-TW") << QStringLiteral("zh-TW") << QStringLiteral("zh-Hant");
        QTest::newRow("alias fil") << QStringLiteral("fil") << QStringLiteral("tl");
        QTest::newRow("Cantonese in Chinese") << QStringLiteral("粤语") << QStringLiteral("yue");
        QTest::newRow("Uyghur native") << QStringLiteral("ئۇيغۇرچە") << QStringLiteral("ug");
    }

    void languageSearch() {
        QFETCH(QString, query);
        QFETCH(QString, code);
        LanguagePicker picker(false);
        picker.filterModel()->setQuery(query);
        QVERIFY(picker.filterModel()->rowCount() >= 1);
        QCOMPARE(picker.filterModel()->index(0, 0).data(CodeRole).toString(), code);
        QVERIFY(picker.acceptQuery(query));
        QCOMPARE(picker.currentCode(), code);
        QCOMPARE(picker.lineEdit()->text(), picker.itemText(picker.currentIndex()));
    }

    void languageSearchByTyping() {
        QWidget host;
        auto* picker = new LanguagePicker(true, &host);
        host.show();
        QVERIFY(QTest::qWaitForWindowExposed(&host));
        QSignalSpy changed(picker, &LanguagePicker::languageChanged);
        picker->lineEdit()->setFocus();
        picker->lineEdit()->selectAll();
        // Chinese comes in through the input method, as a committed string.
        QInputMethodEvent commit;
        commit.setCommitString(QStringLiteral("藏语"));
        QApplication::sendEvent(picker->lineEdit(), &commit);
        QCOMPARE(picker->filterModel()->index(0, 0).data(CodeRole).toString(),
                 QStringLiteral("bo"));
        QTest::keyClick(picker->lineEdit(), Qt::Key_Return);
        QTRY_COMPARE(picker->currentCode(), QStringLiteral("bo"));
        QVERIFY(!changed.isEmpty());
        QCOMPARE(changed.last().at(0).toString(), QStringLiteral("bo"));
        // Latin letters typed key by key; Enter takes the best match.
        picker->lineEdit()->selectAll();
        QTest::keyClicks(picker->lineEdit(), QStringLiteral("germ"));
        QCOMPARE(picker->filterModel()->index(0, 0).data(CodeRole).toString(),
                 QStringLiteral("de"));
        QTest::keyClick(picker->lineEdit(), Qt::Key_Return);
        QTRY_COMPARE(picker->currentCode(), QStringLiteral("de"));
        QCOMPARE(picker->lineEdit()->text(), picker->itemText(picker->currentIndex()));
        QVERIFY(picker->acceptQuery(QStringLiteral("bo")));
        // A query that matches nothing leaves the choice as it was.
        QVERIFY(!picker->acceptQuery(QStringLiteral("Klingon")));
        QCOMPARE(picker->currentCode(), QStringLiteral("bo"));
        // Detect is on the source side only.
        QVERIFY(picker->setCurrentCode(QString()));
        LanguagePicker target(false);
        QVERIFY(!target.setCurrentCode(QString()));
        QCOMPARE(target.count(), 38);
        QCOMPARE(picker->count(), 39);
    }

    // A typed code takes its language even where another entry's text starts with it: "de" on
    // the source side while it shows "Detect: English", "tr" (Turkish) on the target side,
    // where "Traditional Chinese" starts with "tr". A click selects the text, so that typing
    // replaces it.
    void typedCodeBeatsItemsStartingWithIt() {
        QWidget host;
        auto* source = new LanguagePicker(true, &host);
        auto* target = new LanguagePicker(false, &host);
        auto* layout = new QHBoxLayout(&host);
        layout->addWidget(source);
        layout->addWidget(target);
        host.show();
        QVERIFY(QTest::qWaitForWindowExposed(&host));
        host.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&host));

        QVERIFY(source->setCurrentCode(QString()));
        source->setDetected(QStringLiteral("en"));
        QCOMPARE(source->currentText(), QStringLiteral("Detect: English"));
        source->lineEdit()->setFocus();
        source->lineEdit()->selectAll();
        QTest::keyClicks(source->lineEdit(), QStringLiteral("de"));
        QAbstractItemView* popup = source->completer()->popup();
        QVERIFY(popup->isVisible());
        QCOMPARE(popup->currentIndex().data(CodeRole).toString(), QStringLiteral("de"));
        QTest::keyClick(popup, Qt::Key_Return);  // the popup has the keyboard while shown
        QCOMPARE(source->currentCode(), QStringLiteral("de"));
        QCOMPARE(source->lineEdit()->text(), source->itemText(source->currentIndex()));

        QVERIFY(target->setCurrentCode(QStringLiteral("zh")));
        target->lineEdit()->setFocus();
        target->lineEdit()->selectAll();
        QTest::keyClicks(target->lineEdit(), QStringLiteral("tr"));
        QTest::keyClick(target->completer()->popup(), Qt::Key_Return);
        QCOMPARE(target->currentCode(), QStringLiteral("tr"));

        // A click into a picker that does not have the focus selects all its text.
        QVERIFY(target->setCurrentCode(QStringLiteral("zh")));
        source->lineEdit()->setFocus();
        QTest::mouseClick(target->lineEdit(), Qt::LeftButton, {},
                          target->lineEdit()->rect().center());
        QVERIFY(target->lineEdit()->hasFocus());
        QCOMPARE(target->lineEdit()->selectedText(), target->currentText());
        QTest::keyClicks(target->lineEdit(), QStringLiteral("Tibetan"));
        QCOMPARE(target->lineEdit()->text(), QStringLiteral("Tibetan"));
        QTest::keyClick(target->completer()->popup(), Qt::Key_Return);
        QCOMPARE(target->currentCode(), QStringLiteral("bo"));
        // A second click places the cursor as usual.
        QTest::mouseClick(target->lineEdit(), Qt::LeftButton, {},
                          target->lineEdit()->rect().center());
        QVERIFY(!target->lineEdit()->hasSelectedText());
    }

    // No seed chosen means a random one per translation; a chosen seed is kept; the dialog
    // shows "Random" for none and keeps it so when accepted.
    void seedRandomUnlessChosen() {
        QVERIFY(!Settings().customSampling().seed);
        QSettings().setValue(QStringLiteral("sampling/seed"), 0);  // what older versions stored
        QVERIFY(!Settings().customSampling().seed);
        QSettings().setValue(QStringLiteral("sampling/seed"), 5);  // chosen in an older version
        QCOMPARE(Settings().customSampling().seed.value_or(0), uint64_t(5));
        {
            Settings s;
            SamplingParams p = s.customSampling();
            p.seed.reset();
            s.setCustomSampling(p);
        }
        QVERIFY(!Settings().customSampling().seed);

        Settings settings;
        SettingsDialog dialog(settings);
        dialog.setModelDirectory(QStringLiteral(MTDESK_DEMO_MODEL_DIR));
        auto* seed = dialog.findChild<QSpinBox*>(QStringLiteral("seedSpin"));
        QVERIFY(seed);
        QCOMPARE(seed->text(), QStringLiteral("Random"));
        dialog.accept();
        QVERIFY(!Settings().customSampling().seed);
        SettingsDialog again(settings);
        again.setModelDirectory(QStringLiteral(MTDESK_DEMO_MODEL_DIR));
        again.findChild<QSpinBox*>(QStringLiteral("seedSpin"))->setValue(7);
        again.accept();
        QCOMPARE(Settings().customSampling().seed.value_or(0), uint64_t(7));
    }

    void settingsDialogShowsInlineError() {
        Settings settings;
        SettingsDialog dialog(settings);
        QTemporaryDir tmp;
        const QString missing = tmp.filePath(QStringLiteral("no-such-model"));
        dialog.setModelDirectory(missing);
        QVERIFY(!dialog.modelValid());
        QVERIFY2(dialog.modelMessage().contains(QStringLiteral("does not exist")),
                 qPrintable(dialog.modelMessage()));
        auto* buttons = dialog.findChild<QDialogButtonBox*>();
        QVERIFY(buttons);
        QVERIFY(!buttons->button(QDialogButtonBox::Ok)->isEnabled());

        // A directory with a config but no weights names what is missing.
        QFile::copy(kModel + QStringLiteral("/config.json"),
                    tmp.filePath(QStringLiteral("config.json")));
        dialog.setModelDirectory(tmp.path());
        QVERIFY(!dialog.modelValid());
        QVERIFY(!dialog.modelMessage().isEmpty());

        // The fixture is fine; accepting stores it (as an absolute path).
        dialog.setModelDirectory(kModel);
        QVERIFY2(dialog.modelValid(), qPrintable(dialog.modelMessage()));
        QVERIFY(dialog.modelMessage().contains(QStringLiteral("HunYuanDenseV1ForCausalLM")));
        QVERIFY(buttons->button(QDialogButtonBox::Ok)->isEnabled());
        // "Recommended" shows what the model's generation_config.json says: this fixture
        // samples, the bundled demo model decodes greedily.
        auto* recommended = dialog.findChild<QRadioButton*>(QStringLiteral("recommendedRadio"));
        QVERIFY(recommended);
        QVERIFY2(recommended->text().contains(QStringLiteral(
                     "temperature 0.7, top-k 20, top-p 0.6, repetition penalty 1.05")),
                 qPrintable(recommended->text()));
        dialog.setModelDirectory(QStringLiteral(MTDESK_DEMO_MODEL_DIR));
        QVERIFY2(recommended->text().endsWith(QStringLiteral("(greedy)")),
                 qPrintable(recommended->text()));
        dialog.setModelDirectory(kModel);

        // The INT8 KV cache choice changes the GPU tiers' KV figures to the int8 estimate.
        auto* table = dialog.findChild<QTableWidget*>(QStringLiteral("tierTable"));
        auto* int8_kv = dialog.findChild<QCheckBox*>(QStringLiteral("int8KvCheck"));
        auto* context = dialog.findChild<QSpinBox*>(QStringLiteral("contextSpin"));
        QVERIFY(table && int8_kv && context);
        const ModelConfig config = ModelDir::open(kModel.toStdString()).config;
        // Rows 0-2: the CPU tiers (an fp32 KV cache for one request); then the GPU tiers.
        for (CpuTier t : all_cpu_tiers()) {
            const int row = static_cast<int>(t);
            QVERIFY(table->item(row, 0)->text().startsWith(
                QString::fromLatin1(cpu_tier_name(t).data(), cpu_tier_name(t).size())));
            QCOMPARE(table->item(row, 1)->text(),
                     human_bytes(static_cast<qint64>(estimate_cpu_memory(config, t).weights)));
        }
        auto kv_cell = [&] { return table->item(3, 2)->text(); };  // row 3: the first GPU tier
        int8_kv->setChecked(false);
        QCOMPARE(kv_cell(), human_bytes(static_cast<qint64>(
                                kv_cache_bytes(config, context->value(), KvCacheDtype::Auto))));
        int8_kv->setChecked(true);
        QCOMPARE(kv_cell(), human_bytes(static_cast<qint64>(
                                kv_cache_bytes(config, context->value(), KvCacheDtype::Int8))));
        auto* cpu_tier = dialog.findChild<QComboBox*>(QStringLiteral("cpuTierCombo"));
        QVERIFY(cpu_tier);
        QCOMPARE(cpu_tier->currentData().toString(), QStringLiteral("auto"));
        cpu_tier->setCurrentIndex(cpu_tier->findData(QStringLiteral("int8")));
        dialog.accept();
        QCOMPARE(QDir(Settings().modelDirectory()), QDir(kModel));
        QVERIFY(Settings().int8KvCache());
        QCOMPARE(Settings().cpuTier(), QStringLiteral("int8"));
    }

    // The CPU tier choices show whole; the automatic rule is in the tooltip.
    void cpuTierChoicesShowWhole() {
        Settings settings;
        SettingsDialog dialog(settings);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        auto* combo = dialog.findChild<QComboBox*>(QStringLiteral("cpuTierCombo"));
        QVERIFY(combo);
        QCOMPARE(combo->itemData(0).toString(), QStringLiteral("auto"));
        QVERIFY(combo->itemData(0, Qt::ToolTipRole).toString().contains(QStringLiteral("int4")));
        for (int i = 0; i < combo->count(); ++i)
            QVERIFY2(combo->fontMetrics().horizontalAdvance(combo->itemText(i)) <
                         combo->width() - 30,  // the frame and the arrow
                     qPrintable(combo->itemText(i)));
    }

    // A model given for the session (`gui --model`) is what Settings shows; OK unchanged keeps
    // it without saving it, an engine change reloads it (not the saved one), and choosing
    // another model saves that one and says it was loaded.
    void sessionModelIsShownAndKept() {
        Window w;  // the saved model: the fixture
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        w.window->loadModel(QStringLiteral(MTDESK_DEMO_MODEL_DIR));
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        QCOMPARE(w.controller.modelName(), QStringLiteral("mtdesk-demo"));
        QCOMPARE(w.window->modelDirectoryInUse(), clean(QStringLiteral(MTDESK_DEMO_MODEL_DIR)));

        QString shown, message;
        QVERIFY(with_settings_dialog([&] { w.window->showSettings(); },
                                     [&](SettingsDialog& d) {
                                         shown = d.modelDirectory();
                                         message = d.modelMessage();
                                         return true;
                                     }));
        QCOMPARE(shown, clean(QStringLiteral(MTDESK_DEMO_MODEL_DIR)));
        QVERIFY2(message.contains(QStringLiteral("this session")), qPrintable(message));
        QVERIFY(w.ready());  // nothing changed: nothing reloaded (a load is Loading at once)
        QCOMPARE(w.controller.modelName(), QStringLiteral("mtdesk-demo"));
        QCOMPARE(clean(Settings().modelDirectory()), clean(kModel));  // not saved

        // Another CPU tier reloads the model in use, not the saved one.
        QVERIFY(with_settings_dialog(
            [&] { w.window->showSettings(); },
            [&](SettingsDialog& d) {
                auto* tier = d.findChild<QComboBox*>(QStringLiteral("cpuTierCombo"));
                tier->setCurrentIndex(tier->findData(QStringLiteral("int8")));
                return true;
            }));
        QCOMPARE(w.controller.state(), TranslationController::State::Loading);
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        QCOMPARE(w.controller.modelName(), QStringLiteral("mtdesk-demo"));
        QTRY_COMPARE_WITH_TIMEOUT(w.window->statusBar()->currentMessage(),
                                  QStringLiteral("Model mtdesk-demo loaded"), kTimeout);

        // Another model: saved, loaded, said so; the session's model is gone.
        w.window->statusBar()->showMessage(QStringLiteral("an old note"));
        QVERIFY(with_settings_dialog([&] { w.window->showSettings(); },
                                     [&](SettingsDialog& d) {
                                         d.setModelDirectory(kModel);
                                         return true;
                                     }));
        QVERIFY(w.window->statusBar()->currentMessage() != QStringLiteral("an old note"));
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        QCOMPARE(w.controller.modelName(), QStringLiteral("hunyuan-gqa-alpha"));
        QCOMPARE(clean(Settings().modelDirectory()), clean(kModel));
        QTRY_COMPARE_WITH_TIMEOUT(w.window->statusBar()->currentMessage(),
                                  QStringLiteral("Model hunyuan-gqa-alpha loaded"), kTimeout);
        QVERIFY(with_settings_dialog([&] { w.window->showSettings(); },
                                     [&](SettingsDialog& d) {
                                         shown = d.modelDirectory();
                                         message = d.modelMessage();
                                         return false;
                                     }));
        QCOMPARE(clean(shown), clean(kModel));
        QVERIFY2(!message.contains(QStringLiteral("this session")), qPrintable(message));
    }

    // File → Model directory… (Ctrl+O) asks for a folder, not the whole settings dialog; a
    // folder that is no model is refused with the reason, a model is saved and loaded.
    void modelDirectoryActionAsksForAFolder() {
        Window w;
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        QAction* open = nullptr;
        for (QAction* a : w.window->findChildren<QAction*>())
            if (a->shortcut() == QKeySequence(QKeySequence::Open)) open = a;
        QVERIFY(open);
        QString kind;
        QTimer::singleShot(0, [&] {
            QWidget* modal = QApplication::activeModalWidget();
            if (auto* files = qobject_cast<QFileDialog*>(modal))
                kind = files->fileMode() == QFileDialog::Directory ? QStringLiteral("folder")
                                                                   : QStringLiteral("files");
            else if (modal)
                kind = QString::fromLatin1(modal->metaObject()->className());
            if (modal) modal->close();
        });
        open->trigger();
        QCOMPARE(kind, QStringLiteral("folder"));

        QTemporaryDir empty;
        QVERIFY(!w.window->useModelDirectory(empty.path()));
        auto* box = w.window->findChild<QMessageBox*>();
        QVERIFY(box);
        QVERIFY2(box->informativeText().contains(QStringLiteral("config.json")),
                 qPrintable(box->informativeText()));
        box->close();
        QVERIFY(w.ready());  // still the model it had
        QCOMPARE(clean(Settings().modelDirectory()), clean(kModel));

        QVERIFY(w.window->useModelDirectory(QStringLiteral(MTDESK_DEMO_MODEL_DIR)));
        QCOMPARE(w.controller.state(), TranslationController::State::Loading);
        QCOMPARE(clean(Settings().modelDirectory()), clean(QStringLiteral(MTDESK_DEMO_MODEL_DIR)));
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        QCOMPARE(w.controller.modelName(), QStringLiteral("mtdesk-demo"));
        QTRY_COMPARE_WITH_TIMEOUT(w.window->statusBar()->currentMessage(),
                                  QStringLiteral("Model mtdesk-demo loaded"), kTimeout);
    }

    // The KV budget and batch are the GPU engine's: labelled so, disabled (with the reason) when
    // the CPU runs the model, and a budget beyond what a batch of the model's positions can use
    // is warned of.
    void gpuFieldsAreMarkedAndChecked() {
        Settings settings;
        SettingsDialog dialog(settings);
        dialog.setModelDirectory(kModel);  // 1,024 positions
        auto* device = dialog.findChild<QComboBox*>(QStringLiteral("deviceCombo"));
        auto* context = dialog.findChild<QSpinBox*>(QStringLiteral("contextSpin"));
        auto* batch = dialog.findChild<QSpinBox*>(QStringLiteral("batchSpin"));
        auto* caption = dialog.findChild<QLabel*>(QStringLiteral("contextCaption"));
        QVERIFY(device && context && batch && caption);
        QVERIFY(caption->text().startsWith(QStringLiteral("GPU")));
        QVERIFY(dialog.findChild<QLabel*>(QStringLiteral("batchCaption"))
                    ->text()
                    .startsWith(QStringLiteral("GPU")));
        device->setCurrentIndex(device->findData(QStringLiteral("cpu")));
        QVERIFY(!context->isEnabled());
        QVERIFY(!batch->isEnabled());
        QVERIFY2(context->toolTip().contains(QStringLiteral("1,024 positions")) ||
                     context->toolTip().contains(QStringLiteral("1024 positions")),
                 qPrintable(context->toolTip()));

        batch->setValue(4);
        context->setValue(4096);  // 4 × 1,024: all of it usable
        QVERIFY2(dialog.contextWarning().contains(QStringLiteral("at most")),
                 qPrintable(dialog.contextWarning()));
        QVERIFY(!dialog.contextWarning().contains(QStringLiteral("for nothing")));
        context->setValue(99999);
        QVERIFY2(dialog.contextWarning().contains(QStringLiteral("for nothing")),
                 qPrintable(dialog.contextWarning()));
        batch->setValue(128);  // 128 × 1,024 > 99,999
        QVERIFY(!dialog.contextWarning().contains(QStringLiteral("for nothing")));
        context->setValue(1024);
        QCOMPARE(dialog.contextWarning(), QString());
    }

    // The banner about the language pair comes and goes without moving the pickers or panes.
    void pairBannerDoesNotMoveThePanes() {
        Window w(QStringLiteral("en"), QStringLiteral("zh"));
        w.window->loadModel(QStringLiteral(MTDESK_DEMO_MODEL_DIR));  // knows its pairs
        QVERIFY(QTest::qWaitForWindowExposed(w.window.get()));
        QLabel* banner = w.window->pairWarning();
        QVERIFY(banner->isHidden());
        const auto where = [&] {
            QCoreApplication::processEvents();
            return QList<QRect>{QRect(w.window->sourcePicker()->mapTo(w.window.get(), QPoint(0, 0)),
                                      w.window->sourcePicker()->size()),
                                QRect(w.window->sourceEdit()->mapTo(w.window.get(), QPoint(0, 0)),
                                      w.window->sourceEdit()->size()),
                                QRect(w.window->targetEdit()->mapTo(w.window.get(), QPoint(0, 0)),
                                      w.window->targetEdit()->size())};
        };
        const QList<QRect> before = where();
        w.window->targetPicker()->setCurrentCode(QStringLiteral("bo"));  // untrained
        QVERIFY(!banner->isHidden());
        QCOMPARE(where(), before);
        w.window->targetPicker()->setCurrentCode(QStringLiteral("en"));  // the same language
        QVERIFY(!banner->isHidden());
        QCOMPARE(where(), before);
        w.window->targetPicker()->setCurrentCode(QStringLiteral("zh"));
        QVERIFY(banner->isHidden());
        QCOMPARE(where(), before);
        QCOMPARE(banner->toolTip().isEmpty(), false);  // the last text shown, whole
    }

    // The live panel is as wide before the first figures as with them: the text panes keep
    // their width when the first translation finishes.
    void livePanelKeepsItsWidth() {
        Window w;
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        QVERIFY(QTest::qWaitForWindowExposed(w.window.get()));
        LivePanel* panel = w.window->livePanel();
        QVERIFY(panel->isVisible());
        QVERIFY(panel->rowText(QStringLiteral("ttft")).startsWith(QStringLiteral("–")));
        QCoreApplication::processEvents();
        const int panelWidth = panel->width();
        const int paneWidth = w.window->sourceEdit()->width();
        w.window->sourceEdit()->setPlainText(sample("en", "zh", kSentences));
        w.window->translateNow();
        QTRY_VERIFY_WITH_TIMEOUT(w.finished.size() == 1, kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(
            !panel->rowText(QStringLiteral("ttft")).startsWith(QStringLiteral("–")), kTimeout);
        QCoreApplication::processEvents();
        const QString figures = panel->rowText(QStringLiteral("ttft")) + QStringLiteral(" / ") +
                                panel->rowText(QStringLiteral("tps"));
        QVERIFY2(panel->width() == panelWidth, qPrintable(QStringLiteral("%1 → %2 px with %3")
                                                              .arg(panelWidth)
                                                              .arg(panel->width())
                                                              .arg(figures)));
        QCOMPARE(w.window->sourceEdit()->width(), paneWidth);
    }

    // Tab goes pickers, ⇄, the text, its translation, Translate, Copy; Shift+Tab back.
    void tabOrderFollowsTheLayout() {
        Window w;
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        w.window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(w.window.get()));
        const QString text = sample("en", "zh", kSentences);
        w.window->sourceEdit()->setPlainText(text);
        w.window->translateNow();
        QTRY_VERIFY_WITH_TIMEOUT(w.finished.size() == 1, kTimeout);  // Copy is enabled
        QPushButton* translateButton = nullptr;
        QPushButton* copyButton = nullptr;
        for (QPushButton* b : w.window->findChildren<QPushButton*>()) {
            if (b->text() == QStringLiteral("Translate")) translateButton = b;
            if (b->text() == QStringLiteral("Copy")) copyButton = b;
        }
        QVERIFY(translateButton && copyButton && copyButton->isEnabled());
        auto* swap = w.window->findChild<QToolButton*>();
        QVERIFY(swap && swap->text() == QStringLiteral("⇄"));
        const QList<QWidget*> order = {w.window->sourcePicker(),
                                       swap,
                                       w.window->targetPicker(),
                                       w.window->sourceEdit(),
                                       w.window->targetEdit(),
                                       translateButton,
                                       copyButton};
        // Which of `order` holds the focus (a picker's line edit counts as the picker).
        const auto focused = [&]() -> int {
            QWidget* f = QApplication::focusWidget();
            for (int i = 0; i < order.size(); ++i)
                if (f == order[i] || order[i]->isAncestorOf(f)) return i;
            return -1;
        };
        w.window->sourcePicker()->setFocus();
        QTRY_COMPARE(focused(), 0);
        for (int i = 1; i < order.size(); ++i) {
            QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
            QCOMPARE(focused(), i);
        }
        for (int i = order.size() - 2; i >= 0; --i) {
            QTest::keyClick(QApplication::focusWidget(), Qt::Key_Backtab, Qt::ShiftModifier);
            QCOMPARE(focused(), i);
        }
    }

    void chineseUi() {
        // Last: it installs translators for the rest of the process.
        QCOMPARE(install_translations(*qApp, QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        QCOMPARE(QCoreApplication::translate("mtdesk::ui::MainWindow", "Translate"),
                 QStringLiteral("翻译"));
        // Qt's own strings too (tools/install-deps.sh installs qt6-translations-l10n).
        QCOMPARE(QCoreApplication::translate("QPlatformTheme", "Cancel"), QStringLiteral("取消"));
        Window w(QString(), QStringLiteral("bo"));
        QCOMPARE(w.window->targetPicker()->currentText().left(2), QStringLiteral("藏语"));
        QVERIFY(w.window->sourcePicker()->currentText().contains(QStringLiteral("检测")));
        // QFileDialog reads a filter's patterns between ASCII parentheses only (the pattern
        // of qt_file_dialog_filter_reg_exp): a translated name must leave them intact.
        const QRegularExpression entry(
            QString::fromUtf8(R"re(^(.*) \(([a-zA-Z0-9_.,*? +;#\-\[\]@{}/!<>$%&=^~:|]*)\)$)re"));
        const QStringList filters =
            DocumentQueueView::fileDialogFilter().split(QStringLiteral(";;"));
        QCOMPARE(filters.size(), 2);
        const QRegularExpressionMatch documents = entry.match(filters[0]);
        QVERIFY2(documents.hasMatch(), qPrintable(filters[0]));
        QCOMPARE(documents.captured(1), QStringLiteral("文档"));
        QVERIFY(documents.captured(2).split(QLatin1Char(' ')).contains(QStringLiteral("*.txt")));
        QCOMPARE(filters[1], QStringLiteral("所有文件 (*)"));
        checkMnemonics(*w.window);
        QLocale::setDefault(QLocale::c());
    }
};

QTEST_MAIN(TestUiMainWindow)
#include "test_ui_main_window.moc"
