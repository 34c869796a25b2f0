#pragma once
// The CUDA engine's public face: the GPUs present, and a TranslationEngine (continuous batching
// over a paged KV cache) or a single-sequence Translator on one of them. Built without CUDA,
// devices() is empty and the factories throw UnsupportedError.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/quant/tiers.h"
#include "mtdesk/translate/translation_engine.h"
#include "mtdesk/translate/translator.h"

namespace mtdesk::cuda {

struct DeviceInfo {
    int index = 0;
    std::string name;
    int64_t total_bytes = 0;
    int64_t free_bytes = 0;
    int compute_capability = 0;  ///< e.g. 90 for sm_90
};

/// The CUDA devices this build can use (empty without CUDA or without a driver/device).
std::vector<DeviceInfo> devices();

/// Device `index`'s figures, its free memory as of now; nullopt when it cannot be queried
/// (no such device, no CUDA). Leaves the calling thread's current device as it was.
std::optional<DeviceInfo> device_info(int index);

/// Operations of a decoder step that CudaEngineOptions::skip_ops can leave out, as bits.
enum class StepOp : unsigned {
    QkvProj = 1,    ///< "qkv": the fused Q/K/V projection
    Rope = 2,       ///< "rope": bias, Q/K norm, rotary embedding and the KV cache write
    Attention = 4,  ///< "attention"
    OProj = 8,      ///< "o": the attention output projection (with its residual add + norm)
    GateUp = 16,    ///< "gate_up": the MLP's gate/up projection (with SwiGLU)
    Down = 32,      ///< "down": the MLP's down projection (with its residual add + norm)
    LmHead = 64,    ///< "lm_head": the output layer
};

/// A comma-separated list of the StepOp names above ("qkv,rope") as a mask of StepOp bits;
/// "" gives 0. Throws Error naming an entry that is not one of them.
inline unsigned parse_step_ops(const std::string& list) {
    static constexpr std::pair<std::string_view, StepOp> kNames[] = {
        {"qkv", StepOp::QkvProj},   {"rope", StepOp::Rope},      {"attention", StepOp::Attention},
        {"o", StepOp::OProj},       {"gate_up", StepOp::GateUp}, {"down", StepOp::Down},
        {"lm_head", StepOp::LmHead}};
    unsigned mask = 0;
    for (std::size_t at = 0; !list.empty();) {
        const std::size_t end = list.find(',', at);
        const std::string_view name = std::string_view(list).substr(at, end - at);
        const auto* it = std::find_if(std::begin(kNames), std::end(kNames),
                                      [&](const auto& n) { return n.first == name; });
        if (it == std::end(kNames))
            throw Error("unknown step operation \"" + std::string(name) +
                        "\" (expected qkv, rope, attention, o, gate_up, down or lm_head)");
        mask |= static_cast<unsigned>(it->second);
        if (end == std::string::npos) break;
        at = end + 1;
    }
    return mask;
}

struct CudaEngineOptions {
    int device = 0;
    Tier tier = Tier::BF16;
    /// How the KV cache holds keys and values: 16-bit (the activations' type) or int8 with an
    /// fp32 scale per position and kv head, about half the bytes (so twice the positions in
    /// the same memory), quantised as each position is written and dequantised inside the
    /// attention kernels. estimate_memory() counts it.
    KvCacheDtype kv_cache = KvCacheDtype::Auto;
    /// KV cache positions over all sequences together (the budget the cache is sized from).
    int64_t kv_tokens = 16384;
    int block_size = 16;  ///< positions per KV block
    int max_batch = 64;   ///< most sequences decoding in one step
    /// Most tokens one step runs (decode tokens plus prefill chunks); long prompts are
    /// prefilled in chunks of what is left, interleaved with decode steps.
    int max_step_tokens = kDefaultStepTokens;
    /// Decode steps replay CUDA graphs (one per batch-size bucket and context bound, captured
    /// on first use) instead of launching each kernel: launch overhead, not bandwidth, is what
    /// limits small models. Off: every step is launched kernel by kernel (for comparison).
    bool cuda_graphs = true;
    /// Kernels are launched with programmatic dependent launch on GPUs that have it (sm_90+):
    /// each starts while the previous one finishes and waits only where it needs its results.
    /// Process-wide (the last model opened sets it). Off: plain launches (for comparison).
    bool programmatic_launch = true;
    /// The engine queues each step before it reads the tokens of the step before (those
    /// sequences feed their token from the GPU, pending_token() in cuda_model.h), so that the
    /// host's scheduling, detokenising and streaming run while the GPU computes instead of
    /// between steps. A sequence that stops on a stop token then costs one step of wasted
    /// work. Off: each step's tokens are read before the next is planned (for comparison).
    bool overlap_steps = true;
    /// Small decode steps make a layer's inputs inside the kernels that read them, instead of
    /// in kernels of their own between them: at one row of x on INT4 weights, the residual add
    /// and RMSNorm after attention in the gate/up layer's GEMV blocks where the layers allow
    /// (linear_swiglu_norm_in); and where attention runs its staged form (batch 1, and 2 on
    /// models of 16 query heads), the attention input step (QKV bias, Q/K norm, RoPE, the KV
    /// cache write) in the attention blocks (rope_paged_attention). The same results bit for
    /// bit. Off: the separate kernels (for comparison).
    bool fused_inputs = true;
    /// Where INT8/INT4 weights are cached once quantised ("" = QuantCache::default_root(),
    /// i.e. $XDG_CACHE_HOME/mtdesk/quantized): the second load of a model skips quantising.
    std::string quant_cache_dir;
    /// For profiling only (`mtdesk bench --skip`): the StepOp bits set here are left out of
    /// every forward pass, so that a benchmark shows what each operation costs in a step
    /// (its time with and without it). The outputs are then meaningless. 0 in normal use.
    unsigned skip_ops = 0;
};

/// Loading progress: (done, total, what).
using LoadProgress = std::function<void(int done, int total, const std::string& what)>;

/// Opens `model_dir` on a GPU as a batching TranslationEngine: weights uploaded in
/// options.tier (quantised at load for INT8/INT4), KV cache and workspace allocated up front.
/// Throws FileError / UnsupportedError like Translator::open_cpu, and Error when the tier does
/// not fit in the device's free memory (the message gives needed vs free and the tiers that
/// would fit); nothing stays allocated on the GPU after a failed load.
std::unique_ptr<TranslationEngine> make_cuda_engine(const std::filesystem::path& model_dir,
                                                    const CudaEngineOptions& options,
                                                    const LoadProgress& progress = {});

/// A Translator whose CausalLM runs on the GPU one sequence at a time (generation through the
/// same generate() loop as the CPU engine): for parity tests and simple tools.
std::unique_ptr<Translator> open_cuda_translator(const std::filesystem::path& model_dir,
                                                 const CudaEngineOptions& options);

/// A batching engine over a model of `config`'s shapes whose weights are random values made on
/// the GPU in options.tier's format (no checkpoint is read; quantised tiers get random codes),
/// with tokenizer_dir's tokenizer and chat template (its vocabulary must fit config's): what a
/// real model of those shapes costs in memory and time, for `mtdesk bench --synthetic`.
/// Throws like make_cuda_engine.
std::unique_ptr<TranslationEngine> make_synthetic_cuda_engine(
    const std::filesystem::path& tokenizer_dir, const ModelConfig& config,
    const CudaEngineOptions& options);

/// Device-to-device copy bandwidth of GPU `device` in bytes moved (read + written) per second:
/// the median of several 1 GiB cudaMemcpy calls (256 MiB when less is free). The practical
/// bandwidth limit `mtdesk bench` compares decode steps with. Throws Error on CUDA errors.
double copy_bandwidth(int device);

/// The decoder alone on the GPU, behind the CausalLM interface (logits come back as fp32).
std::unique_ptr<CausalLM> load_cuda_causal_lm(const std::filesystem::path& model_dir,
                                              const CudaEngineOptions& options);

}  // namespace mtdesk::cuda
