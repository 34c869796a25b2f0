#pragma once
// The base URL of an OpenAI-compatible server as users write it: "http://gpu1:8000",
// "https://mt.example.org/v1" (the OpenAI client's base_url, with /v1), "gpu2:8000" (http
// assumed), "http://[fd00::2]:8000/prefix". Parsed once, so every request and message uses the
// same host, port and path.

#include <optional>
#include <string>
#include <string_view>

namespace mtdesk::remote {

struct ServerUrl {
    std::string scheme;     ///< "http" or "https"
    std::string host;       ///< name or address; an IPv6 address without brackets
    int port = 0;           ///< the given port, else 80 / 443
    std::string base_path;  ///< "" or "/prefix": what comes before /v1, no trailing '/'
    std::string text;       ///< the URL as the user wrote it (trimmed), for messages

    /// "scheme://host:port" (IPv6 in brackets), what the HTTP client connects to.
    std::string origin() const;
    /// "host:port" (IPv6 in brackets), for the live panel.
    std::string label() const;
    /// The path of an API call: base_path + "/v1" + `api_path` ("/chat/completions").
    std::string endpoint(std::string_view api_path) const;
};

/// Parses a base URL. A trailing '/' and a trailing "/v1" are dropped (both spellings of the
/// OpenAI base URL work). Returns nullopt and sets `error` (when given) for an empty text, a
/// scheme other than http / https, an empty host, a bad port, or a query / fragment.
std::optional<ServerUrl> parse_server_url(std::string_view text, std::string* error = nullptr);

}  // namespace mtdesk::remote
