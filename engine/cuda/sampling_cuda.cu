// Token choice on the GPU, so that only ids cross to the host (the twin of
// runtime/sampling.cpp's Sampler, with the same order of logits processors as transformers:
// repetition penalty, temperature, top-k, top-p).

#include <cfloat>

#include "cuda/cuda_common.h"
#include "cuda/dtype_cuda.cuh"
#include "cuda/launch_cuda.cuh"
#include "cuda/ops_cuda.h"

namespace mtdesk::cuda {
namespace {

constexpr int kThreads = 1024;

struct Best {
    float value;
    int index;
};

// Larger value wins; equal values: the lower id (torch.argmax's first occurrence).
__device__ __forceinline__ Best better(Best a, Best b) {
    if (b.value > a.value || (b.value == a.value && b.index < a.index)) return b;
    return a;
}

__device__ Best block_argmax(Best mine) {
    __shared__ Best partial[32];
    for (int o = 16; o > 0; o >>= 1) {
        Best other{__shfl_xor_sync(0xffffffffu, mine.value, o),
                   __shfl_xor_sync(0xffffffffu, mine.index, o)};
        mine = better(mine, other);
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) partial[warp] = mine;
    __syncthreads();
    const int warps = blockDim.x >> 5;
    Best r = lane < warps ? partial[lane] : Best{-INFINITY, INT_MAX};
    for (int o = 16; o > 0; o >>= 1) {
        Best other{__shfl_xor_sync(0xffffffffu, r.value, o),
                   __shfl_xor_sync(0xffffffffu, r.index, o)};
        r = better(r, other);
    }
    return r;
}

__device__ float block_max(float v) {
    __shared__ float partial[32];
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    v = lane < static_cast<int>(blockDim.x >> 5) ? partial[lane] : -INFINITY;
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// SplitMix64 of (seed, step): a counter-based draw, uniform in [0, 1).
__device__ double uniform(uint64_t seed, uint64_t step) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (step + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

// ---- Candidates: the K most likely ids of each row, in two steps ----
//
// A row's vocabulary is cut into slices of kSlice ids, one block each (candidates_kernel): the
// slice's values after the repetition penalty and the temperature go to shared memory, and a
// radix select keeps its K largest (the k-th largest key found byte by byte from the top, as
// in radix top-k: Alabi et al., "Fast k-selection algorithms for graphics processing units",
// 2012; PyTorch's topk), or for greedy rows (K = 1) its argmax. The row's block
// (sample_kernel) then selects the K largest of those, ranks them and draws. One block per row
// going through the whole vocabulary once per candidate took ~40 µs a step at the 7B's
// vocabulary with top-k 20 (each pass a trip through L2 for 128k values), and ~6 µs for a
// greedy argmax.

constexpr int kSlice = kSampleSlice;  // vocabulary ids per candidates block (ops_cuda.h)
constexpr int kSliceThreads = 256;    // threads of a candidates block

/// Candidates a row keeps: 1 for greedy, top_k (at most kMaxSampleCandidates), or
/// kMaxSampleCandidates without top-k.
__device__ __forceinline__ int candidates_of(const SampleParams& p) {
    if (p.temperature <= 0.0f || p.top_k == 1) return 1;
    return p.top_k > 0 ? min(p.top_k, kMaxSampleCandidates) : kMaxSampleCandidates;
}

/// A 64-bit key that orders (value, id) as better() does: the larger value first, among equal
/// values the lower id; -0 equals +0, and NaN comes last.
__device__ __forceinline__ uint64_t order_key(float v, int id) {
    uint32_t u = v == 0.0f ? 0u : __float_as_uint(v);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    if (v != v) u = 0;
    return (static_cast<uint64_t>(u) << 32) | (0xFFFFFFFFu - static_cast<uint32_t>(id));
}

/// Where a row's candidates live in its part of the scratch (sample_scratch_floats()): for
/// each of its `slices` slices, up to `k` values and ids, and the slice's maximum and sum of
/// exp(value - maximum) (used without top-k, where the normaliser covers the vocabulary).
struct RowScratch {
    float* value;
    int32_t* id;
    float* max;
    float* sum;
    __device__ RowScratch(float* row, int slices, int k)
        : value(row),
          id(reinterpret_cast<int32_t*>(row + static_cast<int64_t>(slices) * k)),
          max(row + 2 * static_cast<int64_t>(slices) * k),
          sum(row + 2 * static_cast<int64_t>(slices) * k + slices) {}
};

struct SelectState {
    unsigned hist[256];
    unsigned long long prefix, mask;
    int remaining;
    int done;
    int count;
};

/// Radix select over n keys (key(i), all distinct), by a block of NT threads: afterwards a key
/// is among the `want` (1 <= want <= n) largest exactly when (key & st.mask) >= st.prefix.
/// Each pass histograms one byte of the keys that share the bytes found so far, and the byte
/// of the want-th largest is the bin where the count from the top reaches it; it stops when
/// that bin holds exactly the keys still wanted (at the latest at the last byte: keys are
/// distinct).
template <int NT, typename Key>
__device__ void radix_select(SelectState& st, int n, int want, Key key) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) {
        st.prefix = 0;
        st.mask = 0;
        st.remaining = want;
        st.done = 0;
    }
    for (int byte = 0; byte < 8; ++byte) {
        const int shift = 56 - 8 * byte;
        for (int b = threadIdx.x; b < 256; b += NT)
            st.hist[b] = 0;
        __syncthreads();
        const uint64_t prefix = st.prefix, mask = st.mask;
        for (int i = threadIdx.x; i < n; i += NT) {
            const uint64_t k = key(i);
            if ((k & mask) == prefix) atomicAdd(&st.hist[(k >> shift) & 255], 1u);
        }
        __syncthreads();
        if (warp == 0) {
            // Lane l holds bins 255 - 8l down to 248 - 8l; a scan over the lanes from the top.
            unsigned mine = 0;
#pragma unroll
            for (int j = 0; j < 8; ++j)
                mine += st.hist[255 - 8 * lane - j];
            unsigned inclusive = mine;
            for (int o = 1; o < 32; o <<= 1) {
                const unsigned other = __shfl_sync(0xffffffffu, inclusive, max(lane - o, 0));
                if (lane >= o) inclusive += other;
            }
            const unsigned remaining = static_cast<unsigned>(st.remaining);
            int first = inclusive >= remaining ? lane : 32;
            for (int o = 16; o > 0; o >>= 1)
                first = min(first, __shfl_xor_sync(0xffffffffu, first, o));
            if (lane == first) {
                unsigned above = inclusive - mine;
                int bin = 248 - 8 * lane;
                for (int j = 0; j < 8; ++j) {
                    const int b = 255 - 8 * lane - j;
                    if (above + st.hist[b] >= remaining) {
                        bin = b;
                        break;
                    }
                    above += st.hist[b];
                }
                const unsigned left = remaining - above;
                st.remaining = static_cast<int>(left);
                st.prefix = prefix | (static_cast<unsigned long long>(bin) << shift);
                st.mask = mask | (255ull << shift);
                st.done = st.hist[bin] == left;
            }
        }
        __syncthreads();
        if (st.done) break;
    }
}

// grid (rows, slices of kSlice ids), kSliceThreads threads: slice z of row r keeps its
// candidates_of() largest values (after the repetition penalty, from the original logits, and
// the temperature, in that order, as transformers' processors run), unordered, in the row's
// scratch; without top-k also its maximum and sum of exp(value - maximum).
template <typename T>
__global__ void __launch_bounds__(kSliceThreads)
    candidates_kernel(const T* logits, int64_t row_stride, int vocab, const SampleParams* params,
                      const int32_t* hist_off, const int32_t* hist_ids, float* scratch,
                      int64_t scratch_row, const int32_t* pending) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    const int r = blockIdx.x, z = blockIdx.y;
    const SampleParams p = params[r];
    const int begin = z * kSlice, n = min(kSlice, vocab - begin);
    const int k = candidates_of(p);
    __shared__ float value[kSlice];
    __shared__ SelectState st;
    const T* in = logits + r * row_stride;
    for (int i = threadIdx.x; i < n; i += kSliceThreads)
        value[i] = to_f32(in[begin + i]);
    __syncthreads();
    if (p.repetition_penalty != 1.0f) {
        // From the original logits, so that a repeated id is penalised once.
        for (int j = hist_off[r] + threadIdx.x; j < hist_off[r + 1]; j += kSliceThreads) {
            const int id = hist_ids[j] >= 0 ? hist_ids[j] : pending[-1 - hist_ids[j]];
            if (id < begin || id >= begin + n) continue;
            const float v = to_f32(in[id]);
            value[id - begin] = v < 0 ? v * p.repetition_penalty : v / p.repetition_penalty;
        }
        __syncthreads();
    }
    const bool greedy = p.temperature <= 0.0f || p.top_k == 1;
    float mx = -INFINITY;
    if (!greedy) {
        const float inv_t = 1.0f / p.temperature;
        for (int i = threadIdx.x; i < n; i += kSliceThreads) {
            value[i] *= inv_t;
            mx = fmaxf(mx, value[i]);
        }
    }
    const int slices = sample_slices(vocab);
    RowScratch out(scratch + r * scratch_row, slices, k);
    if (!greedy && p.top_k <= 0) {
        mx = block_max(mx);  // its barriers also publish the scaled values
        float l = 0.0f;
        for (int i = threadIdx.x; i < n; i += kSliceThreads)
            l += __expf(value[i] - mx);
        l = block_sum(l);
        if (threadIdx.x == 0) {
            out.max[z] = mx;
            out.sum[z] = l;
        }
    }
    __syncthreads();
    if (k == 1) {  // greedy: the slice's argmax
        Best mine{-INFINITY, INT_MAX};
        for (int i = threadIdx.x; i < n; i += kSliceThreads)
            mine = better(mine, Best{value[i], begin + i});
        const Best b = block_argmax(mine);
        if (threadIdx.x == 0) {
            out.value[z] = b.value;
            out.id[z] = b.index;
        }
        return;
    }
    const int want = min(k, n);
    radix_select<kSliceThreads>(st, n, want, [&](int i) { return order_key(value[i], begin + i); });
    if (threadIdx.x == 0) st.count = 0;
    __syncthreads();
    const uint64_t prefix = st.prefix, mask = st.mask;
    for (int i = threadIdx.x; i < n; i += kSliceThreads)
        if ((order_key(value[i], begin + i) & mask) >= prefix) {
            const int at = z * k + atomicAdd(&st.count, 1);
            out.value[at] = value[i];
            out.id[at] = begin + i;
        }
}

// grid (rows), kThreads threads: row r's token from the candidates of its slices
// (candidates_kernel): the best of the slices' argmaxes for greedy rows; otherwise the K best of
// all, ranked, then top-k / top-p and a draw.
__global__ void __launch_bounds__(kThreads)
    sample_kernel(int vocab, const SampleParams* params, float* scratch, int64_t scratch_row,
                  int32_t* out, int32_t* also) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    const int r = blockIdx.x;
    const SampleParams p = params[r];
    const int k = candidates_of(p);
    const int slices = sample_slices(vocab);
    const RowScratch c(scratch + r * scratch_row, slices, k);
    // Slices before the last hold k candidates each (k <= kSlice), the last min(k, its ids).
    const int n = (slices - 1) * k + min(k, vocab - (slices - 1) * kSlice);
    if (k == 1) {
        Best mine{-INFINITY, INT_MAX};
        for (int i = threadIdx.x; i < n; i += kThreads)
            mine = better(mine, Best{c.value[i], c.id[i]});
        const Best b = block_argmax(mine);
        if (threadIdx.x == 0) {
            out[r] = b.index;
            if (also) also[r] = b.index;
        }
        return;
    }
    const int want = min(k, n);
    __shared__ SelectState st;
    __shared__ float cand_value[kMaxSampleCandidates];
    __shared__ int cand_index[kMaxSampleCandidates];
    __shared__ uint64_t picked_key[kMaxSampleCandidates];
    __shared__ int picked[kMaxSampleCandidates];
    radix_select<kThreads>(st, n, want, [&](int i) { return order_key(c.value[i], c.id[i]); });
    if (threadIdx.x == 0) st.count = 0;
    __syncthreads();
    const uint64_t prefix = st.prefix, mask = st.mask;
    for (int i = threadIdx.x; i < n; i += kThreads) {
        const uint64_t key = order_key(c.value[i], c.id[i]);
        if ((key & mask) >= prefix) {
            const int at = atomicAdd(&st.count, 1);
            picked_key[at] = key;
            picked[at] = i;
        }
    }
    __syncthreads();
    // Rank by key (distinct keys): cand_* in the order of better().
    for (int t = threadIdx.x; t < want; t += kThreads) {
        int rank = 0;
        for (int j = 0; j < want; ++j)
            rank += picked_key[j] > picked_key[t];
        cand_value[rank] = c.value[picked[t]];
        cand_index[rank] = c.id[picked[t]];
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    // Candidates of probability 0 (-inf after the penalty) are not drawn from.
    int found = want;
    while (found > 1 && cand_value[found - 1] == -INFINITY)
        --found;
    const float mx = cand_value[0];
    // Normaliser: over the top-k set when top-k is on, else over the whole vocabulary (each
    // slice's sum rescaled to the row's maximum).
    float z = 0.0f;
    if (p.top_k > 0) {
        for (int i = 0; i < found; ++i)
            z += __expf(cand_value[i] - mx);
    } else {
        for (int s = 0; s < slices; ++s)
            if (c.max[s] > -INFINITY) z += c.sum[s] * __expf(c.max[s] - mx);
    }
    // Nucleus: the most likely candidates until their mass reaches top_p (at least one).
    int keep = found;
    if (p.top_p < 1.0f) {
        float cum = 0.0f;
        for (int i = 0; i < found; ++i) {
            cum += __expf(cand_value[i] - mx) / z;
            if (cum >= p.top_p) {
                keep = i + 1;
                break;
            }
        }
    }
    float mass = 0.0f;
    for (int i = 0; i < keep; ++i)
        mass += __expf(cand_value[i] - mx);
    const double u = uniform(p.seed, p.step) * mass;
    double acc = 0.0;
    int chosen = cand_index[keep - 1];
    for (int i = 0; i < keep; ++i) {
        acc += __expf(cand_value[i] - mx);
        if (u < acc) {
            chosen = cand_index[i];
            break;
        }
    }
    out[r] = chosen;
    if (also) also[r] = chosen;
}

}  // namespace

template <typename T>
void sample_tokens(const T* logits, int64_t row_stride, int vocab, int rows,
                   const SampleParams* params, const int32_t* history_offsets,
                   const int32_t* history_ids, float* scratch, int32_t* out, cudaStream_t stream,
                   const int32_t* pending, int32_t* also) {
    if (rows <= 0) return;
    const int64_t scratch_row = static_cast<int64_t>(sample_scratch_floats(1, vocab));
    const int slices = sample_slices(vocab);
    launch(candidates_kernel<T>, dim3(rows, slices), dim3(kSliceThreads), 0, stream, logits,
           row_stride, vocab, params, history_offsets, history_ids, scratch, scratch_row, pending);
    MTDESK_CUDA_CHECK_LAUNCH();
    launch(sample_kernel, dim3(rows), dim3(kThreads), 0, stream, vocab, params, scratch,
           scratch_row, out, also);
    MTDESK_CUDA_CHECK_LAUNCH();
}

#define INSTANTIATE(T)                                                                             \
    template void sample_tokens<T>(const T*, int64_t, int, int, const SampleParams*,               \
                                   const int32_t*, const int32_t*, float*, int32_t*, cudaStream_t, \
                                   const int32_t*, int32_t*)
MTDESK_INSTANTIATE_T(INSTANTIATE);

}  // namespace mtdesk::cuda
