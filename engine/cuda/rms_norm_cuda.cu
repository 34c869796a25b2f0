// RMSNorm, the residual add fused with it, and bias addition (twins of cpu/rms_norm_cpu.cpp).

#include <algorithm>

#include "cuda/cuda_common.h"
#include "cuda/dtype_cuda.cuh"
#include "cuda/launch_cuda.cuh"
#include "cuda/ops_cuda.h"

namespace mtdesk::cuda {
namespace {

constexpr int kThreads = 256;

// One block per row. With `delta`, the row is first replaced by T(row + delta) (the residual
// stream is 16-bit in the reference too).
template <typename T>
__global__ void rms_norm_kernel(T* x, const T* delta, const T* weight, T* out, int dim, float eps) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    const int64_t r = blockIdx.x;
    T* row = x + r * dim;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
        float v = to_f32(row[i]);
        if (delta) {
            v = round_to<T>(v + to_f32(delta[r * dim + i]));
            row[i] = from_f32<T>(v);
        }
        ss += v * v;
    }
    const float inv = rsqrtf(block_sum(ss) / static_cast<float>(dim) + eps);
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
        const float n = round_to<T>(to_f32(row[i]) * inv);
        out[r * dim + i] = from_f32<T>(to_f32(weight[i]) * n);
    }
}

template <typename T>
__global__ void add_bias_kernel(T* x, const T* bias, int64_t total, int cols) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        x[i] = from_f32<T>(to_f32(x[i]) + to_f32(bias[i % cols]));
}

}  // namespace

template <typename T>
void rms_norm(const T* x, const T* weight, T* out, int rows, int dim, float eps,
              cudaStream_t stream) {
    if (rows <= 0) return;
    // x is only read without delta; the kernel takes a mutable pointer for the fused variant.
    launch(rms_norm_kernel<T>, dim3(rows), dim3(kThreads), 0, stream, const_cast<T*>(x), nullptr,
           weight, out, dim, eps);
    MTDESK_CUDA_CHECK_LAUNCH();
}

template <typename T>
void add_rms_norm(T* residual, const T* delta, const T* weight, T* out, int rows, int dim,
                  float eps, cudaStream_t stream) {
    if (rows <= 0) return;
    // out may equal delta: each element of delta is read (into the residual) before the
    // block_sum barrier, and out is written only after it.
    launch(rms_norm_kernel<T>, dim3(rows), dim3(kThreads), 0, stream, residual, delta, weight, out,
           dim, eps);
    MTDESK_CUDA_CHECK_LAUNCH();
}

template <typename T>
void add_bias(T* x, const T* bias, int rows, int cols, cudaStream_t stream) {
    const int64_t total = static_cast<int64_t>(rows) * cols;
    if (total <= 0) return;
    const int blocks = static_cast<int>(std::min<int64_t>((total + 255) / 256, 4096));
    launch(add_bias_kernel<T>, dim3(blocks), dim3(256), 0, stream, x, bias, total, cols);
    MTDESK_CUDA_CHECK_LAUNCH();
}

#define INSTANTIATE(T)                                                                        \
    template void rms_norm<T>(const T*, const T*, T*, int, int, float, cudaStream_t);         \
    template void add_rms_norm<T>(T*, const T*, const T*, T*, int, int, float, cudaStream_t); \
    template void add_bias<T>(T*, const T*, int, int, cudaStream_t)
MTDESK_INSTANTIATE_T(INSTANTIATE);

}  // namespace mtdesk::cuda
