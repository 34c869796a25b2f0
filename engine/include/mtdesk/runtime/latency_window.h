#pragma once
// Time to first token and decode speed of the most recent finished requests, as percentiles:
// what the live panel and `/health` show about an engine.

#include <cstddef>
#include <deque>
#include <optional>

#include "mtdesk/translate/translation_engine.h"

namespace mtdesk {

/// The p50 / p95 of TTFT (ms) and of per-request decode tokens/s over a sliding window of the
/// last `capacity` requests that finished with a first token. Not thread-safe: the owning
/// engine guards it with its own lock.
class LatencyWindow {
  public:
    explicit LatencyWindow(std::size_t capacity = 256) : capacity_(capacity) {}

    /// Records a finished job: its TTFT, and its decode speed (generated tokens after the
    /// first ÷ the time after the first token) when it produced two tokens or more. Jobs that
    /// were cancelled or failed, or produced no token, are not recorded.
    void add(const JobOutcome& outcome);

    /// Copies the percentiles into `s` (its ttft_* and tokens_per_s_* figures; left absent
    /// while the window is empty).
    void fill(EngineStatistics& s) const;

    /// Nearest-rank percentile (the smallest value with at least q of the values at or below
    /// it; q in (0, 1]) of `values`, or nullopt for none.
    static std::optional<double> percentile(std::deque<double> values, double q);

  private:
    std::size_t capacity_;
    std::deque<double> ttft_ms_, tokens_per_s_;
};

}  // namespace mtdesk
