// The CUDA engine's GEMV kernels (engine/cuda/linear_kernels.cuh: INT8, INT4 and, in the SIMT
// kernel, the BF16 / FP16 tiers' 16-bit weights) run on the CPU by
// the host emulation (engine/cuda/host_emulation.h) and checked against a reference computed
// here in double: the SIMT GEMV in every tile shape (m = 1, 2, 3, 5, 8 and 11: rows past a tile;
// also reading the BF16 / FP16 tiers' 16-bit weights, with 4 and 6 rows per warp; INT8 with 2),
// the tensor-core GEMV with x per warp (m = 1, 2, 8, 9, 16: with and without the upper half of
// the A tile) and staged in shared memory (m = 17, 33, 64: two and four tiles, rows past m), in
// one slice and in split-K slices followed by the split-K sum, on bf16 and fp16 activations,
// with n not a multiple of a block's rows and k not a multiple of the INT4 group or of 16; and
// the fused epilogues (SwiGLU in the GEMV's store and split-K sum, the residual add and RMSNorm in
// the split-K sum) against the unfused results; and the one-row INT4 GEMV making its x from the
// residual add and RMSNorm before it against the same kernel on the norm's output.
// This is what the GPU suite gpu_test_linear checks on a device; here it runs in CI, where
// there is none, and catches a wrong fragment layout, index or split before a GPU run.

#include <QTest>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/gemm_cuda.h"
#include "cuda/linear_kernels.cuh"
#include "mtdesk/quant/quantize.h"

using namespace mtdesk;
using namespace mtdesk::cuda::detail;
namespace emulation = mtdesk::cuda::emulation;

namespace {

// The weight as the device holds it (linear_cuda.h, "Device layout of the quantised weights").
struct HostWeight {
    WKind kind;
    int n = 0, k = 0, k_padded = 0, group = 0;
    std::vector<uint8_t> bytes;
    std::vector<__half> scales;
    std::size_t row_bytes = 0;
    QuantizedInt8 q8;
    QuantizedInt4 q4;

    GemvArgs args() const {
        GemvArgs a{};
        a.w = bytes.data();
        a.scales = scales.data();
        a.row_bytes = row_bytes;
        a.chunks = static_cast<int>(row_bytes / kChunkBytes);
        a.groups = kind == WKind::Int4 ? k_padded / group : 1;
        a.group_chunks = kind == WKind::Int4 ? group / 32 : 1;
        a.group_step = kind == WKind::Int4 ? gemv_group_step(a.group_chunks) : 0;
        a.n = n;
        a.k = k;
        return a;
    }
    float scale(int row, int col) const {
        if (kind == WKind::F16) return 1.0f;
        return kind == WKind::Int4
                   ? q4.scales[static_cast<std::size_t>(row) * q4.groups() + col / group]
                   : q8.scales[static_cast<std::size_t>(row)];
    }
    int q(int row, int col) const {
        return kind == WKind::Int4 ? q4.q(row, col) : q8.q[static_cast<std::size_t>(row) * k + col];
    }
    std::vector<float> f16;  // F16: the weight's values (rounded to the activation type)
};

HostWeight make_weight(WKind kind, int n, int k, uint32_t seed, int group = kInt4GroupSize) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    std::vector<float> w(static_cast<std::size_t>(n) * k);
    for (float& v : w)
        v = normal(rng);
    HostWeight h;
    h.kind = kind;
    h.n = n;
    h.k = k;
    if (kind == WKind::Int4) {
        h.q4 = quantize_int4(w, n, k, group);
        h.k_padded = h.q4.k_padded;
        h.group = h.q4.group;
        h.row_bytes = static_cast<std::size_t>(h.k_padded) / 2;
        h.bytes = h.q4.packed;  // in the device order, as DeviceLinear::upload() reorders it
        for (std::size_t i = 0; i + 4 <= h.bytes.size(); i += 4) {
            uint32_t word;
            std::memcpy(&word, h.bytes.data() + i, 4);
            word = int4_device_word(word);
            std::memcpy(h.bytes.data() + i, &word, 4);
        }
        for (float s : h.q4.scales)
            h.scales.push_back(__float2half_rn(s));
        h.scales.push_back(__float2half_rn(0.0f));  // the device array's padding word
        h.scales.push_back(__float2half_rn(0.0f));
    } else {
        h.q8 = quantize_int8(w, n, k);
        h.k_padded = (k + 15) / 16 * 16;
        h.row_bytes = static_cast<std::size_t>(h.k_padded);
        h.bytes.assign(h.row_bytes * n, 0);
        for (int r = 0; r < n; ++r)
            std::memcpy(h.bytes.data() + h.row_bytes * r, h.q8.q.data() + std::size_t(r) * k,
                        static_cast<std::size_t>(k));
        for (float s : h.q8.scales)
            h.scales.push_back(__float2half_rn(s));
    }
    return h;
}

template <typename T>
T to_t(float f) {
    return T(f);  // round to nearest even
}
template <typename T>
float from_t(T v) {
    return static_cast<float>(v);
}

// A 16-bit weight [n, k] of T (the BF16 / FP16 tiers: rows of k · 2 bytes, k % 8 == 0).
template <typename T>
HostWeight make_f16_weight(int n, int k, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    HostWeight h;
    h.kind = WKind::F16;
    h.n = n;
    h.k = h.k_padded = k;
    h.row_bytes = static_cast<std::size_t>(k) * 2;
    h.bytes.resize(h.row_bytes * n);
    for (int i = 0; i < n * k; ++i) {
        const T v = to_t<T>(normal(rng));
        h.f16.push_back(from_t<T>(v));
        std::memcpy(h.bytes.data() + 2 * std::size_t(i), &v, 2);
    }
    return h;
}

// The dequantised weight each path multiplies with: q · scale in fp32 (exact) for the SIMT
// kernel and for the tensor-core kernel up to 16 rows of x (INT4 scales the fp32 sums of a
// group, INT8 the row's sum); beyond 16 rows INT4 T(q · T(scale)) (scaled A fragments, T pairs
// on the SIMT pipe).
template <typename T>
double weight_value(const HostWeight& w, int row, int col, bool tensor_cores, int m) {
    if (w.kind == WKind::F16) return w.f16[static_cast<std::size_t>(row) * w.k + col];
    const int q = w.q(row, col);
    const float s = w.scale(row, col);
    if (tensor_cores && w.kind == WKind::Int4 && m > 16)
        return from_t<T>(to_t<T>(static_cast<float>(q) * from_t<T>(to_t<T>(s))));
    return static_cast<double>(q) * s;
}

template <typename T>
struct Result {
    std::vector<T> y;
    std::vector<float> partial;
};

// What follows the GEMV in run_kernels: y alone (the split-K sum), or a fused epilogue into
// `act` (SwiGLU: the SIMT store at one slice, else sum_splits_swiglu_kernel) or into
// `residual` / `out` (sum_splits_add_rms_norm_kernel, split only).
template <typename T>
struct Fused {
    enum { None, SwiGlu, AddRmsNorm } kind = None;
    std::vector<T>* act = nullptr;
    std::vector<T>* residual = nullptr;
    const std::vector<T>* weight = nullptr;
    std::vector<T>* out = nullptr;
    float eps = 1e-6f;
};

// mma_gemv_row_xreg_kernel's shape in a test: rounds of x per slice (0: the kernel not run)
// and rows per block.
struct Xreg {
    int rounds_per_split = 0;
    int block_rows = 0;
};

// Runs the path on the emulation with `splits` k-slices (1: y directly) and, when split, the
// split-K sum (or `fused`'s epilogue), as run_gemv / run_mma_gemv in linear_cuda.cu launch
// them. With `xr`, INT4 at one row runs mma_gemv_row_xreg_kernel in xr's shape (its slices
// follow from it; `splits` must be their number).
template <WKind K, typename T>
std::vector<T> run_kernels(const HostWeight& w, const std::vector<T>& x, int m, int splits,
                           bool tensor_cores, int rows, const Fused<T>& fused = {},
                           int row_depth = kRowDepth, Xreg xr = {}) {
    std::vector<T> y(static_cast<std::size_t>(m) * w.n, to_t<T>(-1.0f));
    std::vector<float> partial(static_cast<std::size_t>(splits) * m * w.n, NAN);
    GemvArgs a = w.args();
    a.x = x.data();
    a.y = y.data();
    a.m = m;
    a.partial = partial.data();
    // As run_gemv / run_mma_gemv pick: INT4 at one row of x runs the one-row tensor-core
    // kernel, which like the SIMT kernel and the tensor-core kernel over 16 rows stores SwiGLU
    // itself when it runs in one slice.
    const bool row_kernel = tensor_cores && K == WKind::Int4 && m == 1;
    if (fused.kind == Fused<T>::SwiGlu && (!tensor_cores || row_kernel || m > 16))
        a.act = fused.act->data();
    int used = 1;
    const dim3 block(kWarps * 32);
    if (tensor_cores) {
        MmaGemvArgs ma{};
        ma.g = a;
        const int round_bytes = row_kernel ? kRowRoundBytes : kRoundBytes;
        ma.rounds = static_cast<int>((w.row_bytes + round_bytes - 1) / round_bytes);
        ma.rounds_per_group = K == WKind::Int4 ? w.group / 128 : 1;
        ma.rounds_per_split = slices_of(ma.rounds, splits).per;
        used = slices_of(ma.rounds, splits).used;
        const int block_rows = kWarps * (row_kernel ? kRowWarpRows<kRowTiles> : kMmaWarpRows<4>);
        const dim3 grid((w.n + block_rows - 1) / block_rows, used);
        auto mma = [&]<int kTiles, bool kUpper, bool kSmemX>() {
            emulation::launch_with_shared(
                mma_gemv_kernel<K, T, kTiles, 4, kUpper, kSmemX, kMmaStages<kTiles>>, grid, block,
                MmaSmem<K, kTiles, 4, kSmemX, kMmaStages<kTiles>>::bytes(), ma);
        };
        // The instance run_mma_gemv_row picks (without bounds checks on rows of whole rounds and
        // x of whole 1024-element blocks).
        if (row_kernel && xr.rounds_per_split > 0) {
            ma.rounds_per_split = xr.rounds_per_split;
            used = (ma.rounds + xr.rounds_per_split - 1) / xr.rounds_per_split;
            if (used != splits) qFatal("Xreg shape with %d slices, not %d", used, splits);
            const dim3 xgrid((w.n + xr.block_rows - 1) / xr.block_rows, used);
            emulation::launch_with_shared(
                mma_gemv_row_xreg_instance<T>(w.row_bytes, w.k), xgrid, block,
                xreg_smem_bytes(w.k, xr.rounds_per_split, xr.block_rows, false), ma, NormIn{},
                xr.block_rows);
        } else if (row_kernel)
            emulation::launch(
                mma_gemv_row_instance<T>(w.row_bytes, w.k, row_depth == kRowWholeDepth), grid,
                block, ma, NormIn{});
        else if (m <= 8)
            mma.template operator()<1, false, false>();
        else if (m <= 16)
            mma.template operator()<1, true, false>();
        else if (m <= 32)
            mma.template operator()<2, true, true>();
        else
            mma.template operator()<4, true, true>();
    } else {
        a.chunks_per_split = slices_of(a.chunks, splits).per;
        used = slices_of(a.chunks, splits).used;
        GemvShape s = gemv_shape(m);
        if (rows > 0 && s.mt == 1) s.r = rows;  // 16-bit weights at one row: 4 or 6
        const dim3 grid((w.n + kWarps * s.r - 1) / (kWarps * s.r), used);
        // 128-bit x loads need whole 8-element groups in every row.
        auto simt = [&]<bool kVecX>() {
            if (s.mt == 1 && s.r == 6)
                emulation::launch(gemv_kernel<K, T, 6, 1, kVecX>, grid, block, a);
            else if (s.mt == 1 && s.r == 2)
                emulation::launch(gemv_kernel<K, T, 2, 1, kVecX>, grid, block, a);
            else if (s.mt == 1)
                emulation::launch(gemv_kernel<K, T, 4, 1, kVecX>, grid, block, a);
            else if (s.mt == 2)
                emulation::launch(gemv_kernel<K, T, 4, 2, kVecX>, grid, block, a);
            else if (s.mt == 4)
                emulation::launch(gemv_kernel<K, T, 4, 4, kVecX>, grid, block, a);
            else
                emulation::launch(gemv_kernel<K, T, 2, 8, kVecX>, grid, block, a);
        };
        if (w.k % 8 == 0)
            simt.template operator()<true>();
        else
            simt.template operator()<false>();
    }
    const std::size_t count = static_cast<std::size_t>(m) * w.n;
    if (used > 1 && fused.kind == Fused<T>::SwiGlu) {
        emulation::launch(sum_splits_swiglu_kernel<T>, dim3(2), dim3(64), partial.data(),
                          fused.act->data(), used, count / 2);
    } else if (used > 1 && fused.kind == Fused<T>::AddRmsNorm) {
        // Chunks of 8 per thread: kV = 1 for n <= 2048, as finish_splits picks.
        emulation::launch(sum_splits_add_rms_norm_kernel<T, 1>, dim3(m), dim3(kNormThreads),
                          partial.data(), used, m, w.n, fused.residual->data(),
                          static_cast<const T*>(nullptr), fused.weight->data(), fused.out->data(),
                          fused.eps);
    } else if (used > 1) {
        emulation::launch(sum_splits_kernel<T>, dim3(2), dim3(64), partial.data(), y.data(), used,
                          count);
    }
    return y;
}

// The GEMV with SwiGLU fused (K's SIMT kernel at one and three slices, the tensor-core
// kernel's store over 16 rows at one slice, and its split sum) against the unfused y of the same
// kernels: act[r, j] = T(T(silu(y[r, 2j])) · y[r, 2j + 1]) exactly (the same expf on the host).
// Returns failures.
template <WKind K, typename T>
QString check_swiglu(const HostWeight& w, int m, int splits, bool tensor_cores, uint32_t seed,
                     Xreg xr = {}) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    std::vector<T> x(static_cast<std::size_t>(m) * w.k);
    for (T& v : x)
        v = to_t<T>(uni(rng));
    const std::vector<T> y = run_kernels<K, T>(w, x, m, splits, tensor_cores, 0, {}, kRowDepth, xr);
    std::vector<T> act(static_cast<std::size_t>(m) * w.n / 2, to_t<T>(-7.0f));
    Fused<T> f;
    f.kind = Fused<T>::SwiGlu;
    f.act = &act;
    run_kernels<K, T>(w, x, m, splits, tensor_cores, 0, f, kRowDepth, xr);
    for (std::size_t i = 0; i < act.size(); ++i) {
        const float g = from_t<T>(y[2 * i]), up = from_t<T>(y[2 * i + 1]);
        const float silu = from_t<T>(to_t<T>(g / (1.0f + std::exp(-g))));
        const float want = from_t<T>(to_t<T>(silu * up));
        if (from_t<T>(act[i]) != want)
            return QString("swiglu m=%1 splits=%2 %3: act[%4] = %5, want %6")
                .arg(m)
                .arg(splits)
                .arg(tensor_cores ? "tensor cores" : "simt")
                .arg(i)
                .arg(from_t<T>(act[i]))
                .arg(want);
    }
    return {};
}

// The split GEMV with the residual add and RMSNorm fused into its sum against the unfused y:
// residual = T(residual + y) exactly; out = T(weight · T(residual · rsqrt(mean + eps))) within
// one unit of T's last place (the kernel sums the squares in another order than here).
template <WKind K, typename T>
QString check_add_rms_norm(const HostWeight& w, int m, int splits, bool tensor_cores,
                           uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    std::vector<T> x(static_cast<std::size_t>(m) * w.k), residual(std::size_t(m) * w.n),
        weight(std::size_t(w.n));
    for (T& v : x)
        v = to_t<T>(uni(rng));
    for (T& v : residual)
        v = to_t<T>(uni(rng));
    for (T& v : weight)
        v = to_t<T>(1.0f + 0.5f * uni(rng));
    const std::vector<T> y = run_kernels<K, T>(w, x, m, splits, tensor_cores, 0);
    std::vector<T> res = residual, out(residual.size(), to_t<T>(-7.0f));
    Fused<T> f;
    f.kind = Fused<T>::AddRmsNorm;
    f.residual = &res;
    f.weight = &weight;
    f.out = &out;
    run_kernels<K, T>(w, x, m, splits, tensor_cores, 0, f);
    const double ulp = std::is_same_v<T, __nv_bfloat16> ? 1.0 / 128 : 1.0 / 1024;
    for (int r = 0; r < m; ++r) {
        double ss = 0;
        std::vector<float> v(std::size_t(w.n));
        for (int c = 0; c < w.n; ++c) {
            const std::size_t i = std::size_t(r) * w.n + c;
            v[c] = from_t<T>(to_t<T>(from_t<T>(residual[i]) + from_t<T>(y[i])));
            ss += double(v[c]) * v[c];
            if (from_t<T>(res[i]) != v[c])
                return QString("add_rms_norm m=%1: residual[%2] = %3, want %4")
                    .arg(m)
                    .arg(i)
                    .arg(from_t<T>(res[i]))
                    .arg(v[c]);
        }
        const double inv = 1.0 / std::sqrt(ss / w.n + f.eps);
        for (int c = 0; c < w.n; ++c) {
            const std::size_t i = std::size_t(r) * w.n + c;
            const double want = from_t<T>(weight[c]) * (v[c] * inv);
            const double got = from_t<T>(out[i]);
            if (!(std::fabs(got - want) <= ulp * std::fabs(want) + 1e-6))
                return QString("add_rms_norm m=%1 splits=%2: out[%3] = %4, want %5")
                    .arg(m)
                    .arg(splits)
                    .arg(i)
                    .arg(got)
                    .arg(want);
        }
    }
    return {};
}

// Every y against the double reference of the path's weights: |y - ref| within the rounding
// of y to T plus fp32 summation in another order. Returns the first mismatches.
template <WKind K, typename T>
QString check(const HostWeight& w, int m, int splits, bool tensor_cores, uint32_t seed,
              int rows = 0, int row_depth = kRowDepth, Xreg xr = {}) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    std::vector<T> x(static_cast<std::size_t>(m) * w.k);
    for (T& v : x)
        v = to_t<T>(uni(rng));
    const std::vector<T> y =
        run_kernels<K, T>(w, x, m, splits, tensor_cores, rows, {}, row_depth, xr);
    QStringList bad;
    for (int i = 0; i < m; ++i) {
        for (int r = 0; r < w.n; ++r) {
            double ref = 0, mag = 0;
            for (int c = 0; c < w.k; ++c) {
                const double p = from_t<T>(x[std::size_t(i) * w.k + c]) *
                                 weight_value<T>(w, r, c, tensor_cores, m);
                ref += p;
                mag += std::fabs(p);
            }
            const double got = from_t<T>(y[std::size_t(i) * w.n + r]);
            const double eps = std::is_same_v<T, __nv_bfloat16> ? 1.0 / 256 : 1.0 / 2048;
            const double tol = eps * std::fabs(ref) + 1e-5 * mag + 1e-6;
            if (!(std::fabs(got - ref) <= tol) && bad.size() < 4)
                bad << QString("y[%1, %2] = %3, reference %4").arg(i).arg(r).arg(got).arg(ref);
        }
    }
    if (bad.isEmpty()) return {};
    return QString("%1 %2 n=%3 k=%4 m=%5 splits=%6 %7")
               .arg(K == WKind::Int4   ? "int4"
                    : K == WKind::Int8 ? "int8"
                                       : "16-bit")
               .arg(std::is_same_v<T, __nv_bfloat16> ? "bf16" : "fp16")
               .arg(w.n)
               .arg(w.k)
               .arg(m)
               .arg(splits)
               .arg(xr.rounds_per_split > 0 ? QString("x in registers (%1 rounds a slice, %2 "
                                                      "rows a block)")
                                                  .arg(xr.rounds_per_split)
                                                  .arg(xr.block_rows)
                    : tensor_cores ? QString("tensor cores")
                                   : QString("simt")) +
           ": " + bad.join("; ");
}

float probe_a(int row, int col) {
    return float((row * 3 + col * 5) % 7 - 3);
}
float probe_b(int k, int col) {
    return float((k * 2 + col) % 5 - 2);
}
uint32_t bf16_pair(float lo, float hi) {
    const uint16_t l = __bfloat16_as_ushort(__float2bfloat16_rn(lo));
    const uint16_t h = __bfloat16_as_ushort(__float2bfloat16_rn(hi));
    return uint32_t(l) | uint32_t(h) << 16;
}

// One warp: an mma of probe_a · probe_b with each lane's fragments built as the PTX ISA lays
// them out, and a butterfly shuffle.
void warp_probe(float* d, int* shuffled) {
    const int lane = static_cast<int>(threadIdx.x), g = lane / 4, t = lane % 4;
    const uint32_t a[4] = {bf16_pair(probe_a(g, 2 * t), probe_a(g, 2 * t + 1)),
                           bf16_pair(probe_a(g + 8, 2 * t), probe_a(g + 8, 2 * t + 1)),
                           bf16_pair(probe_a(g, 2 * t + 8), probe_a(g, 2 * t + 9)),
                           bf16_pair(probe_a(g + 8, 2 * t + 8), probe_a(g + 8, 2 * t + 9))};
    const uint32_t b[2] = {bf16_pair(probe_b(2 * t, g), probe_b(2 * t + 1, g)),
                           bf16_pair(probe_b(2 * t + 8, g), probe_b(2 * t + 9, g))};
    float acc[4] = {0, 0, 0, 0};
    emulation::mma_m16n8k16<__nv_bfloat16>(acc, a, b);
    std::memcpy(d + 4 * lane, acc, sizeof(acc));
    shuffled[lane] = __shfl_xor_sync(0xffffffffu, lane * 10, 5);
}

// The one-row INT4 GEMV making its x from the residual add and RMSNorm before the layer
// (kNormIn, linear_swiglu_norm_in) against the same kernel on the x add_rms_norm() writes
// (the fused split-K sum's kernel with one split whose partial sum is the delta: the bits
// of rms_norm_vec_kernel), SwiGLU stored by the kernel (one slice) or by the split-K sum
// (more). Then the split-K sum's `pending` add against the same add done first. Returns a
// failure.
template <typename T, int kV>
QString check_norm_in(int n, int k, int splits, uint32_t seed, Xreg xr = {}) {
    const HostWeight w = make_weight(WKind::Int4, n, k, seed);
    std::mt19937 rng(seed + 1);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    std::vector<T> res(k), delta(k), weight(k);
    std::vector<float> delta_f(k);
    for (int i = 0; i < k; ++i) {
        res[i] = to_t<T>(2.0f * uni(rng));
        delta[i] = to_t<T>(uni(rng));
        delta_f[i] = from_t<T>(delta[i]);
        weight[i] = to_t<T>(1.0f + 0.5f * uni(rng));
    }
    const float eps = 1e-5f;
    std::vector<T> res_ref = res, x(k);
    emulation::launch(sum_splits_add_rms_norm_kernel<T, kV>, dim3(1), dim3(kNormThreads),
                      delta_f.data(), 1, 1, k, res_ref.data(), static_cast<const T*>(nullptr),
                      weight.data(), x.data(), eps);
    std::vector<T> act_ref(n / 2, to_t<T>(-3.0f)), act(n / 2, to_t<T>(-5.0f));
    Fused<T> f;
    f.kind = Fused<T>::SwiGlu;
    f.act = &act_ref;
    run_kernels<WKind::Int4, T>(w, x, 1, splits, true, 0, f, kRowDepth, xr);
    // The kNormIn instance, launched as run_mma_gemv_row launches it.
    MmaGemvArgs ma{};
    ma.g = w.args();
    ma.g.x = res.data();
    ma.g.m = 1;
    std::vector<float> partial(static_cast<std::size_t>(splits) * n, NAN);
    ma.g.partial = partial.data();
    ma.rounds = static_cast<int>((w.row_bytes + kRowRoundBytes - 1) / kRowRoundBytes);
    ma.rounds_per_group = w.group / 128;
    Slices sl = slices_of(ma.rounds, splits);
    if (xr.rounds_per_split > 0)
        sl = {xr.rounds_per_split, (ma.rounds + xr.rounds_per_split - 1) / xr.rounds_per_split};
    ma.rounds_per_split = sl.per;
    if (sl.used == 1) ma.g.act = act.data();
    const NormIn norm{res.data(), delta.data(), weight.data(), eps};
    if (xr.rounds_per_split > 0) {
        emulation::launch_with_shared(
            mma_gemv_row_xreg_instance<T, true>(w.row_bytes, k),
            dim3((n + xr.block_rows - 1) / xr.block_rows, sl.used), dim3(kWarps * 32),
            xreg_smem_bytes(k, xr.rounds_per_split, xr.block_rows, true), ma, norm, xr.block_rows);
    } else {
        const dim3 grid(
            (n + kWarps * kRowWarpRows<kRowTiles> - 1) / (kWarps * kRowWarpRows<kRowTiles>),
            sl.used);
        emulation::launch_with_shared(mma_gemv_row_instance<T, true>(w.row_bytes, k, false), grid,
                                      dim3(kWarps * 32), norm_in_smem_bytes(k), ma, norm);
    }
    if (sl.used > 1)
        emulation::launch(sum_splits_swiglu_kernel<T>, dim3(2), dim3(64), partial.data(),
                          act.data(), sl.used, static_cast<std::size_t>(n) / 2);
    const QString name = QString("norm in, INT4 [%1, %2], %3 slices%4")
                             .arg(n)
                             .arg(k)
                             .arg(sl.used)
                             .arg(xr.rounds_per_split > 0 ? ", x in registers" : "");
    if (std::memcmp(act.data(), act_ref.data(), act.size() * sizeof(T)) != 0)
        return name + ": differs from the GEMV on add_rms_norm's x";
    // The split-K sum with `pending` = delta on the untouched residual, against the same
    // sum (one split: a partial sum of ones) on the residual the reference updated.
    std::vector<float> ones(k, 1.0f);
    std::vector<T> out_ref(k), out(k), res_pending = res;
    emulation::launch(sum_splits_add_rms_norm_kernel<T, kV>, dim3(1), dim3(kNormThreads),
                      ones.data(), 1, 1, k, res_ref.data(), static_cast<const T*>(nullptr),
                      weight.data(), out_ref.data(), eps);
    emulation::launch(sum_splits_add_rms_norm_kernel<T, kV, true>, dim3(1), dim3(kNormThreads),
                      ones.data(), 1, 1, k, res_pending.data(), static_cast<const T*>(delta.data()),
                      weight.data(), out.data(), eps);
    if (std::memcmp(res_pending.data(), res_ref.data(), k * sizeof(T)) != 0 ||
        std::memcmp(out.data(), out_ref.data(), k * sizeof(T)) != 0)
        return name + ": the split-K sum's pending add differs from the add done first";
    return {};
}

}  // namespace

class TestLinearKernelsEmulated : public QObject {
    Q_OBJECT

  private slots:
    void emulatedBuiltins() {
        // prmt: the selectors the kernels use, and sign replication.
        QCOMPARE(emulation::byte_perm(0x33221100u, 0x77665544u, 0x5410u), 0x55441100u);
        QCOMPARE(emulation::byte_perm(0x33221100u, 0x77665544u, 0x7632u), 0x77663322u);
        QCOMPARE(emulation::byte_perm(0x000080ffu, 0u, 0x4498u), 0x0000ffffu);
        QCOMPARE(emulation::byte_perm(0x000000abu, 0x4B000000u, 0x7440u), 0x4B0000abu);
        // lop3's truth tables, evaluated bit by bit on the host.
        const uint32_t a = 0x12345678u, b = 0x0F0F0F0Fu, c = 0x08080808u;
        QCOMPARE(lop3<0x6A>(a, b, c), (a & b) ^ c);
        QCOMPARE(lop3<0xEA>(a, b, c), (a & b) | c);
        QCOMPARE(lop3<0x96>(a, b, c), a ^ b ^ c);
        // mma and shfl.bfly in one warp: D against a plain product (exact: small integers).
        std::vector<float> d(32 * 4, 0.0f);
        std::vector<int> shuffled(32, -1);
        emulation::launch(warp_probe, dim3(1), dim3(32), d.data(), shuffled.data());
        for (int lane = 0; lane < 32; ++lane) {
            QCOMPARE(shuffled[std::size_t(lane)], (lane ^ 5) * 10);
            for (int e = 0; e < 4; ++e) {
                const int row = lane / 4 + (e >= 2 ? 8 : 0), col = 2 * (lane % 4) + (e & 1);
                float want = 0;
                for (int k = 0; k < 16; ++k)
                    want += probe_a(row, k) * probe_b(k, col);
                QCOMPARE(d[std::size_t(lane) * 4 + e], want);
            }
        }
    }

    void simtGemv() {
        // n = 37: not a multiple of a block's 16 or 8 rows. INT4 k = 300 (padded to 384, three
        // groups; element-wise x loads, k % 8 != 0); INT8 k = 200 (padded to 208; 128-bit x
        // loads).
        const HostWeight w4 = make_weight(WKind::Int4, 37, 300, 1);
        const HostWeight w8 = make_weight(WKind::Int8, 37, 200, 2);
        QStringList failures;
        for (int m : {1, 2, 3, 5, 8, 11}) {
            for (int splits : {1, 3}) {
                failures << check<WKind::Int4, __nv_bfloat16>(w4, m, splits, false, 10 + m);
                failures << check<WKind::Int8, __nv_bfloat16>(w8, m, splits, false, 20 + m);
            }
        }
        failures << check<WKind::Int4, __half>(w4, 3, 2, false, 30);
        failures << check<WKind::Int8, __half>(w8, 8, 2, false, 31);
        // Several chunks per lane (the next one's loads in flight during this one's
        // arithmetic): INT4 k = 3200 (100 chunks, 3 or 4 per lane in one slice) with groups of
        // 128 and 64, and of 96 (k = 3000 padded to 3072, three chunks a group); INT8 k = 1800
        // (113 chunks).
        const HostWeight w4long = make_weight(WKind::Int4, 20, 3200, 12);
        const HostWeight w4g64 = make_weight(WKind::Int4, 20, 3200, 13, 64);
        const HostWeight w4g96 = make_weight(WKind::Int4, 20, 3000, 14, 96);
        const HostWeight w8long = make_weight(WKind::Int8, 20, 1800, 15);
        for (int m : {1, 3}) {
            for (int splits : {1, 2}) {
                failures << check<WKind::Int4, __nv_bfloat16>(w4long, m, splits, false, 40 + m);
                failures << check<WKind::Int4, __nv_bfloat16>(w4g64, m, splits, false, 50 + m);
                failures << check<WKind::Int4, __half>(w4g96, m, splits, false, 60 + m);
                failures << check<WKind::Int8, __nv_bfloat16>(w8long, m, splits, false, 65 + m);
            }
        }
        // 16-bit weights (BF16 / FP16 tiers at small m): k = 200, 25 chunks of 8.
        const HostWeight wb = make_f16_weight<__nv_bfloat16>(37, 200, 6);
        const HostWeight wh = make_f16_weight<__half>(37, 200, 7);
        for (int m : {1, 2, 5}) {
            for (int splits : {1, 3}) {
                failures << check<WKind::F16, __nv_bfloat16>(wb, m, splits, false, 70 + m);
                failures << check<WKind::F16, __half>(wh, m, splits, false, 80 + m);
            }
        }
        // ... and 6 rows per warp (24 per block: the second block mostly past n = 37).
        failures << check<WKind::F16, __nv_bfloat16>(wb, 1, 3, false, 90, 6);
        failures << check<WKind::F16, __half>(wh, 1, 1, false, 91, 6);
        // INT8 at one row with 2 rows per warp (int8_gemv_rows; 8 per block: n = 37 ends in a
        // block's last warp but one): one and three slices, few and many chunks per lane.
        for (int splits : {1, 3}) {
            failures << check<WKind::Int8, __nv_bfloat16>(w8, 1, splits, false, 92 + splits, 2);
            failures << check<WKind::Int8, __half>(w8long, 1, splits, false, 93 + splits, 2);
        }
        failures.removeAll(QString());
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
    }

    void tensorCoreGemv() {
        // n = 136: a block takes 128 rows, so the second block is mostly past n. INT4 k = 968
        // (padded to 1024: eight rounds of 128, one group each); INT8 k = 488 (padded to 496:
        // eight rounds, the last one partly past the row). Eight rounds go round the kMmaStages
        // ring of weight slots twice in one slice, once in each of two.
        const HostWeight w4 = make_weight(WKind::Int4, 136, 968, 3);
        const HostWeight w8 = make_weight(WKind::Int8, 136, 488, 4);
        QStringList failures;
        for (int m : {1, 2, 8, 9, 16, 17, 33, 64}) {
            for (int splits : {1, 2}) {
                failures << check<WKind::Int4, __nv_bfloat16>(w4, m, splits, true, 40 + m);
                failures << check<WKind::Int8, __nv_bfloat16>(w8, m, splits, true, 50 + m);
            }
        }
        // One row of INT4 (mma_gemv_row_kernel, rounds of 512 bytes a row): n = 37 (an odd
        // row in the last tile); k = 3000 (three rounds, the last past k from 3000) in one and
        // two slices; groups of 256 (k = 2500: the third round holds four segments of eight)
        // and of 384 (three segments each: the group index is divided, not stepped); fp16.
        const HostWeight w4r = make_weight(WKind::Int4, 37, 3000, 5);
        const HostWeight w4r256 = make_weight(WKind::Int4, 37, 2500, 16, 256);
        const HostWeight w4r384 = make_weight(WKind::Int4, 37, 2304, 17, 384);
        for (int splits : {1, 2}) {
            failures << check<WKind::Int4, __nv_bfloat16>(w4r, 1, splits, true, 63 + splits);
            failures << check<WKind::Int4, __half>(w4r, 1, splits, true, 65 + splits);
            failures << check<WKind::Int4, __nv_bfloat16>(w4r256, 1, splits, true, 67 + splits);
            failures << check<WKind::Int4, __nv_bfloat16>(w4r384, 1, splits, true, 69 + splits);
        }
        // Its shape with every round of a slice in flight from the start (kRowWholeDepth; the
        // engine runs it on slices of up to kRowWholeRounds): 3 rounds in one slice, 2 + 1 in
        // two; 4 rounds (the ring exactly full) and 2.
        const HostWeight w4r4 = make_weight(WKind::Int4, 37, 4096, 20);
        const HostWeight w4r2 = make_weight(WKind::Int4, 37, 2048, 21);
        for (int splits : {1, 2}) {
            failures << check<WKind::Int4, __nv_bfloat16>(w4r, 1, splits, true, 74 + splits, 0,
                                                          kRowWholeDepth);
            failures << check<WKind::Int4, __half>(w4r, 1, splits, true, 76 + splits, 0,
                                                   kRowWholeDepth);
        }
        failures << check<WKind::Int4, __nv_bfloat16>(w4r4, 1, 1, true, 79, 0, kRowWholeDepth);
        failures << check<WKind::Int4, __nv_bfloat16>(w4r2, 1, 1, true, 80, 0, kRowWholeDepth);
        // Rows of whole rounds and x of whole 1024-element blocks (k = 4096 and 2048) at both
        // shapes take the kernel without bounds checks; k = 8192 in three slices (3 + 3 + 2).
        const HostWeight w4r8 = make_weight(WKind::Int4, 37, 8192, 23);
        for (int splits : {1, 2}) {
            failures << check<WKind::Int4, __nv_bfloat16>(w4r4, 1, splits, true, 81 + splits);
            failures << check<WKind::Int4, __half>(w4r2, 1, splits, true, 83 + splits);
        }
        failures << check<WKind::Int4, __nv_bfloat16>(w4r8, 1, 3, true, 86);
        failures << check<WKind::Int4, __half>(w4, 9, 2, true, 60);
        failures << check<WKind::Int4, __half>(w4, 33, 1, true, 61);
        // Several rounds per group in the batch kernel (its lanes copy one tile's scale each, and
        // the half of the word steps per group; k a multiple of 8, as the kernel needs): groups of
        // 256 and 384, one x tile and four.
        const HostWeight w4b256 = make_weight(WKind::Int4, 37, 2304, 19, 256);
        failures << check<WKind::Int4, __nv_bfloat16>(w4b256, 9, 2, true, 71);
        failures << check<WKind::Int4, __half>(w4r384, 33, 1, true, 72);
        failures << check<WKind::Int4, __nv_bfloat16>(w4r384, 64, 2, true, 73);
        failures << check<WKind::Int8, __half>(w8, 17, 2, true, 62);
        failures.removeAll(QString());
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
    }

    // The one-row INT4 GEMV with x in registers (mma_gemv_row_xreg_kernel) against the double
    // reference: k = 3000 (three rounds, the last past k) with 4 rounds a slice (one warp
    // idle), 2 (two slices, the second with an idle warp) and 1 (three slices, four row
    // groups); n = 37 (the last block mostly past n); one block of 48 rows (each warp's ring
    // of quads goes round three times); groups of 256 and 384; whole rounds (k = 4096, 8192 in
    // two and four slices); bf16 and fp16; SwiGLU in its store and in the split-K sum.
    void xregGemv() {
        const HostWeight w3 = make_weight(WKind::Int4, 37, 3000, 5);
        const HostWeight w256 = make_weight(WKind::Int4, 37, 2500, 16, 256);
        const HostWeight w384 = make_weight(WKind::Int4, 37, 2304, 17, 384);
        const HostWeight w4 = make_weight(WKind::Int4, 37, 4096, 20);
        const HostWeight w8 = make_weight(WKind::Int4, 37, 8192, 23);
        const HostWeight wg = make_weight(WKind::Int4, 40, 3000, 18);
        QStringList failures;
        using B = __nv_bfloat16;
        failures << check<WKind::Int4, B>(w3, 1, 1, true, 101, 0, kRowDepth, {4, 16});
        failures << check<WKind::Int4, __half>(w3, 1, 1, true, 102, 0, kRowDepth, {4, 48});
        failures << check<WKind::Int4, B>(w3, 1, 2, true, 103, 0, kRowDepth, {2, 8});
        failures << check<WKind::Int4, __half>(w3, 1, 2, true, 104, 0, kRowDepth, {2, 24});
        failures << check<WKind::Int4, B>(w3, 1, 3, true, 105, 0, kRowDepth, {1, 16});
        failures << check<WKind::Int4, B>(w256, 1, 2, true, 106, 0, kRowDepth, {2, 16});
        failures << check<WKind::Int4, B>(w384, 1, 1, true, 107, 0, kRowDepth, {4, 12});
        failures << check<WKind::Int4, B>(w4, 1, 1, true, 108, 0, kRowDepth, {4, 20});
        failures << check<WKind::Int4, __half>(w4, 1, 2, true, 109, 0, kRowDepth, {2, 40});
        failures << check<WKind::Int4, B>(w8, 1, 2, true, 110, 0, kRowDepth, {4, 16});
        failures << check<WKind::Int4, __half>(w8, 1, 4, true, 111, 0, kRowDepth, {2, 8});
        failures << check_swiglu<WKind::Int4, B>(wg, 1, 1, true, 112, {4, 16});
        failures << check_swiglu<WKind::Int4, __half>(wg, 1, 2, true, 113, {2, 8});
        failures << check_norm_in<B, 1>(40, 2048, 1, 114, {2, 8});
        failures << check_norm_in<__half, 1>(40, 2048, 1, 115, {4, 12});
        failures << check_norm_in<B, 2>(24, 4096, 1, 116, {4, 8});
        failures << check_norm_in<B, 2>(24, 4096, 2, 117, {2, 16});
        failures << check_norm_in<B, 1>(38, 1000, 1, 118, {1, 16});
        failures.removeAll(QString());
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
    }

    // xreg_shape: the fewest idle warps (the larger rounds a slice on a tie), slices within the
    // limit, whole quads per row group, every row covered, at most one wave of four blocks per
    // multiprocessor, two where four leave fewer than three quads a warp, and no shape where no
    // slicing fits.
    void xregShape() {
        struct Case {
            int rounds, n, sms;
            long max_slices;
            int want_r;
        };
        for (const Case c :
             {Case{4, 28672, 132, 32, 4}, Case{14, 4096, 132, 32, 2}, Case{2, 12288, 132, 32, 2},
              Case{6, 2048, 132, 32, 2}, Case{3, 37, 8, 32, 1}, Case{5, 4096, 132, 32, 1},
              Case{5, 4096, 132, 3, 2}, Case{1, 8, 132, 1, 1}}) {
            const XregShape s = xreg_shape(c.rounds, c.n, c.sms, c.max_slices);
            QCOMPARE(s.rounds_per_split, c.want_r);
            QCOMPARE(s.slices, (c.rounds + c.want_r - 1) / c.want_r);
            QVERIFY(s.slices <= c.max_slices);
            const int quad_rows = 4 * kWarps / s.rounds_per_split;
            QCOMPARE(s.block_rows % quad_rows, 0);
            QVERIFY(s.block_rows <= kXregMaxBlockRows);
            QVERIFY(long(s.row_blocks) * s.block_rows >= c.n);
            QVERIFY(long(s.row_blocks - 1) * s.block_rows < c.n);
            const long blocks = long(s.row_blocks) * s.slices;
            if (s.block_rows > quad_rows &&
                s.block_rows < kXregMaxBlockRows / quad_rows * quad_rows)
                QVERIFY(blocks <= long{kRowMinBlocks} * c.sms);
        }
        // The 7B's gate/up: 56 rows a block (14 quads a warp); its o layer: 16 (four quads a
        // warp at two blocks a multiprocessor, where four would leave two).
        QCOMPARE(xreg_shape(4, 28672, 132, 32).block_rows, 56);
        QCOMPARE(xreg_shape(4, 4096, 132, 32).block_rows, 16);
        QCOMPARE(xreg_shape(4, 4096, 132, 32, 0, 4).block_rows, 8);
        QCOMPARE(xreg_shape(14, 4096, 132, 3).slices, 0);
        QCOMPARE(xreg_shape(14, 4096, 132, 1).slices, 0);
    }

    // The row-count buckets of the GEMMs' algorithms (gemm_cuda.h): 1, 2, 4, 8, 16, then
    // alternately 1.5x and 4/3x (24, 32, 48, 64, ...); every m maps to the smallest bucket that
    // holds it, and gemm_buckets lists them up to the one holding max_m.
    void gemmBuckets() {
        const std::vector<int> want = {1,   2,   4,   8,   16,  24,  32,   48,   64,   96,
                                       128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072};
        QCOMPARE(cuda::gemm_buckets(3000), want);
        QCOMPARE(cuda::gemm_buckets(1), std::vector<int>{1});
        QCOMPARE(cuda::gemm_buckets(1024).back(), 1024);
        QCOMPARE(cuda::gemm_buckets(1025).back(), 1536);
        int prev = 0;
        for (int m = 1; m <= 5000; ++m) {
            const int b = cuda::gemm_bucket(m);
            QVERIFY2(b >= m && b >= prev, qPrintable(QString("m=%1 -> %2").arg(m).arg(b)));
            // the smallest: the bucket below it (if any) is < m
            const std::vector<int> all = cuda::gemm_buckets(b);
            QVERIFY(all.back() == b && (all.size() == 1 || all[all.size() - 2] < m));
            prev = b;
        }
    }

    // The device's INT4 nibble order (linear_cuda.h): nibble p of a word holds element
    // 2 (p % 4) + p / 4, so that nibbles p and p + 4 are the adjacent elements 2p, 2p + 1.
    void int4DeviceOrder() {
        QCOMPARE(int4_device_word(0x76543210u), 0x75316420u);
        QCOMPARE(int4_device_word(0x0000000Fu), 0x0000000Fu);  // element 0 stays at nibble 0
        QCOMPARE(int4_device_word(0x000000F0u), 0x000F0000u);  // element 1 -> nibble 4
        QCOMPARE(int4_device_word(0xF0000000u), 0xF0000000u);  // element 7 stays at nibble 7
    }

    // The split-K of the four-tile tensor-core GEMV: one wave of resident blocks, never a partial
    // second one; partial sums paid for; the caps on rounds, 32 slices and the workspace.
    void waveSplitCount() {
        constexpr std::size_t kAny = std::size_t(1) << 40;
        // 7B gate/up at 64 rows, 224 blocks, 264 resident (2 per multiprocessor): one slice
        // (two would need a second, partial wave for the same rounds per block).
        QCOMPARE(mma_wave_split_count(28672, 64, 128, 32, 264, kAny), 1);
        // Its down projection, 32 blocks of 112 rounds: 8 slices fill 256 of 264 resident
        // blocks; 9 would spill 24 into a second wave.
        QCOMPARE(mma_wave_split_count(4096, 64, 128, 112, 264, kAny), 8);
        // With 3 resident per multiprocessor (396) and 64 rounds (INT8 gate/up), one slice
        // leaves 43 % of them idle: more slices, over whole waves as near as they come.
        const int s8 = mma_wave_split_count(28672, 64, 128, 64, 396, kAny);
        QVERIFY2(s8 > 1 && s8 <= 5, qPrintable(QString::number(s8)));
        // A grid of several waves already: one slice.
        QCOMPARE(mma_wave_split_count(128256, 64, 128, 32, 264, kAny), 1);
        // Caps: rounds / 2, 32, and the partial sums the workspace holds.
        QCOMPARE(mma_wave_split_count(128, 64, 128, 6, 264, kAny), 3);
        QCOMPARE(mma_wave_split_count(128, 1, 128, 1000, 264, kAny), 32);
        QCOMPARE(mma_wave_split_count(128, 64, 128, 112, 264, 5 * 64 * 128 * sizeof(float)), 5);
        QCOMPARE(mma_wave_split_count(128, 64, 128, 112, 264, 0), 1);
        // Costly partial sums (m · n large against the rounds): fewer slices than would fill the
        // wave.
        QVERIFY(mma_wave_split_count(65536, 64, 128, 8, 264 * 4, kAny) < 2);
    }

    // linear_swiglu / linear_add_rms_norm's kernels: SwiGLU in the SIMT GEMV's store and in the
    // split-K sum; the residual add and RMSNorm in the split-K sum (n = 40 and 136: whole
    // 8-element chunks, one per thread and threads past n / 8).
    void fusedEpilogues() {
        const HostWeight w4 = make_weight(WKind::Int4, 40, 300, 8);
        const HostWeight w8 = make_weight(WKind::Int8, 40, 200, 9);
        const HostWeight wb = make_f16_weight<__nv_bfloat16>(40, 200, 10);
        const HostWeight wt = make_weight(WKind::Int4, 136, 968, 11);
        QStringList failures;
        for (int m : {1, 2, 5}) {
            for (int splits : {1, 3}) {
                failures << check_swiglu<WKind::Int4, __nv_bfloat16>(w4, m, splits, false, m);
                failures << check_swiglu<WKind::Int8, __half>(w8, m, splits, false, 10 + m);
                failures << check_swiglu<WKind::F16, __nv_bfloat16>(wb, m, splits, false, 20 + m);
            }
            failures << check_add_rms_norm<WKind::Int4, __nv_bfloat16>(w4, m, 3, false, 30 + m);
            failures << check_add_rms_norm<WKind::Int8, __half>(w8, m, 2, false, 40 + m);
        }
        failures << check_swiglu<WKind::Int4, __nv_bfloat16>(wt, 9, 2, true, 50);
        // Over 16 rows on the tensor cores: SwiGLU in the kernel's store at one slice (two and
        // four x tiles, rows past m), in the sum at two.
        failures << check_swiglu<WKind::Int4, __nv_bfloat16>(wt, 33, 1, true, 54);
        failures << check_swiglu<WKind::Int4, __half>(wt, 20, 1, true, 55);
        failures << check_swiglu<WKind::Int8, __half>(w8, 64, 1, true, 56);
        failures << check_swiglu<WKind::Int4, __nv_bfloat16>(wt, 40, 2, true, 57);
        // INT4 at one row on the tensor cores: SwiGLU in its store (one slice) or in the sum.
        const HostWeight wr = make_weight(WKind::Int4, 40, 3000, 18);
        failures << check_swiglu<WKind::Int4, __nv_bfloat16>(wr, 1, 1, true, 52);
        failures << check_swiglu<WKind::Int4, __half>(wr, 1, 2, true, 53);
        failures << check_add_rms_norm<WKind::Int4, __half>(wt, 17, 2, true, 51);
        failures.removeAll(QString());
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
    }

    // The one-row INT4 GEMV making its x from the residual add and RMSNorm before it
    // (check_norm_in), in one and two k-slices: k = 2048 (one chunk a norm thread), 4096 (two),
    // 1000 (x not whole rounds, chunks past the last whole group of 8), bf16 and fp16.
    void normInput() {
        QStringList failures;
        for (int splits : {1, 2}) {
            failures << check_norm_in<__nv_bfloat16, 1>(40, 2048, splits, 90 + splits);
            failures << check_norm_in<__half, 1>(40, 2048, splits, 92 + splits);
            failures << check_norm_in<__nv_bfloat16, 2>(24, 4096, splits, 94 + splits);
            failures << check_norm_in<__nv_bfloat16, 1>(38, 1000, splits, 96 + splits);
        }
        failures.removeAll(QString());
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
    }
};

QTEST_GUILESS_MAIN(TestLinearKernelsEmulated)
#include "test_linear_kernels_emulated.moc"
