#pragma once
// The CUDA engine's public face: the GPUs present, and a TranslationEngine (continuous batching
// over a paged KV cache) or a single-sequence Translator on one of them. Built without CUDA,
// devices() is empty and the factories throw UnsupportedError.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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

struct CudaEngineOptions {
    int device = 0;
    Tier tier = Tier::BF16;
    /// KV cache positions over all sequences together (the budget the cache is sized from).
    int64_t kv_tokens = 16384;
    int block_size = 16;  ///< positions per KV block
    int max_batch = 64;   ///< most sequences decoding in one step
    /// Most tokens one step runs (decode tokens plus prefill chunks); long prompts are
    /// prefilled in chunks of what is left, interleaved with decode steps.
    int max_step_tokens = 1024;
    /// Where INT8/INT4 weights are cached once quantised ("" = QuantCache::default_root(),
    /// i.e. $XDG_CACHE_HOME/mtdesk/quantized): the second load of a model skips quantising.
    std::string quant_cache_dir;
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

/// The decoder alone on the GPU, behind the CausalLM interface (logits come back as fp32).
std::unique_ptr<CausalLM> load_cuda_causal_lm(const std::filesystem::path& model_dir,
                                              const CudaEngineOptions& options);

}  // namespace mtdesk::cuda
