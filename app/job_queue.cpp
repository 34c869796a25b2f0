#include "job_queue.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMetaObject>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSet>
#include <QStandardPaths>
#include <QThreadPool>
#include <QTimer>

#include <algorithm>
#include <exception>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "documents/document.h"
#include "documents/placeholders.h"
#include "mtdesk/error.h"
#include "mtdesk/translate/detect.h"
#include "mtdesk/translate/glossary.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/translation_engine.h"
#include "output_path.h"

namespace mtdesk::app {
namespace {

using documents::Document;
using documents::DocumentFormat;

constexpr int kStateVersion = 1;
constexpr int kSaveDelayMs = 1000;        // progress is saved at most this often per row
constexpr int kMaxPlaceholderNotes = 10;  // segments described; the others are counted

/// One request to the engine: a text and whether it goes with the formatted prompt. Segments
/// that need the same request share its translation.
using Key = std::pair<bool, std::string>;

const std::pair<JobState, const char*> kStateNames[] = {{JobState::Queued, "queued"},
                                                        {JobState::Running, "running"},
                                                        {JobState::Done, "done"},
                                                        {JobState::Failed, "failed"},
                                                        {JobState::Cancelled, "cancelled"}};

std::optional<JobState> state_from_name(const QString& name) {
    for (const auto& [state, text] : kStateNames)
        if (name == QLatin1String(text)) return state;
    return std::nullopt;
}

QString utf8(const std::string& s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

// An exception's message, naming `path` when the exception does not name a file itself.
QString message_naming(const std::exception& e, const QString& path) {
    if (dynamic_cast<const FileError*>(&e)) return QString::fromUtf8(e.what());
    return path + QStringLiteral(": ") + QString::fromUtf8(e.what());
}

// Identifies a document's content as parsed: a changed source restarts from zero.
QString segments_hash(const Document& doc) {
    QCryptographicHash hash(QCryptographicHash::Sha256);
    for (std::size_t i = 0; i < doc.segments.size(); ++i) {
        const std::string& s = doc.segments[i];
        hash.addData(QByteArrayView(s.data(), static_cast<qsizetype>(s.size())));
        hash.addData(QByteArrayView(doc.is_tagged(i) ? "\1" : "\0", 1));
    }
    return QString::fromLatin1(hash.result().toHex());
}

// The document's language from the start of its text, by the rule the window uses for typed
// text (detect_source_language); empty when none.
QString detect_document_language(const Document& doc) {
    const Language* l = detect_source_language(documents::detection_sample(doc)).language;
    return l ? utf8(std::string(l->code)) : QString();
}

// "x.zh.txt" or "x.zh (2).txt": what this queue writes for `to`, not worth translating again.
bool looks_like_output(const QString& path, const QString& to) {
    const QRegularExpression re(
        QStringLiteral("^.+\\.%1( \\(\\d+\\))?$").arg(QRegularExpression::escape(to)),
        QRegularExpression::CaseInsensitiveOption);
    return re.match(QFileInfo(path).completeBaseName()).hasMatch();
}

}  // namespace

QString job_state_name(JobState state) {
    for (const auto& [s, text] : kStateNames)
        if (s == state) return QString::fromLatin1(text);
    return {};
}

/// Lets engine callbacks and I/O tasks, on their own threads, reach the queue while it exists.
struct JobQueue::Link {
    std::mutex m;
    JobQueue* queue = nullptr;

    /// Runs `f` on the queue's thread, unless the queue is gone (then never).
    void post(std::function<void(JobQueue&)> f) {
        std::lock_guard lock(m);
        if (!queue) return;
        JobQueue* q = queue;
        // A call posted to an object that is then destroyed is dropped with it.
        QMetaObject::invokeMethod(
            q, [q, f = std::move(f)] { f(*q); }, Qt::QueuedConnection);
    }
};

/// A document read on the I/O thread.
PlaceholderNote PlaceholderNote::of(const documents::PlaceholderIssue& issue) {
    PlaceholderNote note;
    note.segment = static_cast<int>(issue.segment) + 1;
    for (const std::string& m : issue.missing)
        note.missing.append(utf8(m));
    for (const std::string& a : issue.added)
        note.added.append(utf8(a));
    return note;
}

struct JobQueue::Loaded {
    std::shared_ptr<Document> doc;
    const DocumentFormat* format = nullptr;
    qint64 size = -1;
    qint64 mtime_ms = 0;
    QString hash;
    QString detected;
    QString error;
};

/// What writing a document gave: the file, or why not, and what the checks found.
struct JobQueue::Written {
    QString output;
    QString error;
    int placeholder_issues = 0;
    QList<PlaceholderNote> placeholder_notes;
    int marked_for_review = 0;
};

struct JobQueue::Job {
    DocumentJob row;  // elapsed_ms counts finished running spans; remaining_ms is unused

    // Saved with the row: what the source was when `cache` was made.
    qint64 source_size = -1;
    qint64 source_mtime_ms = 0;
    QString hash;
    std::map<Key, std::string> cache;  // translations received so far

    // This session only.
    std::shared_ptr<Document> doc;  // while the row is being translated
    const DocumentFormat* format = nullptr;
    std::vector<std::optional<std::string>> result;  // per segment, once complete
    std::set<int> open;                              // segments started and not complete
    int scan = 0;                                    // segments before it are complete or open
    std::map<Key, quint64> requested;                // requests in flight -> token
    bool loading = false;
    bool writing = false;
    quint64 epoch = 0;  // bumped when the row stops, so late answers for it are ignored
    QElapsedTimer running;
    qint64 session_ms = 0;  // running time this session, before `running` started
    int session_done = 0;   // segments completed this session
    bool dirty = false;     // changed since saved

    qint64 session_running_ms() const {
        return session_ms + (running.isValid() ? running.elapsed() : 0);
    }
    void release() {
        doc.reset();
        format = nullptr;
        result.clear();
        open.clear();
        scan = 0;
        requested.clear();
    }
};

JobQueue::JobQueue(const QString& state_directory, QObject* parent)
    : QObject(parent),
      dir_(state_directory),
      link_(std::make_shared<Link>()),
      io_(new QThreadPool(this)),
      saveTimer_(new QTimer(this)) {
    link_->queue = this;
    // One thread: reads and writes are serialised, so two rows cannot choose the same new output
    // name at once.
    io_->setMaxThreadCount(1);
    saveTimer_->setSingleShot(true);
    saveTimer_->setInterval(kSaveDelayMs);
    connect(saveTimer_, &QTimer::timeout, this, &JobQueue::saveDirty);
    if (!QDir().mkpath(dir_))
        qWarning("mtdesk: cannot create the queue's directory %s", qPrintable(dir_));
    load();
}

JobQueue::~JobQueue() {
    closing_ = true;
    // Keep what already arrived (translations posted but not yet delivered), then stop the
    // engine's work for this queue.
    QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);
    cancelInFlight();
    // A document being written must be recorded as written, or a resumed queue would write it a
    // second time: wait for the I/O thread and take its answers.
    io_->waitForDone();
    QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);
    {
        std::lock_guard lock(link_->m);
        link_->queue = nullptr;
    }
    for (auto& job : jobs_)
        if (job->dirty || job->row.state == JobState::Running) save(*job);
}

QString JobQueue::defaultStateDirectory() {
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) +
           QStringLiteral("/queue");
}

QString JobQueue::jobFile(quint64 id) const {
    return QDir(dir_).filePath(QStringLiteral("job-%1.json").arg(id));
}

JobQueue::Job* JobQueue::find(quint64 id) const {
    for (const auto& job : jobs_)
        if (job->row.id == id) return job.get();
    return nullptr;
}

void JobQueue::setEngine(std::shared_ptr<TranslationEngine> engine) {
    if (engine == engine_) return;
    cancelInFlight();
    engine_ = std::move(engine);
    if (!engine_) {
        for (auto& job : jobs_)
            if (job->row.state == JobState::Running && !job->loading && !job->writing) {
                setState(*job, JobState::Queued);
                changed(*job, false);
            }
    }
    pump();
}

void JobQueue::setOptions(const DocumentOptions& options) {
    options_ = options;
}

void JobQueue::setReservedSlots(int n) {
    reserved_ = std::max(0, n);
    pump();
}

bool JobQueue::canCancel(const DocumentJob& job) {
    return job.state == JobState::Queued || job.state == JobState::Running;
}

bool JobQueue::canRetry(const DocumentJob& job) {
    return job.state == JobState::Failed || job.state == JobState::Cancelled;
}

int JobQueue::pendingCount() const {
    return static_cast<int>(std::count_if(jobs_.begin(), jobs_.end(), [](const auto& job) {
        return job->row.state == JobState::Queued || job->row.state == JobState::Running;
    }));
}

DocumentJob JobQueue::snapshot(const Job& job) const {
    DocumentJob row = job.row;
    if (job.running.isValid()) row.elapsed_ms += job.running.elapsed();
    row.remaining_ms.reset();
    const qint64 ms = job.session_running_ms();
    if (row.state == JobState::Running && job.session_done > 0 && row.segments_total > 0)
        row.remaining_ms = static_cast<qint64>(static_cast<double>(ms) / job.session_done *
                                               (row.segments_total - row.segments_done));
    return row;
}

QList<DocumentJob> JobQueue::jobs() const {
    QList<DocumentJob> out;
    out.reserve(count());
    for (const auto& job : jobs_)
        out.append(snapshot(*job));
    return out;
}

std::optional<DocumentJob> JobQueue::job(quint64 id) const {
    if (const Job* j = find(id)) return snapshot(*j);
    return std::nullopt;
}

// ---- adding ----

QStringList JobQueue::expandPaths(const QStringList& paths, const QString& to) {
    QStringList out;
    for (const QString& path : paths) {
        const QFileInfo info(path);
        const QString absolute = QDir::cleanPath(info.absoluteFilePath());
        if (!info.isDir()) {
            out.append(absolute);
            continue;
        }
        QStringList found;
        QDirIterator it(absolute, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString file = QDir::cleanPath(it.next());
            if (documents::find_format(file) && !looks_like_output(file, to)) found.append(file);
        }
        std::sort(found.begin(), found.end());
        out.append(found);
    }
    return out;
}

QList<quint64> JobQueue::addPaths(const QStringList& paths, const QString& from,
                                  const QString& to) {
    QList<quint64> added;
    QSet<QString> seen;
    for (const QString& path : expandPaths(paths, to)) {
        if (seen.contains(path)) continue;
        seen.insert(path);
        const bool queued = std::any_of(jobs_.begin(), jobs_.end(), [&](const auto& job) {
            return job->row.source_path == path && job->row.target_language == to &&
                   (job->row.state == JobState::Queued || job->row.state == JobState::Running);
        });
        if (queued) continue;

        auto job = std::make_unique<Job>();
        job->row.id = next_id_++;
        job->row.source_path = path;
        job->row.source_language = from;
        job->row.target_language = to;
        const Language* target = find_language(to.toStdString());
        const Language* source = from.isEmpty() ? nullptr : find_language(from.toStdString());
        if (!target) {
            job->row.state = JobState::Failed;
            job->row.error = tr("Unknown target language \"%1\".").arg(to);
        } else if (!from.isEmpty() && !source) {
            job->row.state = JobState::Failed;
            job->row.error = tr("Unknown source language \"%1\".").arg(from);
        } else if (source == target) {
            job->row.state = JobState::Failed;
            job->row.error = tr("The source and the target language are the same (%1).")
                                 .arg(utf8(std::string(target->english_name)));
        } else {
            try {
                documents::format_for(path);
            } catch (const std::exception& e) {
                job->row.state = JobState::Failed;
                job->row.error = message_naming(e, path);
            }
        }
        Job& ref = *job;
        jobs_.push_back(std::move(job));
        save(ref);
        added.append(ref.row.id);
        emit jobAdded(ref.row.id);
    }
    pump();
    return added;
}

// ---- user actions ----

void JobQueue::cancel(quint64 id) {
    Job* job = find(id);
    if (!job || !canCancel(job->row) || job->writing) return;
    stopJob(*job);
    setState(*job, JobState::Cancelled);
    job->release();
    changed(*job, true);
    pump();
}

void JobQueue::retry(quint64 id) {
    Job* job = find(id);
    if (!job || !canRetry(job->row)) return;
    stopJob(*job);
    job->release();  // read again: the user may have fixed the file
    job->row.error.clear();
    job->session_ms = 0;
    job->session_done = 0;
    setState(*job, JobState::Queued);
    changed(*job, true);
    pump();
}

void JobQueue::remove(quint64 id) {
    const auto it = std::find_if(jobs_.begin(), jobs_.end(),
                                 [&](const auto& job) { return job->row.id == id; });
    if (it == jobs_.end()) return;
    stopJob(**it);
    jobs_.erase(it);
    QFile::remove(jobFile(id));
    emit jobRemoved(id);
    pump();
}

void JobQueue::removeFinished() {
    QList<quint64> ids;
    for (const auto& job : jobs_)
        if (job->row.state == JobState::Done || job->row.state == JobState::Failed ||
            job->row.state == JobState::Cancelled)
            ids.append(job->row.id);
    for (quint64 id : ids)
        remove(id);
}

// ---- running ----

void JobQueue::setState(Job& job, JobState state) {
    if (job.row.state == state) return;
    if (job.running.isValid()) {
        const qint64 ms = job.running.elapsed();
        job.row.elapsed_ms += ms;
        job.session_ms += ms;
        job.running.invalidate();
    }
    job.row.state = state;
    if (state == JobState::Running) job.running.start();
}

void JobQueue::changed(Job& job, bool save_now) {
    if (save_now) {
        save(job);
    } else {
        job.dirty = true;
        if (!saveTimer_->isActive()) saveTimer_->start();
    }
    emit jobChanged(job.row.id);
}

void JobQueue::fail(Job& job, const QString& message) {
    stopJob(job);
    job.row.error = message;
    setState(job, JobState::Failed);
    job.release();  // the cache stays: a retry only sends what is missing
    changed(job, true);
}

void JobQueue::stopJob(Job& job) {
    for (auto it = in_flight_.begin(); it != in_flight_.end();) {
        if (it->second.job == job.row.id) {
            if (engine_) engine_->cancel(it->second.engine_id);
            it = in_flight_.erase(it);
        } else {
            ++it;
        }
    }
    job.requested.clear();
    job.loading = false;
    job.writing = false;
    ++job.epoch;
}

void JobQueue::cancelInFlight() {
    if (engine_)
        for (const auto& [token, f] : in_flight_)
            engine_->cancel(f.engine_id);
    in_flight_.clear();
    for (auto& job : jobs_)
        job->requested.clear();
}

bool JobQueue::formattedPrompts() const {
    const Translator* t = engine_ ? engine_->translator() : nullptr;
    return t && t->style() == PromptStyle::HyMt15;
}

std::optional<std::string> JobQueue::resolve(const Job& job, int segment,
                                             std::vector<std::pair<bool, std::string>>& missing,
                                             bool formatted) const {
    // The document API decides which requests a segment needs (a tagged segment may be
    // translated whole with the formatted prompt, or run by run when the model broke its tags):
    // replay it on this one segment with what the cache holds. A request not in the cache is
    // answered with its own text, whose tags are the source's, so the replay asks for no
    // fallback that the real answer may make unnecessary.
    Document one;
    one.segments.push_back(job.doc->segments[static_cast<std::size_t>(segment)]);
    if (job.doc->is_tagged(static_cast<std::size_t>(segment))) one.set_tagged(0);
    missing.clear();
    const auto lookup = [&](const std::string& text, bool with_format) {
        const auto it = job.cache.find(Key{with_format, text});
        if (it != job.cache.end()) return it->second;
        missing.emplace_back(with_format, text);
        return text;
    };
    // `formatted`: tagged segments try the formatted prompt first, otherwise go run by run.
    const std::vector<std::string> out =
        documents::translate_segments(one, documents::FormattedTranslate(lookup), {}, formatted);
    if (!missing.empty() || out.size() != 1) return std::nullopt;
    return out.front();
}

int JobQueue::freeSlots() const {
    if (!engine_ || closing_) return 0;
    return std::max(0, engine_->max_in_flight() - reserved_) - inFlight();
}

void JobQueue::pump() {
    // While closing, only answers already received complete segments (freeSlots() is 0): the
    // saved progress counts them.
    if (!engine_) return;
    const bool formatted = formattedPrompts();
    std::vector<std::pair<bool, std::string>> missing;
    // Index-based: a signal handler may add or remove rows meanwhile. Every row is visited even
    // without free slots, so that answers already received complete their segments and rows.
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
        Job& job = *jobs_[j];
        if (job.row.state != JobState::Queued && job.row.state != JobState::Running) continue;
        if (job.loading || job.writing) continue;
        if (!job.doc) {
            // One document read at a time, and only when its segments would find room.
            if (loads_ == 0 && freeSlots() > 0) startLoad(job);
            continue;
        }
        bool progressed = false;
        auto visit = [&](int i) {
            std::optional<std::string>& result = job.result[static_cast<std::size_t>(i)];
            if (result) return;
            result = resolve(job, i, missing, formatted);
            if (result) {
                job.open.erase(i);
                ++job.row.segments_done;
                ++job.session_done;
                progressed = true;
                return;
            }
            // Open until its requests are answered; those left out for lack of room are sent by
            // a later pump.
            job.open.insert(i);
            for (const auto& key : missing) {
                if (freeSlots() <= 0) break;
                if (!job.requested.count(key)) submit(job, key);
            }
        };
        // Segments already started first (answers, fallbacks, requests left out), then new ones
        // in order.
        const int n = static_cast<int>(job.result.size());
        try {
            for (int i : std::vector<int>(job.open.begin(), job.open.end()))
                visit(i);
            while (job.scan < n && freeSlots() > 0)
                visit(job.scan++);
        } catch (const std::exception& e) {  // the document API refused a segment
            fail(job, message_naming(e, job.row.source_path));
            continue;
        }

        const bool started = job.row.state == JobState::Queued && !job.requested.empty();
        if (started) setState(job, JobState::Running);
        if (job.row.segments_done == n && job.requested.empty()) startWrite(job);
        if (started || progressed) changed(job, false);  // last: a handler may remove the row
    }
}

void JobQueue::submit(Job& job, const std::pair<bool, std::string>& key) {
    const Language* target = find_language(job.row.target_language.toStdString());
    QString from = job.row.source_language;
    if (from.isEmpty() && job.row.detected_language != job.row.target_language)
        from = job.row.detected_language;
    TranslationJob t;
    t.request.text = key.second;
    t.request.formatted = key.first;
    t.request.target = target;
    t.request.source = from.isEmpty() ? nullptr : find_language(from.toStdString());
    if (options_.sampling)
        t.options.sampling = *options_.sampling;
    else if (const Translator* translator = engine_->translator())
        t.options.sampling = translator->recommended_sampling();
    else
        t.options.sampling = SamplingParams::greedy_decoding();
    t.options.max_new_tokens = options_.max_new_tokens;
    t.options.casing_guard = options_.casing_guard;
    if (options_.glossary)
        t.request.glossary = options_.glossary->matching_entries(
            key.second, from.toStdString(), job.row.target_language.toStdString());

    const quint64 token = next_token_++;
    JobCallbacks callbacks;
    callbacks.on_done = [link = link_, token](const JobOutcome& outcome) {
        link->post([token, outcome](JobQueue& q) { q.onOutcome(token, outcome); });
    };
    in_flight_[token] = InFlight{job.row.id, key, job.epoch, 0};
    job.requested[key] = token;
    // Answers come through the event loop, so the id is recorded before any is handled.
    in_flight_[token].engine_id = engine_->submit(std::move(t), std::move(callbacks));
}

void JobQueue::onOutcome(quint64 token, const JobOutcome& outcome) {
    const auto it = in_flight_.find(token);
    if (it == in_flight_.end()) return;  // cancelled by this queue: nothing to do
    const InFlight f = it->second;
    in_flight_.erase(it);
    Job* job = find(f.job);
    if (job && job->epoch == f.epoch && job->doc) {
        job->requested.erase(f.key);
        switch (outcome.status) {
            case JobOutcome::Status::Done:
                job->cache[f.key] = outcome.text;
                job->dirty = true;
                if (!saveTimer_->isActive()) saveTimer_->start();
                break;
            case JobOutcome::Status::Failed:
                fail(*job, tr("%1: a segment could not be translated: %2")
                               .arg(job->row.source_path, utf8(outcome.error)));
                break;
            case JobOutcome::Status::Cancelled:
                // This queue forgets the jobs it cancels, so the engine stopped this one.
                fail(*job, tr("%1: the translation engine stopped (retry to go on)")
                               .arg(job->row.source_path));
                break;
        }
    }
    pump();
}

void JobQueue::startLoad(Job& job) {
    job.loading = true;
    ++loads_;
    setState(job, JobState::Running);
    changed(job, false);
    const QString path = job.row.source_path;
    const bool detect = job.row.source_language.isEmpty();
    const quint64 id = job.row.id;
    const quint64 epoch = job.epoch;
    io_->start([link = link_, path, detect, id, epoch] {
        auto loaded = std::make_shared<Loaded>();
        try {
            const QFileInfo info(path);
            loaded->size = info.size();
            loaded->mtime_ms = info.lastModified().toMSecsSinceEpoch();
            loaded->doc =
                std::make_shared<Document>(documents::read_document(path, &loaded->format));
            check_output_folder(path);  // before the translation, not after it
            loaded->hash = segments_hash(*loaded->doc);
            if (detect) loaded->detected = detect_document_language(*loaded->doc);
        } catch (const std::exception& e) {
            loaded->doc.reset();
            loaded->error = message_naming(e, path);
        }
        link->post([id, epoch, loaded](JobQueue& q) { q.onLoaded(id, epoch, loaded); });
    });
}

void JobQueue::onLoaded(quint64 id, quint64 epoch, std::shared_ptr<Loaded> loaded) {
    --loads_;
    Job* job = find(id);
    if (!job || job->epoch != epoch) {
        pump();
        return;
    }
    job->loading = false;
    if (!loaded->error.isEmpty()) {
        fail(*job, loaded->error);
        pump();
        return;
    }
    const bool same = job->source_size == loaded->size &&
                      job->source_mtime_ms == loaded->mtime_ms && job->hash == loaded->hash;
    if (!same) {  // new, or changed since the saved translations were made
        job->cache.clear();
        job->source_size = loaded->size;
        job->source_mtime_ms = loaded->mtime_ms;
        job->hash = loaded->hash;
    }
    job->doc = loaded->doc;
    job->doc->target_language = job->row.target_language.toStdString();
    job->format = loaded->format;
    if (job->row.source_language.isEmpty()) job->row.detected_language = loaded->detected;
    const int n = static_cast<int>(job->doc->segments.size());
    job->row.segments_total = n;
    job->result.assign(static_cast<std::size_t>(n), std::nullopt);
    job->open.clear();
    job->scan = 0;
    // What the saved translations complete already.
    job->row.segments_done = 0;
    std::vector<std::pair<bool, std::string>> missing;
    const bool formatted = formattedPrompts();
    try {
        for (int i = 0; i < n; ++i) {
            job->result[static_cast<std::size_t>(i)] = resolve(*job, i, missing, formatted);
            if (job->result[static_cast<std::size_t>(i)]) ++job->row.segments_done;
        }
    } catch (const std::exception& e) {
        fail(*job, message_naming(e, job->row.source_path));
        pump();
        return;
    }
    if (!engine_) setState(*job, JobState::Queued);
    changed(*job, true);
    if (job->row.segments_done == n && !closing_) startWrite(*job);
    pump();
}

void JobQueue::startWrite(Job& job) {
    if (job.writing || closing_) return;
    job.writing = true;
    setState(job, JobState::Running);
    std::vector<std::string> translations;
    translations.reserve(job.result.size());
    for (auto& t : job.result)
        translations.push_back(t.value_or(std::string()));
    const quint64 id = job.row.id;
    const quint64 epoch = job.epoch;
    io_->start([link = link_, id, epoch, doc = job.doc, format = job.format,
                translations = std::move(translations), source = job.row.source_path,
                to = job.row.target_language] {
        auto written = std::make_shared<Written>();
        try {
            const QByteArray bytes = format->write(*doc, translations);
            // What the command line reports after writing, so that a damaged segment is not
            // passed off as a clean result.
            const std::vector<documents::PlaceholderIssue> issues =
                documents::check_placeholders(*doc, translations);
            written->placeholder_issues = static_cast<int>(issues.size());
            for (const documents::PlaceholderIssue& issue : issues) {
                if (written->placeholder_notes.size() >= kMaxPlaceholderNotes) break;
                written->placeholder_notes.append(PlaceholderNote::of(issue));
            }
            written->marked_for_review =
                static_cast<int>(format->entries_marked_for_review(*doc, translations));
            // Next to the source, never over a file; formats that write another type (the text
            // of a PDF) give its extension.
            written->output = translated_output_path(
                source, to, QString::fromStdString(format->output_extension()));
            write_new_file_atomically(written->output, bytes);
        } catch (const std::exception& e) {
            written->error = message_naming(e, source);
        }
        link->post([=](JobQueue& q) { q.onWritten(id, epoch, *written); });
    });
}

void JobQueue::onWritten(quint64 id, quint64 epoch, const Written& written) {
    Job* job = find(id);
    if (!job || job->epoch != epoch) return;
    job->writing = false;
    if (!written.error.isEmpty()) {
        fail(*job, written.error);
    } else {
        job->row.output_path = written.output;
        job->row.placeholder_issues = written.placeholder_issues;
        job->row.placeholder_notes = written.placeholder_notes;
        job->row.marked_for_review = written.marked_for_review;
        setState(*job, JobState::Done);
        job->release();
        job->cache.clear();  // done: nothing to resume
        changed(*job, true);
    }
    pump();
}

// ---- saved state ----

void JobQueue::save(Job& job) {
    job.dirty = false;
    const DocumentJob row = snapshot(job);
    QJsonObject o;
    o[QStringLiteral("version")] = kStateVersion;
    o[QStringLiteral("id")] = static_cast<qint64>(row.id);
    o[QStringLiteral("source")] = row.source_path;
    o[QStringLiteral("from")] = row.source_language;
    o[QStringLiteral("detected")] = row.detected_language;
    o[QStringLiteral("to")] = row.target_language;
    o[QStringLiteral("state")] = job_state_name(row.state);
    o[QStringLiteral("segments_done")] = row.segments_done;
    o[QStringLiteral("segments_total")] = row.segments_total;
    o[QStringLiteral("output")] = row.output_path;
    o[QStringLiteral("error")] = row.error;
    o[QStringLiteral("elapsed_ms")] = row.elapsed_ms;
    o[QStringLiteral("placeholder_issues")] = row.placeholder_issues;
    QJsonArray notes;
    for (const PlaceholderNote& note : row.placeholder_notes)
        notes.append(QJsonArray{note.segment, QJsonArray::fromStringList(note.missing),
                                QJsonArray::fromStringList(note.added)});
    o[QStringLiteral("placeholder_notes")] = notes;
    o[QStringLiteral("marked_for_review")] = row.marked_for_review;
    o[QStringLiteral("source_size")] = job.source_size;
    o[QStringLiteral("source_mtime_ms")] = job.source_mtime_ms;
    o[QStringLiteral("segments_hash")] = job.hash;
    QJsonArray cache;
    for (const auto& [key, translation] : job.cache)
        cache.append(QJsonArray{key.first, utf8(key.second), utf8(translation)});
    o[QStringLiteral("translations")] = cache;

    QSaveFile file(jobFile(row.id));
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(QJsonDocument(o).toJson(QJsonDocument::Compact)) < 0 || !file.commit())
        qWarning("mtdesk: cannot save the document queue to %s: %s", qPrintable(file.fileName()),
                 qPrintable(file.errorString()));
}

void JobQueue::saveDirty() {
    for (auto& job : jobs_)
        if (job->dirty) save(*job);
}

void JobQueue::load() {
    const QDir dir(dir_);
    const QStringList files =
        dir.entryList({QStringLiteral("job-*.json")}, QDir::Files | QDir::Readable);
    for (const QString& name : files) {
        QFile file(dir.filePath(name));
        QJsonParseError error{};
        const QJsonDocument json = file.open(QIODevice::ReadOnly)
                                       ? QJsonDocument::fromJson(file.readAll(), &error)
                                       : QJsonDocument();
        const QJsonObject o = json.object();
        const auto state = state_from_name(o.value(QStringLiteral("state")).toString());
        const qint64 id = o.value(QStringLiteral("id")).toInteger();
        if (json.isNull() || !state || id <= 0 ||
            o.value(QStringLiteral("version")).toInt() != kStateVersion ||
            o.value(QStringLiteral("source")).toString().isEmpty() || find(quint64(id))) {
            qWarning("mtdesk: skipping %s: not a saved document job", qPrintable(file.fileName()));
            continue;
        }
        auto job = std::make_unique<Job>();
        DocumentJob& row = job->row;
        row.id = quint64(id);
        row.source_path = o.value(QStringLiteral("source")).toString();
        row.source_language = o.value(QStringLiteral("from")).toString();
        row.detected_language = o.value(QStringLiteral("detected")).toString();
        row.target_language = o.value(QStringLiteral("to")).toString();
        // A row that was running when the application ended resumes.
        row.state = *state == JobState::Running ? JobState::Queued : *state;
        row.segments_done = o.value(QStringLiteral("segments_done")).toInt();
        row.segments_total = o.value(QStringLiteral("segments_total")).toInt();
        row.output_path = o.value(QStringLiteral("output")).toString();
        row.error = o.value(QStringLiteral("error")).toString();
        row.elapsed_ms = o.value(QStringLiteral("elapsed_ms")).toInteger();
        row.placeholder_issues = o.value(QStringLiteral("placeholder_issues")).toInt();
        for (const QJsonValue& v : o.value(QStringLiteral("placeholder_notes")).toArray()) {
            const QJsonArray entry = v.toArray();
            if (entry.size() != 3) continue;
            PlaceholderNote note;
            note.segment = entry.at(0).toInt();
            for (const QJsonValue& m : entry.at(1).toArray())
                note.missing.append(m.toString());
            for (const QJsonValue& a : entry.at(2).toArray())
                note.added.append(a.toString());
            row.placeholder_notes.append(note);
        }
        row.marked_for_review = o.value(QStringLiteral("marked_for_review")).toInt();
        job->source_size = o.value(QStringLiteral("source_size")).toInteger(-1);
        job->source_mtime_ms = o.value(QStringLiteral("source_mtime_ms")).toInteger();
        job->hash = o.value(QStringLiteral("segments_hash")).toString();
        for (const QJsonValue& v : o.value(QStringLiteral("translations")).toArray()) {
            const QJsonArray entry = v.toArray();
            if (entry.size() != 3) continue;
            job->cache[Key{entry.at(0).toBool(), entry.at(1).toString().toStdString()}] =
                entry.at(2).toString().toStdString();
        }
        next_id_ = std::max(next_id_, row.id + 1);
        jobs_.push_back(std::move(job));
    }
    std::sort(jobs_.begin(), jobs_.end(),
              [](const auto& a, const auto& b) { return a->row.id < b->row.id; });
}

}  // namespace mtdesk::app
