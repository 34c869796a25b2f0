#include "serve/http_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "mtdesk/error.h"
#include "serve/client_connection.h"
#include "serve/openai_protocol.h"

namespace mtdesk::serve {
namespace {

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

}  // namespace

bool is_loopback_host(std::string_view host) {
    if (host == "localhost" || host == "::1" || host == "[::1]") return true;
    in_addr a{};
    const std::string h(host);
    return inet_pton(AF_INET, h.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

struct HttpServer::Impl {
    Impl(TranslationEngine& engine, ServerOptions o)
        : options(std::move(o)), endpoints(engine, options.model_name, options.limits) {}

    void setup(int engine_batch);
    void answer(const httplib::Request& req, httplib::Response& res,
                const std::function<Reply(const std::function<bool()>&)>& route);

    ServerOptions options;
    Endpoints endpoints;  // before `http`: streams still running refer to it
    httplib::Server http;
    int listen_fd = -1;  // the listening socket, seen when cpp-httplib sets its options
    std::mutex phase_mutex;
    bool stopping = false;
    enum class Phase { Idle, Starting, Done } phase = Phase::Idle;
};

void HttpServer::Impl::answer(const httplib::Request& req, httplib::Response& res,
                              const std::function<Reply(const std::function<bool()>&)>& route) {
    try {
        if (req.body.size() > options.max_body_bytes)  // a chunked body beyond the limit
            throw ApiError(413, "the request body is larger than this server accepts (" +
                                    std::to_string(options.max_body_bytes) + " bytes)");
        auto connection =
            std::make_shared<ClientConnection>(req.remote_addr, req.remote_port, req.local_port);
        Reply r = route([connection] { return connection->gone(); });
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

void HttpServer::Impl::setup(int engine_batch) {
    const int threads = options.threads > 0 ? options.threads : std::max(16, 2 * engine_batch + 8);
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    // cpp-httplib's default sets SO_REUSEPORT, which would let a second server take the same
    // port silently; SO_REUSEADDR alone lets a restart reuse it at once.
    http.set_socket_options([this](socket_t sock) {
        int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        listen_fd = sock;
    });
    http.set_payload_max_length(options.max_body_bytes);
    http.set_keep_alive_max_count(1000);

    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        if (options.api_key.empty() || req.path.rfind("/v1/", 0) != 0)
            return httplib::Server::HandlerResponse::Unhandled;
        const std::string auth = req.get_header_value("Authorization");
        constexpr std::string_view kBearer = "Bearer ";
        if (auth.size() > kBearer.size() && auth.compare(0, kBearer.size(), kBearer) == 0 &&
            same_key(std::string_view(auth).substr(kBearer.size()), options.api_key))
            return httplib::Server::HandlerResponse::Unhandled;
        res.set_header("WWW-Authenticate", "Bearer");
        set_error(res,
                  ApiError(401,
                           auth.empty() ? "no API key given: send 'Authorization: Bearer <key>'"
                                        : "incorrect API key",
                           "invalid_request_error", {}, "invalid_api_key"));
        return httplib::Server::HandlerResponse::Handled;
    });

    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
        const Reply r = endpoints.health();
        res.set_content(r.body, r.content_type);
    });
    http.Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
        answer(req, res, [this](const auto&) { return endpoints.models(); });
    });
    http.Get("/v1/models/(.+)", [this](const httplib::Request& req, httplib::Response& res) {
        const std::string id = req.matches[1];
        answer(req, res, [this, &id](const auto&) { return endpoints.model(id); });
    });
    http.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
        answer(req, res, [&](const auto& gone) { return endpoints.chat(req.body, gone); });
    });
    http.Post("/v1/translate", [this](const httplib::Request& req, httplib::Response& res) {
        answer(req, res, [&](const auto& gone) { return endpoints.translate(req.body, gone); });
    });

    // Refusals cpp-httplib makes itself (no route, body too large, unreadable request) get a
    // JSON body like every other error.
    http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req,
                                                                   httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        ApiError e(res.status, "the request failed (HTTP " + std::to_string(res.status) + ")");
        if (res.status == 404) {
            if (const Route* r = find_route(req.path)) {
                res.status = 405;
                res.set_header("Allow", r->method);
                e = ApiError(
                    405, req.method + " is not allowed on " + req.path + " (use " + r->method + ")",
                    "invalid_request_error", {}, "method_not_allowed");
            } else {
                e = ApiError(404, "no such route: " + req.method + " " + req.path,
                             "invalid_request_error", {}, "not_found");
            }
        } else if (res.status == 413) {
            e = ApiError(413, "the request body is larger than this server accepts",
                         "invalid_request_error", {}, "request_too_large");
        } else if (res.status == 400) {
            e = ApiError(400, "malformed HTTP request");
        }
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
    const int batch = engine.max_in_flight();
    impl_ = std::make_unique<Impl>(engine, std::move(options));
    impl_->setup(batch);
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
