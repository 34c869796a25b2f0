// Token embedding lookup (the twin of cpu/embedding_cpu.cpp).

#include "cuda/cuda_common.h"
#include "cuda/dtype_cuda.cuh"
#include "cuda/launch_cuda.cuh"
#include "cuda/ops_cuda.h"

namespace mtdesk::cuda {
namespace {

template <typename T>
__global__ void embedding_kernel(const T* table, int64_t hidden, const int32_t* ids, T* out) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    const int t = blockIdx.x;
    const T* row = table + static_cast<int64_t>(ids[t]) * hidden;
    T* dst = out + static_cast<int64_t>(t) * hidden;
    for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x)
        dst[i] = row[i];
}

}  // namespace

template <typename T>
void embedding(const T* table, int64_t hidden, const int32_t* ids, int tokens, T* out,
               cudaStream_t stream) {
    if (tokens <= 0) return;
    launch(embedding_kernel<T>, dim3(tokens), dim3(256), 0, stream, table, hidden, ids, out);
    MTDESK_CUDA_CHECK_LAUNCH();
}

#define INSTANTIATE(T) \
    template void embedding<T>(const T*, int64_t, const int32_t*, int, T*, cudaStream_t)
MTDESK_INSTANTIATE_T(INSTANTIATE);

}  // namespace mtdesk::cuda
