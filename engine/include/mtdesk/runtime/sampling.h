#pragma once
// Next-token selection from logits. Semantics and order follow transformers' generate():
// repetition penalty (CTRL, Keskar et al. 2019: logit/p if > 0 else logit*p, over every distinct
// token of prompt and output), then temperature, top-k, top-p (nucleus, Holtzman et al. 2019),
// softmax and a draw from a seeded RNG.

#include <cstdint>
#include <optional>
#include <random>
#include <span>

namespace mtdesk {

struct SamplingParams {
    bool greedy = false;               ///< argmax (after the repetition penalty) instead of a draw
    float temperature = 0.7f;          ///< > 0
    int top_k = 20;                    ///< 0 = off
    float top_p = 0.6f;                ///< 1 = off
    float repetition_penalty = 1.05f;  ///< 1 = off
    /// The draws' seed: the same seed and parameters give the same tokens. Absent: a fresh
    /// random seed for each job (as OpenAI's and vLLM's APIs do without "seed").
    std::optional<uint64_t> seed;

    /// Hunyuan-MT / HY-MT1.5 recommended: top_k 20, top_p 0.6, repetition_penalty 1.05,
    /// temperature 0.7.
    static SamplingParams hunyuan_mt() { return {}; }
    /// Plain greedy decoding, no penalty.
    static SamplingParams greedy_decoding() {
        SamplingParams p;
        p.greedy = true;
        p.repetition_penalty = 1.0f;
        return p;
    }
};

/// A fresh seed from std::random_device, for requests that give none.
uint64_t random_seed();

/// `params` with its seed set: the given one, or random_seed() when absent. Engines call it
/// when they accept a job, so that every piece and step of the job draws from one seed.
SamplingParams with_seed(SamplingParams params);

/// Picks tokens. One instance per sequence (it owns the sequence's RNG).
class Sampler {
  public:
    /// Throws Error for out-of-range parameters (temperature <= 0 when sampling, top_p outside
    /// (0, 1], repetition_penalty <= 0, top_k < 0). Without a seed it draws from random_seed().
    explicit Sampler(const SamplingParams& params);

    /// Chooses the next token. `logits`: [vocab] fp32, modified in place (left as the processed
    /// scores: penalised, divided by the temperature, -inf where top-k / top-p removed a token).
    /// `history`: prompt and generated ids so far (for the repetition penalty).
    /// Greedy: the lowest id among the maximal penalised logits (torch.argmax). Sampling: top-k
    /// keeps every logit >= the k-th largest (ties kept, as TopKLogitsWarper); top-p keeps the
    /// smallest set of most likely tokens whose probability reaches top_p (ties ordered by
    /// lower id first), at least one; the draw walks the renormalised probabilities in that
    /// order with u = (rng() >> 11) * 2^-53, so a seed gives the same tokens on every platform.
    /// Throws Error for empty logits or a history id outside [0, vocab).
    int32_t sample(std::span<float> logits, std::span<const int32_t> history);

    const SamplingParams& params() const noexcept { return params_; }

  private:
    SamplingParams params_;
    std::mt19937_64 rng_;
};

}  // namespace mtdesk
