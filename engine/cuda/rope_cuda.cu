// The attention input step for a batch of tokens (qkv_rope_cache): a warp per head vector,
// its arithmetic in attention_input.cuh.

#include "cuda/attention_input.cuh"
#include "cuda/cuda_common.h"
#include "cuda/dtype_cuda.cuh"
#include "cuda/launch_cuda.cuh"
#include "cuda/ops_cuda.h"

namespace mtdesk::cuda {
namespace {

constexpr int kMaxHeadDim = kInputMaxHeadDim;
// Head vectors (warps) per block: one at decode, where the kernel is a chain of memory round
// trips and its (token, head) warps spread over the multiprocessors; four for steps of more
// than kOneWarpMaxTokens tokens (prefill chunks), where blocks of one warp would stop at the
// multiprocessor's limit of 32 resident blocks, half its warps.
constexpr int kPrefillWarps = 4;
constexpr int kOneWarpMaxTokens = 64;

// grid (ceil(tokens / kWarps), heads + 2 kv_heads), kWarps warps: warp w of block (b, h) makes
// head vector h (Q, K or V) of token b kWarps + w (input_head()). A warp's work does not depend
// on the others'.
template <typename T, bool kInt8, int kWarps>
__global__ void __launch_bounds__(32 * kWarps)
    qkv_rope_cache_kernel(T* qkv, AttentionInputArgs in, const int32_t* positions,
                          KvCacheLayer cache, int tokens, int heads, int kv_heads, int d) {
    __shared__ float s_v[kWarps][kMaxHeadDim], s_cos[kWarps][kMaxHeadDim],
        s_sin[kWarps][kMaxHeadDim];
    const int warp = threadIdx.x >> 5;
    const int t = blockIdx.x * kWarps + warp, h = blockIdx.y;
    if (t >= tokens) return;  // whole warps: only warp-level synchronisation below
    // At decode this kernel is a chain of memory round trips. Before pdl_wait() it reads what
    // is in place before the step's first kernel runs (slot, position, the rotary factors of
    // the position) while the kernel before it finishes; the head vector comes after.
    const int64_t slot = in.slots[t];
    const int position = positions[t];
    if (h < heads + kv_heads) rope_factors<T>(s_cos[warp], s_sin[warp], in, position, d);
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    const int64_t row_width = static_cast<int64_t>(heads + 2 * kv_heads) * d;
    input_head<T, kInt8>(s_v[warp], s_cos[warp], s_sin[warp], qkv + t * row_width, in, cache, slot,
                         h, heads, kv_heads, d, true, true);
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
    const AttentionInputArgs in{qkv_bias, q_norm, k_norm, norm, eps, cos, sin, slots};
    launch(kernel, grid, dim3(32 * warps), 0, stream, qkv, in, positions, cache, tokens, heads,
           kv_heads, head_dim);
    MTDESK_CUDA_CHECK_LAUNCH();
}

#define INSTANTIATE(T)                                                                             \
    template void qkv_rope_cache<T>(T*, const T*, const T*, const T*, QkNorm, float, const float*, \
                                    const float*, const int32_t*, const int32_t*,                  \
                                    const KvCacheLayer&, int, int, int, int, cudaStream_t)
MTDESK_INSTANTIATE_T(INSTANTIATE);

}  // namespace mtdesk::cuda
