#include "remote/server_pool.h"

#include <algorithm>

namespace mtdesk::remote {

ServerPool::ServerPool(std::size_t servers, int concurrency, std::chrono::milliseconds first_rest,
                       std::chrono::milliseconds max_rest)
    : servers_(std::max<std::size_t>(servers, 1)),
      concurrency_(std::max(concurrency, 1)),
      first_rest_(first_rest),
      max_rest_(std::max(max_rest, first_rest)) {}

std::optional<std::size_t> ServerPool::acquire(Clock::time_point now,
                                               const std::vector<bool>& skip) {
    std::optional<std::size_t> best;
    for (std::size_t k = 0; k < servers_.size(); ++k) {
        const std::size_t i = (next_ + k) % servers_.size();
        const Server& s = servers_[i];
        if ((i < skip.size() && skip[i]) || resting(i, now) || s.in_flight >= concurrency_)
            continue;
        if (!best || s.in_flight < servers_[*best].in_flight) best = i;
    }
    if (best) {
        ++servers_[*best].in_flight;
        next_ = (*best + 1) % servers_.size();
    }
    return best;
}

void ServerPool::succeeded(std::size_t server) {
    Server& s = servers_[server];
    s.in_flight = std::max(0, s.in_flight - 1);
    s.failures = 0;
}

void ServerPool::released(std::size_t server) {
    Server& s = servers_[server];
    s.in_flight = std::max(0, s.in_flight - 1);
}

void ServerPool::failed(std::size_t server, Clock::time_point now) {
    Server& s = servers_[server];
    s.in_flight = std::max(0, s.in_flight - 1);
    if (resting(server, now)) return;  // this outage is known already
    ++s.failures;
    auto rest = first_rest_;
    for (int k = 1; k < s.failures && rest < max_rest_; ++k)
        rest *= 2;
    s.rest_until = now + std::min(rest, max_rest_);
}

std::optional<ServerPool::Clock::time_point> ServerPool::next_ready(
    Clock::time_point now, const std::vector<bool>& skip) const {
    std::optional<Clock::time_point> first;
    for (std::size_t i = 0; i < servers_.size(); ++i) {
        if ((i < skip.size() && skip[i]) || !resting(i, now)) continue;
        if (!first || servers_[i].rest_until < *first) first = servers_[i].rest_until;
    }
    return first;
}

int ServerPool::in_flight() const {
    int n = 0;
    for (const Server& s : servers_)
        n += s.in_flight;
    return n;
}

int ServerPool::answering() const {
    return static_cast<int>(std::count_if(servers_.begin(), servers_.end(),
                                          [](const Server& s) { return s.failures == 0; }));
}

}  // namespace mtdesk::remote
