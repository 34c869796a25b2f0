#pragma once
// The kernels of linear_cuda.cu and the launch-shape rules they are tuned with: weight-only
// GEMV (INT8/INT4 decode), the split-K sum, and dequantisation to 16-bit (INT8/INT4 prefill).
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

/// Weight kinds of the GEMV kernels: INT8 (W8A16) and INT4 (W4A16) codes.
enum class WKind { Int8, Int4 };

/// Weights per 16-byte chunk.
template <WKind K>
constexpr int kChunkElems = K == WKind::Int4 ? 32 : 16;

struct GemvArgs {
    const uint8_t* w;       // device layout of DeviceLinear
    const __half* scales;   // INT8: [n]; INT4: [n, groups]
    std::size_t row_bytes;  // bytes per weight row
    int groups;             // INT4 scales per row
    int group_chunks;       // INT4: 16-byte chunks per group
    int chunks;             // 16-byte chunks per row
    int chunks_per_split;   // chunks of one split-K slice
    const void* x;          // [m, k] T
    void* y;                // [m, n] T
    float* partial;         // [splits, m, n] fp32 (several splits)
    int m, n, k;
};

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
// and reused for all R rows. INT4 sums each chunk (inside one group) before applying its scale;
// INT8 applies the row scale once at the end. The first chunks are loaded before pdl_wait():
// weights do not depend on the kernel before.
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
#pragma unroll
            for (int s = 0; s < kSubs; ++s) {
                const int k0 = c * kElems + s * 8;
                if (k0 >= a.k) break;  // padding: weights are zero there, x does not exist
                float wf[R][8];
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    if constexpr (K == WKind::Int4) {
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
                if constexpr (K == WKind::Int4) {
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
                if constexpr (K == WKind::Int8) v *= __half2float(a.scales[row]);
                store_result<T>(a, mrow, row, v);
            }
        }
    }
}

// ---- Tensor-core GEMV (decode, sm_80+) ------------------------------------------------------
//
// The same product for m <= 16 · kTiles rows of x with the multiply-adds on the tensor cores
// (mma.sync m16n8k16, 16-bit inputs, fp32 accumulators), so that the SIMT pipe only
// dequantises: a batch of 64 costs little more than a batch of 1. Weights are the mma's B
// operand (n8 tiles of 8 weight rows; a warp owns kN of them), x the A operand (m16 tiles, zero
// rows past m). The A fragments of x are loaded once per round and reused for the warp's kN
// weight tiles.
//
// A round is 64 bytes of each weight row: 128 INT4 or 64 INT8 weights. Thread (g = lane / 4,
// t = lane % 4) loads 16 of those bytes of row g of each of its tiles with one 128-bit load and
// turns them into B fragments. An mma sums over its 16 k-slots in any order, so the k-slots are
// mapped to the weights each thread already holds and x is loaded with the same mapping (the
// idea of Marlin's fragment-matched layouts, here without repacking the weights: the order of
// k is permuted instead):
//  - INT4: word j of the 16 bytes holds elements e0..e7 (nibble i = element i). One LOP3 with
//    the bf16/fp16 "magic" exponent turns nibbles i and i + 4 into a 16-bit pair 128 + u or
//    1024 + u (u = q + 8, exact), one HSUB2 removes the bias exactly and one HMUL2 applies the
//    group's scale (rounded to T, as the dequantise + cuBLAS path does): pairs (e0,e4),
//    (e1,e5), (e2,e6), (e3,e7). Step 2j + h takes pairs 2h and 2h + 1 as its two B registers;
//    the A registers take x at the same elements, built from one 128-bit load of
//    x[8j .. 8j + 7] by byte permutes. A round lies inside one group (group % 128 == 0).
//  - INT8: word j holds four bytes; each becomes an exact fp32 (byte-permute trick above) and
//    two are packed into a 16-bit pair; step j takes (e0,e1), (e2,e3); x needs no permute; the
//    row scale is applied in fp32 at the end.

constexpr int kRoundBytes = 64;  // per weight row and round

// The mma and the INT4 dequantisation for 16-bit type T (bf16 or fp16): the same steps, with
// T's "magic" exponent (bf16 128.0, fp16 1024.0; the nibble u = q + 8 lands in the mantissa)
// and T's mma instruction.
template <typename T>
struct Mma {
    static constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
    using T2 = std::conditional_t<kBf16, __nv_bfloat162, __half2>;
    static constexpr uint32_t kMagic = kBf16 ? 0x43004300u : 0x64006400u;
    static constexpr float kBias = kBf16 ? 136.0f : 1032.0f;  // magic + 8

    static __device__ __forceinline__ uint32_t pair(float v) {
        T2 r;
        if constexpr (kBf16)
            r = __floats2bfloat162_rn(v, v);
        else
            r = __floats2half2_rn(v, v);
        return *reinterpret_cast<const uint32_t*>(&r);
    }
    // ((magic + u) - bias) · s: the subtraction is exact, the product rounded once.
    static __device__ __forceinline__ uint32_t dequant(uint32_t v, uint32_t bias, uint32_t s) {
        const T2 r =
            __hmul2(__hsub2(*reinterpret_cast<const T2*>(&v), *reinterpret_cast<const T2*>(&bias)),
                    *reinterpret_cast<const T2*>(&s));
        return *reinterpret_cast<const uint32_t*>(&r);
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
        __trap();                               // the host never launches this kernel below sm_80
#elif defined(MTDESK_CUDA_HOST_EMULATION)
        emulation::mma_m16n8k16<T>(d, a, b);
#endif
    }
};

// 8 consecutive activations of row `row` at element k0 (a whole 16-byte load; k % 8 == 0 so a
// group of 8 is entirely inside or entirely past k), or zeros past m or k.
template <typename T>
__device__ __forceinline__ uint4 load_x_vec(const T* x, int row, int m, int k, int k0) {
    if (row >= m || k0 >= k) return make_uint4(0, 0, 0, 0);
    return __ldg(reinterpret_cast<const uint4*>(x + std::size_t(row) * k + k0));
}

struct MmaGemvArgs {
    GemvArgs g;
    int rounds;            // bytes per weight row / kRoundBytes, rounded up
    int rounds_per_split;  // rounds of one split-K slice
    int rounds_per_group;  // INT4: group / 128
};

// Weight rows per warp of the tensor-core GEMV for kN tiles.
template <int kN>
constexpr int kMmaWarpRows = 8 * kN;

// Asynchronous 16-byte copy global -> shared (sm_80+); `valid` false writes zeros instead.
__device__ __forceinline__ void cp_async_16(void* shared, const void* global, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(global),
                 "r"(valid ? 16 : 0));
#elif defined(MTDESK_CUDA_HOST_EMULATION)
    if (valid)
        std::memcpy(shared, global, 16);
    else
        std::memset(shared, 0, 16);
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;");
#endif
}
// Waits until at most N committed groups of this thread are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N));
#endif
}

// grid (ceil(n / (4 · 8 · kN)), splits), 4 warps of kN weight tiles each. kUpper: x rows
// 8..15 of a tile exist (m > 8); without them those A registers are zeros. The first round of
// weights is loaded before pdl_wait().
//
// kSmemX: the block stages each round's x (16 · kTiles rows) in shared memory with cp.async,
// double-buffered, and its four warps read their A fragments there: x is fetched from L2 once
// per block instead of once per warp (with many rows, x, not the weights, was the traffic that
// bound the kernel). The staged rows hold the thread-matched order: thread t's 8-element block
// j of a round sits at 16-byte slot 4j + t, and rows are padded so that the two rows (four
// slots each) a quarter-warp reads fall in different banks.
template <WKind K, typename T, int kTiles, int kN, bool kUpper, bool kSmemX>
__global__ void __launch_bounds__(kWarps * 32) mma_gemv_kernel(const MmaGemvArgs ma) {
    constexpr bool kInt4 = K == WKind::Int4;
    constexpr int kPerThread = kChunkElems<K>;  // k elements of one thread in a round
    constexpr int kBlocks8 = kPerThread / 8;    // its 8-element blocks
    constexpr int kRoundK = 4 * kPerThread;     // k elements of a round
    constexpr int kXStride = kRoundK * 2 + 64;  // bytes per staged row (stride % 128 == 64)
    constexpr int kXRows = 16 * kTiles;
    constexpr int kXBytes = kSmemX ? kXRows * kXStride : 16;
    __shared__ __align__(16) unsigned char xs[2][kXBytes];

    const GemvArgs& a = ma.g;
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const int n0 = (blockIdx.x * kWarps + (threadIdx.x >> 5)) * kMmaWarpRows<kN>;
    // Whole warps only. With kSmemX every warp stages x and meets the barriers; a warp past n
    // computes on clamped rows and stores nothing.
    if (!kSmemX && n0 >= a.n) return;
    const T* x = static_cast<const T*>(a.x);
    const uint8_t* wrow[kN];
    int srow[kN];  // the weight row whose INT4 scale this thread's B fragments need
#pragma unroll
    for (int i = 0; i < kN; ++i) {
        srow[i] = min(n0 + 8 * i + g, a.n - 1);
        wrow[i] = a.w + std::size_t(srow[i]) * a.row_bytes + t * kChunkBytes;
    }
    const int r_begin = blockIdx.y * ma.rounds_per_split;
    const int r_end = min(ma.rounds, r_begin + ma.rounds_per_split);

    float acc[kN][kTiles][4];
#pragma unroll
    for (int i = 0; i < kN; ++i)
#pragma unroll
        for (int tile = 0; tile < kTiles; ++tile)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                acc[i][tile][e] = 0.0f;

    auto load_round = [&](int r, uint4* out) {
        // INT8 rows end at a 16-byte chunk that may not fill the last round.
        const bool ok = r < r_end && r * 4 + t < a.chunks;
#pragma unroll
        for (int i = 0; i < kN; ++i)
            out[i] =
                ok ? load_weights(wrow[i] + std::size_t(r) * kRoundBytes) : make_uint4(0, 0, 0, 0);
    };
    // Round r's x into buffer `buf`: zeros past m and past k (weights there are zero padding).
    auto stage_x = [&](int r, int buf) {
        constexpr int kChunks = kXRows * kRoundK / 8;
        for (int q = threadIdx.x; q < kChunks; q += kWarps * 32) {
            const int row = q / (kRoundK / 8), c8 = q % (kRoundK / 8);
            const int k0 = r * kRoundK + c8 * 8;
            const bool ok = row < a.m && k0 < a.k;
            const int slot = (c8 % kBlocks8) * 4 + c8 / kBlocks8;
            cp_async_16(xs[buf] + row * kXStride + slot * 16,
                        ok ? x + std::size_t(row) * a.k + k0 : x, ok);
        }
        cp_async_commit();
    };
    uint4 next[kN];
    load_round(r_begin, next);
    pdl_wait();
    pdl_launch_dependents();
    if (kSmemX && r_begin < r_end) stage_x(r_begin, 0);
    const uint32_t bias = Mma<T>::pair(Mma<T>::kBias);
    for (int r = r_begin; r < r_end; ++r) {
        const int buf = (r - r_begin) & 1;
        uint4 wv[kN];
#pragma unroll
        for (int i = 0; i < kN; ++i)
            wv[i] = next[i];
        load_round(r + 1, next);  // in flight during this round's arithmetic
        if constexpr (kSmemX) {
            if (r + 1 < r_end) {
                stage_x(r + 1, buf ^ 1);
                cp_async_wait<1>();
            } else {
                cp_async_wait<0>();
            }
            __syncthreads();  // round r's x is in place for every warp
        }

        uint32_t s2[kN];  // INT4: this round's group scale of row g of each tile, as a T pair
        if constexpr (kInt4) {
            const std::size_t grp = r / ma.rounds_per_group;
#pragma unroll
            for (int i = 0; i < kN; ++i)
                s2[i] = Mma<T>::pair(__half2float(a.scales[std::size_t(srow[i]) * a.groups + grp]));
        }
        const int kt = r * kRoundK + t * kPerThread;  // this thread's k range in the round
        // 8 activations of row `row` at this thread's block j of the round.
        auto x8 = [&](int row, int j) -> uint4 {
            if constexpr (kSmemX)
                return *reinterpret_cast<const uint4*>(xs[buf] + row * kXStride + (4 * j + t) * 16);
            else
                return load_x_vec(x, row, a.m, a.k, kt + 8 * j);
        };
#pragma unroll
        for (int j = 0; j < kBlocks8; ++j) {
            // B fragments of the warp's kN weight tiles for k slots 8j .. 8j + 7: two mma steps.
            uint32_t b[kN][2][2];
#pragma unroll
            for (int i = 0; i < kN; ++i) {
                if constexpr (kInt4) {
                    const uint32_t u = word_of(wv[i], j) ^ 0x88888888u;
#pragma unroll
                    for (int p = 0; p < 4; ++p)
                        b[i][p >> 1][p & 1] = Mma<T>::dequant(
                            ((u >> (4 * p)) & 0x000F000Fu) | Mma<T>::kMagic, bias, s2[i]);
                } else {
                    float f[8];
                    int8x4_to_float(word_of(wv[i], 2 * j), f);
                    int8x4_to_float(word_of(wv[i], 2 * j + 1), f + 4);
                    b[i][0][0] = Act<T>::narrow2(f[0], f[1]);
                    b[i][0][1] = Act<T>::narrow2(f[2], f[3]);
                    b[i][1][0] = Act<T>::narrow2(f[4], f[5]);
                    b[i][1][1] = Act<T>::narrow2(f[6], f[7]);
                }
            }
#pragma unroll
            for (int tile = 0; tile < kTiles; ++tile) {
                // A fragments of this x tile, reused for the kN weight tiles.
                const uint4 xl = x8(tile * 16 + g, j);
                const uint4 xh = kUpper ? x8(tile * 16 + g + 8, j) : make_uint4(0, 0, 0, 0);
                uint32_t af[2][4];
                if constexpr (kInt4) {
                    // Pairs (x0,x4), (x1,x5) for step 2j; (x2,x6), (x3,x7) for step 2j + 1.
                    af[0][0] = __byte_perm(xl.x, xl.z, 0x5410);
                    af[0][1] = __byte_perm(xh.x, xh.z, 0x5410);
                    af[0][2] = __byte_perm(xl.x, xl.z, 0x7632);
                    af[0][3] = __byte_perm(xh.x, xh.z, 0x7632);
                    af[1][0] = __byte_perm(xl.y, xl.w, 0x5410);
                    af[1][1] = __byte_perm(xh.y, xh.w, 0x5410);
                    af[1][2] = __byte_perm(xl.y, xl.w, 0x7632);
                    af[1][3] = __byte_perm(xh.y, xh.w, 0x7632);
                } else {
                    // Steps take elements 0..3 and 4..7 in order.
                    af[0][0] = xl.x;
                    af[0][1] = xh.x;
                    af[0][2] = xl.y;
                    af[0][3] = xh.y;
                    af[1][0] = xl.z;
                    af[1][1] = xh.z;
                    af[1][2] = xl.w;
                    af[1][3] = xh.w;
                }
#pragma unroll
                for (int i = 0; i < kN; ++i) {
                    Mma<T>::mma(acc[i][tile], af[0], b[i][0]);
                    Mma<T>::mma(acc[i][tile], af[1], b[i][1]);
                }
            }
        }
        if constexpr (kSmemX) __syncthreads();  // buffer `buf` is refilled next round
    }

    // Accumulator e of (tile i, x tile) is x row tile·16 + g (+ 8 for e >= 2) and weight row
    // n0 + 8i + 2t + e % 2.
#pragma unroll
    for (int i = 0; i < kN; ++i) {
        const int c0 = n0 + 8 * i + 2 * t;
        float rs[2] = {1.0f, 1.0f};
        if constexpr (K == WKind::Int8) {
            rs[0] = __half2float(a.scales[min(c0, a.n - 1)]);
            rs[1] = __half2float(a.scales[min(c0 + 1, a.n - 1)]);
        }
#pragma unroll
        for (int tile = 0; tile < kTiles; ++tile) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int mrow = tile * 16 + g + (e >= 2 ? 8 : 0);
                const int col = c0 + (e & 1);
                if (mrow >= a.m || col >= a.n) continue;
                store_result<T>(a, mrow, col, acc[i][tile][e] * rs[e & 1]);
            }
        }
    }
}

// Split-K of the tensor-core GEMV: enough warps for about 16 per multiprocessor, >= 2 rounds per
// slice, partial sums within `workspace_bytes`.
inline int mma_split_count(int n, int m, int warp_rows, int rounds, int sm_count,
                           std::size_t workspace_bytes) {
    const long warps = (static_cast<long>(n) + warp_rows - 1) / warp_rows;
    const long target = 16L * sm_count;
    long split = warps >= target ? 1 : (target + warps - 1) / warps;
    split = std::min<long>({split, std::max(1, rounds / 2), 32});
    const std::size_t per_split = static_cast<std::size_t>(m) * n * sizeof(float);
    if (split > 1) split = std::min<long>(split, static_cast<long>(workspace_bytes / per_split));
    return static_cast<int>(std::max<long>(split, 1));
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

// ---- Dequantisation (prefill) -----------------------------------------------------------------

// Rows [row_begin, row_begin + rows) of the weight as T into out [rows, k_padded] (row stride
// k_padded elements, a multiple of 16, so every store is 16-byte aligned). One thread per
// 16-byte chunk.
template <bool kInt4, typename T>
__global__ void dequantize_kernel(GemvArgs a, int k_padded, int row_begin, int rows, T* out) {
    pdl_wait();  // see launch_cuda.cuh
    pdl_launch_dependents();
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

// k-slices for a layer of n rows, so that up to 16 warps per multiprocessor have work (enough
// loads in flight to cover memory latency; the kernel's registers allow 16 resident, and a
// second, partial wave costs more than it brings: bench_linear, 4096 × 4096 INT4 at m = 1 7.5 µs
// with 2 slices vs 8.2 µs with 3), each slice keeping >= 2 chunks per lane, and the partial sums
// fitting in `workspace_bytes`.
inline int split_count(int n, int m, int r, int chunks, int sm_count, std::size_t workspace_bytes) {
    const long warps = (static_cast<long>(n) + r - 1) / r;
    const long target = 16L * sm_count;
    long split = std::max(1L, target / warps);  // rounded down: one wave
    split = std::min<long>({split, std::max(1, chunks / 64), 32});
    const std::size_t per_split = static_cast<std::size_t>(m) * n * sizeof(float);
    if (split > 1) split = std::min<long>(split, static_cast<long>(workspace_bytes / per_split));
    return static_cast<int>(std::max<long>(split, 1));
}

}  // namespace mtdesk::cuda::detail
