// CudaModel behind the CausalLM interface: one sequence at a time, its KV cache a list of
// blocks from the model's pool. Used by the Translator the batching engine exposes, by
// open_cuda_translator() and by the parity tests.

#include "cuda/cuda_causal_lm.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "mtdesk/error.h"

namespace mtdesk::cuda {
namespace {

class CudaKvState final : public KvState {
  public:
    CudaKvState(std::shared_ptr<CudaModel> model, int capacity)
        : model_(std::move(model)), capacity_(capacity) {}
    ~CudaKvState() override {
        for (int b : blocks_)
            model_->free_block(b);
    }
    int length() const noexcept override { return length_; }
    int capacity() const noexcept override { return capacity_; }
    void truncate(int n) override {
        if (n < 0 || n > length_) throw Error("KvState::truncate beyond the length");
        length_ = n;
    }

    /// Makes the blocks cover `positions`; throws when the pool is exhausted.
    void reserve(int positions) {
        const int bs = model_->options().block_size;
        while (static_cast<int>(blocks_.size()) * bs < positions) {
            const int b = model_->allocate_block();
            if (b < 0)
                throw Error("the KV cache is full: " + std::to_string(model_->num_blocks()) +
                            " blocks of " + std::to_string(bs) + " positions are in use");
            blocks_.push_back(b);
        }
    }
    std::span<const int32_t> table() const { return blocks_; }
    void advance(int n) { length_ += n; }
    CudaModel& model() { return *model_; }

  private:
    std::shared_ptr<CudaModel> model_;
    std::vector<int32_t> blocks_;
    int length_ = 0, capacity_ = 0;
};

class CudaCausalLM final : public CausalLM {
  public:
    explicit CudaCausalLM(std::shared_ptr<CudaModel> model) : model_(std::move(model)) {}

    const ModelConfig& config() const noexcept override { return model_->config(); }

    std::unique_ptr<KvState> new_state(int max_positions) const override {
        const ModelConfig& c = model_->config();
        if (max_positions < 1 || max_positions > c.max_position_embeddings)
            throw Error("KV cache of " + std::to_string(max_positions) +
                        " positions requested; the model allows 1 .. " +
                        std::to_string(c.max_position_embeddings));
        return std::make_unique<CudaKvState>(model_, max_positions);
    }

    void forward(KvState& state, std::span<const int32_t> tokens, std::span<float> logits,
                 bool all_positions) override {
        auto* st = dynamic_cast<CudaKvState*>(&state);
        if (!st) throw Error("CudaCausalLM::forward: the state was not made by this model");
        const int n = static_cast<int>(tokens.size());
        if (n == 0) throw Error("CudaCausalLM::forward: no tokens");
        if (st->length() + n > st->capacity())
            throw Error("KV cache overflow: " + std::to_string(st->length()) +
                        " positions held + " + std::to_string(n) + " new > capacity " +
                        std::to_string(st->capacity()));
        const int64_t vocab = model_->config().vocab_size;
        const int64_t rows = all_positions ? n : 1;
        if (static_cast<int64_t>(logits.size()) < rows * vocab)
            throw Error("CudaCausalLM::forward: logits buffer too small");
        st->reserve(st->length() + n);
        // Long inputs go through in chunks of the step limit.
        const int chunk = model_->options().max_step_tokens;
        std::vector<float> host;
        int64_t written = 0;
        for (int s = 0; s < n; s += chunk) {
            const int m = std::min(chunk, n - s);
            const bool last = s + m == n;
            StepSequence seq;
            seq.tokens = tokens.subspan(s, m);
            seq.start = st->length();
            seq.block_table = st->table();
            seq.logits = all_positions ? StepSequence::Logits::All
                         : last        ? StepSequence::Logits::Last
                                       : StepSequence::Logits::None;
            const int got = model_->forward(std::span<const StepSequence>(&seq, 1));
            st->advance(m);
            if (got == 0) continue;
            model_->logits_to_host(host);
            std::copy(host.begin(), host.end(), logits.begin() + written);
            written += static_cast<int64_t>(host.size());
        }
    }

  private:
    std::shared_ptr<CudaModel> model_;
};

}  // namespace

std::unique_ptr<CausalLM> make_cuda_causal_lm(std::shared_ptr<CudaModel> model) {
    return std::make_unique<CudaCausalLM>(std::move(model));
}

}  // namespace mtdesk::cuda
