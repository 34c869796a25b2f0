#pragma once
// One HTTP exchange with a server (cpp-httplib underneath, TLS through OpenSSL for https://),
// with what the remote engine needs from it: the API key as a Bearer token, connect and read
// timeouts, a streamed response body, and abort() from another thread that ends the exchange
// at once (the server sees the connection close and stops generating). The httplib header
// stays out of every other file.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "remote/server_url.h"

namespace mtdesk::remote {

/// Connection settings shared by every request to the servers.
struct HttpSettings {
    std::string api_key;  ///< sent as "Authorization: Bearer <key>" when not empty
    std::chrono::milliseconds connect_timeout{5000};
    /// Longest silence while waiting for the answer or its next piece.
    std::chrono::milliseconds read_timeout{120000};
    std::string ca_file;  ///< PEM certificates to trust for https ("" = the system's store)
};

/// How an exchange ended.
struct HttpResponse {
    /// Empty when the server answered (whatever the status); otherwise what went wrong on the
    /// way ("cannot connect …", "timed out …"), for messages.
    std::string network_error;
    bool aborted = false;  ///< abort() ended it
    int status = 0;        ///< the HTTP status, when the server answered
    std::string content_type;
    /// The body, unless it went to the receiver: a successful answer that is not an event stream
    /// (at most 64 MiB), or an error answer (at most 64 KiB, for its message).
    std::string body;
};

/// A duration as messages give it: "2 s", "0.5 s".
std::string seconds(std::chrono::milliseconds ms);

/// Receives a successful event-stream body piece by piece; return false to stop reading.
using BodyReceiver = std::function<bool(std::string_view piece)>;

/// One request at a time, on the calling thread; abort() may come from any thread.
class HttpCall {
  public:
    HttpCall(const ServerUrl& url, const HttpSettings& settings);
    ~HttpCall();
    HttpCall(const HttpCall&) = delete;
    HttpCall& operator=(const HttpCall&) = delete;

    /// POSTs `json` to `path`. A 2xx answer of type text/event-stream goes to `receiver` as it
    /// arrives; any other answer is collected in HttpResponse::body.
    HttpResponse post_json(const std::string& path, const std::string& json,
                           const BodyReceiver& receiver);
    /// GETs `path`, the body collected.
    HttpResponse get(const std::string& path);

    /// Ends the exchange in progress (or the next one, at its start) as aborted. Thread-safe;
    /// calling it again is harmless (the engine repeats it until the call has returned, since a
    /// connection still being opened cannot be shut yet).
    void abort();

  private:
    struct Impl;
    HttpResponse send(const std::string& method, const std::string& path, const std::string* json,
                      const BodyReceiver& receiver);

    std::unique_ptr<Impl> impl_;
    std::atomic<bool> aborted_{false};
};

}  // namespace mtdesk::remote
