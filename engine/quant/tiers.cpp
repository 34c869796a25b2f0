#include "mtdesk/quant/tiers.h"

#include <algorithm>
#include <array>
#include <string>

#include "mtdesk/error.h"

namespace mtdesk {
namespace {

constexpr std::array<Tier, 4> kTiers{Tier::BF16, Tier::FP16, Tier::INT8, Tier::INT4};
constexpr std::array<CpuTier, 3> kCpuTiers{CpuTier::FP32, CpuTier::INT8, CpuTier::INT4};

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

// Bytes of one [rows, cols] linear weight in CPU tier t (scales held as fp32).
std::size_t cpu_linear_bytes(std::size_t rows, std::size_t cols, CpuTier t) {
    switch (t) {
        case CpuTier::FP32:
            return rows * cols * 4;
        case CpuTier::INT8:
            return rows * cols + rows * 4;
        case CpuTier::INT4: {
            const std::size_t groups = (cols + kInt4GroupSize - 1) / kInt4GroupSize;
            return rows * groups * kInt4GroupSize / 2 + rows * groups * 4;
        }
    }
    return 0;
}

std::string mib(std::size_t bytes) {
    return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
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
                               int max_batch, KvCacheDtype kv_dtype, int step_tokens) {
    MemoryEstimate e;
    e.weights = weight_bytes(c, t);
    e.kv_cache = kv_cache_bytes(c, context_tokens, kv_dtype);
    // The buffers CudaModel allocates (allocate_workspace, allocate_kv, make_rope_tables), in
    // the same terms, so that the estimate bounds what the engine holds.
    const std::size_t tmax = static_cast<std::size_t>(std::max(1, step_tokens));
    const std::size_t rows = static_cast<std::size_t>(std::max(1, max_batch));
    const std::size_t h = c.hidden_size, f = c.intermediate_size;
    const std::size_t q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
    // 16-bit activations of a step: residual, normed input, scratch, qkv, attention out,
    // gate+up, SwiGLU out; and one row of the attention's output layer (decode at one row).
    const std::size_t act = tmax * (2 * h + std::max(h, q) + q + 2 * kv + q + 3 * f) * 2 + h * 2;
    // Per sampled row: its hidden state, 16-bit and fp32 logits, the sampler's candidates.
    const std::size_t logits =
        rows * (h * 2 + static_cast<std::size_t>(c.vocab_size) * (2 + 4)) +
        sample_scratch_floats(static_cast<int>(rows), c.vocab_size) * sizeof(float);
    // Step metadata (tokens, positions, slots, block tables) and the sampler's histories.
    std::size_t max_context = context_tokens;
    if (c.max_position_embeddings > 0)
        max_context = std::min<std::size_t>(max_context, c.max_position_embeddings);
    const std::size_t positions = static_cast<std::size_t>(std::max(c.max_position_embeddings, 1));
    // (block tables: a block per 16 positions a sequence can reach, for blocks of 16, the
    // engine's default)
    const std::size_t meta =
        (5 * std::max(tmax, rows) + rows * (positions / 16 + 1)) * 4 + rows * (40 + 4 * positions);
    // RoPE's cos and sin for every position (fp32).
    const std::size_t rope = positions * (c.head_dim / 2) * 4 * 2;
    // Quantised tiers dequantise weights into a 16-bit scratch for prefill GEMMs, a whole
    // layer or tiles of kDequantScratchBytes.
    std::size_t linear = 0;
    if (t == Tier::INT8 || t == Tier::INT4)
        linear = std::min<std::size_t>(2 * f * h * 2, kDequantScratchBytes);
    const std::size_t split = split_kv_workspace_bytes(
        c, max_context, std::min(std::max(rows, std::size_t(kSplitKvRows)), tmax));
    // The GEMMs' workspace (32 MiB, given to cublasLt at load), 32 MiB for split-K partial sums
    // and small buffers, and 64 MiB that the CUDA runtime takes beyond the engine's buffers as it
    // runs (cublasLt's handle, allocation granularity: 20-43 MiB measured on an H200 without
    // graphs, docs/benchmarks.md; 90-109 MiB while the engine also held a cuBLAS handle).
    constexpr std::size_t fixed = (32ull + 32 + 64) << 20;
    // The decode graphs of every batch bucket and context bound a session can reach (the
    // engine's context limit: whole blocks of 16 up to max_position_embeddings).
    const int graph_batch = std::min({max_batch, kMaxGraphBatch, step_tokens});
    const std::size_t graphs = decode_graph_bytes(
        graph_batch,
        static_cast<int>(std::min<std::size_t>((max_context + 15) / 16 * 16, std::size_t{1} << 30)),
        c.num_layers);
    // The KV cache is allocated in whole blocks of 16, plus one for the padded rows of CUDA-graph
    // decode steps.
    const std::size_t kv_pad =
        kv_cache_bytes(c, (context_tokens + 15) / 16 * 16 + 16 - context_tokens, kv_dtype);
    e.workspace = act + logits + meta + rope + linear + split + kv_pad + fixed + graphs;
    return e;
}

int decode_graph_count(int batch_limit, int context_limit) {
    if (batch_limit < 1 || context_limit < 1) return 0;
    int batches = 0;  // the distinct decode_graph_batch(n, batch_limit) for n = 1 .. limit
    for (int n = 1; n <= batch_limit; ++n)
        if (n == 1 || decode_graph_batch(n, batch_limit) != decode_graph_batch(n - 1, batch_limit))
            ++batches;
    int contexts = 0;  // 256, 512, ... below the limit, and the limit itself
    for (long b = 256;; b *= 2) {
        ++contexts;
        if (b >= context_limit) break;
    }
    return batches * contexts;
}

std::string tier_fit_error(const ModelConfig& c, Tier t, std::size_t context_tokens, int max_batch,
                           KvCacheDtype kv, int step_tokens, std::size_t free_bytes,
                           std::size_t total_bytes, std::string_view device) {
    const MemoryEstimate need = estimate_memory(c, t, context_tokens, max_batch, kv, step_tokens);
    if (need.total() <= free_bytes) return {};
    std::string fits;
    for (Tier other : kTiers) {
        const MemoryEstimate e =
            estimate_memory(c, other, context_tokens, max_batch, kv, step_tokens);
        if (e.total() <= free_bytes)
            fits += (fits.empty() ? "" : ", ") + std::string(tier_name(other)) + " (" +
                    mib(e.total()) + ")";
    }
    return "the " + std::string(tier_name(t)) + " tier needs " + mib(need.total()) + " (weights " +
           mib(need.weights) + ", " + std::string(kv_cache_dtype_name(kv)) + " KV cache " +
           mib(need.kv_cache) + " for " + std::to_string(context_tokens) + " tokens, workspace " +
           mib(need.workspace) + ") but " + std::string(device) + " has " + mib(free_bytes) +
           " free of " + mib(total_bytes) + "; " +
           (fits.empty() ? std::string("no tier fits: lower the KV cache budget")
                         : "tiers that fit: " + fits);
}

std::span<const CpuTier> all_cpu_tiers() noexcept {
    return kCpuTiers;
}

std::string_view cpu_tier_name(CpuTier t) noexcept {
    switch (t) {
        case CpuTier::FP32:
            return "fp32";
        case CpuTier::INT8:
            return "int8";
        case CpuTier::INT4:
            return "int4";
    }
    return "?";
}

std::optional<CpuTier> parse_cpu_tier(std::string_view name) noexcept {
    for (CpuTier t : kCpuTiers)
        if (cpu_tier_name(t) == name) return t;
    if (name == "w8a16") return CpuTier::INT8;
    if (name == "w4a16") return CpuTier::INT4;
    return std::nullopt;
}

MemoryEstimate estimate_cpu_memory(const ModelConfig& c, CpuTier t, std::size_t context_tokens,
                                   int step_tokens) {
    const std::size_t h = c.hidden_size, f = c.intermediate_size, d = c.head_dim;
    const std::size_t q = c.num_heads * d, kv = c.num_kv_heads * d;
    const std::size_t vocab = static_cast<std::size_t>(std::max(c.vocab_size, 0));
    MemoryEstimate e;
    std::size_t per_layer = cpu_linear_bytes(q + 2 * kv, h, t) + cpu_linear_bytes(h, q, t) +
                            cpu_linear_bytes(2 * f, h, t) + cpu_linear_bytes(h, f, t);
    per_layer += 2 * h * 4;
    if (c.qk_norm) per_layer += 2 * d * 4;
    if (c.attention_bias) per_layer += (q + 2 * kv) * 4;
    if (c.attention_out_bias) per_layer += h * 4;
    if (c.mlp_bias) per_layer += (2 * f + h) * 4;
    std::size_t lm_head = 0;
    if (!c.tie_word_embeddings || t != CpuTier::FP32) lm_head = cpu_linear_bytes(vocab, h, t);
    e.weights = per_layer * c.num_layers + vocab * h * 4 + lm_head + h * 4;
    e.kv_cache = kv_cache_bytes(c, context_tokens, 4);
    // CpuModel's scratch for a step of `step_tokens` (residual, normed input, scratch, q,
    // attention out, gate, up, RoPE tables; INT tiers: the fused q|k|v and gate|up outputs),
    // the logits of one row and the per-piece buffers of generate().
    const std::size_t n = static_cast<std::size_t>(std::max(1, step_tokens));
    std::size_t act = n * (3 * h + 2 * q + 2 * f + d) * 4;
    if (t != CpuTier::FP32) act += n * (q + 2 * kv + 2 * f) * 4;
    e.workspace = act + vocab * 4 * 2;
    // INT tiers: while loading, the fp32 rows of the layer being quantised (gate|up with one
    // of its halves in flight, or an untied output layer; a tied one is quantised from the
    // embedding); later the prefill's dequantised tile.
    if (t != CpuTier::FP32)
        e.workspace += std::max(
            {c.tie_word_embeddings ? 0 : vocab * h * 4, 3 * f * h * 4, kCpuDequantTileBytes});
    return e;
}

CpuTier choose_cpu_tier(const ModelConfig& c, std::optional<CpuTier> requested,
                        std::size_t available_bytes) {
    const std::size_t usable = usable_cpu_memory(available_bytes);
    std::string fits;
    for (CpuTier t : kCpuTiers) {
        const MemoryEstimate e = estimate_cpu_memory(c, t);
        if (e.total() > usable) continue;
        if (!requested) return t;
        fits += (fits.empty() ? "" : ", ") + std::string(cpu_tier_name(t)) + " (" + mib(e.total()) +
                ")";
    }
    if (requested) {
        const MemoryEstimate need = estimate_cpu_memory(c, *requested);
        if (need.total() <= usable) return *requested;
        std::string msg = "the CPU's ";
        msg.append(cpu_tier_name(*requested))
            .append(" tier needs ")
            .append(mib(need.total()))
            .append(" of memory (weights ")
            .append(mib(need.weights))
            .append(", KV cache and workspace ")
            .append(mib(need.kv_cache + need.workspace))
            .append(") but ")
            .append(mib(available_bytes))
            .append(" is available (a tenth of it is left to the rest of the system); ")
            .append(fits.empty() ? std::string("no CPU tier fits") : "tiers that fit: " + fits);
        throw Error(msg);
    }
    const MemoryEstimate int4 = estimate_cpu_memory(c, CpuTier::INT4);
    throw Error("the model does not fit in the " + mib(available_bytes) +
                " of memory available (a tenth of it left to the rest of the system), even in "
                "the CPU's int4 tier (" +
                mib(int4.total()) + "; fp32 would need " +
                mib(estimate_cpu_memory(c, CpuTier::FP32).total()) + ")");
}

}  // namespace mtdesk
