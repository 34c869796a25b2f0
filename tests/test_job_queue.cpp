// The document job queue with the real CPU engine and the bundled demo model (real translations,
// greedy, deterministic): documents finish with every segment translated and the structure kept,
// outputs never overwrite, a broken document fails its row while the others finish, cancel and
// retry, a queue destroyed part-way resumes on the same state directory without translating a
// segment twice and gives the uninterrupted run's output, a changed source restarts, segment
// jobs of several rows are in flight together when the engine takes more than one, and typed
// requests get the engine's slots they ask for.

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "documents/document.h"
#include "job_queue.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/translation_engine.h"
#include "mtdesk/translate/translator.h"

using namespace mtdesk;
using namespace mtdesk::app;

namespace {

const char* kDemo = MTDESK_DEMO_MODEL_DIR;
const QString kData = QStringLiteral(MTDESK_TEST_DATA_DIR "/documents/");
constexpr int kTimeout = 60000;

// One CPU engine for the whole suite (each test wraps it); loading it once keeps the suite short.
std::shared_ptr<TranslationEngine> cpu_engine() {
    static std::shared_ptr<TranslationEngine> engine = make_cpu_engine(Translator::open_cpu(kDemo));
    return engine;
}

// The demo model's greedy translation of one segment, from an engine-independent Translator.
std::string reference(const std::string& text, const char* from, const char* to) {
    static std::unique_ptr<Translator> translator = Translator::open_cpu(kDemo);
    static std::map<std::string, std::string> cache;
    const std::string key = std::string(from ? from : "") + "|" + to + "|" + text;
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    PromptRequest request;
    request.text = text;
    request.source = from ? find_language(from) : nullptr;
    request.target = find_language(to);
    TranslateOptions options;
    options.sampling = SamplingParams::greedy_decoding();
    return cache[key] = translator->translate(request, options).text;
}

// What translating `path` segment by segment must give: the format's own output for the
// reference translations. Also checks that every segment's translation differs from its source.
QByteArray expected_output(const QString& path, const char* from, const char* to) {
    const documents::DocumentFormat* format = nullptr;
    documents::Document doc = documents::read_document(path, &format);
    doc.target_language = to;
    std::vector<std::string> translations;
    for (const std::string& s : doc.segments) {
        translations.push_back(reference(s, from, to));
        if (translations.back().empty() || translations.back() == s)
            qWarning("segment not translated by the reference: %s", s.c_str());
    }
    return format->write(doc, translations);
}

QByteArray read_bytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void write_bytes(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), bytes.size());
}

// Short UI strings the demo model translates well; every document gets its own lines, so a
// submitted text tells which document it belongs to.
const QStringList kLines = {
    QStringLiteral("Open the file."),        QStringLiteral("Save your changes."),
    QStringLiteral("Close the window."),     QStringLiteral("Print the document."),
    QStringLiteral("The file was deleted."), QStringLiteral("Could not connect to the server."),
    QStringLiteral("Download complete."),    QStringLiteral("Settings saved."),
    QStringLiteral("Network error."),        QStringLiteral("Check for updates."),
    QStringLiteral("Select a language."),    QStringLiteral("Delete the selected files?"),
    QStringLiteral("The disk is full."),     QStringLiteral("Restart the computer."),
    QStringLiteral("Show hidden files."),    QStringLiteral("Copy the link."),
};

// A plain text document of `lines`, with a blank line and indentation that must survive.
QByteArray text_document(const QStringList& lines) {
    QByteArray out;
    for (int i = 0; i < lines.size(); ++i) {
        out += (i % 3 == 1 ? "    " : "") + lines[i].toUtf8() + "\n";
        if (i == 1) out += "\n";
    }
    return out;
}

/// Wraps an engine: reports its own max_in_flight(), counts and records what is submitted,
/// tracks the jobs outstanding (most at once, most documents at once, by `document_of`), and can
/// turn the outcome of one text into a failure, as an engine reports a segment it cannot
/// translate. The figures live apart from the wrapper: the shared inner engine may answer a
/// cancelled job after the wrapper is gone.
class CountingEngine : public TranslationEngine {
    struct Figures {
        std::mutex m;
        std::vector<std::string> submitted;
        std::multiset<std::string> outstanding;
        int most_outstanding = 0;
        int most_documents = 0;
        std::function<int(const std::string&)> document_of;
        std::string fail_text;
    };

  public:
    explicit CountingEngine(std::shared_ptr<TranslationEngine> inner, int max_in_flight = 1)
        : max_(max_in_flight), inner_(std::move(inner)) {}

    uint64_t submit(TranslationJob job, JobCallbacks callbacks) override {
        const std::string text = job.request.text;
        {
            std::lock_guard lock(f_->m);
            f_->submitted.push_back(text);
            f_->outstanding.insert(text);
            f_->most_outstanding = std::max(f_->most_outstanding, int(f_->outstanding.size()));
            if (f_->document_of) {
                std::set<int> docs;
                for (const std::string& t : f_->outstanding)
                    docs.insert(f_->document_of(t));
                f_->most_documents = std::max(f_->most_documents, int(docs.size()));
            }
        }
        auto done = std::move(callbacks.on_done);
        callbacks.on_done = [f = f_, text, done](const JobOutcome& outcome) {
            JobOutcome out = outcome;
            {
                std::lock_guard lock(f->m);
                f->outstanding.erase(f->outstanding.find(text));
                if (text == f->fail_text && out.status == JobOutcome::Status::Done) {
                    out.status = JobOutcome::Status::Failed;
                    out.error = "the model produced a token outside the vocabulary";
                }
            }
            done(out);
        };
        return inner_->submit(std::move(job), std::move(callbacks));
    }
    void cancel(uint64_t id) override { inner_->cancel(id); }
    int max_in_flight() const override { return max_; }
    EngineStatistics statistics() const override { return inner_->statistics(); }
    const Translator* translator() const noexcept override { return inner_->translator(); }

    std::vector<std::string> submitted() const {
        std::lock_guard lock(f_->m);
        return f_->submitted;
    }
    int submitCount() const {
        std::lock_guard lock(f_->m);
        return int(f_->submitted.size());
    }
    int mostOutstanding() const {
        std::lock_guard lock(f_->m);
        return f_->most_outstanding;
    }
    int mostDocuments() const {
        std::lock_guard lock(f_->m);
        return f_->most_documents;
    }
    void setDocumentOf(std::function<int(const std::string&)> document_of) {
        std::lock_guard lock(f_->m);
        f_->document_of = std::move(document_of);
    }
    void failOn(const std::string& text) {
        std::lock_guard lock(f_->m);
        f_->fail_text = text;
    }

  private:
    int max_;
    std::shared_ptr<TranslationEngine> inner_;
    std::shared_ptr<Figures> f_ = std::make_shared<Figures>();
};

std::shared_ptr<CountingEngine> counting(int max_in_flight = 1) {
    return std::make_shared<CountingEngine>(cpu_engine(), max_in_flight);
}

DocumentOptions greedy() {
    DocumentOptions o;
    o.sampling = SamplingParams::greedy_decoding();
    return o;
}

bool finished(const JobQueue& q) {
    return q.pendingCount() == 0;
}

}  // namespace

class TestJobQueue : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    int case_ = 0;

    // A fresh documents directory and a fresh state directory for one case.
    std::pair<QString, QString> dirs() {
        const QString base = tmp_.filePath(QStringLiteral("case%1").arg(case_++));
        QDir().mkpath(base + QStringLiteral("/docs"));
        return {base + QStringLiteral("/docs"), base + QStringLiteral("/state")};
    }

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("mtdesk-test"));
        QCoreApplication::setApplicationName(QStringLiteral("test_job_queue"));
        QVERIFY(cpu_engine() != nullptr);
    }

    void defaultStateDirectoryIsAppData() {
        const QString dir = JobQueue::defaultStateDirectory();
        QVERIFY(
            dir.startsWith(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation)));
        QVERIFY(dir.endsWith(QStringLiteral("/queue")));
    }

    void severalDocumentsFinish() {
        const auto [docs, state] = dirs();
        const QString txt = docs + QStringLiteral("/notes.txt");
        const QString md = docs + QStringLiteral("/guide.md");
        const QString srt = docs + QStringLiteral("/movie.srt");
        write_bytes(txt, text_document(kLines.mid(0, 4)));
        write_bytes(md, QByteArray("# ") + kLines[4].toUtf8() + "\n\n" + kLines[5].toUtf8() +
                            "\n\n- " + kLines[6].toUtf8() + "\n- `code` " + kLines[7].toUtf8() +
                            "\n");
        write_bytes(srt, QByteArray("1\n00:00:01,000 --> 00:00:04,000\n") + kLines[8].toUtf8() +
                             "\n\n2\n00:00:05,500 --> 00:00:07,250\n" + kLines[9].toUtf8() + "\n");

        JobQueue q(state);
        q.setOptions(greedy());
        auto engine = counting();
        q.setEngine(engine);
        const QList<quint64> ids =
            q.addPaths({txt, md, srt}, QStringLiteral("en"), QStringLiteral("zh"));
        QCOMPARE(ids.size(), 3);
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);

        const QList<QString> sources = {txt, md, srt};
        int segments = 0;
        for (int i = 0; i < 3; ++i) {
            const DocumentJob j = *q.job(ids[i]);
            QCOMPARE(j.state, JobState::Done);
            QCOMPARE(j.error, QString());
            QVERIFY(j.segments_total > 0);
            QCOMPARE(j.segments_done, j.segments_total);
            segments += j.segments_total;
            const QFileInfo src(sources[i]);
            QCOMPARE(j.output_path, src.path() + QLatin1Char('/') + src.completeBaseName() +
                                        QStringLiteral(".zh.") + src.suffix());
            // Every segment translated (the reference translation in its slot, structure
            // byte for byte the format's own).
            const QByteArray out = read_bytes(j.output_path);
            QCOMPARE(out, expected_output(sources[i], "en", "zh"));
            for (const QString& line : kLines.mid(0, 10))
                QVERIFY2(!out.contains(line.toUtf8()), qPrintable(line));  // no source text left
        }
        // One engine job per segment, no more.
        QCOMPARE(engine->submitCount(), segments);
        // The structure: the same lines, timings untouched, blank lines where they were.
        const QList<QByteArray> in = read_bytes(srt).split('\n');
        const QList<QByteArray> out = read_bytes(q.job(ids[2])->output_path).split('\n');
        QCOMPARE(out.size(), in.size());
        for (int i = 0; i < in.size(); ++i)
            if (in[i].contains("-->") || in[i].isEmpty() || in[i] == "1" || in[i] == "2")
                QCOMPARE(out[i], in[i]);
        const QList<QByteArray> txtIn = read_bytes(txt).split('\n');
        const QList<QByteArray> txtOut = read_bytes(q.job(ids[0])->output_path).split('\n');
        QCOMPARE(txtOut.size(), txtIn.size());
        QVERIFY(txtOut[2].isEmpty());
        QVERIFY(txtOut[1].startsWith("    "));
    }

    void sourceLanguageIsDetected() {
        const auto [docs, state] = dirs();
        const QString txt = docs + QStringLiteral("/readme.txt");
        write_bytes(txt, QByteArray("The application translates documents on your own computer. "
                                    "Nothing is sent to a server, and the translation keeps the "
                                    "structure of the file.\n"));
        JobQueue q(state);
        q.setOptions(greedy());
        q.setEngine(counting());
        const quint64 id = q.addPaths({txt}, QString(), QStringLiteral("zh")).value(0);
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        const DocumentJob j = *q.job(id);
        QCOMPARE(j.state, JobState::Done);
        QCOMPARE(j.source_language, QString());
        QCOMPARE(j.detected_language, QStringLiteral("en"));

        // Detected as the window detects typed text: a short Chinese document, which CLD2 is
        // unsure of, is Chinese (Han-majority); a short one in another script is undetected.
        const QString zh = docs + QStringLiteral("/short.txt");
        write_bytes(zh, QStringLiteral("保存\n").toUtf8());
        const QString ru = docs + QStringLiteral("/file.txt");
        write_bytes(ru, QStringLiteral("Файл\n").toUtf8());
        const QList<quint64> ids = q.addPaths({zh, ru}, QString(), QStringLiteral("de"));
        QCOMPARE(ids.size(), 2);
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        QCOMPARE(q.job(ids[0])->detected_language, QStringLiteral("zh"));
        QCOMPARE(q.job(ids[1])->detected_language, QString());
    }

    void outputsNeverOverwrite() {
        const auto [docs, state] = dirs();
        const QString txt = docs + QStringLiteral("/notes.txt");
        write_bytes(txt, text_document(kLines.mid(10, 2)));
        const QString taken = docs + QStringLiteral("/notes.zh.txt");
        write_bytes(taken, "the user's own file\n");

        JobQueue q(state);
        q.setOptions(greedy());
        q.setEngine(counting());
        const quint64 first = q.addPaths({txt}, QStringLiteral("en"), QStringLiteral("zh"))[0];
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        QCOMPARE(q.job(first)->state, JobState::Done);
        QCOMPARE(q.job(first)->output_path, docs + QStringLiteral("/notes.zh (2).txt"));
        QCOMPARE(read_bytes(taken), QByteArray("the user's own file\n"));
        // The same document again: a third name, both earlier files untouched.
        const QByteArray second_out = read_bytes(q.job(first)->output_path);
        const quint64 second = q.addPaths({txt}, QStringLiteral("en"), QStringLiteral("zh"))[0];
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        QCOMPARE(q.job(second)->output_path, docs + QStringLiteral("/notes.zh (3).txt"));
        QCOMPARE(read_bytes(taken), QByteArray("the user's own file\n"));
        QCOMPARE(read_bytes(docs + QStringLiteral("/notes.zh (2).txt")), second_out);
        QCOMPARE(read_bytes(q.job(second)->output_path), second_out);
        // No temporary files left behind.
        QCOMPARE(QDir(docs).entryList(QDir::Files).size(), 4);
    }

    void brokenDocumentFailsItsRowOnly() {
        const auto [docs, state] = dirs();
        const QString good1 = docs + QStringLiteral("/a.txt");
        const QString srt = docs + QStringLiteral("/broken.srt");
        const QString binary = docs + QStringLiteral("/binary.txt");
        const QString unsupported = docs + QStringLiteral("/notes.xyz");
        const QString missing = docs + QStringLiteral("/missing.txt");
        const QString good2 = docs + QStringLiteral("/b.txt");
        write_bytes(good1, text_document(kLines.mid(12, 2)));
        QVERIFY(QFile::copy(kData + QStringLiteral("broken.srt"), srt));
        write_bytes(binary, QByteArray("\x00\x01\x02\xff\xfe", 5));
        write_bytes(unsupported, "text\n");
        write_bytes(good2, text_document(kLines.mid(14, 2)));

        JobQueue q(state);
        q.setOptions(greedy());
        q.setEngine(counting());
        const QList<quint64> ids = q.addPaths({good1, srt, binary, unsupported, missing, good2},
                                              QStringLiteral("en"), QStringLiteral("zh"));
        QCOMPARE(ids.size(), 6);
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        QCOMPARE(q.job(ids[0])->state, JobState::Done);
        QCOMPARE(q.job(ids[5])->state, JobState::Done);
        QCOMPARE(read_bytes(q.job(ids[5])->output_path), expected_output(good2, "en", "zh"));
        const QList<std::pair<int, QString>> failures = {{1, QStringLiteral("broken.srt")},
                                                         {2, QStringLiteral("binary.txt")},
                                                         {3, QStringLiteral("notes.xyz")},
                                                         {4, QStringLiteral("missing.txt")}};
        for (const auto& [index, name] : failures) {
            const DocumentJob j = *q.job(ids[index]);
            QCOMPARE(j.state, JobState::Failed);
            QVERIFY2(j.error.contains(name), qPrintable(j.error));
            QVERIFY(j.output_path.isEmpty());
        }
        QVERIFY2(q.job(ids[1])->error.contains(QStringLiteral("line")),
                 qPrintable(q.job(ids[1])->error));
        QVERIFY(q.job(ids[3])->error.contains(QStringLiteral("unsupported")));
        QVERIFY(!QFile::exists(docs + QStringLiteral("/broken.zh.srt")));
        QVERIFY(!QFile::exists(docs + QStringLiteral("/binary.zh.txt")));
    }

    void failedSegmentFailsItsRowOnly() {
        const auto [docs, state] = dirs();
        const QString a = docs + QStringLiteral("/a.txt");
        const QString b = docs + QStringLiteral("/b.txt");
        write_bytes(a, text_document(kLines.mid(0, 3)));
        write_bytes(b, text_document(kLines.mid(3, 2)));
        JobQueue q(state);
        q.setOptions(greedy());
        auto engine = counting();
        engine->failOn(kLines[1].toStdString());
        q.setEngine(engine);
        const QList<quint64> ids = q.addPaths({a, b}, QStringLiteral("en"), QStringLiteral("zh"));
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        const DocumentJob failed = *q.job(ids[0]);
        QCOMPARE(failed.state, JobState::Failed);
        QVERIFY2(failed.error.contains(a) && failed.error.contains(QStringLiteral("vocabulary")),
                 qPrintable(failed.error));
        QVERIFY(!QFile::exists(docs + QStringLiteral("/a.zh.txt")));
        QCOMPARE(q.job(ids[1])->state, JobState::Done);
        QCOMPARE(read_bytes(q.job(ids[1])->output_path), expected_output(b, "en", "zh"));

        // Retry with the engine well again: only what is missing is sent.
        const int before = engine->submitCount();
        const int done = failed.segments_done;
        engine->failOn({});
        q.retry(ids[0]);
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        QCOMPARE(q.job(ids[0])->state, JobState::Done);
        QCOMPARE(engine->submitCount() - before, failed.segments_total - done);
        QCOMPARE(read_bytes(q.job(ids[0])->output_path), expected_output(a, "en", "zh"));
    }

    void cancelAndRetry() {
        const auto [docs, state] = dirs();
        const QString txt = docs + QStringLiteral("/long.txt");
        write_bytes(txt, text_document(kLines.mid(0, 10)));
        JobQueue q(state);
        q.setOptions(greedy());
        auto engine = counting();
        q.setEngine(engine);
        const quint64 id = q.addPaths({txt}, QStringLiteral("en"), QStringLiteral("zh"))[0];
        QTRY_VERIFY_WITH_TIMEOUT(q.job(id)->segments_done >= 2, kTimeout);
        QCOMPARE(q.job(id)->state, JobState::Running);
        QVERIFY(JobQueue::canCancel(*q.job(id)));
        q.cancel(id);
        QCOMPARE(q.job(id)->state, JobState::Cancelled);
        QCOMPARE(q.inFlight(), 0);
        QVERIFY(JobQueue::canRetry(*q.job(id)));
        const int done = q.job(id)->segments_done;
        const int submitted = engine->submitCount();
        QTest::qWait(500);  // nothing more is sent for a cancelled row
        QCOMPARE(engine->submitCount(), submitted);
        QCOMPARE(q.job(id)->segments_done, done);
        QVERIFY(!QFile::exists(docs + QStringLiteral("/long.zh.txt")));

        q.retry(id);
        QVERIFY(q.job(id)->state == JobState::Queued || q.job(id)->state == JobState::Running);
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        QCOMPARE(q.job(id)->state, JobState::Done);
        // The segments translated before the cancel are not sent again.
        QCOMPARE(engine->submitCount() - submitted, 10 - done);
        QCOMPARE(read_bytes(q.job(id)->output_path), expected_output(txt, "en", "zh"));
        QVERIFY(!JobQueue::canCancel(*q.job(id)) && !JobQueue::canRetry(*q.job(id)));
    }

    void resumeAfterRestart() {
        const auto [docs, state] = dirs();
        const QString txt = docs + QStringLiteral("/book.txt");
        const QByteArray content = text_document(kLines.mid(0, 12));
        write_bytes(txt, content);

        // An uninterrupted run of the same document elsewhere.
        QByteArray uninterrupted;
        {
            const auto [docs2, state2] = dirs();
            const QString copy = docs2 + QStringLiteral("/book.txt");
            write_bytes(copy, content);
            JobQueue q(state2);
            q.setOptions(greedy());
            q.setEngine(counting());
            const quint64 id = q.addPaths({copy}, QStringLiteral("en"), QStringLiteral("zh"))[0];
            QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
            uninterrupted = read_bytes(q.job(id)->output_path);
        }
        QCOMPARE(uninterrupted, expected_output(txt, "en", "zh"));

        quint64 id = 0;
        {
            auto queue = std::make_unique<JobQueue>(state);
            queue->setOptions(greedy());
            queue->setEngine(counting());
            id = queue->addPaths({txt}, QStringLiteral("en"), QStringLiteral("zh"))[0];
            QTRY_VERIFY_WITH_TIMEOUT(queue->job(id)->segments_done >= 3, kTimeout);
            queue.reset();  // mid-job, as at a crash or when the window closes
        }
        QVERIFY(!QFile::exists(docs + QStringLiteral("/book.zh.txt")));

        JobQueue resumed(state);
        QCOMPARE(resumed.count(), 1);
        const DocumentJob saved = *resumed.job(id);
        QCOMPARE(saved.state, JobState::Queued);
        QCOMPARE(saved.source_path, txt);
        QCOMPARE(saved.target_language, QStringLiteral("zh"));
        QCOMPARE(saved.segments_total, 12);
        const int done = saved.segments_done;
        QVERIFY2(done >= 3 && done < 12, qPrintable(QString::number(done)));
        QVERIFY(saved.elapsed_ms > 0);

        resumed.setOptions(greedy());
        auto engine = counting();
        resumed.setEngine(engine);
        QTRY_VERIFY_WITH_TIMEOUT(finished(resumed), kTimeout);
        QCOMPARE(resumed.job(id)->state, JobState::Done);
        // Only the segments not done before are translated, in order from the first of them.
        const std::vector<std::string> sent = engine->submitted();
        QCOMPARE(int(sent.size()), 12 - done);
        for (int i = 0; i < int(sent.size()); ++i)
            QCOMPARE(QString::fromStdString(sent[std::size_t(i)]), kLines[done + i]);
        QCOMPARE(read_bytes(resumed.job(id)->output_path), uninterrupted);

        // A finished row stays in the saved queue as done.
        const QString output = resumed.job(id)->output_path;
        {
            JobQueue again(state);
            QCOMPARE(again.job(id)->state, JobState::Done);
            QCOMPARE(again.job(id)->output_path, output);
            auto idle = counting();
            again.setEngine(idle);
            QTest::qWait(200);
            QCOMPARE(idle->submitCount(), 0);
        }
    }

    void changedSourceRestarts() {
        const auto [docs, state] = dirs();
        const QString txt = docs + QStringLiteral("/doc.txt");
        write_bytes(txt, text_document(kLines.mid(0, 8)));
        quint64 id = 0;
        {
            JobQueue q(state);
            q.setOptions(greedy());
            q.setEngine(counting());
            id = q.addPaths({txt}, QStringLiteral("en"), QStringLiteral("zh"))[0];
            QTRY_VERIFY_WITH_TIMEOUT(q.job(id)->segments_done >= 2, kTimeout);
        }
        // One line changed: the saved translations of the others are not reused either.
        QStringList changed = kLines.mid(0, 8);
        changed[7] = kLines[8];
        write_bytes(txt, text_document(changed));
        JobQueue q(state);
        QVERIFY(q.job(id)->segments_done >= 2);  // as saved, until the source is read again
        q.setOptions(greedy());
        auto engine = counting();
        q.setEngine(engine);
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        QCOMPARE(q.job(id)->state, JobState::Done);
        QCOMPARE(engine->submitCount(), 8);  // from zero
        QCOMPARE(read_bytes(q.job(id)->output_path), expected_output(txt, "en", "zh"));
    }

    void severalRowsInFlightTogether() {
        const auto [docs, state] = dirs();
        QStringList paths;
        for (int d = 0; d < 4; ++d) {
            paths.append(docs + QStringLiteral("/d%1.txt").arg(d));
            write_bytes(paths.back(), text_document(kLines.mid(d * 2, 2)));
        }
        JobQueue q(state);
        q.setOptions(greedy());
        auto engine = counting(4);
        engine->setDocumentOf([](const std::string& text) {
            return int(kLines.indexOf(QString::fromStdString(text))) / 2;
        });
        q.setEngine(engine);
        const QList<quint64> ids = q.addPaths(paths, QStringLiteral("en"), QStringLiteral("zh"));
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        for (int d = 0; d < 4; ++d) {
            QCOMPARE(q.job(ids[d])->state, JobState::Done);
            QCOMPARE(read_bytes(q.job(ids[d])->output_path), expected_output(paths[d], "en", "zh"));
        }
        QCOMPARE(engine->submitCount(), 8);
        // The engine was kept fed across documents, never past what it asked for.
        QCOMPARE(engine->mostOutstanding(), 4);
        QVERIFY2(engine->mostDocuments() >= 2,
                 qPrintable(QString::number(engine->mostDocuments())));
    }

    void reservedSlotsHoldDocumentsBack() {
        const auto [docs, state] = dirs();
        const QString txt = docs + QStringLiteral("/a.txt");
        write_bytes(txt, text_document(kLines.mid(0, 2)));
        JobQueue q(state);
        q.setOptions(greedy());
        auto engine = counting(1);
        q.setReservedSlots(1);  // a typed request holds the CPU engine's only slot
        q.setEngine(engine);
        const quint64 id = q.addPaths({txt}, QStringLiteral("en"), QStringLiteral("zh"))[0];
        QTest::qWait(500);
        QCOMPARE(engine->submitCount(), 0);
        QCOMPARE(q.job(id)->segments_done, 0);
        q.setReservedSlots(0);
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        QCOMPARE(q.job(id)->state, JobState::Done);
        QCOMPARE(engine->submitCount(), 2);
    }

    void foldersAndDuplicates() {
        const auto [docs, state] = dirs();
        QDir(docs).mkpath(QStringLiteral("sub/deeper"));
        write_bytes(docs + QStringLiteral("/b.txt"), "one\n");
        write_bytes(docs + QStringLiteral("/a.md"), "two\n");
        write_bytes(docs + QStringLiteral("/a.zh.md"), "an earlier output\n");
        write_bytes(docs + QStringLiteral("/a.zh (2).md"), "another earlier output\n");
        write_bytes(docs + QStringLiteral("/image.png"), "not a document");
        write_bytes(docs + QStringLiteral("/sub/c.srt"), "1\n00:00:01,000 --> 00:00:02,000\nx\n");
        write_bytes(docs + QStringLiteral("/sub/deeper/d.po"), "msgid \"x\"\nmsgstr \"\"\n");
        const QStringList expected = {
            docs + QStringLiteral("/a.md"), docs + QStringLiteral("/b.txt"),
            docs + QStringLiteral("/sub/c.srt"), docs + QStringLiteral("/sub/deeper/d.po")};
        QCOMPARE(JobQueue::expandPaths({docs}, QStringLiteral("zh")), expected);
        // For another target the zh outputs are documents like any other.
        QVERIFY(JobQueue::expandPaths({docs}, QStringLiteral("de"))
                    .contains(docs + QStringLiteral("/a.zh.md")));

        JobQueue q(state);  // no engine: rows stay queued
        const QList<quint64> ids =
            q.addPaths({docs, docs + QStringLiteral("/b.txt")}, QString(), QStringLiteral("zh"));
        QCOMPARE(ids.size(), 4);                                                  // b.txt once
        QCOMPARE(q.addPaths({docs}, QString(), QStringLiteral("zh")).size(), 0);  // all queued
        QCOMPARE(
            q.addPaths({docs + QStringLiteral("/b.txt")}, QString(), QStringLiteral("fr")).size(),
            1);  // another target is another job
        for (const DocumentJob& j : q.jobs())
            QCOMPARE(j.state, JobState::Queued);
        QCOMPARE(q.count(), 5);

        // Bad language pairs are failed rows that say so.
        const quint64 same =
            q.addPaths({docs + QStringLiteral("/a.md")}, QStringLiteral("en"), QStringLiteral("en"))
                .value(0);
        QCOMPARE(q.job(same)->state, JobState::Failed);
        QVERIFY(q.job(same)->error.contains(QStringLiteral("same")));

        // Removing a row removes its saved state; the rest is saved.
        q.remove(ids[0]);
        QCOMPARE(q.count(), 5);
        q.removeFinished();  // the failed row
        QCOMPARE(q.count(), 4);
        JobQueue reloaded(state);
        QCOMPARE(reloaded.count(), 4);
        QVERIFY(!reloaded.job(ids[0]));
        QCOMPARE(reloaded.jobs().front().id, ids[1]);
        QCOMPARE(QDir(state).entryList({QStringLiteral("*.json")}, QDir::Files).size(), 4);
    }

    void unreadableStateIsSkipped() {
        const auto [docs, state] = dirs();
        QDir().mkpath(state);
        write_bytes(state + QStringLiteral("/job-1.json"), "{ not json");
        write_bytes(state + QStringLiteral("/job-2.json"), "{\"version\": 99}");
        JobQueue q(state);
        QCOMPARE(q.count(), 0);
        const QString txt = docs + QStringLiteral("/a.txt");
        write_bytes(txt, "Hello\n");
        const quint64 id = q.addPaths({txt}, QStringLiteral("en"), QStringLiteral("zh"))[0];
        QVERIFY(id >= 1);
        QCOMPARE(q.job(id)->state, JobState::Queued);
    }
};

QTEST_GUILESS_MAIN(TestJobQueue)
#include "test_job_queue.moc"
