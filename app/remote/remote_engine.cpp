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
    /// When the request in flight is abandoned (under the engine's mutex); `expired` once the
    /// reaper has done so.
    std::optional<Clock::time_point> deadline;
    std::atomic<bool> expired{false};
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
    bool reached_limit = false;  // finish_reason "length", or cut at the max_tokens asked for
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
        probe_http_ = http_;
        probe_http_.connect_timeout = std::min(o.connect_timeout, o.probe_timeout);
        probe_http_.read_timeout = o.probe_timeout;
        first_rest_ = o.first_rest;
        max_rest_ = std::max(o.max_rest, o.first_rest);
        on_notice_ = o.on_notice;
        admitted_.assign(urls_.size(), true);
        for (const std::size_t i : o.unverified) {
            if (i >= urls_.size()) throw Error("unverified server index out of range");
            admitted_[i] = false;
        }
        if (std::none_of(admitted_.begin(), admitted_.end(), [](bool b) { return b; }))
            throw Error("no server has answered its model list");
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
        probes_.resize(urls_.size());
        probers_running_ = static_cast<int>(urls_.size()) - admitted_servers();
        for (std::size_t i = 0; i < urls_.size(); ++i)
            if (!admitted_[i]) probers_.emplace_back([this, i] { probe(i); });
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
        probe_wake_.notify_all();
        // A model-list request in flight is closed, again until it has returned (one still
        // connecting cannot be shut yet).
        for (;;) {
            std::vector<std::shared_ptr<HttpCall>> calls;
            {
                std::lock_guard lock(m_);
                if (probers_running_ == 0) break;
                for (const auto& c : probes_)
                    if (c) calls.push_back(c);
            }
            for (const auto& c : calls)
                c->abort();
            std::this_thread::sleep_for(kAbortRepeat);
        }
        for (std::thread& t : probers_)
            t.join();
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

    /// Closes the connections of cancelled jobs and of requests past their deadline, again and
    /// again until their requests have returned: a connection still being opened cannot be
    /// shut before it is open.
    void reap() {
        std::unique_lock lock(m_);
        for (;;) {
            std::vector<std::shared_ptr<HttpCall>> calls;
            std::optional<Clock::time_point> next;  // the nearest deadline still to come
            const auto now = Clock::now();
            for (const auto& [id, job] : running_) {
                if (!job->call) continue;
                if (job->deadline && !job->expired) {
                    if (now >= *job->deadline)
                        job->expired = true;
                    else if (!next || *job->deadline < *next)
                        next = job->deadline;
                }
                if (job->cancelled || job->expired) calls.push_back(job->call);
            }
            if (reaper_stop_) return;
            if (calls.empty()) {
                if (next)
                    reap_wake_.wait_until(lock, *next);
                else
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
                std::vector<bool> skip(n);  // tried in this round, or not admitted yet
                while (!got) {
                    if (job.cancelled || stopping_) break;
                    absorb();
                    for (std::size_t i = 0; i < n; ++i)
                        skip[i] = tried[i] || !admitted_[i];
                    if (std::all_of(skip.begin(), skip.end(), [](bool b) { return b; })) {
                        if (round_refused || attempts >= max_attempts_) break;
                        tried.assign(n, false);  // another round, once the servers have rested
                        round_refused = true;
                        continue;
                    }
                    const auto now = Clock::now();
                    if (auto s = pool_.acquire(now, skip)) {
                        server = *s;
                        got = true;
                    } else if (all_down(now)) {
                        // Every server failed several times in a row and rests: the job fails
                        // now rather than wait; the servers are probed again after their rest.
                        for (std::size_t i = 0; i < n; ++i)
                            if (errors[i].empty()) errors[i] = failures_[i].error;
                        break;
                    } else if (auto ready = pool_.next_ready(now, skip)) {
                        wake_.wait_until(lock, *ready);
                    } else {
                        wake_.wait(lock);  // for a free slot
                    }
                }
                --waiting_;
                if (!got) {
                    const std::string message = failure_message(errors);
                    lock.unlock();
                    if (job.cancelled || stopping_) return cancelled();
                    outcome.text.clear();
                    outcome.error = message;
                    return finish(JobOutcome::Status::Failed);
                }
                if (attempts > 0) ++retried_;
                job.call = std::make_shared<HttpCall>(urls_[server], http_);
                job.deadline = Clock::now() + http_.read_timeout * kAnswerDeadlineFactor;
                job.expired = false;
            }
            reap_wake_.notify_all();  // a deadline to watch

            Attempt a = request(job, server, body, emitted, diverged);
            if (!first_text && a.first_text) first_text = a.first_text;
            std::string notice;
            {
                std::lock_guard lock(m_);
                job.call.reset();
                job.deadline.reset();
                const auto now = Clock::now();
                // Faults, and refusals that every request would get (a wrong key or model),
                // make the server rest and are shared with the other jobs (absorb above).
                const bool shared =
                    a.kind == Attempt::Kind::ServerFault ||
                    (a.kind == Attempt::Kind::Refused && server_config_status(a.status));
                if (shared) {
                    // Said once per outage, and only where other servers carry on.
                    if (!pool_.resting(server, now) && admitted_servers() > 1)
                        notice = urls_[server].text + ": " + a.error +
                                 "; its segments go to the other servers for now";
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
            if (!notice.empty() && on_notice_) on_notice_(notice);

            switch (a.kind) {
                case Attempt::Kind::Ok:
                    outcome.text = clean_output(job.job, a.raw);
                    outcome.prompt_tokens = a.prompt_tokens.value_or(0);
                    outcome.generated_tokens = a.completion_tokens.value_or(a.pieces);
                    outcome.reached_limit = a.reached_limit;
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

    /// Asks an unverified server for its model list until it answers with one (then it gets
    /// requests like the others), resting between tries as a failing server does.
    void probe(std::size_t server) {
        auto rest = first_rest_;
        for (;;) {
            std::shared_ptr<HttpCall> call;
            {
                std::lock_guard lock(m_);
                if (stopping_) break;
                call = probes_[server] = std::make_shared<HttpCall>(urls_[server], probe_http_);
            }
            const HttpResponse r = call->get(urls_[server].endpoint("/models"));
            bool answered = r.network_error.empty() && r.status == 200;
            if (answered) {
                try {
                    answered = !parse_model_list(r.body).empty();
                } catch (const std::exception&) {
                    answered = false;
                }
            }
            {
                std::unique_lock lock(m_);
                probes_[server].reset();
                if (answered) admitted_[server] = true;
                if (!answered && !stopping_)
                    probe_wake_.wait_for(lock, rest, [&] { return stopping_; });
                if (stopping_ || answered) break;
            }
            rest = std::min(rest * 2, max_rest_);
        }
        bool admitted = false;
        {
            std::lock_guard lock(m_);
            admitted = admitted_[server];
            --probers_running_;
        }
        if (!admitted) return;
        wake_.notify_all();  // jobs waiting for a server
        if (on_notice_) on_notice_(urls_[server].text + " answers now; it gets segments too");
    }

    /// Whether every admitted server has failed attempts_per_server times in a row and rests.
    bool all_down(Clock::time_point now) const {
        for (std::size_t i = 0; i < urls_.size(); ++i)
            if (admitted_[i] &&
                (pool_.failures(i) < attempts_per_server_ || !pool_.resting(i, now)))
                return false;
        return true;
    }

    int admitted_servers() const {
        return static_cast<int>(std::count(admitted_.begin(), admitted_.end(), true));
    }

    /// "http://a:8000: HTTP 401 Unauthorized: invalid API key; http://b:8000: cannot connect".
    std::string failure_message(const std::vector<std::string>& errors) const {
        std::string out = urls_.size() == 1 ? "the server could not translate the segment: "
                                            : "no server could translate the segment: ";
        bool first = true;
        for (std::size_t i = 0; i < urls_.size(); ++i) {
            const std::string why =
                !errors[i].empty() ? errors[i]
                : admitted_[i]     ? std::string()
                               : std::string("has not answered its model list, so was not used");
            if (why.empty()) continue;
            out += (first ? "" : "; ") + urls_[i].text + ": " + why;
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
        // Content chunks beyond the tokens asked for (a chunk holds one token or more): the
        // server does not stop, and is cut off here.
        const int max_tokens = max_tokens_for(job.job);

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
            if (!c.content.empty()) {
                if (a.pieces >= max_tokens) {
                    a.reached_limit = true;
                    complete = true;
                    return false;
                }
                on_piece(c.content);
            }
            if (c.finish_reason) {
                complete = true;  // usage may follow, then [DONE]
                if (*c.finish_reason == "length") a.reached_limit = true;
            }
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
        if (job.expired && !job.cancelled) {
            a.kind = Attempt::Kind::ServerFault;
            a.error = "no complete answer within " +
                      seconds(std::chrono::duration_cast<std::chrono::milliseconds>(
                          http_.read_timeout * kAnswerDeadlineFactor)) +
                      " (" + std::to_string(a.pieces) + " pieces of the translation came)";
            return a;
        }
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
                why += " (" + std::to_string(a.pieces) + " pieces of the translation had come)";
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
                a.reached_limit = c.finish_reason == "length";
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
    HttpSettings probe_http_;  // model-list requests to unverified servers
    std::chrono::milliseconds first_rest_{500}, max_rest_{30000};
    std::function<void(const std::string&)> on_notice_;
    std::string device_;
    int attempts_per_server_ = 1;
    int max_attempts_ = 1;

    mutable std::mutex m_;
    std::condition_variable wake_;        // workers: a job, a free slot, a rested server, stop
    std::condition_variable reap_wake_;   // the reaper: a cancelled job, a deadline, stop
    std::condition_variable probe_wake_;  // probers resting: stop
    std::vector<bool> admitted_;          // by server: may get requests (its models answered)
    std::vector<std::shared_ptr<HttpCall>> probes_;  // by server: a model-list request in flight
    int probers_running_ = 0;
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
    std::vector<std::thread> probers_;
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
