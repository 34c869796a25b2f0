#include "serve/endpoints.h"

#include <algorithm>
#include <ctime>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/translate/detect.h"
#include "mtdesk/translate/glossary.h"
#include "mtdesk/translate/languages.h"
#include "serve/answer_cleaner.h"
#include "serve/job_channel.h"
#include "serve/openai_protocol.h"

namespace mtdesk::serve {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// How often a waiting request looks at its client and at the server stopping: a client that
// left is noticed within this, and its job cancelled.
constexpr auto kPoll = 50ms;

Reply json_reply(std::string body, int status = 200) {
    Reply r;
    r.status = status;
    r.body = std::move(body);
    return r;
}

ApiError unavailable() {
    return ApiError(503, "the server is shutting down", "server_error", {}, "server_shutting_down");
}

std::string_view finish_reason(const JobOutcome& o, int bound) {
    // The engines stop at a stop token or after exactly `bound` tokens (Translator::output_bound).
    return o.generated_tokens >= bound ? "length" : "stop";
}

}  // namespace

/// Counts a request in /health's requests_in_flight while any copy of it lives (a streamed
/// answer outlives the handler).
class Endpoints::InFlight {
  public:
    explicit InFlight(std::atomic<int>& count) : count_(count) { ++count_; }
    ~InFlight() { --count_; }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

  private:
    std::atomic<int>& count_;
};

Endpoints::Endpoints(TranslationEngine& engine, std::string model_name, Limits limits)
    : engine_(engine),
      translator_([&]() -> const Translator& {
          if (!engine.translator()) throw Error("mtdesk serve needs an engine with a local model");
          return *engine.translator();
      }()),
      model_name_(std::move(model_name)),
      limits_(limits),
      created_(static_cast<int64_t>(std::time(nullptr))),
      started_(Clock::now()) {
    const int context = translator_.model().config().max_position_embeddings;
    if (limits_.max_prompt_tokens <= 0 || limits_.max_prompt_tokens > context - 1)
        limits_.max_prompt_tokens = context - 1;
}

Reply Endpoints::health() const {
    HealthInfo h;
    h.model = model_name_;
    h.engine = engine_.statistics();
    h.requests_in_flight = in_flight_.load();
    h.disconnects = disconnects_.load();
    h.cancelled_jobs = cancelled_jobs_->load();
    h.uptime_s = std::chrono::duration<double>(Clock::now() - started_).count();
    return json_reply(health_body(h));
}

Reply Endpoints::models() const {
    return json_reply(
        models_body(model_name_, created_, translator_.model().config().max_position_embeddings));
}

Reply Endpoints::model(std::string_view id) const {
    check_model(std::string(id));
    return json_reply(
        model_body(model_name_, created_, translator_.model().config().max_position_embeddings));
}

std::function<void(const JobOutcome&)> Endpoints::count_outcome() const {
    return [count = cancelled_jobs_](const JobOutcome& o) {
        if (o.status == JobOutcome::Status::Cancelled) ++*count;
    };
}

void Endpoints::stop() {
    stopping_ = true;
}

void Endpoints::check_model(const std::string& requested) const {
    if (requested.empty() || requested == model_name_) return;
    throw ApiError(
        404,
        "the model '" + requested + "' does not exist; this server serves '" + model_name_ + "'",
        "invalid_request_error", "model", "model_not_found");
}

int Endpoints::max_tokens(const std::optional<int>& requested) const {
    // More than the limit is not refused but cut (finish_reason "length"), as vLLM does with
    // its context: a client that asks generously, as mtdesk's own does, still gets its answer.
    return std::min(requested.value_or(limits_.max_tokens), limits_.max_tokens);
}

Reply Endpoints::chat(std::string_view body, const ClientWatch& client) {
    auto in_flight = std::make_shared<InFlight>(in_flight_);
    if (stopping_) throw unavailable();
    ChatRequest req = parse_chat_request(body, translator_.recommended_sampling());
    check_model(req.model);

    TranslationJob job;
    job.request.chat = req.messages;
    job.request.text = req.messages.user;  // what the output bound is measured on
    // The engines refuse a job without a target language; a chat's prompt does not depend on it
    // and a chat is never cut into pieces (whose joining is the target's only other use).
    job.request.target = find_language("en");
    job.options.sampling = req.sampling;
    job.options.max_new_tokens = max_tokens(req.max_tokens);
    // The answer is the model's output with the clean-up alone: the casing guard and the
    // formatted prompt's unwrapping need the source segment, which only the client knows.
    job.options.casing_guard = false;

    const int prompt_tokens = static_cast<int>(translator_.encode_prompt(job.request).size());
    if (prompt_tokens > limits_.max_prompt_tokens)
        throw ApiError(
            400,
            "the prompt is too long: the messages make " + std::to_string(prompt_tokens) +
                " tokens and this server accepts at most " +
                std::to_string(limits_.max_prompt_tokens) + " (the model's context is " +
                std::to_string(translator_.model().config().max_position_embeddings) + " tokens)",
            "invalid_request_error", "messages", "context_length_exceeded");
    const int source_tokens =
        static_cast<int>(translator_.tokenizer().encode(job.request.text).size());
    const int bound =
        translator_.output_bound(source_tokens, prompt_tokens, job.options.max_new_tokens);

    const CompletionHeader header{new_completion_id(), static_cast<int64_t>(std::time(nullptr)),
                                  model_name_};
    std::shared_ptr<JobChannel> channel =
        JobChannel::submit(engine_, std::move(job), count_outcome());

    if (!req.stream) {
        AnswerCleaner answer;
        for (;;) {
            JobChannel::Update u = channel->take(kPoll);
            answer.push(u.text);
            if (u.outcome) {
                const JobOutcome& o = *u.outcome;
                if (o.status == JobOutcome::Status::Failed)
                    throw ApiError(500, o.error, "server_error");
                if (o.status == JobOutcome::Status::Cancelled) throw unavailable();
                const Usage usage{o.prompt_tokens, o.generated_tokens};
                return json_reply(
                    chat_completion_body(header, answer.text(), finish_reason(o, bound), usage));
            }
            if (stopping_) {
                channel->cancel();  // its outcome (Cancelled) ends the loop
            } else if (client.gone()) {
                channel->cancel();
                ++disconnects_;
                return json_reply({}, 499);  // nobody reads it
            }
        }
    }

    Reply r;
    r.content_type = "text/event-stream";
    const bool usage_chunk = req.include_usage;
    r.stream = [this, channel, header, usage_chunk, bound, client, in_flight](const Writer& write) {
        auto gone = [&] {
            channel->cancel();
            ++disconnects_;
            return false;
        };
        // Once the client has stopped sending, one comment (which event-stream clients skip)
        // tells: a client that closed answers it with a reset, which gone() sees on the next
        // look; a half-closed one reads it and the stream goes on.
        bool probed = false;
        auto client_left = [&] {
            if (client.gone()) return true;
            if (probed || !client.stopped_sending || !client.stopped_sending()) return false;
            probed = true;
            return !write(": waiting for the model\n\n");
        };
        if (!write(sse_event(chat_chunk_body(header, "assistant", "", std::nullopt, usage_chunk))))
            return gone();
        AnswerCleaner answer;
        for (;;) {
            JobChannel::Update u = channel->take(kPoll);
            const std::string piece = answer.push(u.text);
            if (!piece.empty() && !write(sse_event(chat_chunk_body(header, std::nullopt, piece,
                                                                   std::nullopt, usage_chunk))))
                return gone();
            if (u.outcome) {
                const JobOutcome& o = *u.outcome;
                std::string tail;
                if (o.status == JobOutcome::Status::Done) {
                    tail = sse_event(chat_chunk_body(header, std::nullopt, std::nullopt,
                                                     finish_reason(o, bound), usage_chunk));
                    if (usage_chunk)
                        tail += sse_event(
                            usage_chunk_body(header, {o.prompt_tokens, o.generated_tokens}));
                } else {
                    // The status line is long sent: the error goes in the stream, as vLLM does.
                    const ApiError e = o.status == JobOutcome::Status::Failed
                                           ? ApiError(500, o.error, "server_error")
                                           : unavailable();
                    tail = sse_event(error_body(e));
                }
                tail += sse_done();
                return write(tail);
            }
            if (stopping_) {
                channel->cancel();
            } else if (client_left()) {
                return gone();
            }
        }
    };
    r.release = [channel] { channel->cancel(); };  // a no-op once the job is done
    return r;
}

Reply Endpoints::translate(std::string_view body, const ClientWatch& client) {
    InFlight in_flight(in_flight_);
    const auto start = Clock::now();
    if (stopping_) throw unavailable();
    TranslateRequest req = parse_translate_request(body, translator_.recommended_sampling());
    check_model(req.model);
    TranslateOptions options;
    options.sampling = req.sampling;
    options.max_new_tokens = max_tokens(req.max_tokens);
    options.casing_guard = req.casing_guard;

    // As `mtdesk translate` does with standard input: line by line (a long line is cut at
    // sentence boundaries by the engine), each line's glossary entries those found in it.
    const std::vector<TextLine> lines = split_lines(req.text);
    std::vector<std::shared_ptr<JobChannel>> channels(lines.size());
    std::vector<std::vector<GlossaryEntry>> entries(lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].body.empty()) continue;
        TranslationJob job;
        job.request.text = std::string(lines[i].body);
        job.request.source = req.source;
        job.request.target = req.target;
        job.request.glossary = Glossary::entries_in(job.request.text, req.glossary);
        entries[i] = job.request.glossary;
        job.options = options;
        channels[i] = JobChannel::submit(engine_, std::move(job), count_outcome());
    }
    auto cancel_all = [&] {
        for (auto& c : channels)
            if (c) c->cancel();
    };

    TranslateAnswer answer;
    answer.model = model_name_;
    answer.source = req.source;
    answer.target = req.target;
    if (!req.source && !req.text.empty())
        answer.detected_source = detect_source_language(req.text).language;
    std::string failure;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        answer.translation += lines[i].indent;
        if (channels[i]) {
            std::optional<JobOutcome> o;
            while (!(o = channels[i]->wait_done(kPoll))) {
                if (stopping_) {
                    cancel_all();
                } else if (client.gone()) {
                    cancel_all();
                    disconnects_ += std::count_if(channels.begin(), channels.end(),
                                                  [](const auto& c) { return c && !c->done(); });
                    return json_reply({}, 499);
                }
            }
            if (o->status == JobOutcome::Status::Cancelled) throw unavailable();
            if (o->status == JobOutcome::Status::Failed && failure.empty())
                failure = "line " + std::to_string(i + 1) + ": " + o->error;
            answer.translation += single_line(o->text);
            ++answer.segments;
            // As a chat's finish_reason: an answer as long as its bound ended for its length.
            const int source_tokens =
                static_cast<int>(translator_.tokenizer().encode(lines[i].body).size());
            if (o->status == JobOutcome::Status::Done &&
                o->generated_tokens >= translator_.output_bound(source_tokens, o->prompt_tokens,
                                                                options.max_new_tokens))
                answer.truncated_lines.push_back(static_cast<int>(i) + 1);
            answer.usage.prompt_tokens += o->prompt_tokens;
            answer.usage.completion_tokens += o->generated_tokens;
            answer.queued_ms = std::max(answer.queued_ms, o->queued_ms);
            for (GlossaryEntry& e : Glossary::check(o->text, entries[i])) {
                const bool seen =
                    std::any_of(answer.missing_terms.begin(), answer.missing_terms.end(),
                                [&](const GlossaryEntry& m) {
                                    return m.source == e.source && m.target == e.target;
                                });
                if (!seen) answer.missing_terms.push_back(std::move(e));
            }
        }
        answer.translation += lines[i].trailing;
        answer.translation += lines[i].eol;
    }
    if (!failure.empty()) throw ApiError(500, failure, "server_error");
    answer.total_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return json_reply(translate_body(answer));
}

}  // namespace mtdesk::serve
