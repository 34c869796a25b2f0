// `mtdesk serve` end to end: a real server process on loopback (the bundled demo model, CPU
// engine), spoken to the way the OpenAI Python client speaks (its headers, its request shapes,
// server-sent events). Answers are checked against `mtdesk translate` on the same segments.

#include <QFile>
#include <QProcess>
#include <QTest>

#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translator.h"
#include "serve_process.h"

using namespace mtdesk;
using json = nlohmann::json;

// QCOMPARE cannot take nlohmann::json (Qt's overloads make it try conversions json refuses).
#define JSON_EQ(actual, expected)    \
    QVERIFY2((actual) == (expected), \
             ("got " + json(actual).dump() + ", expected " + json(expected).dump()).c_str())
using namespace std::chrono_literals;

namespace {

const std::string kKey = "test-key-5f1c";
const int kMaxTokens = 256;
const int kMaxPromptTokens = 600;
const int kMaxBody = 65536;

struct Answer {
    int status = 0;  ///< 0: no answer (connection failed)
    std::string body;
    httplib::Headers headers;
    json parsed() const { return json::parse(body, nullptr, false); }
};

// What the OpenAI Python client (1.x) sends besides the body.
httplib::Headers openai_headers(const std::string& key) {
    httplib::Headers h = {
        {"Accept", "application/json"},     {"User-Agent", "OpenAI/Python 1.54.0"},
        {"X-Stainless-Lang", "python"},     {"X-Stainless-Package-Version", "1.54.0"},
        {"X-Stainless-Runtime", "CPython"}, {"X-Stainless-Retry-Count", "0"}};
    if (!key.empty()) h.emplace("Authorization", "Bearer " + key);
    return h;
}

Answer to_answer(const httplib::Result& r) {
    Answer a;
    if (!r) return a;
    a.status = r->status;
    a.body = r->body;
    a.headers = r->headers;
    return a;
}

// The data of the complete events in `raw`; comments (":") are skipped, as clients do.
std::vector<std::string> sse_data(const std::string& raw) {
    std::vector<std::string> out;
    std::size_t at = 0;
    for (std::size_t end; (end = raw.find("\n\n", at)) != std::string::npos; at = end + 2) {
        const std::string event = raw.substr(at, end - at);
        std::size_t line_at = 0;
        while (line_at <= event.size()) {
            std::size_t nl = event.find('\n', line_at);
            if (nl == std::string::npos) nl = event.size();
            const std::string line = event.substr(line_at, nl - line_at);
            if (line.rfind("data: ", 0) == 0) out.push_back(line.substr(6));
            line_at = nl + 1;
        }
    }
    return out;
}

// A streamed chat completion as a client sees it.
struct Streamed {
    int status = 0;
    std::string content_type;
    std::vector<json> chunks;  ///< every event's JSON before [DONE]
    bool done = false;         ///< [DONE] came last
    std::string raw;
    std::string content() const {
        std::string s;
        for (const json& c : chunks)
            if (c.contains("choices") && !c["choices"].empty() &&
                c["choices"][0]["delta"].contains("content"))
                s += c["choices"][0]["delta"]["content"].get<std::string>();
        return s;
    }
};

// A connection spoken to byte by byte, for what HTTP client libraries do not do on purpose:
// pipelining, half-closing, malformed framing, slow or idle clients.
class RawConnection {
  public:
    explicit RawConnection(int port) {
        fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<uint16_t>(port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    }
    ~RawConnection() { ::close(fd_); }
    RawConnection(const RawConnection&) = delete;
    RawConnection& operator=(const RawConnection&) = delete;

    bool connected() const { return connected_; }
    bool send(const std::string& bytes) {
        return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
               static_cast<ssize_t>(bytes.size());
    }
    void shutdown_write() { ::shutdown(fd_, SHUT_WR); }

    struct Response {
        int status = 0;  ///< 0: none came whole
        std::string head, body;
    };
    /// The next response (Content-Length or chunked), or status 0 when none comes whole within
    /// `timeout`.
    Response read_response(std::chrono::milliseconds timeout = 10000ms) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        Response r;
        std::size_t end;
        while ((end = in_.find("\r\n\r\n")) == std::string::npos)
            if (!fill(deadline)) return r;
        r.head = in_.substr(0, end + 2);
        in_.erase(0, end + 4);
        std::string lower = r.head;
        std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
        if (const auto at = lower.find("content-length: "); at != std::string::npos) {
            const std::size_t n = std::stoul(lower.substr(at + 16));
            while (in_.size() < n)
                if (!fill(deadline)) return r;
            r.body = in_.substr(0, n);
            in_.erase(0, n);
        } else if (lower.find("transfer-encoding: chunked") != std::string::npos) {
            for (;;) {
                std::size_t eol;
                while ((eol = in_.find("\r\n")) == std::string::npos)
                    if (!fill(deadline)) return r;
                const std::size_t n = std::stoul(in_.substr(0, eol), nullptr, 16);
                while (in_.size() < eol + 2 + n + 2)
                    if (!fill(deadline)) return r;
                r.body += in_.substr(eol + 2, n);
                in_.erase(0, eol + 2 + n + 2);
                if (n == 0) break;
            }
        }
        r.status = std::stoi(r.head.substr(9, 3));
        return r;
    }
    /// Whether the server closes the connection (nothing more comes) within `timeout`.
    bool closed_by_server(std::chrono::milliseconds timeout = 5000ms) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (fill(deadline)) {
        }
        return eof_;
    }

  private:
    bool fill(std::chrono::steady_clock::time_point deadline) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd p{fd_, POLLIN, 0};
        if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
        char buf[65536];
        const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n <= 0) {
            eof_ = true;
            return false;
        }
        in_.append(buf, static_cast<std::size_t>(n));
        return true;
    }

    int fd_ = -1;
    bool connected_ = false;
    bool eof_ = false;
    std::string in_;
};

// The server's resident memory in KiB (VmRSS), 0 when unknown.
long resident_kib(qint64 pid) {
    QFile f(QStringLiteral("/proc/%1/status").arg(pid));
    if (!f.open(QIODevice::ReadOnly)) return 0;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').first().toLong();
    return 0;
}

}  // namespace

class TestServe : public QObject {
    Q_OBJECT

    ServeProcess server_;
    std::unique_ptr<Translator> translator_;  // the demo model, for prompts and token counts

    Answer post(const std::string& path, const std::string& body, const std::string& key = kKey) {
        httplib::Client c("127.0.0.1", server_.port());
        c.set_read_timeout(120);
        return to_answer(c.Post(path.c_str(), openai_headers(key), body, "application/json"));
    }
    Answer get(const std::string& path, const std::string& key = kKey) {
        httplib::Client c("127.0.0.1", server_.port());
        c.set_read_timeout(30);
        return to_answer(c.Get(path.c_str(), openai_headers(key)));
    }
    json health() { return get("/health", "").parsed(); }

    // Streams a chat completion; with `stop_after` > 0 the client hangs up after that many
    // events (the connection is closed).
    Streamed stream(const json& body, int stop_after = 0) {
        Streamed s;
        httplib::Client c("127.0.0.1", server_.port());
        c.set_read_timeout(120);
        httplib::Request req;
        req.method = "POST";
        req.path = "/v1/chat/completions";
        req.headers = openai_headers(kKey);
        req.set_header("Content-Type", "application/json");
        req.body = body.dump();
        req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
            s.raw.append(data, n);
            return stop_after <= 0 || static_cast<int>(sse_data(s.raw).size()) < stop_after;
        };
        const httplib::Result r = c.send(req);
        if (r) {
            s.status = r->status;
            s.content_type = r->get_header_value("Content-Type");
        }
        for (const std::string& d : sse_data(s.raw)) {
            if (s.done) {
                s.done = false;  // something after [DONE]
                break;
            }
            if (d == "[DONE]") {
                s.done = true;
                continue;
            }
            s.chunks.push_back(json::parse(d, nullptr, false));
        }
        return s;
    }

    std::string translation_prompt(const std::string& text, const char* target) {
        PromptRequest r;
        r.text = text;
        r.source = find_language("en");
        r.target = find_language(target);
        return build_translation_prompt(r, translator_->style());
    }

    json chat_body(const std::string& user, bool streamed) {
        json b = {{"messages", json::array({{{"role", "user"}, {"content", user}}})},
                  {"model", "mtdesk-demo"},
                  {"temperature", 0}};
        if (streamed) {
            b["stream"] = true;
            b["stream_options"] = {{"include_usage", true}};
        }
        return b;
    }

    // `mtdesk translate --greedy` on `text`: the local engine's answer.
    QString cli_translate(const QString& text, const QString& to) {
        QProcess p;
        p.start(kMtdeskBinary,
                {"translate", "--model", kDemoModel, "--greedy", "--from", "en", "--to", to});
        p.write(text.toUtf8());
        p.closeWriteChannel();
        if (!p.waitForFinished(120000)) p.kill();
        if (p.exitCode() != 0) qWarning() << p.readAllStandardError();
        return QString::fromUtf8(p.readAllStandardOutput());
    }

    // Polls /health until nothing is queued or running (deadline-bounded).
    json wait_idle(std::chrono::seconds limit = 20s) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        json h;
        do {
            h = health();
            if (h.value("running", -1) == 0 && h.value("queue_depth", -1) == 0 &&
                h.value("requests_in_flight", -1) == 0)
                return h;
            std::this_thread::sleep_for(10ms);
        } while (std::chrono::steady_clock::now() < deadline);
        return h;
    }

  private slots:
    void initTestCase() {
        translator_ = Translator::open_cpu(kDemoModel.toStdString());
        QVERIFY2(server_.start({"--model", kDemoModel, "--api-key", QString::fromStdString(kKey),
                                "--max-tokens", QString::number(kMaxTokens), "--max-prompt-tokens",
                                QString::number(kMaxPromptTokens), "--max-body-bytes",
                                QString::number(kMaxBody)}),
                 qPrintable(server_.error()));
        QVERIFY(server_.port() > 0);
    }

    void cleanupTestCase() {
        // SIGTERM: a clean stop, exit code 0, within the deadline.
        QVERIFY(server_.running());
        QCOMPARE(server_.stop(), 0);
        QVERIFY(server_.stderr_text().contains("stopping"));
    }

    void models() {
        const Answer a = get("/v1/models");
        QCOMPARE(a.status, 200);
        const json j = a.parsed();
        JSON_EQ(j["object"], "list");
        QCOMPARE(j["data"].size(), std::size_t{1});
        JSON_EQ(j["data"][0]["id"], "mtdesk-demo");
        JSON_EQ(j["data"][0]["object"], "model");
        JSON_EQ(j["data"][0]["max_model_len"],
                translator_->model().config().max_position_embeddings);
        JSON_EQ(get("/v1/models/mtdesk-demo").parsed()["id"], "mtdesk-demo");
        const Answer other = get("/v1/models/gpt-4o");
        QCOMPARE(other.status, 404);
        JSON_EQ(other.parsed()["error"]["code"], "model_not_found");
    }

    void healthReport() {
        const Answer a = get("/health", "");  // open without the key, for load balancers
        QCOMPARE(a.status, 200);
        const json j = a.parsed();
        JSON_EQ(j["status"], "ok");
        JSON_EQ(j["model"], "mtdesk-demo");
        JSON_EQ(j["device"], "CPU");
        JSON_EQ(j["tier"], "fp32 (CPU)");
        QVERIFY(j["gpu_memory"].is_null());  // the CPU engine has none
        for (const char* k : {"queue_depth", "running", "finished", "requests_in_flight",
                              "disconnects", "cancelled_jobs"})
            QVERIFY2(j.contains(k) && j[k].is_number_integer(), k);
    }

    void chatParity_data() {
        QTest::addColumn<QString>("segment");
        QTest::addColumn<QString>("target");
        QTest::newRow("en-de short") << "Group permissions"
                                     << "de";
        QTest::newRow("en-de sentence")
            << "When selected, the touchpad will be disabled when the keyboard is being used"
            << "de";
        QTest::newRow("en-fr") << "Save changes before closing?"
                               << "fr";
        QTest::newRow("en-zh (Chinese prompt)") << "Open the file"
                                                << "zh";
        QTest::newRow("en-ja") << "Delete this account"
                               << "ja";
    }
    // The chat answer to mtdesk's own prompt equals `mtdesk translate`'s, whole and streamed;
    // chunks are well-formed; usage is the prompt's real token count.
    void chatParity() {
        QFETCH(QString, segment);
        QFETCH(QString, target);
        const QString expected = cli_translate(segment + "\n", target).trimmed();
        QVERIFY(!expected.isEmpty());
        const std::string user =
            translation_prompt(segment.toStdString(), target.toLatin1().constData());
        PromptRequest chat;
        chat.chat = ChatMessages{{}, user};
        const int prompt_tokens = static_cast<int>(translator_->encode_prompt(chat).size());

        const Answer whole = post("/v1/chat/completions", chat_body(user, false).dump());
        QCOMPARE(whole.status, 200);
        QVERIFY(whole.headers.find("Content-Type")->second.find("application/json") == 0);
        const json w = whole.parsed();
        QVERIFY(w["id"].get<std::string>().rfind("chatcmpl-", 0) == 0);
        JSON_EQ(w["object"], "chat.completion");
        QVERIFY(w["created"].is_number_integer());
        JSON_EQ(w["model"], "mtdesk-demo");
        JSON_EQ(w["choices"][0]["message"]["role"], "assistant");
        QCOMPARE(QString::fromStdString(w["choices"][0]["message"]["content"]), expected);
        JSON_EQ(w["choices"][0]["finish_reason"], "stop");
        JSON_EQ(w["usage"]["prompt_tokens"], prompt_tokens);
        const int completion = w["usage"]["completion_tokens"];
        QVERIFY(completion > 0);
        JSON_EQ(w["usage"]["total_tokens"], prompt_tokens + completion);

        const Streamed s = stream(chat_body(user, true));
        QCOMPARE(s.status, 200);
        QVERIFY(s.content_type.rfind("text/event-stream", 0) == 0);
        QVERIFY(s.done);
        QVERIFY(s.chunks.size() >= 3);  // role, content..., finish, usage
        const std::string id = s.chunks[0]["id"];
        QVERIFY(id.rfind("chatcmpl-", 0) == 0 && id != w["id"]);
        int finishes = 0;
        for (std::size_t i = 0; i < s.chunks.size(); ++i) {
            const json& c = s.chunks[i];
            QVERIFY2(c.is_object(), s.raw.c_str());
            JSON_EQ(c["id"], id);
            JSON_EQ(c["object"], "chat.completion.chunk");
            JSON_EQ(c["model"], "mtdesk-demo");
            QVERIFY(c["created"].is_number_integer());
            const bool last = i + 1 == s.chunks.size();
            if (last) {  // usage was asked for: a chunk of its own, no choices
                JSON_EQ(c["choices"], json::array());
                JSON_EQ(c["usage"]["prompt_tokens"], prompt_tokens);
                JSON_EQ(c["usage"]["completion_tokens"], completion);
                JSON_EQ(c["usage"]["total_tokens"], prompt_tokens + completion);
                continue;
            }
            QVERIFY(c.contains("usage") && c["usage"].is_null());
            QCOMPARE(c["choices"].size(), std::size_t{1});
            JSON_EQ(c["choices"][0]["index"], 0);
            const json& delta = c["choices"][0]["delta"];
            if (i == 0) JSON_EQ(delta["role"], "assistant");
            if (i > 0) QVERIFY(!delta.contains("role"));
            if (!c["choices"][0]["finish_reason"].is_null()) {
                ++finishes;
                JSON_EQ(c["choices"][0]["finish_reason"], "stop");
                QCOMPARE(i + 2, s.chunks.size());  // the finish comes right before usage
            }
        }
        QCOMPARE(finishes, 1);
        QCOMPARE(QString::fromStdString(s.content()), expected);
    }

    void systemMessage() {
        const std::string user = translation_prompt("Open the file", "de");
        json b = chat_body(user, false);
        b["messages"] = json::array({{{"role", "system"}, {"content", "You translate."}},
                                     {{"role", "user"}, {"content", user}}});
        const Answer a = post("/v1/chat/completions", b.dump());
        QCOMPARE(a.status, 200);
        PromptRequest chat;
        chat.chat = ChatMessages{"You translate.", user};
        JSON_EQ(a.parsed()["usage"]["prompt_tokens"],
                static_cast<int>(translator_->encode_prompt(chat).size()));
    }

    // max_tokens reached: finish_reason "length" with exactly that many tokens, streamed too.
    void lengthLimit() {
        const std::string user = translation_prompt(
            "When selected, the touchpad will be disabled when the keyboard is being used", "de");
        json b = chat_body(user, false);
        b["max_tokens"] = 2;
        const json w = post("/v1/chat/completions", b.dump()).parsed();
        JSON_EQ(w["choices"][0]["finish_reason"], "length");
        JSON_EQ(w["usage"]["completion_tokens"], 2);
        b = chat_body(user, true);
        b["max_completion_tokens"] = 2;
        const Streamed s = stream(b);
        QVERIFY(s.done);
        JSON_EQ(s.chunks[s.chunks.size() - 2]["choices"][0]["finish_reason"], "length");
        JSON_EQ(s.chunks.back()["usage"]["completion_tokens"], 2);
        QCOMPARE(s.content(), w["choices"][0]["message"]["content"].get<std::string>());
        // Without stream_options: no usage chunk, and no "usage" key in the chunks.
        b.erase("stream_options");
        const Streamed plain = stream(b);
        QVERIFY(plain.done);
        JSON_EQ(plain.chunks.back()["choices"][0]["finish_reason"], "length");
        for (const json& c : plain.chunks)
            QVERIFY(!c.contains("usage"));
    }

    // max_tokens over --max-tokens is cut there, not refused: finish_reason "length" with
    // exactly the server's limit when the answer would be longer, "stop" when it is shorter.
    void maxTokensOverTheLimit() {
        std::string paragraph;
        for (int i = 0; i < 24; ++i)
            paragraph +=
                "When selected, the touchpad will be disabled when the keyboard is "
                "being used. ";
        json b = chat_body(translation_prompt(paragraph, "de"), false);
        b["max_tokens"] = 100000;
        const Answer cut = post("/v1/chat/completions", b.dump());
        QCOMPARE(cut.status, 200);
        JSON_EQ(cut.parsed()["choices"][0]["finish_reason"], "length");
        JSON_EQ(cut.parsed()["usage"]["completion_tokens"], kMaxTokens);
        b = chat_body(translation_prompt("Open the file", "de"), false);
        b["max_completion_tokens"] = kMaxTokens + 1;
        const Answer whole = post("/v1/chat/completions", b.dump());
        QCOMPARE(whole.status, 200);
        JSON_EQ(whole.parsed()["choices"][0]["finish_reason"], "stop");
        const json line = {{"text", "Open the file"}, {"target", "de"}, {"max_tokens", 1 << 30}};
        const Answer translated = post("/v1/translate", line.dump());
        QCOMPARE(translated.status, 200);
        JSON_EQ(translated.parsed()["truncated_lines"], json::array());
    }

    // Sampling without a seed draws a new one per request (OpenAI's and vLLM's behaviour);
    // the same explicit seed gives the same answer. Temperature 1.5 over the whole vocabulary:
    // eight answers of eight tokens all alike by chance is out of the question.
    void seedRandomUnlessGiven() {
        json chat = chat_body(translation_prompt("Save changes before closing?", "de"), false);
        chat["temperature"] = 1.5;
        chat["top_p"] = 1;
        chat["top_k"] = 0;
        chat["max_tokens"] = 8;
        json line = {{"text", "Save changes before closing?"},
                     {"source", "en"},
                     {"target", "de"},
                     {"temperature", 1.5},
                     {"top_p", 1},
                     {"top_k", 0},
                     {"max_tokens", 8}};
        auto chat_answer = [&](const json& b) {
            const Answer a = post("/v1/chat/completions", b.dump());
            return a.status == 200 ? a.parsed()["choices"][0]["message"]["content"].dump()
                                   : "HTTP " + std::to_string(a.status) + " " + a.body;
        };
        auto translate_answer = [&](const json& b) {
            const Answer a = post("/v1/translate", b.dump());
            return a.status == 200 ? a.parsed()["translation"].dump()
                                   : "HTTP " + std::to_string(a.status) + " " + a.body;
        };
        std::set<std::string> chats, lines;
        for (int i = 0; i < 8; ++i) {
            chats.insert(chat_answer(chat));
            lines.insert(translate_answer(line));
        }
        QVERIFY2(chats.size() > 1, chats.begin()->c_str());
        QVERIFY2(lines.size() > 1, lines.begin()->c_str());
        chat["seed"] = 1234;
        line["seed"] = 1234;
        QCOMPARE(chat_answer(chat), chat_answer(chat));
        QCOMPARE(translate_answer(line), translate_answer(line));
    }

    // /v1/translate: the same line-by-line translation as `mtdesk translate`, with figures and
    // the glossary check.
    void translateEndpoint() {
        const QString text =
            QStringLiteral("Open the file\n\n  Save changes before closing?\nGroup permissions");
        const QString expected = cli_translate(text, QStringLiteral("de"));
        const json body = {{"text", text.toStdString()},
                           {"source", "en"},
                           {"target", "German"},
                           {"greedy", true},
                           {"glossary", json::array({{{"source", "file"}, {"target", "Zzyzx"}}})}};
        const Answer a = post("/v1/translate", body.dump());
        QCOMPARE(a.status, 200);
        const json j = a.parsed();
        QCOMPARE(QString::fromStdString(j["translation"]), expected);
        JSON_EQ(j["object"], "translation");
        JSON_EQ(j["source"], "en");
        JSON_EQ(j["target"], "de");
        JSON_EQ(j["segments"], 3);
        QVERIFY(j["usage"]["prompt_tokens"].get<int>() > 0);
        QVERIFY(j["usage"]["completion_tokens"].get<int>() > 0);
        QVERIFY(j["timings"]["total_ms"].get<double>() > 0);
        JSON_EQ(j["missing_terms"], json::parse(R"([{"source": "file", "target": "Zzyzx"}])"));
        JSON_EQ(j["truncated_lines"], json::array());  // every line ended at a stop token

        // Answers cut at max_tokens say so, by line (the blank line 2 has none).
        json cut = body;
        cut["max_tokens"] = 1;
        const json c = post("/v1/translate", cut.dump()).parsed();
        JSON_EQ(c["truncated_lines"], json::parse("[1, 3, 4]"));
        JSON_EQ(c["usage"]["completion_tokens"], 3);

        // Without a source: detected, and reported as such.
        const json detected =
            post("/v1/translate", json({{"text", "Open the file"}, {"target", "fr"}}).dump())
                .parsed();
        QVERIFY(detected["source"].is_null());
        JSON_EQ(detected["detected_source"], "en");
        QVERIFY(!detected["translation"].get<std::string>().empty());
        // By the window's rule: short Han text is Chinese, other text CLD2 is unsure of (it
        // says English for it) is left undetected.
        const json han =
            post("/v1/translate", json({{"text", "保存"}, {"target", "en"}}).dump()).parsed();
        JSON_EQ(han["detected_source"], "zh");
        const json unsure =
            post("/v1/translate", json({{"text", "Файл"}, {"target", "en"}}).dump()).parsed();
        QVERIFY2(unsure["detected_source"].is_null(), unsure.dump().c_str());
        QCOMPARE(post("/v1/translate", R"({"text": "x"})").status, 400);
    }

    void authentication() {
        const std::string body = chat_body("x", false).dump();
        for (const std::string& key : {std::string(), std::string("wrong-key")}) {
            const Answer a = post("/v1/chat/completions", body, key);
            QCOMPARE(a.status, 401);
            const json e = a.parsed()["error"];
            QVERIFY(e["message"].is_string() && !e["message"].get<std::string>().empty());
            JSON_EQ(e["type"], "invalid_request_error");
            JSON_EQ(e["code"], "invalid_api_key");
            QVERIFY(e.contains("param"));
            QCOMPARE(a.headers.find("WWW-Authenticate")->second, "Bearer");
        }
        QCOMPARE(get("/v1/models", "").status, 401);
        QCOMPARE(post("/v1/translate", "{}", "nope").status, 401);
        QCOMPARE(get("/health", "").status, 200);
        // The scheme's case does not matter (RFC 7235); the key's does, and so does the scheme.
        httplib::Client c("127.0.0.1", server_.port());
        for (const char* scheme : {"bearer ", "BEARER ", "Bearer  "})
            QCOMPARE(c.Get("/v1/models", {{"Authorization", scheme + kKey}})->status, 200);
        for (const std::string& auth : {"Bearer " + std::string(kKey.size(), 'x'), "Basic " + kKey,
                                        std::string("Bearer"), "Bearer" + kKey})
            QCOMPARE(c.Get("/v1/models", {{"Authorization", auth}})->status, 401);
    }

    void refusals_data() {
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("param");
        const QByteArray user = R"({"messages": [{"role": "user", "content": "Hello"}])";
        QTest::newRow("malformed JSON")
            << "POST"
            << "/v1/chat/completions" << QByteArray(R"({"messages": [{"role": )") << 400 << ""
            << "";
        QTest::newRow("not an object")
            << "POST"
            << "/v1/chat/completions" << QByteArray("\"hi\"") << 400 << ""
            << "";
        QTest::newRow("binary garbage")
            << "POST"
            << "/v1/translate" << QByteArray("\x00\xff\xfe{{", 5) << 400 << ""
            << "";
        QTest::newRow("oversized body")
            << "POST"
            << "/v1/chat/completions"
            << QByteArray(R"({"messages": [{"role": "user", "content": ")") +
                   QByteArray(kMaxBody + 100, 'a') + "\"}]}"
            << 413 << "request_too_large"
            << "";
        QTest::newRow("prompt too long")
            << "POST"
            << "/v1/chat/completions"
            << QByteArray(R"({"messages": [{"role": "user", "content": ")") +
                   QByteArray("open the file ").repeated(400) + "\"}]}"
            << 400 << "context_length_exceeded"
            << "messages";
        QTest::newRow("other model") << "POST"
                                     << "/v1/chat/completions" << user + R"(, "model": "gpt-4o"})"
                                     << 404 << "model_not_found"
                                     << "model";
        QTest::newRow("multi-turn") << "POST"
                                    << "/v1/chat/completions"
                                    << QByteArray(R"({"messages": [{"role": "user", "content": "a"},
                              {"role": "assistant", "content": "b"},
                              {"role": "user", "content": "c"}]})")
                                    << 400 << ""
                                    << "messages[1].role";
        QTest::newRow("unknown route") << "GET"
                                       << "/v1/completions" << QByteArray() << 404 << "not_found"
                                       << "";
        QTest::newRow("unknown route POST") << "POST"
                                            << "/v2/chat" << QByteArray("{}") << 404 << "not_found"
                                            << "";
        QTest::newRow("GET on a POST route")
            << "GET"
            << "/v1/chat/completions" << QByteArray() << 405 << "method_not_allowed"
            << "";
        QTest::newRow("POST on a GET route")
            << "POST"
            << "/health" << QByteArray("{}") << 405 << "method_not_allowed"
            << "";
        QTest::newRow("DELETE") << "DELETE"
                                << "/v1/models" << QByteArray() << 405 << "method_not_allowed"
                                << "";
    }
    // Every refusal is a 4xx with OpenAI's error object, and the server keeps answering.
    void refusals() {
        QFETCH(QString, method);
        QFETCH(QString, path);
        QFETCH(QByteArray, body);
        QFETCH(int, status);
        QFETCH(QString, code);
        QFETCH(QString, param);
        httplib::Client c("127.0.0.1", server_.port());
        c.set_read_timeout(60);
        const std::string p = path.toStdString();
        const std::string b = body.toStdString();
        const httplib::Headers h = openai_headers(kKey);
        httplib::Result r = method == "GET"    ? c.Get(p.c_str(), h)
                            : method == "POST" ? c.Post(p.c_str(), h, b, "application/json")
                                               : c.Delete(p.c_str(), h);
        QVERIFY2(r, httplib::to_string(r.error()).c_str());
        QCOMPARE(r->status, status);
        const json e = json::parse(r->body, nullptr, false);
        QVERIFY2(e.is_object() && e.contains("error"), r->body.c_str());
        QVERIFY(e["error"]["message"].is_string() &&
                !e["error"]["message"].get<std::string>().empty());
        QVERIFY(e["error"]["type"].is_string());
        QVERIFY(e["error"].contains("param") && e["error"].contains("code"));
        if (!code.isEmpty()) QCOMPARE(QString::fromStdString(e["error"]["code"]), code);
        if (!param.isEmpty()) QCOMPARE(QString::fromStdString(e["error"]["param"]), param);
        if (status == 405) QVERIFY(r->has_header("Allow"));
        JSON_EQ(health()["status"], "ok");
    }

    // Bytes that are not HTTP, and a request cut off in its body: refused or dropped, and the
    // server answers the next client.
    void brokenConnections() {
        // Sends bytes; with `answer`, reads until the status line and headers have come.
        auto raw = [&](const std::string& bytes, bool answer) {
            const int s = socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_port = htons(static_cast<uint16_t>(server_.port()));
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            std::string got;
            if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                ::write(s, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()) &&
                answer) {
                timeval tv{10, 0};
                setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
                char buf[4096];
                ssize_t n = 0;
                while (got.find("\r\n\r\n") == std::string::npos &&
                       (n = ::read(s, buf, sizeof buf)) > 0)
                    got.append(buf, static_cast<std::size_t>(n));
            }
            ::close(s);
            return got;
        };
        const std::string refused = raw("NOT HTTP AT ALL\r\n\r\n", true);
        QVERIFY2(refused.rfind("HTTP/1.1 400 ", 0) == 0, refused.c_str());
        raw("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + kKey +
                "\r\nContent-Length: 500\r\n\r\n{\"messages\": [",
            false);
        raw(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11), false);  // TLS hello
        const json h = wait_idle();
        JSON_EQ(h["status"], "ok");
        JSON_EQ(h["running"], 0);
    }

    // A client that hangs up mid-stream: its job is cancelled (the engine confirms it) and the
    // engine is idle again at once, not after the answer would have ended.
    void disconnectMidStream() {
        const json before = wait_idle();
        // A long answer: this paragraph takes the demo model about a hundred tokens.
        std::string paragraph;
        for (int i = 0; i < 8; ++i)
            paragraph +=
                "When selected, the touchpad will be disabled when the keyboard is "
                "being used. ";
        json b = chat_body(translation_prompt(paragraph, "de"), true);
        b["max_tokens"] = kMaxTokens;
        const Streamed s = stream(b, /*stop_after=*/3);  // role chunk and two pieces
        QVERIFY(!s.done);
        QCOMPARE(s.chunks.size(), std::size_t{3});
        const json after = wait_idle(10s);
        JSON_EQ(after["running"], 0);
        JSON_EQ(after["queue_depth"], 0);
        QCOMPARE(after["disconnects"].get<int>(), before["disconnects"].get<int>() + 1);
        QCOMPARE(after["cancelled_jobs"].get<int>(), before["cancelled_jobs"].get<int>() + 1);
        // And the server still answers correctly.
        const std::string user = translation_prompt("Group permissions", "de");
        const json w = post("/v1/chat/completions", chat_body(user, false).dump()).parsed();
        QCOMPARE(QString::fromStdString(w["choices"][0]["message"]["content"]),
                 cli_translate("Group permissions\n", "de").trimmed());
    }

    // A client that hangs up while its job waits behind another one's (the CPU engine runs one
    // at a time): cancelled in the queue; the other one is unaffected.
    void disconnectWhileQueued() {
        const json before = wait_idle();
        std::string paragraph;
        for (int i = 0; i < 8; ++i)
            paragraph += "Save changes before closing the window. ";
        json long_body = chat_body(translation_prompt(paragraph, "fr"), false);
        long_body["max_tokens"] = kMaxTokens;
        Answer long_answer;
        std::thread first([&] { long_answer = post("/v1/chat/completions", long_body.dump()); });
        // Wait until the long job runs, then queue a streamed one and hang up after its first
        // event (the role chunk, sent before the job starts).
        const auto deadline = std::chrono::steady_clock::now() + 20s;
        while (health()["running"] != 1 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(5ms);
        const Streamed s = stream(chat_body(translation_prompt("Open the file", "de"), true), 1);
        QCOMPARE(s.chunks.size(), std::size_t{1});
        first.join();
        QCOMPARE(long_answer.status, 200);
        QVERIFY(
            !long_answer.parsed()["choices"][0]["message"]["content"].get<std::string>().empty());
        const json after = wait_idle(10s);
        JSON_EQ(after["queue_depth"], 0);
        QCOMPARE(after["disconnects"].get<int>(), before["disconnects"].get<int>() + 1);
        QCOMPARE(after["cancelled_jobs"].get<int>(), before["cancelled_jobs"].get<int>() + 1);
    }

    // Several clients at once get each their own answer (the load test does this at scale).
    void concurrentClients() {
        const std::vector<std::pair<std::string, const char*>> cases = {
            {"Open the file", "de"},
            {"Group permissions", "fr"},
            {"Delete this account", "es"},
            {"Save changes before closing?", "it"}};
        std::vector<std::string> sequential;
        for (const auto& [text, to] : cases)
            sequential.push_back(
                post("/v1/chat/completions", chat_body(translation_prompt(text, to), false).dump())
                    .parsed()["choices"][0]["message"]["content"]);
        std::vector<std::string> together(cases.size());
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < cases.size(); ++i)
            threads.emplace_back([&, i] {
                const json b =
                    chat_body(translation_prompt(cases[i].first, cases[i].second), i % 2);
                together[i] = i % 2 ? stream(b).content()
                                    : post("/v1/chat/completions", b.dump())
                                          .parsed()["choices"][0]["message"]["content"]
                                          .get<std::string>();
            });
        for (std::thread& t : threads)
            t.join();
        for (std::size_t i = 0; i < cases.size(); ++i)
            QCOMPARE(together[i], sequential[i]);
    }

    // A chunked body (no length announced) is refused with 413 as soon as more than
    // --max-body-bytes has arrived: the server neither waits for 64 MiB nor holds them.
    void chunkedBodyOverTheLimit() {
        RawConnection c(server_.port());
        QVERIFY(c.connected());
        const long before = resident_kib(server_.pid());
        QVERIFY(before > 0);
        QVERIFY(c.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                       kKey + "\r\nTransfer-Encoding: chunked\r\n\r\n"));
        const std::string chunk = "10000\r\n" + std::string(0x10000, 'a') + "\r\n";
        std::size_t sent = 0;
        while (sent < (64u << 20) && c.send(chunk)) {
            sent += 0x10000;
            std::this_thread::sleep_for(1ms);  // slowly, as a client on a network would
        }
        const RawConnection::Response r = c.read_response();
        QCOMPARE(r.status, 413);
        const json e = json::parse(r.body, nullptr, false);
        JSON_EQ(e["error"]["code"], "request_too_large");
        QVERIFY2(sent < (16u << 20), qPrintable(QString::number(sent)));
        const long growth = resident_kib(server_.pid()) - before;
        QVERIFY2(growth < 16 * 1024, qPrintable(QString::number(growth)));
        QVERIFY(c.closed_by_server());
        // A Content-Length over the limit gets the same answer, before its body is sent.
        RawConnection d(server_.port());
        QVERIFY(d.send("POST /v1/translate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + kKey +
                       "\r\nContent-Length: 100000000\r\n\r\n"));
        const RawConnection::Response same = d.read_response();
        QCOMPARE(same.status, 413);
        QCOMPARE(same.body, r.body);
    }

    // curl -d sends application/x-www-form-urlencoded: the JSON endpoints read the body as JSON
    // whatever its type says, up to --max-body-bytes (not cpp-httplib's 8 KiB form limit).
    void formEncodedJsonBody() {
        json b = chat_body(translation_prompt("Open the file", "de"), false);
        const std::string body = b.dump() + std::string(8700, ' ');  // 8.5 KiB of valid JSON
        httplib::Client c("127.0.0.1", server_.port());
        c.set_read_timeout(60);
        const auto r = c.Post("/v1/chat/completions", openai_headers(kKey), body,
                              "application/x-www-form-urlencoded");
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        QVERIFY(
            !json::parse(r->body)["choices"][0]["message"]["content"].get<std::string>().empty());
    }

    // Message framing that leaves the body's length unknown is refused (RFC 9112 §6.3), and the
    // connection closed: where the request ends cannot be known.
    void framingRefused_data() {
        QTest::addColumn<QByteArray>("headers");
        QTest::addColumn<int>("status");
        QTest::newRow("conflicting Content-Length")
            << QByteArray("Content-Length: 2\r\nContent-Length: 20\r\n") << 400;
        QTest::newRow("negative Content-Length") << QByteArray("Content-Length: -1\r\n") << 400;
        QTest::newRow("Content-Length not a number") << QByteArray("Content-Length: 2x\r\n") << 400;
        QTest::newRow("Content-Length and chunked")
            << QByteArray("Content-Length: 2\r\nTransfer-Encoding: chunked\r\n") << 400;
        QTest::newRow("unknown transfer coding")
            << QByteArray("Transfer-Encoding: gzip, chunked\r\n") << 501;
    }
    void framingRefused() {
        QFETCH(QByteArray, headers);
        QFETCH(int, status);
        RawConnection c(server_.port());
        QVERIFY(c.send("POST /v1/translate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + kKey +
                       "\r\n" + headers.toStdString() + "\r\n{}"));
        const RawConnection::Response r = c.read_response();
        QCOMPARE(r.status, status);
        QVERIFY2(json::parse(r.body, nullptr, false)["error"]["message"].is_string(),
                 r.body.c_str());
        QVERIFY(c.closed_by_server());
        // The same header twice with one value is one length.
        RawConnection same(server_.port());
        QVERIFY(same.send("POST /v1/translate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                          kKey + "\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}"));
        QCOMPARE(same.read_response().status, 400);  // answered: {} lacks "text"
        QVERIFY(!same.closed_by_server(200ms));
    }

    // Pipelined requests (sent together, before any answer) are answered in order, and the
    // connection stays open for more.
    void pipelining() {
        RawConnection c(server_.port());
        const std::string auth = "Authorization: Bearer " + kKey + "\r\n";
        const json translate = {{"text", "Open the file"}, {"target", "de"}, {"greedy", true}};
        QVERIFY(
            c.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                   "GET /v1/models HTTP/1.1\r\nHost: x\r\n" +
                   auth +
                   "\r\n"
                   "POST /v1/translate HTTP/1.1\r\nHost: x\r\n" +
                   auth + "Content-Length: " + std::to_string(translate.dump().size()) +
                   "\r\n\r\n" + translate.dump() + "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
        const RawConnection::Response health = c.read_response();
        const RawConnection::Response models = c.read_response();
        const RawConnection::Response translation = c.read_response();
        const RawConnection::Response again = c.read_response();
        QCOMPARE(health.status, 200);
        JSON_EQ(json::parse(health.body)["status"], "ok");
        QCOMPARE(models.status, 200);
        JSON_EQ(json::parse(models.body)["object"], "list");
        QCOMPARE(translation.status, 200);
        QCOMPARE(QString::fromStdString(json::parse(translation.body)["translation"]),
                 cli_translate("Open the file\n", "de").trimmed());
        QCOMPARE(again.status, 200);
        QVERIFY(c.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
        QCOMPARE(c.read_response().status, 200);
    }

    // A client that half-closes after its request (shutdown(SHUT_WR), as some scripts and
    // proxies do) still gets its answer, whole or streamed: it has not gone.
    void halfClosedClient() {
        const json translate = {{"text", "Open the file"}, {"target", "de"}, {"greedy", true}};
        RawConnection c(server_.port());
        QVERIFY(
            c.send("POST /v1/translate HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                   "Authorization: Bearer " +
                   kKey + "\r\nContent-Length: " + std::to_string(translate.dump().size()) +
                   "\r\n\r\n" + translate.dump()));
        c.shutdown_write();
        const RawConnection::Response r = c.read_response(60000ms);
        QCOMPARE(r.status, 200);
        const QString expected = cli_translate("Open the file\n", "de").trimmed();
        QCOMPARE(QString::fromStdString(json::parse(r.body)["translation"]), expected);

        const json chat = chat_body(translation_prompt("Open the file", "de"), true);
        RawConnection s(server_.port());
        QVERIFY(
            s.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                   "Authorization: Bearer " +
                   kKey + "\r\nContent-Length: " + std::to_string(chat.dump().size()) + "\r\n\r\n" +
                   chat.dump()));
        s.shutdown_write();
        const RawConnection::Response streamed = s.read_response(60000ms);
        QCOMPARE(streamed.status, 200);
        std::string content;
        bool done = false;
        for (const std::string& d : sse_data(streamed.body)) {
            if (d == "[DONE]") {
                done = true;
                continue;
            }
            const json c = json::parse(d);
            if (!c["choices"].empty() && c["choices"][0]["delta"].contains("content"))
                content += c["choices"][0]["delta"]["content"].get<std::string>();
        }
        QVERIFY2(done, streamed.body.c_str());
        QCOMPARE(QString::fromStdString(content), expected);
    }

    // Idle keep-alive connections, more than the server has threads, and clients sending their
    // headers a line at a time, as many as the old fixed pool had threads (16), do not keep
    // /health waiting: idle connections give their threads up while others wait for one.
    void slowAndIdleClients() {
        std::vector<std::unique_ptr<RawConnection>> idle, slow;
        for (int i = 0; i < 80; ++i) {
            idle.push_back(std::make_unique<RawConnection>(server_.port()));
            QVERIFY(idle.back()->send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
        }
        for (auto& c : idle)  // answered, and now they idle
            QCOMPARE(c->read_response().status, 200);
        for (int i = 0; i < 16; ++i) {
            slow.push_back(std::make_unique<RawConnection>(server_.port()));
            QVERIFY(slow.back()->send("GET /health HTTP/1.1\r\n"));
        }
        for (int round = 0; round < 3; ++round) {
            for (auto& c : slow)
                c->send("X-Slow-" + std::to_string(round) + ": 1\r\n");
            RawConnection c(server_.port());
            const auto start = std::chrono::steady_clock::now();
            QVERIFY(c.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
            QCOMPARE(c.read_response(1000ms).status, 200);
            QVERIFY(std::chrono::steady_clock::now() - start < 1s);
            std::this_thread::sleep_for(300ms);
        }
    }

    // Refused before the model loads: a non-loopback address without a key.
    void refusesOpenAddressWithoutKey() {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("MTDESK_API_KEY"));
        p.setProcessEnvironment(env);
        p.start(kMtdeskBinary,
                {"serve", "--model", kDemoModel, "--host", "0.0.0.0", "--port", "0"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 2);
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(err.contains("--api-key") && err.contains("0.0.0.0"), err.constData());
    }

    // A port in use is reported, not shared.
    void portInUse() {
        QProcess p;
        p.start(kMtdeskBinary,
                {"serve", "--model", kDemoModel, "--port", QString::number(server_.port())});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(p.readAllStandardError().contains("cannot listen"));
        JSON_EQ(health()["status"], "ok");
    }
};

QTEST_GUILESS_MAIN(TestServe)
#include "test_serve.moc"
