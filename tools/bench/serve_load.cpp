// serve_load: a bounded load test of an OpenAI-compatible chat server (`mtdesk serve`), from a
// process of its own. N clients (threads, each with its own keep-alive connection) send M chat
// completions each, streamed and whole in turn, all at once; every answer is checked (status,
// well-formed chunks, [DONE], usage) and compared with the expected text: given per prompt, or
// else the server's own answer to the prompt asked alone first (greedy decoding, so any
// difference means requests leaked into each other). Prints the figures as JSON on stdout.
//
// Built with the tests (target serve_load); tests/test_serve_load.cpp runs it with small
// counts. By hand, against a running server:
//   serve_load --port 8080 [--api-key KEY] [--clients 16] [--requests 8] [--prompts FILE]
//              [--max-tokens 128] [--timeout-s 300]
// FILE is a JSON list of {"prompt": "<user message>", "expect": "<answer>"} ("expect"
// optional). Without it, a few English -> German prompts in mtdesk's wording are used.
// Exit code: 0 when every request was answered correctly in time, 1 otherwise, 2 usage error.

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Options {
    std::string host = "127.0.0.1";
    int port = 8080;
    std::string api_key;
    std::string model;
    int clients = 8;
    int requests = 4;  // per client
    int max_tokens = 128;
    int timeout_s = 300;
    std::string prompts_file;
};

struct Prompt {
    std::string text;
    std::optional<std::string> expect;
};

// One request's result.
struct Outcome {
    bool ok = false;
    bool mismatch = false;
    std::string error;
    double latency_ms = 0;
    std::optional<double> ttft_ms;
    int completion_tokens = 0;
    bool streamed = false;
};

double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

httplib::Headers headers(const Options& o) {
    httplib::Headers h = {{"Accept", "application/json"}, {"User-Agent", "serve_load"}};
    if (!o.api_key.empty()) h.emplace("Authorization", "Bearer " + o.api_key);
    return h;
}

json body(const Options& o, const std::string& prompt, bool stream) {
    json b = {{"messages", json::array({{{"role", "user"}, {"content", prompt}}})},
              {"temperature", 0},
              {"max_tokens", o.max_tokens}};
    if (!o.model.empty()) b["model"] = o.model;
    if (stream) {
        b["stream"] = true;
        b["stream_options"] = {{"include_usage", true}};
    }
    return b;
}

// A whole answer: its text, or an error.
Outcome ask_whole(httplib::Client& c, const Options& o, const std::string& prompt,
                  std::string& content) {
    Outcome out;
    const auto t0 = Clock::now();
    const httplib::Result r = c.Post("/v1/chat/completions", headers(o),
                                     body(o, prompt, false).dump(), "application/json");
    out.latency_ms = ms_since(t0);
    if (!r) {
        out.error = "no answer: " + httplib::to_string(r.error());
        return out;
    }
    if (r->status != 200) {
        out.error = "HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 300);
        return out;
    }
    const json j = json::parse(r->body, nullptr, false);
    if (!j.is_object() || j.value("object", "") != "chat.completion" || !j.contains("choices") ||
        j["choices"].size() != 1 || !j["choices"][0]["message"]["content"].is_string() ||
        !j.contains("usage")) {
        out.error = "not a chat completion: " + r->body.substr(0, 300);
        return out;
    }
    content = j["choices"][0]["message"]["content"];
    out.completion_tokens = j["usage"].value("completion_tokens", 0);
    out.ok = true;
    return out;
}

// A streamed answer, parsed as server-sent events and checked chunk by chunk.
Outcome ask_streamed(httplib::Client& c, const Options& o, const std::string& prompt,
                     std::string& content) {
    Outcome out;
    out.streamed = true;
    std::string raw, problem;
    std::size_t parsed = 0;
    bool done = false, usage_seen = false;
    const auto t0 = Clock::now();
    auto consume = [&] {
        for (std::size_t end; (end = raw.find("\n\n", parsed)) != std::string::npos;
             parsed = end + 2) {
            const std::string event = raw.substr(parsed, end - parsed);
            if (event.rfind("data: ", 0) != 0) continue;  // a comment or another field
            const std::string data = event.substr(6);
            if (done) problem = "an event after [DONE]";
            if (data == "[DONE]") {
                done = true;
                continue;
            }
            const json j = json::parse(data, nullptr, false);
            if (!j.is_object() || j.value("object", "") != "chat.completion.chunk") {
                problem = "not a chunk: " + data.substr(0, 200);
                continue;
            }
            if (j.contains("usage") && j["usage"].is_object()) {
                usage_seen = true;
                out.completion_tokens = j["usage"].value("completion_tokens", 0);
            }
            if (!j["choices"].empty()) {
                const json& delta = j["choices"][0]["delta"];
                if (delta.contains("content") && delta["content"].is_string()) {
                    const std::string piece = delta["content"];
                    if (!piece.empty() && !out.ttft_ms) out.ttft_ms = ms_since(t0);
                    content += piece;
                }
            }
        }
    };
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.headers = headers(o);
    req.set_header("Content-Type", "application/json");
    req.body = body(o, prompt, true).dump();
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
        raw.append(data, n);
        consume();
        return true;
    };
    const httplib::Result r = c.send(req);
    out.latency_ms = ms_since(t0);
    if (!r) {
        out.error = "no answer: " + httplib::to_string(r.error());
    } else if (r->status != 200) {
        out.error = "HTTP " + std::to_string(r->status) + ": " + raw.substr(0, 300);
    } else if (!problem.empty()) {
        out.error = problem;
    } else if (!done || !usage_seen) {
        out.error = !done ? "the stream ended without [DONE]" : "no usage chunk";
    } else {
        out.ok = true;
    }
    return out;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(rank);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

double round1(double x) {
    return std::round(x * 10) / 10;
}

constexpr const char* kUsage =
    "usage: serve_load --port N [--host H] [--api-key KEY] [--model NAME] [--clients N] "
    "[--requests N] [--max-tokens N] [--timeout-s N] [--prompts FILE]\n";

int usage(const char* why) {
    std::fprintf(stderr, "serve_load: %s\n%s", why, kUsage);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (i + 1 >= argc) return usage(("missing value for " + a).c_str());
        const std::string v = argv[++i];
        auto number = [&](int& field, int min) {
            char* end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (*end != '\0' || n < min || n > 1000000) return false;
            field = static_cast<int>(n);
            return true;
        };
        bool ok = true;
        if (a == "--host")
            o.host = v;
        else if (a == "--port")
            ok = number(o.port, 1);
        else if (a == "--api-key")
            o.api_key = v;
        else if (a == "--model")
            o.model = v;
        else if (a == "--clients")
            ok = number(o.clients, 1);
        else if (a == "--requests")
            ok = number(o.requests, 1);
        else if (a == "--max-tokens")
            ok = number(o.max_tokens, 1);
        else if (a == "--timeout-s")
            ok = number(o.timeout_s, 1);
        else if (a == "--prompts")
            o.prompts_file = v;
        else
            return usage(("unknown option " + a).c_str());
        if (!ok) return usage(("bad value for " + a).c_str());
    }

    std::vector<Prompt> prompts;
    if (!o.prompts_file.empty()) {
        std::ifstream in(o.prompts_file);
        const json j = json::parse(in, nullptr, false);
        if (!j.is_array() || j.empty()) return usage("--prompts needs a non-empty JSON list");
        for (const json& p : j) {
            if (!p.is_object() || !p.contains("prompt") || !p["prompt"].is_string())
                return usage("each prompt needs a \"prompt\" string");
            Prompt pr{p["prompt"], std::nullopt};
            if (p.contains("expect") && p["expect"].is_string()) pr.expect = p["expect"];
            prompts.push_back(std::move(pr));
        }
    } else {
        for (const char* s :
             {"Open the file", "Group permissions", "Save changes before closing?",
              "Delete this account", "Show hidden files", "The printer is out of paper"})
            prompts.push_back({std::string("Translate the following segment into German, without "
                                           "additional explanation.\n\n") +
                                   s,
                               std::nullopt});
    }

    // References: each prompt alone, before the load.
    std::vector<std::string> reference(prompts.size());
    {
        httplib::Client c(o.host, o.port);
        c.set_read_timeout(o.timeout_s);
        for (std::size_t i = 0; i < prompts.size(); ++i) {
            if (prompts[i].expect) {
                reference[i] = *prompts[i].expect;
                continue;
            }
            const Outcome r = ask_whole(c, o, prompts[i].text, reference[i]);
            if (!r.ok) {
                std::fprintf(stderr, "serve_load: reference request failed: %s\n", r.error.c_str());
                return 1;
            }
        }
    }

    const auto deadline = Clock::now() + std::chrono::seconds(o.timeout_s);
    std::mutex mutex;
    std::vector<Outcome> outcomes;
    std::vector<std::string> error_samples;
    std::atomic<int> not_run{0};
    const auto start = Clock::now();
    std::vector<std::thread> clients;
    for (int k = 0; k < o.clients; ++k) {
        clients.emplace_back([&, k] {
            httplib::Client c(o.host, o.port);
            c.set_keep_alive(true);
            c.set_read_timeout(o.timeout_s);
            for (int r = 0; r < o.requests; ++r) {
                if (Clock::now() > deadline) {
                    not_run += o.requests - r;
                    return;
                }
                const std::size_t p = static_cast<std::size_t>(k * o.requests + r) % prompts.size();
                std::string content;
                Outcome out = (k + r) % 2 ? ask_streamed(c, o, prompts[p].text, content)
                                          : ask_whole(c, o, prompts[p].text, content);
                if (out.ok && content != reference[p]) {
                    out.mismatch = true;
                    out.error = "prompt " + std::to_string(p) + ": got \"" +
                                content.substr(0, 120) + "\", expected \"" +
                                reference[p].substr(0, 120) + "\"";
                }
                std::lock_guard lock(mutex);
                if (!out.error.empty() && error_samples.size() < 5)
                    error_samples.push_back(out.error);
                outcomes.push_back(std::move(out));
            }
        });
    }
    for (std::thread& t : clients)
        t.join();
    const double wall_s = std::chrono::duration<double>(Clock::now() - start).count();

    int completed = 0, errors = 0, mismatches = 0, streamed = 0;
    long tokens = 0;
    std::vector<double> latency, ttft;
    for (const Outcome& out : outcomes) {
        if (out.mismatch)
            ++mismatches;
        else if (!out.ok)
            ++errors;
        else
            ++completed;
        if (out.ok) {
            latency.push_back(out.latency_ms);
            tokens += out.completion_tokens;
        }
        if (out.ttft_ms) ttft.push_back(*out.ttft_ms);
        if (out.streamed) ++streamed;
    }
    const int total = o.clients * o.requests;
    json report = {
        {"clients", o.clients},
        {"requests_per_client", o.requests},
        {"requests", total},
        {"completed", completed},
        {"errors", errors + not_run.load()},
        {"mismatches", mismatches},
        {"not_run", not_run.load()},
        {"streamed", streamed},
        {"wall_s", std::round(wall_s * 100) / 100},
        {"requests_per_s", round1(completed / wall_s)},
        {"latency_ms",
         {{"p50", round1(percentile(latency, 50))},
          {"p95", round1(percentile(latency, 95))},
          {"max",
           round1(latency.empty() ? 0 : *std::max_element(latency.begin(), latency.end()))}}},
        {"ttft_ms", {{"p50", round1(percentile(ttft, 50))}, {"p95", round1(percentile(ttft, 95))}}},
        {"completion_tokens", tokens},
        {"completion_tokens_per_s", round1(static_cast<double>(tokens) / wall_s)},
        {"error_samples", error_samples},
    };
    std::printf("%s\n", report.dump(2).c_str());
    return completed == total ? 0 : 1;
}
