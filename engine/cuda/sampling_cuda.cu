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

template <typename T>
__global__ void sample_kernel(const T* logits, int64_t row_stride, int vocab,
                              const SampleParams* params, const int32_t* hist_off,
                              const int32_t* hist_ids, float* scratch, int32_t* out,
                              const int32_t* pending) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    const int r = blockIdx.x;
    const SampleParams p = params[r];
    const T* in = logits + r * row_stride;
    const bool greedy = p.temperature <= 0.0f || p.top_k == 1;
    if (greedy && p.repetition_penalty == 1.0f) {
        // The argmax straight from the logits (the order of the comparisons does not matter:
        // better() is a total order), without the fp32 copy the other paths work on.
        Best mine{-INFINITY, INT_MAX};
#pragma unroll 4
        for (int i = threadIdx.x; i < vocab; i += blockDim.x)
            mine = better(mine, Best{to_f32(in[i]), i});
        const Best b = block_argmax(mine);
        if (threadIdx.x == 0) out[r] = b.index;
        return;
    }
    float* s = scratch + static_cast<int64_t>(r) * vocab;
    for (int i = threadIdx.x; i < vocab; i += blockDim.x)
        s[i] = to_f32(in[i]);
    __syncthreads();
    if (p.repetition_penalty != 1.0f) {
        // From the original logits, so that a repeated id is penalised once.
        for (int j = hist_off[r] + threadIdx.x; j < hist_off[r + 1]; j += blockDim.x) {
            const int id = hist_ids[j] >= 0 ? hist_ids[j] : pending[-1 - hist_ids[j]];
            if (id < 0 || id >= vocab) continue;
            const float v = to_f32(in[id]);
            s[id] = v < 0 ? v * p.repetition_penalty : v / p.repetition_penalty;
        }
        __syncthreads();
    }
    if (greedy) {
        Best mine{-INFINITY, INT_MAX};
        for (int i = threadIdx.x; i < vocab; i += blockDim.x)
            mine = better(mine, Best{s[i], i});
        const Best b = block_argmax(mine);
        if (threadIdx.x == 0) out[r] = b.index;
        return;
    }
    const float inv_t = 1.0f / p.temperature;
    float mx = -INFINITY;
    for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
        s[i] *= inv_t;
        mx = fmaxf(mx, s[i]);
    }
    mx = block_max(mx);
    const int k = p.top_k > 0 ? min(p.top_k, kMaxSampleCandidates) : kMaxSampleCandidates;
    // Normaliser: over the top-k set when top-k is on, else over the whole vocabulary.
    float z = 0.0f;
    if (p.top_k <= 0) {
        for (int i = threadIdx.x; i < vocab; i += blockDim.x)
            z += __expf(s[i] - mx);
        z = block_sum(z);
    }
    __shared__ float cand_value[kMaxSampleCandidates];
    __shared__ int cand_index[kMaxSampleCandidates];
    int found = 0;
    for (; found < k && found < vocab; ++found) {
        Best mine{-INFINITY, INT_MAX};
        for (int i = threadIdx.x; i < vocab; i += blockDim.x)
            mine = better(mine, Best{s[i], i});
        const Best b = block_argmax(mine);
        if (b.value == -INFINITY) break;
        if (threadIdx.x == 0) {
            cand_value[found] = b.value;
            cand_index[found] = b.index;
            s[b.index] = -INFINITY;  // taken
        }
        __syncthreads();
    }
    if (threadIdx.x != 0) return;
    if (p.top_k > 0) {
        z = 0.0f;
        for (int c = 0; c < found; ++c)
            z += __expf(cand_value[c] - mx);
    }
    // Nucleus: the most likely candidates until their mass reaches top_p (at least one).
    int keep = found;
    if (p.top_p < 1.0f) {
        float cum = 0.0f;
        for (int c = 0; c < found; ++c) {
            cum += __expf(cand_value[c] - mx) / z;
            if (cum >= p.top_p) {
                keep = c + 1;
                break;
            }
        }
    }
    float mass = 0.0f;
    for (int c = 0; c < keep; ++c)
        mass += __expf(cand_value[c] - mx);
    const double u = uniform(p.seed, p.step) * mass;
    double acc = 0.0;
    int chosen = cand_index[keep - 1];
    for (int c = 0; c < keep; ++c) {
        acc += __expf(cand_value[c] - mx);
        if (u < acc) {
            chosen = cand_index[c];
            break;
        }
    }
    out[r] = chosen;
}

}  // namespace

template <typename T>
void sample_tokens(const T* logits, int64_t row_stride, int vocab, int rows,
                   const SampleParams* params, const int32_t* history_offsets,
                   const int32_t* history_ids, float* scratch, int32_t* out, cudaStream_t stream,
                   const int32_t* pending) {
    if (rows <= 0) return;
    launch(sample_kernel<T>, dim3(rows), dim3(kThreads), 0, stream, logits, row_stride, vocab,
           params, history_offsets, history_ids, scratch, out, pending);
    MTDESK_CUDA_CHECK_LAUNCH();
}

#define INSTANTIATE(T)                                                                             \
    template void sample_tokens<T>(const T*, int64_t, int, int, const SampleParams*,               \
                                   const int32_t*, const int32_t*, float*, int32_t*, cudaStream_t, \
                                   const int32_t*)
MTDESK_INSTANTIATE_T(INSTANTIATE);

}  // namespace mtdesk::cuda
