#pragma once
// Precision tiers and the memory each one needs. The estimate is what the settings dialog and
// `mtdesk models inspect` show before anything is loaded.

#include <cstddef>
#include <optional>
#include <span>
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

/// Everything needed to run `config` in tier `t` with a KV budget of `context_tokens` positions
/// and up to `max_batch` sequences decoding at once (workspace: hidden/intermediate activations
/// for a prefill chunk of 512 tokens, fp32 logits for the batch, a 16-bit scratch for one
/// dequantised gate+up weight in INT tiers, 64 MiB for the CUDA context and cuBLAS).
MemoryEstimate estimate_memory(const ModelConfig& config, Tier t, std::size_t context_tokens,
                               int max_batch);

}  // namespace mtdesk
