#pragma once
// The JSON of `mtdesk serve`: requests parsed and checked, answers and streamed chunks built.
// Pure functions over text (no sockets, no engine), so every field and every error is
// unit-tested. The shapes are OpenAI's chat completion API as its Python client and vLLM use
// them; /v1/translate and /health are mtdesk's own.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "mtdesk/runtime/sampling.h"
#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translation_engine.h"

namespace mtdesk::serve {

/// A request the server refuses: the HTTP status and the fields of OpenAI's error object
/// {"error": {"message", "type", "param", "code"}}. what() is the message.
class ApiError : public std::runtime_error {
  public:
    /// `param` and `code` may be empty (JSON null).
    ApiError(int status, std::string message, std::string type = "invalid_request_error",
             std::string param = {}, std::string code = {});

    int status() const noexcept { return status_; }
    const std::string& type() const noexcept { return type_; }
    const std::string& param() const noexcept { return param_; }
    const std::string& code() const noexcept { return code_; }

  private:
    int status_;
    std::string type_, param_, code_;
};

/// The body of an error answer: {"error": {"message", "type", "param", "code"}}.
std::string error_body(const ApiError& error);

/// A parsed POST /v1/chat/completions.
struct ChatRequest {
    std::string model;  ///< "" when the request names none
    /// One user message, after at most one system message (several "system" / "developer"
    /// messages are joined with a blank line): the models are single-turn translators and the
    /// chat templates mtdesk implements render exactly that.
    ChatMessages messages;
    bool stream = false;
    bool include_usage = false;     ///< stream_options.include_usage: a last chunk with usage
    std::optional<int> max_tokens;  ///< max_tokens or max_completion_tokens
    SamplingParams sampling;
};

/// Parses and checks a chat completion request. Sampling fields left out take the values of
/// `defaults` (the model's recommended sampling), except repetition_penalty, which is 1 (off)
/// unless given (the OpenAI API has no such parameter, so its clients expect none), and seed,
/// which stays absent (a random seed per request, as OpenAI and vLLM do); temperature 0 means
/// greedy decoding. Message content is a string or a list of {"type": "text", "text"}
/// parts. Throws ApiError (400) naming the offending field for malformed JSON, a missing or
/// empty message list, an assistant or tool turn, a last message that is not the user's,
/// non-text content, out-of-range sampling values, n other than 1, stop sequences, logprobs,
/// tools, a response_format other than {"type": "text"}, and non-zero frequency or presence
/// penalties (none of which the engine has).
ChatRequest parse_chat_request(std::string_view body, const SamplingParams& defaults);

/// A parsed POST /v1/translate.
struct TranslateRequest {
    std::string model;                    ///< "" when the request names none
    std::string text;                     ///< may hold many lines
    const Language* source = nullptr;     ///< nullptr: not given ("auto" / "" / absent)
    const Language* target = nullptr;     ///< always set
    std::vector<GlossaryEntry> glossary;  ///< [{"source", "target"}, ...]
    std::optional<int> max_tokens;        ///< per line
    SamplingParams sampling;
    bool casing_guard = true;
};

/// Parses and checks a translate request: "text" (string) and "target" (a code or name as
/// `mtdesk languages` lists them) are required; "source" (default: decided from the text),
/// "glossary", "max_tokens", "casing_guard" and the sampling fields of the chat request are
/// optional, plus "greedy": true for greedy decoding without a repetition penalty (as
/// `mtdesk translate --greedy`). Left-out sampling fields take `defaults` whole, as `mtdesk
/// translate` does, except seed (absent: random). Throws ApiError (400) naming the field, also
/// for "stream": true (the answer is one JSON object).
TranslateRequest parse_translate_request(std::string_view body, const SamplingParams& defaults);

/// Token counts of an answer.
struct Usage {
    int prompt_tokens = 0;
    int completion_tokens = 0;
};

/// What every answer and chunk of one completion repeats.
struct CompletionHeader {
    std::string id;  ///< "chatcmpl-..."
    int64_t created = 0;
    std::string model;
};

/// A fresh completion id: "chatcmpl-" and 24 random hex digits.
std::string new_completion_id();

/// A whole (non-streamed) answer: "object": "chat.completion", one choice with the assistant's
/// message and finish_reason ("stop" or "length"), and usage.
std::string chat_completion_body(const CompletionHeader& header, std::string_view content,
                                 std::string_view finish_reason, const Usage& usage);

/// One streamed chunk ("object": "chat.completion.chunk") with one choice: a delta with the
/// role (the first chunk), with content, or empty with the finish reason (the last one). With
/// `include_usage` the chunk carries "usage": null, as OpenAI's do when usage was asked for.
std::string chat_chunk_body(const CompletionHeader& header, std::optional<std::string_view> role,
                            std::optional<std::string_view> content,
                            std::optional<std::string_view> finish_reason, bool include_usage);

/// The chunk after the last choice when usage was asked for: "choices": [] and the usage.
std::string usage_chunk_body(const CompletionHeader& header, const Usage& usage);

/// One server-sent event carrying `data`: "data: <data>\n\n".
std::string sse_event(std::string_view data);

/// The event that ends a stream: "data: [DONE]\n\n".
std::string sse_done();

/// GET /v1/models: {"object": "list", "data": [model_body(...)]}.
std::string models_body(std::string_view model, int64_t created, int max_model_len);
/// GET /v1/models/{model}: {"id", "object": "model", "created", "owned_by": "mtdesk",
/// "max_model_len"} (max_model_len as vLLM reports it: the model's context in tokens).
std::string model_body(std::string_view model, int64_t created, int max_model_len);

/// The answer of POST /v1/translate.
struct TranslateAnswer {
    std::string model;
    std::string translation;
    const Language* source = nullptr;           ///< as given (null: not given)
    const Language* detected_source = nullptr;  ///< when not given and detection found one
    const Language* target = nullptr;
    int segments = 0;  ///< non-blank lines translated
    Usage usage;
    double queued_ms = 0;                      ///< longest wait of a line for the engine
    double total_ms = 0;                       ///< request received -> answer ready
    std::vector<GlossaryEntry> missing_terms;  ///< glossary terms the translation lacks
    /// Lines (1-based, blank ones counted) whose answer reached the token limit (`max_tokens`
    /// or Translator::output_bound) rather than ending at a stop token: probably cut short.
    std::vector<int> truncated_lines;
};

/// {"object": "translation", "model", "translation", "source", "detected_source", "target",
/// "segments", "usage": {...}, "timings": {"queued_ms", "total_ms"}, "missing_terms":
/// [{"source", "target"}], "truncated_lines": [N, ...]}; languages as their codes, null when
/// absent.
std::string translate_body(const TranslateAnswer& answer);

/// What GET /health reports.
struct HealthInfo {
    std::string model;
    EngineStatistics engine;
    int requests_in_flight = 0;   ///< HTTP requests being answered now
    uint64_t disconnects = 0;     ///< jobs cancelled because their client went away
    uint64_t cancelled_jobs = 0;  ///< jobs the engine ended as cancelled (disconnects, stop)
    double uptime_s = 0;
};

/// {"status": "ok", "model", "device", "tier", "gpu_memory": {"used_bytes", "total_bytes",
/// "own_bytes"} or null, "queue_depth", "running", "finished", "preempted",
/// "requests_in_flight", "disconnects", "cancelled_jobs", "uptime_s"}.
std::string health_body(const HealthInfo& info);

}  // namespace mtdesk::serve
