#include "remote/connection_test.h"

#include <chrono>
#include <exception>
#include <thread>

#include "remote/openai_api.h"
#include "remote/server_url.h"

namespace mtdesk::remote {
namespace {

ServerCheck check_one(const std::string& text, const HttpSettings& settings) {
    ServerCheck check;
    check.url = text;
    std::string why;
    const auto url = parse_server_url(text, &why);
    if (!url) {
        check.error = why;
        return check;
    }
    HttpCall call(*url, settings);
    const auto start = std::chrono::steady_clock::now();
    const HttpResponse r = call.get(url->endpoint("/models"));
    check.latency_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!r.network_error.empty()) {
        check.error = r.network_error;
    } else if (r.status != 200) {
        check.error = describe_http_error(r.status, r.body);
    } else {
        try {
            check.models = parse_model_list(r.body);
            if (check.models.empty()) check.error = "the server lists no model";
        } catch (const std::exception& e) {
            check.error = e.what();
        }
    }
    return check;
}

}  // namespace

std::vector<ServerCheck> check_servers(const std::vector<std::string>& urls,
                                       const HttpSettings& settings) {
    std::vector<ServerCheck> checks(urls.size());
    std::vector<std::thread> threads;
    threads.reserve(urls.size());
    for (std::size_t i = 0; i < urls.size(); ++i)
        threads.emplace_back([&, i] { checks[i] = check_one(urls[i], settings); });
    for (std::thread& t : threads)
        t.join();
    return checks;
}

std::optional<std::string> first_model(const std::vector<ServerCheck>& checks) {
    for (const ServerCheck& c : checks)
        if (c.error.empty() && !c.models.empty()) return c.models.front();
    return std::nullopt;
}

}  // namespace mtdesk::remote
