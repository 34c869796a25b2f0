// The document queue in the window, on the offscreen platform with the bundled demo model: files
// and folders dropped on the window (or on a text pane) become rows in the window's languages and
// finish with the engine the window's typing uses; the view shows each row's progress, times,
// state and error message, and its Cancel / Retry / Open folder / Remove buttons work; a typed
// request does not wait behind a document; a model reload and a restart of the window keep the
// documents going.

#include <QAbstractItemView>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileInfo>
#include <QMenu>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "document_queue.h"
#include "documents/document.h"
#include "gui_main.h"
#include "job_queue.h"
#include "live_panel.h"
#include "main_window.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/translation_engine.h"
#include "mtdesk/translate/translator.h"
#include "settings.h"
#include "translation_controller.h"

using namespace mtdesk;
using namespace mtdesk::app;
using namespace mtdesk::ui;

namespace {

const QString kDemo = QStringLiteral(MTDESK_DEMO_MODEL_DIR);
const QString kData = QStringLiteral(MTDESK_TEST_DATA_DIR "/documents/");
constexpr int kTimeout = 60000;

const QStringList kLines = {
    QStringLiteral("Open the file."),        QStringLiteral("Save your changes."),
    QStringLiteral("Close the window."),     QStringLiteral("Print the document."),
    QStringLiteral("The file was deleted."), QStringLiteral("Could not connect to the server."),
    QStringLiteral("Download complete."),    QStringLiteral("Settings saved."),
    QStringLiteral("Network error."),        QStringLiteral("Check for updates."),
    QStringLiteral("Select a language."),    QStringLiteral("Delete the selected files?"),
};

// `n` lines taken round the list, each numbered so that none repeats.
QByteArray lines_document(int n, int first = 0) {
    QByteArray out;
    for (int i = 0; i < n; ++i)
        out +=
            kLines[(first + i) % kLines.size()].toUtf8() + " " + QByteArray::number(i + 1) + "\n";
    return out;
}

void write_bytes(const QString& path, const QByteArray& bytes) {
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), bytes.size());
}

QByteArray read_bytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The format's own output for the demo model's greedy translations, from a separate Translator.
QByteArray expected_output(const QString& path, const char* from, const char* to) {
    static std::unique_ptr<Translator> translator = Translator::open_cpu(kDemo.toStdString());
    const documents::DocumentFormat* format = nullptr;
    documents::Document doc = documents::read_document(path, &format);
    doc.target_language = to;
    std::vector<std::string> translations;
    for (const std::string& s : doc.segments) {
        PromptRequest request;
        request.text = s;
        request.source = find_language(from);
        request.target = find_language(to);
        TranslateOptions options;
        options.sampling = SamplingParams::greedy_decoding();
        translations.push_back(translator->translate(request, options).text);
    }
    return format->write(doc, translations);
}

// Forwards jobs to another engine, except that once `holdAfter(n)` is called it passes only n
// more and keeps the rest until `release()`: a document then stays Running for as long as the
// test looks at it, however fast the machine translates.
class GatedEngine : public TranslationEngine {
  public:
    explicit GatedEngine(std::shared_ptr<TranslationEngine> inner) : inner_(std::move(inner)) {}

    void holdAfter(int n) {
        std::lock_guard lock(m_);
        allowance_ = n;
    }

    void release() {
        std::vector<Held> held;
        {
            std::lock_guard lock(m_);
            allowance_ = INT_MAX;
            held.swap(held_);
        }
        for (Held& h : held)
            forward(h.id, std::move(h.job), std::move(h.callbacks));
    }

    int heldCount() const {
        std::lock_guard lock(m_);
        return static_cast<int>(held_.size());
    }

    uint64_t submit(TranslationJob job, JobCallbacks callbacks) override {
        uint64_t id = 0;
        {
            std::lock_guard lock(m_);
            id = ++next_id_;
            if (allowance_ <= 0) {
                held_.push_back({id, std::move(job), std::move(callbacks)});
                return id;
            }
            --allowance_;
        }
        forward(id, std::move(job), std::move(callbacks));
        return id;
    }

    void cancel(uint64_t id) override {
        JobCallbacks dropped;
        uint64_t inner_id = 0;
        {
            std::lock_guard lock(m_);
            for (auto it = held_.begin(); it != held_.end(); ++it) {
                if (it->id == id) {
                    dropped = std::move(it->callbacks);
                    held_.erase(it);
                    break;
                }
            }
            if (const auto it = inner_ids_.find(id); it != inner_ids_.end()) inner_id = it->second;
        }
        if (dropped.on_done) {
            JobOutcome outcome;
            outcome.status = JobOutcome::Status::Cancelled;
            dropped.on_done(outcome);  // the queue posts it to its own thread
        }
        if (inner_id) inner_->cancel(inner_id);
    }

    int max_in_flight() const override { return inner_->max_in_flight(); }
    EngineStatistics statistics() const override { return inner_->statistics(); }
    const Translator* translator() const noexcept override { return inner_->translator(); }

  private:
    struct Held {
        uint64_t id;
        TranslationJob job;
        JobCallbacks callbacks;
    };

    void forward(uint64_t id, TranslationJob job, JobCallbacks callbacks) {
        const uint64_t inner_id = inner_->submit(std::move(job), std::move(callbacks));
        std::lock_guard lock(m_);
        inner_ids_[id] = inner_id;
    }

    std::shared_ptr<TranslationEngine> inner_;
    mutable std::mutex m_;
    int allowance_ = INT_MAX;
    uint64_t next_id_ = 0;
    std::vector<Held> held_;
    std::map<uint64_t, uint64_t> inner_ids_;
};

// Answers each segment at once with its text in brackets, less the first "**" and the first
// "%s": a model that drops markup and placeholders.
class LossyEngine : public TranslationEngine {
  public:
    uint64_t submit(TranslationJob job, JobCallbacks callbacks) override {
        std::string text = job.request.text;
        for (const std::string drop : {"**", "%s"})
            if (const auto at = text.find(drop); at != std::string::npos)
                text.erase(at, drop.size());
        JobOutcome outcome;
        outcome.text = "[" + text + "]";
        outcome.generated_tokens = 4;
        callbacks.on_done(outcome);  // the queue takes it through its event loop
        return ++next_id_;
    }
    void cancel(uint64_t) override {}
    int max_in_flight() const override { return 1; }
    EngineStatistics statistics() const override { return {}; }
    const Translator* translator() const noexcept override { return nullptr; }

  private:
    std::atomic<uint64_t> next_id_{0};
};

std::shared_ptr<TranslationEngine> cpu_engine() {
    static std::shared_ptr<TranslationEngine> engine =
        make_cpu_engine(Translator::open_cpu(kDemo.toStdString()));
    return engine;
}

// Sends a drag carrying `mime` and its drop to `target`; true when both were accepted.
bool drop_on(QWidget* target, QMimeData* mime) {
    const QPoint pos = target->rect().center();
    QDragEnterEvent enter(pos, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &enter);
    if (!enter.isAccepted()) return false;
    QDropEvent drop(QPointF(pos), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &drop);
    return drop.isAccepted();
}

QMimeData* files_mime(const QStringList& paths) {
    auto* mime = new QMimeData;
    QList<QUrl> urls;
    for (const QString& p : paths)
        urls.append(QUrl::fromLocalFile(p));
    mime->setUrls(urls);
    return mime;
}

// A window with the demo model loaded, greedy sampling, English to Chinese.
struct Window {
    Settings settings;
    TranslationController controller;
    std::unique_ptr<MainWindow> window;
    QList<quint64> finished;

    Window() {
        settings.setSamplingMode(SamplingMode::Greedy);
        settings.setModelDirectory(kDemo);
        settings.setSourceLanguage(QStringLiteral("en"));
        settings.setTargetLanguage(QStringLiteral("zh"));
        window = std::make_unique<MainWindow>(settings, controller);
        QObject::connect(
            &controller, &TranslationController::translationFinished, window.get(),
            [this](quint64 id, const QString&, const RequestStats&) { finished.append(id); });
        window->resize(1100, 800);
        window->show();
        window->loadConfiguredModel();
    }
    bool ready() const { return controller.state() == TranslationController::State::Ready; }
    JobQueue& queue() const { return *window->jobQueue(); }
};

}  // namespace

class TestUiDocumentQueue : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    int case_ = 0;

    QString freshDir() {
        const QString dir = tmp_.filePath(QStringLiteral("case%1").arg(case_++));
        QDir().mkpath(dir);
        return dir;
    }

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("mtdesk-test"));
        QCoreApplication::setApplicationName(QStringLiteral("test_ui_document_queue"));
        init_resources();
    }

    void init() {
        QSettings().clear();
        // The window's queue lives in the (test-mode) application data: start each case empty.
        QDir(JobQueue::defaultStateDirectory()).removeRecursively();
    }

    void dropQueuesFilesAndFoldersWithTheWindowsEngine() {
        const QString dir = freshDir();
        write_bytes(dir + QStringLiteral("/folder/a.txt"), lines_document(2));
        write_bytes(dir + QStringLiteral("/folder/sub/b.md"),
                    "# " + kLines[4].toUtf8() + "\n\n" + kLines[5].toUtf8() + "\n");
        write_bytes(dir + QStringLiteral("/folder/skip.png"), "not a document");
        write_bytes(dir + QStringLiteral("/c.srt"),
                    "1\n00:00:01,000 --> 00:00:03,000\n" + kLines[6].toUtf8() + "\n");
        write_bytes(dir + QStringLiteral("/d.txt"), lines_document(1, 7));

        Window w;
        QVERIFY(!w.window->documentsDock()->isVisible());  // no documents yet
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        // One engine for typing and documents.
        QVERIFY(w.controller.engine() != nullptr);
        QCOMPARE(w.queue().engine(), w.controller.engine());

        std::unique_ptr<QMimeData> mime(
            files_mime({dir + QStringLiteral("/folder"), dir + QStringLiteral("/c.srt")}));
        QVERIFY(drop_on(w.window.get(), mime.get()));
        QCOMPARE(w.queue().count(), 3);
        QVERIFY(w.window->documentsDock()->isVisible());
        QVERIFY(w.window->statusBar()->currentMessage().contains(QStringLiteral("3")));
        QVERIFY2(w.window->statusText().contains(QStringLiteral("Translating documents (3 to go)")),
                 qPrintable(w.window->statusText()));
        // A queue left a sliver (as a restored layout may leave it) grows back to a third of the
        // window when documents are added.
        w.window->resizeDocks({w.window->documentsDock()}, {20}, Qt::Vertical);
        QTRY_VERIFY(w.window->documentsDock()->height() < w.window->height() / 5);
        w.window->addDocuments({dir + QStringLiteral("/folder")});  // queued already: 0 rows
        QTRY_VERIFY2(w.window->documentsDock()->height() >= w.window->height() / 3 - 8,
                     qPrintable(QString::number(w.window->documentsDock()->height())));
        QCOMPARE(w.queue().count(), 3);

        // A text pane: dragged text stays text, a dragged file is a document.
        QWidget* pane = w.window->sourceEdit()->viewport();
        QMimeData text;
        text.setText(QStringLiteral("some text"));
        const QPoint pos = pane->rect().center();
        QDragEnterEvent enter(pos, Qt::CopyAction, &text, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(pane, &enter);
        QCOMPARE(w.queue().count(), 3);
        std::unique_ptr<QMimeData> file(files_mime({dir + QStringLiteral("/d.txt")}));
        QVERIFY(drop_on(pane, file.get()));
        QCOMPARE(w.queue().count(), 4);
        QCOMPARE(w.window->sourceEdit()->toPlainText(), QString());

        QTRY_VERIFY_WITH_TIMEOUT(w.queue().pendingCount() == 0, kTimeout);
        QVERIFY2(w.window->statusText().endsWith(QStringLiteral("Ready")),
                 qPrintable(w.window->statusText()));
        const QStringList sources = {
            dir + QStringLiteral("/folder/a.txt"), dir + QStringLiteral("/folder/sub/b.md"),
            dir + QStringLiteral("/c.srt"), dir + QStringLiteral("/d.txt")};
        const QList<DocumentJob> jobs = w.queue().jobs();
        QCOMPARE(jobs.size(), 4);
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(jobs[i].source_path, sources[i]);
            QCOMPARE(jobs[i].source_language, QStringLiteral("en"));
            QCOMPARE(jobs[i].target_language, QStringLiteral("zh"));
            QCOMPARE(jobs[i].state, JobState::Done);
            QCOMPARE(read_bytes(jobs[i].output_path), expected_output(sources[i], "en", "zh"));
        }
        // The rows as shown.
        DocumentQueueModel* model = w.window->documentQueue()->model();
        QCOMPARE(model->rowCount(), 4);
        QCOMPARE(model->index(0, DocumentQueueModel::FileColumn).data().toString(),
                 QStringLiteral("a.txt"));
        QCOMPARE(model->index(0, DocumentQueueModel::StateColumn).data().toString(),
                 QStringLiteral("Done → a.zh.txt"));
        QCOMPARE(model->index(0, DocumentQueueModel::ProgressColumn).data().toString(),
                 QStringLiteral("2 / 2"));
        QCOMPARE(model->index(0, DocumentQueueModel::LanguagesColumn).data().toString(),
                 QStringLiteral("English → Chinese"));
    }

    void rowsShowStateAndButtonsWork() {
        const QString dir = freshDir();
        const QString good = dir + QStringLiteral("/good.txt");
        const QString broken = dir + QStringLiteral("/broken.srt");
        const QString longer = dir + QStringLiteral("/long.txt");
        write_bytes(good, lines_document(2));
        QVERIFY(QFile::copy(kData + QStringLiteral("broken.srt"), broken));
        write_bytes(longer, lines_document(10, 3));

        JobQueue queue(dir + QStringLiteral("/state"));
        DocumentOptions options;
        options.sampling = SamplingParams::greedy_decoding();
        queue.setOptions(options);
        const auto engine = std::make_shared<GatedEngine>(cpu_engine());
        queue.setEngine(engine);
        DocumentQueueView view(&queue);
        QList<QUrl> opened;
        view.setUrlOpener([&](const QUrl& url) {
            opened.append(url);
            return true;
        });
        view.resize(1100, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setLanguages(QStringLiteral("en"), QStringLiteral("zh"));

        QCOMPARE(view.addPaths({good, broken}).size(), 2);
        DocumentQueueModel* model = view.model();
        QCOMPARE(model->rowCount(), 2);
        QTRY_VERIFY_WITH_TIMEOUT(queue.pendingCount() == 0, kTimeout);
        QCOMPARE(model->job(0)->state, JobState::Done);
        QCOMPARE(model->job(1)->state, JobState::Failed);
        const QString message = model->index(1, DocumentQueueModel::StateColumn).data().toString();
        QVERIFY2(message.startsWith(QStringLiteral("Failed: broken.srt: line")),
                 qPrintable(message));
        QVERIFY(model->index(1, DocumentQueueModel::StateColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(broken));  // the whole message, with the path
        QVERIFY(
            model->index(1, DocumentQueueModel::StateColumn).data(Qt::ForegroundRole).isValid());
        QCOMPARE(model->index(0, DocumentQueueModel::ProgressColumn)
                     .data(DocumentQueueModel::DoneRole)
                     .toInt(),
                 2);

        // Buttons: a done row has no Cancel or Retry; a failed one has Retry.
        QVERIFY(view.actionRect(0, DocumentQueueView::Action::Cancel).isEmpty());
        QVERIFY(view.actionRect(0, DocumentQueueView::Action::Retry).isEmpty());
        QVERIFY(view.actionRect(1, DocumentQueueView::Action::Cancel).isEmpty());
        const QRect retry = view.actionRect(1, DocumentQueueView::Action::Retry);
        QVERIFY(!retry.isEmpty());
        QVERIFY(view.table()->viewport()->rect().contains(retry));

        // Open folder: the output's folder.
        QTest::mouseClick(view.table()->viewport(), Qt::LeftButton, {},
                          view.actionRect(0, DocumentQueueView::Action::OpenFolder).center());
        QCOMPARE(opened, QList<QUrl>{QUrl::fromLocalFile(dir)});
        // No file manager answers: said, not silent.
        QSignalSpy problems(&view, &DocumentQueueView::problem);
        view.setUrlOpener([](const QUrl&) { return false; });
        view.trigger(model->jobId(0), DocumentQueueView::Action::OpenFolder);
        QCOMPARE(problems.size(), 1);
        QVERIFY2(problems[0][0].toString().contains(dir), qPrintable(problems[0][0].toString()));

        // Fix the file and retry it with its button.
        QFile::remove(broken);
        QVERIFY(QFile::copy(kData + QStringLiteral("sample.srt"), broken));
        QTest::mouseClick(view.table()->viewport(), Qt::LeftButton, {}, retry.center());
        QVERIFY(model->job(1)->state == JobState::Queued ||
                model->job(1)->state == JobState::Running);
        QTRY_VERIFY_WITH_TIMEOUT(queue.pendingCount() == 0, kTimeout);
        QCOMPARE(model->job(1)->state, JobState::Done);
        QCOMPARE(read_bytes(dir + QStringLiteral("/broken.zh.srt")),
                 expected_output(broken, "en", "zh"));

        // A long document: progress and times while it runs, then Cancel. Its fourth segment
        // is held back so that it is still running however fast the engine is.
        engine->holdAfter(3);
        view.addPaths({longer});
        QTRY_VERIFY_WITH_TIMEOUT(model->job(2)->segments_done >= 3, kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(engine->heldCount(), 1, kTimeout);
        QTest::qWait(1100);  // a tick of the times
        QCOMPARE(model->job(2)->state, JobState::Running);
        QCOMPARE(model->job(2)->segments_done, 3);
        QVERIFY(model->index(2, DocumentQueueModel::ProgressColumn)
                    .data()
                    .toString()
                    .endsWith(QStringLiteral(" / 10")));
        QVERIFY(!model->index(2, DocumentQueueModel::ElapsedColumn).data().toString().isEmpty());
        QVERIFY(model->index(2, DocumentQueueModel::RemainingColumn)
                    .data()
                    .toString()
                    .contains(QLatin1Char(':')));
        QVERIFY(model->job(2)->remaining_ms.has_value());
        QVERIFY(!view.grab().isNull());  // paints the progress bar and the buttons
        QVERIFY(view.actionRect(2, DocumentQueueView::Action::Retry).isEmpty());
        QTest::mouseClick(view.table()->viewport(), Qt::LeftButton, {},
                          view.actionRect(2, DocumentQueueView::Action::Cancel).center());
        QCOMPARE(model->job(2)->state, JobState::Cancelled);
        QCOMPARE(model->index(2, DocumentQueueModel::StateColumn).data().toString(),
                 QStringLiteral("Cancelled"));
        QVERIFY(!QFile::exists(dir + QStringLiteral("/long.zh.txt")));
        QCOMPARE(engine->heldCount(), 0);  // the held segment was cancelled with its document
        engine->release();

        // The context menu acts on the selection: a cancelled row can be retried, not cancelled.
        view.table()->selectRow(2);
        QMenu* menu = view.contextMenuForSelection();
        QVERIFY(menu);
        QAction* retryAction = nullptr;
        QAction* cancelAction = nullptr;
        for (QAction* a : menu->actions()) {
            if (!a->data().isValid()) continue;
            const auto action = a->data().value<DocumentQueueView::Action>();
            if (action == DocumentQueueView::Action::Retry) retryAction = a;
            if (action == DocumentQueueView::Action::Cancel) cancelAction = a;
        }
        QVERIFY(retryAction && cancelAction);
        QVERIFY(retryAction->isEnabled());
        QVERIFY(!cancelAction->isEnabled());
        retryAction->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(queue.pendingCount() == 0, kTimeout);
        QCOMPARE(model->job(2)->state, JobState::Done);
        QCOMPARE(read_bytes(dir + QStringLiteral("/long.zh.txt")),
                 expected_output(longer, "en", "zh"));

        // Remove: the row goes, its output stays.
        const QString output = model->job(0)->output_path;
        QTest::mouseClick(view.table()->viewport(), Qt::LeftButton, {},
                          view.actionRect(0, DocumentQueueView::Action::Remove).center());
        QCOMPARE(model->rowCount(), 2);
        QCOMPARE(queue.count(), 2);
        QVERIFY(QFile::exists(output));
        QCOMPARE(model->job(0)->source_path, broken);
    }

    void typedRequestDoesNotWaitBehindDocuments() {
        const QString dir = freshDir();
        const QString doc = dir + QStringLiteral("/manual.txt");
        write_bytes(doc, lines_document(12));
        Window w;
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        QCOMPARE(w.window->addDocuments({doc}), 1);
        const quint64 id = w.queue().jobs().front().id;
        QTRY_VERIFY_WITH_TIMEOUT(w.queue().job(id)->segments_done >= 2, kTimeout);

        const int done_before = w.queue().job(id)->segments_done;
        int done_at_finish = -1;
        connect(&w.controller, &TranslationController::translationFinished, this,
                [&] { done_at_finish = w.queue().job(id)->segments_done; });
        w.window->sourceEdit()->setPlainText(kLines.mid(8, 3).join(QLatin1Char('\n')));
        w.window->translateNow();
        QTRY_VERIFY_WITH_TIMEOUT(!w.finished.isEmpty(), kTimeout);
        // While the typed lines ran, at most the document segment already being decoded ended.
        QVERIFY2(done_at_finish - done_before <= 1,
                 qPrintable(QStringLiteral("%1 -> %2").arg(done_before).arg(done_at_finish)));
        QVERIFY(done_at_finish < 12);
        QVERIFY(!w.window->targetEdit()->toPlainText().isEmpty());

        QTRY_VERIFY_WITH_TIMEOUT(w.queue().pendingCount() == 0, kTimeout);
        QCOMPARE(w.queue().job(id)->state, JobState::Done);
        QCOMPARE(read_bytes(w.queue().job(id)->output_path), expected_output(doc, "en", "zh"));
    }

    // The live panel's time to first token and tokens/s count document segments too, not only
    // what is typed.
    void livePanelFollowsDocuments() {
        const QString dir = freshDir();
        const QString doc = dir + QStringLiteral("/notes.txt");
        write_bytes(doc, lines_document(4));
        Window w;
        QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
        QVERIFY(w.controller.stats().ttft_history.isEmpty());
        QCOMPARE(w.window->addDocuments({doc}), 1);
        QTRY_VERIFY_WITH_TIMEOUT(w.queue().pendingCount() == 0, kTimeout);
        QCOMPARE(w.queue().jobs().front().state, JobState::Done);
        QVERIFY(w.finished.isEmpty());  // nothing was typed
        const EngineStats s = w.controller.stats();
        QCOMPARE(s.finished_requests, quint64(4));  // one per segment
        QCOMPARE(s.ttft_history.size(), 4);
        QVERIFY(!s.tps_history.isEmpty());
        QVERIFY(s.ttft_ms.last && *s.ttft_ms.last > 0);
        QVERIFY(s.ttft_ms.p50 && s.tokens_per_s.p95);
        LivePanel* panel = w.window->livePanel();
        panel->refresh();
        QVERIFY2(!panel->rowText(QStringLiteral("ttft")).startsWith(QStringLiteral("–")),
                 qPrintable(panel->rowText(QStringLiteral("ttft"))));
        QVERIFY2(!panel->rowText(QStringLiteral("tps")).startsWith(QStringLiteral("–")),
                 qPrintable(panel->rowText(QStringLiteral("tps"))));
    }

    void modelReloadAndRestartKeepDocumentsGoing() {
        const QString dir = freshDir();
        const QString doc = dir + QStringLiteral("/guide.txt");
        write_bytes(doc, lines_document(10, 5));
        quint64 id = 0;
        {
            Window w;
            QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
            QCOMPARE(w.window->addDocuments({doc}), 1);
            id = w.queue().jobs().front().id;
            QTRY_VERIFY_WITH_TIMEOUT(w.queue().job(id)->segments_done >= 2, kTimeout);
            // A new model load takes the engine away from the queue at once...
            w.window->loadModel(kDemo);
            QVERIFY(w.queue().engine() == nullptr);
            QCOMPARE(w.queue().inFlight(), 0);
            // ...and gives it the new one when loaded.
            QTRY_VERIFY_WITH_TIMEOUT(w.ready(), kTimeout);
            QVERIFY(w.queue().engine() != nullptr);
            QCOMPARE(w.queue().engine(), w.controller.engine());
            const int done = w.queue().job(id)->segments_done;
            QTRY_VERIFY_WITH_TIMEOUT(w.queue().job(id)->segments_done >= done + 2, kTimeout);
            QCOMPARE(w.queue().job(id)->state, JobState::Running);
        }  // the window closes mid-document

        Window again;
        QVERIFY(again.window->documentsDock()->isVisible());  // saved rows are shown
        QCOMPARE(again.queue().count(), 1);
        QVERIFY(again.queue().job(id)->segments_done >= 4);
        QTRY_VERIFY_WITH_TIMEOUT(again.ready(), kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(again.queue().pendingCount() == 0, kTimeout);
        QCOMPARE(again.queue().job(id)->state, JobState::Done);
        QCOMPARE(read_bytes(again.queue().job(id)->output_path), expected_output(doc, "en", "zh"));
    }

    // A written document whose translation lost markup or placeholders is not a clean "Done":
    // the row says how many segments to check and names them in its tooltip, as the command
    // line does, also after a restart.
    void doneRowsShowLostPlaceholders() {
        const QString dir = freshDir();
        const QString md = dir + QStringLiteral("/readme.md");
        const QString po = dir + QStringLiteral("/app.po");
        const QString clean = dir + QStringLiteral("/clean.txt");
        write_bytes(md, "# Settings\n\nOpen the **Settings** window and select a folder.\n");
        write_bytes(po,
                    "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\n"
                    "msgid \"Open file\"\nmsgstr \"\"\n\n"
                    "#, c-format\nmsgid \"Copied %s\"\nmsgstr \"\"\n");
        write_bytes(clean, "Open the file.\n");
        const QString state = dir + QStringLiteral("/state");
        {
            JobQueue queue(state);
            queue.setEngine(std::make_shared<LossyEngine>());
            DocumentQueueView view(&queue);
            view.setLanguages(QStringLiteral("en"), QStringLiteral("fr"));
            QCOMPARE(view.addPaths({md, po, clean}).size(), 3);
            QTRY_VERIFY_WITH_TIMEOUT(queue.pendingCount() == 0, kTimeout);
            DocumentQueueModel* model = view.model();
            auto cell = [&](int row, int role) {
                return model->index(row, DocumentQueueModel::StateColumn).data(role);
            };
            for (int row = 0; row < 3; ++row)
                QCOMPARE(model->job(row)->state, JobState::Done);
            QVERIFY(
                read_bytes(dir + QStringLiteral("/readme.fr.md")).contains("[Open the Settings**"));

            // Markdown: the second segment lost one "**".
            QCOMPARE(model->job(0)->placeholder_issues, 1);
            const QString shown = cell(0, Qt::DisplayRole).toString();
            QVERIFY2(shown.startsWith(QStringLiteral("Done → readme.fr.md, 1 segment")) &&
                         shown.endsWith(QStringLiteral("may have lost placeholders or markup")),
                     qPrintable(shown));
            QVERIFY2(
                cell(0, Qt::ToolTipRole).toString().contains(QStringLiteral("segment 2: lost **")),
                qPrintable(cell(0, Qt::ToolTipRole).toString()));
            QVERIFY(cell(0, Qt::DecorationRole).isValid());
            // PO: the entry that lost %s is kept fuzzy with its source, and counted.
            QCOMPARE(model->job(1)->marked_for_review, 1);
            QCOMPARE(model->job(1)->placeholder_issues, 1);
            QVERIFY2(cell(1, Qt::DisplayRole).toString().contains(QStringLiteral("fuzzy")),
                     qPrintable(cell(1, Qt::DisplayRole).toString()));
            QVERIFY(cell(1, Qt::ToolTipRole).toString().contains(QStringLiteral("lost %s")));
            QVERIFY(read_bytes(dir + QStringLiteral("/app.fr.po")).contains("c-format, fuzzy"));
            // A clean translation is a plain "Done".
            QCOMPARE(model->job(2)->placeholder_issues, 0);
            QCOMPARE(cell(2, Qt::DisplayRole).toString(), QStringLiteral("Done → clean.fr.txt"));
            QVERIFY(!cell(2, Qt::DecorationRole).isValid());
        }
        JobQueue again(state);  // the findings are saved with the row
        const QList<DocumentJob> rows = again.jobs();
        QCOMPARE(rows.size(), 3);
        QCOMPARE(rows[0].placeholder_issues, 1);
        QCOMPARE(rows[0].placeholder_notes.size(), 1);
        QCOMPARE(rows[0].placeholder_notes[0].segment, 2);
        QCOMPARE(rows[0].placeholder_notes[0].missing, QStringList{QStringLiteral("**")});
        QCOMPARE(rows[1].marked_for_review, 1);
        QVERIFY(DocumentQueueModel::checksText(rows[0]).contains(QStringLiteral("segment 2")));
    }

    void untrainedPairsAreMarked() {
        const QString dir = freshDir();
        const QString a = dir + QStringLiteral("/a.txt"), b = dir + QStringLiteral("/b.txt");
        write_bytes(a, lines_document(1));
        write_bytes(b, lines_document(1));
        JobQueue queue(dir + QStringLiteral("/state"));  // no engine: the rows stay queued
        DocumentQueueView view(&queue);
        view.setLanguages(QStringLiteral("de"), QStringLiteral("zh"));
        QCOMPARE(view.addPaths({a}).size(), 1);
        view.setLanguages(QStringLiteral("en"), QStringLiteral("zh"));
        QCOMPARE(view.addPaths({b}).size(), 1);
        DocumentQueueModel* model = view.model();
        auto icon = [&](int row) {
            return model->index(row, DocumentQueueModel::LanguagesColumn).data(Qt::DecorationRole);
        };
        auto tip = [&](int row) {
            return model->index(row, DocumentQueueModel::LanguagesColumn)
                .data(Qt::ToolTipRole)
                .toString();
        };
        QVERIFY(!icon(0).isValid() && !icon(1).isValid());  // the model says nothing yet
        model->setTrainedLanguages({"zh", "de"});
        QVERIFY(icon(0).isValid());  // de -> zh: no English side
        QVERIFY2(tip(0).contains(QStringLiteral("between English and zh, de only")),
                 qPrintable(tip(0)));
        QVERIFY(!icon(1).isValid());  // en -> zh
        QVERIFY(!tip(1).contains(QStringLiteral("English and")));
        model->setTrainedLanguages({});
        QVERIFY(!icon(0).isValid());
    }

    // Nothing is cut where it need not be: the languages column fits its text (with the warning
    // icon), rows of one file name from different folders say which folder, and the tooltips
    // have the whole of it.
    void columnsShowTheirText() {
        const QString dir = freshDir();
        const QString a = dir + QStringLiteral("/one/notes.txt");
        const QString b = dir + QStringLiteral("/two/notes.txt");
        const QString c = dir + QStringLiteral("/c.txt");
        for (const QString& path : {a, b, c})
            write_bytes(path, lines_document(1));
        JobQueue queue(dir + QStringLiteral("/state"));  // no engine: the rows stay queued
        DocumentQueueView view(&queue);
        view.resize(1100, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        DocumentQueueModel* model = view.model();
        model->setTrainedLanguages({"zh", "de"});
        view.setLanguages(QStringLiteral("zh-Hant"), QStringLiteral("bo"));
        QCOMPARE(view.addPaths({a, b}).size(), 2);
        view.setLanguages(QStringLiteral("en"), QStringLiteral("zh"));
        QCOMPARE(view.addPaths({c}).size(), 1);

        auto text = [&](int row, int column, int role = Qt::DisplayRole) {
            return model->index(row, column).data(role).toString();
        };
        QCOMPARE(text(0, DocumentQueueModel::FileColumn), QStringLiteral("notes.txt (in one)"));
        QCOMPARE(text(1, DocumentQueueModel::FileColumn), QStringLiteral("notes.txt (in two)"));
        QCOMPARE(text(2, DocumentQueueModel::FileColumn), QStringLiteral("c.txt"));
        QVERIFY(text(0, DocumentQueueModel::FileColumn, Qt::ToolTipRole).contains(a));

        const QString languages = text(0, DocumentQueueModel::LanguagesColumn);
        QCOMPARE(languages, QStringLiteral("Traditional Chinese → Tibetan"));
        QVERIFY(
            text(0, DocumentQueueModel::LanguagesColumn, Qt::ToolTipRole).startsWith(languages));
        QTableView* table = view.table();
        QTRY_VERIFY(table->columnWidth(DocumentQueueModel::LanguagesColumn) >=
                    static_cast<QAbstractItemView*>(table)->sizeHintForColumn(
                        DocumentQueueModel::LanguagesColumn));
        QVERIFY(table->columnWidth(DocumentQueueModel::LanguagesColumn) >
                table->fontMetrics().horizontalAdvance(languages) + 16);  // and the icon

        // One of the two gone: the other is plain again.
        queue.remove(model->jobId(0));
        QCOMPARE(text(0, DocumentQueueModel::FileColumn), QStringLiteral("notes.txt"));
    }

    void formatDuration() {
        QCOMPARE(format_duration(0), QStringLiteral("0:00"));
        QCOMPARE(format_duration(7400), QStringLiteral("0:07"));
        QCOMPARE(format_duration(754000), QStringLiteral("12:34"));
        QCOMPARE(format_duration(3723000), QStringLiteral("1:02:03"));
    }

    void fileDialogFilterListsEveryFormat() {
        const QString filter = DocumentQueueView::fileDialogFilter();
        for (const std::string& ext : documents::supported_extensions())
            QVERIFY2(filter.contains(QStringLiteral("*.") + QString::fromStdString(ext)),
                     ext.c_str());
    }
};

QTEST_MAIN(TestUiDocumentQueue)
#include "test_ui_document_queue.moc"
