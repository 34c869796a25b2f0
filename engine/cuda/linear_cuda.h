#pragma once
// Linear layers on the GPU: y [m, n] = x [m, k] · Wᵀ with W held as BF16, FP16, INT8 (W8A16) or
// INT4 (W4A16, groups of 128 along k). Private to the engine.
//
// Shapes and layout: W [n = out_features, k = in_features] row-major (nn.Linear), x [m, k] and
// y [m, n] row-major and dense (row stride k and n elements), activations 16-bit (T =
// __nv_bfloat16 or __half), products accumulated in fp32.
//
// Paths:
//  - BF16 / FP16 weights: for m <= ctx.f16_gemv_max_m, on layers whose GEMV grid fills whole
//    waves (one with 4 or 6 output rows per warp, or three and more), the SIMT GEMV below reading
//    16-bit weights (launched
//    with programmatic dependent launch, it fetches its first weights while the previous kernel of
//    the step finishes; cuBLAS's kernels cannot), else cuBLAS (cublasLt, fp32 compute, one
//    algorithm per bucket of row counts: gemm_cuda.h).
//  - INT8 / INT4, m <= ctx.gemv_max_m ("decode"): this file's weight-only GEMV kernels. Each
//    weight byte is read from memory once per call with 128-bit loads, dequantised in registers
//    (byte-permute "magic number" int -> float conversion, no I2F) and multiplied with up to
//    eight rows of x at a time; a warp owns a few output rows, its lanes stride along k and
//    the partial sums meet in a shuffle reduction. Split-K spreads a layer with few rows over
//    the whole GPU, with a deterministic second pass that sums the splits. Launched with
//    programmatic dependent launch (launch_cuda.cuh), the kernels load their first weights
//    while the previous kernel finishes. The design follows
//    the public descriptions of TensorRT-LLM's weight-only batched GEMV and llama.cpp's mul_mat_vec
//    kernels (warp-per-rows, in-register dequantisation, fp32 accumulation, scale applied per
//    group), written from scratch.
//    On sm_80+ the multiply-adds run on the tensor cores instead (mma.sync m16n8k16 with the
//    weights as the B operand, dequantised into fragments in registers, x rows in tiles of
//    16): the SIMT pipe only dequantises, so 2-16 rows cost about what one does; from 17 rows
//    each block stages x in shared memory and takes up to 64 rows in one pass; see
//    mma_gemv_kernel in linear_kernels.cuh.
//  - INT8 / INT4, larger m ("prefill"): the weight is dequantised into ctx.workspace as T (in
//    tiles of rows when the workspace is smaller than the whole matrix) and multiplied by
//    cuBLAS; dequantisation costs one extra pass over the weight, small next to a GEMM of many
//    rows. (GPTQ/AWQ inference stacks do the same for large batches.)
//
// Device layout of the quantised weights:
//  - INT8: int8 [n, k8] with k8 = k rounded up to 16 (zero padding, so rows start 16-byte
//    aligned), fp16 scales [n].
//  - INT4: two's-complement nibbles, rows of k_padded / 2 bytes (k_padded a multiple of the
//    group), each little-endian 32-bit word holding 8 elements e0..e7 in the order e0 e2 e4 e6
//    e1 e3 e5 e7 from its low nibble up (upload() reorders QuantizedInt4's packing, element 2j
//    low and 2j+1 high in each byte; linear_kernels.cuh, int4_element, says why), fp16 scales
//    [n, k_padded / group]. The group must be a multiple of 32 (one 16-byte load never spans
//    two groups).
// Fused epilogues: linear_swiglu() and linear_add_rms_norm() run what follows the MLP's gate|up
// layer and the attention / MLP output layers in the GEMV's store or split-K sum, saving a
// kernel (and a round trip of y through memory) per layer at small batch, where a decode step
// is a chain of short kernels. And before a layer: linear_swiglu_norm_in() makes the one-row
// INT4 GEMV's x (the residual add and RMSNorm) in each of its blocks, saving the norm's kernel.
//
// Dequantised values are q · scale in fp32 with the fp16 scale widened exactly, so they equal
// the CPU's dequantize() bit for bit; the GPU sums in a different order, and the prefill path
// rounds the dequantised weight to T before the GEMM.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "mtdesk/quant/quantize.h"
#include "mtdesk/quant/tiers.h"

namespace mtdesk::cuda {

/// How a DeviceLinear holds its weight.
enum class WeightFormat { BF16, FP16, INT8, INT4 };

/// "bf16", "fp16", "int8", "int4".
const char* format_name(WeightFormat format) noexcept;

/// Batch rows (m) up to which INT8/INT4 layers use the GEMV kernels by default; above it they
/// dequantise into the workspace and call cuBLAS. Measured on an H200 with
/// tools/bench/bench_linear.cu (the 7B layers 6144x4096, 4096x4096, 28672x4096, 4096x14336):
/// the tensor-core GEMV is 3-6x faster than dequantise + cuBLAS up to m = 32 and still ahead
/// at 64 for INT4 (about even for INT8); the SIMT kernel alone crossed at m of about 6-10.
inline constexpr int kGemvMaxM = 64;

/// Batch rows (m) up to which BF16/FP16 layers whose shape suits it use the SIMT GEMV by
/// default (LinearContext::f16_gemv_max_m; cuBLAS above and for other shapes). Measured with
/// bench_linear on an H200: at m = 2 the GEMV still wins on some layers and loses on others, at
/// m = 4 it loses on all.
inline constexpr int kF16GemvMaxM = 1;

/// A linear layer's weight on the device. Owns its device memory (RAII, move-only; a
/// moved-from or default-constructed object is empty: n() == 0).
class DeviceLinear {
  public:
    /// Uploads W [n, k] (fp32 host values, row-major) in `format`: rounded to nearest-even
    /// bf16/fp16, or quantised on the host (quantize_int8 / quantize_int4 with the default
    /// group) for INT8/INT4. Copies synchronously on the current device. Throws mtdesk::Error
    /// for a bad shape or size, for what quantisation rejects (non-finite weights), and for
    /// CUDA errors (a failed cudaMalloc names the bytes requested).
    static DeviceLinear upload(std::span<const float> w, int n, int k, WeightFormat format);
    /// Uploads 16-bit weights as published (bf16 or fp16 bit patterns, [n, k] row-major)
    /// without a detour through fp32. `format` must be BF16 or FP16. Throws like upload().
    static DeviceLinear upload_16bit(std::span<const uint16_t> bits, int n, int k,
                                     WeightFormat format);
    /// Uploads pre-quantised weights (e.g. from the QuantCache). validate()s them first;
    /// INT4 needs a group that is a multiple of 32. Throws mtdesk::Error.
    static DeviceLinear upload(const QuantizedInt8& w);
    static DeviceLinear upload(const QuantizedInt4& w);
    static DeviceLinear upload(const QuantizedTensor& w);

    /// A weight [n, k] of random values made on the device, for benchmarks with the shapes of a
    /// real model and no checkpoint: BF16/FP16 uniform with standard deviation `stddev`; INT8 /
    /// INT4 random codes (the padding zero) with scales giving about that deviation (INT4
    /// groups of kInt4GroupSize). Deterministic in `seed`. Throws like upload().
    static DeviceLinear random(int n, int k, WeightFormat format, uint64_t seed,
                               float stddev = 0.02f);

    DeviceLinear() = default;
    ~DeviceLinear();
    DeviceLinear(DeviceLinear&& other) noexcept;
    DeviceLinear& operator=(DeviceLinear&& other) noexcept;
    DeviceLinear(const DeviceLinear&) = delete;
    DeviceLinear& operator=(const DeviceLinear&) = delete;

    int n() const noexcept { return n_; }
    int k() const noexcept { return k_; }
    WeightFormat format() const noexcept { return format_; }
    /// Device memory held (weights + scales), in bytes.
    std::size_t device_bytes() const noexcept { return data_bytes_ + scale_bytes_; }

    // Device layout (see the top of this file), for kernels of the engine that read it.
    const void* data() const noexcept { return data_; }
    const __half* scales() const noexcept { return scales_; }
    /// Bytes from one row of data() to the next.
    std::size_t row_bytes() const noexcept { return row_bytes_; }
    /// Padded row length in elements: k for BF16/FP16, k rounded up to 16 (INT8) or to the
    /// group (INT4).
    int k_padded() const noexcept { return k_padded_; }
    /// INT4 group size (0 for the other formats).
    int group() const noexcept { return group_; }

  private:
    void release() noexcept;
    static DeviceLinear allocate(WeightFormat format, int n, int k, int k_padded, int group,
                                 std::size_t row_bytes, std::size_t scale_count);

    void* data_ = nullptr;
    __half* scales_ = nullptr;
    std::size_t data_bytes_ = 0;
    std::size_t scale_bytes_ = 0;
    std::size_t row_bytes_ = 0;
    int n_ = 0;
    int k_ = 0;
    int k_padded_ = 0;
    int group_ = 0;
    WeightFormat format_ = WeightFormat::BF16;
};

class GemmPlans;  // gemm_cuda.h

/// Bytes of GEMM workspace LinearContext::create() allocates (cuBLAS's own default on Hopper).
inline constexpr std::size_t kGemmWorkspaceBytes = 32u << 20;

/// Shared scratch of the linear layers: a device workspace for dequantised weight tiles
/// (prefill) and split-K partial sums (decode), and the GEMMs' own workspace and algorithm
/// choices (gemm_cuda.h: cublasLt, one algorithm per bucket of row counts). One
/// context serves one stream at a time: calls on two streams that share a workspace would
/// overwrite each other's scratch.
struct LinearContext {
    void* workspace = nullptr;  ///< 16-byte aligned (cudaMalloc's 256 is)
    std::size_t workspace_bytes = 0;
    /// Workspace of the GEMMs (cublasLt), separate from `workspace`, which holds the
    /// dequantised weight they read; null = none (algorithms that need none).
    void* gemm_workspace = nullptr;
    std::size_t gemm_workspace_bytes = 0;
    /// The GEMMs' algorithm per row-count bucket, made on first use.
    std::unique_ptr<GemmPlans> gemm_plans;
    /// Multiprocessors of the device (sizes the split-K); 0 = ask the current device.
    int sm_count = 0;
    /// Compute capability major of the device; 0 = ask the current device.
    int sm_major = 0;
    /// INT8/INT4 layers use the GEMV kernels for m <= gemv_max_m, else dequantise + cuBLAS.
    /// Tests and benchmarks set it to force a path (0: always cuBLAS).
    int gemv_max_m = kGemvMaxM;
    /// BF16/FP16 layers with k % 8 == 0 use the SIMT GEMV for m <= f16_gemv_max_m where its
    /// grid fills whole waves of the device (the shapes where it beats cuBLAS), else cuBLAS. Tests
    /// and benchmarks set it (0: always cuBLAS) and f16_gemv_any_shape (every shape) to force a
    /// path.
    int f16_gemv_max_m = kF16GemvMaxM;
    bool f16_gemv_any_shape = false;
    /// Output rows per warp of that GEMV at one row of x (4 or 6); 0 = chosen per layer so that
    /// the grid fills whole waves. Tests set it to run both.
    int f16_gemv_rows = 0;
    /// The GEMV path multiplies on the tensor cores where it can and where that is faster
    /// (sm_80+, k a multiple of 8, 16-byte aligned x, INT4 groups a multiple of 128, m >= 1 for
    /// INT4, one row in a kernel of its own, and >= 3 for INT8), else with the SIMT kernel.
    /// Tests and benchmarks clear it to run the SIMT kernel.
    bool tensor_core_gemv = true;
    /// Rows of x from which the GEMV path uses the tensor cores; 0 = the measured crossover
    /// above. Benchmarks set it to time the tensor-core kernel at fewer rows.
    int tensor_core_min_m = 0;
    /// Which kernel runs INT4 at one row of x: Auto chooses per layer (row_gemv_xreg_shape in
    /// linear_cuda.cu: x in registers where it needs fewer k-slices than the other or its warps
    /// walk many rows, as measured on an H200); tests and benchmarks force one. XInRegisters
    /// (mma_gemv_row_xreg_kernel: each warp keeps one round of x in registers and walks the
    /// rows) still falls back where its k-slices' partial sums do not fit the workspace.
    enum class RowGemv { Auto, XInRegisters, RoundsPerWarp };
    RowGemv row_gemv = RowGemv::Auto;
    /// Rounds of x per k-slice of the x-in-registers kernel (1, 2 or 4); 0 = xreg_shape's
    /// choice. Benchmarks set it.
    int row_gemv_rounds_per_split = 0;
    /// Its blocks a multiprocessor in one wave; 0 = xreg_shape's choice. Benchmarks set it.
    int row_gemv_blocks_per_sm = 0;

    /// An empty context (no workspaces): the GEMV paths run, the INT prefill path refuses it.
    LinearContext();
    /// Borrows workspaces owned by the caller (not freed here).
    LinearContext(void* workspace, std::size_t workspace_bytes, void* gemm_workspace = nullptr,
                  std::size_t gemm_workspace_bytes = 0);
    /// Allocates `workspace_bytes` and kGemmWorkspaceBytes on the current device, owned and
    /// freed by this object. Throws mtdesk::Error on CUDA errors.
    static LinearContext create(std::size_t workspace_bytes);

    ~LinearContext();
    LinearContext(LinearContext&& other) noexcept;
    LinearContext& operator=(LinearContext&& other) noexcept;
    LinearContext(const LinearContext&) = delete;
    LinearContext& operator=(const LinearContext&) = delete;

  private:
    void release() noexcept;
    bool owns_ = false;
};

/// Workspace bytes for which linear() of `w` with `m` rows of x takes its fastest path without
/// tiling: the whole dequantised weight (INT, m > gemv_max_m), or the split-K partial sums
/// (GEMV paths; the split shrinks to fit a smaller workspace, down to no split). 0 for
/// BF16/FP16 on cuBLAS.
std::size_t linear_workspace_bytes(const DeviceLinear& w, int m, int gemv_max_m = kGemvMaxM,
                                   int f16_gemv_max_m = kF16GemvMaxM);

/// Fills `count` 16-bit values (T = __nv_bfloat16 or __half) with uniform random values of
/// standard deviation `stddev`, deterministic in `seed` (a counter-based hash, no state), on the
/// current device, synchronously. For benchmark weights. Throws mtdesk::Error on CUDA errors.
template <typename T>
void fill_random(T* data, std::size_t count, uint64_t seed, float stddev);

/// The kernels linear() runs for a call.
enum class LinearPath { Cublas, DequantCublas, GemvSimt, GemvTensorCores };

/// Which path linear(w, x, ..., m, ctx) takes (asks the device for ctx's figures still unset).
/// For tests and benchmarks. Throws mtdesk::Error on CUDA errors.
LinearPath linear_path(const DeviceLinear& w, const void* x, int m, LinearContext& ctx);

/// y [m, n] = x [m, k] · Wᵀ on `stream` (asynchronous; x and y must stay valid until the stream
/// gets there). T = __nv_bfloat16 or __half; BF16 weights take only __nv_bfloat16 and FP16 only
/// __half, INT8/INT4 either. x and y are dense row-major device arrays of m·k and m·n elements;
/// y must not overlap x. m == 0 does nothing. Throws mtdesk::Error for an empty weight, m < 0, a T
/// that does not match BF16/FP16 weights, a workspace too small for even one dequantised row (INT
/// prefill; see linear_workspace_bytes), and CUDA / cuBLAS errors.
template <typename T>
void linear(const DeviceLinear& w, const T* x, T* y, int m, LinearContext& ctx,
            cudaStream_t stream);

/// act [m, n / 2] = SwiGLU of y = x · Wᵀ for a gate|up weight whose rows come in pairs (gate
/// row j at 2j, up row j at 2j + 1; GateUp::Pairs in ops_cuda.h): act[r, j] = T(T(silu(g)) · u)
/// with g = T(y[r, 2j]), u = T(y[r, 2j + 1]): linear() then swiglu(..., GateUp::Pairs), bit for
/// bit. The GEMV paths apply it as they store (one k-slice) or in the split-K sum, so y is never
/// written at one row of x; the other paths write y (scratch, [m, n]) and run the SwiGLU kernel.
/// Throws like linear(), and for an odd n or a null act.
template <typename T>
void linear_swiglu(const DeviceLinear& w, const T* x, T* y, T* act, int m, LinearContext& ctx,
                   cudaStream_t stream);

/// The layer, the residual add and the RMSNorm after it: y = x · Wᵀ [m, n], residual [m, n] =
/// T(residual + T(y)), out [m, n] = rms_norm(residual) with `norm_weight` [n] and `eps`:
/// linear() then add_rms_norm() (ops_cuda.h), bit for bit. With `pending` [m, n] (16-byte
/// aligned), an add left over from before the layer (linear_swiglu_norm_in's delta) comes first:
/// residual = T(T(residual + pending) + T(y)), as the two adds one after the other. Where a GEMV
/// path splits k in up to 4
/// slices (one row of x: the GEMVs' 2-4), its split-K sum does the add and the norm too (one
/// kernel instead of two, for rows of whole 16-byte chunks up to 8192 elements and 16-byte
/// aligned residual, weight and out); otherwise y (scratch) is written and add_rms_norm()
/// follows. out must not overlap residual or x. Throws like linear(), and for null residual,
/// norm_weight or out.
template <typename T>
void linear_add_rms_norm(const DeviceLinear& w, const T* x, T* y, T* residual, const T* norm_weight,
                         T* out, int m, float eps, LinearContext& ctx, cudaStream_t stream,
                         const T* pending = nullptr);

/// Whether linear() of `m` rows of x is known to run as one kernel writing y (no split-K sum
/// after it): so far only said of INT4 weights at one row (the one-row GEMV in one k-slice);
/// false otherwise, also where it might be one.
bool linear_single_kernel(const DeviceLinear& w, const void* x, int m, LinearContext& ctx);

/// Whether linear_swiglu_norm_in() runs for this weight and these pointers: INT4 weights with
/// an even number of rows, k <= 4096, on the one-row tensor-core GEMV (sm_80+, k a multiple of
/// 8, groups a multiple of 128, ctx not forcing another path), 16-byte aligned vectors.
bool linear_swiglu_norm_in_supported(const DeviceLinear& w, const void* residual, const void* delta,
                                     const void* norm_weight, LinearContext& ctx);

/// One row through a gate|up layer with the residual add and RMSNorm before it made by the
/// GEMV's blocks themselves: act [n / 2] = SwiGLU of x · Wᵀ (as linear_swiglu()) with x [k] =
/// rms_norm(T(residual + delta)) with `norm_weight` [k] and `eps` (as add_rms_norm() writes it),
/// bit for bit add_rms_norm() then linear_swiglu(); but residual is left as it is (the caller
/// adds delta later: linear_add_rms_norm's `pending`). At one row of a decode step this saves
/// the norm's kernel, one block on one multiprocessor between two GEMVs. T = __nv_bfloat16 or
/// __half. Throws mtdesk::Error for null pointers, where linear_swiglu_norm_in_supported() is
/// false, and for CUDA errors.
template <typename T>
void linear_swiglu_norm_in(const DeviceLinear& w, const T* residual, const T* delta,
                           const T* norm_weight, float eps, T* act, LinearContext& ctx,
                           cudaStream_t stream);

#define MTDESK_LINEAR_EXTERN(T)                                                                  \
    extern template void linear<T>(const DeviceLinear&, const T*, T*, int, LinearContext&,       \
                                   cudaStream_t);                                                \
    extern template void linear_swiglu<T>(const DeviceLinear&, const T*, T*, T*, int,            \
                                          LinearContext&, cudaStream_t);                         \
    extern template void linear_add_rms_norm<T>(const DeviceLinear&, const T*, T*, T*, const T*, \
                                                T*, int, float, LinearContext&, cudaStream_t,    \
                                                const T*);                                       \
    extern template void linear_swiglu_norm_in<T>(const DeviceLinear&, const T*, const T*,       \
                                                  const T*, float, T*, LinearContext&,           \
                                                  cudaStream_t)
MTDESK_LINEAR_EXTERN(__nv_bfloat16);
MTDESK_LINEAR_EXTERN(__half);
#undef MTDESK_LINEAR_EXTERN

}  // namespace mtdesk::cuda
