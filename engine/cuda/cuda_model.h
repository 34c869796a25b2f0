#pragma once
// The decoder on one GPU with a paged KV cache: weights in a precision tier, a pool of KV
// blocks, and a step function that runs any mix of prefill chunks and decode tokens of many
// sequences at once (the flattened "varlen" batch of vLLM), then picks each sequence's next
// token on the GPU. Owned and used by one thread (the engine thread).

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cuda/ops_cuda.h"
#include "mtdesk/cuda/cuda_engine.h"
#include "mtdesk/model/model_dir.h"

namespace mtdesk::cuda {

/// A token id standing for row `row` of the last CudaModel::sample_async(): a step may take a
/// token that is still being picked on the GPU (it is read there when the step runs), so that
/// the host can queue the next step before it has read this one's tokens (vLLM's asynchronous
/// scheduling, SGLang's overlap scheduler).
constexpr int32_t pending_token(int row) noexcept {
    return -1 - row;
}

/// One sequence's part of a step. A step whose sequences all have one token and want its
/// logits is a decode step: it replays the CUDA graph of its batch bucket (the batch padded
/// with dummy sequences to 1, 2, 4, 8, 16, 24, ... sequences) when options().cuda_graphs.
struct StepSequence {
    /// New tokens, at positions start .. start + n - 1: ids, or pending_token(r) for row r of
    /// the last sample_async().
    std::span<const int32_t> tokens;
    int start = 0;                         ///< positions already in the KV cache
    std::span<const int32_t> block_table;  ///< KV blocks covering 0 .. start + n - 1
    enum class Logits { None, Last, All } logits = Logits::Last;
};

/// Memory of a loaded model, bytes.
struct CudaMemory {
    std::size_t weights = 0, kv_cache = 0, workspace = 0;
};

class CudaModel {
  public:
    virtual ~CudaModel() = default;

    /// Loads `dir` onto options.device. Throws as make_cuda_engine documents.
    static std::unique_ptr<CudaModel> load(const ModelDir& dir, const CudaEngineOptions& options,
                                           const LoadProgress& progress = {});

    /// A model of `config`'s shapes whose weights are random values made on options.device in
    /// options.tier's format (no checkpoint; quantised tiers get random codes and scales): what
    /// a real model of those shapes costs in memory and time, for benchmarks. The output layer
    /// is untied. Throws Error for incomplete shapes, a tier that does not fit, CUDA errors.
    static std::unique_ptr<CudaModel> synthetic(const ModelConfig& config,
                                                const CudaEngineOptions& options,
                                                uint64_t seed = 1);

    virtual const ModelConfig& config() const noexcept = 0;
    virtual const CudaEngineOptions& options() const noexcept = 0;
    virtual CudaMemory memory() const noexcept = 0;
    virtual std::string device_name() const = 0;

    // ---- KV blocks ----
    virtual int num_blocks() const noexcept = 0;
    virtual int free_blocks() const noexcept = 0;
    /// A free block's id, or -1 when none is left.
    virtual int allocate_block() = 0;
    virtual void free_block(int block) = 0;
    /// Blocks one sequence can hold at most (max_position_embeddings / block_size, rounded up).
    virtual int max_blocks_per_sequence() const noexcept = 0;

    /// Runs one step over `seqs` (total new tokens <= options().max_step_tokens, sequences <=
    /// options().max_batch unless only one sequence with Logits::All is given). Writes the new
    /// tokens' keys/values into their blocks and leaves the logits of the requested rows on the
    /// device, in order of the sequences (All: every token of that sequence). Returns the
    /// number of logit rows. Throws Error for ids outside the vocabulary, a pending_token() of
    /// no row of the last sample_async() or a block table too short for the positions.
    virtual int forward(std::span<const StepSequence> seqs) = 0;

    /// Runs the linear layers at every GEMM row-count bucket up to the step budget (each
    /// bucket's algorithm chosen and its kernel loaded: gemm_cuda.h), then a prefill
    /// step and decode steps of one and two sequences on dummy tokens (then frees their KV
    /// blocks), so that the kernels a first request or batch needs are loaded (CUDA and cuBLAS
    /// load kernels lazily: the first prefill GEMM otherwise costs ~100 ms of a user's first
    /// request, and each GEMM kernel cuBLAS picks for a new length 2-4 ms) and the batch-1 and
    /// batch-2 decode graphs are captured. Called at load. Throws like forward().
    virtual void warm_up() = 0;

    /// CUDA graphs captured so far (decode steps by batch bucket and context bound; 0 when
    /// options().cuda_graphs is off or capture is not possible).
    virtual int graphs() const noexcept = 0;

    /// Residual adds and RMSNorms a one-row decode step makes inside the next layer's GEMV
    /// instead of a kernel of their own (CudaEngineOptions::fused_inputs; at most one a layer).
    virtual int norms_in_gemvs() = 0;

    /// Copies the logits of the last forward() to the host as fp32 [rows, vocab_size].
    virtual void logits_to_host(std::vector<float>& out) = 0;

    /// Picks one token per logit row of the last forward() (rows = params.size()), on the GPU;
    /// histories[i] are row i's previous ids, pending_token()s of the sample_async() before
    /// this one included (for the repetition penalty; may be empty when its penalty is 1). Ids
    /// >= vocab_limit are never chosen. Queues the work and returns: the ids come from
    /// sampled_ids(), and the next forward() may take them as pending_token()s. At most two
    /// samples may wait to be read. Throws Error for parameters that do not match the last
    /// forward(), histories longer than the model's positions, a third unread sample.
    virtual void sample_async(std::span<const SampleParams> params,
                              std::span<const std::span<const int32_t>> histories,
                              int vocab_limit) = 0;

    /// The ids of the oldest sample_async() not yet read, one per row; blocks until they are
    /// on the host. Throws Error when none is waiting, or for a CUDA error of the steps.
    virtual std::vector<int32_t> sampled_ids() = 0;

    /// sample_async(), then sampled_ids() of it. Throws as those do, and Error when another
    /// sample is still waiting to be read.
    virtual std::vector<int32_t> sample(std::span<const SampleParams> params,
                                        std::span<const std::span<const int32_t>> histories,
                                        int vocab_limit) = 0;
};

}  // namespace mtdesk::cuda
