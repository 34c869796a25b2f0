#include "remote/remote_engine.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "mtdesk/error.h"
#include "mtdesk/runtime/latency_window.h"
#include "remote/http_call.h"
#include "remote/openai_api.h"
#include "remote/server_pool.h"
#include "remote/server_url.h"
#include "remote/sse_parser.h"
#include "remote/translation_request.h"

namespace mtdesk::remote {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kLatencyWindow = 100;  // requests kept for the percentiles
constexpr auto kThroughputWindow = std::chrono::seconds(5);
constexpr auto kAbortRepeat = std::chrono::milliseconds(20);

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

double nearest_rank(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const auto rank =
        static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
    return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

/// A status that says the server, not the request, is at fault: worth sending elsewhere, and the
/// server should rest. 401 / 403 / 404 also make it rest (a wrong key or model there stays wrong
/// for every request), but are refusals: a job that every server refuses fails at once.
bool server_fault_status(int status) {
    return status == 408 || status == 429 || status >= 500;
}
bool server_config_status(int status) {
    return status == 401 || status == 403 || status == 404;
}

/// The last failure of a server that concerns every job (not a refusal of one request).
struct ServerFailure {
    uint64_t count = 0;  // failures so far
    std::string error;
    bool refusal = false;  // a 401 / 403 / 404: retrying will not help
};

/// One submitted job.
struct Job {
    uint64_t id = 0;
    TranslationJob job;
    JobCallbacks callbacks;
    Clock::time_point submitted;
    std::atomic<bool> cancelled{false};
    std::shared_ptr<HttpCall> call;  // the request in flight (under the engine's mutex)
};

/// How one request to one server ended.
struct Attempt {
    enum class Kind { Ok, Cancelled, ServerFault, Refused } kind = Kind::Ok;
    std::string error;
    int status = 0;
    std::string raw;  // the generated text
    std::optional<int> prompt_tokens, completion_tokens;
    int pieces = 0;  // content chunks received
    std::optional<Clock::time_point> first_text;
};

class RemoteEngine final : public TranslationEngine {
  public:
    explicit RemoteEngine(const RemoteOptions& o)
        : pool_(o.servers.size(), o.concurrency, o.first_rest, o.max_rest) {
        if (o.servers.empty()) throw Error("no server given for the remote engine");
        if (o.model.empty()) throw Error("no model name given for the remote engine");
        if (o.concurrency < 1) throw Error("the requests in flight per server must be at least 1");
        for (const std::string& text : o.servers) {
            std::string why;
            auto url = parse_server_url(text, &why);
            if (!url) throw Error("server URL " + why);
            urls_.push_back(std::move(*url));
        }
        model_ = RemoteModel::from_name(o.model);
        if (o.prompt_style) model_.style = *o.prompt_style;
        if (o.terminology_prompt) model_.terminology_prompt = *o.terminology_prompt;
        http_.api_key = o.api_key;
        http_.connect_timeout = o.connect_timeout;
        http_.read_timeout = o.read_timeout;
        http_.ca_file = o.ca_file;
        attempts_per_server_ = std::max(1, o.attempts_per_server);
        max_attempts_ = attempts_per_server_ * static_cast<int>(urls_.size());
        failures_.resize(urls_.size());
        std::vector<std::string> labels;
        for (const ServerUrl& u : urls_)
            labels.push_back(u.label());
        device_ = describe_servers(labels);
        const int workers = o.concurrency * static_cast<int>(urls_.size());
        for (int i = 0; i < workers; ++i)
            workers_.emplace_back([this] { work(); });
        reaper_ = std::thread([this] { reap(); });
    }

    ~RemoteEngine() override {
        {
            std::lock_guard lock(m_);
            stopping_ = true;
            for (auto& [id, job] : running_)
                job->cancelled = true;
        }
        wake_.notify_all();
        reap_wake_.notify_all();
        for (std::thread& t : workers_)
            t.join();
        {
            std::lock_guard lock(m_);
            reaper_stop_ = true;
        }
        reap_wake_.notify_all();
        reaper_.join();
        // Jobs still queued end as cancelled, each exactly once.
        for (auto& job : queue_) {
            JobOutcome outcome;
            outcome.status = JobOutcome::Status::Cancelled;
            if (job->callbacks.on_done) job->callbacks.on_done(outcome);
        }
    }

    uint64_t submit(TranslationJob t, JobCallbacks callbacks) override {
        auto job = std::make_shared<Job>();
        job->job = std::move(t);
        job->callbacks = std::move(callbacks);
        job->submitted = Clock::now();
        {
            std::lock_guard lock(m_);
            job->id = ++last_id_;
            queue_.push_back(job);
        }
        wake_.notify_all();
        return job->id;
    }

    void cancel(uint64_t id) override {
        std::shared_ptr<Job> dropped;
        {
            std::lock_guard lock(m_);
            if (auto it = running_.find(id); it != running_.end()) {
                it->second->cancelled = true;
            } else {
                auto q = std::find_if(queue_.begin(), queue_.end(),
                                      [&](const auto& j) { return j->id == id; });
                if (q == queue_.end()) return;
                dropped = *q;
                queue_.erase(q);
                ++finished_;
            }
        }
        if (!dropped) {
            // Running: a job waiting for a server wakes; a request in flight is closed by the
            // reaper (closing may wait for a connection being opened, not for this caller).
            wake_.notify_all();
            reap_wake_.notify_all();
            return;
        }
        JobOutcome outcome;
        outcome.status = JobOutcome::Status::Cancelled;
        outcome.queued_ms = ms_between(dropped->submitted, Clock::now());
        if (dropped->callbacks.on_done) dropped->callbacks.on_done(outcome);
    }

    int max_in_flight() const override { return static_cast<int>(workers_.size()); }

    EngineStatistics statistics() const override {
        std::lock_guard lock(m_);
        const auto now = Clock::now();
        EngineStatistics s;
        s.device = device_;
        s.tier = "remote: " + model_.name;
        s.queue_depth = static_cast<int>(queue_.size()) + waiting_;
        s.running = pool_.in_flight();
        s.finished = finished_;
        jobs_latency_.fill(s);  // per job, as the local engines report it
        RemoteStatistics r;
        r.servers = static_cast<int>(urls_.size());
        r.servers_available = pool_.answering();
        if (!latencies_.empty()) {
            const std::vector<double> v(latencies_.begin(), latencies_.end());
            r.latency_p50_ms = nearest_rank(v, 50);
            r.latency_p95_ms = nearest_rank(v, 95);
        }
        if (first_piece_) {
            // Over the window, or since the first piece when that is more recent.
            const double span =
                std::clamp(ms_between(*first_piece_, now) / 1000.0, 1.0,
                           std::chrono::duration<double>(kThroughputWindow).count());
            int n = 0;
            for (const Clock::time_point t : pieces_)
                if (now - t <= kThroughputWindow) ++n;
            r.tokens_per_s = n / span;
        }
        r.retried = retried_;
        r.failed = failed_;
        s.remote = r;
        return s;
    }

    const Translator* translator() const noexcept override { return nullptr; }

  private:
    void work() {
        for (;;) {
            std::shared_ptr<Job> job;
            {
                std::unique_lock lock(m_);
                wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
                if (stopping_) return;
                job = queue_.front();
                queue_.pop_front();
                running_[job->id] = job;
            }
            const JobOutcome outcome = execute(*job);
            {
                std::lock_guard lock(m_);
                running_.erase(job->id);
                ++finished_;
                if (outcome.status == JobOutcome::Status::Failed) ++failed_;
                jobs_latency_.add(outcome);
            }
            if (job->callbacks.on_done) job->callbacks.on_done(outcome);
        }
    }

    /// Closes the connections of cancelled jobs, again and again until their requests have
    /// returned: a connection still being opened cannot be shut before it is open.
    void reap() {
        std::unique_lock lock(m_);
        for (;;) {
            std::vector<std::shared_ptr<HttpCall>> calls;
            for (const auto& [id, job] : running_)
                if (job->cancelled && job->call) calls.push_back(job->call);
            if (reaper_stop_) return;
            if (calls.empty()) {
                reap_wake_.wait(lock);
                continue;
            }
            lock.unlock();
            for (const auto& call : calls)
                call->abort();
            lock.lock();
            reap_wake_.wait_for(lock, kAbortRepeat);
        }
    }

    JobOutcome execute(Job& job) {
        JobOutcome outcome;
        const auto start = Clock::now();
        outcome.queued_ms = ms_between(job.submitted, start);
        std::string body;
        try {
            body = chat_request_body(job.job, model_);
        } catch (const std::exception& e) {  // a prompt this model's wording cannot express
            outcome.status = JobOutcome::Status::Failed;
            outcome.error = e.what();
            return outcome;
        }

        const std::size_t n = urls_.size();
        std::vector<bool> tried(n, false);
        std::vector<std::string> errors(n);  // the last error of each server, for the message
        bool round_refused = true;           // every server tried in this round refused the job
        int attempts = 0;
        std::vector<uint64_t> seen(n);  // each server's failures accounted for by this job
        {
            std::lock_guard lock(m_);
            for (std::size_t i = 0; i < n; ++i)
                seen[i] = failures_[i].count;
        }
        // A server that failed another job's request since this job last looked counts as
        // tried and failed for this one too: jobs waiting for a resting server would otherwise
        // each need a request of their own to learn that it is down, one per rest, and a
        // document on servers that are all down would fail only after minutes.
        auto absorb = [&] {
            for (std::size_t i = 0; i < n; ++i) {
                const ServerFailure& f = failures_[i];
                if (f.count > seen[i] && !tried[i]) {
                    tried[i] = true;
                    errors[i] = f.error;
                    ++attempts;
                    if (!f.refusal) round_refused = false;
                }
                seen[i] = f.count;
            }
        };
        std::string emitted;    // the text given to on_text, over all attempts
        bool diverged = false;  // a retry's text departed from it: on_text stays quiet
        std::optional<Clock::time_point> first_text;

        auto finish = [&](JobOutcome::Status status) {
            outcome.status = status;
            if (first_text) outcome.ttft_ms = ms_between(start, *first_text);
            outcome.total_ms = ms_between(start, Clock::now());
            return outcome;
        };
        auto cancelled = [&] {
            outcome.text = emitted;
            return finish(JobOutcome::Status::Cancelled);
        };

        for (;;) {
            std::size_t server = 0;
            {
                std::unique_lock lock(m_);
                ++waiting_;
                bool got = false;
                while (!got) {
                    if (job.cancelled || stopping_) break;
                    absorb();
                    if (std::all_of(tried.begin(), tried.end(), [](bool b) { return b; })) {
                        if (round_refused || attempts >= max_attempts_) break;
                        tried.assign(n, false);  // another round, once the servers have rested
                        round_refused = true;
                    }
                    const auto now = Clock::now();
                    if (auto s = pool_.acquire(now, tried)) {
                        server = *s;
                        got = true;
                    } else if (all_down(now)) {
                        // Every server failed several times in a row and rests: the job fails
                        // now rather than wait; the servers are probed again after their rest.
                        for (std::size_t i = 0; i < n; ++i)
                            if (errors[i].empty()) errors[i] = failures_[i].error;
                        break;
                    } else if (auto ready = pool_.next_ready(now, tried)) {
                        wake_.wait_until(lock, *ready);
                    } else {
                        wake_.wait(lock);  // for a free slot
                    }
                }
                --waiting_;
                if (!got) {
                    lock.unlock();
                    if (job.cancelled || stopping_) return cancelled();
                    outcome.text.clear();
                    outcome.error = failure_message(errors);
                    return finish(JobOutcome::Status::Failed);
                }
                if (attempts > 0) ++retried_;
                job.call = std::make_shared<HttpCall>(urls_[server], http_);
            }

            Attempt a = request(job, server, body, emitted, diverged);
            if (!first_text && a.first_text) first_text = a.first_text;
            {
                std::lock_guard lock(m_);
                job.call.reset();
                const auto now = Clock::now();
                // Faults, and refusals that every request would get (a wrong key or model),
                // make the server rest and are shared with the other jobs (absorb above).
                const bool shared =
                    a.kind == Attempt::Kind::ServerFault ||
                    (a.kind == Attempt::Kind::Refused && server_config_status(a.status));
                if (shared) {
                    pool_.failed(server, now);
                    ServerFailure& f = failures_[server];
                    ++f.count;
                    f.error = a.error;
                    f.refusal = a.kind == Attempt::Kind::Refused;
                    seen[server] = f.count;  // this job accounts for it below
                } else if (a.kind == Attempt::Kind::Ok) {
                    pool_.succeeded(server);
                } else {
                    pool_.released(server);
                }
            }
            wake_.notify_all();  // a slot is free, or a server rests

            switch (a.kind) {
                case Attempt::Kind::Ok:
                    outcome.text = clean_output(job.job, a.raw);
                    outcome.prompt_tokens = a.prompt_tokens.value_or(0);
                    outcome.generated_tokens = a.completion_tokens.value_or(a.pieces);
                    return finish(JobOutcome::Status::Done);
                case Attempt::Kind::Cancelled:
                    return cancelled();
                case Attempt::Kind::ServerFault:
                case Attempt::Kind::Refused:
                    errors[server] = a.error;
                    tried[server] = true;
                    ++attempts;
                    if (a.kind == Attempt::Kind::ServerFault) round_refused = false;
                    break;
            }
        }
    }

    /// Whether every server has failed attempts_per_server times in a row and rests.
    bool all_down(Clock::time_point now) const {
        for (std::size_t i = 0; i < urls_.size(); ++i)
            if (pool_.failures(i) < attempts_per_server_ || !pool_.resting(i, now)) return false;
        return true;
    }

    /// "http://a:8000: HTTP 401 Unauthorized: invalid API key; http://b:8000: cannot connect".
    std::string failure_message(const std::vector<std::string>& errors) const {
        std::string out = urls_.size() == 1 ? "the server could not translate the segment: "
                                            : "no server could translate the segment: ";
        bool first = true;
        for (std::size_t i = 0; i < urls_.size(); ++i) {
            if (errors[i].empty()) continue;
            out += (first ? "" : "; ") + urls_[i].text + ": " + errors[i];
            first = false;
        }
        return out;
    }

    /// One streaming request to `server`. Text beyond what on_text was given (`emitted`) goes
    /// to it; a retry whose text departs from it turns `diverged` on, and from then on the
    /// outcome alone carries the text.
    Attempt request(Job& job, std::size_t server, const std::string& body, std::string& emitted,
                    bool& diverged) {
        Attempt a;
        std::shared_ptr<HttpCall> call;
        {
            std::lock_guard lock(m_);
            call = job.call;
        }
        const auto sent = Clock::now();
        SseParser parser;
        bool complete = false;  // [DONE] or a finish reason came
        std::string stream_error;

        auto emit = [&] {
            if (diverged || !job.callbacks.on_text) return;
            const std::size_t common = std::min(a.raw.size(), emitted.size());
            if (a.raw.compare(0, common, emitted, 0, common) != 0) {
                diverged = true;
                return;
            }
            if (a.raw.size() <= emitted.size()) return;
            const std::string piece = a.raw.substr(emitted.size());
            emitted = a.raw;
            job.callbacks.on_text(piece);
        };
        auto on_piece = [&](const std::string& content) {
            const auto now = Clock::now();
            if (!a.first_text) {
                a.first_text = now;
                std::lock_guard lock(m_);
                latencies_.push_back(ms_between(sent, now));
                if (latencies_.size() > kLatencyWindow) latencies_.pop_front();
            }
            a.raw += content;
            ++a.pieces;
            {
                std::lock_guard lock(m_);
                if (!first_piece_) first_piece_ = now;
                pieces_.push_back(now);
                while (!pieces_.empty() && now - pieces_.front() > kThroughputWindow)
                    pieces_.pop_front();
            }
            emit();
        };
        // false: stop reading (the end, or an error in the stream).
        auto on_event = [&](const SseEvent& e) {
            if (e.type == "error") {
                stream_error = "the server reported an error: " + e.data;
                return false;
            }
            ChatChunk c;
            try {
                c = parse_chat_chunk(e.data);
            } catch (const std::exception& ex) {
                stream_error = ex.what();
                return false;
            }
            if (!c.error.empty()) {
                stream_error = "the server reported an error: " + c.error;
                return false;
            }
            if (c.done) {
                complete = true;
                return false;
            }
            if (c.prompt_tokens) a.prompt_tokens = c.prompt_tokens;
            if (c.completion_tokens) a.completion_tokens = c.completion_tokens;
            if (!c.content.empty()) on_piece(c.content);
            if (c.finish_reason) complete = true;  // usage may follow, then [DONE]
            return true;
        };
        const HttpResponse r = call->post_json(urls_[server].endpoint("/chat/completions"), body,
                                               [&](std::string_view piece) {
                                                   try {
                                                       for (const SseEvent& e : parser.feed(piece))
                                                           if (!on_event(e)) return false;
                                                   } catch (const std::exception& ex) {
                                                       stream_error = ex.what();
                                                       return false;
                                                   }
                                                   return !job.cancelled.load();
                                               });
        if (r.aborted || job.cancelled) {
            a.kind = Attempt::Kind::Cancelled;
            return a;
        }
        a.status = r.status;
        if (r.network_error.empty() && stream_error.empty() && !complete)
            for (const SseEvent& e : parser.finish())
                if (!on_event(e)) break;

        auto fault = [&](std::string why) {
            a.kind = Attempt::Kind::ServerFault;
            a.error = std::move(why);
            return a;
        };
        if (!stream_error.empty()) return fault(stream_error);
        if (!r.network_error.empty() && !complete) {
            std::string why = r.network_error;
            if (a.pieces > 0)
                why += " after " + std::to_string(a.pieces) + " pieces of the translation";
            return fault(why);
        }
        if (r.status / 100 != 2) {
            a.error = describe_http_error(r.status, r.body);
            a.kind =
                server_fault_status(r.status) ? Attempt::Kind::ServerFault : Attempt::Kind::Refused;
            return a;
        }
        if (r.content_type.find("text/event-stream") == std::string::npos) {
            // A server that answers the whole completion at once.
            try {
                const ChatChunk c = parse_chat_completion(r.body);
                if (!c.error.empty()) return fault("the server reported an error: " + c.error);
                a.prompt_tokens = c.prompt_tokens;
                a.completion_tokens = c.completion_tokens;
                if (!c.content.empty()) on_piece(c.content);
                complete = true;
            } catch (const std::exception& ex) {
                return fault(ex.what());
            }
        }
        if (!complete) return fault("the answer ended before the translation was complete");
        a.kind = Attempt::Kind::Ok;
        return a;
    }

    std::vector<ServerUrl> urls_;
    RemoteModel model_;
    HttpSettings http_;
    std::string device_;
    int attempts_per_server_ = 1;
    int max_attempts_ = 1;

    mutable std::mutex m_;
    std::condition_variable wake_;       // workers: a job, a free slot, a rested server, stop
    std::condition_variable reap_wake_;  // the reaper: a cancelled job, stop
    ServerPool pool_;
    std::vector<ServerFailure> failures_;  // by server
    std::deque<std::shared_ptr<Job>> queue_;
    std::map<uint64_t, std::shared_ptr<Job>> running_;  // taken by a worker
    uint64_t last_id_ = 0;
    uint64_t finished_ = 0;
    uint64_t failed_ = 0;
    uint64_t retried_ = 0;
    int waiting_ = 0;               // jobs taken by a worker and waiting for a server
    std::deque<double> latencies_;  // per request: sent → first text
    LatencyWindow jobs_latency_;
    std::deque<Clock::time_point> pieces_;
    std::optional<Clock::time_point> first_piece_;
    bool stopping_ = false;
    bool reaper_stop_ = false;
    std::vector<std::thread> workers_;
    std::thread reaper_;
};

}  // namespace

std::string describe_servers(const std::vector<std::string>& labels) {
    std::string out =
        std::to_string(labels.size()) + (labels.size() == 1 ? " server: " : " servers: ");
    for (std::size_t i = 0; i < labels.size(); ++i)
        out += (i ? ", " : "") + labels[i];
    return out;
}

std::unique_ptr<TranslationEngine> make_remote_engine(const RemoteOptions& options) {
    return std::make_unique<RemoteEngine>(options);
}

}  // namespace mtdesk::remote
