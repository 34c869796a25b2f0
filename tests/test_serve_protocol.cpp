// The pieces of `mtdesk serve` that need no server: request parsing and its refusals, the JSON
// of answers and chunks, the streaming clean-up, the loopback check, the client-gone watch on
// a real loopback socket, and the chat prompt a client's messages become.

#include <QTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translator.h"
#include "serve/answer_cleaner.h"
#include "serve/client_connection.h"
#include "serve/http_server.h"
#include "serve/openai_protocol.h"

using namespace mtdesk;
using namespace mtdesk::serve;
using json = nlohmann::json;

// QCOMPARE cannot take nlohmann::json (Qt's overloads make it try conversions json refuses).
#define JSON_EQ(actual, expected)    \
    QVERIFY2((actual) == (expected), \
             ("got " + json(actual).dump() + ", expected " + json(expected).dump()).c_str())

namespace {

const char* kFixture = MTDESK_TEST_DATA_DIR "/models/hunyuan-gqa-alpha";

// Sampling defaults unlike SamplingParams' own, so a test can see which values were used.
SamplingParams defaults() {
    SamplingParams s;
    s.greedy = false;
    s.temperature = 0.5f;
    s.top_k = 7;
    s.top_p = 0.8f;
    s.repetition_penalty = 1.2f;
    s.seed = 3;
    return s;
}

// The ApiError a body gets, or a failure when it is accepted.
ApiError chat_error(const std::string& body) {
    try {
        parse_chat_request(body, defaults());
    } catch (const ApiError& e) {
        return e;
    }
    return ApiError(0, "accepted");
}

ApiError translate_error(const std::string& body) {
    try {
        parse_translate_request(body, defaults());
    } catch (const ApiError& e) {
        return e;
    }
    return ApiError(0, "accepted");
}

}  // namespace

class TestServeProtocol : public QObject {
    Q_OBJECT

  private slots:
    void chatRequest() {
        const ChatRequest r = parse_chat_request(
            R"({"model": "m", "messages": [{"role": "system", "content": "Be terse."},
                {"role": "user", "content": "Translate this."}],
                "stream": true, "stream_options": {"include_usage": true}, "max_tokens": 64})",
            defaults());
        QCOMPARE(r.model, std::string("m"));
        QCOMPARE(r.messages.system, std::string("Be terse."));
        QCOMPARE(r.messages.user, std::string("Translate this."));
        QVERIFY(r.stream);
        QVERIFY(r.include_usage);
        QCOMPARE(r.max_tokens.value(), 64);
        // Left-out sampling: the model's defaults, but no repetition penalty.
        QVERIFY(!r.sampling.greedy);
        QCOMPARE(r.sampling.temperature, 0.5f);
        QCOMPARE(r.sampling.top_k, 7);
        QCOMPARE(r.sampling.top_p, 0.8f);
        QCOMPARE(r.sampling.repetition_penalty, 1.0f);
        // No seed: none (a random one per request), whatever the defaults hold.
        QVERIFY(!r.sampling.seed);
    }

    void chatRequestVariants() {
        // Text parts, developer messages joined, null fields as absent, max_completion_tokens.
        ChatRequest r = parse_chat_request(
            R"({"messages": [{"role": "developer", "content": "A"},
                {"role": "system", "content": [{"type": "text", "text": "B"}]},
                {"role": "user", "content": [{"type": "text", "text": "x"},
                                             {"type": "text", "text": "y"}]}],
                "stream": null, "max_completion_tokens": 5, "max_tokens": 9, "n": 1,
                "stop": [], "frequency_penalty": 0, "logprobs": false,
                "response_format": {"type": "text"}})",
            defaults());
        QCOMPARE(r.messages.system, std::string("A\n\nB"));
        QCOMPARE(r.messages.user, std::string("xy"));
        QVERIFY(!r.stream);
        QVERIFY(!r.include_usage);
        QCOMPARE(r.max_tokens.value(), 5);
        QVERIFY(r.model.empty());
        // Sampling given: temperature 0 is greedy; the others replace the defaults.
        r = parse_chat_request(
            R"({"messages": [{"role": "user", "content": "x"}], "temperature": 0,
                "top_p": 0.9, "top_k": -1, "repetition_penalty": 1.05, "seed": 42})",
            defaults());
        QVERIFY(r.sampling.greedy);
        QCOMPARE(r.sampling.top_p, 0.9f);
        QCOMPARE(r.sampling.top_k, 0);
        QCOMPARE(r.sampling.repetition_penalty, 1.05f);
        QCOMPARE(r.sampling.seed.value_or(0), uint64_t{42});
        r = parse_chat_request(
            R"({"messages": [{"role": "user", "content": "x"}], "seed": 18446744073709551615})",
            defaults());
        QCOMPARE(r.sampling.seed.value_or(0), uint64_t{18446744073709551615ull});
        r = parse_chat_request(R"({"messages": [{"role": "user", "content": "x"}],
                                   "temperature": 1.3})",
                               defaults());
        QVERIFY(!r.sampling.greedy);
        QCOMPARE(r.sampling.temperature, 1.3f);
        QVERIFY(!r.max_tokens);
    }

    void chatRefusals_data() {
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("param");
        QTest::addColumn<QString>("says");
        const QString user = QStringLiteral(R"("messages": [{"role": "user", "content": "x"}])");
        QTest::newRow("not JSON") << "{\"messages\": ["
                                  << ""
                                  << "not valid JSON";
        QTest::newRow("empty body") << ""
                                    << ""
                                    << "not valid JSON";
        QTest::newRow("array") << "[1]"
                               << ""
                               << "JSON object";
        QTest::newRow("no messages") << "{}"
                                     << "messages"
                                     << "required";
        QTest::newRow("empty messages") << R"({"messages": []})"
                                        << "messages"
                                        << "non-empty";
        QTest::newRow("message not object") << R"({"messages": ["hi"]})"
                                            << "messages[0]"
                                            << "object";
        QTest::newRow("no role") << R"({"messages": [{"content": "x"}]})"
                                 << "messages[0].role"
                                 << "role";
        QTest::newRow("no content") << R"({"messages": [{"role": "user"}]})"
                                    << "messages[0].content"
                                    << "required";
        QTest::newRow("assistant turn") << R"({"messages": [{"role": "user", "content": "a"},
                   {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]})"
                                        << "messages[1].role"
                                        << "'assistant' turns";
        QTest::newRow("two users") << R"({"messages": [{"role": "user", "content": "a"},
                                         {"role": "user", "content": "c"}]})"
                                   << "messages[1]"
                                   << "multi-turn";
        QTest::newRow("system last") << R"({"messages": [{"role": "user", "content": "a"},
                                           {"role": "system", "content": "c"}]})"
                                     << "messages[1].role"
                                     << "before the user";
        QTest::newRow("system only") << R"({"messages": [{"role": "system", "content": "a"}]})"
                                     << "messages"
                                     << "end with a user";
        QTest::newRow("unknown role") << R"({"messages": [{"role": "robot", "content": "a"}]})"
                                      << "messages[0].role"
                                      << "unknown role";
        QTest::newRow("image part")
            << R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})"
            << "messages[0].content"
            << "only text";
        QTest::newRow("content number") << R"({"messages": [{"role": "user", "content": 3}]})"
                                        << "messages[0].content"
                                        << "string or a list";
        QTest::newRow("temperature") << "{" + user + ", \"temperature\": 2.5}"
                                     << "temperature"
                                     << "between 0 and 2";
        QTest::newRow("temperature string") << "{" + user + ", \"temperature\": \"hot\"}"
                                            << "temperature"
                                            << "number";
        QTest::newRow("top_p 0") << "{" + user + ", \"top_p\": 0}"
                                 << "top_p"
                                 << "(0, 1]";
        QTest::newRow("top_k") << "{" + user + ", \"top_k\": -2}"
                               << "top_k"
                               << "top_k";
        QTest::newRow("top_k float") << "{" + user + ", \"top_k\": 2.5}"
                                     << "top_k"
                                     << "integer";
        QTest::newRow("penalty") << "{" + user + ", \"repetition_penalty\": 0}"
                                 << "repetition_penalty"
                                 << "(0, 10]";
        QTest::newRow("max_tokens 0") << "{" + user + ", \"max_tokens\": 0}"
                                      << "max_tokens"
                                      << "at least 1";
        QTest::newRow("max_tokens text") << "{" + user + ", \"max_tokens\": \"9\"}"
                                         << "max_tokens"
                                         << "integer";
        QTest::newRow("stream text") << "{" + user + ", \"stream\": \"yes\"}"
                                     << "stream"
                                     << "true or false";
        QTest::newRow("seed text") << "{" + user + ", \"seed\": \"x\"}"
                                   << "seed"
                                   << "integer";
        QTest::newRow("n") << "{" + user + ", \"n\": 2}"
                           << "n"
                           << "one choice";
        QTest::newRow("stop") << "{" + user + ", \"stop\": [\"\\n\"]}"
                              << "stop"
                              << "not supported";
        QTest::newRow("logprobs") << "{" + user + ", \"logprobs\": true}"
                                  << "logprobs"
                                  << "not supported";
        QTest::newRow("tools") << "{" + user + ", \"tools\": [{\"type\": \"function\"}]}"
                               << "tools"
                               << "not supported";
        QTest::newRow("presence") << "{" + user + ", \"presence_penalty\": 0.5}"
                                  << "presence_penalty"
                                  << "repetition_penalty";
        QTest::newRow("model number") << "{" + user + ", \"model\": 5}"
                                      << "model"
                                      << "string";
        QTest::newRow("stream_options") << "{" + user + ", \"stream_options\": 1}"
                                        << "stream_options"
                                        << "object";
        QTest::newRow("response_format json")
            << "{" + user + ", \"response_format\": {\"type\": \"json_object\"}}"
            << "response_format"
            << "not supported";
        QTest::newRow("response_format schema")
            << "{" + user + ", \"response_format\": {\"type\": \"json_schema\"}}"
            << "response_format"
            << "not supported";
        QTest::newRow("response_format shape") << "{" + user + ", \"response_format\": \"json\"}"
                                               << "response_format"
                                               << "object";
    }
    void chatRefusals() {
        QFETCH(QString, body);
        QFETCH(QString, param);
        QFETCH(QString, says);
        const ApiError e = chat_error(body.toStdString());
        QCOMPARE(e.status(), 400);
        QCOMPARE(e.type(), std::string("invalid_request_error"));
        QCOMPARE(QString::fromStdString(e.param()), param);
        QVERIFY2(QString::fromUtf8(e.what()).contains(says), e.what());
    }

    void translateRequest() {
        TranslateRequest r = parse_translate_request(
            R"({"text": "Open the file.\n\nSave", "target": "German", "source": "en",
                "glossary": [{"source": "file", "target": "Datei"}], "max_tokens": 30,
                "casing_guard": false, "model": "m"})",
            defaults());
        QCOMPARE(r.text, std::string("Open the file.\n\nSave"));
        QCOMPARE(r.target, find_language("de"));
        QCOMPARE(r.source, find_language("en"));
        QCOMPARE(r.glossary.size(), std::size_t{1});
        JSON_EQ(r.glossary[0].source, std::string("file"));
        JSON_EQ(r.glossary[0].target, std::string("Datei"));
        QCOMPARE(r.max_tokens.value(), 30);
        QVERIFY(!r.casing_guard);
        QCOMPARE(r.model, std::string("m"));
        // Left-out sampling: the defaults whole, repetition penalty included (as the CLI).
        QCOMPARE(r.sampling.repetition_penalty, 1.2f);
        QCOMPARE(r.sampling.top_k, 7);
        QVERIFY(!r.sampling.seed);  // but a random seed, unless the request gives one
        QCOMPARE(parse_translate_request(R"({"text": "x", "target": "de", "seed": 9})", defaults())
                     .sampling.seed.value_or(0),
                 uint64_t{9});

        r = parse_translate_request(
            R"({"text": "x", "target": "zh", "source": "auto", "glossary": {"a": "b"},
                "greedy": true})",
            defaults());
        QVERIFY(r.source == nullptr);
        QCOMPARE(r.target, find_language("zh"));
        QCOMPARE(r.glossary.size(), std::size_t{1});
        JSON_EQ(r.glossary[0].target, std::string("b"));
        QVERIFY(r.sampling.greedy);
        QCOMPARE(r.sampling.repetition_penalty, 1.0f);  // greedy as `mtdesk translate --greedy`
        QVERIFY(r.casing_guard);
        r = parse_translate_request(
            R"({"text": "x", "target": "fr", "source": "", "stream": false})", defaults());
        QVERIFY(r.source == nullptr);
    }

    void translateRefusals_data() {
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("param");
        QTest::addColumn<QString>("says");
        QTest::newRow("no text") << R"({"target": "de"})"
                                 << "text"
                                 << "required";
        QTest::newRow("text number") << R"({"text": 1, "target": "de"})"
                                     << "text"
                                     << "string";
        QTest::newRow("no target") << R"({"text": "x"})"
                                   << "target"
                                   << "required";
        QTest::newRow("unknown target") << R"({"text": "x", "target": "xx-klingon"})"
                                        << "target"
                                        << "unknown language";
        QTest::newRow("unknown source") << R"({"text": "x", "target": "de", "source": "qq"})"
                                        << "source"
                                        << "unknown language";
        QTest::newRow("same") << R"({"text": "x", "target": "de", "source": "German"})"
                              << "target"
                              << "same language";
        QTest::newRow("glossary shape") << R"({"text": "x", "target": "de", "glossary": 3})"
                                        << "glossary"
                                        << "list";
        QTest::newRow("glossary entry")
            << R"({"text": "x", "target": "de", "glossary": [{"source": "a"}]})"
            << "glossary"
            << "glossary[0]";
        QTest::newRow("glossary empty term")
            << R"({"text": "x", "target": "de", "glossary": [{"source": "", "target": "b"}]})"
            << "glossary"
            << "non-empty";
        QTest::newRow("casing_guard") << R"({"text": "x", "target": "de", "casing_guard": 1})"
                                      << "casing_guard"
                                      << "true or false";
        QTest::newRow("not JSON") << R"({"text": )"
                                  << ""
                                  << "not valid JSON";
        QTest::newRow("stream") << R"({"text": "x", "target": "de", "stream": true})"
                                << "stream"
                                << "streaming is not supported";
    }
    void translateRefusals() {
        QFETCH(QString, body);
        QFETCH(QString, param);
        QFETCH(QString, says);
        const ApiError e = translate_error(body.toStdString());
        QCOMPARE(e.status(), 400);
        QCOMPARE(QString::fromStdString(e.param()), param);
        QVERIFY2(QString::fromUtf8(e.what()).contains(says), e.what());
    }

    void answers() {
        const CompletionHeader h{"chatcmpl-abc", 1700000000, "demo"};
        json j = json::parse(chat_completion_body(h, "Hallo", "length", {12, 3}));
        JSON_EQ(j["id"], "chatcmpl-abc");
        JSON_EQ(j["object"], "chat.completion");
        JSON_EQ(j["created"], 1700000000);
        JSON_EQ(j["model"], "demo");
        QCOMPARE(j["choices"].size(), std::size_t{1});
        JSON_EQ(j["choices"][0]["index"], 0);
        JSON_EQ(j["choices"][0]["message"]["role"], "assistant");
        JSON_EQ(j["choices"][0]["message"]["content"], "Hallo");
        JSON_EQ(j["choices"][0]["finish_reason"], "length");
        JSON_EQ(j["usage"]["prompt_tokens"], 12);
        JSON_EQ(j["usage"]["completion_tokens"], 3);
        JSON_EQ(j["usage"]["total_tokens"], 15);

        j = json::parse(chat_chunk_body(h, "assistant", "", std::nullopt, false));
        JSON_EQ(j["object"], "chat.completion.chunk");
        JSON_EQ(j["choices"][0]["delta"], json({{"role", "assistant"}, {"content", ""}}));
        QVERIFY(j["choices"][0]["finish_reason"].is_null());
        QVERIFY(!j.contains("usage"));
        j = json::parse(chat_chunk_body(h, std::nullopt, "lo", std::nullopt, true));
        JSON_EQ(j["choices"][0]["delta"], json({{"content", "lo"}}));
        QVERIFY(j.contains("usage") && j["usage"].is_null());
        j = json::parse(chat_chunk_body(h, std::nullopt, std::nullopt, "stop", false));
        JSON_EQ(j["choices"][0]["delta"], json::object());
        JSON_EQ(j["choices"][0]["finish_reason"], "stop");
        j = json::parse(usage_chunk_body(h, {5, 7}));
        JSON_EQ(j["choices"], json::array());
        JSON_EQ(j["usage"]["total_tokens"], 12);

        QCOMPARE(sse_event("{}"), std::string("data: {}\n\n"));
        QCOMPARE(sse_done(), std::string("data: [DONE]\n\n"));

        j = json::parse(error_body(ApiError(401, "no key", "invalid_request_error", {}, "k")));
        JSON_EQ(j["error"]["message"], "no key");
        JSON_EQ(j["error"]["type"], "invalid_request_error");
        QVERIFY(j["error"]["param"].is_null());
        JSON_EQ(j["error"]["code"], "k");

        j = json::parse(models_body("demo", 5, 4096));
        JSON_EQ(j["object"], "list");
        JSON_EQ(j["data"][0]["id"], "demo");
        JSON_EQ(j["data"][0]["object"], "model");
        JSON_EQ(j["data"][0]["owned_by"], "mtdesk");
        JSON_EQ(j["data"][0]["max_model_len"], 4096);

        // Output that is not valid UTF-8 cannot break a stream: replaced, not thrown.
        j = json::parse(chat_chunk_body(h, std::nullopt, "a\xff", std::nullopt, false));
        JSON_EQ(j["choices"][0]["delta"]["content"], "a\xEF\xBF\xBD");

        const std::string id = new_completion_id();
        QCOMPARE(id.size(), std::size_t{9 + 24});
        QVERIFY(id.rfind("chatcmpl-", 0) == 0);
        QVERIFY(id != new_completion_id());
    }

    void translateAnswer() {
        TranslateAnswer a;
        a.model = "demo";
        a.translation = "Datei";
        a.target = find_language("de");
        a.detected_source = find_language("en");
        a.segments = 1;
        a.usage = {10, 2};
        a.queued_ms = 1.26;
        a.total_ms = 20;
        a.missing_terms = {{"file", "Akte"}};
        const json j = json::parse(translate_body(a));
        JSON_EQ(j["translation"], "Datei");
        QVERIFY(j["source"].is_null());
        JSON_EQ(j["detected_source"], "en");
        JSON_EQ(j["target"], "de");
        JSON_EQ(j["segments"], 1);
        JSON_EQ(j["usage"]["total_tokens"], 12);
        QCOMPARE(j["timings"]["queued_ms"].get<double>(), 1.3);
        JSON_EQ(j["missing_terms"], json::parse(R"([{"source": "file", "target": "Akte"}])"));
        JSON_EQ(j["truncated_lines"], json::array());
        a.truncated_lines = {2, 5};
        JSON_EQ(json::parse(translate_body(a))["truncated_lines"], json::parse("[2, 5]"));
    }

    void health() {
        HealthInfo h;
        h.model = "demo";
        h.engine.device = "CPU";
        h.engine.tier = "fp32 (CPU)";
        h.engine.queue_depth = 2;
        h.engine.running = 1;
        h.engine.finished = 9;
        h.requests_in_flight = 3;
        h.disconnects = 1;
        json j = json::parse(health_body(h));
        JSON_EQ(j["status"], "ok");
        JSON_EQ(j["device"], "CPU");
        QVERIFY(j["gpu_memory"].is_null());
        JSON_EQ(j["queue_depth"], 2);
        JSON_EQ(j["running"], 1);
        JSON_EQ(j["finished"], 9);
        JSON_EQ(j["requests_in_flight"], 3);
        JSON_EQ(j["disconnects"], 1);
        h.engine.vram_used_bytes = 100;
        h.engine.vram_total_bytes = 1000;
        j = json::parse(health_body(h));
        JSON_EQ(j["gpu_memory"]["used_bytes"], 100);
        JSON_EQ(j["gpu_memory"]["total_bytes"], 1000);
        QVERIFY(j["gpu_memory"]["own_bytes"].is_null());
    }

    // The streamed pieces always add up to the clean-up of the raw text so far, wherever the
    // model's output is cut, and the end result is clean_translation_output's.
    void answerCleaner() {
        const std::vector<std::string> alphabet = {" ", "\t",   "\n",   "\r",   "a", "Z",
                                                   "é", "\x01", "\x7f", "\x1b", "中"};
        std::mt19937 rng(7);
        for (int round = 0; round < 2000; ++round) {
            std::vector<std::string> pieces(rng() % 8);
            for (std::string& p : pieces)
                for (int n = static_cast<int>(rng() % 4); n > 0; --n)
                    p += alphabet[rng() % alphabet.size()];
            AnswerCleaner c;
            std::string raw, streamed;
            for (const std::string& p : pieces) {
                raw += p;
                streamed += c.push(p);
                QCOMPARE(streamed, clean_translation_output(raw, false));
            }
            QCOMPARE(c.text(), clean_translation_output(raw, false));
        }
        AnswerCleaner c;
        QCOMPARE(c.push("  Hallo "), std::string("Hallo"));
        QCOMPARE(c.push(" Welt\n"), std::string("  Welt"));
        QCOMPARE(c.text(), std::string("Hallo  Welt"));
    }

    void loopback() {
        QVERIFY(is_loopback_host("127.0.0.1"));
        QVERIFY(is_loopback_host("127.1.2.3"));
        QVERIFY(is_loopback_host("localhost"));
        QVERIFY(is_loopback_host("::1"));
        QVERIFY(!is_loopback_host("0.0.0.0"));
        QVERIFY(!is_loopback_host("192.168.1.5"));
        QVERIFY(!is_loopback_host("::"));
        QVERIFY(!is_loopback_host("example.com"));
        QVERIFY(!is_loopback_host("128.0.0.1"));
    }

    // A real loopback connection: alive while open; a client that stops sending is only gone
    // once a write has been refused (it closed), not when it merely half-closed.
    void clientConnection() {
        const int listener = socket(AF_INET, SOCK_STREAM, 0);
        QVERIFY(listener >= 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        QCOMPARE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        QCOMPARE(::listen(listener, 2), 0);
        socklen_t len = sizeof addr;
        getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
        auto connect_one = [&](int& client) {
            client = socket(AF_INET, SOCK_STREAM, 0);
            if (::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return -1;
            return accept(listener, nullptr, nullptr);
        };
        // Waits up to 5 s for `condition`.
        auto eventually = [](const auto& condition) {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            while (!condition() && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return condition();
        };

        QVERIFY(!ClientConnection(-1).gone());
        int half = -1;
        const int half_accepted = connect_one(half);
        QVERIFY(half_accepted >= 0);
        const ClientConnection h(half_accepted);
        QVERIFY(!h.gone() && !h.stopped_sending());
        QCOMPARE(write(half, "GET / HTTP/1.1\r\n", 16), ssize_t{16});  // data waiting: alive
        QVERIFY(!h.gone() && !h.stopped_sending());
        shutdown(half, SHUT_WR);  // its request is complete; it waits for the answer
        QVERIFY(eventually([&] { return h.stopped_sending(); }));
        QCOMPARE(write(half_accepted, "HTTP/1.1 200 OK\r\n", 17), ssize_t{17});
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        QVERIFY(!h.gone());
        char buf[32];
        QCOMPARE(read(half, buf, sizeof buf), ssize_t{17});  // and it reads the answer

        int closing = -1;
        const int closing_accepted = connect_one(closing);
        QVERIFY(closing_accepted >= 0);
        const ClientConnection c(closing_accepted);
        close(closing);
        QVERIFY(eventually([&] { return c.stopped_sending(); }));
        QVERIFY(!c.gone());  // closed or half-closed: the socket alone cannot tell
        QCOMPARE(send(closing_accepted, "x", 1, MSG_NOSIGNAL), ssize_t{1});
        QVERIFY(eventually([&] { return c.gone(); }));  // the client's reset answers the write

        for (const int fd : {half, half_accepted, closing_accepted, listener})
            close(fd);
    }

    // A chat whose user message is mtdesk's translation prompt is the very prompt the local
    // engine builds; a system message goes in as plain text; the output bound is the engine's.
    void chatPrompt() {
        auto t = Translator::open_cpu(kFixture);
        PromptRequest r;
        r.text = "Open the file and save it before you leave.";
        r.target = find_language("de");
        PromptRequest chat;
        chat.chat = ChatMessages{{}, build_translation_prompt(r, t->style())};
        chat.text = chat.chat->user;
        QCOMPARE(t->encode_prompt(chat), t->encode_prompt(r));
        QCOMPARE(t->source_budget(chat), std::numeric_limits<int>::max());

        chat.chat->system = "Sys <|eos|>";
        const std::vector<int32_t> with_system = t->encode_prompt(chat);
        const int32_t eos = t->tokenizer().token_id("<|eos|>").value();
        QCOMPARE(std::count(with_system.begin(), with_system.end(), eos), 0);
        // Hunyuan's template: <|startoftext|> system <|extra_4|> user <|extra_0|>.
        const std::vector<int32_t> sys = t->tokenizer().encode("Sys <|eos|>", false);
        const int32_t extra4 = t->tokenizer().token_id("<|extra_4|>").value();
        JSON_EQ(with_system[0], t->tokenizer().token_id("<|startoftext|>").value());
        QVERIFY(std::equal(sys.begin(), sys.end(), with_system.begin() + 1));
        QCOMPARE(with_system[1 + sys.size()], extra4);

        const int context = t->model().config().max_position_embeddings;
        QCOMPARE(t->output_bound(10, 50, 1000), 72);
        QCOMPARE(t->output_bound(1000, 50, 100), 100);
        QCOMPARE(t->output_bound(1000, context - 5, 100), 5);
    }
};

QTEST_GUILESS_MAIN(TestServeProtocol)
#include "test_serve_protocol.moc"
