// The batching TranslationEngine on one GPU: continuous batching over a paged KV cache.
//
// One engine thread owns the GPU. Each step it (1) takes new jobs and cancellations, (2) gives
// every running sequence its next token slot (preempting the newest sequence when KV blocks
// run out: its blocks are freed and it is re-queued to be prefilled again from its prompt and
// the tokens it already generated, so nothing it produced is lost), (3) fills the rest of the
// step's token budget with prefill chunks of waiting sequences, (4) runs one forward pass over
// all of them and picks the next tokens on the GPU. With overlap_steps the step is queued before
// the tokens of the step before are read (those sequences feed theirs from the GPU as pending
// tokens), and then the host reads, detokenises and streams them while the GPU computes. A job
// whose segment is longer than the model's source budget becomes several sequences (pieces cut at
// sentence boundaries, as Translator::translate does), joined in order at the end. The design
// follows vLLM's scheduler (Kwon et al. 2023) and Orca's iteration-level scheduling (Yu et al.
// 2022); the overlap, vLLM's asynchronous scheduling and SGLang's overlap scheduler.

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "cuda/cuda_causal_lm.h"
#include "cuda/cuda_common.h"
#include "cuda/cuda_model.h"
#include "mtdesk/cuda/cuda_engine.h"
#include "mtdesk/error.h"
#include "mtdesk/model/model_dir.h"
#include "mtdesk/runtime/latency_window.h"
#include "mtdesk/runtime/sampling.h"
#include "mtdesk/translate/casing_guard.h"
#include "mtdesk/translate/segmenter.h"

namespace mtdesk::cuda {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Job;

/// One prompt being generated: a whole segment, or one piece of a long one.
struct Sequence {
    Job* job = nullptr;
    int piece = 0;
    uint64_t order = 0;           ///< admission order; the largest is the newest (preempted first)
    std::vector<int32_t> tokens;  ///< prompt, then generated ids
    int prompt_len = 0;
    int computed = 0;  ///< leading tokens whose keys/values are in the cache
    std::vector<int32_t> blocks;
    int max_new = 0;
    std::unique_ptr<StreamingDecoder> decoder;
    std::string raw;           ///< decoded text so far
    std::size_t streamed = 0;  ///< bytes of raw already passed to on_text
    bool done = false;
    int generated() const { return static_cast<int>(tokens.size()) - prompt_len; }
    /// Whether `n` tokens (prompt included) reach its limits: max_new generated, or the
    /// model's `max_pos` positions.
    bool at_limit(std::size_t n, int max_pos) const {
        return static_cast<int>(n) - prompt_len >= max_new || static_cast<int>(n) >= max_pos;
    }
};

struct Job {
    uint64_t id = 0;
    TranslationJob job;
    JobCallbacks callbacks;
    Clock::time_point submitted, started, first_token;
    bool has_started = false, has_first = false;
    std::vector<std::unique_ptr<Sequence>> pieces;
    int cursor = 0;  ///< first piece not yet finished (streaming goes in piece order)
    bool join_without_spaces = false;
    int prompt_tokens = 0;
};

class CudaEngine final : public TranslationEngine {
  public:
    /// `synthetic`: random weights of those shapes instead of dir's checkpoint (dir then only
    /// provides the tokenizer and chat template).
    CudaEngine(const std::filesystem::path& dir, const CudaEngineOptions& options,
               const LoadProgress& progress, std::optional<ModelConfig> synthetic = {})
        : options_(options) {
        std::exception_ptr failure;
        std::mutex m;
        std::condition_variable cv;
        bool ready = false;
        thread_ = std::thread([&, dir] {
            try {
                load(dir, progress, synthetic);
            } catch (...) {
                failure = std::current_exception();
            }
            {
                std::lock_guard lock(m);
                ready = true;
            }
            cv.notify_one();
            if (!failure) run();
        });
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return ready; });
        lock.unlock();
        if (failure) {
            thread_.join();
            std::rethrow_exception(failure);
        }
    }

    ~CudaEngine() override {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

    uint64_t submit(TranslationJob job, JobCallbacks callbacks) override {
        auto j = std::make_unique<Job>();
        j->job = std::move(job);
        // One seed for every piece and step of the job (random when the request gave none).
        j->job.options.sampling = with_seed(j->job.options.sampling);
        j->callbacks = std::move(callbacks);
        j->submitted = Clock::now();
        std::lock_guard lock(mutex_);
        j->id = ++last_id_;
        const uint64_t id = j->id;
        inbox_.push_back(std::move(j));
        ++queued_;
        wake_.notify_one();
        return id;
    }

    void cancel(uint64_t id) override {
        std::lock_guard lock(mutex_);
        cancels_.push_back(id);
        wake_.notify_one();
    }

    int max_in_flight() const override { return options_.max_batch; }

    EngineStatistics statistics() const override {
        std::lock_guard lock(mutex_);
        return stats_;
    }

    const Translator* translator() const noexcept override { return translator_.get(); }

  private:
    void load(const std::filesystem::path& dir, const LoadProgress& progress,
              const std::optional<ModelConfig>& synthetic) {
        ModelDir md = ModelDir::open(dir);
        if (synthetic) {
            if (md.config.vocab_size > synthetic->vocab_size)
                throw Error("the tokenizer of " + dir.string() + " has more ids than the " +
                            "synthetic model's vocabulary");
            md.config = *synthetic;
        }
        auto tokenizer = load_tokenizer(dir, md.config.vocab_size);
        ChatTemplate chat = ChatTemplate::from_model_dir(dir);
        check_chat_template(chat, *tokenizer, dir);
        model_ = synthetic ? std::shared_ptr<CudaModel>(CudaModel::synthetic(*synthetic, options_))
                           : std::shared_ptr<CudaModel>(CudaModel::load(md, options_, progress));
        model_->warm_up();
        translator_ =
            std::make_unique<Translator>(make_cuda_causal_lm(model_), std::move(tokenizer), chat,
                                         guess_prompt_style(dir), md.generation);
        translator_->set_terminology_prompt(guess_terminology_prompt(dir));
        stats_.device = model_->device_name();
        stats_.tier = std::string(tier_name(options_.tier));
        refresh_memory();
    }

    void refresh_memory() {
        std::size_t free_b = 0, total_b = 0;
        if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return;
        const CudaMemory m = model_->memory();
        std::lock_guard lock(mutex_);
        stats_.vram_total_bytes = static_cast<int64_t>(total_b);
        stats_.vram_used_bytes = static_cast<int64_t>(total_b - free_b);
        stats_.vram_own_bytes = static_cast<int64_t>(m.weights + m.kv_cache + m.workspace);
    }

    // ---- the engine thread ----

    void run() {
        auto last_memory = Clock::now();
        // The step on the GPU whose tokens are not read yet (overlap_steps): the next step is
        // queued before they are, so that the host's work runs while the GPU computes.
        std::optional<QueuedStep> queued;
        for (;;) {
            std::deque<std::unique_ptr<Job>> arrived;
            std::vector<uint64_t> cancels;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] {
                    return stopping_ || queued || !inbox_.empty() || !cancels_.empty() ||
                           !running_.empty() || !waiting_.empty();
                });
                if (stopping_) break;
                arrived.swap(inbox_);
                cancels.swap(cancels_);
            }
            for (auto& j : arrived)
                admit(std::move(j));
            for (uint64_t id : cancels)
                cancel_job(id);
            const auto read = [&] {
                if (queued) collect(*queued);
                queued.reset();
            };
            // A step with prefill chunks is launched kernel by kernel (hundreds of launches,
            // which wait for room in the launch queue): the tokens before it are read first,
            // so that first tokens do not wait behind those launches (batch 64: TTFT 38 -> 60
            // ms on the 7B otherwise).
            if (!waiting_.empty()) read();
            std::optional<QueuedStep> next;
            if (!running_.empty() || !waiting_.empty()) next = step();
            read();
            queued = std::move(next);
            if (!options_.overlap_steps) read();
            if (Clock::now() - last_memory > std::chrono::milliseconds(200)) {
                refresh_memory();
                last_memory = Clock::now();
            }
            publish();
        }
        // Shutdown: every job still known ends as cancelled, exactly once.
        std::deque<std::unique_ptr<Job>> left;
        {
            std::lock_guard lock(mutex_);
            left.swap(inbox_);
        }
        for (auto& j : left)
            finish_cancelled(*j);
        for (auto& [id, j] : jobs_)
            finish_cancelled(*j);
        jobs_.clear();
    }

    void publish() {
        std::lock_guard lock(mutex_);
        stats_.queue_depth = queued_;
        stats_.running = static_cast<int>(running_.size());
        stats_.finished = finished_;
        stats_.preempted = preemptions_;
    }

    /// Builds a job's sequences; answers at once when it cannot be translated.
    void admit(std::unique_ptr<Job> j) {
        Job& job = *j;
        try {
            const PromptRequest& req = job.job.request;
            if (!req.target && !req.chat) throw Error("no target language");
            const Tokenizer& tok = translator_->tokenizer();
            auto count = [&](std::string_view s) { return static_cast<int>(tok.encode(s).size()); };
            const int budget = translator_->source_budget(req);
            std::vector<std::string> texts;
            if (count(req.text) <= budget) {
                texts.push_back(req.text);
            } else {
                for (std::string_view piece : split_to_budget(req.text, budget, count)) {
                    const auto b = piece.find_first_not_of(" \t");
                    if (b == std::string_view::npos) continue;
                    const auto e = piece.find_last_not_of(" \t");
                    texts.emplace_back(piece.substr(b, e - b + 1));
                }
            }
            job.join_without_spaces =
                req.target && (is_chinese(*req.target) || req.target->code == "ja");
            const int max_pos = model_->config().max_position_embeddings;
            for (std::size_t i = 0; i < texts.size(); ++i) {
                auto s = std::make_unique<Sequence>();
                s->job = &job;
                s->piece = static_cast<int>(i);
                PromptRequest part = req;
                part.text = texts[i];
                s->tokens = translator_->encode_prompt(part);
                s->prompt_len = static_cast<int>(s->tokens.size());
                if (s->prompt_len >= max_pos)
                    throw Error("the text is too long for this model: the prompt takes " +
                                std::to_string(s->prompt_len) + " tokens, the model holds " +
                                std::to_string(max_pos));
                s->max_new = std::min({job.job.options.max_new_tokens, 4 * count(part.text) + 32,
                                       max_pos - s->prompt_len});
                s->decoder = std::make_unique<StreamingDecoder>(tok);
                job.prompt_tokens += s->prompt_len;
                job.pieces.push_back(std::move(s));
            }
            if (job.pieces.empty()) {  // blank text
                finish_done(job);
                return;
            }
        } catch (const std::exception& e) {
            JobOutcome o;
            o.status = JobOutcome::Status::Failed;
            o.error = e.what();
            o.queued_ms = ms_between(job.submitted, Clock::now());
            dequeued(job);
            deliver(job, o);
            return;
        }
        for (auto& s : job.pieces)
            waiting_.push_back(s.get());
        jobs_[job.id] = std::move(j);
    }

    void dequeued(Job& job) {
        if (job.has_started) return;
        job.has_started = true;
        job.started = Clock::now();
        std::lock_guard lock(mutex_);
        --queued_;
    }

    void release(Sequence& s) {
        for (int b : s.blocks)
            model_->free_block(b);
        s.blocks.clear();
        s.computed = 0;
    }

    void drop_sequences(Job& job) {
        for (auto& s : job.pieces) {
            release(*s);
            running_.erase(std::remove(running_.begin(), running_.end(), s.get()), running_.end());
            waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), s.get()), waiting_.end());
        }
    }

    void cancel_job(uint64_t id) {
        auto it = jobs_.find(id);
        if (it == jobs_.end()) return;  // unknown, finished, or failed at admission
        std::unique_ptr<Job> job = std::move(it->second);
        jobs_.erase(it);
        drop_sequences(*job);
        finish_cancelled(*job);
    }

    void finish_cancelled(Job& job) {
        JobOutcome o;
        o.status = JobOutcome::Status::Cancelled;
        for (auto& s : job.pieces)
            o.text += s->raw;
        dequeued(job);
        o.queued_ms = ms_between(job.submitted, job.started);
        o.total_ms = ms_between(job.started, Clock::now());
        deliver(job, o);
    }

    void finish_done(Job& job) {
        JobOutcome o;
        dequeued(job);
        bool first = true;
        for (auto& s : job.pieces) {
            if (!first && !job.join_without_spaces) o.text += ' ';
            first = false;
            o.text += clean_translation_output(s->raw, job.job.request.formatted);
            o.generated_tokens += s->generated();
            o.reached_limit =
                o.reached_limit ||
                s->at_limit(s->tokens.size(), model_->config().max_position_embeddings);
        }
        // As Translator::translate does: source acronyms and brand names keep their casing.
        if (job.job.options.casing_guard && !job.job.request.chat)
            o.text = apply_casing_guard(job.job.request.text, o.text);
        o.prompt_tokens = job.prompt_tokens;
        o.queued_ms = ms_between(job.submitted, job.started);
        o.ttft_ms = job.has_first ? ms_between(job.started, job.first_token) : 0;
        o.total_ms = ms_between(job.started, Clock::now());
        deliver(job, o);
    }

    void deliver(Job& job, const JobOutcome& o) {
        {
            std::lock_guard lock(mutex_);
            ++finished_;
            latency_.add(o);
            latency_.fill(stats_);
        }
        if (job.callbacks.on_done) job.callbacks.on_done(o);
    }

    /// Passes on text in piece order: the cursor piece's new text, and when pieces finish,
    /// what the following ones already produced.
    void stream(Job& job) {
        while (job.cursor < static_cast<int>(job.pieces.size())) {
            Sequence& s = *job.pieces[job.cursor];
            if (s.streamed < s.raw.size()) {
                if (s.streamed == 0 && job.cursor > 0 && !job.join_without_spaces &&
                    job.callbacks.on_text)
                    job.callbacks.on_text(" ");
                if (job.callbacks.on_text)
                    job.callbacks.on_text(std::string_view(s.raw).substr(s.streamed));
                s.streamed = s.raw.size();
            }
            if (!s.done) break;
            ++job.cursor;
        }
    }

    bool grow_blocks(Sequence& s, int positions) {
        const int bs = options_.block_size;
        while (static_cast<int>(s.blocks.size()) * bs < positions) {
            const int b = model_->allocate_block();
            if (b < 0) return false;
            s.blocks.push_back(b);
        }
        return true;
    }

    /// Frees the newest running sequence's blocks and puts it back at the front of the queue.
    void preempt(Sequence* victim) {
        release(*victim);
        running_.erase(std::remove(running_.begin(), running_.end(), victim), running_.end());
        waiting_.push_front(victim);
        ++preemptions_;
    }

    /// A sampled row of a queued step: the job and piece of its sequence, and where the
    /// sequence's pending_token() for it sits in Sequence::tokens. Jobs are looked up by id
    /// when the ids arrive: a job may have finished or been cancelled meanwhile.
    struct SampledRow {
        uint64_t job = 0;
        int piece = 0;
        std::size_t at = 0;
    };
    /// A step on the GPU whose tokens the host has not read yet.
    struct QueuedStep {
        std::vector<SampledRow> rows;
    };

    /// Whether a sequence's pending token already takes it to its limit: it finishes when that
    /// token is read, whatever it is, so no step is planned for it.
    bool certain_to_finish(const Sequence& s) const {
        const bool pending = !s.tokens.empty() && s.tokens.back() < 0;
        return pending && s.at_limit(s.tokens.size(), model_->config().max_position_embeddings);
    }

    /// Plans a step and queues it on the GPU: running sequences first (a sequence whose token
    /// of the step before is still being picked feeds it as a pending_token()), then prefill
    /// chunks. Returns the rows it samples, to be read by collect(); nothing when no row is
    /// sampled.
    std::optional<QueuedStep> step() {
        const int budget = options_.max_step_tokens;
        std::vector<Sequence*> batch;
        std::vector<int> feed;  // tokens fed per batch entry
        int used = 0;

        // (2) Running sequences first, oldest first; each needs blocks for what it feeds.
        std::sort(running_.begin(), running_.end(),
                  [](const Sequence* a, const Sequence* b) { return a->order < b->order; });
        for (std::size_t i = 0; i < running_.size() && used < budget;) {
            Sequence* s = running_[i];
            if (certain_to_finish(*s)) {
                ++i;
                continue;
            }
            const int n = std::min(static_cast<int>(s->tokens.size()) - s->computed, budget - used);
            if (!grow_blocks(*s, s->computed + n)) {
                Sequence* victim = running_.back();
                preempt(victim);
                if (victim == s) continue;  // s itself was the newest; i now points past it
                continue;                   // retry s with the freed blocks
            }
            batch.push_back(s);
            feed.push_back(n);
            used += n;
            ++i;
        }
        // (3) Prefill chunks of waiting sequences, oldest first, while blocks and budget last.
        while (!waiting_.empty() && used < budget &&
               static_cast<int>(batch.size()) < options_.max_batch) {
            Sequence* s = waiting_.front();
            const int n = std::min(static_cast<int>(s->tokens.size()) - s->computed, budget - used);
            if (!grow_blocks(*s, s->computed + n)) {
                release(*s);
                if (running_.empty() && batch.empty())
                    fail_too_large(*s);  // even an empty cache cannot hold it
                break;
            }
            waiting_.pop_front();
            if (s->order == 0) s->order = ++admitted_;
            dequeued(*s->job);
            running_.push_back(s);
            batch.push_back(s);
            feed.push_back(n);
            used += n;
        }
        if (batch.empty()) return std::nullopt;

        std::vector<StepSequence> seqs(batch.size());
        std::vector<std::size_t> sampled_rows;  // batch index of each logit row
        for (std::size_t i = 0; i < batch.size(); ++i) {
            Sequence& s = *batch[i];
            seqs[i].tokens = std::span<const int32_t>(s.tokens).subspan(s.computed, feed[i]);
            seqs[i].start = s.computed;
            seqs[i].block_table = s.blocks;
            const bool reaches_end = s.computed + feed[i] == static_cast<int>(s.tokens.size());
            seqs[i].logits = reaches_end ? StepSequence::Logits::Last : StepSequence::Logits::None;
            if (reaches_end) sampled_rows.push_back(i);
        }
        try {
            model_->forward(seqs);
        } catch (const std::exception& e) {
            fail_batch(batch, e.what());
            return std::nullopt;
        }
        for (std::size_t i = 0; i < batch.size(); ++i)
            batch[i]->computed += feed[i];
        if (sampled_rows.empty()) return std::nullopt;

        std::vector<SampleParams> params(sampled_rows.size());
        std::vector<std::span<const int32_t>> histories(sampled_rows.size());
        for (std::size_t r = 0; r < sampled_rows.size(); ++r) {
            Sequence& s = *batch[sampled_rows[r]];
            const SamplingParams& sp = s.job->job.options.sampling;
            SampleParams& p = params[r];
            p.temperature = sp.greedy ? 0.0f : sp.temperature;
            p.top_k = sp.top_k;
            p.top_p = sp.top_p;
            p.repetition_penalty = sp.repetition_penalty;
            p.seed = sp.seed.value_or(0) * 0x100000001B3ull + static_cast<uint64_t>(s.piece);
            // A pending token counts: the same draw as when it had been read before this step.
            p.step = static_cast<uint64_t>(s.generated());
            histories[r] = s.tokens;
        }
        try {
            model_->sample_async(params, histories, translator_->tokenizer().vocab_size());
        } catch (const std::exception& e) {
            fail_batch(batch, e.what());
            return std::nullopt;
        }
        QueuedStep q;
        for (std::size_t r = 0; r < sampled_rows.size(); ++r) {
            Sequence& s = *batch[sampled_rows[r]];
            s.tokens.push_back(pending_token(static_cast<int>(r)));
            q.rows.push_back({s.job->id, s.piece, s.tokens.size() - 1});
        }
        return q;
    }

    /// Reads a queued step's tokens and hands them on: each replaces its sequence's pending
    /// token (a stop token is dropped), and a sequence that stops or reaches its limit
    /// finishes, dropping whatever a later queued step fed it.
    void collect(const QueuedStep& q) {
        std::vector<int32_t> ids;
        try {
            ids = model_->sampled_ids();
        } catch (const std::exception& e) {
            std::vector<Sequence*> batch;
            for (const SampledRow& row : q.rows)
                if (auto it = jobs_.find(row.job); it != jobs_.end())
                    batch.push_back(it->second->pieces[row.piece].get());
            fail_batch(batch, e.what());
            return;
        }
        const auto& stops = translator_->stop_tokens();
        const int max_pos = model_->config().max_position_embeddings;
        std::vector<Job*> touched;
        for (std::size_t r = 0; r < q.rows.size(); ++r) {
            const SampledRow& row = q.rows[r];
            auto it = jobs_.find(row.job);
            if (it == jobs_.end()) continue;  // finished, cancelled or failed meanwhile
            Job& job = *it->second;
            Sequence& s = *job.pieces[row.piece];
            if (s.done) continue;  // stopped at the step before: this row was wasted work
            if (!job.has_first) {
                job.has_first = true;
                job.first_token = Clock::now();
            }
            const int32_t id = ids[r];
            const bool stop = std::find(stops.begin(), stops.end(), id) != stops.end();
            const std::size_t kept = row.at + (stop ? 0 : 1);  // tokens up to this one
            if (!stop) {
                s.tokens[row.at] = id;
                s.raw += s.decoder->push(id);
            }
            if (stop || s.at_limit(kept, max_pos)) {
                s.tokens.resize(kept);
                s.raw += s.decoder->finish();
                s.done = true;
                release(s);
                running_.erase(std::remove(running_.begin(), running_.end(), &s), running_.end());
                waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), &s), waiting_.end());
            }
            touched.push_back(&job);
        }
        std::sort(touched.begin(), touched.end());
        touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
        for (Job* job : touched) {
            stream(*job);
            const bool all_done = std::all_of(job->pieces.begin(), job->pieces.end(),
                                              [](const auto& s) { return s->done; });
            if (all_done) {
                auto it = jobs_.find(job->id);
                std::unique_ptr<Job> owned = std::move(it->second);
                jobs_.erase(it);
                finish_done(*owned);
            }
        }
    }

    void fail_too_large(Sequence& s) {
        Job& job = *s.job;
        auto it = jobs_.find(job.id);
        std::unique_ptr<Job> owned = std::move(it->second);
        jobs_.erase(it);
        drop_sequences(job);
        JobOutcome o;
        o.status = JobOutcome::Status::Failed;
        o.error = "the segment needs more KV cache (" + std::to_string(s.tokens.size()) +
                  " positions) than the whole cache holds (" +
                  std::to_string(static_cast<int64_t>(model_->num_blocks()) * options_.block_size) +
                  "); raise the KV cache budget";
        dequeued(job);
        deliver(job, o);
    }

    void fail_batch(const std::vector<Sequence*>& batch, const std::string& message) {
        std::vector<uint64_t> ids;
        for (Sequence* s : batch)
            ids.push_back(s->job->id);
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
        for (uint64_t id : ids) {
            auto it = jobs_.find(id);
            if (it == jobs_.end()) continue;
            std::unique_ptr<Job> job = std::move(it->second);
            jobs_.erase(it);
            drop_sequences(*job);
            JobOutcome o;
            o.status = JobOutcome::Status::Failed;
            o.error = message;
            dequeued(*job);
            deliver(*job, o);
        }
    }

    CudaEngineOptions options_;
    std::shared_ptr<CudaModel> model_;
    std::unique_ptr<Translator> translator_;
    std::thread thread_;

    // Shared with callers, under mutex_.
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::unique_ptr<Job>> inbox_;
    std::vector<uint64_t> cancels_;
    uint64_t last_id_ = 0;
    int queued_ = 0;
    uint64_t finished_ = 0;
    LatencyWindow latency_;  ///< guarded by mutex_
    bool stopping_ = false;
    EngineStatistics stats_;

    // Engine thread only.
    std::map<uint64_t, std::unique_ptr<Job>> jobs_;
    std::vector<Sequence*> running_;
    std::deque<Sequence*> waiting_;
    uint64_t admitted_ = 0;
    uint64_t preemptions_ = 0;
};

}  // namespace

std::optional<DeviceInfo> device_info(int index) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, index) != cudaSuccess) {
        cudaGetLastError();
        return std::nullopt;
    }
    DeviceInfo d;
    d.index = index;
    d.name = p.name;
    d.compute_capability = p.major * 10 + p.minor;
    d.total_bytes = static_cast<int64_t>(p.totalGlobalMem);
    // Free memory is asked of the device as the current one; the calling thread's current
    // device is put back afterwards, so that its later CUDA calls (an engine's) stay where
    // they were.
    int current = 0;
    const bool had_current = cudaGetDevice(&current) == cudaSuccess;
    std::size_t free_b = 0, total_b = 0;
    if (cudaSetDevice(index) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
        d.free_bytes = static_cast<int64_t>(free_b);
    if (had_current) cudaSetDevice(current);
    cudaGetLastError();
    return d;
}

std::vector<DeviceInfo> devices() {
    std::vector<DeviceInfo> out;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return out;
    }
    for (int i = 0; i < count; ++i)
        if (std::optional<DeviceInfo> d = device_info(i)) out.push_back(*d);
    return out;
}

std::unique_ptr<TranslationEngine> make_cuda_engine(const std::filesystem::path& model_dir,
                                                    const CudaEngineOptions& options,
                                                    const LoadProgress& progress) {
    return std::make_unique<CudaEngine>(model_dir, options, progress);
}

std::unique_ptr<TranslationEngine> make_synthetic_cuda_engine(
    const std::filesystem::path& tokenizer_dir, const ModelConfig& config,
    const CudaEngineOptions& options) {
    return std::make_unique<CudaEngine>(tokenizer_dir, options, LoadProgress{}, config);
}

double copy_bandwidth(int device) {
    MTDESK_CUDA_CHECK(cudaSetDevice(device));
    std::size_t free_b = 0, total_b = 0;
    MTDESK_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const std::size_t bytes =
        free_b > (std::size_t(3) << 30) ? std::size_t(1) << 30 : std::size_t(256) << 20;
    DeviceBuffer a(bytes), b(bytes);
    MTDESK_CUDA_CHECK(cudaMemset(a.get(), 1, bytes));
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    MTDESK_CUDA_CHECK(cudaEventCreate(&e0));
    MTDESK_CUDA_CHECK(cudaEventCreate(&e1));
    std::vector<float> ms;
    for (int i = 0; i < 7; ++i) {
        cudaEventRecord(e0);
        cudaMemcpy(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float t = 0;
        cudaEventElapsedTime(&t, e0, e1);
        ms.push_back(t);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    MTDESK_CUDA_CHECK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    return 2.0 * static_cast<double>(bytes) / (ms[ms.size() / 2] / 1000.0);
}

std::unique_ptr<CausalLM> load_cuda_causal_lm(const std::filesystem::path& model_dir,
                                              const CudaEngineOptions& options) {
    ModelDir md = ModelDir::open(model_dir);
    return make_cuda_causal_lm(std::shared_ptr<CudaModel>(CudaModel::load(md, options)));
}

std::unique_ptr<Translator> open_cuda_translator(const std::filesystem::path& model_dir,
                                                 const CudaEngineOptions& options) {
    ModelDir md = ModelDir::open(model_dir);
    auto tokenizer = load_tokenizer(model_dir, md.config.vocab_size);
    ChatTemplate chat = ChatTemplate::from_model_dir(model_dir);
    check_chat_template(chat, *tokenizer, model_dir);
    auto model = make_cuda_causal_lm(std::shared_ptr<CudaModel>(CudaModel::load(md, options)));
    auto translator = std::make_unique<Translator>(std::move(model), std::move(tokenizer), chat,
                                                   guess_prompt_style(model_dir), md.generation);
    translator->set_terminology_prompt(guess_terminology_prompt(model_dir));
    return translator;
}

}  // namespace mtdesk::cuda
