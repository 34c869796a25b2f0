// Causal attention over the paged KV cache (the twin of cpu/attention_cpu.cpp, which reads a
// contiguous cache), from a 16-bit or an int8 cache: one kernel that runs one partition of one
// (token, head) per thread block, and for contexts split into several partitions a second
// kernel that combines their partial softmaxes (FlashDecoding, Dao et al. 2023; the layout of
// vLLM's paged_attention_v2); and for prefill chunks a tensor-core kernel that runs 64 query
// rows of one sequence per thread block over tiles of 64 keys (FlashAttention-2, Dao 2023).

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/async_copy_cuda.cuh"
#include "cuda/attention_input.cuh"
#include "cuda/cuda_common.h"
#include "cuda/dtype_cuda.cuh"
#include "cuda/launch_cuda.cuh"
#include "cuda/ops_cuda.h"
#include "mtdesk/quant/tiers.h"

namespace mtdesk::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kMaxHeadDim = 256;
static_assert(kMaxHeadDim <= kInputMaxHeadDim, "every head_dim checked here has an input step");
// Positions a warp works on at once: their K and V rows are loaded together, so that several
// independent loads are in flight before the first dot product needs its data. Eight for
// head_dim <= 128: a short context (decode at small batch, where a block's loop over the
// context is a chain of memory round trips) then takes half the steps.
template <int kPairs>
constexpr int kKeysPerStep = kPairs <= 2 ? 8 : 4;
// Positions of a partition whose keys and values a block asks L2 for before it waits for the
// kernel before it (see attention_partition_kernel).
constexpr int kPrefetchPositions = 128;
// ... in launches of up to this many tokens (small decode batches, where the kernel is a chain of
// memory round trips; at batch 64 the extra requests cost more than they hide: 7B bf16
// 8,669-8,709 → 8,144-8,199 tok/s with them, and at 8 they bring nothing).
constexpr int kPrefetchMaxTokens = 4;

// prefetch.global.L2: a hint that the line holding p will be read soon (nothing on the host
// emulation).
__device__ __forceinline__ void prefetch_l2(const void* p) {
#if defined(__CUDA_ARCH__)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
    (void)p;
#endif
}

// Two adjacent elements of a cache row as fp32. Rows are read in pairs: head_dim is even, so a
// pair is 4-byte aligned in a 16-bit cache and 2-byte aligned in an int8 one.
template <typename C>
__device__ __forceinline__ float2 load_pair(const C* row, int pair);
template <>
__device__ __forceinline__ float2 load_pair<__nv_bfloat16>(const __nv_bfloat16* row, int pair) {
    return __bfloat1622float2(reinterpret_cast<const __nv_bfloat162*>(row)[pair]);
}
template <>
__device__ __forceinline__ float2 load_pair<__half>(const __half* row, int pair) {
    return __half22float2(reinterpret_cast<const __half2*>(row)[pair]);
}
template <>
__device__ __forceinline__ float2 load_pair<int8_t>(const int8_t* row, int pair) {
    const char2 c = reinterpret_cast<const char2*>(row)[pair];
    return make_float2(static_cast<float>(c.x), static_cast<float>(c.y));
}

/// Where the partition kernel leaves the partial results of split contexts
/// (SplitKvWorkspace's layout).
struct Partials {
    float* out = nullptr;  // [rows, heads, max_partitions, head_dim]
    float* max = nullptr;  // [rows, heads, max_partitions]
    float* sum = nullptr;  // [rows, heads, max_partitions]
    int max_partitions = 0;
};

/// How many partitions a context of `length` positions has: ceil(length / partition), at most
/// `launched` (a context longer than the launch foresaw gets the rest in its last partition).
__device__ __forceinline__ int partitions_of(int length, int partition, int launched) {
    return min((length - 1) / partition + 1, launched);
}

/// Whether token t belongs to a prefill run: a neighbour in the step is the same sequence at
/// the adjacent position. With the tensor-core prefill on, those tokens are its work and the
/// other kernels skip them.
__device__ __forceinline__ bool in_run(const int32_t* token_seq, const int32_t* token_pos, int t,
                                       int tokens) {
    const int s = token_seq[t], p = token_pos[t];
    return (t > 0 && token_seq[t - 1] == s && token_pos[t - 1] == p - 1) ||
           (t + 1 < tokens && token_seq[t + 1] == s && token_pos[t + 1] == p + 1);
}

// Every lane gets the warp's sum of each of its N values, each summed in the same pairs as a
// butterfly (lane l + lane l ^ 16, then ^ 8, ...: the same bits as N separate butterflies) but
// with (N - 1) + (5 - log2 N) + N shuffles instead of 5N (17 for 8 values, not 40): while several
// values are left, each level sends the half that the partner keeps (lanes with the level's bit set
// keep the upper half), so that after log2(N) levels lane l holds value l / (32 / N) alone; the
// rest of the levels sum it, and N broadcasts hand every sum to every lane.
template <int N>
__device__ __forceinline__ void warp_sum_each(float (&s)[N]) {
    static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "a power of two up to 32 values");
    const int lane = threadIdx.x & 31;
    float v[N];
#pragma unroll
    for (int u = 0; u < N; ++u)
        v[u] = s[u];
#pragma unroll
    for (int level = 0; level < 5; ++level) {
        const int o = 16 >> level;
        const int n = N >> (level + 1);  // values a lane keeps after this level
        if (n >= 1) {
            const bool upper = (lane & o) != 0;
#pragma unroll
            for (int i = 0; i < n; ++i) {
                const float keep = upper ? v[i + n] : v[i];
                const float send = upper ? v[i] : v[i + n];
                v[i] = keep + __shfl_xor_sync(0xffffffffu, send, o);
            }
        } else {
            v[0] += __shfl_xor_sync(0xffffffffu, v[0], o);
        }
    }
#pragma unroll
    for (int u = 0; u < N; ++u)
        s[u] = __shfl_sync(0xffffffffu, v[0], u * (32 / N));
}

// Raw bits of two adjacent elements of a cache row, and the pair they hold as fp32 (the values
// load_pair gives): the staged kernel keeps value rows in shared memory in their cache format.
template <typename C>
__device__ __forceinline__ uint32_t pair_bits(const C* row, int pair) {
    if constexpr (sizeof(C) == 2)
        return reinterpret_cast<const uint32_t*>(row)[pair];
    else
        return reinterpret_cast<const uint16_t*>(row)[pair];
}
template <typename C>
__device__ __forceinline__ float2 pair_from_bits(uint32_t bits) {
    if constexpr (std::is_same_v<C, int8_t>) {
        return make_float2(static_cast<float>(static_cast<int8_t>(bits & 0xffu)),
                           static_cast<float>(static_cast<int8_t>((bits >> 8) & 0xffu)));
    } else if constexpr (std::is_same_v<C, __nv_bfloat16>) {
        __nv_bfloat16_raw lo, hi;
        lo.x = static_cast<unsigned short>(bits & 0xffffu);
        hi.x = static_cast<unsigned short>(bits >> 16);
        return make_float2(to_f32(__nv_bfloat16(lo)), to_f32(__nv_bfloat16(hi)));
    } else {
        __half_raw lo, hi;
        lo.x = static_cast<unsigned short>(bits & 0xffffu);
        hi.x = static_cast<unsigned short>(bits >> 16);
        return make_float2(to_f32(__half(lo)), to_f32(__half(hi)));
    }
}

/// What a block of the per-token kernels works on: token t's positions [begin, end) of its
/// context (partition z of parts), against kv head g, whose cache blocks `table` lists.
struct BlockWork {
    int t = 0, begin = 0, end = 0, parts = 1, g = 0;
    const int32_t* table = nullptr;
};

/// The block's work, from what is in place before the step's first kernel runs (the step's
/// metadata); false when the block has nothing to do (a prefill run's token, which the
/// tensor-core kernel takes, or a partition past its token's context). `h0`: its first query
/// head.
__device__ __forceinline__ bool block_work(BlockWork& w, const int32_t* block_tables,
                                           int max_blocks, const int32_t* token_seq,
                                           const int32_t* token_pos, int t, int tokens,
                                           bool skip_runs, int h0, int heads, int kv_heads,
                                           int partition) {
    if (skip_runs && in_run(token_seq, token_pos, t, tokens)) return false;
    const int length = token_pos[t] + 1;
    w.t = t;
    w.parts = partitions_of(length, partition, gridDim.z);
    if (static_cast<int>(blockIdx.z) >= w.parts) return false;
    w.begin = blockIdx.z * partition;
    w.end = static_cast<int>(blockIdx.z) == w.parts - 1 ? length : w.begin + partition;
    w.g = h0 / (heads / kv_heads);
    w.table = block_tables + static_cast<int64_t>(token_seq[t]) * max_blocks;
    return true;
}

/// Asks L2 for the keys and values of the block's first `positions` positions (a hint:
/// the loop still loads them; at decode they would otherwise come from device memory, evicted
/// by the weights streamed since the last step), in launches of up to kPrefetchMaxTokens
/// tokens. The current position may not be written yet: fetching its line early is harmless,
/// L2 is where the write lands. A hint changes no result, so it may depend on the size of the
/// launch. A position per thread: one block-table load each, then the lines of its key and
/// value rows (a thread taking lines one after the other waited on a table load per line:
/// 1.25 µs before pdl_wait() at batch 1, after the kernel before had finished).
template <typename C>
__device__ __forceinline__ void prefetch_positions(const BlockWork& w, const C* k_cache,
                                                   const C* v_cache, int kv_heads, int d,
                                                   int block_size,
                                                   int positions = kPrefetchPositions) {
    if (gridDim.x > kPrefetchMaxTokens) return;
    const int row_bytes = d * static_cast<int>(sizeof(C));
    const int lines = (row_bytes + 127) / 128 + 1;  // rows need not start on a line
    const int count = min(w.end - w.begin, positions);
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
        const int j = w.begin + i;
        const int64_t slot =
            static_cast<int64_t>(w.table[j / block_size]) * block_size + j % block_size;
        const int64_t at = (slot * kv_heads + w.g) * d;
        for (int rest = 0; rest < 2 * lines; ++rest) {
            const C* base = (rest < lines ? k_cache : v_cache) + at;
            const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(base);
            const std::uintptr_t line = (first & ~std::uintptr_t(127)) + (rest % lines) * 128;
            if (line < first + row_bytes) prefetch_l2(reinterpret_cast<const void*>(line));
        }
    }
}

/// The cache rows (head-vector index slot * kv_heads + g) of the K positions j0 .. j0 + K - 1;
/// positions at or past `end` repeat the last one (a valid row) and are masked by
/// step_scores().
template <int K>
__device__ __forceinline__ void step_rows(int64_t (&row)[K], const BlockWork& w, int j0,
                                          int block_size, int kv_heads) {
    if (block_size >= K) {
        // One division for the step instead of one per position (a signed division is some
        // twenty instructions ahead of the loads): its positions lie in cache block b0 and,
        // past that block's end, b0 + 1.
        const unsigned b0 = static_cast<unsigned>(j0) / static_cast<unsigned>(block_size);
        const int r0 = j0 - static_cast<int>(b0) * block_size;
        const int last = min(K - 1, w.end - 1 - j0);  // later ones repeat it
        const int64_t base0 = static_cast<int64_t>(w.table[b0]) * block_size;
        const int64_t base1 =
            r0 + last >= block_size ? static_cast<int64_t>(w.table[b0 + 1]) * block_size : base0;
#pragma unroll
        for (int u = 0; u < K; ++u) {
            const int r = r0 + min(u, last);
            const int64_t slot = r < block_size ? base0 + r : base1 + (r - block_size);
            row[u] = slot * kv_heads + w.g;
        }
    } else {
#pragma unroll
        for (int u = 0; u < K; ++u) {
            const int j = min(j0 + u, w.end - 1);
            const int64_t slot =
                static_cast<int64_t>(w.table[j / block_size]) * block_size + j % block_size;
            row[u] = slot * kv_heads + w.g;
        }
    }
}

/// One query head's scores against a step's keys (qv: the head's pairs, pre-scaled): dot
/// products summed over the warp (every lane gets every sum), an int8 cache's key scales
/// applied (dot(q, s k8) = s dot(q, k8)), positions at or past `end` -inf.
template <bool kInt8, int kPairs, int K>
__device__ __forceinline__ void step_scores(float (&s)[K], const float2 (&qv)[kPairs],
                                            const float2 (&kk)[K][kPairs], const int64_t (&row)[K],
                                            const float* k_scale, int j0, int end) {
#pragma unroll
    for (int u = 0; u < K; ++u) {
        float dot = 0.0f;
#pragma unroll
        for (int e = 0; e < kPairs; ++e)
            dot += qv[e].x * kk[u][e].x + qv[e].y * kk[u][e].y;
        s[u] = dot;
    }
    warp_sum_each(s);
#pragma unroll
    for (int u = 0; u < K; ++u) {
        if constexpr (kInt8) s[u] *= k_scale[row[u]];
        if (j0 + u >= end) s[u] = -INFINITY;
    }
}

/// One step of a stream's online softmax (Milakov & Gimelshein 2018): its maximum m, sum l and
/// unnormalised output acc (this lane's pairs) brought up to date with the step's scores and
/// value rows (vs: an int8 cache's value scales; unused otherwise).
template <bool kInt8, int kPairs, int K>
__device__ __forceinline__ void softmax_step(float& m, float& l, float2 (&acc)[kPairs],
                                             const float (&s)[K], const float2 (&vv)[K][kPairs],
                                             const float (&vs)[K]) {
    float m_new = m;
#pragma unroll
    for (int u = 0; u < K; ++u)
        m_new = fmaxf(m_new, s[u]);
    const float correction = __expf(m - m_new);  // 0 on the first step (m = -inf)
    l *= correction;
#pragma unroll
    for (int e = 0; e < kPairs; ++e) {
        acc[e].x *= correction;
        acc[e].y *= correction;
    }
#pragma unroll
    for (int u = 0; u < K; ++u) {
        const float p = __expf(s[u] - m_new);  // 0 for positions past the end
        l += p;
        float pv = p;
        if constexpr (kInt8) pv *= vs[u];
#pragma unroll
        for (int e = 0; e < kPairs; ++e) {
            acc[e].x += pv * vv[u][e].x;
            acc[e].y += pv * vv[u][e].y;
        }
    }
    m = m_new;
}

/// The end of a block: its kWarps streams' partial softmaxes combined per head in stream order
/// (a stream without positions has m = -inf, l = 0), then the output row rounded to T when the
/// context has one partition, or the partition's maximum, sum and unnormalised output in
/// `partials`. The warps 0 .. kWarps - 1 hold the streams (`stream`: this warp's, or -1); every
/// thread of the block calls it.
template <typename T, int kPairs, int kGroup>
__device__ __forceinline__ void finish_block(const float (&m)[kGroup], const float (&l)[kGroup],
                                             const float2 (&acc)[kGroup][kPairs], int stream,
                                             const BlockWork& w, int tc, int h0, int heads, int d,
                                             T* out, const Partials& partials) {
    const int lane = threadIdx.x & 31;
    __shared__ float s_m[kGroup][kWarps], s_l[kGroup][kWarps];
    __shared__ float s_acc[kGroup][kWarps][kMaxHeadDim];
    if (stream >= 0) {
#pragma unroll
        for (int hh = 0; hh < kGroup; ++hh) {
            if (lane == 0) {
                s_m[hh][stream] = m[hh];
                s_l[hh][stream] = l[hh];
            }
#pragma unroll
            for (int e = 0; e < kPairs; ++e) {
                const int i = 2 * (lane + 32 * e);
                if (i < d) {
                    s_acc[hh][stream][i] = acc[hh][e].x;
                    s_acc[hh][stream][i + 1] = acc[hh][e].y;
                }
            }
        }
    }
    __syncthreads();
#pragma unroll
    for (int hh = 0; hh < kGroup; ++hh) {
        const int h = h0 + hh;
        float m_all = -INFINITY;
#pragma unroll
        for (int s = 0; s < kWarps; ++s)
            m_all = fmaxf(m_all, s_m[hh][s]);
        float weight[kWarps], l_all = 0.0f;
#pragma unroll
        for (int s = 0; s < kWarps; ++s) {
            weight[s] = s_m[hh][s] > -INFINITY ? __expf(s_m[hh][s] - m_all) : 0.0f;
            l_all += s_l[hh][s] * weight[s];
        }
        if (w.parts == 1) {
            T* orow = out + (static_cast<int64_t>(w.t) * heads + h) * d;
            for (int i = threadIdx.x; i < d; i += blockDim.x) {
                float o = 0.0f;
#pragma unroll
                for (int s = 0; s < kWarps; ++s)
                    o += s_acc[hh][s][i] * weight[s];
                orow[i] = from_f32<T>(o / l_all);
            }
            continue;
        }
        const int64_t at =
            (static_cast<int64_t>(tc) * heads + h) * partials.max_partitions + blockIdx.z;
        float* po = partials.out + at * d;
        for (int i = threadIdx.x; i < d; i += blockDim.x) {
            float o = 0.0f;
#pragma unroll
            for (int s = 0; s < kWarps; ++s)
                o += s_acc[hh][s][i] * weight[s];
            po[i] = o;
        }
        if (threadIdx.x == 0) {
            partials.max[at] = m_all;
            partials.sum[at] = l_all;
        }
    }
}

/// This lane's pairs of query head h of token t, times the softmax scale (q may sit at any
/// 2-byte offset, a row of the fused qkv buffer: scalar loads).
template <typename T, int kPairs>
__device__ __forceinline__ void load_query(float2 (&qv)[kPairs], const T* q, int64_t q_stride,
                                           int t, int h, int d, float scale) {
    const int lane = threadIdx.x & 31;
    const T* qrow = q + t * q_stride + static_cast<int64_t>(h) * d;
#pragma unroll
    for (int e = 0; e < kPairs; ++e) {
        const int i = 2 * (lane + 32 * e);
        qv[e] = i < d ? make_float2(to_f32(qrow[i]) * scale, to_f32(qrow[i + 1]) * scale)
                      : make_float2(0.0f, 0.0f);
    }
}

// grid (tokens of this launch, heads / kGroup, partitions), kWarps warps. Block (tc, y, z)
// attends token token0 + tc for the kGroup query heads h = y·kGroup .. y·kGroup + kGroup - 1
// (kGroup = 1: one head; kGroup = heads / kv_heads: a whole group of grouped-query heads, which
// then share each load of their kv head's keys and values), over positions [z * partition, ...)
// of its context. Warp w is stream w: it takes positions begin + Kw .. begin + Kw + K - 1
// (K = kKeysPerStep), then 4K further on, and so on, each step a softmax_step(); lane l holds
// the element pairs (2l, 2l + 1), (2l + 64, 2l + 65), ... of each query and of its running
// output. A head's arithmetic is the same whatever kGroup is (the same positions per stream,
// the same sums in the same order), and the same in attention_staged_kernel, so results do not
// depend on the form.
// A context with one partition is finished here (normalised, rounded to T); otherwise the
// partition's maximum, sum and unnormalised output go to `partials` for the combine kernel.
// C is the cache's element type: T, or int8_t with per-(slot, kv head) fp32 scales.
// Registers: a block per kv head of four query heads from a 16-bit cache is held to 128 (four
// blocks per multiprocessor, a few bytes spilled; 160 unbounded, three), so that the 512 blocks
// of a 7B batch of 64 run in one wave, not 1.3: 7B int4 batch 64 9,773-9,963 -> 10,129-10,196
// tok/s, int8 8,833-9,094 -> 9,096-9,255 (H200). The int8 cache's instance would spill ~330
// bytes at 128 and is left unbounded; the minimum of one block elsewhere is the bound as
// measured (it changes register allocation a little, and batch 1 was timed with it).
template <typename T, typename C, int kPairs, int kGroup>
__global__ void __launch_bounds__(kThreads, kGroup == 4 && sizeof(C) == 2 ? 4 : 1)
    attention_partition_kernel(const T* __restrict__ q, int64_t q_stride, KvCacheLayer cache,
                               const int32_t* __restrict__ block_tables, int max_blocks,
                               const int32_t* __restrict__ token_seq,
                               const int32_t* __restrict__ token_pos, T* __restrict__ out,
                               int token0, int tokens, bool skip_runs, int heads, int kv_heads,
                               int d, int block_size, float scale, int partition,
                               Partials partials) {
    constexpr bool kInt8 = std::is_same_v<C, int8_t>;
    constexpr int K = kKeysPerStep<kPairs>;
    const int tc = blockIdx.x, h0 = blockIdx.y * kGroup;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // Up to pdl_wait() this block reads only what is in place before the step's first kernel
    // runs (the step's metadata, the keys and values of earlier steps), while the kernels before
    // it finish. A block that leaves here has read nothing else and written nothing.
    BlockWork w;
    if (!block_work(w, block_tables, max_blocks, token_seq, token_pos, token0 + tc, tokens,
                    skip_runs, h0, heads, kv_heads, partition))
        return;  // the whole block leaves together: no barrier is skipped
    const C* k_cache = static_cast<const C*>(cache.k);
    const C* v_cache = static_cast<const C*>(cache.v);
    prefetch_positions(w, k_cache, v_cache, kv_heads, d, block_size);
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();

    float2 qv[kGroup][kPairs], acc[kGroup][kPairs];
    float m[kGroup], l[kGroup];
#pragma unroll
    for (int hh = 0; hh < kGroup; ++hh) {
        load_query<T, kPairs>(qv[hh], q, q_stride, w.t, h0 + hh, d, scale);
#pragma unroll
        for (int e = 0; e < kPairs; ++e)
            acc[hh][e] = make_float2(0.0f, 0.0f);
        m[hh] = -INFINITY;
        l[hh] = 0.0f;
    }
    for (int j0 = w.begin + warp * K; j0 < w.end; j0 += kWarps * K) {
        int64_t row[K];
        step_rows<K>(row, w, j0, block_size, kv_heads);
        float2 kk[K][kPairs], vv[K][kPairs];
        float vs[K];
#pragma unroll
        for (int u = 0; u < K; ++u) {
#pragma unroll
            for (int e = 0; e < kPairs; ++e) {
                const int p = lane + 32 * e;
                const bool in = 2 * p < d;
                kk[u][e] = in ? load_pair(k_cache + row[u] * d, p) : make_float2(0.0f, 0.0f);
                vv[u][e] = in ? load_pair(v_cache + row[u] * d, p) : make_float2(0.0f, 0.0f);
            }
            vs[u] = kInt8 ? cache.v_scale[row[u]] : 1.0f;
        }
        // One head after the other, each over the same loaded keys and values.
#pragma unroll
        for (int hh = 0; hh < kGroup; ++hh) {
            float s[K];
            step_scores<kInt8>(s, qv[hh], kk, row, cache.k_scale, j0, w.end);
            softmax_step<kInt8>(m[hh], l[hh], acc[hh], s, vv, vs);
        }
    }
    finish_block<T, kPairs, kGroup>(m, l, acc, warp, w, tc, h0, heads, d, out, partials);
}

constexpr int kStagedWarps = 16;
constexpr int kStagedThreads = 32 * kStagedWarps;
// Steps whose scores and value rows the staged kernel holds at once (128 positions at 8 a
// step): 32 KiB of shared memory for head_dim 128.
constexpr int kStagedSteps = 16;
// The first of the three warps that make the staged kernel's input step (kInput).
constexpr int kInputWarp0 = kStagedWarps - 3;

// The per-query-head kernel's arithmetic with the loads of many steps in flight at once, for
// launches of few blocks (decode at batch 1), where attention_partition_kernel's streams
// are chains of memory round trips (a ~100-position context: four steps a warp, each waiting
// on its keys and values). grid (tokens, heads, partitions), kStagedWarps warps, head_dim up to
// 128. For each kStagedSteps steps of the block's positions, every warp takes steps
// (warp, warp + kStagedWarps, ...): loads their keys and values as the partition kernel does,
// computes the scores with the same step_scores(), and leaves scores and value rows (in the
// cache's format) in shared memory; then warps 0 .. kWarps - 1, stream by stream, run each
// stream's softmax_step()s in the partition kernel's order from there. The same operations on
// the same values in the same order: the same bits as attention_partition_kernel.
// kInput: q is the token's raw qkv row (a decode step without prefill), and the block makes
// the attention input step itself after pdl_wait() (input_head(), the arithmetic of
// qkv_rope_cache_kernel): warps kInputWarp0 .. + 2 its query head and the key and value of its
// kv head, which they write into the cache. Every block of a kv head writes the same bytes
// there, so each reads back what it wrote (visible to the block after its barrier), as it would
// read what qkv_rope_cache wrote: the same bits as the two kernels, and one kernel fewer a
// layer. Meanwhile the other warps load their first step's keys and values where those are in
// place: the last three warps, which a context of up to 104 positions leaves without a step,
// make the input step (with warps 0-2 instead: 1.8B int4 batch 1 1,178 -> 1,207 tok/s, 7B
// 570 -> 579, H200).
// (Its bound of one block a multiprocessor, all such a launch needs: without it ptxas held the
// head_dim-64 instance to 64 registers, with spills.)
template <typename T, typename C, int kPairs, bool kInput = false>
__global__ void __launch_bounds__(kStagedThreads, kInput ? 1 : 0)
    attention_staged_kernel(const T* __restrict__ q, int64_t q_stride, KvCacheLayer cache,
                            const int32_t* __restrict__ block_tables, int max_blocks,
                            const int32_t* __restrict__ token_seq,
                            const int32_t* __restrict__ token_pos, T* __restrict__ out, int token0,
                            int tokens, bool skip_runs, int heads, int kv_heads, int d,
                            int block_size, float scale, int partition, Partials partials,
                            AttentionInputArgs in) {
    static_assert(kPairs <= 2, "head_dim up to 128");
    static_assert(kStagedSteps % kWarps == 0, "a chunk starts every stream at its own step");
    constexpr bool kInt8 = std::is_same_v<C, int8_t>;
    constexpr int K = kKeysPerStep<kPairs>;
    const int tc = blockIdx.x, h = blockIdx.y;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    BlockWork w;  // as in attention_partition_kernel, up to pdl_wait()
    if (!block_work(w, block_tables, max_blocks, token_seq, token_pos, token0 + tc, tokens,
                    skip_runs, h, heads, kv_heads, partition))
        return;
    const C* k_cache = static_cast<const C*>(cache.k);
    const C* v_cache = static_cast<const C*>(cache.v);
    // Two chunks' positions (256): a context past the first chunk then finds its second in L2
    // too (1.8B int4 batch 1 0.868-0.870 -> 0.863-0.866 ms a step, 7B 1.770 -> 1.763-1.766).
    prefetch_positions(w, k_cache, v_cache, kv_heads, d, block_size, 2 * kStagedSteps * K);
    // kInput: the head vectors (query, key, value) and the rotary factors of the query's and
    // the key's warps.
    constexpr int kInD = 64 * kPairs;
    __shared__ float s_in[kInput ? 3 : 1][kInD], s_cos[kInput ? 2 : 1][kInD],
        s_sin[kInput ? 2 : 1][kInD];
    int64_t slot = 0;
    if constexpr (kInput) {
        slot = in.slots[w.t];
        if (warp >= kInputWarp0 && warp < kInputWarp0 + 2)
            rope_factors<T>(s_cos[warp - kInputWarp0], s_sin[warp - kInputWarp0], in,
                            token_pos[w.t], d);
    }
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();

    __shared__ float s_score[kStagedSteps][K];
    __shared__ float s_vscale[kStagedSteps][K];                // int8 cache
    __shared__ uint32_t s_value[kStagedSteps][K][kPairs][32];  // lane-major: no bank conflicts
    const int steps = (w.end - w.begin + K - 1) / K;
    int64_t row[K];
    float2 kk[K][kPairs];
    // Step i of a chunk, positions j0 ..: its cache rows, keys into kk, value rows into s_value.
    auto load_step = [&](int i, int j0) {
        step_rows<K>(row, w, j0, block_size, kv_heads);
#pragma unroll
        for (int u = 0; u < K; ++u)
#pragma unroll
            for (int e = 0; e < kPairs; ++e) {
                const int p = lane + 32 * e;
                const bool inside = 2 * p < d;
                kk[u][e] = inside ? load_pair(k_cache + row[u] * d, p) : make_float2(0.0f, 0.0f);
                s_value[i][u][e][lane] = inside ? pair_bits(v_cache + row[u] * d, p) : 0u;
            }
    };
    float2 qv[kPairs];
    // kInput: whether this warp's first step was loaded before the input step's barrier.
    bool loaded = false;
    if constexpr (kInput) {
        // Warps without a vector of the input step load their first step meanwhile, where it
        // does not reach this token's own position (whose key and value come after).
        if (warp < kInputWarp0 && warp < min(kStagedSteps, steps)) {
            const int j0 = w.begin + warp * K;
            if (min(j0 + K - 1, w.end - 1) < token_pos[w.t]) {
                load_step(warp, j0);
                loaded = true;
            }
        }
        T* qkv_row = const_cast<T*>(q) + w.t * q_stride;
        const int iw = warp - kInputWarp0;  // 0: query, 1: key, 2: value
        if (iw >= 0) {
            const int vec = iw == 0 ? h : iw == 1 ? heads + w.g : heads + kv_heads + w.g;
            input_head<T, kInt8>(s_in[iw], s_cos[min(iw, 1)], s_sin[min(iw, 1)], qkv_row, in, cache,
                                 slot, vec, heads, kv_heads, d, iw > 0, false);
        }
        __syncthreads();  // the query in s_in[0], this token's key and value in the cache
#pragma unroll
        for (int e = 0; e < kPairs; ++e) {
            const int i = 2 * (lane + 32 * e);
            qv[e] = i < d ? make_float2(s_in[0][i] * scale, s_in[0][i + 1] * scale)
                          : make_float2(0.0f, 0.0f);
        }
    } else {
        load_query<T, kPairs>(qv, q, q_stride, w.t, h, d, scale);
    }
    float m[1] = {-INFINITY}, l[1] = {0.0f};
    float2 acc[1][kPairs];
#pragma unroll
    for (int e = 0; e < kPairs; ++e)
        acc[0][e] = make_float2(0.0f, 0.0f);
    for (int c0 = 0; c0 < steps; c0 += kStagedSteps) {
        const int n = min(kStagedSteps, steps - c0);
        for (int i = warp; i < n; i += kStagedWarps) {
            const int j0 = w.begin + (c0 + i) * K;
            if (!loaded || c0 > 0 || i != warp) load_step(i, j0);
            float s[K];
            step_scores<kInt8>(s, qv, kk, row, cache.k_scale, j0, w.end);
            if (lane == 0) {
#pragma unroll
                for (int u = 0; u < K; ++u) {
                    s_score[i][u] = s[u];
                    if constexpr (kInt8) s_vscale[i][u] = cache.v_scale[row[u]];
                }
            }
        }
        __syncthreads();
        // Step c0 + i belongs to stream (c0 + i) % kWarps = i % kWarps (c0: a multiple of
        // kWarps), whose steps come in increasing order, as in the partition kernel's loop.
        if (warp < kWarps) {
            for (int i = warp; i < n; i += kWarps) {
                float s[K], vs[K];
                float2 vv[K][kPairs];
#pragma unroll
                for (int u = 0; u < K; ++u) {
                    s[u] = s_score[i][u];
                    vs[u] = kInt8 ? s_vscale[i][u] : 1.0f;
#pragma unroll
                    for (int e = 0; e < kPairs; ++e)
                        vv[u][e] = 2 * (lane + 32 * e) < d
                                       ? pair_from_bits<C>(s_value[i][u][e][lane])
                                       : make_float2(0.0f, 0.0f);
                }
                softmax_step<kInt8>(m[0], l[0], acc[0], s, vv, vs);
            }
        }
        __syncthreads();  // the next chunk's scores and values go where these were
    }
    finish_block<T, kPairs, 1>(m, l, acc, warp < kWarps ? warp : -1, w, tc, h, heads, d, out,
                               partials);
}

__device__ float block_max(float v) {
    __shared__ float partial[kWarps];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    v = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
        v = fmaxf(v, partial[w]);
    return v;
}

// grid (tokens of this launch, heads), kThreads threads, `launched` floats (rounded up to a
// multiple of 4) of dynamic shared memory: the split contexts' partitions combined, out =
// sum_p e^(m_p - M) o_p / sum_p e^(m_p - M) l_p with M = max_p m_p. Contexts of one partition
// were finished by the partition kernel.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    attention_combine_kernel(const int32_t* __restrict__ token_seq,
                             const int32_t* __restrict__ token_pos, T* __restrict__ out, int token0,
                             int tokens, bool skip_runs, int heads, int d, int partition,
                             int launched, Partials partials) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    MTDESK_DYNAMIC_SHARED(float, s_weight);  // [launched rounded up to a multiple of 4]
    const int tc = blockIdx.x, t = token0 + tc, h = blockIdx.y;
    if (skip_runs && in_run(token_seq, token_pos, t, tokens)) return;
    const int parts = partitions_of(token_pos[t] + 1, partition, launched);
    if (parts == 1) return;
    const int64_t base = (static_cast<int64_t>(tc) * heads + h) * partials.max_partitions;
    float m = -INFINITY;
    for (int p = threadIdx.x; p < parts; p += kThreads)
        m = fmaxf(m, partials.max[base + p]);
    m = block_max(m);
    float l = 0.0f;
    for (int p = threadIdx.x; p < parts; p += kThreads) {
        const float w = __expf(partials.max[base + p] - m);
        s_weight[p] = w;
        l += partials.sum[base + p] * w;
    }
    l = block_sum(l);  // its barriers also publish s_weight
    T* orow = out + (static_cast<int64_t>(t) * heads + h) * d;
    const float* po = partials.out + base * d;
    for (int i = threadIdx.x; i < d; i += kThreads) {
        float o = 0.0f;
        for (int p = 0; p < parts; ++p)
            o += s_weight[p] * po[static_cast<int64_t>(p) * d + i];
        orow[i] = from_f32<T>(o / l);
    }
}

template <typename T, typename C>
void launch_partitions(dim3 grid, cudaStream_t stream, int pairs, int group, const T* q,
                       int64_t q_stride, const KvCacheLayer& cache, const int32_t* block_tables,
                       int max_blocks, const int32_t* token_seq, const int32_t* token_pos, T* out,
                       int token0, int tokens, bool skip_runs, int heads, int kv_heads, int d,
                       int block_size, float scale, int partition, const Partials& partials,
                       bool staged, const AttentionInputArgs* input) {
    // Element pairs per lane as a compile-time count: registers and unrolled loops sized for
    // the head_dim (40 and 64: 1; 128: 2; up to 256: 4). `group`: query heads per block, 1 or
    // (grid.y = kv heads) 2 or 4 with head_dim <= 128 (kernels_per_kv_head()). `staged`:
    // attention_staged_kernel (group 1, head_dim <= 128), with the input step when `input`.
    if (staged) {
        auto kernel = input ? (pairs == 1 ? attention_staged_kernel<T, C, 1, true>
                                          : attention_staged_kernel<T, C, 2, true>)
                            : (pairs == 1 ? attention_staged_kernel<T, C, 1>
                                          : attention_staged_kernel<T, C, 2>);
        launch(kernel, grid, dim3(kStagedThreads), 0, stream, q, q_stride, cache, block_tables,
               max_blocks, token_seq, token_pos, out, token0, tokens, skip_runs, heads, kv_heads, d,
               block_size, scale, partition, partials, input ? *input : AttentionInputArgs{});
        MTDESK_CUDA_CHECK_LAUNCH();
        return;
    }
    auto kernel = group == 4   ? (pairs == 1 ? attention_partition_kernel<T, C, 1, 4>
                                             : attention_partition_kernel<T, C, 2, 4>)
                  : group == 2 ? (pairs == 1 ? attention_partition_kernel<T, C, 1, 2>
                                             : attention_partition_kernel<T, C, 2, 2>)
                  : pairs == 1 ? attention_partition_kernel<T, C, 1, 1>
                  : pairs == 2 ? attention_partition_kernel<T, C, 2, 1>
                  : pairs == 3 ? attention_partition_kernel<T, C, 3, 1>
                               : attention_partition_kernel<T, C, 4, 1>;
    launch(kernel, dim3(grid), dim3(kThreads), 0, stream, q, q_stride, cache, block_tables,
           max_blocks, token_seq, token_pos, out, token0, tokens, skip_runs, heads, kv_heads, d,
           block_size, scale, partition, partials);
    MTDESK_CUDA_CHECK_LAUNCH();
}

// ---- Tensor-core prefill ----

constexpr int kTcWarps = 4;  // warps per block of the tensor-core prefill
constexpr int kTcThreads = 32 * kTcWarps;
constexpr int kTcRows = 16 * kTcWarps;  // query rows per block: one m16 tile per warp
constexpr int kTcKeys = 64;             // keys per tile

// mma.sync m16n8k16 with fp32 accumulators (sm_80+), and two fp32 values packed as T×2 (the
// lower column in the lower half, as the fragments expect).
template <typename T>
struct TensorOp;
template <>
struct TensorOp<__nv_bfloat16> {
    static __device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                               uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
            "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#elif defined(MTDESK_CUDA_HOST_EMULATION)
        const uint32_t b[2] = {b0, b1};
        emulation::mma_m16n8k16<__nv_bfloat16>(c, a, b);
#endif
    }
    static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
        const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<const uint32_t*>(&v);
    }
    static __device__ __forceinline__ uint32_t from_int8(int8_t lo, int8_t hi) {
        return pack(static_cast<float>(lo), static_cast<float>(hi));  // exact: |x| <= 127
    }
};
template <>
struct TensorOp<__half> {
    static __device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                               uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
            "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#elif defined(MTDESK_CUDA_HOST_EMULATION)
        const uint32_t b[2] = {b0, b1};
        emulation::mma_m16n8k16<__half>(c, a, b);
#endif
    }
    static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
        const __half2 v = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<const uint32_t*>(&v);
    }
    static __device__ __forceinline__ uint32_t from_int8(int8_t lo, int8_t hi) {
        return pack(static_cast<float>(lo), static_cast<float>(hi));
    }
};

// Two 8x8 b16 matrices from shared memory (rows given by lanes 0-15), as B fragments; .trans
// for a row-major [key][dim] tile read as the PV product's B.
__device__ __forceinline__ void ldmatrix_x2(uint32_t& r0, uint32_t& r1, const void* p) {
#if defined(MTDESK_CUDA_HOST_EMULATION)
    emulation::ldmatrix_x2(r0, r1, p, false);
#else
    const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r0), "=r"(r1)
                 : "r"(a));
#endif
}
__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t& r0, uint32_t& r1, const void* p) {
#if defined(MTDESK_CUDA_HOST_EMULATION)
    emulation::ldmatrix_x2(r0, r1, p, true);
#else
    const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r0), "=r"(r1)
                 : "r"(a));
#endif
}

/// Queues the copies of a tile of kTcKeys keys' K and V rows of a 16-bit cache (head_dim d, a
/// multiple of 8; rows 16-byte aligned) into shared memory as one cp.async group of this
/// thread's: zeros past head_dim and for keys without a row (s_row < 0). The caller waits for
/// the group (cp_async_wait) and then meets the block at a barrier before reading the tile.
template <int kDPad, typename T, int kStride>
__device__ __forceinline__ void copy_tile_async(T (&s_k)[kTcKeys][kStride],
                                                T (&s_v)[kTcKeys][kStride],
                                                const int64_t (&s_row)[kTcKeys],
                                                const T* __restrict__ k_cache,
                                                const T* __restrict__ v_cache, int d) {
    constexpr int kChunks = kDPad / 8;  // 16-byte chunks per row
    static_assert(kTcKeys * kChunks % kTcThreads == 0);
#pragma unroll
    for (int j = 0; j < kTcKeys * kChunks / kTcThreads; ++j) {
        const int i = threadIdx.x + j * kTcThreads;
        const int key = i / kChunks, dim = (i % kChunks) * 8;
        const int64_t row = s_row[key];
        const bool ok = row >= 0 && dim < d;
        const int64_t at = ok ? row * d + dim : 0;  // a valid address even when nothing is read
        cp_async_16(&s_k[key][dim], k_cache + at, ok);
        cp_async_16(&s_v[key][dim], v_cache + at, ok);
    }
    cp_async_commit();
}

/// Dynamic shared memory of prefill_attention_kernel<T, C, kDPad, kStages>, bytes: kStages
/// tiles of K, then as many of V, rows of kDPad + 8 elements.
template <typename T, int kDPad, int kStages>
constexpr std::size_t tc_shared_bytes() {
    return 2 * sizeof(T) * kTcKeys * (kDPad + 8) * kStages;
}

// grid (heads, ceil(tokens / 64)), 4 warps, tc_shared_bytes<T, kDPad, kStages>() of dynamic
// shared memory. Block (h, b) takes the step's tokens 64b' .. 64b' + 63 with b' = gridDim.y - 1 - b
// (the last rows attend the most keys: they start first and the short blocks fill the tail)
// for query head h, finds the prefill runs among them (maximal stretches of one sequence at
// consecutive positions, two tokens or more, possibly continuing in the next or previous
// block) and attends each run's rows at once: warp w owns rows 16w .. 16w + 15 (one m16 tile;
// rows outside the run are computed as dummies and not written). Keys come in tiles of 64
// positions, from 0 to the run's last position, staged in shared memory (from a 16-bit cache
// by cp.async; with kStages = 2 the next tile's copies are in flight while this one is
// computed; an int8 cache's go through registers, one stage): S = Q K^T on
// tensor cores (fp32), times the softmax scale (and, for an int8 cache, each key's scale: int8
// keys are exact in T, so the product is exact up to summation order); the causal mask; the
// online softmax in fp32 per row; P rounded to T and O += P V on tensor cores (int8 values are
// dequantised to T in shared memory, v * scale rounded to T: fp16's range could not hold
// p * scale for small probabilities). head_dim is padded with zeros to kDPad (a multiple of
// 16).
// A row's arithmetic does not depend on which rows share its block: tiles past its position
// are fully masked and change nothing (the running maximum stays, exp(0) = 1, p = 0).
// Held to one block per multiprocessor at least: ptxas then allocates the registers freely
// (232 at head_dim 128, two blocks resident), where its default kept 178 and the same two
// blocks ran 13 % slower (2,048-token prefill on an H200, 419 against 372 us; 168 registers
// for three blocks: 381 us).
template <typename T, typename C, int kDPad, int kStages>
__global__ void __launch_bounds__(kTcThreads, 1)
    prefill_attention_kernel(const T* __restrict__ q, int64_t q_stride, KvCacheLayer cache,
                             const int32_t* __restrict__ block_tables, int max_blocks,
                             const int32_t* __restrict__ token_seq,
                             const int32_t* __restrict__ token_pos, T* __restrict__ out, int tokens,
                             int heads, int kv_heads, int d, int block_size, float scale) {
#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800) || defined(MTDESK_CUDA_HOST_EMULATION)
    constexpr bool kInt8 = std::is_same_v<C, int8_t>;
    // Rows 16 bytes further than a multiple of 128 apart: ldmatrix reads 8 rows without bank
    // conflicts.
    constexpr int kStride = kDPad + 8;
    using Tile = T[kTcKeys][kStride];
    MTDESK_DYNAMIC_SHARED(unsigned char, s_tiles);
    static_assert(kStages == 1 || (kStages == 2 && !kInt8));
    Tile* s_k = reinterpret_cast<Tile*>(s_tiles);  // [kStages]
    Tile* s_v = s_k + kStages;
    __shared__ float s_kscale[kTcKeys], s_vscale[kTcKeys];
    __shared__ int64_t s_row[2][kTcKeys];  // head-vector index of each key, -1: none
    __shared__ int s_seq[kTcRows + 2], s_pos[kTcRows + 2];  // rows -1 .. kTcRows of the block

    const int w0 = (gridDim.y - 1 - blockIdx.y) * kTcRows, h = blockIdx.x;
    const int g = h / (heads / kv_heads);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int gid = lane >> 2, tid4 = lane & 3;
    for (int i = threadIdx.x; i < kTcRows + 2; i += kTcThreads) {
        const int t = w0 - 1 + i;
        const bool ok = t >= 0 && t < tokens;
        s_seq[i] = ok ? token_seq[t] : -1;
        s_pos[i] = ok ? token_pos[t] : 0;
    }
    __syncthreads();
    // Rows r - 1 and r of the block (shared index r and r + 1) are one run.
    auto linked = [&](int r) {
        return s_seq[r] >= 0 && s_seq[r] == s_seq[r + 1] && s_pos[r + 1] == s_pos[r] + 1;
    };
    const C* k_cache = static_cast<const C*>(cache.k);
    const C* v_cache = static_cast<const C*>(cache.v);
    // 16-bit rows of whole, aligned 16-byte chunks are copied by cp.async (two stages deep
    // with kStages = 2); others go through registers in pairs.
    const bool chunks16 =
        !kInt8 && d % 8 == 0 &&
        (reinterpret_cast<uintptr_t>(k_cache) | reinterpret_cast<uintptr_t>(v_cache)) % 16 == 0;
    const bool pipelined = kStages == 2 && chunks16;
    const int rows = min(kTcRows, tokens - w0);
    // s_next[i]: the first row j >= i that starts a new stretch (j not linked to j - 1), or
    // rows; a suffix minimum in log2(kTcRows) + 1 steps, where walking the rows one by one was a
    // chain of shared-memory round trips that took about half of a 64-token prompt's kernel.
    __shared__ int s_next[kTcRows + 1];
    static_assert(kTcThreads > kTcRows);
    const int i_next = threadIdx.x;
    int next = rows;
    if (i_next <= kTcRows) next = i_next >= 1 && i_next < rows && !linked(i_next) ? i_next : rows;
    for (int off = 1; off <= kTcRows; off *= 2) {
        if (i_next <= kTcRows) s_next[i_next] = next;
        __syncthreads();
        if (i_next + off <= kTcRows) next = min(next, s_next[i_next + off]);
        __syncthreads();
    }
    if (i_next <= kTcRows) s_next[i_next] = next;
    __syncthreads();
    // The step's tokens, positions and block tables are in place before its first kernel runs
    // (launch_cuda.cuh): the rows and runs above are found while the kernel before this one
    // finishes; q and the keys and values it writes are read after the wait.
    pdl_wait();
    pdl_launch_dependents();
    for (int a = 0; a < rows;) {  // every thread walks the same runs
        const int e = s_next[a + 1];
        const bool run = e - a >= 2 || linked(a) || linked(e);
        if (!run) {  // a lone token: the split-KV kernel's
            a = e;
            continue;
        }
        const int seq = s_seq[a + 1], p_first = s_pos[a + 1];
        const int p_last = p_first + (e - 1 - a);
        const int32_t* table = block_tables + static_cast<int64_t>(seq) * max_blocks;
        const int r_lo = warp * 16 + gid, r_hi = r_lo + 8;
        const bool v_lo = r_lo >= a && r_lo < e, v_hi = r_hi >= a && r_hi < e;
        // Dummy rows take the run's first position: never an empty softmax.
        const int pos_lo = p_first + (v_lo ? r_lo - a : 0);
        const int pos_hi = p_first + (v_hi ? r_hi - a : 0);
        const int first_row = max(a, warp * 16), end_row = min(e, warp * 16 + 16);
        const bool active = first_row < end_row;
        const int warp_last = p_first + (end_row - 1 - a);  // the warp's last position

        // Q fragments straight from global memory (pairs: head_dim and q_stride are even).
        uint32_t qa[kDPad / 16][4];
#pragma unroll
        for (int ks = 0; ks < kDPad / 16; ++ks)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int dim = ks * 16 + half * 8 + 2 * tid4;
                const T* q_lo = q + (w0 + r_lo) * q_stride + static_cast<int64_t>(h) * d + dim;
                const T* q_hi = q + (w0 + r_hi) * q_stride + static_cast<int64_t>(h) * d + dim;
                qa[ks][2 * half] =
                    active && v_lo && dim < d ? *reinterpret_cast<const uint32_t*>(q_lo) : 0u;
                qa[ks][2 * half + 1] =
                    active && v_hi && dim < d ? *reinterpret_cast<const uint32_t*>(q_hi) : 0u;
            }
        float o[kDPad / 8][4];
#pragma unroll
        for (int nd = 0; nd < kDPad / 8; ++nd)
            o[nd][0] = o[nd][1] = o[nd][2] = o[nd][3] = 0.0f;
        float m_lo = -INFINITY, m_hi = -INFINITY, l_lo = 0.0f, l_hi = 0.0f;

        const int tiles = p_last / kTcKeys + 1;
        // Tile kt's cache rows (and an int8 cache's scales) into s_row[buf]: threads < kTcKeys.
        auto find_rows = [&](int kt, int buf) {
            if (threadIdx.x >= kTcKeys) return;
            const int j = kt * kTcKeys + threadIdx.x;
            int64_t row = -1;
            if (j <= p_last)
                row = (static_cast<int64_t>(table[j / block_size]) * block_size + j % block_size) *
                          kv_heads +
                      g;
            s_row[buf][threadIdx.x] = row;
            if constexpr (kInt8) {
                s_kscale[threadIdx.x] = row >= 0 ? cache.k_scale[row] : 0.0f;
                s_vscale[threadIdx.x] = row >= 0 ? cache.v_scale[row] : 0.0f;
            }
        };
        // The tile whose rows are in s_row[buf] into stage `stage` (a 16-bit cache's).
        auto copy_tile = [&](int stage, int buf) {
            copy_tile_async<kDPad>(s_k[stage], s_v[stage], s_row[buf],
                                   reinterpret_cast<const T*>(k_cache),
                                   reinterpret_cast<const T*>(v_cache), d);
        };
        if (pipelined) {
            __syncthreads();  // the previous run's tiles and rows are read
            find_rows(0, 0);
            find_rows(1, 1);
            __syncthreads();
            copy_tile(0, 0);
        }
        for (int kt = 0; kt < tiles; ++kt) {
            const int stage = pipelined ? kt % 2 : 0;
            if (pipelined) {
                // Tile kt is home (this thread's copies, then everyone's at the barrier); every
                // warp is done with tile kt - 1, whose stage takes tile kt + 1 now, and
                // s_row[(kt + 1) % 2] holds tile kt + 1's rows.
                cp_async_wait<0>();
                __syncthreads();
                if (kt + 1 < tiles) copy_tile(1 - stage, 1 - stage);
                find_rows(kt + 2, stage);  // read after the next iteration's barrier
            } else {
                __syncthreads();  // the previous tile (or run) is read
                find_rows(kt, 0);
                __syncthreads();
                if (chunks16) {
                    copy_tile(0, 0);
                    cp_async_wait<0>();
                }
                // Else K and V rows in pairs (an int8 cache, or rows that are not whole 16-byte
                // chunks); keys past the run and dimensions past head_dim are zeros.
                for (int i = threadIdx.x; !chunks16 && i < kTcKeys * (kDPad / 2); i += kTcThreads) {
                    const int key = i / (kDPad / 2), dim = 2 * (i % (kDPad / 2));
                    const int64_t row = s_row[0][key];
                    uint32_t kk = 0u, vv = 0u;
                    if (row >= 0 && dim < d) {
                        if constexpr (kInt8) {
                            const char2 kc =
                                *reinterpret_cast<const char2*>(k_cache + row * d + dim);
                            const char2 vc =
                                *reinterpret_cast<const char2*>(v_cache + row * d + dim);
                            const float vs = s_vscale[key];
                            kk = TensorOp<T>::from_int8(kc.x, kc.y);
                            vv = TensorOp<T>::pack(vc.x * vs, vc.y * vs);
                        } else {
                            kk = *reinterpret_cast<const uint32_t*>(k_cache + row * d + dim);
                            vv = *reinterpret_cast<const uint32_t*>(v_cache + row * d + dim);
                        }
                    }
                    *reinterpret_cast<uint32_t*>(&s_k[0][key][dim]) = kk;
                    *reinterpret_cast<uint32_t*>(&s_v[0][key][dim]) = vv;
                }
                __syncthreads();
            }
            if (!active || kt * kTcKeys > warp_last) continue;  // all masked for this warp
            const Tile& tk = s_k[stage];
            const Tile& tv = s_v[stage];

            // S = Q K^T: 16 rows x 64 keys per warp, as 8 m16n8 tiles.
            float sc[kTcKeys / 8][4];
#pragma unroll
            for (int nt = 0; nt < kTcKeys / 8; ++nt) {
                sc[nt][0] = sc[nt][1] = sc[nt][2] = sc[nt][3] = 0.0f;
#pragma unroll
                for (int ks = 0; ks < kDPad / 16; ++ks) {
                    uint32_t b0, b1;
                    ldmatrix_x2(b0, b1, &tk[nt * 8 + (lane & 7)][ks * 16 + ((lane >> 3) & 1) * 8]);
                    TensorOp<T>::mma(sc[nt], qa[ks], b0, b1);
                }
            }
            // Scale, mask, online softmax; thread holds rows gid and gid + 8, columns 2 tid4
            // and 2 tid4 + 1 of each n8 tile, so a row's values sit in the lane's quad.
            float mx_lo = -INFINITY, mx_hi = -INFINITY;
#pragma unroll
            for (int nt = 0; nt < kTcKeys / 8; ++nt)
#pragma unroll
                for (int c = 0; c < 2; ++c) {
                    const int col = nt * 8 + 2 * tid4 + c, key = kt * kTcKeys + col;
                    const float ks = kInt8 ? s_kscale[col] * scale : scale;
                    sc[nt][c] = key <= pos_lo ? sc[nt][c] * ks : -INFINITY;
                    sc[nt][2 + c] = key <= pos_hi ? sc[nt][2 + c] * ks : -INFINITY;
                    mx_lo = fmaxf(mx_lo, sc[nt][c]);
                    mx_hi = fmaxf(mx_hi, sc[nt][2 + c]);
                }
#pragma unroll
            for (int o2 = 1; o2 < 4; o2 <<= 1) {
                mx_lo = fmaxf(mx_lo, __shfl_xor_sync(0xffffffffu, mx_lo, o2));
                mx_hi = fmaxf(mx_hi, __shfl_xor_sync(0xffffffffu, mx_hi, o2));
            }
            // Tile 0 holds position 0, which every row attends: the maxima are finite from
            // the first tile on.
            const float mn_lo = fmaxf(m_lo, mx_lo), mn_hi = fmaxf(m_hi, mx_hi);
            const float corr_lo = __expf(m_lo - mn_lo), corr_hi = __expf(m_hi - mn_hi);
            m_lo = mn_lo;
            m_hi = mn_hi;
            l_lo *= corr_lo;
            l_hi *= corr_hi;
#pragma unroll
            for (int nd = 0; nd < kDPad / 8; ++nd) {
                o[nd][0] *= corr_lo;
                o[nd][1] *= corr_lo;
                o[nd][2] *= corr_hi;
                o[nd][3] *= corr_hi;
            }
#pragma unroll
            for (int nt = 0; nt < kTcKeys / 8; ++nt)
#pragma unroll
                for (int c = 0; c < 2; ++c) {
                    sc[nt][c] = __expf(sc[nt][c] - mn_lo);  // 0 where masked
                    sc[nt][2 + c] = __expf(sc[nt][2 + c] - mn_hi);
                    l_lo += sc[nt][c];
                    l_hi += sc[nt][2 + c];
                }
                // O += P V, 16 keys at a time: the S tiles 2kk and 2kk + 1 are the A fragment.
#pragma unroll
            for (int kk = 0; kk < kTcKeys / 16; ++kk) {
                const uint32_t pa[4] = {TensorOp<T>::pack(sc[2 * kk][0], sc[2 * kk][1]),
                                        TensorOp<T>::pack(sc[2 * kk][2], sc[2 * kk][3]),
                                        TensorOp<T>::pack(sc[2 * kk + 1][0], sc[2 * kk + 1][1]),
                                        TensorOp<T>::pack(sc[2 * kk + 1][2], sc[2 * kk + 1][3])};
#pragma unroll
                for (int nd = 0; nd < kDPad / 8; ++nd) {
                    uint32_t b0, b1;
                    ldmatrix_x2_trans(b0, b1, &tv[kk * 16 + (lane & 15)][nd * 8]);
                    TensorOp<T>::mma(o[nd], pa, b0, b1);
                }
            }
        }
        if (active) {
#pragma unroll
            for (int o2 = 1; o2 < 4; o2 <<= 1) {
                l_lo += __shfl_xor_sync(0xffffffffu, l_lo, o2);
                l_hi += __shfl_xor_sync(0xffffffffu, l_hi, o2);
            }
            // One division a row, then products: 64 IEEE divisions a thread (each with its
            // slow-path branch) had been a fifth of a 64-token prompt's kernel.
            const float inv_lo = 1.0f / l_lo, inv_hi = 1.0f / l_hi;
#pragma unroll
            for (int nd = 0; nd < kDPad / 8; ++nd) {
                const int dim = nd * 8 + 2 * tid4;
                if (dim >= d) continue;
                if (v_lo) {
                    T* dst = out + (static_cast<int64_t>(w0 + r_lo) * heads + h) * d + dim;
                    *reinterpret_cast<uint32_t*>(dst) =
                        TensorOp<T>::pack(o[nd][0] * inv_lo, o[nd][1] * inv_lo);
                }
                if (v_hi) {
                    T* dst = out + (static_cast<int64_t>(w0 + r_hi) * heads + h) * d + dim;
                    *reinterpret_cast<uint32_t*>(dst) =
                        TensorOp<T>::pack(o[nd][2] * inv_hi, o[nd][3] * inv_hi);
                }
            }
        }
        a = e;
    }
#endif
}

template <typename T, typename C, int kDPad, int kStages>
void launch_prefill_staged(cudaStream_t stream, const T* q, int64_t q_stride,
                           const KvCacheLayer& cache, const int32_t* block_tables, int max_blocks,
                           const int32_t* token_seq, const int32_t* token_pos, T* out, int tokens,
                           int heads, int kv_heads, int d, int block_size, float scale) {
    constexpr auto kernel = prefill_attention_kernel<T, C, kDPad, kStages>;
    constexpr std::size_t bytes = tc_shared_bytes<T, kDPad, kStages>();
#if !defined(MTDESK_CUDA_HOST_EMULATION)
    // Opted in once per kernel (the engine drives one device) where above 48 KiB.
    if constexpr (bytes > 48 * 1024) {
        static const cudaError_t opted = cudaFuncSetAttribute(
            kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
        MTDESK_CUDA_CHECK(opted);
    }
#endif
    const dim3 grid(heads, (tokens + kTcRows - 1) / kTcRows);
    launch(kernel, grid, dim3(kTcThreads), bytes, stream, q, q_stride, cache, block_tables,
           max_blocks, token_seq, token_pos, out, tokens, heads, kv_heads, d, block_size, scale);
    MTDESK_CUDA_CHECK_LAUNCH();
}

/// Whether two blocks of the two-stage prefill kernel (its tiles, its static shared memory and
/// the 1 KiB the runtime reserves a block) fit in a multiprocessor's shared memory: on sm_80
/// (164 KiB) and sm_90 (228 KiB), not on sm_86 / sm_89 (100 KiB), where one stage keeps two
/// blocks resident. Asked once (the engine drives one device).
template <typename T, int kDPad>
bool two_stages_fit() {
    static const bool fit = [] {
        int device = 0, per_sm = 0;
        MTDESK_CUDA_CHECK(cudaGetDevice(&device));
        MTDESK_CUDA_CHECK(
            cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
        constexpr std::size_t kStatic = 4 * 1024;  // s_row, s_seq, ... (~2 KB) and reserve
        return static_cast<std::size_t>(per_sm) >= 2 * (tc_shared_bytes<T, kDPad, 2>() + kStatic);
    }();
    return fit;
}

template <typename T, typename C, int kDPad>
void launch_prefill_padded(bool one_stage, cudaStream_t stream, const T* q, int64_t q_stride,
                           const KvCacheLayer& cache, const int32_t* block_tables, int max_blocks,
                           const int32_t* token_seq, const int32_t* token_pos, T* out, int tokens,
                           int heads, int kv_heads, int d, int block_size, float scale) {
    auto run = launch_prefill_staged<T, C, kDPad, 1>;
    if constexpr (!std::is_same_v<C, int8_t>)
        if (!one_stage && two_stages_fit<T, kDPad>()) run = launch_prefill_staged<T, C, kDPad, 2>;
    run(stream, q, q_stride, cache, block_tables, max_blocks, token_seq, token_pos, out, tokens,
        heads, kv_heads, d, block_size, scale);
}

template <typename T, typename C>
void launch_prefill(int pad, bool one_stage, cudaStream_t stream, const T* q, int64_t q_stride,
                    const KvCacheLayer& cache, const int32_t* block_tables, int max_blocks,
                    const int32_t* token_seq, const int32_t* token_pos, T* out, int tokens,
                    int heads, int kv_heads, int d, int block_size, float scale) {
    auto run = pad == 32   ? launch_prefill_padded<T, C, 32>
               : pad == 48 ? launch_prefill_padded<T, C, 48>
               : pad == 64 ? launch_prefill_padded<T, C, 64>
                           : launch_prefill_padded<T, C, 128>;
    run(one_stage, stream, q, q_stride, cache, block_tables, max_blocks, token_seq, token_pos, out,
        tokens, heads, kv_heads, d, block_size, scale);
}

/// Whether the current device runs mma.sync m16n8k16 in bf16/fp16 (sm_80 and later).
bool device_has_mma_m16n8k16() {
    int device = 0, major = 0;
    MTDESK_CUDA_CHECK(cudaGetDevice(&device));
    MTDESK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    return major >= 8;
}

// paged_attention(); with `input`, q is the raw qkv row of decode tokens (no prefill) and the
// attention input step runs first: inside the staged kernel where the launch is staged, else
// as qkv_rope_cache().
template <typename T>
void paged_attention_impl(const T* q, int64_t q_stride, const KvCacheLayer& cache,
                          const int32_t* block_tables, int max_blocks_per_seq,
                          const int32_t* token_seq, const int32_t* token_pos, T* out, int tokens,
                          int heads, int kv_heads, int head_dim, int block_size, float scale,
                          int max_context, const SplitKvWorkspace& workspace, cudaStream_t stream,
                          AttentionSplit split, AttentionPrefill prefill,
                          AttentionGrouping grouping, const AttentionInputArgs* input) {
    if (tokens <= 0) return;
    if (head_dim <= 0 || head_dim > kMaxHeadDim || head_dim % 2 != 0)
        throw Error("CUDA attention supports even head_dim up to 256, got " +
                    std::to_string(head_dim));
    if (kv_heads <= 0 || heads % kv_heads != 0)
        throw Error("CUDA attention: heads must be a multiple of kv_heads");
    if (heads > 65535) throw Error("CUDA attention: more than 65535 heads");
    if (block_size <= 0) throw Error("CUDA attention: block_size must be positive");
    const bool int8 = cache.storage == KvCacheLayer::Storage::Int8;
    if (int8 && (!cache.k_scale || !cache.v_scale))
        throw Error("CUDA attention: an int8 KV cache needs its scale arrays");
    if (reinterpret_cast<uintptr_t>(cache.k) % 4 != 0 ||
        reinterpret_cast<uintptr_t>(cache.v) % 4 != 0)
        throw Error("CUDA attention: the KV cache must be 4-byte aligned");
    const int pairs = (head_dim + 63) / 64;

    // Prefill runs on tensor cores: asked for, head_dim <= 128, a GPU with mma.sync m16n8k16
    // (sm_80+), q and out aligned for pair loads; the other kernels then skip those tokens.
    const bool tensor_cores =
        prefill != AttentionPrefill::Off && split == AttentionSplit::Auto && tokens >= 2 &&
        head_dim <= 128 && reinterpret_cast<uintptr_t>(q) % 4 == 0 &&
        reinterpret_cast<uintptr_t>(out) % 4 == 0 && q_stride % 2 == 0 && device_has_mma_m16n8k16();
    if (tensor_cores) {
        const int pad = head_dim <= 32 ? 32 : head_dim <= 48 ? 48 : head_dim <= 64 ? 64 : 128;
        const bool one_stage = prefill == AttentionPrefill::TensorCoresOneStage;
        if (int8)
            launch_prefill<T, int8_t>(pad, one_stage, stream, q, q_stride, cache, block_tables,
                                      max_blocks_per_seq, token_seq, token_pos, out, tokens, heads,
                                      kv_heads, head_dim, block_size, scale);
        else
            launch_prefill<T, T>(pad, one_stage, stream, q, q_stride, cache, block_tables,
                                 max_blocks_per_seq, token_seq, token_pos, out, tokens, heads,
                                 kv_heads, head_dim, block_size, scale);
    }

    // One pass (partition = the whole context) unless this step has a context to split and
    // the workspace to split it in.
    int partition = INT_MAX, launched = 1;
    if (split == AttentionSplit::Auto && workspace.data && workspace.rows > 0 &&
        workspace.max_partitions > 1 && max_context > kSplitKvPartition) {
        partition = kSplitKvPartition;
        launched = std::min((max_context - 1) / kSplitKvPartition + 1, workspace.max_partitions);
        if (launched > 65535 || launched * sizeof(float) > 48 * 1024)
            throw Error("CUDA attention: too many KV partitions");
    }
    // Blocks per kv head (each load of a key or value row serves its whole group of query
    // heads: a quarter of the L2 traffic at 4 per group) where the launch keeps every
    // multiprocessor busy that way, per query head otherwise (more blocks for few tokens);
    // both give the same bits.
    const int group = heads / kv_heads;
    const bool packable = (group == 2 || group == 4) && pairs <= 2;
    const int piece = launched > 1 ? std::min(tokens, workspace.rows) : tokens;  // per launch
    const bool per_kv_head =
        packable && (grouping == AttentionGrouping::PerKvHead ||
                     (grouping == AttentionGrouping::Auto &&
                      static_cast<long>(piece) * kv_heads * launched >= current_sm_count()));
    const int block_heads = per_kv_head ? group : 1;
    // A block per query head staged (16 warps, the loads of many steps in flight) where such a
    // launch takes at most a quarter of the multiprocessors (batch 1, the 1.8B's batch 2): the
    // kernels launched early beside it keep the rest. On more it was slower (H200, step ms:
    // 7B int4 batch 2 2.547 -> 2.624, batch 4 2.646 -> 2.663; 1.8B batch 8 1.250 -> 1.263;
    // the 1.8B's batch 4, 64 blocks, 1.173 -> 1.148).
    const bool staged = !per_kv_head && pairs <= 2 &&
                        (grouping == AttentionGrouping::Staged ||
                         (grouping == AttentionGrouping::Auto &&
                          4L * piece * heads * launched <= current_sm_count()));
    if (input && !staged) {
        qkv_rope_cache<T>(const_cast<T*>(q), static_cast<const T*>(input->bias),
                          static_cast<const T*>(input->q_norm),
                          static_cast<const T*>(input->k_norm), input->norm, input->eps, input->cos,
                          input->sin, token_pos, input->slots, cache, tokens, heads, kv_heads,
                          head_dim, stream);
        input = nullptr;
    }
    auto run = [&](dim3 grid, int token0, const Partials& partials) {
        grid.y = heads / block_heads;
        if (int8)
            launch_partitions<T, int8_t>(
                grid, stream, pairs, block_heads, q, q_stride, cache, block_tables,
                max_blocks_per_seq, token_seq, token_pos, out, token0, tokens, tensor_cores, heads,
                kv_heads, head_dim, block_size, scale, partition, partials, staged, input);
        else
            launch_partitions<T, T>(grid, stream, pairs, block_heads, q, q_stride, cache,
                                    block_tables, max_blocks_per_seq, token_seq, token_pos, out,
                                    token0, tokens, tensor_cores, heads, kv_heads, head_dim,
                                    block_size, scale, partition, partials, staged, input);
    };
    if (launched == 1) {
        run(dim3(tokens, heads, 1), 0, Partials{});
        return;
    }
    const std::size_t need =
        split_kv_workspace_floats(workspace.rows, heads, head_dim, workspace.max_partitions);
    if (need > workspace.capacity)
        throw Error("CUDA attention: split-KV workspace of " + std::to_string(workspace.capacity) +
                    " floats, " + std::to_string(need) + " needed");
    const std::size_t slots =
        static_cast<std::size_t>(workspace.rows) * heads * workspace.max_partitions;
    Partials partials;
    partials.out = workspace.data;
    partials.max = workspace.data + slots * head_dim;
    partials.sum = partials.max + slots;
    partials.max_partitions = workspace.max_partitions;
    // Steps with more tokens than the workspace has rows run in pieces; a token's arithmetic
    // does not depend on the piece it falls in.
    for (int token0 = 0; token0 < tokens; token0 += workspace.rows) {
        const int n = std::min(workspace.rows, tokens - token0);
        run(dim3(n, heads, launched), token0, partials);
        // The weights' shared memory in whole 16-byte units: the compiler may read the weights
        // of the last partitions several at a time, past `parts` (compute-sanitizer showed
        // 12-byte reads at 2 partitions); those reads must stay inside the allocation.
        const std::size_t weight_bytes = (launched + 3) / 4 * 4 * sizeof(float);
        launch(attention_combine_kernel<T>, dim3(n, heads), dim3(kThreads), weight_bytes, stream,
               token_seq, token_pos, out, token0, tokens, tensor_cores, heads, head_dim, partition,
               launched, partials);
        MTDESK_CUDA_CHECK_LAUNCH();
    }
}

}  // namespace

template <typename T>
void paged_attention(const T* q, int64_t q_stride, const KvCacheLayer& cache,
                     const int32_t* block_tables, int max_blocks_per_seq, const int32_t* token_seq,
                     const int32_t* token_pos, T* out, int tokens, int heads, int kv_heads,
                     int head_dim, int block_size, float scale, int max_context,
                     const SplitKvWorkspace& workspace, cudaStream_t stream, AttentionSplit split,
                     AttentionPrefill prefill, AttentionGrouping grouping) {
    paged_attention_impl<T>(q, q_stride, cache, block_tables, max_blocks_per_seq, token_seq,
                            token_pos, out, tokens, heads, kv_heads, head_dim, block_size, scale,
                            max_context, workspace, stream, split, prefill, grouping, nullptr);
}

template <typename T>
void rope_paged_attention(T* qkv, const T* qkv_bias, const T* q_norm, const T* k_norm, QkNorm norm,
                          float eps, const float* cos, const float* sin, const int32_t* slots,
                          const KvCacheLayer& cache, const int32_t* block_tables,
                          int max_blocks_per_seq, const int32_t* token_seq,
                          const int32_t* token_pos, T* out, int tokens, int heads, int kv_heads,
                          int head_dim, int block_size, float scale, int max_context,
                          const SplitKvWorkspace& workspace, cudaStream_t stream) {
    const AttentionInputArgs in{qkv_bias, q_norm, k_norm, norm, eps, cos, sin, slots};
    paged_attention_impl<T>(qkv, static_cast<int64_t>(heads + 2 * kv_heads) * head_dim, cache,
                            block_tables, max_blocks_per_seq, token_seq, token_pos, out, tokens,
                            heads, kv_heads, head_dim, block_size, scale, max_context, workspace,
                            stream, AttentionSplit::Auto, AttentionPrefill::Off,
                            AttentionGrouping::Auto, &in);
}

#define INSTANTIATE(T)                                                                            \
    template void rope_paged_attention<T>(                                                        \
        T*, const T*, const T*, const T*, QkNorm, float, const float*, const float*,              \
        const int32_t*, const KvCacheLayer&, const int32_t*, int, const int32_t*, const int32_t*, \
        T*, int, int, int, int, int, float, int, const SplitKvWorkspace&, cudaStream_t);          \
    template void paged_attention<T>(const T*, int64_t, const KvCacheLayer&, const int32_t*, int, \
                                     const int32_t*, const int32_t*, T*, int, int, int, int, int, \
                                     float, int, const SplitKvWorkspace&, cudaStream_t,           \
                                     AttentionSplit, AttentionPrefill, AttentionGrouping)
MTDESK_INSTANTIATE_T(INSTANTIATE);

}  // namespace mtdesk::cuda
