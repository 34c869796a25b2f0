// Linear layers on the GPU: cublasLt GEMMs for 16-bit weights, weight-only GEMV kernels for
// INT8/INT4 at small batch, dequantise + GEMM for INT8/INT4 at large batch. See linear_cuda.h.

#include "cuda/linear_cuda.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda/gemm_cuda.h"
#include "cuda/linear_kernels.cuh"
#include "cuda/ops_cuda.h"
#include "mtdesk/error.h"

namespace mtdesk::cuda {
namespace {

using namespace detail;

// ---- Errors -----------------------------------------------------------------------------------

void check_cuda(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
        throw Error(std::string("CUDA: ") + what + " failed: " + cudaGetErrorString(status));
}

void* device_alloc(std::size_t bytes, const std::string& what) {
    if (bytes == 0) return nullptr;
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, bytes);
    if (status != cudaSuccess) {
        cudaGetLastError();  // an allocation failure is not sticky: clear it
        throw Error("CUDA: cudaMalloc of " + std::to_string(bytes) + " bytes for " + what +
                    " failed: " + cudaGetErrorString(status));
    }
    return p;
}

std::string shape(int n, int k) {
    return "[" + std::to_string(n) + ", " + std::to_string(k) + "]";
}

int current_sm_major() {
    int device = 0, major = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
               "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
    return major;
}

/// Fills in the device figures a context leaves at 0 (ask the current device): once per context.
void know_device(LinearContext& ctx) {
    if (ctx.sm_count == 0) ctx.sm_count = current_sm_count();
    if (ctx.sm_major == 0) ctx.sm_major = current_sm_major();
}

// ---- Host conversions -------------------------------------------------------------------------

uint16_t bf16_bits(float f) {
    const uint32_t u = std::bit_cast<uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // NaN
    return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // nearest even
}

// ---- Host side --------------------------------------------------------------------------------

bool is_int(WeightFormat f) {
    return f == WeightFormat::INT8 || f == WeightFormat::INT4;
}

GemvArgs args_of(const DeviceLinear& w) {
    GemvArgs a{};
    a.w = static_cast<const uint8_t*>(w.data());
    a.scales = w.scales();
    a.row_bytes = w.row_bytes();
    a.chunks = static_cast<int>(w.row_bytes() / kChunkBytes);
    if (w.format() == WeightFormat::INT4) {
        a.groups = w.k_padded() / w.group();
        a.group_chunks = w.group() / 32;
        a.group_step = gemv_group_step(a.group_chunks);
    } else {
        a.groups = 1;
        a.group_chunks = 1;
    }
    a.n = w.n();
    a.k = w.k();
    return a;
}

template <typename T>
void sum_splits(const float* partial, T* y, int splits, std::size_t count, cudaStream_t stream) {
    const int blocks = static_cast<int>(std::min<std::size_t>((count + 255) / 256, 4096));
    launch(sum_splits_kernel<T>, dim3(blocks), dim3(256), 0, stream, partial, y, splits, count);
    check_cuda(cudaGetLastError(), "split-K sum kernel launch");
}

/// What follows a layer's product y in linear_swiglu() / linear_add_rms_norm(): fused into
/// the GEMV's store or split-K sum where the path has one, else run on y afterwards.
struct Epilogue {
    enum class Kind { None, SwiGlu, AddRmsNorm };
    Kind kind = Kind::None;
    void* act = nullptr;            ///< SwiGlu: [m, n / 2]
    void* residual = nullptr;       ///< AddRmsNorm: [m, n], updated in place
    const void* pending = nullptr;  ///< AddRmsNorm: [m, n] added to residual first, or null
    const void* weight = nullptr;   ///< AddRmsNorm: the norm's weight [n]
    void* out = nullptr;            ///< AddRmsNorm: [m, n]
    float eps = 0.0f;

    /// The same epilogue for the rows from m0 on of a layer of n outputs.
    template <typename T>
    Epilogue from_row(int m0, int n) const {
        Epilogue e = *this;
        if (act) e.act = static_cast<T*>(act) + static_cast<std::size_t>(m0) * (n / 2);
        if (residual) e.residual = static_cast<T*>(residual) + static_cast<std::size_t>(m0) * n;
        if (pending) e.pending = static_cast<const T*>(pending) + static_cast<std::size_t>(m0) * n;
        if (out) e.out = static_cast<T*>(out) + static_cast<std::size_t>(m0) * n;
        return e;
    }
};

/// Runs `e` on a finished y [m, n] as separate kernels (ops_cuda.h).
template <typename T>
void finish_unfused(const Epilogue& e, const T* y, int m, int n, cudaStream_t stream) {
    switch (e.kind) {
        case Epilogue::Kind::None:
            return;
        case Epilogue::Kind::SwiGlu:
            swiglu<T>(y, static_cast<T*>(e.act), m, n / 2, GateUp::Pairs, stream);
            return;
        case Epilogue::Kind::AddRmsNorm:
            // residual = T(residual + pending): the bias kernel over one row of m · n.
            if (e.pending)
                add_bias<T>(static_cast<T*>(e.residual), static_cast<const T*>(e.pending), 1, m * n,
                            stream);
            add_rms_norm<T>(static_cast<T*>(e.residual), y, static_cast<const T*>(e.weight),
                            static_cast<T*>(e.out), m, n, e.eps, stream);
            return;
    }
}

bool aligned16(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

/// Sums the split-K partials [splits, m, n] into y, or straight into `e`'s outputs where a
/// fused kernel does both (SwiGLU always; the residual add and RMSNorm up to kNormMaxSplits
/// splits, for rows of whole 16-byte chunks up to 8 · 4 · kNormThreads elements, as
/// add_rms_norm()'s register kernel).
template <typename T>
void finish_splits(const float* partial, T* y, int splits, int m, int n, const Epilogue& e,
                   cudaStream_t stream) {
    const std::size_t count = static_cast<std::size_t>(m) * n;
    if (e.kind == Epilogue::Kind::SwiGlu) {
        const int blocks = static_cast<int>(std::min<std::size_t>((count / 2 + 255) / 256, 4096));
        launch(sum_splits_swiglu_kernel<T>, dim3(blocks), dim3(256), 0, stream, partial,
               static_cast<T*>(e.act), splits, count / 2);
        check_cuda(cudaGetLastError(), "split-K sum + SwiGLU kernel launch");
        return;
    }
    const int per_thread = (n / 8 + kNormThreads - 1) / kNormThreads;
    if (e.kind == Epilogue::Kind::AddRmsNorm && splits <= kNormMaxSplits && n % 8 == 0 &&
        per_thread <= 4 && aligned16(e.residual) && aligned16(e.pending) && aligned16(e.weight) &&
        aligned16(e.out)) {
        const bool p = e.pending != nullptr;
        auto kernel = per_thread == 1   ? (p ? sum_splits_add_rms_norm_kernel<T, 1, true>
                                             : sum_splits_add_rms_norm_kernel<T, 1>)
                      : per_thread == 2 ? (p ? sum_splits_add_rms_norm_kernel<T, 2, true>
                                             : sum_splits_add_rms_norm_kernel<T, 2>)
                                        : (p ? sum_splits_add_rms_norm_kernel<T, 4, true>
                                             : sum_splits_add_rms_norm_kernel<T, 4>);
        launch(kernel, dim3(m), dim3(kNormThreads), 0, stream, partial, splits, m, n,
               static_cast<T*>(e.residual), static_cast<const T*>(e.pending),
               static_cast<const T*>(e.weight), static_cast<T*>(e.out), e.eps);
        check_cuda(cudaGetLastError(), "split-K sum + RMSNorm kernel launch");
        return;
    }
    sum_splits(partial, y, splits, count, stream);
    finish_unfused(e, y, m, n, stream);
}

/// What follows a GEMV kernel: the split-K sum (with `e` fused where it can be) for several
/// slices, else `e` as separate kernels unless the GEMV already applied it (`stored`).
template <typename T>
void finish_gemv(const float* partial, T* y, int splits, int m, int n, const Epilogue& e,
                 bool stored, cudaStream_t stream) {
    if (splits > 1)
        finish_splits(partial, y, splits, m, n, e, stream);
    else if (!stored)
        finish_unfused(e, y, m, n, stream);
}

template <WKind K, typename T, int R, int MT>
void launch_gemv_tile(const GemvArgs& a, bool vec_x, dim3 grid, cudaStream_t stream) {
    if (vec_x)
        launch(gemv_kernel<K, T, R, MT, true>, grid, dim3(kWarps * 32), 0, stream, a);
    else
        launch(gemv_kernel<K, T, R, MT, false>, grid, dim3(kWarps * 32), 0, stream, a);
}

/// The tensor-core GEMV handles up to 16 rows of x with each warp loading its own x (one tile),
/// and more in slices of up to 64 (four tiles) with x staged in shared memory per block; it
/// needs sm_80, x rows of whole 16-byte groups, and INT4 groups of whole rounds.
constexpr int kMmaMaxM = 64;
constexpr int kMmaWarpXMaxM = 16;

/// Rows of x from which the tensor-core GEMV beats the SIMT one (H200, bench_linear): INT4
/// from one row, where the one-row kernel (mma_gemv_row_kernel) is as fast on the largest
/// layer and faster on the others (figures at kRowTiles); INT8 from three: at one and two rows
/// the SIMT kernel wins on the large layers (28672 × 4096, µs per call SIMT vs tensor cores:
/// m = 1, 2: 31.3 vs 49.8, 42.7 vs 48.5).
int mma_min_m(WeightFormat f) {
    return f == WeightFormat::INT4 ? 1 : 3;
}

/// Output rows per warp of the SIMT GEMV reading 16-bit weights for m rows of x, or 0 where
/// cuBLAS is the better choice. The GEMV (which, unlike cuBLAS, starts under programmatic
/// dependent launch and fetches its first weights while the previous kernel finishes) takes
/// m <= ctx.f16_gemv_max_m on rows of whole 16-byte chunks, where its warps with their split-K
/// fill 90-100 % of one wave of 16 per multiprocessor with 4 rows per warp or, failing that
/// at one row of x, with 6, or where it takes three waves or more (ctx.f16_gemv_rows forces
/// the rows, ctx.f16_gemv_any_shape every shape). Measured with bench_linear on an H200 at m = 1
/// (µs, cuBLAS vs GEMV): one wave with 4 rows 4096 × 4096 12.6 vs 10.7, 2048 × 6144 10.5 vs 8.4,
/// 2048 × 2048 6.1 vs 4.5, 4096 × 14336 30.9 vs 30.5; with 6 rows 12288 × 2048 15.0 vs 12.9 (15.8
/// with 4), 3072 × 2048 6.1 vs 5.7, 6144 × 4096 14.8 vs 14.8 (17.8 with 4).
int f16_gemv_rows(const DeviceLinear& w, int m, const LinearContext& ctx, int sm_count) {
    if (is_int(w.format()) || m > ctx.f16_gemv_max_m || w.k() % 8 != 0) return 0;
    const int base = gemv_shape(m).r;
    if (ctx.f16_gemv_rows > 0) return m == 1 ? ctx.f16_gemv_rows : base;
    const int chunks = static_cast<int>(w.row_bytes() / kChunkBytes);
    const long wave = kWaveWarpsPerSm * sm_count;
    auto used = [&](int r) {
        const long warps = (static_cast<long>(w.n()) + r - 1) / r;
        return warps * split_count(w.n(), m, r, chunks, sm_count, static_cast<std::size_t>(-1));
    };
    for (const int r : {base, m == 1 ? 6 : base})
        if (used(r) <= wave && 10 * used(r) >= 9 * wave) return r;
    // Three waves or more: the last one's tail is a small share.
    if (used(base) >= 3 * wave) return base;
    return ctx.f16_gemv_any_shape ? base : 0;
}

bool use_mma_gemv(const DeviceLinear& w, const void* x, int m, const LinearContext& ctx) {
    const int min_m = ctx.tensor_core_min_m > 0 ? ctx.tensor_core_min_m : mma_min_m(w.format());
    if (!ctx.tensor_core_gemv || ctx.sm_major < 8 || m < min_m) return false;
    if (w.k() % 8 != 0 || reinterpret_cast<std::uintptr_t>(x) % 16 != 0) return false;
    return w.format() != WeightFormat::INT4 || w.group() % 128 == 0;
}

int mma_rounds(const DeviceLinear& w) {
    return static_cast<int>((w.row_bytes() + kRoundBytes - 1) / kRoundBytes);
}

/// Weight tiles of 8 rows per warp: 4 (four weight loads in flight per thread, each x fragment
/// used four times; 8 tiles would need over 200 registers).
int mma_tiles_n(int) {
    return 4;
}

template <WKind K, typename T, int kTiles, int kN, bool kUpper, bool kSmemX>
constexpr auto kMmaKernel = mma_gemv_kernel<K, T, kTiles, kN, kUpper, kSmemX, kMmaStages<kTiles>>;
template <WKind K, int kTiles, int kN, bool kSmemX>
constexpr std::size_t kMmaSmemBytes = MmaSmem<K, kTiles, kN, kSmemX, kMmaStages<kTiles>>::bytes();

/// Opts the tensor-core GEMV in to its shared memory where that is above 48 KiB and returns
/// how many blocks of it a multiprocessor holds at once; asked once per kernel (the engine
/// drives one device).
template <WKind K, typename T, int kTiles, int kN, bool kUpper, bool kSmemX>
int mma_resident_blocks() {
    static const int blocks = [] {
        constexpr auto kernel = kMmaKernel<K, T, kTiles, kN, kUpper, kSmemX>;
        constexpr std::size_t bytes = kMmaSmemBytes<K, kTiles, kN, kSmemX>;
        if constexpr (bytes > 48 * 1024)
            check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes)),
                       "cudaFuncSetAttribute (tensor-core GEMV shared memory)");
        int n = 0;
        check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, kWarps * 32, bytes),
                   "cudaOccupancyMaxActiveBlocksPerMultiprocessor (tensor-core GEMV)");
        return std::max(n, 1);
    }();
    return blocks;
}

template <WKind K, typename T, int kTiles, int kN, bool kUpper, bool kSmemX>
void launch_mma_kernel(const MmaGemvArgs& a, dim3 grid, cudaStream_t stream) {
    mma_resident_blocks<K, T, kTiles, kN, kUpper, kSmemX>();  // the opt-in, once
    launch(kMmaKernel<K, T, kTiles, kN, kUpper, kSmemX>, grid, dim3(kWarps * 32),
           kMmaSmemBytes<K, kTiles, kN, kSmemX>, stream, a);
}

template <WKind K, typename T, int kTiles, int kN>
void launch_mma(const MmaGemvArgs& a, bool upper, dim3 grid, cudaStream_t stream) {
    if constexpr (kTiles > 1)  // x staged in shared memory; every tile has its upper half
        launch_mma_kernel<K, T, kTiles, kN, true, true>(a, grid, stream);
    else if (upper)
        launch_mma_kernel<K, T, 1, kN, true, false>(a, grid, stream);
    else
        launch_mma_kernel<K, T, 1, kN, false, false>(a, grid, stream);
}

/// Rounds of kRowRoundBytes in a row of `w` (the last may be partial).
int row_rounds(const DeviceLinear& w) {
    return static_cast<int>((w.row_bytes() + kRowRoundBytes - 1) / kRowRoundBytes);
}

/// The k-slices of the one-row INT4 GEMV of `w` in mma_gemv_row_kernel: the SIMT GEMV's
/// split-K rule (one wave of 16 warps per multiprocessor at most).
Slices row_gemv_slices(const DeviceLinear& w, const LinearContext& ctx) {
    const int rounds = row_rounds(w);
    const int chunks = static_cast<int>(w.row_bytes() / kChunkBytes);
    const int splits = split_count(w.n(), 1, kRowWarpRows<kRowTiles>, chunks, ctx.sm_count,
                                   ctx.workspace ? ctx.workspace_bytes : 0);
    return slices_of(rounds, splits);
}

/// mma_gemv_row_xreg_kernel's shape for `w`, or slices 0 where ctx says not to run it, its
/// partial sums would not fit the workspace, or (Auto) mma_gemv_row_kernel is the faster. On an
/// H200 that is every layer where the x-in-registers kernel needs as many k-slices or more and
/// its warps walk fewer than 8 quads (bench_linear at one row, µs, x in registers / rounds per
/// warp: 7B gate/up 28672 × 4096 16.1 / 19.5 (14 quads), o 4096 × 4096 4.1 / 6.0 (one slice
/// against two), the output layers 128256 × 4096 66.6 / 81.7 and 120818 × 2048 34.6 / 40.9;
/// 7B qkv 6144 × 4096 6.4 / 6.1 (3 quads), down 4096 × 14336 12.0 / 11.3 (seven slices against
/// two), the 1.8B's other layers 2.4-6.3 / 2.1-6.4: docs/benchmarks.md).
XregShape row_gemv_xreg_shape(const DeviceLinear& w, const LinearContext& ctx) {
    using RowGemv = LinearContext::RowGemv;
    if (ctx.row_gemv == RowGemv::RoundsPerWarp) return {};
    const long fit = ctx.workspace ? splits_fitting(ctx.workspace_bytes, 1, w.n()) : 1;
    const XregShape xs = xreg_shape(row_rounds(w), w.n(), ctx.sm_count, fit,
                                    ctx.row_gemv_rounds_per_split, ctx.row_gemv_blocks_per_sm);
    if (xs.slices == 0 || ctx.row_gemv == RowGemv::XInRegisters) return xs;
    const int quads = xs.block_rows * xs.rounds_per_split / (4 * kWarps);
    return xs.slices < row_gemv_slices(w, ctx).used || quads >= 8 ? xs : XregShape{};
}

/// K-slices of the one-row INT4 GEMV of `w` as run_mma_gemv_row runs it.
int row_gemv_used_slices(const DeviceLinear& w, const LinearContext& ctx) {
    const XregShape xs = row_gemv_xreg_shape(w, ctx);
    return xs.slices > 0 ? xs.slices : row_gemv_slices(w, ctx).used;
}

// INT4 at one row of x: mma_gemv_row_xreg_kernel (or mma_gemv_row_kernel in
// row_gemv_slices()) and its SwiGLU store at one slice. With `norm`, each block makes x from it
// (kNormIn; x itself is not read).
template <typename T>
void run_mma_gemv_row(const DeviceLinear& w, const T* x, T* y, LinearContext& ctx,
                      cudaStream_t stream, const Epilogue& e, const NormIn* norm = nullptr) {
    MmaGemvArgs a{};
    a.g = args_of(w);
    a.g.x = x;
    a.g.y = y;
    a.g.m = 1;
    a.g.partial = static_cast<float*>(ctx.workspace);
    a.rounds = row_rounds(w);
    a.rounds_per_group = w.group() / 128;
    const XregShape xs = row_gemv_xreg_shape(w, ctx);
    if (xs.slices > 0) {
        a.rounds_per_split = xs.rounds_per_split;
        const bool fused_store = e.kind == Epilogue::Kind::SwiGlu && xs.slices == 1;
        a.g.act = fused_store ? e.act : nullptr;
        const dim3 grid(xs.row_blocks, xs.slices);
        const std::size_t smem =
            xreg_smem_bytes(w.k(), xs.rounds_per_split, xs.block_rows, norm != nullptr);
        if (norm)
            launch(mma_gemv_row_xreg_instance<T, true>(w.row_bytes(), w.k()), grid,
                   dim3(kWarps * 32), smem, stream, a, *norm, xs.block_rows);
        else
            launch(mma_gemv_row_xreg_instance<T>(w.row_bytes(), w.k()), grid, dim3(kWarps * 32),
                   smem, stream, a, NormIn{}, xs.block_rows);
        check_cuda(cudaGetLastError(), "one-row tensor-core GEMV kernel launch");
        finish_gemv(a.g.partial, y, xs.slices, 1, a.g.n, e, fused_store, stream);
        return;
    }
    const Slices sl = row_gemv_slices(w, ctx);
    a.rounds_per_split = sl.per;
    const int used_splits = sl.used;
    const bool fused_store = e.kind == Epilogue::Kind::SwiGlu && used_splits == 1;
    a.g.act = fused_store ? e.act : nullptr;
    const int block_rows = kWarps * kRowWarpRows<kRowTiles>;
    const dim3 grid((a.g.n + block_rows - 1) / block_rows, used_splits);
    // Slices of up to kRowWholeRounds rounds in a grid of one wave: all their rounds in flight
    // before pdl_wait(), while the kernel before finishes.
    const long blocks = static_cast<long>(grid.x) * grid.y;
    const bool whole =
        sl.per <= kRowWholeRounds && blocks <= long{kRowWholeMinBlocks} * ctx.sm_count;
    if (norm)
        launch(mma_gemv_row_instance<T, true>(w.row_bytes(), w.k(), whole), grid, dim3(kWarps * 32),
               norm_in_smem_bytes(w.k()), stream, a, *norm);
    else
        launch(mma_gemv_row_instance<T>(w.row_bytes(), w.k(), whole), grid, dim3(kWarps * 32), 0,
               stream, a, NormIn{});
    check_cuda(cudaGetLastError(), "one-row tensor-core GEMV kernel launch");
    finish_gemv(a.g.partial, y, used_splits, 1, a.g.n, e, fused_store, stream);
}

template <WKind K, typename T>
void run_mma_gemv(const DeviceLinear& w, const T* x, T* y, int m, LinearContext& ctx,
                  cudaStream_t stream, const Epilogue& e) {
    if constexpr (K == WKind::Int4) {
        if (m == 1) return run_mma_gemv_row(w, x, y, ctx, stream, e);
    }
    for (int m0 = 0; m0 < m; m0 += kMmaMaxM) {
        const int mm = std::min(kMmaMaxM, m - m0);
        const int kn = mma_tiles_n(mm);
        MmaGemvArgs a{};
        a.g = args_of(w);
        a.g.x = x + static_cast<std::size_t>(m0) * w.k();
        a.g.y = y + static_cast<std::size_t>(m0) * w.n();
        a.g.m = mm;
        a.g.partial = static_cast<float*>(ctx.workspace);
        a.rounds = mma_rounds(w);
        a.rounds_per_group = K == WKind::Int4 ? w.group() / 128 : 1;
        const std::size_t ws = ctx.workspace ? ctx.workspace_bytes : 0;
        // Up to 32 rows, about 16 warps per multiprocessor; above, the four-tile kernel's
        // estimate (mma_wave_split_count), with fewer resident blocks and costlier partial sums.
        const int splits =
            mm <= 32 ? mma_split_count(a.g.n, mm, 8 * kn, a.rounds, ctx.sm_count, ws)
                     : mma_wave_split_count(
                           a.g.n, mm, kWarps * 8 * kn, a.rounds,
                           mma_resident_blocks<K, T, 4, 4, true, true>() * ctx.sm_count, ws);
        const Slices sl = slices_of(a.rounds, splits);
        a.rounds_per_split = sl.per;
        const int used_splits = sl.used;
        const int block_rows = kWarps * 8 * kn;
        const dim3 grid((a.g.n + block_rows - 1) / block_rows, used_splits);
        // Over 16 rows, at one slice, the kernel stores SwiGLU itself.
        const Epilogue slice = e.from_row<T>(m0, a.g.n);
        const bool fused_store =
            e.kind == Epilogue::Kind::SwiGlu && used_splits == 1 && mm > kMmaWarpXMaxM;
        a.g.act = fused_store ? slice.act : nullptr;
        if (mm <= kMmaWarpXMaxM)
            launch_mma<K, T, 1, 4>(a, mm > 8, grid, stream);
        else if (mm <= 32)
            launch_mma<K, T, 2, 4>(a, true, grid, stream);
        else
            launch_mma<K, T, 4, 4>(a, true, grid, stream);
        check_cuda(cudaGetLastError(), "tensor-core GEMV kernel launch");
        finish_gemv(a.g.partial, static_cast<T*>(a.g.y), used_splits, mm, a.g.n, slice, fused_store,
                    stream);
    }
}

/// INT8 at one row of x: output rows per warp of the SIMT GEMV, 0 for gemv_shape's 4. Two for
/// rows of at most 2048 bytes in layers whose 4-row warps fill less than one wave of 16 per
/// multiprocessor: a lane then has at most four 16-byte chunks of a row, and twice the warps,
/// each half as long, hide more of the loads' latency (1.8B int8 batch 1, whose qkv and o
/// layers take it: 840–846 → 856–863 tok/s on an H200). Longer rows gain nothing or lose: the
/// 7B's qkv and o at 2 rows left a step unchanged, and with its down projection also at 2 the
/// step took 14 % longer.
int int8_gemv_rows(const DeviceLinear& w, int m, int sm_count) {
    const int r = gemv_shape(m).r;
    const bool few_warps = (static_cast<long>(w.n()) + r - 1) / r < kWaveWarpsPerSm * sm_count;
    return m == 1 && w.row_bytes() <= 2048 && few_warps ? 2 : 0;
}

/// `rows`: output rows per warp at one row of x (16-bit weights: 4 or 6, f16_gemv_rows; INT8:
/// 2, int8_gemv_rows); 0 = gemv_shape's.
template <WKind K, typename T>
void run_gemv(const DeviceLinear& w, const T* x, T* y, int m, LinearContext& ctx,
              cudaStream_t stream, const Epilogue& e, int rows = 0) {
    GemvArgs a = args_of(w);
    a.x = x;
    a.y = y;
    a.m = m;
    GemvShape s = gemv_shape(m);
    if (rows > 0 && s.mt == 1) s.r = rows;
    const int splits =
        split_count(a.n, m, s.r, a.chunks, ctx.sm_count, ctx.workspace ? ctx.workspace_bytes : 0);
    const Slices sl = slices_of(a.chunks, splits);
    a.chunks_per_split = sl.per;
    const int used_splits = sl.used;
    a.partial = static_cast<float*>(ctx.workspace);
    // One slice: the kernel applies SwiGLU as it stores (every shape has an even rows per warp).
    const bool fused_store = e.kind == Epilogue::Kind::SwiGlu && used_splits == 1;
    a.act = fused_store ? e.act : nullptr;
    const int rows_per_block = kWarps * s.r;
    const dim3 grid((a.n + rows_per_block - 1) / rows_per_block, used_splits);
    // 128-bit activation loads need whole, aligned 8-element groups in every row.
    const bool vec_x = a.k % 8 == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
    bool six_rows = false;  // only 16-bit weights use (and instantiate) 6 rows per warp
    if constexpr (K == WKind::F16) six_rows = s.mt == 1 && s.r == 6;
    if (six_rows) {
        if constexpr (K == WKind::F16) launch_gemv_tile<K, T, 6, 1>(a, vec_x, grid, stream);
    } else if (s.mt == 1 && s.r == 2) {
        if constexpr (K == WKind::Int8) launch_gemv_tile<K, T, 2, 1>(a, vec_x, grid, stream);
    } else if (s.mt == 1)
        launch_gemv_tile<K, T, 4, 1>(a, vec_x, grid, stream);
    else if (s.mt == 2)
        launch_gemv_tile<K, T, 4, 2>(a, vec_x, grid, stream);
    else if (s.mt == 4)
        launch_gemv_tile<K, T, 4, 4>(a, vec_x, grid, stream);
    else
        launch_gemv_tile<K, T, 2, 8>(a, vec_x, grid, stream);
    check_cuda(cudaGetLastError(), "GEMV kernel launch");
    finish_gemv(a.partial, y, used_splits, m, a.n, e, fused_store, stream);
}

template <typename T>
constexpr cudaDataType_t cuda_type() {
    return std::is_same_v<T, __nv_bfloat16> ? CUDA_R_16BF : CUDA_R_16F;
}

// Row-major y [m, n] (row stride ldy) = x [m, k] · A [n, k]ᵀ (row stride lda), through
// cublasLt with one algorithm per bucket of m (gemm_cuda.h).
template <typename T>
void gemm(LinearContext& ctx, cudaStream_t stream, const void* a, int lda, int n, const T* x, int m,
          int k, T* y, int ldy) {
    if (!ctx.gemm_plans) ctx.gemm_plans = std::make_unique<GemmPlans>();
    ctx.gemm_plans->run(cuda_type<T>(), a, lda, n, x, m, k, y, ldy, ctx.gemm_workspace,
                        ctx.gemm_workspace ? ctx.gemm_workspace_bytes : 0, stream);
}

template <bool kInt4, typename T>
void run_dequant_gemm(const DeviceLinear& w, const T* x, T* y, int m, LinearContext& ctx,
                      cudaStream_t stream) {
    const std::size_t row_bytes = static_cast<std::size_t>(w.k_padded()) * sizeof(T);
    const std::size_t fit = ctx.workspace ? ctx.workspace_bytes / row_bytes : 0;
    if (fit == 0)
        throw Error("linear: the workspace (" + std::to_string(ctx.workspace_bytes) +
                    " bytes) cannot hold one dequantised row of a " + format_name(w.format()) +
                    " weight " + shape(w.n(), w.k()) + " (" + std::to_string(row_bytes) +
                    " bytes); linear_workspace_bytes() gives what it needs");
    if (reinterpret_cast<std::uintptr_t>(ctx.workspace) % 16 != 0)
        throw Error("linear: the workspace is not 16-byte aligned");
    int tile = static_cast<int>(std::min<std::size_t>(fit, static_cast<std::size_t>(w.n())));
    if (tile < w.n() && tile >= 128) tile = tile / 128 * 128;  // keep GEMM tiles whole
    GemvArgs a = args_of(w);
    T* ws = static_cast<T*>(ctx.workspace);
    for (int r0 = 0; r0 < w.n(); r0 += tile) {
        const int rows = std::min(tile, w.n() - r0);
        const std::size_t units = static_cast<std::size_t>(rows) * (w.k_padded() / 8);
        const int blocks = static_cast<int>(std::min<std::size_t>((units + 255) / 256, 65535));
        dequantize_kernel<kInt4, T><<<blocks, 256, 0, stream>>>(a, w.k_padded(), r0, rows, ws);
        check_cuda(cudaGetLastError(), "dequantisation kernel launch");
        gemm<T>(ctx, stream, ws, w.k_padded(), rows, x, m, w.k(), y + r0, w.n());
    }
}

}  // namespace

// ---- DeviceLinear -----------------------------------------------------------------------------

const char* format_name(WeightFormat format) noexcept {
    switch (format) {
        case WeightFormat::BF16:
            return "bf16";
        case WeightFormat::FP16:
            return "fp16";
        case WeightFormat::INT8:
            return "int8";
        case WeightFormat::INT4:
            return "int4";
    }
    return "?";
}

DeviceLinear DeviceLinear::allocate(WeightFormat format, int n, int k, int k_padded, int group,
                                    std::size_t row_bytes, std::size_t scale_count) {
    DeviceLinear d;
    d.format_ = format;
    d.n_ = n;
    d.k_ = k;
    d.k_padded_ = k_padded;
    d.group_ = group;
    d.row_bytes_ = row_bytes;
    const std::string what = std::string(format_name(format)) + " weight " + shape(n, k);
    // The one-row INT4 GEMV (mma_gemv_row_kernel) indexes the scales with 32 bits.
    if (scale_count > UINT32_MAX)
        throw Error("linear: " + what + " has " + std::to_string(scale_count) +
                    " scales, more than the GEMV kernels index (2^32)");
    d.data_bytes_ = row_bytes * static_cast<std::size_t>(n);
    d.data_ = device_alloc(d.data_bytes_, what);
    d.scale_bytes_ = scale_count * sizeof(__half);
    // + one 4-byte word: the tensor-core GEMV copies each INT4 scale as the aligned word that
    // holds it, which for the last scale may reach 2 bytes past the array.
    d.scales_ = static_cast<__half*>(
        device_alloc(d.scale_bytes_ ? d.scale_bytes_ + 4 : 0, what + " scales"));
    return d;
}

DeviceLinear DeviceLinear::upload_16bit(std::span<const uint16_t> bits, int n, int k,
                                        WeightFormat format) {
    if (format != WeightFormat::BF16 && format != WeightFormat::FP16)
        throw Error(std::string("DeviceLinear::upload_16bit: format ") + format_name(format) +
                    " is not a 16-bit format");
    if (n <= 0 || k <= 0 || bits.size() != static_cast<std::size_t>(n) * k)
        throw Error("DeviceLinear: " + std::to_string(bits.size()) + " values for a weight " +
                    shape(n, k));
    DeviceLinear d = allocate(format, n, k, k, 0, static_cast<std::size_t>(k) * 2, 0);
    check_cuda(cudaMemcpy(d.data_, bits.data(), d.data_bytes_, cudaMemcpyHostToDevice),
               "cudaMemcpy (weight upload)");
    return d;
}

DeviceLinear DeviceLinear::upload(std::span<const float> w, int n, int k, WeightFormat format) {
    if (n <= 0 || k <= 0 || w.size() != static_cast<std::size_t>(n) * k)
        throw Error("DeviceLinear: " + std::to_string(w.size()) + " values for a weight " +
                    shape(n, k));
    switch (format) {
        case WeightFormat::INT8:
            return upload(quantize_int8(w, n, k));
        case WeightFormat::INT4:
            return upload(quantize_int4(w, n, k));
        case WeightFormat::BF16:
        case WeightFormat::FP16:
            break;
    }
    std::vector<uint16_t> bits(w.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
        if (format == WeightFormat::BF16) {
            bits[i] = bf16_bits(w[i]);
        } else {
            bits[i] = fp32_to_fp16_bits(w[i]);
            if ((bits[i] & 0x7c00u) == 0x7c00u && std::isfinite(w[i]))
                throw Error("DeviceLinear: weight (" + std::to_string(i / k) + ", " +
                            std::to_string(i % k) + ") = " + std::to_string(w[i]) +
                            " overflows fp16");
        }
    }
    return upload_16bit(bits, n, k, format);
}

DeviceLinear DeviceLinear::upload(const QuantizedInt8& w) {
    validate(w);
    const int k16 = (w.k + 15) / 16 * 16;
    std::vector<int8_t> rows(static_cast<std::size_t>(w.n) * k16, 0);
    for (int r = 0; r < w.n; ++r)
        std::memcpy(rows.data() + static_cast<std::size_t>(r) * k16,
                    w.q.data() + static_cast<std::size_t>(r) * w.k, static_cast<std::size_t>(w.k));
    std::vector<uint16_t> scales(w.scales.size());
    for (std::size_t i = 0; i < scales.size(); ++i)
        scales[i] = fp32_to_fp16_bits(w.scales[i]);
    DeviceLinear d = allocate(WeightFormat::INT8, w.n, w.k, k16, 0, static_cast<std::size_t>(k16),
                              scales.size());
    check_cuda(cudaMemcpy(d.data_, rows.data(), d.data_bytes_, cudaMemcpyHostToDevice),
               "cudaMemcpy (INT8 weight upload)");
    check_cuda(cudaMemcpy(d.scales_, scales.data(), d.scale_bytes_, cudaMemcpyHostToDevice),
               "cudaMemcpy (INT8 scale upload)");
    return d;
}

namespace {

// INT4 codes in the CPU packing -> the device order, in place (int4_device_word).
__global__ void int4_device_order_kernel(uint32_t* words, std::size_t count) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x)
        words[i] = int4_device_word(words[i]);
}

// An INT4 weight's codes, written in the CPU packing, into the device order (rows of
// k_padded / 2 bytes hold whole words: k_padded is a multiple of the group, itself of 32).
void to_int4_device_order(const DeviceLinear& d) {
    const std::size_t words = d.row_bytes() * static_cast<std::size_t>(d.n()) / 4;
    const int blocks = static_cast<int>(std::clamp<std::size_t>((words + 255) / 256, 1, 8192));
    int4_device_order_kernel<<<blocks, 256>>>(static_cast<uint32_t*>(const_cast<void*>(d.data())),
                                              words);
    check_cuda(cudaGetLastError(), "INT4 reorder kernel launch");
    check_cuda(cudaDeviceSynchronize(), "INT4 reorder");
}

}  // namespace

DeviceLinear DeviceLinear::upload(const QuantizedInt4& w) {
    validate(w);
    if (w.group % 32 != 0)
        throw Error("DeviceLinear: INT4 group size " + std::to_string(w.group) +
                    " is not a multiple of 32");
    std::vector<uint16_t> scales(w.scales.size());
    for (std::size_t i = 0; i < scales.size(); ++i)
        scales[i] = fp32_to_fp16_bits(w.scales[i]);
    DeviceLinear d = allocate(WeightFormat::INT4, w.n, w.k, w.k_padded, w.group,
                              static_cast<std::size_t>(w.k_padded) / 2, scales.size());
    check_cuda(cudaMemcpy(d.data_, w.packed.data(), d.data_bytes_, cudaMemcpyHostToDevice),
               "cudaMemcpy (INT4 weight upload)");
    check_cuda(cudaMemcpy(d.scales_, scales.data(), d.scale_bytes_, cudaMemcpyHostToDevice),
               "cudaMemcpy (INT4 scale upload)");
    to_int4_device_order(d);
    return d;
}

namespace {

// splitmix64 (Steele, Lea & Flood 2014): a counter-based hash, so every element is independent
// and the fill needs no generator state.
__device__ __forceinline__ uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Uniform in [-a, a) from the top 24 bits of a hash.
__device__ __forceinline__ float uniform(uint64_t h, float a) {
    return (static_cast<float>(h >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f) * a;
}

template <typename T>
__global__ void fill_random_kernel(T* data, std::size_t count, uint64_t seed, float a) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x)
        data[i] = Act<T>::narrow(uniform(mix64(seed + 0x9e3779b97f4a7c15ull * (i + 1)), a));
}

// Random bytes for row-major codes of `row_bytes` per row of which the first `valid_bytes` carry
// data; an INT4 row with an odd k keeps the unused high nibble of its last byte zero.
__global__ void fill_codes_kernel(uint8_t* data, std::size_t rows, std::size_t row_bytes,
                                  std::size_t valid_bytes, bool odd_nibble, uint64_t seed) {
    const std::size_t count = rows * row_bytes;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t c = i % row_bytes;
        uint8_t b = static_cast<uint8_t>(mix64(seed + 0x9e3779b97f4a7c15ull * (i + 1)) >> 56);
        if (c >= valid_bytes) b = 0;
        if (odd_nibble && c == valid_bytes - 1) b &= 0x0f;
        data[i] = b;
    }
}

__global__ void fill_half_kernel(__half* data, std::size_t count, float value) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x)
        data[i] = __float2half_rn(value);
}

int fill_blocks(std::size_t count) {
    return static_cast<int>(std::clamp<std::size_t>((count + 255) / 256, 1, 8192));
}

}  // namespace

template <typename T>
void fill_random(T* data, std::size_t count, uint64_t seed, float stddev) {
    if (count == 0) return;
    fill_random_kernel<T><<<fill_blocks(count), 256>>>(data, count, seed, stddev * std::sqrt(3.0f));
    check_cuda(cudaGetLastError(), "random fill kernel launch");
    check_cuda(cudaDeviceSynchronize(), "random fill");
}

template void fill_random<__nv_bfloat16>(__nv_bfloat16*, std::size_t, uint64_t, float);
template void fill_random<__half>(__half*, std::size_t, uint64_t, float);

DeviceLinear DeviceLinear::random(int n, int k, WeightFormat format, uint64_t seed, float stddev) {
    if (n <= 0 || k <= 0) throw Error("DeviceLinear::random: bad shape " + shape(n, k));
    DeviceLinear d;
    const std::size_t rows = static_cast<std::size_t>(n);
    switch (format) {
        case WeightFormat::BF16:
        case WeightFormat::FP16:
            d = allocate(format, n, k, k, 0, static_cast<std::size_t>(k) * 2, 0);
            if (format == WeightFormat::BF16)
                fill_random(static_cast<__nv_bfloat16*>(d.data_), rows * k, seed, stddev);
            else
                fill_random(static_cast<__half*>(d.data_), rows * k, seed, stddev);
            return d;
        case WeightFormat::INT8: {
            const int k16 = (k + 15) / 16 * 16;
            d = allocate(format, n, k, k16, 0, static_cast<std::size_t>(k16), rows);
            fill_codes_kernel<<<fill_blocks(rows * k16), 256>>>(static_cast<uint8_t*>(d.data_),
                                                                rows, k16, k, false, seed);
            // Codes uniform in [-128, 127] have deviation ~74: scale = stddev / 74.
            fill_half_kernel<<<fill_blocks(rows), 256>>>(d.scales_, rows, stddev / 73.9f);
            break;
        }
        case WeightFormat::INT4: {
            const int group = kInt4GroupSize;
            const int kp = (k + group - 1) / group * group;
            const std::size_t scales = rows * (kp / group);
            d = allocate(format, n, k, kp, group, static_cast<std::size_t>(kp) / 2, scales);
            fill_codes_kernel<<<fill_blocks(rows * kp / 2), 256>>>(
                static_cast<uint8_t*>(d.data_), rows, kp / 2, (k + 1) / 2, k % 2 == 1, seed);
            to_int4_device_order(d);  // the zero padding past k lands where the kernels expect it
            // Codes uniform in [-8, 7] have deviation ~4.6.
            fill_half_kernel<<<fill_blocks(scales), 256>>>(d.scales_, scales, stddev / 4.61f);
            break;
        }
    }
    check_cuda(cudaGetLastError(), "random weight kernel launch");
    check_cuda(cudaDeviceSynchronize(), "random weight fill");
    return d;
}

DeviceLinear DeviceLinear::upload(const QuantizedTensor& w) {
    return std::visit([](const auto& t) { return upload(t); }, w);
}

DeviceLinear::~DeviceLinear() {
    release();
}

void DeviceLinear::release() noexcept {
    if (data_) cudaFree(data_);
    if (scales_) cudaFree(scales_);
    data_ = nullptr;
    scales_ = nullptr;
    data_bytes_ = scale_bytes_ = row_bytes_ = 0;
    n_ = k_ = k_padded_ = group_ = 0;
}

DeviceLinear::DeviceLinear(DeviceLinear&& o) noexcept {
    *this = std::move(o);
}

DeviceLinear& DeviceLinear::operator=(DeviceLinear&& o) noexcept {
    if (this != &o) {
        release();
        data_ = std::exchange(o.data_, nullptr);
        scales_ = std::exchange(o.scales_, nullptr);
        data_bytes_ = std::exchange(o.data_bytes_, 0);
        scale_bytes_ = std::exchange(o.scale_bytes_, 0);
        row_bytes_ = std::exchange(o.row_bytes_, 0);
        n_ = std::exchange(o.n_, 0);
        k_ = std::exchange(o.k_, 0);
        k_padded_ = std::exchange(o.k_padded_, 0);
        group_ = std::exchange(o.group_, 0);
        format_ = o.format_;
    }
    return *this;
}

// ---- LinearContext ----------------------------------------------------------------------------

LinearContext::LinearContext() = default;

LinearContext::LinearContext(void* ws, std::size_t ws_bytes, void* gemm_ws,
                             std::size_t gemm_ws_bytes)
    : workspace(ws),
      workspace_bytes(ws_bytes),
      gemm_workspace(gemm_ws),
      gemm_workspace_bytes(gemm_ws_bytes) {}

LinearContext LinearContext::create(std::size_t workspace_bytes) {
    LinearContext ctx;
    ctx.owns_ = true;
    ctx.workspace = device_alloc(workspace_bytes, "the linear-layer workspace");
    ctx.workspace_bytes = workspace_bytes;
    ctx.gemm_workspace = device_alloc(kGemmWorkspaceBytes, "the GEMM workspace");
    ctx.gemm_workspace_bytes = kGemmWorkspaceBytes;
    ctx.sm_count = current_sm_count();
    ctx.sm_major = current_sm_major();
    return ctx;
}

LinearContext::~LinearContext() {
    release();
}

void LinearContext::release() noexcept {
    if (owns_) {
        if (workspace) cudaFree(workspace);
        if (gemm_workspace) cudaFree(gemm_workspace);
    }
    workspace = nullptr;
    workspace_bytes = 0;
    gemm_workspace = nullptr;
    gemm_workspace_bytes = 0;
    gemm_plans.reset();
    owns_ = false;
}

LinearContext::LinearContext(LinearContext&& o) noexcept {
    *this = std::move(o);
}

LinearContext& LinearContext::operator=(LinearContext&& o) noexcept {
    if (this != &o) {
        release();
        workspace = std::exchange(o.workspace, nullptr);
        workspace_bytes = std::exchange(o.workspace_bytes, 0);
        gemm_workspace = std::exchange(o.gemm_workspace, nullptr);
        gemm_workspace_bytes = std::exchange(o.gemm_workspace_bytes, 0);
        gemm_plans = std::move(o.gemm_plans);
        sm_count = o.sm_count;
        sm_major = o.sm_major;
        gemv_max_m = o.gemv_max_m;
        f16_gemv_max_m = o.f16_gemv_max_m;
        f16_gemv_any_shape = o.f16_gemv_any_shape;
        f16_gemv_rows = o.f16_gemv_rows;
        tensor_core_gemv = o.tensor_core_gemv;
        tensor_core_min_m = o.tensor_core_min_m;
        owns_ = std::exchange(o.owns_, false);
    }
    return *this;
}

// ---- linear -----------------------------------------------------------------------------------

std::size_t linear_workspace_bytes(const DeviceLinear& w, int m, int gemv_max_m,
                                   int f16_gemv_max_m) {
    if (m <= 0 || w.n() == 0) return 0;
    const int sms = current_sm_count();
    LinearContext defaults;
    defaults.f16_gemv_max_m = f16_gemv_max_m;
    const int f16_rows = f16_gemv_rows(w, m, defaults, sms);
    if (!is_int(w.format()) && f16_rows == 0) return 0;
    if (is_int(w.format()) && m > gemv_max_m)
        return static_cast<std::size_t>(w.n()) * w.k_padded() * 2;
    const int chunks = static_cast<int>(w.row_bytes() / kChunkBytes);
    const int r = is_int(w.format()) ? gemv_shape(m).r : f16_rows;
    const int splits = split_count(w.n(), m, r, chunks, sms, static_cast<std::size_t>(-1));
    std::size_t bytes =
        splits > 1 ? static_cast<std::size_t>(splits) * m * w.n() * sizeof(float) : 0;
    if (!is_int(w.format())) return bytes;
    // The tensor-core kernel, when the device has it, in slices of at most kMmaMaxM rows.
    const int mm = std::min(m, kMmaMaxM);
    const int mma_splits = mma_split_count(w.n(), mm, 8 * mma_tiles_n(mm), mma_rounds(w), sms,
                                           static_cast<std::size_t>(-1));
    if (mma_splits > 1)
        bytes = std::max(bytes, static_cast<std::size_t>(mma_splits) * mm * w.n() * sizeof(float));
    // INT4 at one row: mma_gemv_row_xreg_kernel's slices.
    if (m == 1 && w.format() == WeightFormat::INT4) {
        const int slices = xreg_shape(row_rounds(w), w.n(), sms, 32).slices;
        if (slices > 1)
            bytes = std::max(bytes, static_cast<std::size_t>(slices) * w.n() * sizeof(float));
    }
    return bytes;
}

LinearPath linear_path(const DeviceLinear& w, const void* x, int m, LinearContext& ctx) {
    if (!is_int(w.format())) {
        know_device(ctx);
        return f16_gemv_rows(w, m, ctx, ctx.sm_count) > 0 ? LinearPath::GemvSimt
                                                          : LinearPath::Cublas;
    }
    if (m > ctx.gemv_max_m) return LinearPath::DequantCublas;
    know_device(ctx);
    return use_mma_gemv(w, x, m, ctx) ? LinearPath::GemvTensorCores : LinearPath::GemvSimt;
}

namespace {

template <typename T>
void linear_impl(const DeviceLinear& w, const T* x, T* y, int m, LinearContext& ctx,
                 cudaStream_t stream, const Epilogue& e) {
    static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>);
    constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
    if (w.n() == 0) throw Error("linear: the weight is empty");
    if (m < 0) throw Error("linear: m = " + std::to_string(m) + " is negative");
    if (m == 0) return;
    if (x == nullptr || y == nullptr) throw Error("linear: null x or y");
    const bool gemv = is_int(w.format()) && m <= ctx.gemv_max_m;
    if (gemv) know_device(ctx);
    const bool mma = gemv && use_mma_gemv(w, x, m, ctx);
    switch (w.format()) {
        case WeightFormat::BF16:
        case WeightFormat::FP16:
            if ((w.format() == WeightFormat::BF16) != kBf16)
                throw Error(std::string("linear: ") + format_name(w.format()) + " weight " +
                            shape(w.n(), w.k()) + " needs " + (kBf16 ? "__half" : "__nv_bfloat16") +
                            " activations");
            know_device(ctx);
            if (const int rows = f16_gemv_rows(w, m, ctx, ctx.sm_count); rows > 0) {
                run_gemv<WKind::F16, T>(w, x, y, m, ctx, stream, e, rows);
                return;
            }
            gemm<T>(ctx, stream, w.data(), w.k(), w.n(), x, m, w.k(), y, w.n());
            finish_unfused(e, y, m, w.n(), stream);
            return;
        case WeightFormat::INT8:
            if (mma)
                run_mma_gemv<WKind::Int8, T>(w, x, y, m, ctx, stream, e);
            else if (gemv)
                run_gemv<WKind::Int8, T>(w, x, y, m, ctx, stream, e,
                                         int8_gemv_rows(w, m, ctx.sm_count));
            else {
                run_dequant_gemm<false, T>(w, x, y, m, ctx, stream);
                finish_unfused(e, y, m, w.n(), stream);
            }
            return;
        case WeightFormat::INT4:
            if (mma)
                run_mma_gemv<WKind::Int4, T>(w, x, y, m, ctx, stream, e);
            else if (gemv)
                run_gemv<WKind::Int4, T>(w, x, y, m, ctx, stream, e);
            else {
                run_dequant_gemm<true, T>(w, x, y, m, ctx, stream);
                finish_unfused(e, y, m, w.n(), stream);
            }
            return;
    }
}

}  // namespace

template <typename T>
void linear(const DeviceLinear& w, const T* x, T* y, int m, LinearContext& ctx,
            cudaStream_t stream) {
    linear_impl<T>(w, x, y, m, ctx, stream, Epilogue{});
}

template <typename T>
void linear_swiglu(const DeviceLinear& w, const T* x, T* y, T* act, int m, LinearContext& ctx,
                   cudaStream_t stream) {
    if (w.n() % 2 != 0)
        throw Error("linear_swiglu: the weight " + shape(w.n(), w.k()) +
                    " has an odd number of rows (gate / up pairs expected)");
    if (act == nullptr && m > 0) throw Error("linear_swiglu: null act");
    Epilogue e;
    e.kind = Epilogue::Kind::SwiGlu;
    e.act = act;
    linear_impl<T>(w, x, y, m, ctx, stream, e);
}

bool linear_single_kernel(const DeviceLinear& w, const void* x, int m, LinearContext& ctx) {
    if (w.format() != WeightFormat::INT4 || m != 1 || w.n() == 0 || ctx.gemv_max_m < 1)
        return false;
    know_device(ctx);
    return use_mma_gemv(w, x, 1, ctx) && row_gemv_used_slices(w, ctx) == 1;
}

bool linear_swiglu_norm_in_supported(const DeviceLinear& w, const void* residual, const void* delta,
                                     const void* norm_weight, LinearContext& ctx) {
    if (w.format() != WeightFormat::INT4 || w.n() == 0 || w.n() % 2 != 0) return false;
    if (w.k() > kNormInMaxK || ctx.gemv_max_m < 1) return false;
    if (!aligned16(residual) || !aligned16(delta) || !aligned16(norm_weight)) return false;
    know_device(ctx);
    return use_mma_gemv(w, residual, 1, ctx);
}

template <typename T>
void linear_swiglu_norm_in(const DeviceLinear& w, const T* residual, const T* delta,
                           const T* norm_weight, float eps, T* act, LinearContext& ctx,
                           cudaStream_t stream) {
    if (residual == nullptr || delta == nullptr || norm_weight == nullptr || act == nullptr)
        throw Error("linear_swiglu_norm_in: null residual, delta, norm weight or act");
    if (!linear_swiglu_norm_in_supported(w, residual, delta, norm_weight, ctx))
        throw Error("linear_swiglu_norm_in: not supported for the " +
                    std::string(format_name(w.format())) + " weight " + shape(w.n(), w.k()) +
                    " (see linear_swiglu_norm_in_supported)");
    Epilogue e;
    e.kind = Epilogue::Kind::SwiGlu;
    e.act = act;
    const NormIn norm{residual, delta, norm_weight, eps};
    // y is never written at one row with SwiGLU (the GEMV's store or the split-K sum).
    run_mma_gemv_row<T>(w, residual, nullptr, ctx, stream, e, &norm);
}

template <typename T>
void linear_add_rms_norm(const DeviceLinear& w, const T* x, T* y, T* residual, const T* norm_weight,
                         T* out, int m, float eps, LinearContext& ctx, cudaStream_t stream,
                         const T* pending) {
    if (m > 0 && (residual == nullptr || norm_weight == nullptr || out == nullptr))
        throw Error("linear_add_rms_norm: null residual, norm weight or output");
    Epilogue e;
    e.kind = Epilogue::Kind::AddRmsNorm;
    e.pending = pending;
    e.residual = residual;
    e.weight = norm_weight;
    e.out = out;
    e.eps = eps;
    linear_impl<T>(w, x, y, m, ctx, stream, e);
}

#define INSTANTIATE(T)                                                                             \
    template void linear<T>(const DeviceLinear&, const T*, T*, int, LinearContext&, cudaStream_t); \
    template void linear_swiglu<T>(const DeviceLinear&, const T*, T*, T*, int, LinearContext&,     \
                                   cudaStream_t);                                                  \
    template void linear_add_rms_norm<T>(const DeviceLinear&, const T*, T*, T*, const T*, T*, int, \
                                         float, LinearContext&, cudaStream_t, const T*);           \
    template void linear_swiglu_norm_in<T>(const DeviceLinear&, const T*, const T*, const T*,      \
                                           float, T*, LinearContext&, cudaStream_t)
INSTANTIATE(__nv_bfloat16);
INSTANTIATE(__half);
#undef INSTANTIATE

}  // namespace mtdesk::cuda
