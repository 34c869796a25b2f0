// Next-token selection with transformers' logits processors, in their order:
// RepetitionPenaltyLogitsProcessor, then TemperatureLogitsWarper, TopKLogitsWarper,
// TopPLogitsWarper, softmax and a multinomial draw (generation/logits_process.py).

#include "mtdesk/runtime/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "mtdesk/error.h"

namespace mtdesk {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// A uniform double in [0, 1) from the top 53 bits of one 64-bit draw: portable, unlike
// std::uniform_real_distribution whose algorithm is implementation-defined.
double uniform01(std::mt19937_64& rng) {
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

int32_t argmax(std::span<const float> logits) {
    int32_t best = 0;
    for (std::size_t i = 1; i < logits.size(); ++i) {
        if (logits[i] > logits[best]) best = static_cast<int32_t>(i);  // first wins on ties
    }
    return best;
}

}  // namespace

uint64_t random_seed() {
    std::random_device device;
    // random_device yields 32 bits a call.
    return (static_cast<uint64_t>(device()) << 32) | device();
}

SamplingParams with_seed(SamplingParams params) {
    if (!params.seed) params.seed = random_seed();
    return params;
}

Sampler::Sampler(const SamplingParams& params) : params_(with_seed(params)), rng_(*params_.seed) {
    if (!params.greedy && !(params.temperature > 0.0f && std::isfinite(params.temperature))) {
        throw Error("sampling temperature must be > 0, got " + std::to_string(params.temperature));
    }
    if (!(params.top_p > 0.0f && params.top_p <= 1.0f)) {
        throw Error("top_p must be in (0, 1], got " + std::to_string(params.top_p));
    }
    if (!(params.repetition_penalty > 0.0f && std::isfinite(params.repetition_penalty))) {
        throw Error("repetition_penalty must be > 0, got " +
                    std::to_string(params.repetition_penalty));
    }
    if (params.top_k < 0) {
        throw Error("top_k must be >= 0, got " + std::to_string(params.top_k));
    }
}

int32_t Sampler::sample(std::span<float> logits, std::span<const int32_t> history) {
    const int64_t vocab = static_cast<int64_t>(logits.size());
    if (vocab == 0) throw Error("Sampler::sample: empty logits");

    // 1. Repetition penalty over the distinct ids of the history.
    if (params_.repetition_penalty != 1.0f && !history.empty()) {
        std::vector<bool> seen(static_cast<std::size_t>(vocab), false);
        const float p = params_.repetition_penalty;
        for (int32_t id : history) {
            if (id < 0 || id >= vocab) {
                throw Error("Sampler::sample: history id " + std::to_string(id) +
                            " outside the vocabulary");
            }
            if (seen[id]) continue;
            seen[id] = true;
            float& l = logits[id];
            l = l < 0.0f ? l * p : l / p;
        }
    }
    if (params_.greedy) return argmax(logits);

    // 2. Temperature.
    if (params_.temperature != 1.0f) {
        for (float& l : logits)
            l /= params_.temperature;
    }

    // 3. Top-k: keep every logit >= the k-th largest (ties at the threshold are kept, as
    //    TopKLogitsWarper's `scores < topk(...)[-1]` does).
    if (params_.top_k > 0 && params_.top_k < vocab) {
        std::vector<float> copy(logits.begin(), logits.end());
        std::nth_element(copy.begin(), copy.begin() + (params_.top_k - 1), copy.end(),
                         std::greater<float>());
        const float threshold = copy[params_.top_k - 1];
        for (float& l : logits) {
            if (l < threshold) l = kNegInf;
        }
    }

    // Candidates, best first; ties broken by the lower id.
    std::vector<int32_t> cand;
    cand.reserve(static_cast<std::size_t>(vocab));
    for (int64_t i = 0; i < vocab; ++i) {
        if (logits[i] != kNegInf) cand.push_back(static_cast<int32_t>(i));
    }
    if (cand.empty()) return argmax(logits);  // every logit -inf: nothing to draw from
    std::sort(cand.begin(), cand.end(), [&](int32_t a, int32_t b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });

    // Softmax over the candidates (double).
    const double max_logit = logits[cand.front()];
    std::vector<double> prob(cand.size());
    double total = 0;
    for (std::size_t i = 0; i < cand.size(); ++i) {
        prob[i] = std::exp(static_cast<double>(logits[cand[i]]) - max_logit);
        total += prob[i];
    }
    for (double& p : prob)
        p /= total;

    // 4. Top-p: walking from the least likely up, drop tokens while the cumulative probability
    //    stays <= 1 - top_p (TopPLogitsWarper); the most likely token is always kept. This keeps
    //    the smallest set of top tokens whose probability reaches top_p.
    std::size_t keep = cand.size();
    if (params_.top_p < 1.0f) {
        const double limit = 1.0 - static_cast<double>(params_.top_p);
        double cum = 0;
        while (keep > 1) {
            cum += prob[keep - 1];
            if (cum > limit) break;
            --keep;
        }
        for (std::size_t i = keep; i < cand.size(); ++i)
            logits[cand[i]] = kNegInf;
    }

    // 5. Renormalise over the kept tokens and draw.
    double kept_total = 0;
    for (std::size_t i = 0; i < keep; ++i)
        kept_total += prob[i];
    const double u = uniform01(rng_) * kept_total;
    double cum = 0;
    for (std::size_t i = 0; i < keep; ++i) {
        cum += prob[i];
        if (u < cum) return cand[i];
    }
    return cand[keep - 1];  // rounding left u at the very top
}

}  // namespace mtdesk
