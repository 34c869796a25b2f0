#pragma once
// The attention input step of one head vector by one warp: QKV bias, per-head Q/K RMSNorm,
// rotary embedding, the K/V cache write (the CPU side does these one by one in
// cpu/cpu_model.cpp with cpu/rope_cpu.cpp and cpu/rms_norm_cpu.cpp; the int8 format is
// cpu::quantize_kv_int8's). Shared by qkv_rope_cache_kernel (rope_cuda.cu) and the staged decode
// attention that makes its own input (attention_cuda.cu), so that both give the same bits.

#include <cstdint>

#include "cuda/dtype_cuda.cuh"
#include "cuda/ops_cuda.h"

namespace mtdesk::cuda {

/// Largest head_dim of the input step (its vectors live in shared memory).
constexpr int kInputMaxHeadDim = 256;

/// What the input step reads besides the qkv row (qkv_rope_cache's arguments).
struct AttentionInputArgs {
    const void* bias = nullptr;  ///< [(heads + 2 kv_heads) * d] T, or null
    const void* q_norm = nullptr;
    const void* k_norm = nullptr;
    QkNorm norm = QkNorm::None;
    float eps = 0.0f;
    const float* cos = nullptr;  ///< [max_positions, d / 2]
    const float* sin = nullptr;
    const int32_t* slots = nullptr;  ///< [tokens]
};

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

template <typename T>
__device__ void head_rms_norm(float* v, const T* weight, int d, float eps) {
    const int lane = threadIdx.x & 31;
    float ss = 0.0f;
    for (int i = lane; i < d; i += 32)
        ss += v[i] * v[i];
    const float inv = rsqrtf(warp_sum(ss) / static_cast<float>(d) + eps);
    __syncwarp();
    for (int i = lane; i < d; i += 32)
        v[i] = round_to<T>(to_f32(weight[i]) * round_to<T>(v[i] * inv));
    __syncwarp();
}

/// Writes the head vector v (fp32 in shared memory, d elements) into a cache row: rounded to
/// T, and for an int8 cache quantised as cpu::quantize_kv_int8 does it (the same fp32
/// operations, so the same bits), with its scale.
template <typename T, bool kInt8>
__device__ void store_kv(const float* v, int d, void* cache, float* scales, int64_t row) {
    const int lane = threadIdx.x & 31;
    if constexpr (!kInt8) {
        T* dst = static_cast<T*>(cache) + row * d;
        for (int i = lane; i < d; i += 32)
            dst[i] = from_f32<T>(v[i]);
    } else {
        float amax = 0.0f;
        for (int i = lane; i < d; i += 32)
            amax = fmaxf(amax, fabsf(round_to<T>(v[i])));
        amax = warp_max(amax);
        const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
        int8_t* dst = static_cast<int8_t*>(cache) + row * d;
        for (int i = lane; i < d; i += 32) {
            const int q = __float2int_rn(round_to<T>(v[i]) * inv);
            dst[i] = static_cast<int8_t>(max(-127, min(127, q)));
        }
        if (lane == 0) scales[row] = amax / 127.0f;
    }
}

/// The rotary factors of `position` for the lanes' elements (each lane writes and later reads
/// only its own i), rounded to T: what input_head() rotates with. Reads only the tables, so it
/// may run before pdl_wait().
template <typename T>
__device__ void rope_factors(float* cos_v, float* sin_v, const AttentionInputArgs& in, int position,
                             int d) {
    const int lane = threadIdx.x & 31, half = d / 2;
    const float* c_row = in.cos + static_cast<int64_t>(position) * half;
    const float* s_row = in.sin + static_cast<int64_t>(position) * half;
    for (int i = lane; i < d; i += 32) {
        const int j = i < half ? i : i - half;
        cos_v[i] = round_to<T>(c_row[j]);
        sin_v[i] = round_to<T>(s_row[j]);
    }
}

/// Head vector h (Q below `heads`, then K, then V) of the qkv row `row` by the calling warp,
/// into v (shared memory, d floats, each a value of T): bias added; Q and K normed and rotated
/// with rope_factors()' cos_v / sin_v; K and V written to the cache row of `slot` when
/// `write_kv`; Q written back into the row when `write_q`. transformers' 16-bit rounding: each
/// product and sum rounded to T.
template <typename T, bool kInt8>
__device__ void input_head(float* v, const float* cos_v, const float* sin_v, T* row,
                           const AttentionInputArgs& in, const KvCacheLayer& cache, int64_t slot,
                           int h, int heads, int kv_heads, int d, bool write_kv, bool write_q) {
    const int lane = threadIdx.x & 31, half = d / 2;
    T* src = row + static_cast<int64_t>(h) * d;
    const T* b = in.bias ? static_cast<const T*>(in.bias) + static_cast<int64_t>(h) * d : nullptr;
    for (int i = lane; i < d; i += 32) {
        float x = to_f32(src[i]);
        if (b) x = round_to<T>(x + to_f32(b[i]));
        v[i] = x;
    }
    __syncwarp();
    if (h >= heads + kv_heads) {  // V: straight into the cache
        if (write_kv)
            store_kv<T, kInt8>(v, d, cache.v, cache.v_scale,
                               slot * kv_heads + (h - heads - kv_heads));
        return;
    }
    const bool is_q = h < heads;
    const T* w = static_cast<const T*>(is_q ? in.q_norm : in.k_norm);
    if (in.norm == QkNorm::BeforeRope) head_rms_norm<T>(v, w, d, in.eps);
    float rotated[kInputMaxHeadDim / 32];
    int n = 0;
    for (int i = lane; i < d; i += 32, ++n) {
        // rotate_half: [x1, x2] -> [-x2, x1]; q*cos + rotate_half(q)*sin, each op rounded.
        const float other = i < half ? -v[i + half] : v[i - half];
        rotated[n] = round_to<T>(round_to<T>(v[i] * cos_v[i]) + round_to<T>(other * sin_v[i]));
    }
    __syncwarp();
    n = 0;
    for (int i = lane; i < d; i += 32, ++n)
        v[i] = rotated[n];
    __syncwarp();
    if (in.norm == QkNorm::AfterRope) head_rms_norm<T>(v, w, d, in.eps);
    if (is_q) {
        if (write_q)
            for (int i = lane; i < d; i += 32)
                src[i] = from_f32<T>(v[i]);
    } else if (write_kv) {
        store_kv<T, kInt8>(v, d, cache.k, cache.k_scale, slot * kv_heads + (h - heads));
    }
}

}  // namespace mtdesk::cuda
