#pragma once
// The interface every decoder implementation (CPU now, CUDA later) offers to generation.

#include <cstdint>
#include <memory>
#include <span>

#include "mtdesk/model/config.h"

namespace mtdesk {

/// KV cache of one sequence: keys and values of every position run so far, per layer.
class KvState {
  public:
    virtual ~KvState() = default;
    /// Positions held (= position of the next token).
    virtual int length() const noexcept = 0;
    /// Positions this state can hold.
    virtual int capacity() const noexcept = 0;
    /// Drops positions >= n (n <= length()).
    virtual void truncate(int n) = 0;
};

/// A causal language model that can extend a sequence and return next-token logits.
class CausalLM {
  public:
    virtual ~CausalLM() = default;

    virtual const ModelConfig& config() const noexcept = 0;

    /// An empty KV cache for one sequence of up to `max_positions` tokens.
    virtual std::unique_ptr<KvState> new_state(int max_positions) const = 0;

    /// Runs `tokens` at positions state.length() .. state.length()+n-1 and appends their keys and
    /// values to `state`. Writes fp32 logits, row-major: [n, vocab_size] when `all_positions`,
    /// otherwise [1, vocab_size] for the last token only. `logits` must be at least that large.
    /// Throws Error when the state would overflow its capacity or an id is outside the vocabulary.
    virtual void forward(KvState& state, std::span<const int32_t> tokens, std::span<float> logits,
                         bool all_positions) = 0;
};

}  // namespace mtdesk
