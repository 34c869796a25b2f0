// Token embedding lookup (the twin of cpu/embedding_cpu.cpp).

#include <cstdint>

#include "cuda/cuda_common.h"
#include "cuda/dtype_cuda.cuh"
#include "cuda/launch_cuda.cuh"
#include "cuda/ops_cuda.h"

namespace mtdesk::cuda {
namespace {

// One block per row: out[t] = table[ids[t]]. Rows of whole, aligned 16-byte chunks are copied
// kUnroll chunks per thread at a time, all loads before any store, so that a row takes about
// one round trip to memory (element by element, each load waited for the store before it:
// 8.3 µs for a 4096-wide bf16 row under Nsight Compute, the first kernel of every decode step).
template <typename T>
__global__ void embedding_kernel(const T* __restrict__ table, int64_t hidden,
                                 const int32_t* __restrict__ ids, T* __restrict__ out,
                                 const int32_t* __restrict__ pending) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    const int t = blockIdx.x;
    const int32_t id = ids[t] >= 0 ? ids[t] : pending[-1 - ids[t]];
    const T* row = table + static_cast<int64_t>(id) * hidden;
    T* dst = out + static_cast<int64_t>(t) * hidden;
    constexpr int kUnroll = 4;
    const bool vec = hidden % 8 == 0 && reinterpret_cast<std::uintptr_t>(row) % 16 == 0 &&
                     reinterpret_cast<std::uintptr_t>(dst) % 16 == 0;
    if (vec) {
        const uint4* src = reinterpret_cast<const uint4*>(row);
        uint4* to = reinterpret_cast<uint4*>(dst);
        const int64_t chunks = hidden / 8;
        for (int64_t base = threadIdx.x; base < chunks; base += kUnroll * blockDim.x) {
            uint4 v[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int64_t i = base + u * blockDim.x;
                if (i < chunks) v[u] = __ldg(src + i);
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int64_t i = base + u * blockDim.x;
                if (i < chunks) to[i] = v[u];
            }
        }
        return;
    }
    for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x)
        dst[i] = row[i];
}

}  // namespace

template <typename T>
void embedding(const T* table, int64_t hidden, const int32_t* ids, int tokens, T* out,
               cudaStream_t stream, const int32_t* pending) {
    if (tokens <= 0) return;
    launch(embedding_kernel<T>, dim3(tokens), dim3(256), 0, stream, table, hidden, ids, out,
           pending);
    MTDESK_CUDA_CHECK_LAUNCH();
}

#define INSTANTIATE(T)                                                                   \
    template void embedding<T>(const T*, int64_t, const int32_t*, int, T*, cudaStream_t, \
                               const int32_t*)
MTDESK_INSTANTIATE_T(INSTANTIATE);

}  // namespace mtdesk::cuda
