#pragma once
// The CPU reference implementation of the decoder (fp32 compute, OpenBLAS matrix products).
// Reference for the order of operations: transformers' modeling_hunyuan_v1_dense.py,
// modeling_llama.py, modeling_qwen2.py, modeling_qwen3.py.

#include <memory>

#include "mtdesk/model/model_dir.h"
#include "mtdesk/runtime/causal_lm.h"

namespace mtdesk {

/// Decoder-only transformer on the CPU. Weights are converted to fp32 at load (a tied lm_head
/// shares the embedding table). Activations and the KV cache are fp32.
/// Thread count: OpenBLAS's own (OPENBLAS_NUM_THREADS) for matrix products, `threads` (0 = all
/// hardware threads) for attention. One forward() at a time per model (it reuses scratch
/// buffers); states are independent of each other.
class CpuModel : public CausalLM {
  public:
    /// Builds the model from an opened, validated directory. Throws FileError naming the tensor
    /// when one is missing or has the wrong shape, Error when the heads do not divide evenly or
    /// head_dim is odd.
    static std::unique_ptr<CpuModel> load(const ModelDir& dir, int threads = 0);
    ~CpuModel() override;

    const ModelConfig& config() const noexcept override;
    /// A CPU KV cache of [max_positions, kv_heads, head_dim] fp32 keys and values per layer.
    /// Throws Error when max_positions is outside 1 .. max_position_embeddings.
    std::unique_ptr<KvState> new_state(int max_positions) const override;
    /// See CausalLM::forward. Prefill runs one GEMM per projection over all `tokens`.
    /// Throws Error as CausalLM says, and for an empty `tokens` or a state of another model type.
    void forward(KvState& state, std::span<const int32_t> tokens, std::span<float> logits,
                 bool all_positions) override;

    /// Bytes of fp32 weights held.
    std::size_t weight_bytes() const noexcept;

  private:
    CpuModel();
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace mtdesk
