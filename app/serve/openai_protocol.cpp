#include "serve/openai_protocol.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "mtdesk/translate/languages.h"

namespace mtdesk::serve {
namespace {

using json = nlohmann::json;
using ordered = nlohmann::ordered_json;

// Model output and echoed input are valid UTF-8 by construction; should a byte slip through,
// an answer with U+FFFD beats an exception in the middle of a stream.
std::string dump(const ordered& j) {
    return j.dump(-1, ' ', false, ordered::error_handler_t::replace);
}

ApiError bad(std::string message, std::string param = {}) {
    return ApiError(400, std::move(message), "invalid_request_error", std::move(param));
}

json parse_object(std::string_view body) {
    json j;
    try {
        j = json::parse(body);
    } catch (const json::parse_error& e) {
        // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." without the
        // library's tag, which means nothing to a client.
        std::string what = e.what();
        if (const auto at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
        throw bad("the request body is not valid JSON: " + what);
    }
    if (!j.is_object()) throw bad("the request body must be a JSON object");
    return j;
}

// A field that is present and not null.
const json* field(const json& j, const char* name) {
    const auto it = j.find(name);
    return it == j.end() || it->is_null() ? nullptr : &*it;
}

std::optional<std::string> string_field(const json& j, const char* name) {
    const json* f = field(j, name);
    if (!f) return std::nullopt;
    if (!f->is_string()) throw bad(std::string("'") + name + "' must be a string", name);
    return f->get<std::string>();
}

std::optional<bool> bool_field(const json& j, const char* name) {
    const json* f = field(j, name);
    if (!f) return std::nullopt;
    if (!f->is_boolean()) throw bad(std::string("'") + name + "' must be true or false", name);
    return f->get<bool>();
}

std::optional<double> number_field(const json& j, const char* name) {
    const json* f = field(j, name);
    if (!f) return std::nullopt;
    if (!f->is_number()) throw bad(std::string("'") + name + "' must be a number", name);
    return f->get<double>();
}

std::optional<int64_t> integer_field(const json& j, const char* name) {
    const json* f = field(j, name);
    if (!f) return std::nullopt;
    if (f->is_number_unsigned()) {
        const uint64_t v = f->get<uint64_t>();
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            throw bad(std::string("'") + name + "' is too large", name);
        return static_cast<int64_t>(v);
    }
    if (!f->is_number_integer()) throw bad(std::string("'") + name + "' must be an integer", name);
    return f->get<int64_t>();
}

// max_tokens / max_completion_tokens: a positive int (a huge value is for the caller's limit
// check, which names the limit; clamped so it still fits an int).
std::optional<int> max_tokens_field(const json& j) {
    const char* name = field(j, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
    const auto v = integer_field(j, name);
    if (!v) return std::nullopt;
    if (*v < 1) throw bad(std::string("'") + name + "' must be at least 1", name);
    return static_cast<int>(std::min<int64_t>(*v, std::numeric_limits<int>::max()));
}

// The sampling fields shared by both endpoints, over `s`.
void read_sampling(const json& j, SamplingParams& s) {
    if (const auto t = number_field(j, "temperature")) {
        if (!(*t >= 0 && *t <= 2))
            throw bad("'temperature' must be between 0 and 2", "temperature");
        s.greedy = *t == 0;  // 0: no randomness at all
        if (*t > 0) s.temperature = static_cast<float>(*t);
    }
    if (const auto p = number_field(j, "top_p")) {
        if (!(*p > 0 && *p <= 1)) throw bad("'top_p' must be in (0, 1]", "top_p");
        s.top_p = static_cast<float>(*p);
    }
    if (const auto k = integer_field(j, "top_k")) {
        if (*k < -1) throw bad("'top_k' must be -1 or 0 (off) or a positive count", "top_k");
        s.top_k = *k <= 0 ? 0 : static_cast<int>(std::min<int64_t>(*k, 1 << 30));
    }
    if (const auto r = number_field(j, "repetition_penalty")) {
        if (!(*r > 0 && *r <= 10))
            throw bad("'repetition_penalty' must be in (0, 10] (1 = off)", "repetition_penalty");
        s.repetition_penalty = static_cast<float>(*r);
    }
    if (const json* seed = field(j, "seed")) {
        // Any 64-bit integer: a client may send an unsigned seed as large as SamplingParams holds.
        if (seed->is_number_unsigned())
            s.seed = seed->get<uint64_t>();
        else if (seed->is_number_integer())
            s.seed = static_cast<uint64_t>(seed->get<int64_t>());
        else
            throw bad("'seed' must be an integer", "seed");
    }
}

// Fields of OpenAI's API that the engine has no equivalent of: accepted only when they ask for
// nothing, so a client never silently gets something other than what it asked for.
void refuse_unsupported(const json& j) {
    if (const auto n = integer_field(j, "n"); n && *n != 1)
        throw bad("'n' must be 1: this server generates one choice per request", "n");
    if (const json* stop = field(j, "stop")) {
        const bool empty = (stop->is_string() && stop->get<std::string>().empty()) ||
                           (stop->is_array() && stop->empty());
        if (!empty) throw bad("stop sequences are not supported by this server", "stop");
    }
    if (const auto lp = bool_field(j, "logprobs"); lp && *lp)
        throw bad("logprobs are not supported by this server", "logprobs");
    for (const char* name : {"tools", "functions"})
        if (const json* f = field(j, name); f && !(f->is_array() && f->empty()))
            throw bad("tool calls are not supported by this server", name);
    if (const json* format = field(j, "response_format")) {
        // {"type": "text"} is what every answer is; JSON modes would need constrained decoding.
        const json* type = format->is_object() ? field(*format, "type") : nullptr;
        if (!type || !type->is_string())
            throw bad("'response_format' must be an object with a \"type\"", "response_format");
        if (type->get<std::string>() != "text")
            throw bad("response_format '" + type->get<std::string>() +
                          "' is not supported by this server (only \"text\")",
                      "response_format");
    }
    for (const char* name : {"frequency_penalty", "presence_penalty"})
        if (const auto v = number_field(j, name); v && *v != 0)
            throw bad(std::string("'") + name +
                          "' is not supported by this server (use repetition_penalty)",
                      name);
}

// A message's text: a string, or a list of text parts joined.
std::string message_text(const json& content, std::size_t index) {
    const std::string param = "messages[" + std::to_string(index) + "].content";
    if (content.is_string()) return content.get<std::string>();
    if (!content.is_array())
        throw bad("message content must be a string or a list of parts", param);
    std::string text;
    for (const json& part : content) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
            !part["text"].is_string())
            throw bad("only text content parts ({\"type\": \"text\", \"text\": ...}) are supported",
                      param);
        text += part["text"].get<std::string>();
    }
    return text;
}

ChatMessages read_messages(const json& j) {
    const json* messages = field(j, "messages");
    if (!messages) throw bad("'messages' is required", "messages");
    if (!messages->is_array() || messages->empty())
        throw bad("'messages' must be a non-empty list of messages", "messages");
    ChatMessages out;
    bool have_user = false;
    for (std::size_t i = 0; i < messages->size(); ++i) {
        const json& m = (*messages)[i];
        const std::string where = "messages[" + std::to_string(i) + "]";
        if (!m.is_object()) throw bad(where + " must be an object", where);
        const auto role = m.find("role");
        if (role == m.end() || !role->is_string())
            throw bad(where + ".role must be a string", where + ".role");
        const std::string r = role->get<std::string>();
        const auto content = m.find("content");
        if (content == m.end() || content->is_null())
            throw bad(where + ".content is required", where + ".content");
        if (r == "system" || r == "developer") {
            if (have_user)
                throw bad("a system message must come before the user message", where + ".role");
            const std::string text = message_text(*content, i);
            if (!out.system.empty() && !text.empty()) out.system += "\n\n";
            out.system += text;
        } else if (r == "user") {
            if (have_user)
                throw bad(
                    "this server answers one user message (with an optional system message "
                    "before it); multi-turn chats are not supported",
                    where);
            out.user = message_text(*content, i);
            have_user = true;
        } else if (r == "assistant" || r == "tool" || r == "function") {
            throw bad(
                "this server answers one user message (with an optional system message "
                "before it); '" +
                    r + "' turns are not supported",
                where + ".role");
        } else {
            throw bad("unknown role '" + r + "'", where + ".role");
        }
    }
    if (!have_user) throw bad("'messages' must end with a user message", "messages");
    return out;
}

const Language* language_field(const json& j, const char* name, bool allow_auto) {
    const auto value = string_field(j, name);
    if (!value || (allow_auto && (value->empty() || *value == "auto"))) return nullptr;
    const Language* l = find_language(*value);
    if (!l)
        throw bad("unknown language '" + *value + "' for '" + name +
                      "' (a code or an English name, e.g. \"de\" or \"German\")",
                  name);
    return l;
}

std::vector<GlossaryEntry> glossary_field(const json& j) {
    const json* g = field(j, "glossary");
    std::vector<GlossaryEntry> out;
    if (!g) return out;
    auto add = [&](const json& source, const json& target, const std::string& where) {
        if (!source.is_string() || !target.is_string() || source.get<std::string>().empty() ||
            target.get<std::string>().empty())
            throw bad(where + " needs a non-empty source and target term", "glossary");
        out.push_back({source.get<std::string>(), target.get<std::string>()});
    };
    if (g->is_object()) {  // {"source term": "target term", ...}
        for (const auto& [source, target] : g->items())
            add(json(source), target, "glossary entry '" + source + "'");
        return out;
    }
    if (!g->is_array())
        throw bad("'glossary' must be a list of {\"source\", \"target\"} or an object", "glossary");
    for (std::size_t i = 0; i < g->size(); ++i) {
        const json& e = (*g)[i];
        const std::string where = "glossary[" + std::to_string(i) + "]";
        if (!e.is_object() || !e.contains("source") || !e.contains("target"))
            throw bad(where + " must be {\"source\": ..., \"target\": ...}", "glossary");
        add(e["source"], e["target"], where);
    }
    return out;
}

ordered usage_json(const Usage& u) {
    ordered j;
    j["prompt_tokens"] = u.prompt_tokens;
    j["completion_tokens"] = u.completion_tokens;
    j["total_tokens"] = u.prompt_tokens + u.completion_tokens;
    return j;
}

ordered header_json(const CompletionHeader& h, const char* object) {
    ordered j;
    j["id"] = h.id;
    j["object"] = object;
    j["created"] = h.created;
    j["model"] = h.model;
    return j;
}

ordered model_json(std::string_view model, int64_t created, int max_model_len) {
    ordered j;
    j["id"] = model;
    j["object"] = "model";
    j["created"] = created;
    j["owned_by"] = "mtdesk";
    j["max_model_len"] = max_model_len;
    return j;
}

ordered language_json(const Language* l) {
    return l ? ordered(std::string(l->code)) : ordered(nullptr);
}

}  // namespace

ApiError::ApiError(int status, std::string message, std::string type, std::string param,
                   std::string code)
    : std::runtime_error(std::move(message)),
      status_(status),
      type_(std::move(type)),
      param_(std::move(param)),
      code_(std::move(code)) {}

std::string error_body(const ApiError& error) {
    ordered e;
    e["message"] = error.what();
    e["type"] = error.type();
    e["param"] = error.param().empty() ? ordered(nullptr) : ordered(error.param());
    e["code"] = error.code().empty() ? ordered(nullptr) : ordered(error.code());
    ordered j;
    j["error"] = e;
    return dump(j);
}

ChatRequest parse_chat_request(std::string_view body, const SamplingParams& defaults) {
    const json j = parse_object(body);
    ChatRequest r;
    r.model = string_field(j, "model").value_or("");
    r.messages = read_messages(j);
    r.stream = bool_field(j, "stream").value_or(false);
    if (const json* so = field(j, "stream_options")) {
        if (!so->is_object()) throw bad("'stream_options' must be an object", "stream_options");
        r.include_usage = bool_field(*so, "include_usage").value_or(false);
    }
    r.max_tokens = max_tokens_field(j);
    refuse_unsupported(j);
    r.sampling = defaults;
    r.sampling.repetition_penalty = 1.0f;
    r.sampling.seed.reset();  // the request's own, or a random one per request
    read_sampling(j, r.sampling);
    return r;
}

TranslateRequest parse_translate_request(std::string_view body, const SamplingParams& defaults) {
    const json j = parse_object(body);
    TranslateRequest r;
    r.model = string_field(j, "model").value_or("");
    const auto text = string_field(j, "text");
    if (!text) throw bad("'text' is required", "text");
    r.text = *text;
    if (!field(j, "target")) throw bad("'target' (the target language) is required", "target");
    r.target = language_field(j, "target", false);
    r.source = language_field(j, "source", true);
    if (r.source == r.target)
        throw bad("'source' and 'target' are the same language (" +
                      std::string(r.target->english_name) + ")",
                  "target");
    r.glossary = glossary_field(j);
    r.max_tokens = max_tokens_field(j);
    r.casing_guard = bool_field(j, "casing_guard").value_or(true);
    // The answer is one JSON object, whole: a client asking for a stream would wait for events
    // that never come.
    if (bool_field(j, "stream").value_or(false))
        throw bad(
            "/v1/translate answers whole; streaming is not supported here (stream "
            "translations through /v1/chat/completions)",
            "stream");
    r.sampling = defaults;
    if (bool_field(j, "greedy").value_or(false)) r.sampling = SamplingParams::greedy_decoding();
    r.sampling.seed.reset();  // the request's own, or a random one per line
    read_sampling(j, r.sampling);
    return r;
}

std::string new_completion_id() {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    char hex[25];
    std::snprintf(hex, sizeof hex, "%016llx%08llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng() & 0xffffffffull));
    return std::string("chatcmpl-") + hex;
}

std::string chat_completion_body(const CompletionHeader& header, std::string_view content,
                                 std::string_view finish_reason, const Usage& usage) {
    ordered message;
    message["role"] = "assistant";
    message["content"] = content;
    ordered choice;
    choice["index"] = 0;
    choice["message"] = message;
    choice["logprobs"] = nullptr;
    choice["finish_reason"] = finish_reason;
    ordered j = header_json(header, "chat.completion");
    j["choices"] = ordered::array({choice});
    j["usage"] = usage_json(usage);
    return dump(j);
}

std::string chat_chunk_body(const CompletionHeader& header, std::optional<std::string_view> role,
                            std::optional<std::string_view> content,
                            std::optional<std::string_view> finish_reason, bool include_usage) {
    ordered delta = ordered::object();
    if (role) delta["role"] = *role;
    if (content) delta["content"] = *content;
    ordered choice;
    choice["index"] = 0;
    choice["delta"] = delta;
    choice["logprobs"] = nullptr;
    choice["finish_reason"] = finish_reason ? ordered(*finish_reason) : ordered(nullptr);
    ordered j = header_json(header, "chat.completion.chunk");
    j["choices"] = ordered::array({choice});
    if (include_usage) j["usage"] = nullptr;
    return dump(j);
}

std::string usage_chunk_body(const CompletionHeader& header, const Usage& usage) {
    ordered j = header_json(header, "chat.completion.chunk");
    j["choices"] = ordered::array();
    j["usage"] = usage_json(usage);
    return dump(j);
}

std::string sse_event(std::string_view data) {
    std::string out;
    out.reserve(data.size() + 8);
    out.append("data: ").append(data).append("\n\n");
    return out;
}

std::string sse_done() {
    return "data: [DONE]\n\n";
}

std::string models_body(std::string_view model, int64_t created, int max_model_len) {
    ordered j;
    j["object"] = "list";
    j["data"] = ordered::array({model_json(model, created, max_model_len)});
    return dump(j);
}

std::string model_body(std::string_view model, int64_t created, int max_model_len) {
    return dump(model_json(model, created, max_model_len));
}

std::string translate_body(const TranslateAnswer& a) {
    ordered j;
    j["object"] = "translation";
    j["model"] = a.model;
    j["translation"] = a.translation;
    j["source"] = language_json(a.source);
    j["detected_source"] = language_json(a.detected_source);
    j["target"] = language_json(a.target);
    j["segments"] = a.segments;
    j["usage"] = usage_json(a.usage);
    ordered timings;
    timings["queued_ms"] = std::round(a.queued_ms * 10) / 10;
    timings["total_ms"] = std::round(a.total_ms * 10) / 10;
    j["timings"] = timings;
    j["missing_terms"] = ordered::array();
    for (const GlossaryEntry& e : a.missing_terms)
        j["missing_terms"].push_back({{"source", e.source}, {"target", e.target}});
    j["truncated_lines"] = a.truncated_lines;
    return dump(j);
}

std::string health_body(const HealthInfo& h) {
    ordered j;
    j["status"] = "ok";
    j["model"] = h.model;
    j["device"] = h.engine.device;
    j["tier"] = h.engine.tier;
    if (h.engine.vram_total_bytes) {
        ordered m;
        m["used_bytes"] = h.engine.vram_used_bytes.value_or(0);
        m["total_bytes"] = *h.engine.vram_total_bytes;
        m["own_bytes"] =
            h.engine.vram_own_bytes ? ordered(*h.engine.vram_own_bytes) : ordered(nullptr);
        j["gpu_memory"] = m;
    } else {
        j["gpu_memory"] = nullptr;
    }
    j["queue_depth"] = h.engine.queue_depth;
    j["running"] = h.engine.running;
    j["finished"] = h.engine.finished;
    j["preempted"] = h.engine.preempted;
    j["requests_in_flight"] = h.requests_in_flight;
    j["disconnects"] = h.disconnects;
    j["cancelled_jobs"] = h.cancelled_jobs;
    j["uptime_s"] = std::round(h.uptime_s * 10) / 10;
    return dump(j);
}

}  // namespace mtdesk::serve
