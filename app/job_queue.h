#pragma once
// The document job queue: one row per document (source file, language pair, state, progress,
// output), translated segment by segment through a TranslationEngine. Segments of all rows share
// the engine: the queue keeps up to max_in_flight() segment jobs submitted, taken from the rows
// in order, so that a batching engine translates several documents together. What a segment
// needs is decided by the document API (documents::translate_segments: a tagged segment goes
// with the formatted prompt, or run by run), and a text that occurs several times in a
// document is translated once.
//
// Every row is saved as one JSON file in a state directory (by default
// AppLocalDataLocation/queue), together with the translations finished so far and a fingerprint
// of the source (size, modification time, a hash of its segments). A queue created on the same
// directory after a restart or a crash shows the same rows, and unfinished ones resume from the
// first segment not yet translated; a source that changed meanwhile starts again from zero.
//
// Outputs go next to the source as name.<target>.<ext> (app/output_path.h): never over an
// existing file, written atomically. A document that cannot be read or written, or a segment the
// engine fails on, marks its row Failed with a message naming the file; the other rows go on.
// Reading and writing run on a background thread, so the thread of the queue never blocks on
// files.

#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mtdesk/runtime/sampling.h"

class QThreadPool;
class QTimer;

namespace mtdesk {
class Glossary;
class TranslationEngine;
struct JobOutcome;
}  // namespace mtdesk

namespace mtdesk::app {

namespace documents {
struct PlaceholderIssue;
}

/// Where a document job is.
enum class JobState {
    Queued,     ///< waiting for the engine (or for its turn)
    Running,    ///< being read, translated or written
    Done,       ///< the output is written (DocumentJob::output_path)
    Failed,     ///< DocumentJob::error says why; retry() tries again
    Cancelled,  ///< stopped by the user; retry() resumes it
};

/// A translated segment whose placeholders or markup differ from its source's
/// (documents::check_placeholders).
struct PlaceholderNote {
    int segment = 0;      ///< 1-based, as the command line counts
    QStringList missing;  ///< in the source, not in the translation ("**", "%s")
    QStringList added;    ///< in the translation, not in the source

    /// The note of one finding of documents::check_placeholders.
    static PlaceholderNote of(const documents::PlaceholderIssue& issue);
};

/// A snapshot of one row of the queue.
struct DocumentJob {
    quint64 id = 0;             ///< unique within the state directory, increasing
    QString source_path;        ///< absolute path of the document
    QString source_language;    ///< language code; "" = detected from the document
    QString detected_language;  ///< what detection found ("" = not yet, or nothing reliable)
    QString target_language;    ///< language code
    JobState state = JobState::Queued;
    int segments_done = 0;
    int segments_total = 0;  ///< 0 until the document has been read
    QString output_path;     ///< Done: the file written
    QString error;           ///< Failed: what went wrong, naming the file
    qint64 elapsed_ms = 0;   ///< time spent running, over all sessions
    /// Done: how many segments may have lost (or gained) placeholders or markup, so that the
    /// user looks at them; placeholder_notes describes the first few.
    int placeholder_issues = 0;
    QList<PlaceholderNote> placeholder_notes;
    /// Done: entries the format marked for review with the source kept instead of translating
    /// them (PO: "fuzzy").
    int marked_for_review = 0;
    /// Estimate from this session's rate (Running rows with a segment done this session).
    std::optional<qint64> remaining_ms;
};

/// How segments are translated.
struct DocumentOptions {
    /// Sampling for every segment; nullopt = the model's recommended sampling (greedy for
    /// engines without a local model).
    std::optional<SamplingParams> sampling;
    int max_new_tokens = 1024;  ///< per segment (the engine bounds it further)
    bool casing_guard = true;   ///< TranslateOptions::casing_guard
    /// The user's glossary (nullptr = none): each segment is sent with the entries that match
    /// its text and language pair (Glossary::matching_entries).
    std::shared_ptr<const Glossary> glossary;
};

/// The queue. Lives on one thread (the UI's); engine callbacks and file work come back to it
/// through its event loop. Nothing here throws: every problem ends in a row's message.
class JobQueue : public QObject {
    Q_OBJECT

  public:
    /// Loads the rows saved in `state_directory` (created when missing). Rows that were running
    /// are queued again. Files there that cannot be parsed are skipped with a warning. Nothing
    /// runs before setEngine().
    explicit JobQueue(const QString& state_directory = defaultStateDirectory(),
                      QObject* parent = nullptr);
    /// Cancels the segment jobs in flight, saves every row (so a new queue resumes where this
    /// one stopped) and waits for a file being read or written.
    ~JobQueue() override;

    /// QStandardPaths::AppLocalDataLocation + "/queue".
    static QString defaultStateDirectory();
    /// Where this queue saves its rows.
    QString stateDirectory() const { return dir_; }

    /// The engine that translates segments; null stops submitting (segment jobs in flight are
    /// cancelled and will be submitted again to the next engine). Jobs start as soon as there
    /// is an engine.
    void setEngine(std::shared_ptr<TranslationEngine> engine);
    /// The engine set last (null = none).
    std::shared_ptr<TranslationEngine> engine() const { return engine_; }
    /// Options for segments submitted from now on.
    void setOptions(const DocumentOptions& options);
    DocumentOptions options() const { return options_; }
    /// Engine slots kept free for interactive requests: the queue keeps at most
    /// max_in_flight() - n segment jobs submitted (0 when n >= max_in_flight(), so with the
    /// one-at-a-time CPU engine a typed request waits for at most the segment being decoded).
    void setReservedSlots(int n);
    int reservedSlots() const { return reserved_; }

    /// Adds one row per document: files as given (a file of an unsupported type gets a Failed row
    /// that says so), folders searched recursively for supported types, skipping files that
    /// look like earlier outputs for `to` ("x.zh.txt", "x.zh (2).txt") and documents already
    /// queued or running for `to`. `from` "" = detect. Returns the ids added, in order.
    QList<quint64> addPaths(const QStringList& paths, const QString& from, const QString& to);

    /// Stops a queued or running row (Cancelled); its finished segments are kept. No-op for other
    /// states, and while its output is being written.
    void cancel(quint64 id);
    /// Queues a Failed or Cancelled row again: the document is read again and, when it has not
    /// changed, only the segments not yet translated are sent.
    void retry(quint64 id);
    /// Removes a row (cancelling it first) and its saved state. The output stays.
    void remove(quint64 id);
    /// Removes every Done, Failed and Cancelled row.
    void removeFinished();

    /// Snapshots with the running rows' live elapsed and remaining times, in queue order.
    QList<DocumentJob> jobs() const;
    /// One row's snapshot; nullopt for an unknown id.
    std::optional<DocumentJob> job(quint64 id) const;
    /// Rows in the queue, whatever their state.
    int count() const { return static_cast<int>(jobs_.size()); }
    /// Segment jobs submitted to the engine and not yet answered.
    int inFlight() const { return static_cast<int>(in_flight_.size()); }
    /// Rows Queued or Running.
    int pendingCount() const;

    /// Whether cancel() applies: Queued or Running.
    static bool canCancel(const DocumentJob& job);
    /// Whether retry() applies: Failed or Cancelled.
    static bool canRetry(const DocumentJob& job);

    /// What addPaths() would queue for `paths`, without its duplicate check: each file as given
    /// and each folder's supported documents (sorted, earlier outputs for `to` left out), all
    /// as absolute paths.
    static QStringList expandPaths(const QStringList& paths, const QString& to);

  signals:
    /// A row was appended (addPaths).
    void jobAdded(quint64 id);
    /// State, progress, output or message of a row changed.
    void jobChanged(quint64 id);
    /// A row left the queue (remove, removeFinished).
    void jobRemoved(quint64 id);

  private:
    struct Job;
    struct Link;
    struct Loaded;
    /// A request submitted to the engine, by this queue's token.
    struct InFlight {
        quint64 job = 0;
        std::pair<bool, std::string> key;  // formatted prompt?, text
        quint64 epoch = 0;
        uint64_t engine_id = 0;
    };

    Job* find(quint64 id) const;
    DocumentJob snapshot(const Job& job) const;
    int freeSlots() const;
    bool formattedPrompts() const;  // the engine's model takes HY-MT1.5's formatted prompt
    /// Segment `segment`'s translation from the row's cache, or nullopt with the requests it
    /// still needs in `missing`.
    std::optional<std::string> resolve(const Job& job, int segment,
                                       std::vector<std::pair<bool, std::string>>& missing,
                                       bool formatted) const;
    void pump();               // submits what the engine has room for, completes rows
    void startLoad(Job& job);  // reads the document on the I/O thread
    void onLoaded(quint64 id, quint64 epoch, std::shared_ptr<Loaded> loaded);
    void submit(Job& job, const std::pair<bool, std::string>& key);
    void onOutcome(quint64 token, const JobOutcome& outcome);
    struct Written;
    void startWrite(Job& job);  // writes the output on the I/O thread, checks the translations
    void onWritten(quint64 id, quint64 epoch, const Written& written);
    void setState(Job& job, JobState state);
    void fail(Job& job, const QString& message);
    void stopJob(Job& job);  // cancels its requests, ignores its pending I/O
    void cancelInFlight();   // every request, on the current engine
    void changed(Job& job, bool save_now);
    void save(Job& job);
    void saveDirty();
    QString jobFile(quint64 id) const;
    void load();

    QString dir_;
    std::vector<std::unique_ptr<Job>> jobs_;
    std::map<quint64, InFlight> in_flight_;  // by token
    std::shared_ptr<TranslationEngine> engine_;
    std::shared_ptr<Link> link_;
    DocumentOptions options_;
    QThreadPool* io_;
    QTimer* saveTimer_;
    quint64 next_id_ = 1;
    quint64 next_token_ = 1;
    int reserved_ = 0;
    int loads_ = 0;         // documents being read
    bool closing_ = false;  // in the destructor: nothing new starts
};

/// Lower-case name of a state: "queued", "running", "done", "failed", "cancelled".
QString job_state_name(JobState state);

}  // namespace mtdesk::app
