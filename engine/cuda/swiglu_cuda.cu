// SwiGLU on the fused gate|up product, and row gathering (twin of cpu/swiglu_cpu.cpp).

#include <algorithm>

#include "cuda/cuda_common.h"
#include "cuda/dtype_cuda.cuh"
#include "cuda/launch_cuda.cuh"
#include "cuda/ops_cuda.h"

namespace mtdesk::cuda {
namespace {

// kPairs: gate i and up i at 2i and 2i + 1 of a row (GateUp::Pairs), else at i and inter + i.
template <typename T, bool kPairs>
__global__ void swiglu_kernel(const T* gu, T* out, int64_t total, int inter) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
         idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t r = idx / inter, i = idx % inter;
        const T* row = gu + r * 2 * inter;
        const float g = to_f32(row[kPairs ? 2 * i : i]);
        const float up = to_f32(row[kPairs ? 2 * i + 1 : inter + i]);
        out[idx] = swiglu_of<T>(g, up);
    }
}

template <typename T>
__global__ void to_float_kernel(const T* x, float* out, int64_t n) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        out[i] = to_f32(x[i]);
}

int grid_for(int64_t total) {
    return static_cast<int>(std::clamp<int64_t>((total + 255) / 256, 1, 8192));
}

}  // namespace

template <typename T>
void swiglu(const T* gate_up, T* out, int rows, int inter, GateUp layout, cudaStream_t stream) {
    const int64_t total = static_cast<int64_t>(rows) * inter;
    if (total <= 0) return;
    auto kernel = layout == GateUp::Pairs ? swiglu_kernel<T, true> : swiglu_kernel<T, false>;
    launch(kernel, dim3(grid_for(total)), dim3(256), 0, stream, gate_up, out, total, inter);
    MTDESK_CUDA_CHECK_LAUNCH();
}

template <typename T>
void gather_rows(const T* x, const int32_t* rows, T* out, int n, int dim, cudaStream_t stream) {
    embedding<T>(x, dim, rows, n, out, stream);  // the same row gather
}

template <typename T>
void to_float(const T* x, float* out, int64_t n, cudaStream_t stream) {
    if (n <= 0) return;
    launch(to_float_kernel<T>, dim3(grid_for(n)), dim3(256), 0, stream, x, out, n);
    MTDESK_CUDA_CHECK_LAUNCH();
}

#define INSTANTIATE(T)                                                                  \
    template void swiglu<T>(const T*, T*, int, int, GateUp, cudaStream_t);              \
    template void gather_rows<T>(const T*, const int32_t*, T*, int, int, cudaStream_t); \
    template void to_float<T>(const T*, float*, int64_t, cudaStream_t)
MTDESK_INSTANTIATE_T(INSTANTIATE);

}  // namespace mtdesk::cuda
