#include "remote/http_call.h"

#include <httplib.h>

#include <algorithm>
#include <cstdio>

namespace mtdesk::remote {
namespace {

constexpr std::size_t kMaxBody = 64u << 20;       // a whole (non-streamed) answer
constexpr std::size_t kMaxErrorBody = 64u << 10;  // enough for any error message

// `silent`: how long nothing had come from the server when the exchange failed, which tells a
// read timeout from a connection the server closed (cpp-httplib reports both as Error::Read).
std::string describe(httplib::Error e, const HttpSettings& settings,
                     std::chrono::steady_clock::duration silent) {
    using E = httplib::Error;
    // A timeout fires after read_timeout of silence; a close comes sooner (allowing for the
    // scheduler's slack).
    const bool timed_out = silent >= settings.read_timeout * 9 / 10;
    switch (e) {
        case E::Connection:
            return "cannot connect (connection refused, or the host cannot be reached or "
                   "resolved)";
        case E::ConnectionTimeout:
            return "no connection within " + seconds(settings.connect_timeout);
        case E::Read:
            return timed_out ? "nothing received for " + seconds(settings.read_timeout)
                             : "the connection was closed by the server before the answer was "
                               "complete";
        case E::Write:
            return "the connection broke while sending the request";
        case E::SSLConnection:
            return "the TLS handshake failed (is it an https server?)";
        case E::SSLLoadingCerts:
            return "the CA certificates could not be loaded" +
                   (settings.ca_file.empty() ? std::string() : " from " + settings.ca_file);
        case E::SSLServerVerification:
            return "the server's TLS certificate is not trusted or does not match its name";
        case E::Compression:
            return "the answer's compressed body could not be decoded";
        case E::ExceedRedirectCount:
            return "too many redirects";
        default:
            return httplib::to_string(e);
    }
}

}  // namespace

std::string seconds(std::chrono::milliseconds ms) {
    const double s = static_cast<double>(ms.count()) / 1000.0;
    char buf[32];
    std::snprintf(buf, sizeof buf, s == static_cast<long>(s) ? "%.0f s" : "%.1f s", s);
    return buf;
}

struct HttpCall::Impl {
    httplib::Client client;
    HttpSettings settings;

    Impl(const ServerUrl& url, const HttpSettings& s) : client(url.origin()), settings(s) {}
};

HttpCall::HttpCall(const ServerUrl& url, const HttpSettings& settings)
    : impl_(std::make_unique<Impl>(url, settings)) {
    httplib::Client& c = impl_->client;
    c.set_connection_timeout(settings.connect_timeout);
    c.set_read_timeout(settings.read_timeout);
    c.set_write_timeout(settings.read_timeout);
    c.set_keep_alive(false);  // one exchange per call; abort() closes its connection
    c.set_follow_location(false);
    if (!settings.api_key.empty()) c.set_bearer_token_auth(settings.api_key);
    if (url.scheme == "https") {
        c.enable_server_certificate_verification(true);
        if (!settings.ca_file.empty()) c.set_ca_cert_path(settings.ca_file);
    }
}

HttpCall::~HttpCall() = default;

void HttpCall::abort() {
    aborted_ = true;
    // Shuts the connection of a request in progress; waits while one is being opened.
    impl_->client.stop();
}

HttpResponse HttpCall::post_json(const std::string& path, const std::string& json,
                                 const BodyReceiver& receiver) {
    return send("POST", path, &json, receiver);
}

HttpResponse HttpCall::get(const std::string& path) {
    return send("GET", path, nullptr, {});
}

HttpResponse HttpCall::send(const std::string& method, const std::string& path,
                            const std::string* json, const BodyReceiver& receiver) {
    HttpResponse out;
    if (aborted_) {
        out.aborted = true;
        out.network_error = "cancelled";
        return out;
    }
    httplib::Request req;
    req.method = method;
    req.path = path;
    if (json) {
        req.body = *json;
        req.set_header("Content-Type", "application/json");
        req.set_header("Accept", "text/event-stream, application/json");
    } else {
        req.set_header("Accept", "application/json");
    }
    bool streaming = false;
    bool too_long = false;
    auto last_heard = std::chrono::steady_clock::now();  // the request sent, or the last bytes
    req.response_handler = [&](const httplib::Response& r) {
        last_heard = std::chrono::steady_clock::now();
        out.status = r.status;
        out.content_type = r.get_header_value("Content-Type");
        streaming = receiver && r.status / 100 == 2 &&
                    out.content_type.find("text/event-stream") != std::string::npos;
        return !aborted_;
    };
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
        last_heard = std::chrono::steady_clock::now();
        if (aborted_) return false;
        if (streaming) return receiver(std::string_view(data, n));
        const std::size_t limit = out.status / 100 == 2 ? kMaxBody : kMaxErrorBody;
        const std::size_t room = limit - std::min(limit, out.body.size());
        out.body.append(data, std::min(room, n));
        if (n > room && out.status / 100 == 2) {
            too_long = true;
            return false;
        }
        return true;  // an error body past its limit is read on and dropped
    };
    httplib::Response res;
    httplib::Error error = httplib::Error::Success;
    const bool ok = impl_->client.send(req, res, error);
    if (aborted_) {
        out.aborted = true;
        out.network_error = "cancelled";
    } else if (too_long) {
        out.network_error = "the answer is larger than 64 MiB";
    } else if (!ok && error == httplib::Error::Canceled && out.status != 0) {
        // The receiver stopped reading: the caller knows why; the status stands.
    } else if (!ok) {
        out.network_error =
            describe(error, impl_->settings, std::chrono::steady_clock::now() - last_heard);
        // The status line may have come before the connection broke: the stream is incomplete.
    }
    return out;
}

}  // namespace mtdesk::remote
