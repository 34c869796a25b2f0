#pragma once
// The generation loop for one sequence: prefill the prompt, then decode token by token.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "mtdesk/runtime/causal_lm.h"
#include "mtdesk/runtime/sampling.h"

namespace mtdesk {

struct GenerationParams {
    SamplingParams sampling;
    int max_new_tokens = 512;
    std::vector<int32_t> stop_tokens;  ///< generation ends after (and without) any of these
    /// When > 0, only ids below it can be generated. Checkpoints pad their embedding beyond the
    /// tokenizer's last id (HY-MT1.5-1.8B: 120818 rows); those rows were never trained and have
    /// no text, so they must not be chosen. Set it to Tokenizer::vocab_size().
    int vocab_limit = 0;
};

enum class FinishReason { Stop, Length, Cancelled };

struct GenerationResult {
    std::vector<int32_t> tokens;  ///< generated ids, stop token excluded
    FinishReason finish = FinishReason::Length;
    double prefill_ms = 0;  ///< time to first token, ms
    double decode_ms = 0;   ///< time of the remaining steps, ms
};

/// Called with each generated token (stop token excluded), in order, right after it is chosen;
/// return false to cancel (the token just delivered stays in the result).
using TokenCallback = std::function<bool(int32_t token)>;

/// Generates a continuation of `prompt` (non-empty): one forward over the whole prompt
/// (last-position logits), then one forward per generated token through the KV cache; each
/// token is chosen by a Sampler(params.sampling) over prompt + output so far. Ends with Stop
/// at a stop token (not included), Cancelled when on_token returns false, Length after
/// max_new_tokens tokens or when the sequence reaches max_position_embeddings (the KV cache
/// is sized for prompt + max_new_tokens, capped there). max_new_tokens == 0 returns no tokens
/// without running the model. prefill_ms runs from the call to the first chosen token,
/// decode_ms from there to the end. Throws Error when the prompt is empty or longer than the
/// model's max_position_embeddings, max_new_tokens < 0, or the sampling parameters are invalid;
/// errors of the model (e.g. an id outside the vocabulary) propagate.
GenerationResult generate(CausalLM& model, std::span<const int32_t> prompt,
                          const GenerationParams& params, const TokenCallback& on_token = {});

}  // namespace mtdesk
