#pragma once
// "Test connection": GET /v1/models on each server, in parallel, with the round-trip time, so
// the settings dialog and the command line can show which servers answer, which models they
// serve, and what is wrong with the others before a job is sent.

#include <optional>
#include <string>
#include <vector>

#include "remote/http_call.h"

namespace mtdesk::remote {

/// What one server answered.
struct ServerCheck {
    std::string url;                  ///< as given
    std::vector<std::string> models;  ///< ids, in the server's order
    double latency_ms = 0;            ///< request sent → answer read
    std::string error;                ///< "" when the server answered with a model list
};

/// Asks every server at once and returns when all have answered or failed (connect and read
/// timeouts from `settings`), in the order of `urls`. A malformed URL, a refused key (401), a
/// missing endpoint or a body that is not a model list is an error naming what came back.
std::vector<ServerCheck> check_servers(const std::vector<std::string>& urls,
                                       const HttpSettings& settings);

/// The model to use when none is named: the first model of the first server that lists one;
/// nullopt when none does (`checks` then say why).
std::optional<std::string> first_model(const std::vector<ServerCheck>& checks);

}  // namespace mtdesk::remote
