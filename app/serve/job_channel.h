#pragma once
// One engine job on behalf of one HTTP request: the engine's callbacks (on its own thread) put
// the streamed text and the outcome here, and the request's thread takes them out, waiting
// with a timeout so that it can look at its client between pieces.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "mtdesk/translate/translation_engine.h"

namespace mtdesk::serve {

/// A submitted job's text and outcome, handed from the engine's thread to a waiting one.
class JobChannel {
  public:
    /// What arrived since the last take().
    struct Update {
        std::string text;                   ///< raw generated text, in order (may be empty)
        std::optional<JobOutcome> outcome;  ///< set once, with the last text
    };

    /// Submits `job` to `engine`; the channel lives as long as the engine may call back.
    /// `on_outcome` (optional) also sees the outcome, on the engine's thread, even when nobody
    /// waits for it any more.
    static std::shared_ptr<JobChannel> submit(
        TranslationEngine& engine, TranslationJob job,
        std::function<void(const JobOutcome&)> on_outcome = {});

    /// Waits up to `timeout` for text or the outcome, then returns what arrived (possibly
    /// nothing). After the outcome was returned once, returns nothing at once.
    Update take(std::chrono::milliseconds timeout);
    /// Waits up to `timeout` for the outcome, dropping text; the outcome, or nothing.
    std::optional<JobOutcome> wait_done(std::chrono::milliseconds timeout);

    /// Asks the engine to cancel the job (its outcome still arrives, Cancelled). Idempotent.
    void cancel();
    /// True once the outcome has arrived (taken or not).
    bool done() const;

  private:
    JobChannel(TranslationEngine& engine) : engine_(engine) {}

    TranslationEngine& engine_;
    uint64_t id_ = 0;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::string text_;
    std::optional<JobOutcome> outcome_;
    bool outcome_taken_ = false;
    bool cancelled_ = false;
};

}  // namespace mtdesk::serve
