// Rotary position embedding: inverse frequencies per RoPE type, cos/sin tables, the rotation.

#include <cmath>
#include <numbers>
#include <string>

#include "cpu/ops_cpu.h"
#include "mtdesk/error.h"

namespace mtdesk::cpu {

namespace {

// Llama 3.1 frequency-band scaling (modeling_rope_utils._compute_llama3_parameters), in type T.
template <typename T>
T llama3_scale(T inv_freq, const ModelConfig& c) {
    const T factor = static_cast<T>(c.rope_factor);
    const T low_ff = static_cast<T>(c.rope_low_freq_factor);
    const T high_ff = static_cast<T>(c.rope_high_freq_factor);
    const T old_len = static_cast<T>(c.rope_original_max_position);
    const T low_freq_wavelen = old_len / low_ff;
    const T high_freq_wavelen = old_len / high_ff;
    const T wavelen = static_cast<T>(2 * std::numbers::pi) / inv_freq;
    const T scaled = wavelen > low_freq_wavelen ? inv_freq / factor : inv_freq;
    if (wavelen < high_freq_wavelen || wavelen > low_freq_wavelen) return scaled;
    const T smooth = (old_len / wavelen - low_ff) / (high_ff - low_ff);
    return (T(1) - smooth) * scaled / factor + smooth * scaled;
}

}  // namespace

RopeFrequencies rope_frequencies(const ModelConfig& config, bool float32_like_torch) {
    const int d = config.head_dim;
    if (d <= 0 || d % 2 != 0) {
        throw Error("RoPE needs an even head_dim, got " + std::to_string(d));
    }
    const double theta = config.rope_type == RopeType::DynamicAlpha ? config.effective_rope_theta()
                                                                    : config.rope_theta;
    RopeFrequencies out;
    out.float32_like_torch = float32_like_torch;
    out.inv_freq.resize(d / 2);
    for (int i = 0; i < d / 2; ++i) {
        if (float32_like_torch) {
            // torch: 1.0 / (base ** (arange(0, d, 2).float() / d)), all in float32.
            const float base = static_cast<float>(theta);
            const float exponent = static_cast<float>(2 * i) / static_cast<float>(d);
            const float p = static_cast<float>(std::pow(static_cast<double>(base), exponent));
            float f = 1.0f / p;
            if (config.rope_type == RopeType::Linear) f /= static_cast<float>(config.rope_factor);
            if (config.rope_type == RopeType::Llama3) f = llama3_scale<float>(f, config);
            out.inv_freq[i] = f;
        } else {
            double f = 1.0 / std::pow(theta, static_cast<double>(2 * i) / d);
            if (config.rope_type == RopeType::Linear) f /= config.rope_factor;
            if (config.rope_type == RopeType::Llama3) f = llama3_scale<double>(f, config);
            out.inv_freq[i] = f;
        }
    }
    return out;
}

void rope_cos_sin(const RopeFrequencies& freqs, int64_t start_pos, int64_t tokens, float* cos,
                  float* sin) {
    const int64_t half = static_cast<int64_t>(freqs.inv_freq.size());
    for (int64_t t = 0; t < tokens; ++t) {
        const int64_t pos = start_pos + t;
        for (int64_t i = 0; i < half; ++i) {
            double angle;
            if (freqs.float32_like_torch) {
                angle = static_cast<float>(pos) * static_cast<float>(freqs.inv_freq[i]);
            } else {
                angle = static_cast<double>(pos) * freqs.inv_freq[i];
            }
            cos[t * half + i] = static_cast<float>(std::cos(angle));
            sin[t * half + i] = static_cast<float>(std::sin(angle));
        }
    }
}

void rope(float* x, int64_t tokens, int64_t heads, int64_t head_dim, const float* cos,
          const float* sin) {
    const int64_t half = head_dim / 2;
    for (int64_t t = 0; t < tokens; ++t) {
        const float* c = cos + t * half;
        const float* s = sin + t * half;
        for (int64_t h = 0; h < heads; ++h) {
            float* v = x + (t * heads + h) * head_dim;
            for (int64_t i = 0; i < half; ++i) {
                const float x1 = v[i];
                const float x2 = v[i + half];
                v[i] = x1 * c[i] - x2 * s[i];
                v[i + half] = x2 * c[i] + x1 * s[i];
            }
        }
    }
}

}  // namespace mtdesk::cpu
