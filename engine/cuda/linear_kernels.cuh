#pragma once
// The kernels of linear_cuda.cu and the launch-shape rules they are tuned with: weight-only
// GEMV (INT8/INT4 decode), the split-K sum, and dequantisation to 16-bit (INT8/INT4 prefill).
// Private to linear_cuda.cu; a separate header only so the kernels can also be run by a
// host-side emulation when checking them without a GPU.
//
// Device layouts are those documented in linear_cuda.h.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace mtdesk::cuda::detail {

// ---- Device helpers ---------------------------------------------------------------------------

constexpr int kWarps = 4;        // warps per block of the GEMV kernels
constexpr int kChunkBytes = 16;  // one 128-bit weight load per lane and row

// Weights are streamed once per call: read-only path, not kept in L1 (x lives there).
__device__ __forceinline__ uint4 load_weights(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
#else
    return *reinterpret_cast<const uint4*>(p);  // host emulation of the kernels
#endif
}

__device__ __forceinline__ uint32_t word_of(const uint4& v, int i) {
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// int -> float without I2F (a quarter-rate instruction): a byte b placed in the low mantissa
// bits of 2^23 gives the float 2^23 + b exactly; one PRMT builds it and one FADD removes the
// bias. Signed values are first biased to unsigned (x ^ 0x80 for bytes, x ^ 0x8 for nibbles).
__device__ __forceinline__ float biased_byte(uint32_t word, int byte, float bias) {
    return __uint_as_float(__byte_perm(word, 0x4B000000u, 0x7440u | byte)) - bias;
}

// Four int8 (one little-endian word) -> four floats.
__device__ __forceinline__ void int8x4_to_float(uint32_t w, float* f) {
    const uint32_t u = w ^ 0x80808080u;
#pragma unroll
    for (int i = 0; i < 4; ++i)
        f[i] = biased_byte(u, i, 8388736.0f);  // 2^23 + 128
}

// Eight int4 (one word; nibble i = element i) -> eight floats.
__device__ __forceinline__ void int4x8_to_float(uint32_t w, float* f) {
    const uint32_t even = (w & 0x0F0F0F0Fu) ^ 0x08080808u;        // elements 0, 2, 4, 6
    const uint32_t odd = ((w >> 4) & 0x0F0F0F0Fu) ^ 0x08080808u;  // elements 1, 3, 5, 7
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        f[2 * i] = biased_byte(even, i, 8388616.0f);  // 2^23 + 8
        f[2 * i + 1] = biased_byte(odd, i, 8388616.0f);
    }
}

template <typename T>
struct Act;

template <>
struct Act<__nv_bfloat16> {
    // bf16 is the top half of an fp32: widening is a shift or a mask.
    static __device__ __forceinline__ void widen2(uint32_t v, float* f) {
        f[0] = __uint_as_float(v << 16);
        f[1] = __uint_as_float(v & 0xffff0000u);
    }
    static __device__ __forceinline__ float widen(uint16_t v) {
        return __uint_as_float(static_cast<uint32_t>(v) << 16);
    }
    static __device__ __forceinline__ __nv_bfloat16 narrow(float f) {
        return __float2bfloat16_rn(f);
    }
    static __device__ __forceinline__ uint32_t narrow2(float a, float b) {
        const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
        return *reinterpret_cast<const uint32_t*>(&h);
    }
};

template <>
struct Act<__half> {
    static __device__ __forceinline__ void widen2(uint32_t v, float* f) {
        const float2 p = __half22float2(*reinterpret_cast<const __half2*>(&v));
        f[0] = p.x;
        f[1] = p.y;
    }
    static __device__ __forceinline__ float widen(uint16_t v) {
        return __half2float(__ushort_as_half(v));
    }
    static __device__ __forceinline__ __half narrow(float f) { return __float2half_rn(f); }
    static __device__ __forceinline__ uint32_t narrow2(float a, float b) {
        const __half2 h = __floats2half2_rn(a, b);
        return *reinterpret_cast<const uint32_t*>(&h);
    }
};

// Eight activations x[k0 .. k0 + 7] of one row as floats. kVec: one 128-bit load (k0 + 8 <= k,
// 16-byte aligned); else element by element, zero past k.
template <typename T, bool kVec>
__device__ __forceinline__ void load_x8(const T* row, int k0, int k, float* f) {
    if constexpr (kVec) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(row + k0));
        Act<T>::widen2(v.x, f);
        Act<T>::widen2(v.y, f + 2);
        Act<T>::widen2(v.z, f + 4);
        Act<T>::widen2(v.w, f + 6);
    } else {
        const uint16_t* bits = reinterpret_cast<const uint16_t*>(row);
#pragma unroll
        for (int e = 0; e < 8; ++e)
            f[e] = (k0 + e < k) ? Act<T>::widen(__ldg(bits + k0 + e)) : 0.0f;
    }
}

// ---- GEMV (decode) ----------------------------------------------------------------------------

struct GemvArgs {
    const uint8_t* w;       // device layout of DeviceLinear
    const __half* scales;   // INT8: [n]; INT4: [n, groups]
    std::size_t row_bytes;  // bytes per weight row
    int groups;             // INT4 scales per row
    int group_chunks;       // INT4: 16-byte chunks per group
    int chunks;             // 16-byte chunks per row
    int chunks_per_split;   // chunks of one split-K slice
    const void* x;          // [m, k] T
    void* y;                // [m, n] T (one split)
    float* partial;         // [splits, m, n] fp32 (several splits)
    int m, n, k;
};

// One warp computes R consecutive output rows for MT rows of x at a time (looping over m in
// steps of MT), over the k-slice blockIdx.y. Lane l takes the slice's chunks l, l + 32, ...: a
// chunk is 16 bytes of each of the R rows (16 int8 or 32 int4 weights), dequantised in
// registers and multiplied with the matching activations, which are loaded once per 8 elements
// and reused for all R rows. INT4 sums each chunk (inside one group) before applying its scale;
// INT8 applies the row scale once at the end.
template <bool kInt4, typename T, int R, int MT, bool kVecX>
__global__ void __launch_bounds__(kWarps * 32) gemv_kernel(const GemvArgs a) {
    constexpr int kElems = kInt4 ? 32 : 16;  // weights per chunk
    constexpr int kSubs = kElems / 8;        // 8-element sub-blocks per chunk
    const int lane = threadIdx.x & 31;
    const int row0 = (blockIdx.x * kWarps + (threadIdx.x >> 5)) * R;
    if (row0 >= a.n) return;  // whole warps only: no block-level synchronisation below

    const T* x = static_cast<const T*>(a.x);
    const int c_begin = blockIdx.y * a.chunks_per_split;
    const int c_end = min(a.chunks, c_begin + a.chunks_per_split);
    const uint8_t* wrow[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
        wrow[r] = a.w + static_cast<std::size_t>(min(row0 + r, a.n - 1)) * a.row_bytes;

    for (int m0 = 0; m0 < a.m; m0 += MT) {
        float acc[R][MT];
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int i = 0; i < MT; ++i)
                acc[r][i] = 0.0f;

        int c = c_begin + lane;
        uint4 cur[R];
        if (c < c_end) {
#pragma unroll
            for (int r = 0; r < R; ++r)
                cur[r] = load_weights(wrow[r] + std::size_t(c) * kChunkBytes);
        }
        for (; c < c_end; c += 32) {
            // Issue the next chunk's loads before this chunk's arithmetic.
            uint4 next[R];
            const int cn = c + 32;
            if (cn < c_end) {
#pragma unroll
                for (int r = 0; r < R; ++r)
                    next[r] = load_weights(wrow[r] + std::size_t(cn) * kChunkBytes);
            }
            float part[R][MT];
#pragma unroll
            for (int r = 0; r < R; ++r)
#pragma unroll
                for (int i = 0; i < MT; ++i)
                    part[r][i] = 0.0f;
#pragma unroll
            for (int s = 0; s < kSubs; ++s) {
                const int k0 = c * kElems + s * 8;
                if (k0 >= a.k) break;  // padding: weights are zero there, x does not exist
                float wf[R][8];
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    if constexpr (kInt4) {
                        int4x8_to_float(word_of(cur[r], s), wf[r]);
                    } else {
                        int8x4_to_float(word_of(cur[r], 2 * s), wf[r]);
                        int8x4_to_float(word_of(cur[r], 2 * s + 1), wf[r] + 4);
                    }
                }
#pragma unroll
                for (int i = 0; i < MT; ++i) {
                    if (m0 + i < a.m) {
                        float xf[8];
                        load_x8<T, kVecX>(x + std::size_t(m0 + i) * a.k, k0, a.k, xf);
#pragma unroll
                        for (int r = 0; r < R; ++r)
#pragma unroll
                            for (int e = 0; e < 8; ++e)
                                part[r][i] = fmaf(wf[r][e], xf[e], part[r][i]);
                    }
                }
            }
#pragma unroll
            for (int r = 0; r < R; ++r) {
                if constexpr (kInt4) {
                    const int row = min(row0 + r, a.n - 1);
                    const float scale =
                        __half2float(a.scales[std::size_t(row) * a.groups + c / a.group_chunks]);
#pragma unroll
                    for (int i = 0; i < MT; ++i)
                        acc[r][i] = fmaf(scale, part[r][i], acc[r][i]);
                } else {
#pragma unroll
                    for (int i = 0; i < MT; ++i)
                        acc[r][i] += part[r][i];
                }
            }
            if (cn < c_end) {
#pragma unroll
                for (int r = 0; r < R; ++r)
                    cur[r] = next[r];
            }
        }

#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int off = 16; off > 0; off >>= 1)
                    acc[r][i] += __shfl_xor_sync(0xffffffffu, acc[r][i], off);

                    // Each lane writes some of the R × MT results (all lanes hold every sum).
#pragma unroll
        for (int r = 0; r < R; ++r) {
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                const int row = row0 + r, mrow = m0 + i;
                if (lane != (r * MT + i) % 32 || row >= a.n || mrow >= a.m) continue;
                float v = acc[r][i];
                if constexpr (!kInt4) v *= __half2float(a.scales[row]);
                if (gridDim.y == 1) {
                    static_cast<T*>(a.y)[std::size_t(mrow) * a.n + row] = Act<T>::narrow(v);
                } else {
                    a.partial[(std::size_t(blockIdx.y) * a.m + mrow) * a.n + row] = v;
                }
            }
        }
    }
}

// y = Σ over the splits of the partial sums, in a fixed order (deterministic results).
template <typename T>
__global__ void sum_splits_kernel(const float* partial, T* y, int splits, std::size_t count) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        float s = 0.0f;
        for (int p = 0; p < splits; ++p)
            s += partial[std::size_t(p) * count + i];
        y[i] = Act<T>::narrow(s);
    }
}

// ---- Dequantisation (prefill) -----------------------------------------------------------------

// Rows [row_begin, row_begin + rows) of the weight as T into out [rows, k_padded] (row stride
// k_padded elements, a multiple of 16, so every store is 16-byte aligned). One thread per
// 16-byte chunk.
template <bool kInt4, typename T>
__global__ void dequantize_kernel(GemvArgs a, int k_padded, int row_begin, int rows, T* out) {
    constexpr int kElems = kInt4 ? 32 : 16;
    const std::size_t total = std::size_t(rows) * a.chunks;
    for (std::size_t idx = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; idx < total;
         idx += std::size_t(gridDim.x) * blockDim.x) {
        const int r = static_cast<int>(idx / a.chunks);
        const int c = static_cast<int>(idx % a.chunks);
        const int row = row_begin + r;
        const uint4 v = load_weights(a.w + std::size_t(row) * a.row_bytes + std::size_t(c) * 16);
        const float scale = __half2float(
            kInt4 ? a.scales[std::size_t(row) * a.groups + c / a.group_chunks] : a.scales[row]);
        float f[kElems];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            if constexpr (kInt4)
                int4x8_to_float(word_of(v, j), f + 8 * j);
            else
                int8x4_to_float(word_of(v, j), f + 4 * j);
        }
        uint4* dst =
            reinterpret_cast<uint4*>(out + std::size_t(r) * k_padded + std::size_t(c) * kElems);
#pragma unroll
        for (int j = 0; j < kElems / 8; ++j) {
            uint4 o;
            o.x = Act<T>::narrow2(f[8 * j + 0] * scale, f[8 * j + 1] * scale);
            o.y = Act<T>::narrow2(f[8 * j + 2] * scale, f[8 * j + 3] * scale);
            o.z = Act<T>::narrow2(f[8 * j + 4] * scale, f[8 * j + 5] * scale);
            o.w = Act<T>::narrow2(f[8 * j + 6] * scale, f[8 * j + 7] * scale);
            dst[j] = o;
        }
    }
}

// Tile of x rows per pass (MT) and output rows per warp (R) for m rows of x. R rows share each
// activation load; MT rows of x share each weight load; their product bounds the registers.
struct GemvShape {
    int mt, r;
};
inline GemvShape gemv_shape(int m) {
    if (m <= 1) return {1, 4};
    if (m == 2) return {2, 4};
    if (m <= 4) return {4, 4};
    return {8, 2};
}

// k-slices for a layer of n rows, so that about 16 warps per multiprocessor have work (enough
// loads in flight to cover memory latency), each slice keeping >= 2 chunks per lane, and the
// partial sums fitting in `workspace_bytes`.
inline int split_count(int n, int m, int r, int chunks, int sm_count, std::size_t workspace_bytes) {
    const long warps = (static_cast<long>(n) + r - 1) / r;
    const long target = 16L * sm_count;
    long split = warps >= target ? 1 : (target + warps - 1) / warps;
    split = std::min<long>({split, std::max(1, chunks / 64), 32});
    const std::size_t per_split = static_cast<std::size_t>(m) * n * sizeof(float);
    if (split > 1) split = std::min<long>(split, static_cast<long>(workspace_bytes / per_split));
    return static_cast<int>(std::max<long>(split, 1));
}

}  // namespace mtdesk::cuda::detail
