#pragma once
// The kernels of linear_cuda.cu and the launch-shape rules they are tuned with: weight-only
// GEMV (INT8/INT4 decode), the split-K sum (alone, or fused with SwiGLU or with the residual add
// and RMSNorm that follow a layer), and dequantisation to 16-bit (INT8/INT4 prefill).
// Private to linear_cuda.cu; a separate header so that the kernels can also be run by the
// host-side emulation (host_emulation.h, MTDESK_CUDA_HOST_EMULATION) to check them without a GPU.
//
// Device layouts are those documented in linear_cuda.h.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cuda/launch_cuda.cuh"  // with MTDESK_CUDA_HOST_EMULATION, also the emulation
// (first: the emulation's built-ins must precede the helpers below)
#include "cuda/async_copy_cuda.cuh"
#include "cuda/dtype_cuda.cuh"

namespace mtdesk::cuda::detail {

// ---- Device helpers ---------------------------------------------------------------------------

constexpr int kWarps = 4;        // warps per block of the GEMV kernels
constexpr int kChunkBytes = 16;  // one 128-bit weight load per lane and row
// Warps per multiprocessor that one wave of the GEMVs fills (the split-K and shape rules aim at
// it; the kernels' registers allow 16 resident).
constexpr long kWaveWarpsPerSm = 16;

// Weights are streamed once per call: read-only path, not kept in L1 (x lives there).
// volatile: a plain asm counts as a pure function of its operands, which the compiler may
// hoist out of the branch that guards it (it did: gemv_kernel's reload for the next tile of x
// rows became an unconditional load past the end of the last row, a fault when nothing is
// mapped there, and a wasted load when something is).
__device__ __forceinline__ uint4 load_weights(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
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

// INT4 nibble order on the device (linear_cuda.h): element e of each 8-element group of a row
// sits at nibble e / 2 + 4 (e % 2) of its little-endian 32-bit word, i.e. nibble p holds element
// int4_element(p). A shift and a mask bring nibbles p and p + 4 into the two halves of a 16-bit
// pair, and in this order they are the adjacent elements 2p and 2p + 1: the tensor-core
// kernels' fragments then take x in its own order (with nibble e = element e, as the CPU packs
// them, every pair of x needed a byte permute).
__host__ __device__ constexpr int int4_element(int nibble) {
    return 2 * (nibble & 3) + (nibble >> 2);
}
/// A word of eight INT4 codes in the CPU packing (nibble e = element e) in the device order.
__host__ __device__ constexpr uint32_t int4_device_word(uint32_t cpu) {
    uint32_t out = 0;
    for (int p = 0; p < 8; ++p)
        out |= ((cpu >> (4 * int4_element(p))) & 0xFu) << (4 * p);
    return out;
}

// Eight int4 (one word, device order) -> the eight elements as floats.
__device__ __forceinline__ void int4x8_to_float(uint32_t w, float* f) {
    const uint32_t even = (w & 0x0F0F0F0Fu) ^ 0x08080808u;        // nibbles 0, 2, 4, 6
    const uint32_t odd = ((w >> 4) & 0x0F0F0F0Fu) ^ 0x08080808u;  // nibbles 1, 3, 5, 7
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        f[int4_element(2 * i)] = biased_byte(even, i, 8388616.0f);  // 2^23 + 8
        f[int4_element(2 * i + 1)] = biased_byte(odd, i, 8388616.0f);
    }
}

// The GEMV's INT8 dequantisation (one PRMT per weight, no FADD): byte q -> the float
// 32896 + q exactly (kInt8Offset + q). The biased byte u = q + 128 goes into bits 8..15 under
// the bits of 32768.0f (0x47000000), whose mantissa step at that place is 1; the caller removes
// the offset once per chunk with the chunk's sum of x, as for INT4 below. The fp32 sums run
// ~2^8 times larger than sum q x, which leaves ~2^-13 of relative precision per chunk, an
// order of magnitude below the bf16 / fp16 rounding of y.
constexpr float kInt8Offset = 32896.0f;
__device__ __forceinline__ void int8x4_to_offset_float(uint32_t w, float* f) {
    const uint32_t u = w ^ 0x80808080u;
#pragma unroll
    for (int i = 0; i < 4; ++i)
        f[i] = __uint_as_float(__byte_perm(u, 0x47000000u, 0x7404u | (i << 4)));
}

// The GEMV's INT4 dequantisation (one PRMT per weight, no FADD): element q -> the float
// 136 + q exactly (kInt4Offset + q). The biased nibble u = q + 8 goes into bits 16..19 under
// the bits of 128.0f (0x43000000), whose mantissa step at that place is 1. The caller removes
// the offset once per chunk: sum (136 + q) x = sum q x + 136 sum x. The products stay exact
// (8-bit values times 16-bit activations); the fp32 sums run ~30x larger than sum q x, which
// costs ~5 of fp32's 24 bits, far below the bf16 / fp16 rounding of y.
constexpr float kInt4Offset = 136.0f;

// Any function of three words, bit by bit, in one LOP3: kLut is its truth table, bit
// 4a + 2b + c of it the result for input bits a, b, c (PTX ISA, lop3). With the constants in
// registers (set once, outside the loops): the compiler splits (a & imm) ^ imm into two, as a
// LOP3 holds one immediate.
template <unsigned kLut>
__device__ __forceinline__ uint32_t lop3(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__)
    uint32_t d;
    asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(kLut));
    return d;
#else
    uint32_t d = 0;
    for (int i = 0; i < 8; ++i)
        if ((kLut >> i) & 1u) d |= (i & 4 ? a : ~a) & (i & 2 ? b : ~b) & (i & 1 ? c : ~c);
    return d;
#endif
}
// (a & b) ^ c.
__device__ __forceinline__ uint32_t and_xor(uint32_t a, uint32_t b, uint32_t c) {
    return lop3<0x6A>(a, b, c);
}

__device__ __forceinline__ void int4x8_to_offset_float(uint32_t w, float* f) {
    const uint32_t even = and_xor(w, 0x0F0F0F0Fu, 0x08080808u);      // nibbles 0, 2, 4, 6
    const uint32_t odd = and_xor(w >> 4, 0x0F0F0F0Fu, 0x08080808u);  // nibbles 1, 3, 5, 7
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        f[int4_element(2 * i)] =
            __uint_as_float(__byte_perm(even, 0x43000000u, 0x7044u | (i << 8)));
        f[int4_element(2 * i + 1)] =
            __uint_as_float(__byte_perm(odd, 0x43000000u, 0x7044u | (i << 8)));
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

/// Weight kinds of the GEMV kernels: INT8 (W8A16) and INT4 (W4A16) codes, and 16-bit weights
/// of the activations' own type (BF16 / FP16 tiers, SIMT kernel only).
enum class WKind { Int8, Int4, F16 };

/// Weights per 16-byte chunk.
template <WKind K>
constexpr int kChunkElems = K == WKind::Int4   ? 32
                            : K == WKind::Int8 ? 16
                                               : 8;

struct GemvArgs {
    const uint8_t* w;       // device layout of DeviceLinear
    const __half* scales;   // INT8: [n]; INT4: [n, groups]
    std::size_t row_bytes;  // bytes per weight row
    int groups;             // INT4 scales per row
    int group_chunks;       // INT4: 16-byte chunks per group
    int group_step;         // INT4: 32 / group_chunks where that divides evenly, else 0
    int chunks;             // 16-byte chunks per row
    int chunks_per_split;   // chunks of one split-K slice
    const void* x;          // [m, k] T
    void* y;                // [m, n] T
    float* partial;         // [splits, m, n] fp32 (several splits)
    void* act;              // one split: SwiGLU of row pairs (2j, 2j + 1) into act [m, n / 2]
                            // T instead of y (null: y); n and the rows per warp even
    int m, n, k;
};

/// GemvArgs::group_step for INT4 groups of `group_chunks` chunks.
inline int gemv_group_step(int group_chunks) {
    return 32 % group_chunks == 0 ? 32 / group_chunks : 0;
}

/// One GEMV result: y directly (one split) or the split's partial sum.
template <typename T>
__device__ __forceinline__ void store_result(const GemvArgs& a, int mrow, int row, float v) {
    if (gridDim.y == 1)
        static_cast<T*>(a.y)[std::size_t(mrow) * a.n + row] = Act<T>::narrow(v);
    else
        a.partial[(std::size_t(blockIdx.y) * a.m + mrow) * a.n + row] = v;
}

// One warp computes R consecutive output rows for MT rows of x at a time (looping over m in
// steps of MT), over the k-slice blockIdx.y. Lane l takes the slice's chunks l, l + 32, ...: a
// chunk is 16 bytes of each of the R rows (16 int8 or 32 int4 weights), dequantised in
// registers and multiplied with the matching activations, which are loaded once per 8 elements
// and reused for all R rows. INT weights are dequantised with an offset (int4x8_to_offset_float,
// int8x4_to_offset_float), which each chunk's sum loses again with the chunk's sum of x; INT4
// then applies the chunk's group scale, INT8 the row scale once at the end; 16-bit weights (8
// per chunk) are only widened. Weight rows must hold whole 16-byte chunks (padded INT rows do;
// 16-bit rows need k % 8 == 0). The first chunks are loaded before pdl_wait(): weights do not
// depend on the kernel before.
template <WKind K, typename T, int R, int MT, bool kVecX>
__global__ void __launch_bounds__(kWarps * 32) gemv_kernel(const GemvArgs a) {
    constexpr int kElems = kChunkElems<K>;
    constexpr int kSubs = kElems / 8;  // 8-element sub-blocks per chunk
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
    const __half* srow[R];  // INT4: each row's group scales
#pragma unroll
    for (int r = 0; r < R; ++r)
        srow[r] =
            a.scales + (K == WKind::Int4 ? std::size_t(min(row0 + r, a.n - 1)) * a.groups : 0);
    uint4 cur[R];
    auto load_first = [&] {
        if (c_begin + lane < c_end) {
#pragma unroll
            for (int r = 0; r < R; ++r)
                cur[r] = load_weights(wrow[r] + std::size_t(c_begin + lane) * kChunkBytes);
        }
    };
    load_first();
    pdl_wait();
    pdl_launch_dependents();

    for (int m0 = 0; m0 < a.m; m0 += MT) {
        if (m0 > 0) load_first();
        float acc[R][MT];
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int i = 0; i < MT; ++i)
                acc[r][i] = 0.0f;

        // INT4: the group of chunk c, c / group_chunks, stepped where group_chunks divides 32
        // (one division per pass instead of one per chunk).
        int g = K == WKind::Int4 ? (c_begin + lane) / a.group_chunks : 0;
        for (int c = c_begin + lane; c < c_end; c += 32) {
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
            float xsum[MT];  // INT: the chunk's sum of x per row of x (the offset weights)
#pragma unroll
            for (int i = 0; i < MT; ++i)
                xsum[i] = 0.0f;
#pragma unroll
            for (int s = 0; s < kSubs; ++s) {
                const int k0 = c * kElems + s * 8;
                if (k0 >= a.k) break;  // padding: weights are zero there, x does not exist
                float wf[R][8];
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    if constexpr (K == WKind::Int4) {
                        int4x8_to_offset_float(word_of(cur[r], s), wf[r]);
                    } else if constexpr (K == WKind::F16) {
#pragma unroll
                        for (int e = 0; e < 4; ++e)
                            Act<T>::widen2(word_of(cur[r], e), wf[r] + 2 * e);
                    } else {
                        int8x4_to_offset_float(word_of(cur[r], 2 * s), wf[r]);
                        int8x4_to_offset_float(word_of(cur[r], 2 * s + 1), wf[r] + 4);
                    }
                }
#pragma unroll
                for (int i = 0; i < MT; ++i) {
                    if (m0 + i < a.m) {
                        float xf[8];
                        load_x8<T, kVecX>(x + std::size_t(m0 + i) * a.k, k0, a.k, xf);
                        if constexpr (K != WKind::F16) {
#pragma unroll
                            for (int e = 0; e < 8; ++e)
                                xsum[i] += xf[e];
                        }
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
                if constexpr (K == WKind::Int4) {
                    const float scale = __half2float(srow[r][g]);
#pragma unroll
                    for (int i = 0; i < MT; ++i)
                        acc[r][i] = fmaf(scale, fmaf(-kInt4Offset, xsum[i], part[r][i]), acc[r][i]);
                } else if constexpr (K == WKind::Int8) {
#pragma unroll
                    for (int i = 0; i < MT; ++i)
                        acc[r][i] += fmaf(-kInt8Offset, xsum[i], part[r][i]);
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
            if constexpr (K == WKind::Int4)
                g = a.group_step > 0 ? g + a.group_step : cn / a.group_chunks;
        }

#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int off = 16; off > 0; off >>= 1)
                    acc[r][i] += __shfl_xor_sync(0xffffffffu, acc[r][i], off);

        // Each lane writes some of the R × MT results (all lanes hold every sum); INT8 applies
        // the row scale here.
        auto result = [&](int r, int i) {
            float v = acc[r][i];
            if constexpr (K == WKind::Int8) v *= __half2float(a.scales[row0 + r]);
            return v;
        };
        if (a.act == nullptr || gridDim.y > 1) {
#pragma unroll
            for (int r = 0; r < R; ++r) {
#pragma unroll
                for (int i = 0; i < MT; ++i) {
                    const int row = row0 + r, mrow = m0 + i;
                    if (lane != (r * MT + i) % 32 || row >= a.n || mrow >= a.m) continue;
                    store_result<T>(a, mrow, row, result(r, i));
                }
            }
        } else if constexpr (R % 2 == 0) {
            // SwiGLU of the gate / up pairs (rows 2j, 2j + 1: R and row0 are even), each first
            // rounded to T as y would be.
#pragma unroll
            for (int r = 0; r < R; r += 2) {
#pragma unroll
                for (int i = 0; i < MT; ++i) {
                    const int row = row0 + r, mrow = m0 + i;
                    if (lane != (r * MT + i) % 32 || row >= a.n || mrow >= a.m) continue;
                    static_cast<T*>(a.act)[std::size_t(mrow) * (a.n / 2) + row / 2] =
                        swiglu_of<T>(round_to<T>(result(r, i)), round_to<T>(result(r + 1, i)));
                }
            }
        }
    }
}

// ---- Tensor-core GEMV (decode, sm_80+) ------------------------------------------------------
//
// The same product for up to 64 rows of x with the multiply-adds on the tensor cores
// (mma.sync m16n8k16, 16-bit inputs, fp32 accumulators), so that the SIMT pipe only
// dequantises: a batch of 16 costs little more than a batch of 1. A warp owns kN tiles of 8
// weight rows.
//  - Up to 16 rows of x (one x tile, each warp loading its own x): the weights are the A
//    operand (tiles 2p and 2p + 1 are rows g and g + 8 of an m16 tile) and x the B operand (n8
//    tiles of x rows): no mma is spent on zero rows of x, and the sums a thread accumulates
//    belong to the weight rows it loads, so INT4 group scales apply to fp32 sums.
//  - 17 to 64 rows (kTiles tiles of 16 rows of x, staged in shared memory per block): the
//    weights, scaled, are the A operand again (tiles 2p and 2p + 1 rows 2g and 2g + 1 of 16, a
//    gate / up pair per thread), each A fragment serving all 2 · kTiles n8 tiles of x, whose B
//    fragments are one 16-byte shared-memory read each (as the A operand, x's fragments took
//    two rows' reads and register moves to assemble).
//
// A round is 64 bytes of each weight row: 128 INT4 or 64 INT8 weights. Thread (g = lane / 4,
// t = lane % 4) takes 16 of those bytes of row g of each of its tiles (through the shared-memory
// ring below) and turns them into fragments. An mma sums over its 16 k-slots in any order, so
// the k-slots are mapped to the weights each thread already holds and x is loaded with the same
// mapping (the idea of Marlin's fragment-matched layouts):
//  - INT4: word j of the 16 bytes holds elements e0..e7 in the device order (nibble p holds
//    int4_element(p), see there). A LOP3 with the bf16/fp16 "magic" exponent turns nibbles p
//    and p + 4 into a 16-bit pair 128 + u or 1024 + u (u = q + 8, exact) and an HSUB2 removes
//    the bias exactly (fp16 takes nibbles p + 1 and p + 5 at 16 u and an HFMA2 by 1/16, exact
//    too, as Marlin does): pairs (e0,e1), (e2,e3), (e4,e5), (e6,e7) of exact codes q. Step
//    2j + h takes pairs 2h and 2h + 1; x takes the same elements in its own order, as one
//    128-bit load of x[8j .. 8j + 7] holds them (the CPU packing, nibble e = element e, gave
//    pairs (e0,e4), ... and a byte permute of x per pair). A round lies inside one group
//    (group % 128 == 0). Up to 16 rows of x, the group scale multiplies the round's fp32
//    sums, and bf16 skips the HSUB2: the sums with 128 + u exceed those with q by 136 · Σx,
//    which one more mma per step (A = 136) gives and the round subtracts (5 of fp32's 24 bits lost
//    to the cancellation; fp16's 1024 would cost 8, so fp16 keeps the HSUB2). With more rows the
//    scale multiplies the A fragments (rounded to T, as the dequantise + cuBLAS path does), which
//    then serve all x tiles.
//  - INT8: word j holds four bytes; each becomes an exact fp32 (byte-permute trick above) and
//    two are packed into a 16-bit pair; step j takes (e0,e1), (e2,e3), as INT4 does; the row
//    scale is applied in fp32 at the end.

constexpr int kRoundBytes = 64;  // per weight row and round

// The mma and the INT4 dequantisation for 16-bit type T (bf16 or fp16): the same steps, with
// T's "magic" exponent (bf16 128.0, fp16 1024.0; the nibble u = q + 8 lands in the mantissa)
// and T's mma instruction.
template <typename T>
struct Mma {
    static constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
    using T2 = std::conditional_t<kBf16, __nv_bfloat162, __half2>;
    static constexpr uint32_t kMagic = kBf16 ? 0x43004300u : 0x64006400u;
    static constexpr uint32_t kBias = kMagic + 0x00080008u;  // magic + 8
    static constexpr uint32_t kSixteenth = 0x2C002C00u;      // fp16 1/16
    static constexpr uint32_t kHighBias = 0xD480D480u;       // fp16 -(1024 / 16 + 8) = -72

    static __device__ __forceinline__ T2 as_t2(uint32_t v) { return *reinterpret_cast<T2*>(&v); }
    static __device__ __forceinline__ uint32_t bits(T2 v) {
        return *reinterpret_cast<uint32_t*>(&v);
    }
    static __device__ __forceinline__ uint32_t pair(float v) {
        if constexpr (kBf16)
            return bits(__floats2bfloat162_rn(v, v));
        else
            return bits(__floats2half2_rn(v, v));
    }
    /// Eight INT4 codes (device order: nibbles p and p + 4 hold elements 2p and 2p + 1) -> the
    /// exact pairs (e0,e1), (e2,e3), (e4,e5), (e6,e7) as T.
    static __device__ __forceinline__ void dequant(uint32_t word, uint32_t* out) {
        if constexpr (kBf16) {
            // bf16's 7-bit mantissa holds a nibble only in its low bits: shift each pair there.
#pragma unroll
            for (int p = 0; p < 4; ++p)
                out[p] = bits(
                    __hsub2(as_t2(and_xor(word >> (4 * p), 0x000F000Fu, kBias)), as_t2(kBias)));
        } else {
            constexpr uint32_t kHighMagic = 0x64806480u;  // magic, and 8 · 16 to bias the code
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const uint32_t v = word >> (8 * h);
                out[2 * h] = bits(__hsub2(as_t2(and_xor(v, 0x000F000Fu, kBias)), as_t2(kBias)));
                const T2 high = as_t2(and_xor(v, 0x00F000F0u, kHighMagic));
#if defined(__CUDA_ARCH__)
                out[2 * h + 1] = bits(__hfma2(high, as_t2(kSixteenth), as_t2(kHighBias)));
#else  // the host has no __hfma2; both steps are exact here
                out[2 * h + 1] = bits(__hadd2(__hmul2(high, as_t2(kSixteenth)), as_t2(kHighBias)));
#endif
            }
        }
    }
    /// Eight INT4 codes -> the pairs (e0,e1), (e2,e3), (e4,e5), (e6,e7) as magic + q + 8,
    /// exact in T; a sum of products with them exceeds the sum with q by (magic + 8) · Σx,
    /// which the caller subtracts. One shift and one LOP3 per pair: the mask takes the pair's
    /// nibbles, the XOR with magic + 8 sets the exponent and turns q into q + 8 (its top bit
    /// flipped).
    static __device__ __forceinline__ void biased(uint32_t word, uint32_t* out) {
#pragma unroll
        for (int p = 0; p < 4; ++p)
            out[p] = and_xor(word >> (4 * p), 0x000F000Fu, kBias);
    }
    static __device__ __forceinline__ uint32_t mul(uint32_t a, uint32_t b) {
        return bits(__hmul2(as_t2(a), as_t2(b)));
    }
    static __device__ __forceinline__ void mma(float* d, const uint32_t* a, const uint32_t* b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        if constexpr (kBf16)
            asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
                "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        else
            asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#elif defined(__CUDA_ARCH__)
        __trap();  // the host never launches this kernel below sm_80
#elif defined(MTDESK_CUDA_HOST_EMULATION)
        emulation::mma_m16n8k16<T>(d, a, b);
#endif
    }
};

/// The one-row GEMV's x made in its prologue (mma_gemv_row_kernel's kNormIn): x =
/// rms_norm(T(residual + delta)) with `weight` and `eps`, as add_rms_norm() would write it, for
/// k a multiple of 8 up to kNormInMaxK, 16-byte aligned pointers. Nothing is written back: the
/// caller adds delta to the residual later (linear_add_rms_norm's `pending`).
struct NormIn {
    const void* residual = nullptr;  // [k] T
    const void* delta = nullptr;     // [k] T
    const void* weight = nullptr;    // [k] T
    float eps = 0.0f;
};
/// Largest k the prologue takes (its chunks stay in registers: two of 8 elements a thread for
/// each of the two norm threads it stands for).
constexpr int kNormInMaxK = 4096;

struct MmaGemvArgs {
    GemvArgs g;
    int rounds;            // bytes per weight row / kRoundBytes, rounded up
    int rounds_per_split;  // rounds of one split-K slice
    int rounds_per_group;  // INT4: group / 128
};

/// Where the 16-byte chunk c of the one-row GEMV's x lies in shared memory (kNormIn): within
/// its aligned group of 8 chunks, swizzled so that the 8 lanes of a quarter-warp, which read
/// chunks 16 g + 4 t + j (one j at a time), meet 8 different bank groups.
__device__ __forceinline__ int norm_in_slot(int c) {
    return c ^ ((c >> 3) & 7);
}

/// mma_gemv_row_kernel's kNormIn prologue, after pdl_wait() and run by every thread of the
/// block: s_x[norm_in_slot(c)] = chunk c of rms_norm(T(residual + delta)) · weight, the bits
/// of rms_norm_vec_kernel (rms_norm_cuda.cu). That kernel's kRmsNormThreads threads each take
/// the chunks c = thread + i · kRmsNormThreads and sum their squares in that order before
/// block_sum(); here thread t stands for norm threads t and t + 128 and forms the same eight
/// warp sums, then block_sum()'s last step over them.
template <typename T>
__device__ __forceinline__ void norm_in_prologue(const NormIn& ni, int k, uint4* s_x) {
    constexpr int kThreads = kWarps * 32;
    static_assert(kRmsNormThreads == 2 * kThreads, "each thread stands for two norm threads");
    constexpr int kV = kNormInMaxK / 8 / kRmsNormThreads;  // chunks per norm thread, at most
    const int chunks = k / 8;
    const uint4* xr = static_cast<const uint4*>(ni.residual);
    const uint4* dr = static_cast<const uint4*>(ni.delta);
    const uint4* wr = static_cast<const uint4*>(ni.weight);
    uint4 xv[2][kV] = {}, dv[2][kV] = {}, wv[2][kV] = {};
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int i = 0; i < kV; ++i) {
            const int c = threadIdx.x + h * kThreads + i * kRmsNormThreads;
            if (c < chunks) {
                xv[h][i] = xr[c];
                dv[h][i] = dr[c];
                wv[h][i] = __ldg(wr + c);
            }
        }
    float v[2][kV][8];
    float ss[2] = {0.0f, 0.0f};
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int i = 0; i < kV; ++i) {
            const int c = threadIdx.x + h * kThreads + i * kRmsNormThreads;
            const T* xe = reinterpret_cast<const T*>(&xv[h][i]);
            const T* de = reinterpret_cast<const T*>(&dv[h][i]);
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                v[h][i][e] = round_to<T>(to_f32(xe[e]) + to_f32(de[e]));
                if (c < chunks) ss[h] += v[h][i][e] * v[h][i][e];
            }
        }
    // block_sum() of the norm's 8 warps: warp w's sum is this block's warp w % 4, half w / 4.
    __shared__ float partial[8];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const float s0 = warp_sum(ss[0]), s1 = warp_sum(ss[1]);
    if (lane == 0) {
        partial[warp] = s0;
        partial[warp + kWarps] = s1;
    }
    __syncthreads();
    const float total = warp_sum(lane < 2 * kWarps ? partial[lane] : 0.0f);
    const float inv = rsqrtf(total / static_cast<float>(k) + ni.eps);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int i = 0; i < kV; ++i) {
            const int c = threadIdx.x + h * kThreads + i * kRmsNormThreads;
            if (c >= chunks) continue;
            const T* we = reinterpret_cast<const T*>(&wv[h][i]);
            uint4 o;
            T* oe = reinterpret_cast<T*>(&o);
#pragma unroll
            for (int e = 0; e < 8; ++e)
                oe[e] = from_f32<T>(to_f32(we[e]) * round_to<T>(v[h][i][e] * inv));
            s_x[norm_in_slot(c)] = o;
        }
    __syncthreads();
}

// Weight rows per warp of the tensor-core GEMV for kN tiles.
template <int kN>
constexpr int kMmaWarpRows = 8 * kN;

/// Shared memory of mma_gemv_kernel (its dynamic shared memory, bytes()): per thread, a ring of
/// kStages slots, each one round's kN 16-byte weight chunks, indexed [slot][tile][thread] so
/// that a warp's accesses are consecutive; for INT4 a ring of the rounds' group scales, one
/// 4-byte word per thread and slot ([slot][warp][row g][tile], see mma_gemv_kernel); then,
/// with kSmemX, two buffers of staged x (rows of kRoundK elements, chunks swizzled: x_slot).
template <WKind K, int kTiles, int kN, bool kSmemX, int kStages>
struct MmaSmem {
    static constexpr int kThreads = kWarps * 32;
    static constexpr int kRoundK = 4 * kChunkElems<K>;  // k elements of a round
    static constexpr int kXStride = kRoundK * 2;        // bytes per staged row
    static constexpr std::size_t kXBytes = kSmemX ? std::size_t(16) * kTiles * kXStride : 0;
    static constexpr std::size_t kWeightBytes = std::size_t(kStages) * kN * kThreads * 16;
    static constexpr std::size_t kScaleBytes =
        K == WKind::Int4 ? std::size_t(kStages) * kThreads * 4 : 0;
    /// 16-byte slot of chunk c (x[8c .. 8c + 7] of the round) in staged row r: an XOR swizzle
    /// that keeps both the staging copies (8 consecutive chunks of one row per quarter-warp)
    /// and the fragment reads (chunks kBlocks8 · t + j of rows g and g + 1, t = 0..3) on 8
    /// different 16-byte bank groups. Rows are 128 (INT8) or 256 bytes (INT4): the group is
    /// the slot mod 8.
    static __device__ __forceinline__ int x_slot(int c, int r) {
        return c ^ (r & 1) ^ (K == WKind::Int4 ? (c >> 2) & 2 : 0);
    }
    static constexpr std::size_t bytes() { return kWeightBytes + kScaleBytes + 2 * kXBytes; }
};

/// Rounds of weights the tensor-core GEMV keeps in flight per thread, plus the one it works on
/// (the copies go to shared memory, so the loads in flight do not cost registers): three with
/// one x tile, where six blocks share a multiprocessor, four with x staged in shared memory.
template <int kTiles>
constexpr int kMmaStages = kTiles == 1 ? 3 : 4;
/// Blocks of the tensor-core GEMV resident per multiprocessor that its registers are held to:
/// with one x tile, five up to 8 rows and four up to 16 (its stalls are latency, hidden by more
/// warps; fewer registers than that spill).
template <int kTiles, bool kUpper>
constexpr int kMmaMinBlocks = kTiles > 1 ? 1
                              : kUpper   ? 4
                                         : 5;

// grid (ceil(n / (4 · 8 · kN)), splits), 4 warps of kN weight tiles each, MmaSmem::bytes() of
// dynamic shared memory. kUpper: x rows 8..15 of a tile exist (m > 8): with one x tile, a
// second n8 tile of x; with several, the upper halves of the A fragments.
//
// Weights (and INT4 scales) stream through a per-thread ring in shared memory: each thread
// copies with cp.async exactly the 16-byte chunks it later turns into fragments, kStages - 1
// rounds ahead of the one it works on, so no barrier is needed for them and a thread keeps
// (kStages - 1) · kN · 16 bytes in flight without holding them in registers (the idea of
// Marlin's multi-stage pipeline, per thread). The first rounds are requested before
// pdl_wait(): weights do not depend on the kernel before.
//
// kSmemX: the block stages each round's x (16 · kTiles rows) in shared memory with cp.async,
// double-buffered, and its four warps read their A fragments there: x is fetched from L2 once
// per block instead of once per warp (with many rows, x, not the weights, was the traffic that
// bound the kernel). Chunks sit in their row at MmaSmem::x_slot, an XOR swizzle under which
// neither the copies nor the reads of a quarter-warp meet in a bank (the copies had been
// scattered over the row to make the reads conflict-free: Nsight Compute counted 8× the
// ideal shared-memory wavefronts for them).
template <WKind K, typename T, int kTiles, int kN, bool kUpper, bool kSmemX, int kStages>
__global__ void __launch_bounds__(kWarps * 32, kMmaMinBlocks<kTiles, kUpper>)
    mma_gemv_kernel(const MmaGemvArgs ma) {
    using Smem = MmaSmem<K, kTiles, kN, kSmemX, kStages>;
    static_assert(!kSmemX || kStages >= 3, "x and weight copy groups interleave: see the waits");
    static_assert(kSmemX || kTiles == 1, "several x tiles are staged in shared memory");
    constexpr bool kInt4 = K == WKind::Int4;
    constexpr int kPerThread = kChunkElems<K>;  // k elements of one thread in a round
    constexpr int kBlocks8 = kPerThread / 8;    // its 8-element blocks
    constexpr int kRoundK = Smem::kRoundK;
    constexpr int kXStride = Smem::kXStride;
    constexpr int kXRows = 16 * kTiles;
    constexpr int kThreads = Smem::kThreads;
    constexpr int kAhead = kStages - 1;
    // INT4 with one x tile scales the round's fp32 sums; with several, the B fragments.
    constexpr bool kScaleSums = kInt4 && kTiles == 1;
    // ... and for bf16 leaves the dequantised weights biased (fp16's magic, 1024, would cost too
    // much of the fp32 sums' precision: 8 bits, against bf16's 5).
    constexpr bool kBiasedW = kScaleSums && Mma<T>::kBf16;
    // x tiles of 8 rows (one x tile as the B operand: up to 16 rows, kUpper from 9).
    constexpr int kXTiles = kUpper ? 2 : 1;
    static_assert(kTiles > 1 || kN % 2 == 0, "weight tiles pair up into m16 tiles");
    MTDESK_DYNAMIC_SHARED(unsigned char, smem);
    const int tid = threadIdx.x;
    // This thread's slots: weights [kStages][kN][kThreads] 16 bytes; scales [kStages][kThreads]
    // words.
    uint4* const wring = reinterpret_cast<uint4*>(smem) + tid;
    uint32_t* const sring = reinterpret_cast<uint32_t*>(smem + Smem::kWeightBytes);
    unsigned char* const xs = smem + Smem::kWeightBytes + Smem::kScaleBytes;  // [2][kXBytes]

    const GemvArgs& a = ma.g;
    const int lane = tid & 31;
    const int g = lane >> 2, t = lane & 3;
    const int n0 = (blockIdx.x * kWarps + (tid >> 5)) * kMmaWarpRows<kN>;
    // Whole warps only. With kSmemX every warp stages x and meets the barriers; a warp past n
    // computes on clamped rows and stores nothing.
    if (!kSmemX && n0 >= a.n) return;
    const T* x = static_cast<const T*>(a.x);
    const int r_begin = blockIdx.y * ma.rounds_per_split;
    const int r_end = min(ma.rounds, r_begin + ma.rounds_per_split);

    // Copy sources of the next round to issue, advanced round by round (no division in the
    // loop): this thread's 16 bytes of row g of each tile, and (INT4) the 4-byte aligned word
    // holding the round's group scale of row g of tile t (the scale array is allocated with
    // room for the word past its last element): one copy per thread and round, and the four
    // words a thread needs, row g of tiles 0..3, sit together for one 16-byte read. `high`:
    // bit i set when tile i's scale is the upper half of its word in the round being consumed.
    static_assert(!kInt4 || kN == 4, "lane t of a row copies tile t's scale");
    const uint8_t* wsrc[kN];
    const __half* ssrc = nullptr;
    uint32_t high = 0;
    const int rpg = ma.rounds_per_group;
    int issue_group = r_begin / rpg, issue_in_group = r_begin % rpg;
    int use_in_group = issue_in_group;
    // Weight row of this thread's row g of tile i: with one x tile, tiles are 8 consecutive rows
    // (tiles 2p, 2p + 1 the halves of m16 tile p); with several, tiles 2p and 2p + 1 take rows 2g
    // and 2g + 1 of the warp's 16 rows from 16p, so that a thread holds both rows of each gate /
    // up pair (2j, 2j + 1) for SwiGLU in the store.
    auto row_of = [&](int i) {
        return kTiles == 1 ? n0 + 8 * i + g : n0 + 16 * (i / 2) + 2 * g + i % 2;
    };
#pragma unroll
    for (int i = 0; i < kN; ++i) {
        const int row = min(row_of(i), a.n - 1);
        wsrc[i] = a.w + std::size_t(row) * a.row_bytes + t * kChunkBytes +
                  std::size_t(r_begin) * kRoundBytes;
        const __half* s = a.scales + std::size_t(row) * a.groups + issue_group;
        if (reinterpret_cast<std::uintptr_t>(s) & 2) high |= 1u << i;
        if (i == t) ssrc = s;
    }
    int issue_round = r_begin, issue_slot = 0;
    // Copies the next round's weights (and scales) into its slot and closes the group; past
    // the slice an empty group, so that every iteration waits for the same count.
    auto issue = [&] {
        if (issue_round < r_end) {
            // INT8 rows end at a 16-byte chunk that may not fill the last round.
            const bool ok = kInt4 || issue_round * 4 + t < a.chunks;
#pragma unroll
            for (int i = 0; i < kN; ++i)
                cp_async_16(wring + (issue_slot * kN + i) * kThreads, wsrc[i], ok);
            if constexpr (kInt4)
                cp_async_4(sring + issue_slot * kThreads + tid,
                           reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(ssrc) &
                                                         ~std::uintptr_t(3)));
        }
        cp_async_commit();
        ++issue_round;
        issue_slot = issue_slot + 1 == kStages ? 0 : issue_slot + 1;
#pragma unroll
        for (int i = 0; i < kN; ++i)
            wsrc[i] += kRoundBytes;
        if (++issue_in_group == rpg) {
            issue_in_group = 0;
            ++ssrc;
        }
    };
    // Round r's x into buffer `buf`: zeros past m and past k (weights there are zero padding).
    // A thread stages the same 16-byte column c8 of rows row0, row0 + kRowStep, ... in every
    // round, so its sources, destinations and row checks are set up once.
    constexpr int kRowChunks = kRoundK / 8;  // 16-byte chunks of a staged row and round
    constexpr int kRowStep = kThreads / kRowChunks;
    constexpr int kStaged = kSmemX ? kXRows / kRowStep : 0;  // chunks per thread and round
    static_assert(!kSmemX || kXRows % kRowStep == 0, "whole staging passes");
    const int c8 = tid % kRowChunks, row0 = tid / kRowChunks;
    const T* const x_col = x + std::size_t(min(row0, a.m - 1)) * a.k + c8 * 8;
    unsigned char* const xs_col = xs + row0 * kXStride + Smem::x_slot(c8, row0) * 16;
    auto stage_x = [&](int r, int buf) {
        const bool in_k = r * kRoundK + c8 * 8 < a.k;
        const T* src = x_col + r * kRoundK;
#pragma unroll
        for (int i = 0; i < kStaged; ++i) {
            const bool ok = in_k && row0 + i * kRowStep < a.m;
            cp_async_16(xs_col + buf * Smem::kXBytes + i * kRowStep * kXStride,
                        ok ? src + std::size_t(i) * kRowStep * a.k : x, ok);
        }
        cp_async_commit();
    };

    // One x tile: [weight tile][0] (m16 tiles 2p, 2p + 1 with x's n8 tiles, see below); several:
    // [m16 weight tile p][n8 x tile].
    constexpr int kAccW = kTiles == 1 ? kN : kN / 2;
    constexpr int kAccX = kTiles == 1 ? 1 : 2 * kTiles;
    float acc[kAccW][kAccX][4];
#pragma unroll
    for (int i = 0; i < kAccW; ++i)
#pragma unroll
        for (int xt = 0; xt < kAccX; ++xt)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                acc[i][xt][e] = 0.0f;

    // Copy groups, oldest first: without kSmemX W(r_begin) .. W(r_begin + kStages - 2), then
    // per round W(r + kStages - 1); waiting until kStages - 1 are in flight completes W(r).
    // With kSmemX: W(r_begin) .. W(r_begin + kStages - 3), X(r_begin), W(r_begin + kStages - 2),
    // then per round X(r + 1), W(r + kStages - 1); waiting until 3 are in flight completes X(r)
    // and everything before it, W(r) included (kStages >= 3).
    for (int s = 0; s < (kSmemX ? kAhead - 1 : kAhead); ++s)
        issue();
    pdl_wait();
    pdl_launch_dependents();
    if constexpr (kSmemX) {
        stage_x(r_begin, 0);
        issue();
    }
    // Without kSmemX each thread loads the x it needs itself (rows g and g + 8 of the tile,
    // zeros past m and k), one round ahead into registers so that the loads' latency is hidden
    // behind a round of arithmetic.
    const T* xrow_lo = x + std::size_t(min(g, a.m - 1)) * a.k + t * kPerThread;
    const T* xrow_hi = x + std::size_t(min(g + 8, a.m - 1)) * a.k + t * kPerThread;
    const bool has_lo = g < a.m, has_hi = kUpper && g + 8 < a.m;
    uint4 xv[kSmemX ? 1 : kBlocks8][2];  // [block j][lower, upper rows]
    auto load_x = [&](int r) {
        if constexpr (!kSmemX) {
#pragma unroll
            for (int j = 0; j < kBlocks8; ++j) {
                const int k0 = r * kRoundK + t * kPerThread + 8 * j;
                const bool in_k = r < r_end && k0 < a.k;
                xv[j][0] =
                    has_lo && in_k
                        ? __ldg(reinterpret_cast<const uint4*>(xrow_lo + r * kRoundK + 8 * j))
                        : make_uint4(0, 0, 0, 0);
                xv[j][1] =
                    has_hi && in_k
                        ? __ldg(reinterpret_cast<const uint4*>(xrow_hi + r * kRoundK + 8 * j))
                        : make_uint4(0, 0, 0, 0);
            }
        }
    };
    load_x(r_begin);
    int slot = 0;
    for (int r = r_begin; r < r_end; ++r) {
        const int buf = (r - r_begin) & 1;
        if constexpr (kSmemX) {
            if (r + 1 < r_end)
                stage_x(r + 1, buf ^ 1);
            else
                cp_async_commit();
        }
        issue();  // into the slot of round r - 1, which this thread has used
        if constexpr (kSmemX) {
            cp_async_wait<3>();
            __syncthreads();  // round r's x is in place for every warp
        } else {
            cp_async_wait<kAhead>();
            // The round's scales were copied by other lanes: their copies complete before the
            // warp meets here.
            if constexpr (kInt4) __syncwarp();
        }
        uint4 wv[kN];
#pragma unroll
        for (int i = 0; i < kN; ++i)
            wv[i] = wring[(slot * kN + i) * kThreads];
        float sc[kN];     // INT4: this round's scale of row g of each tile
        uint32_t s2[kN];  // ... as a T pair, for scaling B fragments
        if constexpr (kInt4) {
            // Row g's words of tiles 0..3, copied by lanes 4g .. 4g + 3.
            const uint4 sw = *reinterpret_cast<const uint4*>(sring + slot * kThreads + (tid & ~3));
#pragma unroll
            for (int i = 0; i < kN; ++i) {
                const uint32_t word = (&sw.x)[i];
                sc[i] = __half2float(__ushort_as_half(
                    static_cast<unsigned short>((high >> i) & 1 ? word >> 16 : word)));
                if constexpr (!kScaleSums) s2[i] = Mma<T>::pair(sc[i]);
            }
            if (++use_in_group == rpg) {
                use_in_group = 0;
                // The next group's scale sits 2 bytes further: the other half of a word.
                high ^= (1u << kN) - 1;
            }
        }
        slot = slot + 1 == kStages ? 0 : slot + 1;

        // 8 activations of tile row g (+ 8 when upper) at this thread's block j of the round.
        auto x8 = [&](int tile, bool upper, int j) -> uint4 {
            if constexpr (kSmemX) {
                const int row = tile * 16 + g + (upper ? 8 : 0);
                return *reinterpret_cast<const uint4*>(xs + buf * Smem::kXBytes + row * kXStride +
                                                       Smem::x_slot(kBlocks8 * t + j, g) * 16);
            } else {
                return xv[j][upper ? 1 : 0];
            }
        };
        // Fragments of weight tile i for the two mma steps of block j (kBiasedW: biased by
        // magic + 8, see Mma::biased).
        auto w_frags = [&](int i, int j, uint32_t(&b)[2][2]) {
            if constexpr (kInt4) {
                uint32_t q[4];
                if constexpr (kBiasedW)
                    Mma<T>::biased(word_of(wv[i], j), q);
                else
                    Mma<T>::dequant(word_of(wv[i], j), q);
#pragma unroll
                for (int p = 0; p < 4; ++p)
                    b[p >> 1][p & 1] = kScaleSums ? q[p] : Mma<T>::mul(q[p], s2[i]);
            } else {
                float f[8];
                int8x4_to_float(word_of(wv[i], 2 * j), f);
                int8x4_to_float(word_of(wv[i], 2 * j + 1), f + 4);
                b[0][0] = Act<T>::narrow2(f[0], f[1]);
                b[0][1] = Act<T>::narrow2(f[2], f[3]);
                b[1][0] = Act<T>::narrow2(f[4], f[5]);
                b[1][1] = Act<T>::narrow2(f[6], f[7]);
            }
        };

        if constexpr (kTiles == 1) {
            // Up to 16 rows of x: the weights are the A operand (tiles i = 2p and 2p + 1 are
            // rows g and g + 8 of an m16 tile) and x the B operand (n8 tiles of x rows), so no
            // mma is spent on zero rows of x and each thread's sums belong to the weight rows
            // whose scales it holds. The B fragments of x for the whole round first (then the
            // next round's x is requested).
            uint32_t xb[kBlocks8][kXTiles][2][2];  // [block j][x tile][step][register]
#pragma unroll
            for (int j = 0; j < kBlocks8; ++j) {
#pragma unroll
                for (int xt = 0; xt < kXTiles; ++xt) {
                    // Pairs (x0,x1), (x2,x3) for step 2j; (x4,x5), (x6,x7) for step 2j + 1.
                    const uint4 v = x8(0, xt == 1, j);
                    xb[j][xt][0][0] = v.x;
                    xb[j][xt][0][1] = v.y;
                    xb[j][xt][1][0] = v.z;
                    xb[j][xt][1][1] = v.w;
                }
            }
            load_x(r + 1);
            // INT4: each m16 tile's round sums, scaled into acc at the end of the round.
            float part[kN / 2][kXTiles][4];
#pragma unroll
            for (int p = 0; p < kN / 2; ++p)
#pragma unroll
                for (int xt = 0; xt < kXTiles; ++xt)
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        part[p][xt][e] = 0.0f;
            // bf16 INT4: (magic + 8) · Σx of the round per x row, the bias of the A fragments.
            float bias[kXTiles][4] = {};
            if constexpr (kBiasedW) {
                const uint32_t c[4] = {Mma<T>::kBias, Mma<T>::kBias, Mma<T>::kBias, Mma<T>::kBias};
#pragma unroll
                for (int j = 0; j < kBlocks8; ++j)
#pragma unroll
                    for (int xt = 0; xt < kXTiles; ++xt) {
                        Mma<T>::mma(bias[xt], c, xb[j][xt][0]);
                        Mma<T>::mma(bias[xt], c, xb[j][xt][1]);
                    }
            }
#pragma unroll
            for (int j = 0; j < kBlocks8; ++j) {
#pragma unroll
                for (int p = 0; p < kN / 2; ++p) {
                    // A fragments of rows g (tile 2p) and g + 8 (tile 2p + 1) for both steps.
                    uint32_t lo[2][2], hi[2][2];
                    w_frags(2 * p, j, lo);
                    w_frags(2 * p + 1, j, hi);
                    uint32_t af[2][4];
#pragma unroll
                    for (int step = 0; step < 2; ++step) {
                        af[step][0] = lo[step][0];
                        af[step][1] = hi[step][0];
                        af[step][2] = lo[step][1];
                        af[step][3] = hi[step][1];
                    }
#pragma unroll
                    for (int xt = 0; xt < kXTiles; ++xt) {
                        float* d = kScaleSums ? part[p][xt] : acc[2 * p + xt][0];
                        Mma<T>::mma(d, af[0], xb[j][xt][0]);
                        Mma<T>::mma(d, af[1], xb[j][xt][1]);
                    }
                }
            }
            if constexpr (kScaleSums) {
#pragma unroll
                for (int p = 0; p < kN / 2; ++p)
#pragma unroll
                    for (int xt = 0; xt < kXTiles; ++xt)
#pragma unroll
                        for (int e = 0; e < 4; ++e)
                            acc[2 * p + xt][0][e] =
                                fmaf(part[p][xt][e] - bias[xt][e], sc[2 * p + (e >> 1)],
                                     acc[2 * p + xt][0][e]);
            }
        } else {
            // Several x tiles: the weights (scaled) are the A operand, weight tiles 2p and 2p + 1
            // the rows g and g + 8 of m16 tile p (weight rows 2g and 2g + 1 of its 16, see
            // row_of), and x the B operand, n8 tiles of x rows whose fragments are one 16-byte
            // read each; every A fragment serves all x tiles.
#pragma unroll
            for (int j = 0; j < kBlocks8; ++j) {
                uint32_t af[kN / 2][2][4];
#pragma unroll
                for (int p = 0; p < kN / 2; ++p) {
                    uint32_t lo[2][2], hi[2][2];
                    w_frags(2 * p, j, lo);
                    w_frags(2 * p + 1, j, hi);
#pragma unroll
                    for (int step = 0; step < 2; ++step) {
                        af[p][step][0] = lo[step][0];
                        af[p][step][1] = hi[step][0];
                        af[p][step][2] = lo[step][1];
                        af[p][step][3] = hi[step][1];
                    }
                }
#pragma unroll
                for (int xt = 0; xt < 2 * kTiles; ++xt) {
                    // Pairs (x0,x1), (x2,x3) for step 2j; (x4,x5), (x6,x7) for step 2j + 1.
                    const uint4 v = x8(xt / 2, xt % 2 == 1, j);
                    const uint32_t b0[2] = {v.x, v.y}, b1[2] = {v.z, v.w};
#pragma unroll
                    for (int p = 0; p < kN / 2; ++p) {
                        Mma<T>::mma(acc[p][xt], af[p][0], b0);
                        Mma<T>::mma(acc[p][xt], af[p][1], b1);
                    }
                }
            }
        }
        if constexpr (kSmemX)
            __syncthreads();  // buffer `buf` is refilled next round
        else if constexpr (kInt4)
            __syncwarp();  // ... and the scale slot: the other lanes have read it
    }

    if constexpr (kTiles == 1) {
        // Accumulator e of (m16 tile p, x tile xt), in acc[2p + xt]: weight row
        // n0 + 16p + g (+ 8 for e >= 2), x row 8xt + 2t + e % 2.
#pragma unroll
        for (int p = 0; p < kN / 2; ++p) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = n0 + 16 * p + g + 8 * h;
                if (row >= a.n) continue;
                const float rs = K == WKind::Int8 ? __half2float(a.scales[row]) : 1.0f;
#pragma unroll
                for (int xt = 0; xt < kXTiles; ++xt) {
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int mrow = 8 * xt + 2 * t + e;
                        if (mrow < a.m)
                            store_result<T>(a, mrow, row, acc[2 * p + xt][0][2 * h + e] * rs);
                    }
                }
            }
        }
    } else {
        // Accumulator e of (m16 weight tile p, x tile xt) is weight row n0 + 16p + 2g + e / 2
        // and x row 8xt + 2t + e % 2: a thread holds both rows of each pair (2j, 2j + 1), so at
        // one slice it can store SwiGLU of the gate / up pairs (each first rounded to T as y
        // would be), as the SIMT kernel does.
        const bool swiglu = a.act != nullptr && gridDim.y == 1;
#pragma unroll
        for (int p = 0; p < kN / 2; ++p) {
            const int r0 = n0 + 16 * p + 2 * g;
            float rs[2] = {1.0f, 1.0f};
            if constexpr (K == WKind::Int8) {
                rs[0] = __half2float(a.scales[min(r0, a.n - 1)]);
                rs[1] = __half2float(a.scales[min(r0 + 1, a.n - 1)]);
            }
#pragma unroll
            for (int xt = 0; xt < 2 * kTiles; ++xt) {
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int mrow = 8 * xt + 2 * t + h;
                    if (mrow >= a.m || r0 >= a.n) continue;
                    const float v0 = acc[p][xt][h] * rs[0];
                    const float v1 = acc[p][xt][2 + h] * rs[1];
                    if (swiglu) {
                        static_cast<T*>(a.act)[std::size_t(mrow) * (a.n / 2) + r0 / 2] =
                            swiglu_of<T>(round_to<T>(v0), round_to<T>(v1));
                        continue;
                    }
                    store_result<T>(a, mrow, r0, v0);
                    if (r0 + 1 < a.n) store_result<T>(a, mrow, r0 + 1, v1);
                }
            }
        }
    }
}

/// Output rows per warp of the one-row tensor-core GEMV: two per m16 tile.
template <int kP>
constexpr int kRowWarpRows = 2 * kP;
/// Bytes of each weight row per round of the one-row tensor-core GEMV: 8 segments of 64.
constexpr int kRowRoundBytes = 512;
/// Its shape as the engine runs it (bench_linear on an H200, µs at one row, against the SIMT
/// kernel's, which the layers ran before): m16 tiles per warp (2: four rows, the SIMT kernel's
/// split-K), rounds in flight beside the one in use (1; 3, 5 or 7 held more registers and
/// left fewer warps: 28672 × 4096 29–30 µs), and blocks per multiprocessor its registers are
/// held to (4, at most 128 registers: 16 warps; unbounded it takes 136, 12 warps, which is
/// faster on some one-wave layers and slower on the large ones, e.g. 4096 × 14336 15.5 µs
/// against 12.9).
constexpr int kRowTiles = 2;
constexpr int kRowDepth = 1;
/// A second shape for k-slices of up to kRowWholeRounds rounds in grids of one wave at
/// kRowWholeMinBlocks blocks per multiprocessor (166 registers): kRowWholeDepth rounds in flight,
/// so the whole slice is loaded before pdl_wait(), during the kernel before. 1.8B int4 batch 1
/// (its qkv, o and down slices are two rounds): 991-993 -> 1,023-1,028 tok/s; the 7B qkv's
/// four-round slices at this shape cost 1.5 % of a step (501-502 -> 494-496).
constexpr int kRowWholeRounds = 2;
constexpr int kRowWholeDepth = 3;
constexpr int kRowWholeMinBlocks = 3;
constexpr int kRowMinBlocks = 4;

// INT4 at one row of x on the tensor cores (sm_80+), the weights loaded straight into
// registers: grid (ceil(n / (4 · 2 · kP)), splits), 4 warps of kP m16 tiles each, no shared
// memory. The SIMT kernel spends ~30 instructions on every 8 weights, most of them on the
// integer pipe (a byte permute per weight); here 8 weights take one shift and one LOP3 per pair
// (Mma::biased) and an eighth of an mma. On the largest layers both kernels are then bound by
// the weight bytes their registers keep in flight more than by instructions (docs/benchmarks.md).
//
// Which k a fragment slot holds may differ per fragment row as long as B's column of the same
// index is built with the same mapping: D[i][i % 8] is then row i's sum, the other columns are
// discarded. So the 16 A rows of tile p are two weight rows in 8 segments each: A row g is
// segment g of weight row row0 + 2p, A row g + 8 the same segment of row row0 + 2p + 1, and
// thread (g, t), which builds B's column g from x itself, takes segment g's x. A round is 512
// bytes of each row (1024 weights); segment g is its bytes 64 g .. 64 g + 63, of which thread t
// loads 16 (word j: elements 8j .. 8j + 7, paired as Mma::biased pairs them). A warp's load is
// then 512 contiguous bytes of one row, as in the SIMT kernel, and a segment (128 weights) lies
// in one group (group % 128 == 0). The sums D[g][g] (thread (g, g / 2), accumulator g % 2, and
// + 2 for the second row) are scaled per round with the segment's group scale and summed over
// the warp at the end. bf16 leaves the weights biased by 136 and subtracts 136 · Σx, which one
// mma per step with A = 136 gives, column by column like the sums; fp16 removes the bias in the
// fragments (Mma::dequant). kD rounds are loaded ahead of the one in use (a ring of register
// sets, no copies); the first before pdl_wait(): weights do not depend on the kernel before.
// bench_linear on an H200, µs at one row, SIMT kernel → this one: 7B layers 28672 × 4096 22.3 →
// 22.4, 4096 × 14336 14.1 → 12.9, 6144 × 4096 7.4 → 7.2, 4096 × 4096 6.4 → 6.5; 1.8B layers
// 12288 × 2048 7.6 → 7.2, 2048 × 6144 5.5 → 5.5, 3072 × 2048 3.3 → 3.0, 2048 × 2048 2.9 → 2.5.
// kFull: every row is whole rounds of whole 1024-element blocks of x (row_bytes a multiple
// of kRowRoundBytes, k of 1024), so no load needs a bounds check or a zero fill.
// kNormIn: x is not read from a.x but made by the block after pdl_wait() from `norm` (the
// residual add and RMSNorm before the layer, norm_in_prologue) into dynamic shared memory of
// norm_in_smem_bytes(k), from where the rounds read it: the separate norm kernel before the
// layer, one block on one multiprocessor between two GEMVs of a decode step, is gone.
template <typename T, int kP, int kD, bool kFull = false, bool kNormIn = false>
__global__ void __launch_bounds__(kWarps * 32, kD == kRowDepth ? kRowMinBlocks : kRowWholeMinBlocks)
    mma_gemv_row_kernel(const MmaGemvArgs ma, const NormIn norm) {
    constexpr bool kBiasedW = Mma<T>::kBf16;
    const GemvArgs& a = ma.g;
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int row0 = (blockIdx.x * kWarps + (threadIdx.x >> 5)) * kRowWarpRows<kP>;
    // Whole warps only, and before the prologue's barriers only where there is none.
    if (!kNormIn && row0 >= a.n) return;
    const int r_begin = blockIdx.y * ma.rounds_per_split;
    const int r_end = min(ma.rounds, r_begin + ma.rounds_per_split);
    const int segments = static_cast<int>(a.row_bytes / 64);  // of 128 weights, per row
    const int rpg = ma.rounds_per_group;                      // segments per group
    const int group_step = kRowRoundBytes / 64 % rpg == 0 ? kRowRoundBytes / 64 / rpg : 0;

    // This thread's 16 bytes of segment g of each of its rows in round r_begin, and the
    // segment's group scale; advanced round by round.
    const uint8_t* wsrc[kP][2];
    // Each row's first scale as an index into a.scales (a 32-bit offset instead of a pointer:
    // fewer registers and integer instructions per round; DeviceLinear::allocate checks that
    // n · groups < 2^32).
    uint32_t srow[kP][2];
#pragma unroll
    for (int p = 0; p < kP; ++p)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = min(row0 + 2 * p + h, a.n - 1);
            wsrc[p][h] = a.w + std::size_t(row) * a.row_bytes +
                         std::size_t(r_begin) * kRowRoundBytes + g * 64 + t * kChunkBytes;
            srow[p][h] = static_cast<uint32_t>(row) * static_cast<uint32_t>(a.groups);
        }
    int seg = r_begin * 8 + g;
    int group = seg / rpg;
    auto load_round = [&](uint4(&wv)[kP][2], __half(&sv)[kP][2]) {
        const bool valid = kFull || seg < segments;  // zeros past the row: x is zero there too
#pragma unroll
        for (int p = 0; p < kP; ++p)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                wv[p][h] = valid ? load_weights(wsrc[p][h]) : make_uint4(0, 0, 0, 0);
                sv[p][h] = valid ? __ldg(a.scales + (srow[p][h] + group)) : __ushort_as_half(0);
                wsrc[p][h] += kRowRoundBytes;
            }
        seg += 8;
        group = group_step > 0 ? group + group_step : seg / rpg;
    };
    // kD rounds in flight beside the one in use: a ring of kD + 1 register sets, indexed by
    // compile-time constants (the loop body is unrolled over the ring).
    constexpr int kSets = kD + 1;
    static_assert(kSets % 2 == 0, "x alternates between two buffers within the unrolled body");
    uint4 w[kSets][kP][2];
    __half s[kSets][kP][2] = {};
#pragma unroll
    for (int i = 0; i < kD; ++i)
        if (r_begin + i < r_end) load_round(w[i], s[i]);
    pdl_wait();
    pdl_launch_dependents();
    MTDESK_DYNAMIC_SHARED(uint4, s_x);  // kNormIn: x's chunks at norm_in_slot()
    if constexpr (kNormIn) {
        norm_in_prologue<T>(norm, a.k, s_x);
        if (row0 >= a.n) return;
    }

    // x[1024 r + 128 g + 32 t + 8 j .. + 7] for j = 0..3: zeros past k.
    const T* xsrc = static_cast<const T*>(a.x) + g * 128 + t * 32;
    uint4 xv[2][4];
    auto load_x = [&](int r, uint4(&v)[4]) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int k0 = r * 1024 + g * 128 + t * 32 + 8 * j;
            if (!kFull && k0 >= a.k)
                v[j] = make_uint4(0, 0, 0, 0);
            else if constexpr (kNormIn)
                v[j] = s_x[norm_in_slot(k0 / 8)];
            else
                v[j] = __ldg(reinterpret_cast<const uint4*>(xsrc + r * 1024 + 8 * j));
        }
    };
    load_x(r_begin, xv[0]);

    const int e = g & 1;  // this thread's accumulator of column g (when t == g / 2)
    float acc[kP][2];
#pragma unroll
    for (int p = 0; p < kP; ++p)
        acc[p][0] = acc[p][1] = 0.0f;
    for (int r0 = r_begin; r0 < r_end; r0 += kSets) {
#pragma unroll
        for (int i = 0; i < kSets; ++i) {
            const int r = r0 + i;
            if (r >= r_end) break;
            // Round r + kD's weights and scales, and round r + 1's x, in flight during this
            // round's arithmetic.
            if (r + kD < r_end) load_round(w[(i + kD) % kSets], s[(i + kD) % kSets]);
            if (r + 1 < r_end) load_x(r + 1, xv[(i + 1) % 2]);
            // B fragments (column g): pairs (x0,x1), (x2,x3) for step 2j, (x4,x5), (x6,x7) for
            // step 2j + 1 of block j, as Mma::biased pairs the weights.
            const uint4* xr = xv[i % 2];
            uint32_t xb[4][2][2];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                xb[j][0][0] = xr[j].x;
                xb[j][0][1] = xr[j].y;
                xb[j][1][0] = xr[j].z;
                xb[j][1][1] = xr[j].w;
            }
            float bias[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // (magic + 8) · Σx of column 2t, 2t + 1
            if constexpr (kBiasedW) {
                const uint32_t c[4] = {Mma<T>::kBias, Mma<T>::kBias, Mma<T>::kBias, Mma<T>::kBias};
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    Mma<T>::mma(bias, c, xb[j][0]);
                    Mma<T>::mma(bias, c, xb[j][1]);
                }
            }
            const float b = e ? bias[1] : bias[0];
#pragma unroll
            for (int p = 0; p < kP; ++p) {
                float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    uint32_t lo[4], hi[4];  // A rows g and g + 8: pairs 0..3 of word j
                    if constexpr (kBiasedW) {
                        Mma<T>::biased(word_of(w[i][p][0], j), lo);
                        Mma<T>::biased(word_of(w[i][p][1], j), hi);
                    } else {
                        Mma<T>::dequant(word_of(w[i][p][0], j), lo);
                        Mma<T>::dequant(word_of(w[i][p][1], j), hi);
                    }
#pragma unroll
                    for (int step = 0; step < 2; ++step) {
                        const uint32_t af[4] = {lo[2 * step], hi[2 * step], lo[2 * step + 1],
                                                hi[2 * step + 1]};
                        Mma<T>::mma(part, af, xb[j][step]);
                    }
                }
                acc[p][0] = fmaf((e ? part[1] : part[0]) - b, __half2float(s[i][p][0]), acc[p][0]);
                acc[p][1] = fmaf((e ? part[3] : part[2]) - b, __half2float(s[i][p][1]), acc[p][1]);
            }
        }
    }
    // Row sums: the eight segments' partial sums (thread (g, g / 2) holds segment g's) summed
    // over the warp in a fixed order; every lane then holds them.
    const bool holder = t == (g >> 1);
    float sum[kP][2];
#pragma unroll
    for (int p = 0; p < kP; ++p)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            sum[p][h] = holder ? acc[p][h] : 0.0f;
#pragma unroll
            for (int off = 16; off > 0; off >>= 1)
                sum[p][h] += __shfl_xor_sync(0xffffffffu, sum[p][h], off);
        }
    if (a.act == nullptr || gridDim.y > 1) {
#pragma unroll
        for (int p = 0; p < kP; ++p)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = row0 + 2 * p + h;
                if (lane == 2 * p + h && row < a.n) store_result<T>(a, 0, row, sum[p][h]);
            }
    } else {
        // One slice: SwiGLU of the gate / up pair (rows 2j, 2j + 1 = a tile's two rows), each
        // first rounded to T as y would be.
#pragma unroll
        for (int p = 0; p < kP; ++p) {
            const int row = row0 + 2 * p;
            if (lane == p && row < a.n)
                static_cast<T*>(a.act)[row / 2] =
                    swiglu_of<T>(round_to<T>(sum[p][0]), round_to<T>(sum[p][1]));
        }
    }
}

// The one-row INT4 GEMV's instance for rows of `row_bytes` bytes and x of k elements, with
// kRowWholeDepth rounds in flight (`whole`) or kRowDepth: kFull where every row is whole rounds
// and x whole 1024-element blocks (no load then needs a bounds check). run_mma_gemv_row and the
// emulated kernel tests pick with it.
template <typename T, bool kNormIn = false>
auto mma_gemv_row_instance(std::size_t row_bytes, int k, bool whole) {
    const bool full = row_bytes % kRowRoundBytes == 0 && k % 1024 == 0;
    return whole ? (full ? mma_gemv_row_kernel<T, kRowTiles, kRowWholeDepth, true, kNormIn>
                         : mma_gemv_row_kernel<T, kRowTiles, kRowWholeDepth, false, kNormIn>)
                 : (full ? mma_gemv_row_kernel<T, kRowTiles, kRowDepth, true, kNormIn>
                         : mma_gemv_row_kernel<T, kRowTiles, kRowDepth, false, kNormIn>);
}

/// Dynamic shared memory of the one-row GEMV with kNormIn for x of k elements: its chunks,
/// rounded up to whole groups of 8 (norm_in_slot stays within one).
__host__ __device__ inline std::size_t norm_in_smem_bytes(int k) {
    return static_cast<std::size_t>((k / 8 + 7) / 8 * 8) * 16;
}

// `total` rounds (or chunks) cut into at most `splits` k-slices: `per` each (the last may be
// shorter), `used` of them.
struct Slices {
    int per, used;
};
inline Slices slices_of(int total, int splits) {
    const int per = (total + splits - 1) / splits;
    return {per, (total + per - 1) / per};
}

// ---- The one-row INT4 GEMV with x in registers ------------------------------------------------
//
// mma_gemv_row_kernel's warps each take four weight rows and walk k, loading the x of every
// round again beside its weights: as many 16-byte loads of x (through L1) as of weights, which
// bench_linear --stream showed cost the weight stream 17-25 % of its speed. Here the roles are
// turned round: each warp of a block keeps one round of x (1024 elements, 16 registers a thread)
// and walks the block's rows four at a time, with the same fragments, the same weight layout
// and the same per-segment arithmetic as mma_gemv_row_kernel (its comment above). A warp's
// segment sums, scaled by their group scales, go to shared memory; after one barrier each row
// is the sum of its segments in a fixed order (rounds, then segments), then SwiGLU, y or the
// slice's partial sum as before. The 136 · Σx bias of bf16 is one set of mmas per warp, not
// one per round.
//
// Block: kWarps warps; rounds_per_split = R (1, 2 or 4) of them per row group, kWarps / R row
// groups; warp w takes round blockIdx.y · R + w % R and the block's quads (four rows)
// w / R, w / R + kWarps / R, ... (block_rows a multiple of 4 · kWarps / R; the last slice may
// have fewer than R rounds: the others' warps idle). kD quads are loaded ahead of the one in
// use, the first before pdl_wait(). Dynamic shared memory: xreg_smem_bytes().

/// Quads of rows in flight beside the one in use in mma_gemv_row_xreg_kernel (at most 128
/// registers: four blocks a multiprocessor). 7 at two blocks a multiprocessor (213-218
/// registers) was slower on every 7B and 1.8B layer but one (docs/benchmarks.md).
constexpr int kXregDepth = 3;
/// The most rows one of its blocks takes (its partial sums are in shared memory).
constexpr int kXregMaxBlockRows = 128;

/// Floats per row of mma_gemv_row_xreg_kernel's partial sums (8 segments a round, and one more
/// so that threads reading successive rows meet different banks).
__host__ __device__ constexpr int xreg_pitch(int rounds_per_split) {
    return 8 * rounds_per_split + 1;
}

/// Dynamic shared memory of mma_gemv_row_xreg_kernel: x's chunks with kNormIn
/// (norm_in_smem_bytes), then block_rows rows of partial sums.
inline std::size_t xreg_smem_bytes(int k, int rounds_per_split, int block_rows, bool norm_in) {
    return (norm_in ? norm_in_smem_bytes(k) : 0) +
           static_cast<std::size_t>(block_rows) * xreg_pitch(rounds_per_split) * sizeof(float);
}

/// The launch shape of mma_gemv_row_xreg_kernel.
struct XregShape {
    int rounds_per_split = 0;  // R: 1, 2 or 4
    int slices = 0;            // grid.y
    int block_rows = 0;        // rows a block, a multiple of 4 · kWarps / R
    int row_blocks = 0;        // grid.x
};

/// The shape for `rounds` rounds of x and n rows on `sm_count` multiprocessors with at most
/// `max_slices` k-slices (their partial sums must fit the workspace): R the one of 4, 2, 1 that
/// leaves fewest warps idle (the larger on a tie; `only_r` > 0: that one alone), and rows per
/// block for about one wave of `blocks_per_sm` blocks per multiprocessor. 0 chooses: 4
/// (kRowMinBlocks), or 2 where 4 would leave each warp fewer than 3 quads (H200, bench_linear,
/// 4096 × 4096: 2 quads a warp 4.95 µs, 4 quads 4.16; the 7B's qkv, 3 quads, is slower with 6).
/// {} (slices 0) where no R fits max_slices.
inline XregShape xreg_shape(int rounds, int n, int sm_count, long max_slices, int only_r = 0,
                            int blocks_per_sm = 0) {
    XregShape s;
    int idle = 1 << 30;
    for (const int r : {4, 2, 1}) {
        if (only_r > 0 && r != only_r) continue;
        const int slices = (rounds + r - 1) / r;
        if (slices > std::max(max_slices, 1L) || slices * r - rounds >= idle) continue;
        idle = slices * r - rounds;
        s.rounds_per_split = r;
        s.slices = slices;
    }
    if (s.slices == 0) return s;
    const int quad_rows = 4 * kWarps / s.rounds_per_split;
    auto rows_for = [&](int per_sm) {
        const long target = std::max(1L, long{per_sm} * std::max(sm_count, 1) / s.slices);
        const long rows = (n + target - 1) / target;
        return static_cast<int>(std::clamp<long>((rows + quad_rows - 1) / quad_rows * quad_rows,
                                                 quad_rows,
                                                 kXregMaxBlockRows / quad_rows * quad_rows));
    };
    s.block_rows = rows_for(blocks_per_sm > 0 ? blocks_per_sm : kRowMinBlocks);
    if (blocks_per_sm == 0 && s.block_rows < 3 * quad_rows) s.block_rows = rows_for(2);
    s.row_blocks = (n + s.block_rows - 1) / s.block_rows;
    return s;
}

template <typename T, int kD, bool kFull = false, bool kNormIn = false>
__global__ void __launch_bounds__(kWarps * 32, kRowMinBlocks)
    mma_gemv_row_xreg_kernel(const MmaGemvArgs ma, const NormIn norm, int block_rows) {
    constexpr bool kBiasedW = Mma<T>::kBf16;
    const GemvArgs& a = ma.g;
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, warp = threadIdx.x >> 5;
    const int rps = ma.rounds_per_split;
    const int groups_of_rows = kWarps / rps;
    const int rw = warp % rps, row_group = warp / rps;
    const int round = blockIdx.y * rps + rw;
    const bool active = round < ma.rounds;
    const int block_row0 = blockIdx.x * block_rows;
    const int quads = block_rows / (4 * groups_of_rows);  // this warp's
    const int seg = round * 8 + g;
    // Zeros past the row (x is zero there too) and in an idle warp.
    const bool valid = active && (kFull || seg < static_cast<int>(a.row_bytes / 64));
    const uint32_t group = static_cast<uint32_t>(seg / ma.rounds_per_group);
    const uint8_t* wsrc = a.w + std::size_t(round) * kRowRoundBytes + g * 64 + t * kChunkBytes;
    // Quad i's rows: block_row0 + 4 (row_group + i · groups_of_rows) + 0..3; rows 0, 1 are
    // m16 tile 0's two rows, 2, 3 tile 1's.
    auto load_quad = [&](int i, uint4(&wv)[4], __half(&sv)[4]) {
        const int r0 = block_row0 + 4 * (row_group + i * groups_of_rows);
#pragma unroll
        for (int h = 0; h < 4; ++h) {
            const int row = min(r0 + h, a.n - 1);
            wv[h] = valid ? load_weights(wsrc + std::size_t(row) * a.row_bytes)
                          : make_uint4(0, 0, 0, 0);
            sv[h] =
                valid
                    ? __ldg(a.scales +
                            (static_cast<uint32_t>(row) * static_cast<uint32_t>(a.groups) + group))
                    : __ushort_as_half(0);
        }
    };
    constexpr int kSets = kD + 1;
    uint4 w[kSets][4];
    __half s[kSets][4];
#pragma unroll
    for (int i = 0; i < kD; ++i)
        if (i < quads) load_quad(i, w[i], s[i]);
    pdl_wait();
    pdl_launch_dependents();
    MTDESK_DYNAMIC_SHARED(uint4, s_dyn);
    if constexpr (kNormIn) norm_in_prologue<T>(norm, a.k, s_dyn);
    float* s_part = reinterpret_cast<float*>(s_dyn + (kNormIn ? norm_in_smem_bytes(a.k) / 16 : 0));
    const int pitch = xreg_pitch(rps);

    // This warp's round of x: x[1024 round + 128 g + 32 t + 8 j .. + 7], j = 0..3, as B
    // fragments (column g) paired as Mma::biased pairs the weights; zeros past k.
    uint32_t xb[4][2][2];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int k0 = round * 1024 + g * 128 + t * 32 + 8 * j;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (active && (kFull || k0 < a.k)) {
            if constexpr (kNormIn)
                v = s_dyn[norm_in_slot(k0 / 8)];
            else
                v = __ldg(reinterpret_cast<const uint4*>(static_cast<const T*>(a.x) + k0));
        }
        xb[j][0][0] = v.x;
        xb[j][0][1] = v.y;
        xb[j][1][0] = v.z;
        xb[j][1][1] = v.w;
    }
    const int e = g & 1;  // this thread's accumulator of column g (when t == g / 2)
    float b = 0.0f;       // (magic + 8) · Σx of segment g
    if constexpr (kBiasedW) {
        float bias[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        const uint32_t c[4] = {Mma<T>::kBias, Mma<T>::kBias, Mma<T>::kBias, Mma<T>::kBias};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            Mma<T>::mma(bias, c, xb[j][0]);
            Mma<T>::mma(bias, c, xb[j][1]);
        }
        b = e ? bias[1] : bias[0];
    }
    const bool holder = t == (g >> 1);
    if (active) {
        for (int i0 = 0; i0 < quads; i0 += kSets) {
#pragma unroll
            for (int j = 0; j < kSets; ++j) {
                const int i = i0 + j;
                if (i >= quads) break;
                if (i + kD < quads) load_quad(i + kD, w[(j + kD) % kSets], s[(j + kD) % kSets]);
                float* out = s_part + (4 * (row_group + i * groups_of_rows)) * pitch + rw * 8 + g;
#pragma unroll
                for (int p = 0; p < 2; ++p) {
                    float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
                    for (int jw = 0; jw < 4; ++jw) {
                        uint32_t lo[4], hi[4];  // A rows g and g + 8: pairs 0..3 of word jw
                        if constexpr (kBiasedW) {
                            Mma<T>::biased(word_of(w[j][2 * p], jw), lo);
                            Mma<T>::biased(word_of(w[j][2 * p + 1], jw), hi);
                        } else {
                            Mma<T>::dequant(word_of(w[j][2 * p], jw), lo);
                            Mma<T>::dequant(word_of(w[j][2 * p + 1], jw), hi);
                        }
#pragma unroll
                        for (int step = 0; step < 2; ++step) {
                            const uint32_t af[4] = {lo[2 * step], hi[2 * step], lo[2 * step + 1],
                                                    hi[2 * step + 1]};
                            Mma<T>::mma(part, af, xb[jw][step]);
                        }
                    }
                    if (holder) {
                        out[(2 * p) * pitch] =
                            ((e ? part[1] : part[0]) - b) * __half2float(s[j][2 * p]);
                        out[(2 * p + 1) * pitch] =
                            ((e ? part[3] : part[2]) - b) * __half2float(s[j][2 * p + 1]);
                    }
                }
            }
        }
    }
    __syncthreads();
    // Row sums over this slice's rounds and segments in a fixed order; a thread a row, the
    // pair (2j, 2j + 1) on neighbouring lanes for SwiGLU.
    const int terms = 8 * min(rps, ma.rounds - static_cast<int>(blockIdx.y) * rps);
    const bool swiglu = a.act != nullptr && gridDim.y == 1;
    for (int r0 = 0; r0 < block_rows; r0 += kWarps * 32) {
        const int rl = r0 + static_cast<int>(threadIdx.x);
        float v = 0.0f;
        if (rl < block_rows) {
            const float* src = s_part + rl * pitch;
            for (int c = 0; c < terms; ++c)
                v += src[c];
        }
        const float other = __shfl_xor_sync(0xffffffffu, v, 1);
        const int row = block_row0 + rl;
        if (rl >= block_rows || row >= a.n) continue;
        if (swiglu) {
            if ((rl & 1) == 0)
                static_cast<T*>(a.act)[row / 2] = swiglu_of<T>(round_to<T>(v), round_to<T>(other));
        } else {
            store_result<T>(a, 0, row, v);
        }
    }
}

// mma_gemv_row_xreg_kernel's instance for rows of `row_bytes` bytes and x of k elements (kFull
// as for mma_gemv_row_instance).
template <typename T, bool kNormIn = false>
auto mma_gemv_row_xreg_instance(std::size_t row_bytes, int k) {
    const bool full = row_bytes % kRowRoundBytes == 0 && k % 1024 == 0;
    return full ? mma_gemv_row_xreg_kernel<T, kXregDepth, true, kNormIn>
                : mma_gemv_row_xreg_kernel<T, kXregDepth, false, kNormIn>;
}

// K-slices whose fp32 partial sums, m · n each, fit in `workspace_bytes` (0: none).
inline long splits_fitting(std::size_t workspace_bytes, int m, int n) {
    return static_cast<long>(workspace_bytes / (static_cast<std::size_t>(m) * n * sizeof(float)));
}

// Split-K of the tensor-core GEMV up to 32 rows of x (above: mma_wave_split_count): enough
// warps for about 16 per multiprocessor, >= 2 rounds per slice, partial sums within
// `workspace_bytes`.
inline int mma_split_count(int n, int m, int warp_rows, int rounds, int sm_count,
                           std::size_t workspace_bytes) {
    const long warps = (static_cast<long>(n) + warp_rows - 1) / warp_rows;
    const long target = kWaveWarpsPerSm * sm_count;
    long split = warps >= target ? 1 : (target + warps - 1) / warps;
    split = std::min<long>({split, std::max(1, rounds / 2), 32});
    if (split > 1) split = std::min(split, splits_fitting(workspace_bytes, m, n));
    return static_cast<int>(std::max<long>(split, 1));
}

// Split-K of the tensor-core GEMV over 32 rows of x (x staged per block, 64 rows in a pass):
// the count whose estimated time is least, in units of one round of a block (its k-slice is
// ⌈rounds / split⌉ rounds): waves of blocks over the `resident` at once (all
// multiprocessors) times the rounds of a slice, plus each slice's partial sums, m · n floats
// written and read again, which cost about one round per 2^20 floats (H200, bench_linear at
// 64 rows: a 7B gate/up projection ran 64 µs in one slice against 78 in the three the
// warp-count rule gave, its down projection 34 µs in 8 against 40 in 16). At most 32 slices,
// >= 2 rounds each, partial sums within `workspace_bytes`.
inline int mma_wave_split_count(int n, int m, int block_rows, int rounds, int resident,
                                std::size_t workspace_bytes) {
    const long blocks = (static_cast<long>(n) + block_rows - 1) / block_rows;
    const long max_split =
        std::min<long>({std::max(1, rounds / 2), 32, splits_fitting(workspace_bytes, m, n)});
    const double partial_rounds = static_cast<double>(m) * n / (1 << 20);
    int best = 1;
    double best_cost = static_cast<double>((blocks + resident - 1) / resident) * rounds;
    for (int s = 2; s <= max_split; ++s) {
        const Slices sl = slices_of(rounds, s);
        const long waves = (sl.used * blocks + resident - 1) / resident;
        const double cost = static_cast<double>(waves) * sl.per + sl.used * partial_rounds;
        if (cost < best_cost) {
            best = sl.used;
            best_cost = cost;
        }
    }
    return best;
}

// y = Σ over the splits of the partial sums, in a fixed order (deterministic results).
template <typename T>
__global__ void sum_splits_kernel(const float* partial, T* y, int splits, std::size_t count) {
    pdl_wait();
    pdl_launch_dependents();
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        float s = 0.0f;
        for (int p = 0; p < splits; ++p)
            s += partial[std::size_t(p) * count + i];
        y[i] = Act<T>::narrow(s);
    }
}

// act [m, n / 2] = SwiGLU of the split sums of the gate / up pairs (2j, 2j + 1) of each row,
// each sum rounded to T first: sum_splits_kernel then swiglu(GateUp::Pairs), bit for bit.
// `pairs` = m · n / 2 (n even, so pair i is elements 2i, 2i + 1 of the dense [m, n]).
template <typename T>
__global__ void sum_splits_swiglu_kernel(const float* partial, T* act, int splits,
                                         std::size_t pairs) {
    pdl_wait();
    pdl_launch_dependents();
    const std::size_t count = 2 * pairs;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < pairs;
         i += std::size_t(gridDim.x) * blockDim.x) {
        float g = 0.0f, up = 0.0f;
        for (int p = 0; p < splits; ++p) {
            const float2 v = *reinterpret_cast<const float2*>(partial + p * count + 2 * i);
            g += v.x;
            up += v.y;
        }
        act[i] = swiglu_of<T>(round_to<T>(g), round_to<T>(up));
    }
}

constexpr int kNormThreads = kRmsNormThreads;  // threads per row of the kernel below

/// Splits up to which the residual add and RMSNorm go into the split-K sum. Its one block per
/// row reads every split of the row: at a batch of 8 the 7B layers' tensor-core GEMV splits 16
/// ways, and that block took longer than the separate sum (spread over the GPU) and norm
/// (7B int4 batch 8 2,447-2,484 -> 2,370-2,384 tok/s); at one row the GEMVs split 2-4 ways.
constexpr int kNormMaxSplits = 4;

// A layer's output y = T(Σ splits), then the residual add and RMSNorm of add_rms_norm()
// (ops_cuda.h) fused: residual = T(residual + y) (kPending: T(T(residual + pending) + y), an
// add left over from before the layer; pending is not read otherwise), out = T(weight · T(residual
// · rsqrt(mean(residual²) + eps))). One block of kNormThreads per row of [m, n]; splits <=
// kNormMaxSplits, n a multiple of 8 with n / 8 <= kV · kNormThreads, residual / weight / out
// 16-byte aligned. Each thread takes the 8-element chunks c = thread + i · kNormThreads and sums
// its squares in that order before block_sum(): the order of rms_norm_cuda.cu's
// rms_norm_vec_kernel, so the results are add_rms_norm()'s bit for bit.
template <typename T, int kV, bool kPending = false>
__global__ void __launch_bounds__(kNormThreads)
    sum_splits_add_rms_norm_kernel(const float* __restrict__ partial, int splits, int m, int n,
                                   T* __restrict__ residual, const T* __restrict__ pending,
                                   const T* __restrict__ weight, T* __restrict__ out, float eps) {
    const std::size_t r = blockIdx.x;
    const int chunks = n / 8;
    const std::size_t count = std::size_t(m) * n;
    uint4* res = reinterpret_cast<uint4*>(residual + r * n);
    const uint4* wrow = reinterpret_cast<const uint4*>(weight);
    // The norm's weight before pdl_wait(): the kernel before does not write it. Then every
    // other load of the row (the splits' partial sums, the residual) before any is used: one
    // round trip to memory, not one per split and chunk.
    // Zeroed: unloaded chunks stay unread (see rms_norm_cuda.cu).
    uint4 wv[kV] = {}, xv[kV] = {}, pv[kV] = {};
#pragma unroll
    for (int i = 0; i < kV; ++i) {
        const int c = threadIdx.x + i * kNormThreads;
        if (c < chunks) wv[i] = __ldg(wrow + c);
    }
    pdl_wait();
    pdl_launch_dependents();
    float4 ps[kV][kNormMaxSplits][2] = {};
#pragma unroll
    for (int i = 0; i < kV; ++i) {
        const int c = threadIdx.x + i * kNormThreads;
        if (c >= chunks) continue;
        xv[i] = res[c];
        if constexpr (kPending) pv[i] = reinterpret_cast<const uint4*>(pending + r * n)[c];
#pragma unroll
        for (int p = 0; p < kNormMaxSplits; ++p) {
            if (p >= splits) break;
            const float4* src =
                reinterpret_cast<const float4*>(partial + p * count + r * n + 8 * c);
            ps[i][p][0] = src[0];
            ps[i][p][1] = src[1];
        }
    }
    float v[kV][8];
    float ss = 0.0f;
#pragma unroll
    for (int i = 0; i < kV; ++i) {
        const int c = threadIdx.x + i * kNormThreads;
        if (c >= chunks) continue;
        float y[8] = {};
#pragma unroll
        for (int p = 0; p < kNormMaxSplits; ++p) {
            if (p >= splits) break;
            const float4 lo = ps[i][p][0], hi = ps[i][p][1];
            y[0] += lo.x;
            y[1] += lo.y;
            y[2] += lo.z;
            y[3] += lo.w;
            y[4] += hi.x;
            y[5] += hi.y;
            y[6] += hi.z;
            y[7] += hi.w;
        }
        T* xe = reinterpret_cast<T*>(&xv[i]);
        const T* pe = reinterpret_cast<const T*>(&pv[i]);
#pragma unroll
        for (int e = 0; e < 8; ++e) {
            const float x0 = kPending ? round_to<T>(to_f32(xe[e]) + to_f32(pe[e])) : to_f32(xe[e]);
            const float f = round_to<T>(x0 + round_to<T>(y[e]));
            v[i][e] = f;
            ss += f * f;
            xe[e] = from_f32<T>(f);
        }
        res[c] = xv[i];
    }
    const float inv = rsqrtf(block_sum(ss) / static_cast<float>(n) + eps);
    rms_norm_store<T, kV, kNormThreads>(v, wv, chunks, inv, out + r * n);
}

// ---- Dequantisation (prefill) -----------------------------------------------------------------

// Rows [row_begin, row_begin + rows) of the weight as T into out [rows, k_padded] (row stride
// k_padded elements, a multiple of 16, so every store is 16-byte aligned). One thread per 8
// elements (an INT4 word, two INT8 words) and one 16-byte store, consecutive threads on
// consecutive elements of a row: a warp's loads are 128 (INT4) or 256 (INT8) contiguous bytes
// and its stores 512. One thread per 16-byte chunk of codes (32 INT4 elements, four stores
// 64 bytes apart from the next thread's) took 2.4x the time its bytes take at the copy
// bandwidth, this 1.45x (bench_linear, 4096 x 14336 INT4 at 64 rows on an H200: dequantise +
// GEMM 119.0 -> 85.6 µs, the GEMM alone 34.9).
template <bool kInt4, typename T>
__global__ void dequantize_kernel(GemvArgs a, int k_padded, int row_begin, int rows, T* out) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
    const int units = k_padded / 8;  // of 8 elements, per row
    const std::size_t total = std::size_t(rows) * units;
    for (std::size_t idx = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; idx < total;
         idx += std::size_t(gridDim.x) * blockDim.x) {
        const int r = static_cast<int>(idx / units);
        const int u = static_cast<int>(idx % units);
        const int row = row_begin + r;
        const uint8_t* src = a.w + std::size_t(row) * a.row_bytes;
        float f[8];
        float scale;
        if constexpr (kInt4) {
            int4x8_to_float(__ldg(reinterpret_cast<const uint32_t*>(src) + u), f);
            // chunk u / 4 of 16 bytes: group (u / 4) / group_chunks
            scale = __half2float(a.scales[std::size_t(row) * a.groups + u / 4 / a.group_chunks]);
        } else {
            const uint2 v = __ldg(reinterpret_cast<const uint2*>(src) + u);
            int8x4_to_float(v.x, f);
            int8x4_to_float(v.y, f + 4);
            scale = __half2float(a.scales[row]);
        }
        uint4 o;
        o.x = Act<T>::narrow2(f[0] * scale, f[1] * scale);
        o.y = Act<T>::narrow2(f[2] * scale, f[3] * scale);
        o.z = Act<T>::narrow2(f[4] * scale, f[5] * scale);
        o.w = Act<T>::narrow2(f[6] * scale, f[7] * scale);
        reinterpret_cast<uint4*>(out + std::size_t(r) * k_padded)[u] = o;
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

// k-slices for a layer of n rows, so that up to 16 warps per multiprocessor have work (enough
// loads in flight to cover memory latency; the kernel's registers allow 16 resident, and a
// second, partial wave costs more than it brings: bench_linear, 4096 × 4096 INT4 at m = 1 7.5 µs
// with 2 slices vs 8.2 µs with 3), each slice keeping >= 2 chunks per lane, and the partial sums
// fitting in `workspace_bytes`.
inline int split_count(int n, int m, int r, int chunks, int sm_count, std::size_t workspace_bytes) {
    const long warps = (static_cast<long>(n) + r - 1) / r;
    const long target = kWaveWarpsPerSm * sm_count;
    long split = std::max(1L, target / warps);  // rounded down: one wave
    split = std::min<long>({split, std::max(1, chunks / 64), 32});
    if (split > 1) split = std::min(split, splits_fitting(workspace_bytes, m, n));
    return static_cast<int>(std::max<long>(split, 1));
}

}  // namespace mtdesk::cuda::detail
