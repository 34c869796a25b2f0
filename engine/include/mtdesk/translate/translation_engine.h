#pragma once
// The interface between everything that wants translations (the window, the document job
// queue, `mtdesk serve`) and whatever produces them: the CPU engine here, the CUDA engine with
// continuous batching, or remote OpenAI-compatible servers. Callers submit segments from any
// thread and get streamed text and one outcome per job through callbacks.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translator.h"

namespace mtdesk {

/// One segment to translate with its options.
struct TranslationJob {
    PromptRequest request;
    TranslateOptions options;
};

/// How a job ended, with its figures.
struct JobOutcome {
    enum class Status { Done, Cancelled, Failed };
    Status status = Status::Done;
    std::string text;   ///< the cleaned translation (Done), or what was produced so far
    std::string error;  ///< Failed: what went wrong, for the user
    int prompt_tokens = 0;
    int generated_tokens = 0;
    /// Done: generation stopped at a token limit (the job's max_new_tokens, the output bound,
    /// a server's own limit) instead of ending by itself, in some piece: probably cut short.
    bool reached_limit = false;
    double queued_ms = 0;  ///< submit → the engine starts the job
    double ttft_ms = 0;    ///< start → first generated token
    double total_ms = 0;   ///< start → end
};

/// Called on the engine's thread; they must not block for long and must not call back into
/// the engine's submit/cancel while holding locks the engine thread could need.
struct JobCallbacks {
    /// Translated text as it is generated (complete UTF-8 pieces). Optional.
    std::function<void(std::string_view piece)> on_text;
    /// Exactly once per submitted job, also when it is cancelled or fails.
    std::function<void(const JobOutcome& outcome)> on_done;
};

/// Figures of an engine whose requests go to remote servers.
struct RemoteStatistics {
    int servers = 0;            ///< configured
    int servers_available = 0;  ///< answering: no failure since their last success
    /// Request sent → first generated text, over the most recent requests.
    std::optional<double> latency_p50_ms, latency_p95_ms;
    /// Generated tokens received per second from all servers together, over the last seconds.
    std::optional<double> tokens_per_s;
    uint64_t retried = 0;  ///< requests sent again to another server after a failure
    uint64_t failed = 0;   ///< jobs that ended Failed
};

/// A snapshot for the live panel and `/health`. Optional figures are absent where the engine
/// has no such thing (no VRAM on the CPU engine).
struct EngineStatistics {
    std::string device;  ///< "CPU", a GPU's name, or the servers
    std::string tier;    ///< "fp32 (CPU)", "int8 (CPU)", "bf16", "int8", "int4", ...
    std::optional<int64_t> vram_used_bytes, vram_total_bytes, vram_own_bytes;
    int queue_depth = 0;  ///< jobs submitted and not started
    /// Sequences decoding now: the batch size (each piece of a job cut into pieces counts).
    int running = 0;
    uint64_t finished = 0;
    uint64_t preempted = 0;  ///< sequences whose KV cache was taken back to make room
    /// Time to first token (ms) and per-request decode tokens/s, p50 and p95 over the most
    /// recent finished requests (LatencyWindow); absent until one finished.
    std::optional<double> ttft_p50_ms, ttft_p95_ms, tokens_per_s_p50, tokens_per_s_p95;
    /// Remote engines only: `running` counts the requests in flight on the servers.
    std::optional<RemoteStatistics> remote;
};

class TranslationEngine {
  public:
    virtual ~TranslationEngine() = default;

    /// Queues a job and returns its id (> 0, unique for this engine). Thread-safe. A job that
    /// cannot be translated (no target language, a segment too long for the model) ends with
    /// Status::Failed through on_done, not with an exception.
    virtual uint64_t submit(TranslationJob job, JobCallbacks callbacks) = 0;

    /// Cancels a queued or running job: a queued one ends at once, a running one at its next
    /// decode step; on_done is called with Status::Cancelled. Unknown or finished ids are
    /// ignored. Thread-safe.
    virtual void cancel(uint64_t id) = 0;

    /// Jobs worth keeping submitted at once so that the engine's batching is fed (1 for the
    /// CPU engine, the decode batch limit for the GPU engine, concurrency × servers remotely).
    virtual int max_in_flight() const = 0;

    /// Thread-safe snapshot.
    virtual EngineStatistics statistics() const = 0;

    /// The translator's tokenizer-level facts callers may need (prompt style, budget), or null
    /// for engines without a local model.
    virtual const Translator* translator() const noexcept = 0;
};

/// The CPU engine: one worker thread that runs `translator`'s jobs one at a time, oldest
/// first. Destroying it cancels what is queued or running and joins the thread.
std::unique_ptr<TranslationEngine> make_cpu_engine(std::unique_ptr<Translator> translator);

}  // namespace mtdesk
