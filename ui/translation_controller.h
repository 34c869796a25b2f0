#pragma once
// The one object between the widgets and the engine (the translateLocally shape): it owns a
// worker std::thread that loads models there into a TranslationEngine, takes translate() calls
// from the UI thread, keeps only the newest pending request (a newer one cancels the running
// one at its next token and replaces the pending one), sends its lines to the engine and
// answers with queued signals. The same engine translates documents (engine(), for the
// document queue), so the model is loaded once. The UI never blocks on the engine.

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVector>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "mtdesk/runtime/sampling.h"
#include "mtdesk/translate/glossary.h"
#include "mtdesk/translate/translation_engine.h"

namespace mtdesk {
class TranslationEngine;
class Translator;
}  // namespace mtdesk

namespace mtdesk::ui {

/// How a request's sampling parameters are chosen.
enum class SamplingMode {
    Greedy,       ///< argmax, no penalty: deterministic
    Recommended,  ///< the model's generation_config.json (Hunyuan-MT's defaults when absent)
    Custom,       ///< the parameters given in TranslationOptions::sampling
};

struct TranslationOptions {
    SamplingMode mode = SamplingMode::Recommended;
    SamplingParams sampling;    ///< used with SamplingMode::Custom
    int max_new_tokens = 1024;  ///< per line
    bool casing_guard = true;   ///< TranslateOptions::casing_guard
    /// The user's glossary (nullptr = none); each request sends the entries that match its
    /// text and language pair (Glossary::matching_entries).
    std::shared_ptr<const Glossary> glossary;
};

/// Remote servers that translate instead of this computer (the settings' "Servers").
struct RemoteChoice {
    QStringList servers;  ///< base URLs
    QString model;        ///< the served model's name; "" = the first model the servers list
    QString api_key;      ///< "" = none
    int concurrency = 4;  ///< requests in flight per server
    bool operator==(const RemoteChoice&) const = default;
};

/// Which engine a model is loaded into (the settings' device, tier and budgets).
struct EngineChoice {
    QString device = QStringLiteral("auto");    ///< "auto", "cpu" or "cuda:N"
    QString tier = QStringLiteral("bf16");      ///< GPU precision tier
    int context_tokens = 16384;                 ///< GPU KV cache budget
    int max_batch = 64;                         ///< GPU sequences per step
    bool int8_kv_cache = false;                 ///< GPU KV cache in int8 instead of 16-bit
    QString cpu_tier = QStringLiteral("auto");  ///< CPU tier: "auto", "fp32", "int8", "int4"
};

/// Figures of one finished request.
struct RequestStats {
    quint64 request_id = 0;
    double ttft_ms = 0;        ///< from the worker taking the request to its first token
    double tokens_per_s = 0;   ///< decode rate (tokens after the first / decode time); 0 if n/a
    double total_ms = 0;       ///< from the worker taking the request to its end
    int generated_tokens = 0;  ///< over all lines
    int prompt_tokens = 0;     ///< over all lines
    int segments = 0;          ///< non-blank lines sent to the model
    int cached_lines = 0;      ///< non-blank lines taken from earlier translations instead
    QString source_language;   ///< code used for the prompt ("" = left to the prompt)
    /// Glossary entries whose target term the translation lacks, as "source → target",
    /// once each over all lines.
    QStringList missing_terms;
};

/// last / p50 / p95 of one figure over the sliding window; empty when nothing finished yet.
struct Percentiles {
    std::optional<double> last, p50, p95;
};

/// A snapshot for the live panel. The CPU engine fills RAM; a GPU engine adds the VRAM figures
/// (left empty here) and its tier.
struct EngineStats {
    QString device;                          ///< "CPU", later the GPU's name
    QString tier;                            ///< "fp32 (CPU)", "int8 (CPU)", "bf16", "int8", ...
    qint64 ram_bytes = 0;                    ///< resident memory of this process (VmRSS)
    std::optional<qint64> vram_used_bytes;   ///< whole device, GPU engine only
    std::optional<qint64> vram_total_bytes;  ///< GPU engine only
    std::optional<qint64> vram_own_bytes;    ///< the part that is mtdesk's, GPU engine only
    int queue_depth = 0;                     ///< requests waiting for the worker
    int batch_size = 0;                      ///< sequences decoding now (0 or 1 on the CPU engine)
    /// Over typed requests (each whole) and document segments alike.
    Percentiles ttft_ms;
    Percentiles tokens_per_s;
    QVector<double> ttft_history;  ///< oldest first, at most kHistory
    QVector<double> tps_history;   ///< oldest first, at most kHistory
    quint64 finished_requests = 0;
    /// The remote engine's figures (batch_size counts its requests in flight); absent for the
    /// local engines.
    std::optional<RemoteStatistics> remote;
};

/// Resident set size of this process in bytes, from /proc/self/status (0 when unavailable).
qint64 process_resident_bytes();

/// Nearest-rank percentile (p in [0, 100]) of `values`; nullopt when empty.
std::optional<double> percentile(QVector<double> values, double p);

/// "Detect": the code of mtdesk::detect_source_language(text) (CLD2 when it is reliable, else
/// "zh" for Han-majority text), or "" when none, which leaves the source to the prompt.
QString detect_source_language(const QString& text);

class TranslationController : public QObject {
    Q_OBJECT

  public:
    enum class State { NoModel, Loading, Ready, Failed };
    Q_ENUM(State)

    static constexpr int kHistory = 60;  ///< requests kept for percentiles and charts

    explicit TranslationController(QObject* parent = nullptr);
    ~TranslationController() override;  ///< cancels what runs and joins the worker

    /// Loads (replacing any loaded model) on the worker; signals loadStarted, loadProgress and
    /// then modelLoaded or loadFailed. A pending translation waits for the model.
    void loadModel(const QString& directory);
    /// Like loadModel(), but the engine is the remote engine for `servers` (nothing is loaded
    /// here). Without a model name the servers' model list is asked for its first model on the
    /// worker; when none answers, loadFailed says what each server answered.
    void useServers(const RemoteChoice& servers);
    /// Whether the engine is (or is being made) the remote one.
    bool remote() const { return remote_.has_value(); }

    /// Queues a translation of `text` from `from` (a language code; "" = detect) into `to`.
    /// Returns its id. Supersedes every earlier request: a pending one is dropped, a running
    /// one is cancelled at its next token, and neither is delivered as finished. Lines
    /// translated before with the same engine, options and language pair are taken from a cache
    /// instead of the engine, so an edit only sends the lines that changed.
    quint64 translate(const QString& text, const QString& from, const QString& to);
    /// Supersedes every request without starting a new one.
    void cancel();

    void setOptions(const TranslationOptions& options);
    /// Used by the next loadModel(): the GPU engine when the choice names a GPU (or "auto" and
    /// one is present), else the CPU engine. A GPU load that fails (the tier does not fit, no
    /// driver) reports the reason through error() and falls back to the CPU.
    void setEngineChoice(const EngineChoice& choice);
    TranslationOptions options() const;

    State state() const { return state_; }
    /// The model directory, or for servers their URLs (one per line).
    QString modelDirectory() const;
    QString modelName() const;  ///< the directory's last component, or the servers' model
    QString lastError() const { return last_error_; }
    quint64 latestRequestId() const { return latest_id_; }
    bool busy() const;  ///< a request is pending or running
    /// The loaded model's engine, shared with the document queue (typed requests go through it
    /// too), whose finished jobs count in stats(); null while no model is loaded and from the
    /// moment a new load is asked for (holders must let go then, so the old model can be freed).
    /// engineChanged() says when it changes.
    std::shared_ptr<TranslationEngine> engine() const { return engine_; }

    EngineStats stats() const;  ///< thread-safe snapshot; reads VmRSS

  signals:
    void stateChanged(mtdesk::ui::TranslationController::State state);
    void loadStarted(const QString& directory);
    /// done of total steps; total 0 = no measure of progress (show a busy indicator).
    void loadProgress(int done, int total, const QString& what);
    void modelLoaded(const QString& name);
    void loadFailed(const QString& message);
    /// The text translated so far for `requestId` (whole text, not a delta).
    void partialTranslation(quint64 requestId, const QString& text);
    void translationFinished(quint64 requestId, const QString& text,
                             const mtdesk::ui::RequestStats& stats);
    void error(const QString& message);
    void busyChanged(bool busy);
    /// engine() changed: a model finished loading, or a new load started (engine() is null).
    void engineChanged();

  private:
    struct Request {
        quint64 id = 0;
        QString text;
        QString from, to;
        TranslationOptions options;
        quint64 lines_generation = 0;  // of the line cache when it was asked for
    };
    struct Shared;  // what the worker and the UI thread share, under one mutex

    void run();  // the worker
    void runRequest(const Request& request);
    void setState(State s);
    void post(std::function<void()> f);  // runs f on this object's thread

    std::unique_ptr<Shared> shared_;
    std::thread worker_;

    // UI-thread state
    State state_ = State::NoModel;
    QString model_dir_;
    std::optional<RemoteChoice> remote_;  // useServers(): the servers in use
    QString remote_model_;                // their model, once known
    QString last_error_;
    quint64 latest_id_ = 0;
    bool busy_ = false;
    std::shared_ptr<TranslationEngine> engine_;
    quint64 load_generation_ = 0;  // loads asked for; a finished load older than that is stale
};

}  // namespace mtdesk::ui

Q_DECLARE_METATYPE(mtdesk::ui::RequestStats)
