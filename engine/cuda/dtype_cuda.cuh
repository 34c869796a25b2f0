#pragma once
// Conversions between fp32 and the 16-bit activation types, for templated kernels.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace mtdesk::cuda {

template <typename T>
__device__ __forceinline__ float to_f32(T v);
template <>
__device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 v) {
    return __bfloat162float(v);
}
template <>
__device__ __forceinline__ float to_f32<__half>(__half v) {
    return __half2float(v);
}

template <typename T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half from_f32<__half>(float v) {
    return __float2half_rn(v);
}

/// fp32 value rounded to T and back: the value a 16-bit tensor would hold.
template <typename T>
__device__ __forceinline__ float round_to(float v) {
    return to_f32<T>(from_f32<T>(v));
}

/// SwiGLU of one gate/up pair holding T values (as fp32): T(T(silu(gate)) · up), with
/// transformers' 16-bit rounding (the activation is rounded to T before the product).
template <typename T>
__device__ __forceinline__ T swiglu_of(float gate, float up) {
    const float act = round_to<T>(gate / (1.0f + __expf(-gate)));
    return from_f32<T>(act * up);
}

/// Threads per row of the register-resident RMSNorm kernels (rms_norm_cuda.cu's and the fused
/// split-K sum's): one constant, since the order of their sums of squares, and with it their
/// bits, depends on it.
constexpr int kRmsNormThreads = 256;

/// The last pass of the register-resident RMSNorm kernels (rms_norm_cuda.cu's, and the split-K
/// sum fused with the residual add and norm in linear_kernels.cuh, which must give the same
/// bits): the thread's 8-element chunks c = threadIdx.x + i · kThreads (i < kV, c < chunks) of
/// the output row, out = T(weight · T(v · inv)), from the row's values v and the norm weight's
/// chunks wv the thread kept. 16-byte aligned out_row.
template <typename T, int kV, int kThreads>
__device__ __forceinline__ void rms_norm_store(const float (&v)[kV][8], const uint4 (&wv)[kV],
                                               int chunks, float inv, T* out_row) {
    uint4* orow = reinterpret_cast<uint4*>(out_row);
#pragma unroll
    for (int i = 0; i < kV; ++i) {
        const int c = threadIdx.x + i * kThreads;
        if (c >= chunks) continue;
        const T* we = reinterpret_cast<const T*>(&wv[i]);
        uint4 o;
        T* oe = reinterpret_cast<T*>(&o);
#pragma unroll
        for (int e = 0; e < 8; ++e)
            oe[e] = from_f32<T>(to_f32(we[e]) * round_to<T>(v[i][e] * inv));
        orow[c] = o;
    }
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/// Sum over the block (blockDim.x a multiple of 32, <= 1024); every thread gets the result.
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float partial[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    __syncthreads();  // partial may still be read by a previous call
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    const int warps = (blockDim.x + 31) >> 5;
    v = lane < warps ? partial[lane] : 0.0f;
    return warp_sum(v);
}

}  // namespace mtdesk::cuda

/// Explicit instantiations of a kernel wrapper for both activation types.
#define MTDESK_INSTANTIATE_T(macro) \
    macro(__nv_bfloat16);           \
    macro(__half)
