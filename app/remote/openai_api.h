#pragma once
// The JSON of OpenAI-compatible servers' answers (vLLM, SGLang, TensorRT-LLM, mtdesk serve):
// streamed chat completion chunks, a whole chat completion (servers that ignore "stream"),
// the model list, and the error bodies of their 4xx / 5xx answers. Pure functions over text.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mtdesk::remote {

/// What one "data:" event of a streamed chat completion says.
struct ChatChunk {
    bool done = false;                         ///< the "[DONE]" sentinel
    std::string content;                       ///< choices[0].delta.content ("" when none)
    std::optional<std::string> finish_reason;  ///< "stop", "length", ...
    std::optional<int> prompt_tokens;          ///< usage.prompt_tokens
    std::optional<int> completion_tokens;      ///< usage.completion_tokens
    std::string error;  ///< an error object sent in the stream (the server gave up), its message
};

/// Parses the data of one event. Throws mtdesk::Error naming the problem for data that is not
/// JSON or not a chat completion chunk.
ChatChunk parse_chat_chunk(std::string_view data);

/// A non-streamed answer ("object": "chat.completion"): its text in `content`, finish reason and
/// usage as in a chunk. Throws mtdesk::Error for other bodies.
ChatChunk parse_chat_completion(std::string_view body);

/// The ids of GET /v1/models ({"data": [{"id": ...}, ...]}), in the server's order. Throws
/// mtdesk::Error for other bodies.
std::vector<std::string> parse_model_list(std::string_view body);

/// "HTTP 401 Unauthorized: <message>" for a failed answer: the message from the body's OpenAI
/// ({"error": {"message"}}), vLLM ({"message"}) or FastAPI ({"detail"}) error shape, else the
/// body's first 300 bytes (control characters as spaces); without a body just the status.
std::string describe_http_error(int status, std::string_view body);

/// The standard reason phrase of an HTTP status ("Not Found"), "" for unknown codes.
std::string_view http_reason(int status);

}  // namespace mtdesk::remote
