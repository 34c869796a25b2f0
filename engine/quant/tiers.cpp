#include "mtdesk/quant/tiers.h"

#include <algorithm>
#include <array>
#include <string>

namespace mtdesk {
namespace {

constexpr std::array<Tier, 4> kTiers{Tier::BF16, Tier::FP16, Tier::INT8, Tier::INT4};

// Bytes of one [rows, cols] linear weight in tier t (rows = output features).
std::size_t linear_bytes(std::size_t rows, std::size_t cols, Tier t) {
    switch (t) {
        case Tier::BF16:
        case Tier::FP16:
            return rows * cols * 2;
        case Tier::INT8:
            return rows * cols + rows * 2;
        case Tier::INT4: {
            const std::size_t groups = (cols + kInt4GroupSize - 1) / kInt4GroupSize;
            return rows * ((cols + 1) / 2) + rows * groups * 2;
        }
    }
    return 0;
}

}  // namespace

std::span<const Tier> all_tiers() noexcept {
    return kTiers;
}

std::string_view tier_name(Tier t) noexcept {
    switch (t) {
        case Tier::BF16:
            return "bf16";
        case Tier::FP16:
            return "fp16";
        case Tier::INT8:
            return "int8";
        case Tier::INT4:
            return "int4";
    }
    return "?";
}

std::optional<Tier> parse_tier(std::string_view name) noexcept {
    for (Tier t : kTiers)
        if (tier_name(t) == name) return t;
    if (name == "w8a16") return Tier::INT8;
    if (name == "w4a16") return Tier::INT4;
    return std::nullopt;
}

std::string_view kv_cache_dtype_name(KvCacheDtype d) noexcept {
    return d == KvCacheDtype::Int8 ? "int8" : "16bit";
}

std::optional<KvCacheDtype> parse_kv_cache_dtype(std::string_view name) noexcept {
    if (name == "16bit" || name == "auto") return KvCacheDtype::Auto;
    if (name == "int8") return KvCacheDtype::Int8;
    return std::nullopt;
}

std::size_t weight_bytes(const ModelConfig& c, Tier t) {
    const std::size_t h = c.hidden_size, f = c.intermediate_size, d = c.head_dim;
    const std::size_t q = c.num_heads * d, kv = c.num_kv_heads * d;
    std::size_t per_layer = linear_bytes(q, h, t) + 2 * linear_bytes(kv, h, t) +
                            linear_bytes(h, q, t) + 2 * linear_bytes(f, h, t) +
                            linear_bytes(h, f, t);
    per_layer += 2 * h * 2;                 // input / post-attention RMSNorm
    if (c.qk_norm) per_layer += 2 * d * 2;  // per-head Q/K RMSNorm
    if (c.attention_bias) per_layer += (q + 2 * kv) * 2;
    if (c.attention_out_bias) per_layer += h * 2;
    if (c.mlp_bias) per_layer += (2 * f + h) * 2;
    const std::size_t embed = static_cast<std::size_t>(c.vocab_size) * h * 2;
    const bool quantised = t == Tier::INT8 || t == Tier::INT4;
    std::size_t lm_head = 0;
    if (!c.tie_word_embeddings || quantised) lm_head = linear_bytes(c.vocab_size, h, t);
    return per_layer * c.num_layers + embed + lm_head + h * 2;
}

std::size_t kv_cache_bytes(const ModelConfig& c, std::size_t tokens,
                           std::size_t bytes_per_element) {
    return 2ull * c.num_layers * c.num_kv_heads * c.head_dim * tokens * bytes_per_element;
}

std::size_t kv_cache_bytes(const ModelConfig& c, std::size_t tokens, KvCacheDtype dtype) {
    if (dtype == KvCacheDtype::Auto) return kv_cache_bytes(c, tokens);
    return 2ull * c.num_layers * c.num_kv_heads * (c.head_dim + sizeof(float)) * tokens;
}

std::size_t split_kv_workspace_bytes(const ModelConfig& c, std::size_t max_context,
                                     std::size_t rows) {
    if (max_context <= static_cast<std::size_t>(kSplitKvPartition)) return 0;
    const std::size_t partitions = (max_context + kSplitKvPartition - 1) / kSplitKvPartition;
    return rows * c.num_heads * partitions * (c.head_dim + 2) * sizeof(float);
}

MemoryEstimate estimate_memory(const ModelConfig& c, Tier t, std::size_t context_tokens,
                               int max_batch, KvCacheDtype kv_dtype) {
    MemoryEstimate e;
    e.weights = weight_bytes(c, t);
    e.kv_cache = kv_cache_bytes(c, context_tokens, kv_dtype);
    constexpr std::size_t chunk = 512;
    const std::size_t rows = std::max<std::size_t>(chunk, max_batch);
    const std::size_t q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
    // Activations in 16-bit: residual, normed input, qkv, attention out, gate+up, down.
    std::size_t act = rows * (3 * c.hidden_size + q + 2 * kv + 2 * c.intermediate_size) * 2;
    std::size_t logits = static_cast<std::size_t>(max_batch) * c.vocab_size * 4;
    // Quantised tiers dequantise one layer's largest weight (gate+up, fused) into a 16-bit
    // scratch for prefill GEMMs; the lm_head only ever sees the last positions (no scratch).
    std::size_t dequant = 0;
    if (t == Tier::INT8 || t == Tier::INT4)
        dequant = 2ull * c.intermediate_size * c.hidden_size * 2;
    // One sequence's context is bounded by the KV budget and by the model's positions.
    std::size_t max_context = context_tokens;
    if (c.max_position_embeddings > 0)
        max_context = std::min<std::size_t>(max_context, c.max_position_embeddings);
    const std::size_t split =
        split_kv_workspace_bytes(c, max_context, std::max(max_batch, kSplitKvRows));
    e.workspace = act + logits + dequant + split + (64ull << 20);  // + CUDA context/cuBLAS
    return e;
}

}  // namespace mtdesk
