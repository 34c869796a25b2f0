#include "serve/http_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "mtdesk/error.h"
#include "serve/client_connection.h"
#include "serve/openai_protocol.h"

namespace mtdesk::serve {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// How long a connection may wait between requests; a client that keeps one open longer without
// a request is closed (HTTP lets a server close an idle connection at any time).
constexpr auto kKeepAlive = 5s;
// While connections wait for a thread, an idle one gives its thread up after this long.
constexpr auto kIdleUnderPressure = 250ms;
// A request's line and headers must arrive within this, however slowly they trickle in
// (slowloris), and be at most this large (cpp-httplib bounds each line, not their number).
constexpr auto kHeadTimeout = 10s;
constexpr std::size_t kMaxHeadBytes = 64u << 10;
// A request body must arrive within this once its headers have.
constexpr auto kBodyTimeout = 60s;
// Silence allowed within a request, and for a write to make progress.
constexpr auto kReadTimeout = 5s;
constexpr auto kWriteTimeout = 5s;
// How often waiting reads look at the server stopping.
constexpr auto kStopPoll = 50ms;
constexpr std::size_t kMaxKeepAliveRequests = 100;

int millis(Clock::duration d) {
    return static_cast<int>(
        std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(d).count()));
}

// The numeric address and port of a socket address, as cpp-httplib reports them.
void numeric_address(const sockaddr_storage& a, socklen_t len, std::string& ip, int& port) {
    char host[NI_MAXHOST], service[NI_MAXSERV];
    if (getnameinfo(reinterpret_cast<const sockaddr*>(&a), len, host, sizeof host, service,
                    sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        return;
    ip = host;
    port = std::atoi(service);
}

// cpp-httplib's thread pool, counting the connections that wait for a thread: while some do,
// idle keep-alive connections give theirs up.
class RequestPool final : public httplib::TaskQueue {
  public:
    explicit RequestPool(std::size_t threads) {
        for (std::size_t i = 0; i < threads; ++i)
            threads_.emplace_back([this] { run(); });
    }
    void enqueue(std::function<void()> fn) override {
        {
            std::lock_guard lock(m_);
            jobs_.push_back(std::move(fn));
            ++waiting_;
        }
        wake_.notify_one();
    }
    void shutdown() override {
        {
            std::lock_guard lock(m_);
            shutdown_ = true;
        }
        wake_.notify_all();
        for (std::thread& t : threads_)
            t.join();
    }
    /// Connections accepted and not yet given a thread.
    bool busy() const { return waiting_.load() > 0; }

  private:
    void run() {
        for (;;) {
            std::function<void()> fn;
            {
                std::unique_lock lock(m_);
                wake_.wait(lock, [&] { return shutdown_ || !jobs_.empty(); });
                if (jobs_.empty()) return;  // shut down
                fn = std::move(jobs_.front());
                jobs_.pop_front();
                --waiting_;
            }
            fn();
        }
    }

    std::vector<std::thread> threads_;
    std::deque<std::function<void()>> jobs_;
    std::atomic<int> waiting_{0};
    bool shutdown_ = false;
    std::mutex m_;
    std::condition_variable wake_;
};

// One client connection for all its requests. cpp-httplib (0.11) reads each request through a
// stream of its own whose read-ahead buffer dies with it, so pipelined requests that arrived
// with the first were lost; this one keeps its buffer across requests, bounds how long and how
// large a request's head may be, and writes even after the client has half-closed.
class Connection final : public httplib::Stream {
  public:
    Connection(int fd, const std::atomic<socket_t>& listener)
        : fd_(fd), listener_(listener), buffer_(16u << 10) {}

    /// Waits for the next request's first bytes; false when the connection should close
    /// instead: idle for kKeepAlive (for kIdleUnderPressure while `busy`), or stopping.
    bool wait_for_request(const std::function<bool()>& busy) {
        if (begin_ < end_) return true;
        const auto start = Clock::now();
        for (;;) {
            if (stopping()) return false;
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, millis(kStopPoll)) > 0) return true;  // data, EOF or an error
            const auto idle = Clock::now() - start;
            if (idle >= kKeepAlive || (idle >= kIdleUnderPressure && busy())) return false;
        }
    }
    /// A request starts: its head must come within kHeadTimeout.
    void begin_request() {
        deadline_ = Clock::now() + kHeadTimeout;
        head_bytes_ = 0;
        in_head_ = true;
        body_pending_ = false;
        close_ = false;
    }
    /// Its head has been read: the body must come within kBodyTimeout.
    void head_read() {
        in_head_ = false;
        deadline_ = Clock::now() + kBodyTimeout;
    }
    /// Its body has been read.
    void body_read() {
        deadline_.reset();
        body_pending_ = false;
    }
    /// The request announces a body (read by its handler, or the connection closes after it).
    void expect_body() { body_pending_ = true; }
    /// The connection closes after this response (a refused request whose body is unread).
    void close_after_response() { close_ = true; }
    /// Whether the connection must close now: asked to, or a request's head or body was not
    /// read whole (what is left of it would be taken for the next request).
    bool closing() const { return close_ || in_head_ || body_pending_; }

    bool is_readable() const override {
        if (begin_ < end_) return true;
        pollfd p{fd_, POLLIN, 0};
        return ::poll(&p, 1, millis(kReadTimeout)) > 0;
    }
    bool is_writable() const override {
        // Unlike cpp-httplib's own stream, not "is anything left to read": a half-closed client
        // has nothing left to send and still reads its answer.
        pollfd p{fd_, POLLOUT, 0};
        return ::poll(&p, 1, millis(kWriteTimeout)) > 0 && !(p.revents & (POLLERR | POLLHUP));
    }
    ssize_t read(char* ptr, size_t size) override {
        if (begin_ == end_) {
            const ssize_t n = fill();
            if (n <= 0) return n;
        }
        std::size_t n = std::min(size, end_ - begin_);
        if (in_head_) {
            if (head_bytes_ + n > kMaxHeadBytes) return -1;  // cpp-httplib answers 400
            head_bytes_ += n;
        }
        std::memcpy(ptr, buffer_.data() + begin_, n);
        begin_ += n;
        return static_cast<ssize_t>(n);
    }
    ssize_t write(const char* ptr, size_t size) override {
        if (!is_writable()) return -1;
        ssize_t n;
        do {
            n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
        } while (n < 0 && errno == EINTR);
        return n;
    }
    void get_remote_ip_and_port(std::string& ip, int& port) const override {
        sockaddr_storage a{};
        socklen_t len = sizeof a;
        if (getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
            numeric_address(a, len, ip, port);
    }
    void get_local_ip_and_port(std::string& ip, int& port) const override {
        sockaddr_storage a{};
        socklen_t len = sizeof a;
        if (getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
            numeric_address(a, len, ip, port);
    }
    socket_t socket() const override { return fd_; }

  private:
    bool stopping() const { return listener_.load() == INVALID_SOCKET; }

    // Reads what has arrived into the empty buffer: its size, 0 at the end of the stream, -1
    // on an error, a silence of kReadTimeout, the request's deadline or the server stopping.
    ssize_t fill() {
        begin_ = end_ = 0;
        const auto silence_ends = Clock::now() + kReadTimeout;
        for (;;) {
            if (stopping()) return -1;
            const auto now = Clock::now();
            auto until = silence_ends;
            if (deadline_) until = std::min(until, *deadline_);
            if (now >= until) return -1;
            pollfd p{fd_, POLLIN, 0};
            const int ready =
                ::poll(&p, 1, millis(std::min<Clock::duration>(until - now, kStopPoll)));
            if (ready < 0 && errno != EINTR) return -1;
            if (ready <= 0) continue;
            ssize_t n;
            do {
                n = ::recv(fd_, buffer_.data(), buffer_.size(), 0);
            } while (n < 0 && errno == EINTR);
            if (n > 0) end_ = static_cast<std::size_t>(n);
            return n;
        }
    }

    int fd_;
    const std::atomic<socket_t>& listener_;
    std::vector<char> buffer_;
    std::size_t begin_ = 0, end_ = 0;  // the unread part of buffer_
    std::optional<Clock::time_point> deadline_;
    std::size_t head_bytes_ = 0;
    bool in_head_ = false;
    bool body_pending_ = false;
    bool close_ = false;
};

// The connection whose request this thread is answering (cpp-httplib runs a connection's
// requests, handlers included, on one thread).
thread_local Connection* current_connection = nullptr;

// cpp-httplib's server with the connection loop above.
class ServerCore final : public httplib::Server {
  public:
    explicit ServerCore(std::size_t threads) {
        new_task_queue = [this, threads] {
            auto* pool = new RequestPool(threads);
            pool_ = pool;
            return pool;
        };
    }

  private:
    bool process_and_close_socket(socket_t sock) override {
        bool ok = true;
        {
            Connection connection(sock, svr_sock_);
            const auto busy = [this] {
                const RequestPool* pool = pool_.load();
                return pool && pool->busy();
            };
            for (std::size_t n = 1; n <= kMaxKeepAliveRequests; ++n) {
                if (!connection.wait_for_request(busy)) break;
                connection.begin_request();
                bool client_closes = false;
                current_connection = &connection;
                ok = process_request(connection, n == kMaxKeepAliveRequests, client_closes,
                                     [](httplib::Request& req) { normalise_body_headers(req); });
                current_connection = nullptr;
                if (!ok || client_closes || connection.closing()) break;
            }
        }
        ::shutdown(sock, SHUT_RDWR);
        ::close(sock);
        return ok;
    }

    // Before routing. A request with neither Content-Length nor Transfer-Encoding has no body
    // (RFC 9112 §6.3), where cpp-httplib would read one until the client closes. And it would
    // parse a multipart/form-data body into form parts for the routes, which all take JSON:
    // such a body is read as it is (and refused unless it is JSON).
    static void normalise_body_headers(httplib::Request& req) {
        if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding"))
            req.headers.emplace("Content-Length", "0");
        if (!req.is_multipart_form_data()) return;
        req.headers.erase("Content-Type");
        req.headers.emplace("Content-Type", "application/octet-stream");
    }

    std::atomic<RequestPool*> pool_{nullptr};
};

// The routes and their one method, for 405 answers and the Allow header.
struct Route {
    const char* pattern;  // regex, as cpp-httplib matches routes
    const char* method;
};
constexpr Route kRoutes[] = {
    {"/health", "GET"},        {"/v1/models", "GET"},
    {"/v1/models/.+", "GET"},  {"/v1/chat/completions", "POST"},
    {"/v1/translate", "POST"},
};

const Route* find_route(const std::string& path) {
    for (const Route& r : kRoutes)
        if (std::regex_match(path, std::regex(r.pattern))) return &r;
    return nullptr;
}

// The routes that take a body.
bool takes_body(const httplib::Request& req) {
    return req.method == "POST" &&
           (req.path == "/v1/chat/completions" || req.path == "/v1/translate");
}

// 404 for a path that is no route, 405 (with Allow) for a route asked with another method.
ApiError route_error(const httplib::Request& req, httplib::Response& res) {
    if (const Route* r = find_route(req.path)) {
        res.set_header("Allow", r->method);
        return ApiError(405,
                        req.method + " is not allowed on " + req.path + " (use " + r->method + ")",
                        "invalid_request_error", {}, "method_not_allowed");
    }
    return ApiError(404, "no such route: " + req.method + " " + req.path, "invalid_request_error",
                    {}, "not_found");
}

ApiError too_large(std::size_t max_body_bytes) {
    return ApiError(413,
                    "the request body is larger than this server accepts (" +
                        std::to_string(max_body_bytes) + " bytes)",
                    "invalid_request_error", {}, "request_too_large");
}

bool all_digits(const std::string& s) {
    return !s.empty() && s.size() <= 19 &&
           std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Where the request's body ends, as RFC 9112 §6 has it: a Content-Length that is not a number,
// or comes twice with different values, or together with Transfer-Encoding, leaves it unknown
// (400), as does a transfer coding other than chunked (501); a length over the limit is 413
// before a byte of the body is read. `has_body` tells whether a body follows the head.
std::optional<ApiError> framing_error(const httplib::Request& req, std::size_t max_body_bytes,
                                      bool& has_body) {
    const auto lengths = req.headers.equal_range("Content-Length");
    const auto codings = req.headers.equal_range("Transfer-Encoding");
    const bool has_length = lengths.first != lengths.second;
    const bool has_coding = codings.first != codings.second;
    has_body = has_length || has_coding;
    if (has_coding) {
        if (std::next(codings.first) != codings.second ||
            strcasecmp(codings.first->second.c_str(), "chunked") != 0)
            return ApiError(501, "only the chunked transfer coding is supported",
                            "invalid_request_error", {}, "unsupported_transfer_encoding");
        if (has_length)
            return ApiError(400,
                            "a request must not have both Content-Length and "
                            "Transfer-Encoding");
        return std::nullopt;
    }
    if (!has_length) return std::nullopt;
    const std::string& first = lengths.first->second;
    for (auto it = lengths.first; it != lengths.second; ++it) {
        if (!all_digits(it->second))
            return ApiError(400,
                            "Content-Length must be a number of bytes, not '" + it->second + "'");
        if (it->second != first) return ApiError(400, "conflicting Content-Length headers");
    }
    const uint64_t length = std::stoull(first);
    has_body = length > 0;
    if (length > max_body_bytes) return too_large(max_body_bytes);
    return std::nullopt;
}

// The token of "Authorization: Bearer <token>", the scheme in any case (RFC 7235 §2.1).
std::optional<std::string_view> bearer_token(std::string_view auth) {
    constexpr std::string_view kScheme = "bearer";
    if (auth.size() <= kScheme.size() || auth[kScheme.size()] != ' ') return std::nullopt;
    for (std::size_t i = 0; i < kScheme.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(auth[i])) != kScheme[i]) return std::nullopt;
    std::string_view token = auth.substr(kScheme.size());
    token.remove_prefix(std::min(token.find_first_not_of(' '), token.size()));
    if (token.empty()) return std::nullopt;
    return token;
}

// Compares every byte whatever the first difference, so the time taken does not tell an
// attacker how much of a guessed key was right.
bool same_key(std::string_view a, std::string_view b) {
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (std::size_t i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
    return diff == 0;
}

void set_error(httplib::Response& res, const ApiError& e) {
    res.status = e.status();
    res.set_content(error_body(e), "application/json");
}

// Tells the client that the connection closes after this answer, and closes it.
void close_after(httplib::Response& res) {
    if (!res.has_header("Connection")) res.set_header("Connection", "close");
    if (current_connection) current_connection->close_after_response();
}

}  // namespace

bool is_loopback_host(std::string_view host) {
    if (host == "localhost" || host == "::1" || host == "[::1]") return true;
    in_addr a{};
    const std::string h(host);
    return inet_pton(AF_INET, h.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

struct HttpServer::Impl {
    using Handler = std::function<Reply(std::string_view body, const ClientWatch& client)>;

    Impl(TranslationEngine& engine, ServerOptions o, std::size_t threads)
        : options(std::move(o)),
          endpoints(engine, options.model_name, options.limits),
          http(threads) {}

    void setup();
    std::string read_body(const httplib::ContentReader& reader, httplib::Response& res) const;
    void answer(httplib::Response& res, const httplib::ContentReader* reader, const Handler& route);

    ServerOptions options;
    Endpoints endpoints;  // before `http`: streams still running refer to it
    ServerCore http;
    int listen_fd = -1;  // the listening socket, seen when cpp-httplib sets its options
    std::mutex phase_mutex;
    bool stopping = false;
    enum class Phase { Idle, Starting, Done } phase = Phase::Idle;
};

// The body as it arrives, refused (413) as soon as it grows past the limit: a chunked body
// announces no length, and cpp-httplib would read it whole first.
std::string HttpServer::Impl::read_body(const httplib::ContentReader& reader,
                                        httplib::Response& res) const {
    std::string body;
    bool over = false;
    const bool ok = reader([&](const char* data, size_t n) {
        if (n > options.max_body_bytes - body.size()) {
            over = true;
            return false;
        }
        body.append(data, n);
        return true;
    });
    if (over || !ok) close_after(res);  // the rest of the body is still on its way
    if (over) throw too_large(options.max_body_bytes);
    if (res.status == 415)
        throw ApiError(415, "compressed request bodies (Content-Encoding) are not supported",
                       "invalid_request_error", {}, "unsupported_content_encoding");
    if (!ok)
        throw ApiError(400,
                       "the request body could not be read (cut off, malformed, or sent "
                       "too slowly)");
    if (current_connection) current_connection->body_read();
    return body;
}

void HttpServer::Impl::answer(httplib::Response& res, const httplib::ContentReader* reader,
                              const Handler& route) {
    try {
        const std::string body = reader ? read_body(*reader, res) : std::string();
        auto connection = std::make_shared<ClientConnection>(
            current_connection ? current_connection->socket() : -1);
        ClientWatch client;
        client.gone = [connection] { return connection->gone(); };
        client.stopped_sending = [connection] { return connection->stopped_sending(); };
        Reply r = route(body, client);
        res.status = r.status;
        if (!r.stream) {
            res.set_content(r.body, r.content_type);
            if (r.release) r.release();
            return;
        }
        res.set_header("Cache-Control", "no-cache");
        res.set_chunked_content_provider(
            r.content_type,
            [stream = r.stream](size_t, httplib::DataSink& sink) {
                const bool ok =
                    stream([&](std::string_view b) { return sink.write(b.data(), b.size()); });
                if (ok) sink.done();
                return ok;  // false: the connection is closed
            },
            [release = r.release](bool) {
                if (release) release();
            });
    } catch (const ApiError& e) {
        set_error(res, e);
    }
}

void HttpServer::Impl::setup() {
    // cpp-httplib's default sets SO_REUSEPORT, which would let a second server take the same
    // port silently; SO_REUSEADDR alone lets a restart reuse it at once.
    http.set_socket_options([this](socket_t sock) {
        int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        listen_fd = sock;
    });
    http.set_payload_max_length(options.max_body_bytes);
    // What the Keep-Alive header announces; the connection loop above applies them.
    http.set_keep_alive_max_count(kMaxKeepAliveRequests);
    http.set_keep_alive_timeout(
        std::chrono::duration_cast<std::chrono::seconds>(kKeepAlive).count());

    // After the request's head, before its body: framing and size checks, routes that take no
    // body, then the API key.
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        using Handled = httplib::Server::HandlerResponse;
        bool has_body = false;
        const std::optional<ApiError> framing =
            framing_error(req, options.max_body_bytes, has_body);
        if (current_connection) {
            current_connection->head_read();
            if (has_body) current_connection->expect_body();
        }
        auto refuse = [&](const ApiError& e) {
            set_error(res, e);
            if (has_body) close_after(res);  // the body is not read
            return Handled::Handled;
        };
        if (framing) return refuse(*framing);
        // cpp-httplib reads the body of a request no route takes, whole: refused unread.
        if (has_body && !takes_body(req)) {
            const Route* r = find_route(req.path);
            if (!r || req.method != r->method) return refuse(route_error(req, res));
        }
        if (options.api_key.empty() || req.path.rfind("/v1/", 0) != 0) return Handled::Unhandled;
        const std::string auth = req.get_header_value("Authorization");
        if (const auto token = bearer_token(auth); token && same_key(*token, options.api_key))
            return Handled::Unhandled;
        res.set_header("WWW-Authenticate", "Bearer");
        return refuse(ApiError(401,
                               auth.empty() ? "no API key given: send 'Authorization: Bearer <key>'"
                                            : "incorrect API key",
                               "invalid_request_error", {}, "invalid_api_key"));
    });

    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
        const Reply r = endpoints.health();
        res.set_content(r.body, r.content_type);
    });
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
        answer(res, nullptr, [this](auto, const auto&) { return endpoints.models(); });
    });
    http.Get("/v1/models/(.+)", [this](const httplib::Request& req, httplib::Response& res) {
        const std::string id = req.matches[1];
        answer(res, nullptr, [this, &id](auto, const auto&) { return endpoints.model(id); });
    });
    // Content readers: the body is read here, as JSON whatever its Content-Type says
    // (curl -d sends application/x-www-form-urlencoded, which cpp-httplib would otherwise
    // refuse past 8 KiB), and bounded as it arrives.
    http.Post("/v1/chat/completions", [this](const httplib::Request&, httplib::Response& res,
                                             const httplib::ContentReader& reader) {
        answer(res, &reader, [this](std::string_view body, const ClientWatch& c) {
            return endpoints.chat(body, c);
        });
    });
    http.Post("/v1/translate", [this](const httplib::Request&, httplib::Response& res,
                                      const httplib::ContentReader& reader) {
        answer(res, &reader, [this](std::string_view body, const ClientWatch& c) {
            return endpoints.translate(body, c);
        });
    });

    // Refusals cpp-httplib makes itself (no route, unreadable request) get a JSON body like
    // every other error.
    http.set_error_handler(httplib::Server::HandlerWithResponse(
        [this](const httplib::Request& req, httplib::Response& res) {
            if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
            ApiError e(res.status, "the request failed (HTTP " + std::to_string(res.status) + ")");
            if (res.status == 404) {
                e = route_error(req, res);
            } else if (res.status == 413) {
                e = too_large(options.max_body_bytes);
            } else if (res.status == 400) {
                e = ApiError(400, "malformed HTTP request");
            }
            // A request cpp-httplib could not read (a malformed or too slow head, a URI too
            // long): the connection closes after the answer.
            if (res.status == 400 || res.status == 414) close_after(res);
            set_error(res, e);
            return httplib::Server::HandlerResponse::Handled;
        }));
    http.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
            std::string what = "internal error";
            try {
                std::rethrow_exception(ep);
            } catch (const std::exception& e) {
                what = e.what();
            } catch (...) {
            }
            set_error(res, ApiError(500, what, "server_error"));
        });
    if (options.log_requests)
        http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
            std::fprintf(stderr, "mtdesk serve: %s:%d \"%s %s\" %d\n", req.remote_addr.c_str(),
                         req.remote_port, req.method.c_str(), req.path.c_str(), res.status);
        });
}

HttpServer::HttpServer(TranslationEngine& engine, ServerOptions options) {
    if (!is_loopback_host(options.host) && options.api_key.empty())
        throw Error("refusing to listen on " + options.host +
                    " without an API key: anyone who can reach it could use this machine's "
                    "model; give --api-key KEY (or MTDESK_API_KEY), or listen on 127.0.0.1");
    if (options.port < 0 || options.port > 65535) throw Error("the port must be 0 .. 65535");
    if (options.limits.max_tokens < 1) throw Error("the most tokens per answer must be >= 1");
    if (options.max_body_bytes < 1) throw Error("the most bytes per request must be >= 1");
    // Each request answered waits on a thread; idle connections give theirs up when others
    // wait for one, so the pool needs room for the engine's batch and for slow clients.
    const int threads =
        options.threads > 0 ? options.threads : std::max(64, 2 * engine.max_in_flight() + 8);
    impl_ = std::make_unique<Impl>(engine, std::move(options), static_cast<std::size_t>(threads));
    impl_->setup();
}

HttpServer::~HttpServer() {
    stop();
}

int HttpServer::bind() {
    const ServerOptions& o = impl_->options;
    errno = 0;
    int port = o.port;
    bool ok = false;
    if (port == 0) {
        port = impl_->http.bind_to_any_port(o.host);
        ok = port > 0;
    } else {
        ok = impl_->http.bind_to_port(o.host, port);
    }
    if (!ok) {
        const int err = errno;
        throw Error("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                    (err ? std::string(" (") + std::strerror(err) + ")" : std::string()) +
                    ": is the port taken, or the address not this machine's?");
    }
    // Debian's compiled cpp-httplib listens with a backlog of 5: dozens of clients connecting
    // at once would overflow it (connections dropped or retried a second later). Listening
    // again on the bound socket raises the backlog.
    if (impl_->listen_fd >= 0) ::listen(impl_->listen_fd, SOMAXCONN);
    return port;
}

void HttpServer::serve() {
    {
        std::lock_guard lock(impl_->phase_mutex);
        if (impl_->stopping) return;
        impl_->phase = Impl::Phase::Starting;
    }
    impl_->http.listen_after_bind();
    std::lock_guard lock(impl_->phase_mutex);
    impl_->phase = Impl::Phase::Done;
}

void HttpServer::stop() {
    impl_->endpoints.stop();
    for (;;) {
        {
            std::lock_guard lock(impl_->phase_mutex);
            impl_->stopping = true;
            // cpp-httplib ignores a stop() before its listening loop runs: wait for it.
            if (impl_->phase != Impl::Phase::Starting || impl_->http.is_running()) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    impl_->http.stop();
}

}  // namespace mtdesk::serve
