// Causal attention over the paged KV cache (the twin of cpu/attention_cpu.cpp, which reads a
// contiguous cache).

#include "cuda/cuda_common.h"
#include "cuda/dtype_cuda.cuh"
#include "cuda/ops_cuda.h"

namespace mtdesk::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kMaxHeadDim = 256;
constexpr int kPerLane = kMaxHeadDim / 32;

// grid (tokens, heads), kWarps warps: warp w takes keys w, w + kWarps, ...; lane l holds
// dimensions l, l + 32, ... of the query and of its running output.
template <typename T>
__global__ void paged_attention_kernel(const T* q, int64_t q_stride, const T* k_cache,
                                       const T* v_cache, const int32_t* block_tables,
                                       int max_blocks, const int32_t* token_seq,
                                       const int32_t* token_pos, T* out, int heads, int kv_heads,
                                       int d, int block_size, float scale) {
    const int t = blockIdx.x, h = blockIdx.y;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = h / (heads / kv_heads);
    const int32_t* table = block_tables + static_cast<int64_t>(token_seq[t]) * max_blocks;
    const int length = token_pos[t] + 1;

    float qv[kPerLane], acc[kPerLane];
    const T* qrow = q + t * q_stride + static_cast<int64_t>(h) * d;
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) {
        const int i = lane + 32 * e;
        qv[e] = i < d ? to_f32(qrow[i]) * scale : 0.0f;
        acc[e] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;
    for (int j = warp; j < length; j += kWarps) {
        const int64_t slot =
            static_cast<int64_t>(table[j / block_size]) * block_size + j % block_size;
        const T* k = k_cache + (slot * kv_heads + g) * d;
        float dot = 0.0f;
#pragma unroll
        for (int e = 0; e < kPerLane; ++e) {
            const int i = lane + 32 * e;
            if (i < d) dot += qv[e] * to_f32(k[i]);
        }
        dot = warp_sum(dot);
        const float m_new = fmaxf(m, dot);
        const float correction = __expf(m - m_new);
        const float p = __expf(dot - m_new);
        l = l * correction + p;
        const T* v = v_cache + (slot * kv_heads + g) * d;
#pragma unroll
        for (int e = 0; e < kPerLane; ++e) {
            const int i = lane + 32 * e;
            if (i < d) acc[e] = acc[e] * correction + p * to_f32(v[i]);
        }
        m = m_new;
    }

    // Combine the warps' partial softmaxes.
    __shared__ float s_m[kWarps], s_l[kWarps];
    __shared__ float s_acc[kWarps][kMaxHeadDim];
    if (lane == 0) {
        s_m[warp] = m;
        s_l[warp] = l;
    }
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) {
        const int i = lane + 32 * e;
        if (i < d) s_acc[warp][i] = acc[e];
    }
    __syncthreads();
    float m_all = -INFINITY;
    for (int w = 0; w < kWarps; ++w)
        m_all = fmaxf(m_all, s_m[w]);
    float l_all = 0.0f;
    for (int w = 0; w < kWarps; ++w)
        if (s_m[w] > -INFINITY) l_all += s_l[w] * __expf(s_m[w] - m_all);
    T* orow = out + (static_cast<int64_t>(t) * heads + h) * d;
    for (int i = threadIdx.x; i < d; i += blockDim.x) {
        float o = 0.0f;
        for (int w = 0; w < kWarps; ++w)
            if (s_m[w] > -INFINITY) o += s_acc[w][i] * __expf(s_m[w] - m_all);
        orow[i] = from_f32<T>(o / l_all);
    }
}

}  // namespace

template <typename T>
void paged_attention(const T* q, int64_t q_stride, const T* k_cache, const T* v_cache,
                     const int32_t* block_tables, int max_blocks_per_seq, const int32_t* token_seq,
                     const int32_t* token_pos, T* out, int tokens, int heads, int kv_heads,
                     int head_dim, int block_size, float scale, cudaStream_t stream) {
    if (tokens <= 0) return;
    if (head_dim > kMaxHeadDim) throw Error("CUDA attention: head_dim > 256");
    if (kv_heads <= 0 || heads % kv_heads != 0)
        throw Error("CUDA attention: heads must be a multiple of kv_heads");
    const dim3 grid(tokens, heads);
    paged_attention_kernel<T><<<grid, 32 * kWarps, 0, stream>>>(
        q, q_stride, k_cache, v_cache, block_tables, max_blocks_per_seq, token_seq, token_pos, out,
        heads, kv_heads, head_dim, block_size, scale);
    MTDESK_CUDA_CHECK_LAUNCH();
}

#define INSTANTIATE(T)                                                                            \
    template void paged_attention<T>(const T*, int64_t, const T*, const T*, const int32_t*, int,  \
                                     const int32_t*, const int32_t*, T*, int, int, int, int, int, \
                                     float, cudaStream_t)
MTDESK_INSTANTIATE_T(INSTANTIATE);

}  // namespace mtdesk::cuda
