// The single-sequence generation loop: one forward over the whole prompt (last-position
// logits), then one token per forward through the KV cache, as transformers' generate() does
// with use_cache=True.

#include "mtdesk/runtime/generate.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "mtdesk/error.h"

namespace mtdesk {

GenerationResult generate(CausalLM& model, std::span<const int32_t> prompt,
                          const GenerationParams& params, const TokenCallback& on_token) {
    using Clock = std::chrono::steady_clock;
    const ModelConfig& config = model.config();
    const int64_t max_pos = config.max_position_embeddings;
    if (prompt.empty()) throw Error("generate: empty prompt");
    if (static_cast<int64_t>(prompt.size()) > max_pos) {
        throw Error("generate: prompt of " + std::to_string(prompt.size()) +
                    " tokens exceeds the model's " + std::to_string(max_pos) + " positions");
    }
    if (params.max_new_tokens < 0) {
        throw Error("generate: max_new_tokens must be >= 0, got " +
                    std::to_string(params.max_new_tokens));
    }
    Sampler sampler(params.sampling);  // validates the sampling parameters

    GenerationResult result;
    result.finish = FinishReason::Length;
    if (params.max_new_tokens == 0) return result;

    const int capacity = static_cast<int>(
        std::min<int64_t>(static_cast<int64_t>(prompt.size()) + params.max_new_tokens, max_pos));
    std::unique_ptr<KvState> state = model.new_state(capacity);
    std::vector<float> logits(static_cast<std::size_t>(config.vocab_size));
    // The sampler only sees the ids that may be generated (a prefix of the vocabulary).
    const std::size_t candidates =
        params.vocab_limit > 0
            ? std::min<std::size_t>(logits.size(), static_cast<std::size_t>(params.vocab_limit))
            : logits.size();
    std::vector<int32_t> history(prompt.begin(), prompt.end());
    history.reserve(prompt.size() + params.max_new_tokens);

    const auto t0 = Clock::now();
    model.forward(*state, prompt, logits, /*all_positions=*/false);
    Clock::time_point first_token_time;
    for (;;) {
        const int32_t token = sampler.sample(std::span<float>(logits.data(), candidates), history);
        if (result.tokens.empty()) first_token_time = Clock::now();
        if (std::find(params.stop_tokens.begin(), params.stop_tokens.end(), token) !=
            params.stop_tokens.end()) {
            result.finish = FinishReason::Stop;
            break;
        }
        result.tokens.push_back(token);
        history.push_back(token);
        if (on_token && !on_token(token)) {
            result.finish = FinishReason::Cancelled;
            break;
        }
        if (static_cast<int>(result.tokens.size()) >= params.max_new_tokens ||
            state->length() >= state->capacity()) {
            result.finish = FinishReason::Length;
            break;
        }
        const int32_t next[1] = {token};
        model.forward(*state, next, logits, /*all_positions=*/false);
    }
    const auto t_end = Clock::now();
    if (first_token_time == Clock::time_point{}) first_token_time = t_end;
    result.prefill_ms = std::chrono::duration<double, std::milli>(first_token_time - t0).count();
    result.decode_ms = std::chrono::duration<double, std::milli>(t_end - first_token_time).count();
    return result;
}

}  // namespace mtdesk
