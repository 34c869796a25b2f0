#pragma once
// Precision tiers and the memory each one needs. The estimate is what the settings dialog and
// `mtdesk models inspect` show before anything is loaded.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "mtdesk/model/config.h"

namespace mtdesk {

/// How the linear-layer weights are held on the device.
enum class Tier {
    BF16,  ///< bfloat16 weights as published
    FP16,  ///< float16 weights (converted from bf16 at load)
    INT8,  ///< W8A16: int8 weights, one fp16 scale per output channel (symmetric)
    INT4,  ///< W4A16: int4 weights, one fp16 scale per group of 128 inputs (symmetric)
};

inline constexpr int kInt4GroupSize = 128;

/// How the KV cache holds keys and values.
enum class KvCacheDtype {
    Auto,  ///< 16-bit: the activations' type (bf16; fp16 in the FP16 tier and before sm_80)
    /// Symmetric int8 with one fp32 scale per (position, kv head): head_dim + 4 bytes per head
    /// vector instead of 2 × head_dim (layout in engine/cuda/ops_cuda.h, KvCacheLayer).
    Int8,
};

std::string_view kv_cache_dtype_name(KvCacheDtype d) noexcept;  ///< "16bit", "int8"
/// "16bit" (also "auto") or "int8"; nullopt for anything else.
std::optional<KvCacheDtype> parse_kv_cache_dtype(std::string_view name) noexcept;

/// Positions one partition of the split-KV ("flash-decoding") attention covers: a token whose
/// context is longer is split into partitions of this many positions, each run by its own
/// thread block, and their partial results combined (engine/cuda/ops_cuda.h).
inline constexpr int kSplitKvPartition = 512;
/// Fewest tokens the split-KV workspace holds at once (more when the decode batch is larger):
/// prefill chunks with long contexts run in pieces of this many tokens.
inline constexpr int kSplitKvRows = 64;

std::span<const Tier> all_tiers() noexcept;
std::string_view tier_name(Tier t) noexcept;  ///< "bf16", "fp16", "int8", "int4"
std::optional<Tier> parse_tier(std::string_view name) noexcept;

/// Bytes per tier. Linear layers (q/k/v/o, gate/up/down, lm_head) take the tier's format;
/// the embedding table, norms and biases stay 16-bit (a tied lm_head gets its own quantised
/// copy in INT tiers, so the embedding lookup stays exact).
struct MemoryEstimate {
    std::size_t weights = 0;    ///< bytes of weights
    std::size_t kv_cache = 0;   ///< bytes of KV cache for the requested tokens
    std::size_t workspace = 0;  ///< activations, logits and kernel scratch for the batch
    std::size_t total() const noexcept { return weights + kv_cache + workspace; }
};

/// Weights of `config` in tier `t`, in bytes.
std::size_t weight_bytes(const ModelConfig& config, Tier t);

/// KV cache bytes for `tokens` positions in total (all sequences together):
/// 2 (K and V) × layers × kv_heads × head_dim × tokens × bytes_per_element.
std::size_t kv_cache_bytes(const ModelConfig& config, std::size_t tokens,
                           std::size_t bytes_per_element = 2);

/// KV cache bytes for `tokens` positions held as `dtype`: 16-bit as above (2 bytes an
/// element); int8: 2 × layers × kv_heads × (head_dim + 4) × tokens (an int8 element each and
/// one fp32 scale per head vector).
std::size_t kv_cache_bytes(const ModelConfig& config, std::size_t tokens, KvCacheDtype dtype);

/// fp32 scratch of the split-KV attention for `rows` tokens per launch with contexts of up to
/// `max_context` positions: rows × heads × partitions × (head_dim + 2) × 4 bytes, partitions =
/// ceil(max_context / kSplitKvPartition) (a partial output, its maximum and its sum each).
/// 0 when max_context <= kSplitKvPartition (nothing is ever split).
std::size_t split_kv_workspace_bytes(const ModelConfig& config, std::size_t max_context,
                                     std::size_t rows);

/// Most candidates sampling considers per row: top_k is capped at this, and without top_k the
/// nucleus is taken from this many most likely tokens (probabilities still over the full
/// vocabulary).
inline constexpr int kMaxSampleCandidates = 256;

/// Vocabulary ids one block of the GPU sampler's first kernel (cuda::sample_tokens()) takes
/// (staged in 32 KiB of shared memory as fp32).
inline constexpr int kSampleSlice = 8192;

/// kSampleSlice-id slices of a `vocab`-id vocabulary (the last one may be shorter).
constexpr int sample_slices(int vocab) {
    return (vocab + kSampleSlice - 1) / kSampleSlice;
}

/// Floats of the scratch the GPU sampler (cuda::sample_tokens()) needs for `rows` rows of a
/// `vocab`-id vocabulary: per row the candidates of each kSampleSlice-id slice (up to
/// kMaxSampleCandidates values and ids) and two floats a slice (8,224 floats a row for a 128k
/// vocabulary).
inline std::size_t sample_scratch_floats(int rows, int vocab) {
    return static_cast<std::size_t>(rows) * sample_slices(vocab) * (2 * kMaxSampleCandidates + 2);
}

/// Most sequences a decode step replays from a CUDA graph; larger batches launch kernel by
/// kernel.
inline constexpr int kMaxGraphBatch = 256;

/// The batch bucket of a CUDA-graph decode step of `n` sequences (1 <= n <= limit): 1, 2, 4,
/// then multiples of 8, at most `limit` (vLLM's capture sizes). The step is padded to it.
constexpr int decode_graph_batch(int n, int limit) {
    const int b = n <= 1 ? 1 : n <= 2 ? 2 : n <= 4 ? 4 : (n + 7) / 8 * 8;
    return b < limit ? b : limit;
}

/// The context bound of a CUDA-graph decode step whose longest context is `context` positions:
/// a power of two >= context (at least 256), at most `limit` (the longest context a sequence
/// can have). One graph serves every step whose batch bucket and bound are the same.
constexpr int decode_graph_context(int context, int limit) {
    long b = 256;
    while (b < context)
        b *= 2;
    const long cap = limit > context ? limit : context;
    return static_cast<int>(b < cap ? b : cap);
}

/// How many decode graphs an engine can capture over a session: batch buckets of up to
/// `batch_limit` sequences times context bounds up to `context_limit` positions
/// (decode_graph_batch, decode_graph_context). E.g. 88 for 64 sequences and 32,768 positions.
int decode_graph_count(int batch_limit, int context_limit);

/// Device memory a captured decode graph holds beyond the engine's buffers (its nodes' launch
/// state, the kernels it loads): kDecodeGraphBytes and kDecodeGraphBytesPerLayer for each
/// decoder layer. Measured on an H200 with every graph of a session captured
/// (gpu_test_engine::decodeGraphsMemory): 0.95 MiB a graph of the 32-layer 1.8B shapes (88
/// graphs, contexts up to 32,768), 0.25 MiB of the 8-layer demo model (55); these give 1.31
/// and 0.38.
inline constexpr std::size_t kDecodeGraphBytes = 64 << 10;
inline constexpr std::size_t kDecodeGraphBytesPerLayer = 40 << 10;

/// decode_graph_count(batch_limit, context_limit) graphs of a `layers`-layer model, bytes.
inline std::size_t decode_graph_bytes(int batch_limit, int context_limit, int layers) {
    return static_cast<std::size_t>(decode_graph_count(batch_limit, context_limit)) *
           (kDecodeGraphBytes + static_cast<std::size_t>(layers) * kDecodeGraphBytesPerLayer);
}

/// Most bytes of the 16-bit scratch into which INT tiers dequantise a weight for prefill
/// GEMMs: larger layers are dequantised and multiplied in tiles of this size (the 7B gate+up
/// in four), so that an INT4 7B with an 8k-token KV cache decoding one sequence fits in 6 GiB.
inline constexpr std::size_t kDequantScratchBytes = 64ull << 20;

/// Tokens one engine step runs by default (decode tokens plus prefill chunks):
/// CudaEngineOptions::max_step_tokens.
inline constexpr int kDefaultStepTokens = 1024;

/// What the GPU engine allocates to run `config` in tier `t` with a KV budget of
/// `context_tokens` positions held as `kv`, up to `max_batch` sequences decoding at once and
/// steps of up to `step_tokens` tokens: weights, KV cache and workspace (a step's 16-bit
/// activations, hidden state, 16-bit and fp32 logits and sampler candidates per sequence, step
/// metadata, RoPE tables, a 16-bit scratch for dequantised weights in INT tiers, the KV
/// cache's padding (whole blocks of 16 and one for CUDA-graph steps), the split-KV attention's
/// partials for contexts up to min(context_tokens, max_position_embeddings), the GEMMs' 32 MiB
/// workspace, 32 MiB for split-K sums and small buffers, 64 MiB for what the CUDA runtime
/// takes as the engine runs (its handles, allocation granularity) and the decode graphs the
/// engine can capture (decode_graph_bytes)). The same terms as CudaModel's allocations, so it
/// bounds what loading and running add to the device's memory in use; the CUDA context itself
/// (a few hundred MiB, there before anything is loaded) is not included.
/// `gpu_test_engine::memoryEstimate` and `decodeGraphsMemory` check it against the engine's
/// allocations and the device's measured peak.
MemoryEstimate estimate_memory(const ModelConfig& config, Tier t, std::size_t context_tokens,
                               int max_batch, KvCacheDtype kv = KvCacheDtype::Auto,
                               int step_tokens = kDefaultStepTokens);

/// Why tier `t` does not fit in `free_bytes` of `device`'s memory (of `total_bytes`), or ""
/// when its estimate_memory() does: what it needs (weights, KV cache for `context_tokens`,
/// workspace) against what is free, and each tier that would fit with its figure, or that none
/// does and the KV budget has to be lowered. The load error of a tier that does not fit.
std::string tier_fit_error(const ModelConfig& config, Tier t, std::size_t context_tokens,
                           int max_batch, KvCacheDtype kv, int step_tokens, std::size_t free_bytes,
                           std::size_t total_bytes, std::string_view device);

/// How the CPU engine holds the linear-layer weights. Activations, the KV cache and the
/// embedding table are fp32 in every CPU tier; INT8 and INT4 are the GPU tiers' formats
/// (quantize.h), so both engines compute with the same dequantised weights and share the
/// on-disk cache of quantised tensors.
enum class CpuTier {
    FP32,  ///< every weight converted to fp32 (the reference)
    INT8,  ///< int8 weights, one scale per output row: about a quarter of fp32's memory
    INT4,  ///< int4 weights, one scale per group of 128 inputs: about an eighth
};

std::span<const CpuTier> all_cpu_tiers() noexcept;
std::string_view cpu_tier_name(CpuTier t) noexcept;  ///< "fp32", "int8", "int4"
/// "fp32", "int8" or "int4" (also "w8a16" / "w4a16"); nullopt for anything else.
std::optional<CpuTier> parse_cpu_tier(std::string_view name) noexcept;

/// Positions of KV cache the CPU estimate reserves: one request's prompt and output (the
/// translator cuts longer sources into pieces well below this).
inline constexpr std::size_t kCpuEstimateContext = 4096;

/// Host memory the CPU engine needs for `config` in tier `t`, in bytes: weights (fp32
/// embedding, norms and biases; linear layers in the tier's format with fp32 scales; a tied
/// output layer shares the embedding in FP32 and has its own quantised copy otherwise), an
/// fp32 KV cache of `context_tokens` positions, and the workspace (activations of a
/// `step_tokens`-token prefill and logits; for INT tiers also the larger of the fp32 rows a
/// layer is quantised from at load and the tile a prefill dequantises into,
/// kCpuDequantTileBytes).
MemoryEstimate estimate_cpu_memory(const ModelConfig& config, CpuTier t,
                                   std::size_t context_tokens = kCpuEstimateContext,
                                   int step_tokens = 512);

/// Most bytes of the fp32 tile into which the CPU INT tiers dequantise a weight for a
/// prefill GEMM (rows of the weight, whole rows at a time).
inline constexpr std::size_t kCpuDequantTileBytes = std::size_t(32) << 20;

/// What the CPU engine may take of `available_bytes` (available_host_memory()): all but a
/// tenth, which is left to the rest of the system.
constexpr std::size_t usable_cpu_memory(std::size_t available_bytes) {
    return available_bytes - available_bytes / 10;
}

/// The CPU tier to load: `requested` when given and its estimate_cpu_memory() fits in
/// usable_cpu_memory(available_bytes), else (nothing requested) the first of FP32, INT8, INT4
/// that fits so.
/// Throws mtdesk::Error with the figures (what the tier needs, what is available, the tiers
/// that fit) when the requested tier, or every tier, does not fit.
CpuTier choose_cpu_tier(const ModelConfig& config, std::optional<CpuTier> requested,
                        std::size_t available_bytes);

}  // namespace mtdesk
