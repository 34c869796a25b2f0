// Weight-only quantised linear layers on the CPU (the CPU engine's INT8 and INT4 tiers): the
// weights stay quantised in memory and are dequantised as they are read.

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "cpu/ops_cpu.h"
#include "cpu/thread_pool_cpu.h"
#include "mtdesk/error.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MTDESK_CPU_AVX2 1
#endif

namespace mtdesk::cpu {
namespace {

std::atomic<bool> g_portable{false};  // force_portable_quant_kernels()

// The AVX2 + FMA dot products (x86-64 CPUs since 2013), chosen at run time so that one binary
// runs everywhere; the portable loops below do the same arithmetic elsewhere.
#ifdef MTDESK_CPU_AVX2
bool use_avx2() {
    static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return has && !g_portable.load(std::memory_order_relaxed);
}

__attribute__((target("avx2,fma"))) inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

// Eight int8 values (the low 8 bytes of b) as floats.
__attribute__((target("avx2,fma"))) inline __m256 int8_to_ps(__m128i b) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
}

// sum_i x[i] · w[i], i < k.
__attribute__((target("avx2,fma"))) float dot_int8_avx2(const float* x, const int8_t* w,
                                                        int64_t k) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i));
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), int8_to_ps(b), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), int8_to_ps(_mm_srli_si128(b, 8)), a1);
    }
    float sum = hsum(_mm256_add_ps(a0, a1));
    for (; i < k; ++i)
        sum += x[i] * static_cast<float>(w[i]);
    return sum;
}

// sum_g s[g] · sum_j (even[j] · low(w[j]) + odd[j] · high(w[j])) over a row of packed INT4
// bytes, `half` bytes a group (a multiple of 16).
__attribute__((target("avx2,fma"))) float dot_int4_avx2(const float* even, const float* odd,
                                                        const uint8_t* w, const float* s,
                                                        int64_t groups, int64_t half) {
    const __m128i mask = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
    __m256 total = _mm256_setzero_ps();
    for (int64_t g = 0; g < groups; ++g) {
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        for (int64_t j = g * half; j < (g + 1) * half; j += 16) {
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + j));
            // A nibble v in [0, 15] as a signed 4-bit number: (v ^ 8) - 8.
            const __m128i lo = _mm_sub_epi8(_mm_xor_si128(_mm_and_si128(b, mask), eight), eight);
            const __m128i hi = _mm_sub_epi8(
                _mm_xor_si128(_mm_and_si128(_mm_srli_epi16(b, 4), mask), eight), eight);
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(even + j), int8_to_ps(lo), a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(even + j + 8), int8_to_ps(_mm_srli_si128(lo, 8)),
                                 a1);
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(odd + j), int8_to_ps(hi), a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(odd + j + 8), int8_to_ps(_mm_srli_si128(hi, 8)),
                                 a1);
        }
        total = _mm256_fmadd_ps(_mm256_add_ps(a0, a1), _mm256_set1_ps(s[g]), total);
    }
    return hsum(total);
}
#else
bool use_avx2() {
    return false;
}
#endif

// The sign-extended low / high nibble of a packed INT4 byte (quantize.h's packing).
inline int low_nibble(uint8_t b) {
    return static_cast<int8_t>(static_cast<uint8_t>(b << 4)) >> 4;
}
inline int high_nibble(uint8_t b) {
    return static_cast<int8_t>(b) >> 4;
}

// The portable products keep 16 running sums, which compilers vectorise from the
// fixed-length inner loops below; one horizontal sum per output.
constexpr int64_t kLanes = 16;

inline float lane_sum(const float* lanes) {
    float sum = 0.0f;
    for (int64_t l = 0; l < kLanes; ++l)
        sum += lanes[l];
    return sum;
}

// y[r, o] for output rows [begin, end) of an INT8 weight, read straight from the int8 values.
void gemv_int8(const float* x, const int8_t* q, const float* scales, const float* bias, float* y,
               int64_t rows, int64_t k, int64_t n, int64_t begin, int64_t end) {
    const int64_t body = k - k % kLanes;
    const bool avx2 = use_avx2();
    for (int64_t o = begin; o < end; ++o) {
        const int8_t* w = q + o * k;
        for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x + r * k;
#ifdef MTDESK_CPU_AVX2
            if (avx2) {
                y[r * n + o] =
                    dot_int8_avx2(xr, w, k) * scales[o] + (bias != nullptr ? bias[o] : 0.0f);
                continue;
            }
#endif
            alignas(64) float lanes[kLanes] = {};
            for (int64_t i = 0; i < body; i += kLanes)
                for (int64_t l = 0; l < kLanes; ++l)
                    lanes[l] += xr[i + l] * static_cast<float>(w[i + l]);
            float acc = lane_sum(lanes);
            for (int64_t i = body; i < k; ++i)
                acc += xr[i] * static_cast<float>(w[i]);
            y[r * n + o] = acc * scales[o] + (bias != nullptr ? bias[o] : 0.0f);
        }
    }
}

// The same for an INT4 weight. `x` is each row's inputs split into its even and its odd
// elements ([rows][2][k_padded / 2], zeros past k), so that the low and the high nibbles of the
// packed bytes meet contiguous inputs; each group's products are scaled by the group's scale
// as they are added.
void gemv_int4(const float* x, const uint8_t* packed, const float* scales, const float* bias,
               float* y, int64_t rows, int64_t k_padded, int64_t group, int64_t n, int64_t begin,
               int64_t end) {
    const int64_t groups = k_padded / group, half = group / 2, row_bytes = k_padded / 2;
    const int64_t body = half - half % kLanes;
    const bool avx2 = use_avx2() && half % 16 == 0;
    for (int64_t o = begin; o < end; ++o) {
        const uint8_t* w = packed + o * row_bytes;
        const float* s = scales + o * groups;
        for (int64_t r = 0; r < rows; ++r) {
            const float* even = x + r * k_padded;
            const float* odd = even + row_bytes;
#ifdef MTDESK_CPU_AVX2
            if (avx2) {
                y[r * n + o] = dot_int4_avx2(even, odd, w, s, groups, half) +
                               (bias != nullptr ? bias[o] : 0.0f);
                continue;
            }
#endif
            alignas(64) float lanes[kLanes] = {};
            float acc = 0.0f;
            for (int64_t g = 0; g < groups; ++g) {
                const uint8_t* wg = w + g * half;
                const float* xe = even + g * half;
                const float* xo = odd + g * half;
                const float sg = s[g];
                for (int64_t j = 0; j < body; j += kLanes)
                    for (int64_t l = 0; l < kLanes; ++l)
                        lanes[l] += (xe[j + l] * static_cast<float>(low_nibble(wg[j + l])) +
                                     xo[j + l] * static_cast<float>(high_nibble(wg[j + l]))) *
                                    sg;
                for (int64_t j = body; j < half; ++j)
                    acc += (xe[j] * static_cast<float>(low_nibble(wg[j])) +
                            xo[j] * static_cast<float>(high_nibble(wg[j]))) *
                           sg;
            }
            y[r * n + o] = acc + lane_sum(lanes) + (bias != nullptr ? bias[o] : 0.0f);
        }
    }
}

// Rows [begin, end) of deq(W) into `tile` (row `begin` at tile row 0), k columns each.
void dequantize_rows(const QuantizedInt8& w, int64_t begin, int64_t end, float* tile) {
    const int64_t k = w.k;
    for (int64_t o = begin; o < end; ++o) {
        const int8_t* q = w.q.data() + o * k;
        const float s = w.scales[o];
        float* t = tile + (o - begin) * k;
        for (int64_t i = 0; i < k; ++i)
            t[i] = static_cast<float>(q[i]) * s;
    }
}

void dequantize_rows(const QuantizedInt4& w, int64_t begin, int64_t end, float* tile) {
    const int64_t k = w.k, group = w.group, groups = w.groups(), row_bytes = w.k_padded / 2;
    for (int64_t o = begin; o < end; ++o) {
        const uint8_t* p = w.packed.data() + o * row_bytes;
        const float* s = w.scales.data() + o * groups;
        float* t = tile + (o - begin) * k;
        for (int64_t i = 0; i + 1 < k; i += 2) {
            const float scale = s[i / group];  // group is even: i and i + 1 share it
            t[i] = static_cast<float>(low_nibble(p[i / 2])) * scale;
            t[i + 1] = static_cast<float>(high_nibble(p[i / 2])) * scale;
        }
        if (k % 2 != 0) t[k - 1] = static_cast<float>(low_nibble(p[k / 2])) * s[(k - 1) / group];
    }
}

// Prefill: deq(W) in tiles of whole rows, each multiplied by OpenBLAS into its columns of y.
template <typename W>
void tiled_gemm(const float* x, const W& w, const float* bias, float* y, int64_t rows,
                ThreadPool& pool, std::vector<float>& tile) {
    const int64_t n = w.n, k = w.k;
    const int64_t tile_rows =
        std::clamp<int64_t>(static_cast<int64_t>(kCpuDequantTileBytes / sizeof(float)) / k, 1, n);
    if (static_cast<int64_t>(tile.size()) < tile_rows * k) tile.resize(tile_rows * k);
    for (int64_t begin = 0; begin < n; begin += tile_rows) {
        const int64_t count = std::min(tile_rows, n - begin);
        pool.parallel_for(count, [&](int64_t b, int64_t e) {
            dequantize_rows(w, begin + b, begin + e, tile.data() + b * k);
        });
        float beta = 0.0f;
        if (bias != nullptr) {
            for (int64_t r = 0; r < rows; ++r)
                std::memcpy(y + r * n + begin, bias + begin, sizeof(float) * count);
            beta = 1.0f;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(rows),
                    static_cast<blasint>(count), static_cast<blasint>(k), 1.0f, x,
                    static_cast<blasint>(k), tile.data(), static_cast<blasint>(k), beta, y + begin,
                    static_cast<blasint>(n));
    }
}

void check_rows(int64_t rows) {
    if (rows < 0) throw Error("cpu::linear: negative row count " + std::to_string(rows));
}

}  // namespace

void force_portable_quant_kernels(bool on) noexcept {
    g_portable.store(on, std::memory_order_relaxed);
}

bool quant_kernels_use_avx2() noexcept {
    return use_avx2();
}

void linear(const float* x, const QuantizedInt8& w, const float* bias, float* y, int64_t rows,
            ThreadPool& pool, QuantScratch& scratch) {
    check_rows(rows);
    if (rows == 0 || w.n == 0) return;
    if (rows > kQuantGemvRows) return tiled_gemm(x, w, bias, y, rows, pool, scratch.tile);
    pool.parallel_for(w.n, [&](int64_t begin, int64_t end) {
        gemv_int8(x, w.q.data(), w.scales.data(), bias, y, rows, w.k, w.n, begin, end);
    });
}

void linear(const float* x, const QuantizedInt4& w, const float* bias, float* y, int64_t rows,
            ThreadPool& pool, QuantScratch& scratch) {
    check_rows(rows);
    if (rows == 0 || w.n == 0) return;
    if (rows > kQuantGemvRows) return tiled_gemm(x, w, bias, y, rows, pool, scratch.tile);
    // Even and odd inputs apart; the padding's weights are zero and its inputs must be too.
    const int64_t k = w.k, kp = w.k_padded, half = kp / 2;
    scratch.x.assign(static_cast<std::size_t>(rows * kp), 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
        float* even = scratch.x.data() + r * kp;
        for (int64_t i = 0; i < k; ++i)
            even[(i % 2) * half + i / 2] = x[r * k + i];
    }
    pool.parallel_for(w.n, [&](int64_t begin, int64_t end) {
        gemv_int4(scratch.x.data(), w.packed.data(), w.scales.data(), bias, y, rows, kp, w.group,
                  w.n, begin, end);
    });
}

void linear(const float* x, const QuantizedTensor& w, const float* bias, float* y, int64_t rows,
            ThreadPool& pool, QuantScratch& scratch) {
    std::visit([&](const auto& t) { linear(x, t, bias, y, rows, pool, scratch); }, w);
}

}  // namespace mtdesk::cpu
