#pragma once
// Which server the next request goes to: the servers' slots (a configurable number of requests
// in flight each, so one server is not flooded while another idles), the least loaded first
// with round robin among equals, and a rest after a failure that doubles while the server keeps
// failing, so a server that went away is avoided and only probed now and then. No locking and
// no clock of its own: the remote engine holds its lock and passes the time, and the tests
// drive it with made-up times.

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

namespace mtdesk::remote {

class ServerPool {
  public:
    using Clock = std::chrono::steady_clock;

    /// `servers` ≥ 1, `concurrency` ≥ 1 requests in flight per server. A failing server rests
    /// for `first_rest`, then twice as long after each further failure, at most `max_rest`.
    ServerPool(std::size_t servers, int concurrency,
               std::chrono::milliseconds first_rest = std::chrono::milliseconds(500),
               std::chrono::milliseconds max_rest = std::chrono::milliseconds(30000));

    /// Takes a slot on the server for the next request: not resting, not in `skip` (indexed by
    /// server; shorter or empty = none skipped), with a free slot; the fewest requests in flight
    /// wins, ties go round robin. nullopt when no server qualifies now.
    std::optional<std::size_t> acquire(Clock::time_point now, const std::vector<bool>& skip = {});
    /// Gives the slot back after a successful request: the server's failures are forgotten.
    void succeeded(std::size_t server);
    /// Gives the slot back without judging the server (a cancelled request, a request the
    /// server refused for its content).
    void released(std::size_t server);
    /// Gives the slot back after the server failed: it rests. Failures of requests that were
    /// already under way when the server started resting do not lengthen its rest (one outage
    /// fails every request in flight at once).
    void failed(std::size_t server, Clock::time_point now);

    /// When the first resting server (not in `skip`) is ready again; nullopt when none rests.
    std::optional<Clock::time_point> next_ready(Clock::time_point now,
                                                const std::vector<bool>& skip = {}) const;

    std::size_t size() const { return servers_.size(); }
    int concurrency() const { return concurrency_; }
    int in_flight(std::size_t server) const { return servers_[server].in_flight; }
    int in_flight() const;
    bool resting(std::size_t server, Clock::time_point now) const {
        return now < servers_[server].rest_until;
    }
    /// Failures of the server in a row (since its last success).
    int failures(std::size_t server) const { return servers_[server].failures; }
    /// Servers answering: none of their requests failed since their last success (or they
    /// have not been tried). A failed server counts again once a request to it succeeds, not
    /// when its rest ends: until then it is only being retried.
    int answering() const;

  private:
    struct Server {
        int in_flight = 0;
        int failures = 0;  // in a row
        Clock::time_point rest_until{};
    };
    std::vector<Server> servers_;
    int concurrency_;
    std::chrono::milliseconds first_rest_, max_rest_;
    std::size_t next_ = 0;  // round robin cursor
};

}  // namespace mtdesk::remote
