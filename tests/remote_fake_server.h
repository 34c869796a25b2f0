#pragma once
// An OpenAI-compatible server in the test process (cpp-httplib), scripted per request, for the
// remote engine's behaviour that a real server produces only by accident: a 500, a stream cut
// off in the middle, an error event, a whole answer instead of a stream, a server that stays
// silent, one that trickles text without end, one that has not answered its model list yet,
// TLS with a self-signed certificate. Its "model" answers with the source segment (the last
// paragraph of the prompt) in upper case, in three pieces, so every answer tells which
// request it belongs to. SilentServer accepts connections and never answers.

#include <httplib.h>

#include <QtGlobal>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace mtdesk::test {

/// What the fake server does with one chat request.
struct FakeReply {
    int status = 200;
    bool stream = true;        ///< an event stream; false: one chat.completion JSON body
    std::string body;          ///< a non-200 answer's body
    int delay_ms = 0;          ///< before the status line
    int piece_delay_ms = 0;    ///< between the streamed pieces
    int cut_after = -1;        ///< close the connection after this many content pieces
    bool error_event = false;  ///< an error object in the stream instead of the last piece
    /// > 0: instead of the translation, an "X" every this many ms until the client leaves.
    int trickle_ms = 0;
    std::string finish_reason = "stop";  ///< of the last chunk (or the whole answer)
    std::string content;                 ///< non-empty: the answer, instead of the fake translation
};

/// The source segment of a prompt (its last paragraph) in upper case: the fake translation.
inline std::string fake_translation(const std::string& prompt) {
    const auto at = prompt.rfind("\n\n");
    std::string text = at == std::string::npos ? prompt : prompt.substr(at + 2);
    for (char& c : text)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return text;
}

/// The fake translation cut into three pieces (at byte boundaries that are ASCII here).
inline std::vector<std::string> fake_pieces(const std::string& text) {
    const std::size_t a = text.size() / 3, b = 2 * text.size() / 3;
    return {text.substr(0, a), text.substr(a, b - a), text.substr(b)};
}

class FakeServer {
  public:
    using Script = std::function<FakeReply(const nlohmann::json& request, int call)>;

    /// Plain HTTP on 127.0.0.1, on `port` (0: any free one); with `cert` and `key` (PEM files)
    /// HTTPS.
    explicit FakeServer(Script script, const std::string& cert = {}, const std::string& key = {},
                        int port = 0)
        : script_(std::move(script)) {
        if (cert.empty())
            server_ = std::make_unique<httplib::Server>();
        else
            server_ = std::make_unique<httplib::SSLServer>(cert.c_str(), key.c_str());
        server_->new_task_queue = [] { return new httplib::ThreadPool(32); };
        server_->Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
            record(req);
            ++models_calls_;
            while (hold_models_ && !stopping_)  // a server still starting, or hanging
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            if (!authorized(req, res)) return;
            res.set_content(R"({"object":"list","data":[{"id":"fake-model","object":"model"},)"
                            R"({"id":"fake-lora","object":"model"}]})",
                            "application/json");
        });
        server_->Post("/v1/chat/completions", [this](const httplib::Request& req,
                                                     httplib::Response& res) { chat(req, res); });
        if (port == 0)
            port_ = server_->bind_to_any_port("127.0.0.1");
        else
            port_ = server_->bind_to_port("127.0.0.1", port) ? port : -1;
        if (port_ <= 0) return;
        thread_ = std::thread([this] { server_->listen_after_bind(); });
        while (!server_->is_running())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }

    ~FakeServer() {
        stopping_ = true;
        server_->stop();
        if (thread_.joinable()) thread_.join();
    }

    int port() const { return port_; }
    bool valid() const { return port_ > 0; }
    std::string url(const char* scheme = "http") const {
        return std::string(scheme) + "://127.0.0.1:" + std::to_string(port_);
    }
    /// Requires "Authorization: Bearer <key>" from now on ("" = nothing required).
    void requireKey(const std::string& key) {
        std::lock_guard lock(m_);
        key_ = key;
    }

    /// While held, GET /v1/models does not answer.
    void holdModels(bool hold) { hold_models_ = hold; }
    int modelsCalls() const { return models_calls_; }

    int chatCalls() const { return calls_; }
    int mostConcurrent() const { return most_; }
    int concurrent() const { return now_; }
    /// Streams whose client closed the connection before the end.
    int abandoned() const { return abandoned_; }
    std::vector<nlohmann::json> requests() const {
        std::lock_guard lock(m_);
        return requests_;
    }
    std::vector<std::string> authorizations() const {
        std::lock_guard lock(m_);
        return auth_;
    }

  private:
    void record(const httplib::Request& req) {
        std::lock_guard lock(m_);
        auth_.push_back(req.get_header_value("Authorization"));
    }

    bool authorized(const httplib::Request& req, httplib::Response& res) {
        std::lock_guard lock(m_);
        if (key_.empty() || req.get_header_value("Authorization") == "Bearer " + key_) return true;
        res.status = 401;
        res.set_content(R"({"error":{"message":"invalid API key","type":"invalid_request_error"}})",
                        "application/json");
        return false;
    }

    // Sleeps `ms`, in steps, unless the server stops meanwhile.
    void pause(int ms) const {
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        while (!stopping_ && std::chrono::steady_clock::now() < end)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }

    void chat(const httplib::Request& req, httplib::Response& res) {
        record(req);
        if (!authorized(req, res)) return;
        const nlohmann::json request = nlohmann::json::parse(req.body, nullptr, false);
        const int call = calls_++;
        {
            std::lock_guard lock(m_);
            requests_.push_back(request);
        }
        const int now = ++now_;
        for (int most = most_; now > most && !most_.compare_exchange_weak(most, now);) {
        }
        const FakeReply reply = script_(request, call);
        pause(reply.delay_ms);
        if (reply.status != 200) {
            --now_;
            res.status = reply.status;
            res.set_content(reply.body, "application/json");
            return;
        }
        const std::string prompt = request["messages"][0]["content"].get<std::string>();
        const std::string text = reply.content.empty() ? fake_translation(prompt) : reply.content;
        if (!reply.stream) {
            --now_;
            nlohmann::json answer = {
                {"object", "chat.completion"},
                {"choices",
                 {{{"index", 0},
                   {"message", {{"role", "assistant"}, {"content", "  " + text + "\n"}}},
                   {"finish_reason", reply.finish_reason}}}},
                {"usage", {{"prompt_tokens", 11}, {"completion_tokens", 3}}}};
            res.set_content(answer.dump(), "application/json");
            return;
        }
        res.set_chunked_content_provider(
            "text/event-stream", [this, reply, text](size_t, httplib::DataSink& sink) {
                auto event = [&](const nlohmann::json& j) {
                    const std::string e = "data: " + j.dump() + "\n\n";
                    return sink.write(e.data(), e.size());
                };
                auto chunk = [](const std::string& content, const char* finish) {
                    nlohmann::json c = {{"object", "chat.completion.chunk"},
                                        {"choices",
                                         {{{"index", 0},
                                           {"delta", {{"content", content}}},
                                           {"finish_reason", nullptr}}}}};
                    if (finish) c["choices"][0]["finish_reason"] = finish;
                    return c;
                };
                if (reply.trickle_ms > 0) {
                    while (!stopping_ && event(chunk("X", nullptr)))
                        pause(reply.trickle_ms);
                    --now_;
                    ++abandoned_;
                    return false;
                }
                const std::vector<std::string> pieces = fake_pieces(text);
                bool ok = true;
                for (int i = 0; i < (reply.error_event ? 2 : 3) && ok; ++i) {
                    if (i > 0) pause(reply.piece_delay_ms);
                    if (i == reply.cut_after) {
                        --now_;
                        return false;  // the connection closes without the stream's end
                    }
                    ok = event(chunk(pieces[static_cast<std::size_t>(i)], nullptr));
                }
                // The request stops counting as in flight before the client can see its end:
                // a client that then sends its next request must not find it still counted.
                --now_;
                if (ok && reply.error_event) {
                    pause(reply.piece_delay_ms);
                    ok = event({{"error", {{"message", "engine crashed"}, {"code", 500}}}});
                }
                if (ok && !reply.error_event) {
                    ok = event(chunk("", reply.finish_reason.c_str())) &&
                         event({{"object", "chat.completion.chunk"},
                                {"choices", nlohmann::json::array()},
                                {"usage", {{"prompt_tokens", 11}, {"completion_tokens", 3}}}});
                }
                if (ok) {
                    static const std::string done = "data: [DONE]\n\n";
                    ok = sink.write(done.data(), done.size());
                }
                if (!ok) ++abandoned_;
                sink.done();
                return true;
            });
    }

    Script script_;
    std::unique_ptr<httplib::Server> server_;
    std::thread thread_;
    int port_ = -1;
    std::atomic<bool> stopping_{false}, hold_models_{false};
    std::atomic<int> calls_{0}, now_{0}, most_{0}, abandoned_{0}, models_calls_{0};
    mutable std::mutex m_;
    std::string key_;
    std::vector<nlohmann::json> requests_;
    std::vector<std::string> auth_;
};

/// A server that accepts connections, reads what comes and never answers (a machine whose
/// process hangs), recording the request lines it received.
class SilentServer {
  public:
    SilentServer() {
        listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::listen(listener_, 64) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
            return;
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] { run(); });
    }
    ~SilentServer() {
        stopping_ = true;
        if (thread_.joinable()) thread_.join();
        ::close(listener_);
    }
    SilentServer(const SilentServer&) = delete;
    SilentServer& operator=(const SilentServer&) = delete;

    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    /// The request lines received so far ("POST /v1/chat/completions HTTP/1.1", ...).
    std::vector<std::string> requests() const {
        std::lock_guard lock(m_);
        std::vector<std::string> out;
        for (const std::string& in : received_) {
            std::size_t at = 0;
            while ((at = in.find(" HTTP/1.", at)) != std::string::npos) {
                const std::size_t start = in.rfind('\n', at);
                out.push_back(in.substr(start == std::string::npos ? 0 : start + 1,
                                        at + 9 - (start == std::string::npos ? 0 : start + 1)));
                ++at;
            }
        }
        return out;
    }

  private:
    void run() {
        while (!stopping_) {
            std::vector<pollfd> fds{{listener_, POLLIN, 0}};
            for (const auto& [fd, index] : open_)
                fds.push_back({fd, POLLIN, 0});
            if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
            for (std::size_t i = fds.size() - 1; i >= 1; --i) {
                if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                char buf[4096];
                const ssize_t n = ::recv(fds[i].fd, buf, sizeof buf, MSG_DONTWAIT);
                if (n > 0) {
                    std::lock_guard lock(m_);
                    received_[open_[i - 1].second].append(buf, static_cast<std::size_t>(n));
                } else {  // the client gave up: it was never answered
                    ::close(fds[i].fd);
                    open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(i - 1));
                }
            }
            if (fds[0].revents & POLLIN) {
                const int fd = ::accept(listener_, nullptr, nullptr);
                if (fd >= 0) {
                    std::lock_guard lock(m_);
                    open_.emplace_back(fd, received_.size());
                    received_.emplace_back();
                }
            }
        }
        for (const auto& [fd, index] : open_)
            ::close(fd);
    }

    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
    std::vector<std::pair<int, std::size_t>> open_;  // the thread's: fd, index in received_
    mutable std::mutex m_;
    std::vector<std::string> received_;  // by connection
};

}  // namespace mtdesk::test
