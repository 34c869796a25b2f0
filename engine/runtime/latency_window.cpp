#include "mtdesk/runtime/latency_window.h"

#include <algorithm>
#include <cmath>

namespace mtdesk {

void LatencyWindow::add(const JobOutcome& o) {
    if (o.status != JobOutcome::Status::Done || o.generated_tokens < 1) return;
    auto push = [&](std::deque<double>& d, double v) {
        d.push_back(v);
        if (d.size() > capacity_) d.pop_front();
    };
    push(ttft_ms_, o.ttft_ms);
    const double decode_ms = o.total_ms - o.ttft_ms;
    if (o.generated_tokens >= 2 && decode_ms > 0)
        push(tokens_per_s_, (o.generated_tokens - 1) / (decode_ms / 1000.0));
}

void LatencyWindow::fill(EngineStatistics& s) const {
    s.ttft_p50_ms = percentile(ttft_ms_, 0.50);
    s.ttft_p95_ms = percentile(ttft_ms_, 0.95);
    s.tokens_per_s_p50 = percentile(tokens_per_s_, 0.50);
    s.tokens_per_s_p95 = percentile(tokens_per_s_, 0.95);
}

std::optional<double> LatencyWindow::percentile(std::deque<double> v, double q) {
    if (v.empty()) return std::nullopt;
    const std::size_t rank =
        static_cast<std::size_t>(std::max(1.0, std::ceil(q * static_cast<double>(v.size()))));
    std::nth_element(v.begin(), v.begin() + (rank - 1), v.end());
    return v[rank - 1];
}

}  // namespace mtdesk
