#pragma once
// The HTTP side of `mtdesk serve` (cpp-httplib, whose header stays in http_server.cpp): the
// routes, the API key, the body size limit (checked as the body arrives), JSON errors in
// OpenAI's shape for every refusal (400, 401, 404, 405, 413, ...), streamed answers, one
// connection loop that answers pipelined requests in order and bounds slow and idle clients,
// and a stop that ends open requests.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "mtdesk/translate/translation_engine.h"
#include "serve/endpoints.h"

namespace mtdesk::serve {

/// How `mtdesk serve` listens and what it accepts.
struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8080;  ///< 0: any free port (bind() says which)
    /// Required as "Authorization: Bearer <key>" on /v1/ when not empty (the scheme in any case).
    std::string api_key;
    std::string model_name;
    Limits limits;
    std::size_t max_body_bytes = 1u << 20;
    /// Requests answered at once (each waits on one thread); more wait for a thread, and while
    /// they do, idle keep-alive connections are closed. 0: twice the engine's batch plus 8, at
    /// least 64.
    int threads = 0;
    bool log_requests = true;  ///< one line per request on stderr
};

/// True for addresses only this machine reaches: "localhost", 127.0.0.0/8, "::1".
bool is_loopback_host(std::string_view host);

/// `mtdesk serve`'s HTTP server over one engine.
class HttpServer {
  public:
    /// Throws mtdesk::Error for a host other than loopback without an API key (the translation
    /// service would be open to the network) and for bad options. `engine` must outlive it.
    HttpServer(TranslationEngine& engine, ServerOptions options);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    /// Binds and listens (connections wait until serve()); returns the port. Throws
    /// mtdesk::Error when the address cannot be used (port taken, not this machine's).
    int bind();
    /// Answers requests until stop(); returns once every request being answered has ended.
    void serve();
    /// From any thread (also before serve()): requests being answered cancel their jobs and
    /// end, and serve() returns.
    void stop();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace mtdesk::serve
