// The remote engine's pure parts: the server-sent events parser (every framing case: pieces cut
// anywhere, CRLF split across reads, comments, multi-line data, a byte order mark), server
// URLs, the request for a segment (the same user message as the local Translator, sampling as
// vLLM takes it, the output bound), the OpenAI-compatible answers (chunks, usage, errors, model
// lists), the output clean-up, and the server pool's choice, slots and rests.

#include <QTest>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/prompt.h"
#include "remote/openai_api.h"
#include "remote/server_pool.h"
#include "remote/server_url.h"
#include "remote/sse_parser.h"
#include "remote/translation_request.h"

using namespace mtdesk;
using namespace mtdesk::remote;
using namespace std::chrono_literals;

namespace {

// Events as "type|data|id" lines, for one QCOMPARE.
QStringList describe(const std::vector<SseEvent>& events) {
    QStringList out;
    for (const SseEvent& e : events)
        out << QString::fromStdString(e.type + "|" + e.data + "|" + e.id);
    return out;
}

using Pieces = QList<QByteArray>;

QStringList parse_pieces(const Pieces& pieces) {
    SseParser p;
    std::vector<SseEvent> all;
    for (const QByteArray& piece : pieces) {
        const std::string bytes = piece.toStdString();
        for (SseEvent& e : p.feed(bytes))
            all.push_back(std::move(e));
    }
    for (SseEvent& e : p.finish())
        all.push_back(std::move(e));
    return describe(all);
}

// What vLLM sends for one short answer, with usage in a chunk of its own.
const std::string kVllmStream =
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
    "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"打开\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"文件。\"},"
    "\"finish_reason\":\"stop\"}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":21,"
    "\"completion_tokens\":3,\"total_tokens\":24}}\n\n"
    "data: [DONE]\n\n";

PromptRequest request(const std::string& text, const char* from, const char* to) {
    PromptRequest r;
    r.text = text;
    r.source = from ? find_language(from) : nullptr;
    r.target = find_language(to);
    return r;
}

}  // namespace

class TestRemoteProtocol : public QObject {
    Q_OBJECT

  private slots:
    // ---- server-sent events ----

    void sse_data() {
        QTest::addColumn<Pieces>("pieces");
        QTest::addColumn<QStringList>("events");
        const QString m = QStringLiteral("message|");
        QTest::newRow("one event") << Pieces{"data: hello\n\n"} << QStringList{m + "hello|"};
        QTest::newRow("two events")
            << Pieces{"data: a\n\ndata: b\n\n"} << QStringList{m + "a|", m + "b|"};
        QTest::newRow("CRLF") << Pieces{"data: a\r\n\r\ndata: b\r\n\r\n"}
                              << QStringList{m + "a|", m + "b|"};
        QTest::newRow("CR only") << Pieces{"data: a\r\rdata: b\r\r"}
                                 << QStringList{m + "a|", m + "b|"};
        // A CR at the end of one read and its LF at the start of the next: one line end, not a
        // blank line that would dispatch early (the event would lose its second data line).
        QTest::newRow("CRLF split")
            << Pieces{"data: a\r", "\ndata: b\r", "\n\r", "\n"} << QStringList{m + "a\nb|"};
        QTest::newRow("multi-line data") << Pieces{"data: line one\ndata: line two\n\n"}
                                         << QStringList{m + "line one\nline two|"};
        QTest::newRow("split inside field name")
            << Pieces{"da", "ta: x", "y\n", "\n"} << QStringList{m + "xy|"};
        QTest::newRow("comments are keep-alives")
            << Pieces{": ping\n\n: another\ndata: x\n\n"} << QStringList{m + "x|"};
        QTest::newRow("only one leading space is removed")
            << Pieces{"data:  two\ndata:none\n\n"} << QStringList{m + " two\nnone|"};
        QTest::newRow("a field without a colon") << Pieces{"data\n\n"} << QStringList{m + "|"};
        QTest::newRow("no data: not dispatched")
            << Pieces{"event: ping\n\nid: 7\n\ndata: x\n\n"} << QStringList{m + "x|7"};
        QTest::newRow("event type and id")
            << Pieces{"event: error\nid: 42\ndata: {}\n\n"} << QStringList{"error|{}|42"};
        QTest::newRow("type resets after dispatch")
            << Pieces{"event: a\ndata: 1\n\ndata: 2\n\n"} << QStringList{"a|1|", m + "2|"};
        QTest::newRow("unknown fields ignored")
            << Pieces{"foo: bar\ndata: x\nbaz\n\n"} << QStringList{m + "x|"};
        QTest::newRow("byte order mark")
            << Pieces{"\xEF\xBB\xBF" "data: x\n\n"} << QStringList{m + "x|"};
        QTest::newRow("byte order mark split") << Pieces{"\xEF", "\xBB",
                                                         "\xBF"
                                                         "da",
                                                         "ta: x\n\n"}
                                               << QStringList{m + "x|"};
        QTest::newRow("UTF-8 split inside a character")
            << Pieces{"data: \xE6\x89", "\x93\xE5\xBC\x80\n\n"} << QStringList{m + "打开|"};
        QTest::newRow("last event without its blank line")
            << Pieces{"data: a\n\ndata: [DONE]\n"} << QStringList{m + "a|", m + "[DONE]|"};
        QTest::newRow("partial last line dropped")
            << Pieces{"data: a\n\ndata: [DO"} << QStringList{m + "a|"};
        QTest::newRow("empty pieces")
            << Pieces{"", "data: a", "", "\n", "", "\n"} << QStringList{m + "a|"};
    }
    void sse() {
        QFETCH(Pieces, pieces);
        QFETCH(QStringList, events);
        QCOMPARE(parse_pieces(pieces), events);
    }

    void sseByteByByte() {
        // A real stream fed one byte at a time gives the same events as fed whole.
        SseParser whole, bytes;
        const QStringList expected = describe(whole.feed(kVllmStream));
        QCOMPARE(expected.size(), 5);
        std::vector<SseEvent> got;
        for (char c : kVllmStream)
            for (SseEvent& e : bytes.feed(std::string_view(&c, 1)))
                got.push_back(std::move(e));
        QCOMPARE(describe(got), expected);
        QCOMPARE(bytes.pending_bytes(), std::size_t{0});
    }

    void sseRetryAndLimit() {
        SseParser p;
        QVERIFY(!p.retry_ms());
        p.feed("retry: 1500\n\nretry: soon\n\n");
        QCOMPARE(*p.retry_ms(), 1500L);
        SseParser small(16);
        QVERIFY_THROWS_EXCEPTION(Error, small.feed("data: " + std::string(64, 'x')));
        SseParser ok(16);
        QCOMPARE(ok.feed("data: 0123456789\n\n").size(), std::size_t{1});
    }

    // ---- server URLs ----

    void url_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("origin");  // "" = rejected
        QTest::addColumn<QString>("endpoint");
        QTest::addColumn<QString>("label");
        QTest::newRow("http with port") << "http://gpu1:8000"
                                        << "http://gpu1:8000"
                                        << "/v1/models"
                                        << "gpu1:8000";
        QTest::newRow("OpenAI base_url with /v1") << "http://gpu1:8000/v1/"
                                                  << "http://gpu1:8000"
                                                  << "/v1/models"
                                                  << "gpu1:8000";
        QTest::newRow("no scheme") << " gpu2:9000 "
                                   << "http://gpu2:9000"
                                   << "/v1/models"
                                   << "gpu2:9000";
        QTest::newRow("https default port") << "HTTPS://mt.example.org/v1"
                                            << "https://mt.example.org:443"
                                            << "/v1/models"
                                            << "mt.example.org:443";
        QTest::newRow("http default port") << "http://localhost"
                                           << "http://localhost:80"
                                           << "/v1/models"
                                           << "localhost:80";
        QTest::newRow("path prefix") << "https://gw.example.org/mt/hy/v1"
                                     << "https://gw.example.org:443"
                                     << "/mt/hy/v1/models"
                                     << "gw.example.org:443";
        QTest::newRow("IPv6") << "http://[fd00::2]:8000"
                              << "http://[fd00::2]:8000"
                              << "/v1/models"
                              << "[fd00::2]:8000";
        QTest::newRow("ftp") << "ftp://host:21"
                             << ""
                             << ""
                             << "";
        QTest::newRow("empty") << "  "
                               << ""
                               << ""
                               << "";
        QTest::newRow("no host") << "http://:8000"
                                 << ""
                                 << ""
                                 << "";
        QTest::newRow("bad port") << "http://host:80a"
                                  << ""
                                  << ""
                                  << "";
        QTest::newRow("port out of range") << "http://host:70000"
                                           << ""
                                           << ""
                                           << "";
        QTest::newRow("empty port") << "http://host:"
                                    << ""
                                    << ""
                                    << "";
        QTest::newRow("query") << "http://host:1/?a=b"
                               << ""
                               << ""
                               << "";
        QTest::newRow("IPv6 without brackets") << "http://fd00::2"
                                               << ""
                                               << ""
                                               << "";
        QTest::newRow("user name") << "http://me@host:1"
                                   << ""
                                   << ""
                                   << "";
    }
    void url() {
        QFETCH(QString, text);
        QFETCH(QString, origin);
        QFETCH(QString, endpoint);
        QFETCH(QString, label);
        std::string error;
        const auto u = parse_server_url(text.toStdString(), &error);
        if (origin.isEmpty()) {
            QVERIFY(!u);
            // The message names the URL as written, so a user finds the bad line.
            QVERIFY2(error.find(text.trimmed().toStdString()) != std::string::npos, error.c_str());
            return;
        }
        QVERIFY2(u, error.c_str());
        QCOMPARE(QString::fromStdString(u->origin()), origin);
        QCOMPARE(QString::fromStdString(u->endpoint("/models")), endpoint);
        QCOMPARE(QString::fromStdString(u->label()), label);
        QCOMPARE(QString::fromStdString(u->text), text.trimmed());
    }

    // ---- the request ----

    void modelFromName() {
        RemoteModel a = RemoteModel::from_name("tencent/Hunyuan-MT-7B");
        QCOMPARE(a.style, PromptStyle::HunyuanMT);
        QVERIFY(!a.terminology_prompt);
        RemoteModel b = RemoteModel::from_name("tencent/HY-MT1.5-7B");
        QCOMPARE(b.style, PromptStyle::HyMt15);
        QVERIFY(b.terminology_prompt);
        RemoteModel c = RemoteModel::from_name("mtdesk-demo");
        QCOMPARE(c.style, PromptStyle::HyMt15);  // as Translator::open_cpu takes the demo model
        QVERIFY(!c.terminology_prompt);
        QCOMPARE(QString::fromStdString(c.name), QStringLiteral("mtdesk-demo"));
    }

    void userMessage() {
        PromptRequest r = request("Open the GitHub page.", "en", "zh");
        r.glossary = {{"GitHub", "吉特哈布"}, {"absent term", "不在"}};
        // HY-MT with the terminology prompt: the glossary narrowed to the terms in the text.
        PromptRequest narrowed = r;
        narrowed.glossary = {{"GitHub", "吉特哈布"}};
        const RemoteModel hy = RemoteModel::from_name("HY-MT1.5-1.8B");
        QCOMPARE(user_message(r, hy), build_translation_prompt(narrowed, PromptStyle::HyMt15));
        QVERIFY(user_message(r, hy).find("吉特哈布") != std::string::npos);
        QVERIFY(user_message(r, hy).find("absent term") == std::string::npos);
        // Models without it: no glossary in the prompt, as Translator::encode_prompt.
        PromptRequest plain = r;
        plain.glossary.clear();
        QCOMPARE(user_message(r, RemoteModel::from_name("mtdesk-demo")),
                 build_translation_prompt(plain, PromptStyle::HyMt15));
        QCOMPARE(user_message(r, RemoteModel::from_name("Hunyuan-MT-7B")),
                 build_translation_prompt(plain, PromptStyle::HunyuanMT));
        // A target is required, as locally.
        PromptRequest none = request("x", "en", "zh");
        none.target = nullptr;
        QVERIFY_THROWS_EXCEPTION(Error, user_message(none, hy));
    }

    void requestBody() {
        TranslationJob job;
        job.request = request("Save your changes.", "en", "de");
        job.options.sampling = SamplingParams::greedy_decoding();
        job.options.max_new_tokens = 1024;
        const RemoteModel model = RemoteModel::from_name("mtdesk-demo");
        nlohmann::json j = nlohmann::json::parse(chat_request_body(job, model));
        QCOMPARE(j["model"].get<std::string>(), std::string("mtdesk-demo"));
        QCOMPARE(j["messages"].size(), std::size_t{1});
        QCOMPARE(j["messages"][0]["role"].get<std::string>(), std::string("user"));
        QCOMPARE(j["messages"][0]["content"].get<std::string>(),
                 build_translation_prompt(job.request, PromptStyle::HyMt15));
        QVERIFY(j["stream"].get<bool>());
        QVERIFY(j["stream_options"]["include_usage"].get<bool>());
        QCOMPARE(j["temperature"].get<double>(), 0.0);  // greedy
        QVERIFY(!j.contains("top_k") && !j.contains("top_p") && !j.contains("seed"));
        QVERIFY(!j.contains("repetition_penalty"));  // 1 = off: left to the server
        // 4 × 18 bytes + 32 = 104 < 1024.
        QCOMPARE(j["max_tokens"].get<int>(), 4 * 18 + 32);

        job.options.sampling = SamplingParams::hunyuan_mt();
        job.options.sampling.seed = 7;
        job.options.max_new_tokens = 50;
        j = nlohmann::json::parse(chat_request_body(job, model));
        QCOMPARE(j["temperature"].get<double>(), 0.7);
        QCOMPARE(j["top_p"].get<double>(), 0.6);
        QCOMPARE(j["top_k"].get<int>(), 20);
        QCOMPARE(j["repetition_penalty"].get<double>(), 1.05);
        QCOMPARE(j["seed"].get<int>(), 7);
        QCOMPARE(j["max_tokens"].get<int>(), 50);  // the user's bound is the smaller one

        job.options.sampling.top_k = 0;  // off
        j = nlohmann::json::parse(chat_request_body(job, model));
        QVERIFY(!j.contains("top_k"));

        // Sampling without a seed sends none (each request random), not a fixed "seed": 0.
        job.options.sampling.seed.reset();
        j = nlohmann::json::parse(chat_request_body(job, model));
        QVERIFY2(!j.contains("seed"), j.dump().c_str());
        job.options.sampling.seed = 0;  // chosen: sent
        QCOMPARE(nlohmann::json::parse(chat_request_body(job, model))["seed"].get<int>(), 0);

        // Greedy with a penalty keeps the penalty.
        job.options.sampling = SamplingParams::greedy_decoding();
        job.options.sampling.repetition_penalty = 1.1f;
        j = nlohmann::json::parse(chat_request_body(job, model));
        QCOMPARE(j["temperature"].get<double>(), 0.0);
        QCOMPARE(j["repetition_penalty"].get<double>(), 1.1);
    }

    void maxTokens() {
        TranslationJob job;
        job.request.text = "abc";
        job.options.max_new_tokens = 1000;
        QCOMPARE(max_tokens_for(job), 44);
        job.request.text.clear();
        QCOMPARE(max_tokens_for(job), 32);
        job.options.max_new_tokens = 0;  // nonsense in, still a valid request out
        QCOMPARE(max_tokens_for(job), 1);
    }

    void cleanOutput() {
        TranslationJob job;
        job.request = request("Open the GitHub page.", "en", "zh");
        job.options.casing_guard = true;
        // Surrounding whitespace and control characters go; the casing guard restores GitHub.
        QCOMPARE(clean_output(job, "  打开 github 页面。\x07\n"),
                 std::string("打开 GitHub 页面。"));
        job.options.casing_guard = false;
        QCOMPARE(clean_output(job, "打开 github 页面。"), std::string("打开 github 页面。"));
        // The formatted prompt's <target> wrapping, as locally.
        job.request.formatted = true;
        QCOMPARE(clean_output(job, "<target>打开<s1>文件</s1></target>"),
                 clean_translation_output("<target>打开<s1>文件</s1></target>", true));
        QCOMPARE(clean_output(job, "<target>打开<s1>文件</s1></target>"),
                 std::string("打开<s1>文件</s1>"));
    }

    // ---- answers ----

    void chunks() {
        SseParser p;
        std::string text;
        std::optional<std::string> finish;
        std::optional<int> prompt, completion;
        bool done = false;
        for (const SseEvent& e : p.feed(kVllmStream)) {
            const ChatChunk c = parse_chat_chunk(e.data);
            QVERIFY(c.error.empty());
            text += c.content;
            if (c.finish_reason) finish = c.finish_reason;
            if (c.prompt_tokens) prompt = c.prompt_tokens;
            if (c.completion_tokens) completion = c.completion_tokens;
            done = done || c.done;
        }
        QCOMPARE(QString::fromStdString(text), QStringLiteral("打开文件。"));
        QCOMPARE(*finish, std::string("stop"));
        QCOMPARE(*prompt, 21);
        QCOMPARE(*completion, 3);
        QVERIFY(done);
    }

    void chunkErrors() {
        // An error object in the stream (vLLM when generation fails).
        ChatChunk c = parse_chat_chunk(
            R"({"error":{"message":"out of KV cache","type":"InternalServerError","code":500}})");
        QCOMPARE(c.error, std::string("out of KV cache"));
        c = parse_chat_chunk(R"({"object":"error","message":"model gone","code":503})");
        QCOMPARE(c.error, std::string("model gone"));
        QVERIFY_THROWS_EXCEPTION(Error, parse_chat_chunk("not json"));
        QVERIFY_THROWS_EXCEPTION(Error, parse_chat_chunk("[1,2]"));
        QVERIFY_THROWS_EXCEPTION(Error, parse_chat_chunk(R"({"id":"x"})"));
        // A choice without content (the role-only first chunk) is not an error.
        c = parse_chat_chunk(R"({"choices":[{"delta":{"role":"assistant"}}]})");
        QVERIFY(c.content.empty() && c.error.empty() && !c.finish_reason);
    }

    void wholeCompletion() {
        const ChatChunk c = parse_chat_completion(
            R"({"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant",)"
            R"("content":"Hallo"},"finish_reason":"length"}],"usage":{"prompt_tokens":9,)"
            R"("completion_tokens":2}})");
        QCOMPARE(c.content, std::string("Hallo"));
        QCOMPARE(*c.finish_reason, std::string("length"));
        QCOMPARE(*c.completion_tokens, 2);
        QVERIFY_THROWS_EXCEPTION(Error, parse_chat_completion(R"({"choices":[]})"));
    }

    void modelList() {
        const auto ids = parse_model_list(
            R"({"object":"list","data":[{"id":"tencent/HY-MT1.5-7B","object":"model"},)"
            R"({"id":"lora-a","object":"model"}]})");
        QCOMPARE(ids.size(), std::size_t{2});
        QCOMPARE(ids[0], std::string("tencent/HY-MT1.5-7B"));
        QCOMPARE(ids[1], std::string("lora-a"));
        QVERIFY(parse_model_list(R"({"data":[]})").empty());
        QVERIFY_THROWS_EXCEPTION(Error, parse_model_list(R"({"models":[]})"));
        QVERIFY_THROWS_EXCEPTION(Error, parse_model_list("<html>"));
    }

    void httpErrors_data() {
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("message");
        QTest::newRow("OpenAI shape")
            << 401 << R"({"error":{"message":"Invalid API key","type":"invalid_request_error"}})"
            << "HTTP 401 Unauthorized: Invalid API key";
        QTest::newRow("vLLM shape")
            << 404 << R"({"object":"error","message":"The model `x` does not exist.","code":404})"
            << "HTTP 404 Not Found: The model `x` does not exist.";
        QTest::newRow("FastAPI shape") << 422 << R"({"detail":"messages: field required"})"
                                       << "HTTP 422 Unprocessable Entity: messages: field required";
        QTest::newRow("plain text") << 502 << "upstream\nconnect error"
                                    << "HTTP 502 Bad Gateway: upstream connect error";
        QTest::newRow("no body") << 503 << ""
                                 << "HTTP 503 Service Unavailable";
        QTest::newRow("unknown status") << 599 << ""
                                        << "HTTP 599";
    }
    void httpErrors() {
        QFETCH(int, status);
        QFETCH(QString, body);
        QFETCH(QString, message);
        QCOMPARE(QString::fromStdString(describe_http_error(status, body.toStdString())), message);
    }

    void longErrorBodyIsCut() {
        const std::string m = describe_http_error(500, std::string(5000, 'x'));
        QVERIFY(m.size() < 400);
        QVERIFY(m.starts_with("HTTP 500 Internal Server Error: xxx"));
    }

    // ---- the server pool ----

    void poolLeastLoadedRoundRobin() {
        ServerPool pool(3, 2);
        const auto t = ServerPool::Clock::now();
        // Equal loads: round robin.
        QCOMPARE(*pool.acquire(t), std::size_t{0});
        QCOMPARE(*pool.acquire(t), std::size_t{1});
        QCOMPARE(*pool.acquire(t), std::size_t{2});
        // Server 1 finishes first: it is the least loaded.
        pool.succeeded(1);
        QCOMPARE(*pool.acquire(t), std::size_t{1});
        // Two slots each: six in flight fill the pool, two on each server.
        for (int i = 0; i < 3; ++i)
            QVERIFY(pool.acquire(t));
        QCOMPARE(pool.in_flight(), 6);
        for (std::size_t s = 0; s < 3; ++s)
            QCOMPARE(pool.in_flight(s), 2);
        QVERIFY(!pool.acquire(t));
        pool.released(2);
        QCOMPARE(*pool.acquire(t), std::size_t{2});
    }

    void poolSkip() {
        ServerPool pool(2, 4);
        const auto t = ServerPool::Clock::now();
        QCOMPARE(*pool.acquire(t, {true, false}), std::size_t{1});
        QCOMPARE(*pool.acquire(t, {true, false}), std::size_t{1});
        QVERIFY(!pool.acquire(t, {true, true}));
        QCOMPARE(*pool.acquire(t, {false, true}), std::size_t{0});
    }

    void poolRest() {
        ServerPool pool(2, 4, 500ms, 4s);
        const auto t0 = ServerPool::Clock::now();
        QCOMPARE(*pool.acquire(t0), std::size_t{0});
        QCOMPARE(*pool.acquire(t0), std::size_t{1});
        QCOMPARE(*pool.acquire(t0), std::size_t{0});
        // Server 0 fails: it rests 500 ms and gets nothing meanwhile.
        pool.failed(0, t0);
        QVERIFY(pool.resting(0, t0 + 499ms));
        QCOMPARE(pool.answering(), 1);
        for (int i = 0; i < 3; ++i)
            QCOMPARE(*pool.acquire(t0 + 100ms), std::size_t{1});
        QCOMPARE(*pool.next_ready(t0), t0 + 500ms);
        QVERIFY(!pool.next_ready(t0, {true, false}));
        // The other request that was in flight on it fails too: the same outage, no longer rest.
        pool.failed(0, t0 + 10ms);
        QCOMPARE(*pool.next_ready(t0), t0 + 500ms);
        QCOMPARE(pool.in_flight(0), 0);
        // After the rest it is tried again; failing again doubles the rest, up to the cap.
        QCOMPARE(*pool.acquire(t0 + 500ms), std::size_t{0});
        pool.failed(0, t0 + 600ms);
        QCOMPARE(*pool.next_ready(t0 + 600ms), t0 + 600ms + 1s);
        auto t = t0 + 2s;
        for (int i = 0; i < 6; ++i) {
            QCOMPARE(*pool.acquire(t, {false, true}), std::size_t{0});
            pool.failed(0, t);
            t = *pool.next_ready(t);
        }
        QCOMPARE(*pool.acquire(t, {false, true}), std::size_t{0});
        pool.failed(0, t);
        QCOMPARE(*pool.next_ready(t) - t, ServerPool::Clock::duration(4s));  // capped
        // Its rest over, a failed server is retried but not counted as answering: only a
        // success makes it count again, and forgets the failures (the next failure rests the
        // first time again).
        t = *pool.next_ready(t);
        QVERIFY(!pool.resting(0, t));
        QCOMPARE(pool.answering(), 1);
        QCOMPARE(*pool.acquire(t, {false, true}), std::size_t{0});
        pool.succeeded(0);
        QCOMPARE(pool.answering(), 2);
        QCOMPARE(*pool.acquire(t, {false, true}), std::size_t{0});
        pool.failed(0, t);
        QCOMPARE(*pool.next_ready(t) - t, ServerPool::Clock::duration(500ms));
    }
};

QTEST_GUILESS_MAIN(TestRemoteProtocol)
#include "test_remote_protocol.moc"
