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
};

enum class FinishReason { Stop, Length, Cancelled };

struct GenerationResult {
    std::vector<int32_t> tokens;  ///< generated ids, stop token excluded
    FinishReason finish = FinishReason::Length;
    double prefill_ms = 0;  ///< time to first token, ms
    double decode_ms = 0;   ///< time of the remaining steps, ms
};

/// Called with each generated token (stop token excluded); return false to cancel.
using TokenCallback = std::function<bool(int32_t token)>;

/// Generates a continuation of `prompt` (non-empty). The KV cache is sized for
/// prompt + max_new_tokens. Throws Error when the prompt is empty or longer than the model's
/// max_position_embeddings.
GenerationResult generate(CausalLM& model, std::span<const int32_t> prompt,
                          const GenerationParams& params, const TokenCallback& on_token = {});

}  // namespace mtdesk
