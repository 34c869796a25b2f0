// RMSNorm, the residual add fused with it, and bias addition (twins of cpu/rms_norm_cpu.cpp).

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_common.h"
#include "cuda/dtype_cuda.cuh"
#include "cuda/launch_cuda.cuh"
#include "cuda/ops_cuda.h"

namespace mtdesk::cuda {
namespace {

constexpr int kThreads = kRmsNormThreads;  // the fused split-K sum uses it too

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

// The same as rms_norm_kernel for rows of dim = 8 · kThreads · kV' (kV' <= kV) elements, 16-byte
// aligned: each thread loads its 8-element chunks (x, delta and weight) with 128-bit loads, all
// issued before any is used, and keeps them in registers between the two passes. A decode step
// at batch 1 runs 2 norms per layer on one block each, where the scalar kernel's chain of
// dependent loads took ~10 µs and this takes a few.
template <typename T, int kV>
__global__ void __launch_bounds__(kThreads)
    rms_norm_vec_kernel(T* x, const T* delta, const T* weight, T* out, int dim, float eps) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    const int64_t r = blockIdx.x;
    const int chunks = dim / 8;
    uint4* row = reinterpret_cast<uint4*>(x + r * dim);
    const uint4* drow = delta ? reinterpret_cast<const uint4*>(delta + r * dim) : nullptr;
    const uint4* wrow = reinterpret_cast<const uint4*>(weight);
    // Zeroed: the host compiler of the emulation cannot see that unloaded chunks stay unread.
    uint4 xv[kV] = {}, dv[kV] = {}, wv[kV] = {};
#pragma unroll
    for (int i = 0; i < kV; ++i) {
        const int c = threadIdx.x + i * kThreads;
        if (c < chunks) {
            xv[i] = row[c];
            dv[i] = drow ? drow[c] : make_uint4(0, 0, 0, 0);
            wv[i] = __ldg(wrow + c);
        }
    }
    float v[kV][8];
    float ss = 0.0f;
#pragma unroll
    for (int i = 0; i < kV; ++i) {
        const int c = threadIdx.x + i * kThreads;
        if (c >= chunks) continue;
        const T* xe = reinterpret_cast<const T*>(&xv[i]);
        const T* de = reinterpret_cast<const T*>(&dv[i]);
#pragma unroll
        for (int e = 0; e < 8; ++e) {
            float f = to_f32(xe[e]);
            if (drow) f = round_to<T>(f + to_f32(de[e]));
            v[i][e] = f;
            ss += f * f;
        }
        if (drow) {
            uint4 o;
            T* oe = reinterpret_cast<T*>(&o);
#pragma unroll
            for (int e = 0; e < 8; ++e)
                oe[e] = from_f32<T>(v[i][e]);
            row[c] = o;
        }
    }
    const float inv = rsqrtf(block_sum(ss) / static_cast<float>(dim) + eps);
    rms_norm_store<T, kV, kThreads>(v, wv, chunks, inv, out + r * dim);
}

template <typename T>
__global__ void add_bias_kernel(T* x, const T* bias, int64_t total, int cols) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        x[i] = from_f32<T>(to_f32(x[i]) + to_f32(bias[i % cols]));
}

bool aligned16(const void* p) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// The register-resident kernel for rows of whole, aligned 16-byte chunks up to 8 · 4 · kThreads
// elements; the scalar one otherwise.
template <typename T>
void launch_rms_norm(T* x, const T* delta, const T* weight, T* out, int rows, int dim, float eps,
                     cudaStream_t stream) {
    const int per_thread = (dim / 8 + kThreads - 1) / kThreads;
    const bool vec = dim % 8 == 0 && per_thread <= 4 && aligned16(x) && aligned16(out) &&
                     aligned16(weight) && (!delta || aligned16(delta));
    const dim3 grid(rows), block(kThreads);
    if (!vec)
        launch(rms_norm_kernel<T>, grid, block, 0, stream, x, delta, weight, out, dim, eps);
    else if (per_thread == 1)
        launch(rms_norm_vec_kernel<T, 1>, grid, block, 0, stream, x, delta, weight, out, dim, eps);
    else if (per_thread == 2)
        launch(rms_norm_vec_kernel<T, 2>, grid, block, 0, stream, x, delta, weight, out, dim, eps);
    else
        launch(rms_norm_vec_kernel<T, 4>, grid, block, 0, stream, x, delta, weight, out, dim, eps);
    MTDESK_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <typename T>
void rms_norm(const T* x, const T* weight, T* out, int rows, int dim, float eps,
              cudaStream_t stream) {
    if (rows <= 0) return;
    // x is only read without delta; the kernel takes a mutable pointer for the fused variant.
    launch_rms_norm<T>(const_cast<T*>(x), nullptr, weight, out, rows, dim, eps, stream);
}

template <typename T>
void add_rms_norm(T* residual, const T* delta, const T* weight, T* out, int rows, int dim,
                  float eps, cudaStream_t stream) {
    if (rows <= 0) return;
    // out may equal delta: each element of delta is read (into the residual) before the
    // block_sum barrier, and out is written only after it.
    launch_rms_norm<T>(residual, delta, weight, out, rows, dim, eps, stream);
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
