// The CPU implementation of TranslationEngine: a FIFO of jobs and one worker thread.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "mtdesk/cpu/cpu_model.h"
#include "mtdesk/error.h"
#include "mtdesk/runtime/latency_window.h"
#include "mtdesk/runtime/sampling.h"
#include "mtdesk/translate/translation_engine.h"

namespace mtdesk {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

class CpuEngine final : public TranslationEngine {
  public:
    explicit CpuEngine(std::unique_ptr<Translator> translator)
        : translator_(std::move(translator)) {
        if (!translator_) throw Error("make_cpu_engine: no translator");
        if (const auto* cpu = dynamic_cast<const CpuModel*>(&translator_->model()))
            tier_ = cpu->tier();
        worker_ = std::thread([this] { run(); });
    }

    ~CpuEngine() override {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
            if (running_id_) running_cancelled_ = true;
        }
        wake_.notify_all();
        worker_.join();
    }

    uint64_t submit(TranslationJob job, JobCallbacks callbacks) override {
        // One seed for every piece of the job (random when the request gave none).
        job.options.sampling = with_seed(job.options.sampling);
        std::lock_guard lock(mutex_);
        const uint64_t id = ++last_id_;
        queue_.push_back({id, std::move(job), std::move(callbacks), Clock::now()});
        wake_.notify_one();
        return id;
    }

    void cancel(uint64_t id) override {
        Entry cancelled;
        {
            std::lock_guard lock(mutex_);
            if (running_id_ == id) {
                running_cancelled_ = true;
                return;
            }
            auto it = std::find_if(queue_.begin(), queue_.end(),
                                   [&](const Entry& e) { return e.id == id; });
            if (it == queue_.end()) return;
            cancelled = std::move(*it);
            queue_.erase(it);
            ++finished_;
        }
        // A queued job ends at once, outside the lock.
        JobOutcome outcome;
        outcome.status = JobOutcome::Status::Cancelled;
        outcome.queued_ms = ms_between(cancelled.submitted, Clock::now());
        if (cancelled.callbacks.on_done) cancelled.callbacks.on_done(outcome);
    }

    int max_in_flight() const override { return 1; }

    EngineStatistics statistics() const override {
        std::lock_guard lock(mutex_);
        EngineStatistics s;
        s.device = "CPU";
        s.tier = std::string(cpu_tier_name(tier_)) + " (CPU)";
        s.queue_depth = static_cast<int>(queue_.size());
        s.running = running_id_ ? 1 : 0;
        s.finished = finished_;
        latency_.fill(s);
        return s;
    }

    const Translator* translator() const noexcept override { return translator_.get(); }

  private:
    struct Entry {
        uint64_t id = 0;
        TranslationJob job;
        JobCallbacks callbacks;
        Clock::time_point submitted;
    };

    void run() {
        for (;;) {
            Entry entry;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
                if (stopping_) break;
                entry = std::move(queue_.front());
                queue_.pop_front();
                running_id_ = entry.id;
                running_cancelled_ = false;
            }
            const JobOutcome outcome = execute(entry);
            {
                std::lock_guard lock(mutex_);
                running_id_ = 0;
                ++finished_;
                latency_.add(outcome);
            }
            if (entry.callbacks.on_done) entry.callbacks.on_done(outcome);
        }
        // Jobs still queued at shutdown end as cancelled, each exactly once.
        std::deque<Entry> left;
        {
            std::lock_guard lock(mutex_);
            left.swap(queue_);
        }
        for (Entry& e : left) {
            JobOutcome outcome;
            outcome.status = JobOutcome::Status::Cancelled;
            if (e.callbacks.on_done) e.callbacks.on_done(outcome);
        }
    }

    JobOutcome execute(Entry& entry) {
        JobOutcome outcome;
        const auto start = Clock::now();
        outcome.queued_ms = ms_between(entry.submitted, start);
        bool first = true;
        std::string so_far;
        auto on_text = [&](std::string_view piece) {
            if (first) {
                outcome.ttft_ms = ms_between(start, Clock::now());
                first = false;
            }
            so_far += piece;
            if (entry.callbacks.on_text) entry.callbacks.on_text(piece);
            std::lock_guard lock(mutex_);
            return !running_cancelled_;
        };
        try {
            TranslationResult r =
                translator_->translate(entry.job.request, entry.job.options, on_text);
            outcome.prompt_tokens = r.prompt_tokens;
            outcome.generated_tokens = static_cast<int>(r.generation.tokens.size());
            outcome.reached_limit = r.generation.finish == FinishReason::Length;
            if (r.generation.finish == FinishReason::Cancelled) {
                outcome.status = JobOutcome::Status::Cancelled;
                outcome.text = so_far;
            } else {
                outcome.text = std::move(r.text);
            }
        } catch (const std::exception& e) {
            outcome.status = JobOutcome::Status::Failed;
            outcome.error = e.what();
        }
        outcome.total_ms = ms_between(start, Clock::now());
        return outcome;
    }

    std::unique_ptr<Translator> translator_;
    CpuTier tier_ = CpuTier::FP32;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Entry> queue_;
    uint64_t last_id_ = 0;
    uint64_t running_id_ = 0;
    bool running_cancelled_ = false;
    bool stopping_ = false;
    uint64_t finished_ = 0;
    LatencyWindow latency_;
    std::thread worker_;
};

}  // namespace

std::unique_ptr<TranslationEngine> make_cpu_engine(std::unique_ptr<Translator> translator) {
    return std::make_unique<CpuEngine>(std::move(translator));
}

}  // namespace mtdesk
