#include "remote/openai_api.h"

#include <nlohmann/json.hpp>

#include "mtdesk/error.h"

namespace mtdesk::remote {
namespace {

using nlohmann::json;

json parse(std::string_view text, const char* what) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded())
        throw Error(std::string("the server's ") + what +
                    " is not JSON: " + std::string(text.substr(0, 200)));
    if (!j.is_object())
        throw Error(std::string("the server's ") + what +
                    " is not a JSON object: " + std::string(text.substr(0, 200)));
    return j;
}

// The message of an error object in any of the shapes servers use; "" when there is none.
std::string error_message(const json& j) {
    if (j.contains("error")) {
        const json& e = j["error"];
        if (e.is_string()) return e.get<std::string>();
        if (e.is_object() && e.contains("message") && e["message"].is_string())
            return e["message"].get<std::string>();
        return e.dump();
    }
    if (j.value("object", "") == "error" && j.contains("message") && j["message"].is_string())
        return j["message"].get<std::string>();  // vLLM's ErrorResponse
    if (j.contains("detail")) {                  // FastAPI
        const json& d = j["detail"];
        return d.is_string() ? d.get<std::string>() : d.dump();
    }
    return {};
}

void read_usage(const json& j, ChatChunk& c) {
    if (!j.contains("usage") || !j["usage"].is_object()) return;
    const json& u = j["usage"];
    if (u.contains("prompt_tokens") && u["prompt_tokens"].is_number_integer())
        c.prompt_tokens = u["prompt_tokens"].get<int>();
    if (u.contains("completion_tokens") && u["completion_tokens"].is_number_integer())
        c.completion_tokens = u["completion_tokens"].get<int>();
}

void read_finish(const json& choice, ChatChunk& c) {
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string())
        c.finish_reason = choice["finish_reason"].get<std::string>();
}

std::string printable(std::string_view s) {
    std::string out(s.substr(0, 300));
    for (char& ch : out)
        if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    if (s.size() > 300) out += "…";
    return out;
}

}  // namespace

ChatChunk parse_chat_chunk(std::string_view data) {
    ChatChunk c;
    if (data == "[DONE]") {
        c.done = true;
        return c;
    }
    const json j = parse(data, "stream event");
    c.error = error_message(j);
    if (!c.error.empty()) return c;
    read_usage(j, c);
    if (!j.contains("choices") || !j["choices"].is_array())
        throw Error("the server's stream event has no choices: " + printable(data));
    if (j["choices"].empty()) return c;  // the usage-only last chunk
    const json& choice = j["choices"][0];
    if (!choice.is_object()) throw Error("the server's stream event has a malformed choice");
    if (choice.contains("delta") && choice["delta"].is_object()) {
        const json& delta = choice["delta"];
        if (delta.contains("content") && delta["content"].is_string())
            c.content = delta["content"].get<std::string>();
    } else if (choice.contains("text") && choice["text"].is_string()) {
        c.content = choice["text"].get<std::string>();  // completion-style chunks
    }
    read_finish(choice, c);
    return c;
}

ChatChunk parse_chat_completion(std::string_view body) {
    ChatChunk c;
    const json j = parse(body, "answer");
    c.error = error_message(j);
    if (!c.error.empty()) return c;
    read_usage(j, c);
    if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty() ||
        !j["choices"][0].is_object())
        throw Error("the server's answer has no choices: " + printable(body));
    const json& choice = j["choices"][0];
    if (choice.contains("message") && choice["message"].is_object() &&
        choice["message"].contains("content") && choice["message"]["content"].is_string())
        c.content = choice["message"]["content"].get<std::string>();
    read_finish(choice, c);
    return c;
}

std::vector<std::string> parse_model_list(std::string_view body) {
    const json j = parse(body, "model list");
    if (!j.contains("data") || !j["data"].is_array())
        throw Error("the server's model list has no \"data\" array: " + printable(body));
    std::vector<std::string> ids;
    for (const json& m : j["data"])
        if (m.is_object() && m.contains("id") && m["id"].is_string())
            ids.push_back(m["id"].get<std::string>());
    return ids;
}

std::string_view http_reason(int status) {
    switch (status) {
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 403:
            return "Forbidden";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 408:
            return "Request Timeout";
        case 413:
            return "Payload Too Large";
        case 415:
            return "Unsupported Media Type";
        case 422:
            return "Unprocessable Entity";
        case 429:
            return "Too Many Requests";
        case 500:
            return "Internal Server Error";
        case 501:
            return "Not Implemented";
        case 502:
            return "Bad Gateway";
        case 503:
            return "Service Unavailable";
        case 504:
            return "Gateway Timeout";
        default:
            return {};
    }
}

std::string describe_http_error(int status, std::string_view body) {
    std::string out = "HTTP " + std::to_string(status);
    if (const std::string_view reason = http_reason(status); !reason.empty())
        out.append(" ").append(reason);
    std::string message;
    const json j = json::parse(body, nullptr, false);
    if (!j.is_discarded() && j.is_object()) message = error_message(j);
    if (message.empty()) message = printable(body);
    if (!message.empty()) out += ": " + printable(message);
    return out;
}

}  // namespace mtdesk::remote
