#pragma once
// What each route of `mtdesk serve` does, apart from HTTP itself (http_server.h): requests are
// checked against the limits, turned into engine jobs, and their answers built, whole or
// streamed. Every request becomes jobs of the one TranslationEngine, so concurrent clients are
// batched together by its scheduler.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "mtdesk/translate/translation_engine.h"
#include "mtdesk/translate/translator.h"

namespace mtdesk::serve {

/// What the server accepts.
struct Limits {
    /// Most tokens a prompt may have (0: the model's context less one, the least room an answer
    /// needs).
    int max_prompt_tokens = 0;
    /// Most tokens one answer has: a request asking for more (max_tokens) gets this many at
    /// most, also when it gives none; for /v1/translate it applies to each line.
    int max_tokens = 1024;
};

/// Writes bytes to the client; false once the client is gone.
using Writer = std::function<bool(std::string_view bytes)>;

/// What a request's handler can tell about its client while it waits for the engine.
struct ClientWatch {
    /// True once the client is known to be gone (the connection reset or broken).
    std::function<bool()> gone;
    /// True once the client has finished sending: it closed the connection, or only its sending
    /// side and still reads the answer; a write tells which (then gone() answers). May be empty.
    std::function<bool()> stopped_sending;
};

/// An answer: a whole body, or a stream written by `stream` (then `body` is unused).
struct Reply {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
    /// Writes the whole event stream; returns false when the client went away meanwhile.
    std::function<bool(const Writer& write)> stream;
    /// Called once when the answer is finished with, streamed or not, also when `stream` was
    /// never called (the client left first): cancels a job that is still going.
    std::function<void()> release;
};

/// The routes' logic over one engine.
class Endpoints {
  public:
    /// `engine` must have a local model (translator() not null) and outlive this object.
    /// `model_name` is the id clients use ("model" in requests and /v1/models).
    Endpoints(TranslationEngine& engine, std::string model_name, Limits limits);

    /// GET /health.
    Reply health() const;
    /// GET /v1/models.
    Reply models() const;
    /// GET /v1/models/{id}: the model, or 404 for another id.
    Reply model(std::string_view id) const;
    /// POST /v1/chat/completions. `client` tells whether the client has left (checked while
    /// waiting; its job is then cancelled): a streamed answer writes an SSE comment once the
    /// client has stopped sending, to tell a half-closed client (which reads on) from one that
    /// has gone. Throws ApiError for a request it refuses.
    Reply chat(std::string_view body, const ClientWatch& client);
    /// POST /v1/translate: every non-blank line of the text one job, all submitted at once, the
    /// answer put together as `mtdesk translate` does (blank lines and each line's surrounding
    /// spaces kept). Throws ApiError for a request it refuses.
    Reply translate(std::string_view body, const ClientWatch& client);

    /// From any thread: requests being answered cancel their jobs and end (503, or an error
    /// event in a stream); new ones are refused with 503.
    void stop();

  private:
    class InFlight;

    void check_model(const std::string& requested) const;
    int max_tokens(const std::optional<int>& requested) const;

    TranslationEngine& engine_;
    const Translator& translator_;
    std::string model_name_;
    Limits limits_;
    int64_t created_;  // Unix time the server started: the model's "created"
    std::chrono::steady_clock::time_point started_;
    std::atomic<bool> stopping_{false};
    std::atomic<int> in_flight_{0};
    std::atomic<uint64_t> disconnects_{0};
    // Jobs the engine ended as cancelled; shared with the jobs' callbacks, which may run after
    // this object is gone (an engine cancels what is left when it is destroyed).
    std::shared_ptr<std::atomic<uint64_t>> cancelled_jobs_ =
        std::make_shared<std::atomic<uint64_t>>(0);
    std::function<void(const JobOutcome&)> count_outcome() const;
};

}  // namespace mtdesk::serve
