#include "serve/job_channel.h"

namespace mtdesk::serve {

std::shared_ptr<JobChannel> JobChannel::submit(TranslationEngine& engine, TranslationJob job,
                                               std::function<void(const JobOutcome&)> on_outcome) {
    std::shared_ptr<JobChannel> channel(new JobChannel(engine));
    JobCallbacks callbacks;
    // The callbacks own the channel: a request that gave up waiting may be gone before the
    // engine's last call.
    callbacks.on_text = [channel](std::string_view piece) {
        {
            std::lock_guard lock(channel->mutex_);
            channel->text_.append(piece);
        }
        channel->changed_.notify_all();
    };
    callbacks.on_done = [channel, on_outcome = std::move(on_outcome)](const JobOutcome& outcome) {
        if (on_outcome) on_outcome(outcome);
        {
            std::lock_guard lock(channel->mutex_);
            channel->outcome_ = outcome;
        }
        channel->changed_.notify_all();
    };
    // submit() may call back before it returns (a job that fails at once): id_ is only used
    // by cancel(), which is never called before submit() returns.
    const uint64_t id = engine.submit(std::move(job), std::move(callbacks));
    std::lock_guard lock(channel->mutex_);
    channel->id_ = id;
    return channel;
}

JobChannel::Update JobChannel::take(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    Update u;
    if (outcome_taken_) return u;
    changed_.wait_for(lock, timeout, [&] { return !text_.empty() || outcome_.has_value(); });
    u.text.swap(text_);
    if (outcome_) {
        u.outcome = outcome_;
        outcome_taken_ = true;
    }
    return u;
}

std::optional<JobOutcome> JobChannel::wait_done(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return outcome_.has_value(); });
    text_.clear();
    if (!outcome_) return std::nullopt;
    outcome_taken_ = true;
    return outcome_;
}

void JobChannel::cancel() {
    uint64_t id = 0;
    {
        std::lock_guard lock(mutex_);
        if (cancelled_ || outcome_) return;
        cancelled_ = true;
        id = id_;
    }
    // Outside the lock: the engine may call on_done from inside cancel().
    engine_.cancel(id);
}

bool JobChannel::done() const {
    std::lock_guard lock(mutex_);
    return outcome_.has_value();
}

}  // namespace mtdesk::serve
