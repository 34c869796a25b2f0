// The attention input step: QKV bias, per-head Q/K RMSNorm, rotary embedding, KV cache write
// in 16-bit or int8 (the CPU side does these one by one in cpu/cpu_model.cpp with
// cpu/rope_cpu.cpp and cpu/rms_norm_cpu.cpp; the int8 format is cpu::quantize_kv_int8's).

#include "cuda/cuda_common.h"
#include "cuda/dtype_cuda.cuh"
#include "cuda/launch_cuda.cuh"
#include "cuda/ops_cuda.h"

namespace mtdesk::cuda {
namespace {

constexpr int kMaxHeadDim = 256;
// Head vectors (warps) per block: one at decode, where the kernel is a chain of memory round
// trips and its (token, head) warps spread over the multiprocessors; four for steps of more
// than kOneWarpMaxTokens tokens (prefill chunks), where blocks of one warp would stop at the
// multiprocessor's limit of 32 resident blocks, half its warps.
constexpr int kPrefillWarps = 4;
constexpr int kOneWarpMaxTokens = 64;

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

__device__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
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

// grid (ceil(tokens / kWarps), heads + 2 kv_heads), kWarps warps: warp w of block (b, h) makes
// head vector h (Q, K or V) of token b kWarps + w. A warp's work does not depend on the others'.
template <typename T, bool kInt8, int kWarps>
__global__ void __launch_bounds__(32 * kWarps)
    qkv_rope_cache_kernel(T* qkv, const T* bias, const T* q_norm, const T* k_norm, QkNorm norm,
                          float eps, const float* cos_table, const float* sin_table,
                          const int32_t* positions, const int32_t* slots, KvCacheLayer cache,
                          int tokens, int heads, int kv_heads, int d) {
    __shared__ float s_v[kWarps][kMaxHeadDim], s_cos[kWarps][kMaxHeadDim],
        s_sin[kWarps][kMaxHeadDim];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int t = blockIdx.x * kWarps + warp, h = blockIdx.y;
    if (t >= tokens) return;  // whole warps: only warp-level synchronisation below
    float* v = s_v[warp];
    float* cos_v = s_cos[warp];
    float* sin_v = s_sin[warp];
    // At decode this kernel is a chain of memory round trips. Before pdl_wait() it reads what
    // is in place before the step's first kernel runs (slot, position, the rotary factors of
    // the position) while the kernel before it finishes; the head vector comes after.
    const int64_t slot = slots[t];
    const int position = positions[t];
    const int half = d / 2;
    if (h < heads + kv_heads) {
        const float* c_row = cos_table + static_cast<int64_t>(position) * half;
        const float* s_row = sin_table + static_cast<int64_t>(position) * half;
        for (int i = lane; i < d; i += 32) {  // each lane reads back only its own i
            const int j = i < half ? i : i - half;
            cos_v[i] = round_to<T>(c_row[j]);
            sin_v[i] = round_to<T>(s_row[j]);
        }
    }
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    const int64_t row_width = static_cast<int64_t>(heads + 2 * kv_heads) * d;
    T* src = qkv + t * row_width + static_cast<int64_t>(h) * d;
    const T* b = bias ? bias + static_cast<int64_t>(h) * d : nullptr;
    for (int i = lane; i < d; i += 32) {
        float x = to_f32(src[i]);
        if (b) x = round_to<T>(x + to_f32(b[i]));
        v[i] = x;
    }
    __syncwarp();
    if (h >= heads + kv_heads) {  // V: straight into the cache
        store_kv<T, kInt8>(v, d, cache.v, cache.v_scale, slot * kv_heads + (h - heads - kv_heads));
        return;
    }
    const bool is_q = h < heads;
    const T* w = is_q ? q_norm : k_norm;
    if (norm == QkNorm::BeforeRope) head_rms_norm<T>(v, w, d, eps);
    float rotated[kMaxHeadDim / 32];
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
    if (norm == QkNorm::AfterRope) head_rms_norm<T>(v, w, d, eps);
    if (is_q) {
        for (int i = lane; i < d; i += 32)
            src[i] = from_f32<T>(v[i]);
    } else {
        store_kv<T, kInt8>(v, d, cache.k, cache.k_scale, slot * kv_heads + (h - heads));
    }
}

}  // namespace

template <typename T>
void qkv_rope_cache(T* qkv, const T* qkv_bias, const T* q_norm, const T* k_norm, QkNorm norm,
                    float eps, const float* cos, const float* sin, const int32_t* positions,
                    const int32_t* slots, const KvCacheLayer& cache, int tokens, int heads,
                    int kv_heads, int head_dim, cudaStream_t stream) {
    if (tokens <= 0) return;
    if (head_dim > kMaxHeadDim || head_dim % 2 != 0)
        throw Error("CUDA attention supports even head_dim up to 256, got " +
                    std::to_string(head_dim));
    const bool int8 = cache.storage == KvCacheLayer::Storage::Int8;
    if (int8 && (!cache.k_scale || !cache.v_scale))
        throw Error("CUDA KV cache: an int8 cache needs its scale arrays");
    const int warps = tokens > kOneWarpMaxTokens ? kPrefillWarps : 1;
    const dim3 grid((tokens + warps - 1) / warps, heads + 2 * kv_heads);
    auto kernel =
        warps == 1 ? (int8 ? qkv_rope_cache_kernel<T, true, 1> : qkv_rope_cache_kernel<T, false, 1>)
                   : (int8 ? qkv_rope_cache_kernel<T, true, kPrefillWarps>
                           : qkv_rope_cache_kernel<T, false, kPrefillWarps>);
    launch(kernel, grid, dim3(32 * warps), 0, stream, qkv, qkv_bias, q_norm, k_norm, norm, eps, cos,
           sin, positions, slots, cache, tokens, heads, kv_heads, head_dim);
    MTDESK_CUDA_CHECK_LAUNCH();
}

#define INSTANTIATE(T)                                                                             \
    template void qkv_rope_cache<T>(T*, const T*, const T*, const T*, QkNorm, float, const float*, \
                                    const float*, const int32_t*, const int32_t*,                  \
                                    const KvCacheLayer&, int, int, int, int, cudaStream_t)
MTDESK_INSTANTIATE_T(INSTANTIATE);

}  // namespace mtdesk::cuda
