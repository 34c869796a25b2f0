// Causal grouped-query attention over the KV cache.

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/ops_cpu.h"
#include "cpu/thread_pool_cpu.h"

namespace mtdesk::cpu {

void attention(const float* q, const float* k_cache, const float* v_cache, float* out,
               int64_t tokens, int64_t past, int64_t heads, int64_t kv_heads, int64_t head_dim,
               float scale, ThreadPool& pool) {
    const int64_t group = heads / kv_heads;
    const int64_t kv_stride = kv_heads * head_dim;  // floats between positions in the cache
    const auto run = [&](int64_t begin, int64_t end) {
        std::vector<float> scores(static_cast<std::size_t>(past + tokens));
        for (int64_t idx = begin; idx < end; ++idx) {
            const int64_t t = idx / heads;
            const int64_t h = idx % heads;
            const int64_t g = h / group;
            const int64_t ctx = past + t + 1;  // positions 0 .. past + t
            const float* qv = q + (t * heads + h) * head_dim;
            float max_score = -std::numeric_limits<float>::infinity();
            for (int64_t j = 0; j < ctx; ++j) {
                const float* kv = k_cache + j * kv_stride + g * head_dim;
                float dot = 0.0f;
                for (int64_t d = 0; d < head_dim; ++d)
                    dot += qv[d] * kv[d];
                scores[j] = dot * scale;
                max_score = std::max(max_score, scores[j]);
            }
            float sum = 0.0f;
            for (int64_t j = 0; j < ctx; ++j) {
                scores[j] = std::exp(scores[j] - max_score);
                sum += scores[j];
            }
            const float inv_sum = 1.0f / sum;
            float* o = out + (t * heads + h) * head_dim;
            std::fill(o, o + head_dim, 0.0f);
            for (int64_t j = 0; j < ctx; ++j) {
                const float p = scores[j] * inv_sum;
                const float* vv = v_cache + j * kv_stride + g * head_dim;
                for (int64_t d = 0; d < head_dim; ++d)
                    o[d] += p * vv[d];
            }
        }
    };
    // Waking the pool costs tens of microseconds: not worth it for a short decode step.
    const int64_t work = tokens * heads * (past + tokens) * head_dim;
    if (work < (int64_t{1} << 16)) {
        run(0, tokens * heads);
    } else {
        pool.parallel_for(tokens * heads, run);
    }
}

void quantize_kv_int8(const float* x, int64_t rows, int64_t dim, int8_t* q, float* scale) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * dim;
        int8_t* qr = q + r * dim;
        float amax = 0.0f;
        for (int64_t i = 0; i < dim; ++i)
            amax = std::max(amax, std::abs(xr[i]));
        const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
        scale[r] = amax / 127.0f;
        for (int64_t i = 0; i < dim; ++i) {
            // nearbyint rounds half to even in the default rounding mode, as the GPU's
            // __float2int_rn does.
            const float v = std::nearbyint(xr[i] * inv);
            // NaN (a non-finite input) becomes 0, as in the GPU's conversion.
            qr[i] = v == v ? static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f)) : int8_t{0};
        }
    }
}

void dequantize_kv_int8(const int8_t* q, const float* scale, int64_t rows, int64_t dim, float* x) {
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t i = 0; i < dim; ++i)
            x[r * dim + i] = static_cast<float>(q[r * dim + i]) * scale[r];
}

}  // namespace mtdesk::cpu
