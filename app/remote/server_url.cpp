#include "remote/server_url.h"

#include <algorithm>
#include <cctype>

namespace mtdesk::remote {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::optional<ServerUrl> fail(std::string* error, std::string_view url, const std::string& why) {
    if (error) *error = "\"" + std::string(url) + "\": " + why;
    return std::nullopt;
}

std::string host_for_url(const std::string& host) {
    return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

}  // namespace

std::string ServerUrl::origin() const {
    return scheme + "://" + host_for_url(host) + ":" + std::to_string(port);
}

std::string ServerUrl::label() const {
    return host_for_url(host) + ":" + std::to_string(port);
}

std::string ServerUrl::endpoint(std::string_view api_path) const {
    return base_path + "/v1" + std::string(api_path);
}

std::optional<ServerUrl> parse_server_url(std::string_view input, std::string* error) {
    const std::string_view text = trim(input);
    if (text.empty()) return fail(error, text, "empty server URL");
    ServerUrl url;
    url.text = std::string(text);
    std::string_view rest = text;
    if (const auto sep = rest.find("://"); sep != std::string_view::npos) {
        url.scheme = lower(rest.substr(0, sep));
        rest.remove_prefix(sep + 3);
    } else {
        url.scheme = "http";
    }
    if (url.scheme != "http" && url.scheme != "https")
        return fail(error, text, "the scheme must be http or https");
    if (rest.find_first_of("?#") != std::string_view::npos)
        return fail(error, text, "a server URL has no query or fragment");

    const auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
    if (authority.find('@') != std::string_view::npos)
        return fail(error, text, "user names in the URL are not supported (use the API key)");

    std::string_view port_text;
    if (authority.starts_with('[')) {  // [IPv6]:port
        const auto close = authority.find(']');
        if (close == std::string_view::npos) return fail(error, text, "unclosed '[' in the host");
        url.host = std::string(authority.substr(1, close - 1));
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return fail(error, text, "unexpected text after the host");
            port_text = after.substr(1);
        }
    } else {
        const auto colon = authority.rfind(':');
        url.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
        if (url.host.find(':') != std::string::npos)
            return fail(error, text, "an IPv6 address must be written in brackets");
    }
    if (url.host.empty()) return fail(error, text, "no host name");
    if (port_text.empty() && authority.ends_with(':')) return fail(error, text, "empty port");
    if (!port_text.empty()) {
        if (port_text.size() > 5 || !std::all_of(port_text.begin(), port_text.end(),
                                                 [](char c) { return c >= '0' && c <= '9'; }))
            return fail(error, text, "the port must be a number");
        url.port = std::stoi(std::string(port_text));
        if (url.port < 1 || url.port > 65535)
            return fail(error, text, "the port must be between 1 and 65535");
    } else {
        url.port = url.scheme == "https" ? 443 : 80;
    }

    std::string base(path);
    while (base.ends_with('/'))
        base.pop_back();
    if (base.ends_with("/v1")) base.resize(base.size() - 3);
    while (base.ends_with('/'))
        base.pop_back();
    url.base_path = base;
    return url;
}

}  // namespace mtdesk::remote
