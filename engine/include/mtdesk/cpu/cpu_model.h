#pragma once
// The CPU reference implementation of the decoder (fp32 compute, OpenBLAS matrix products).
// Reference for the order of operations: transformers' modeling_hunyuan_v1_dense.py,
// modeling_llama.py, modeling_qwen2.py, modeling_qwen3.py.

#include <memory>
#include <string>

#include "mtdesk/model/model_dir.h"
#include "mtdesk/quant/tiers.h"
#include "mtdesk/runtime/causal_lm.h"

namespace mtdesk {

/// How CpuModel::load holds the weights and where it caches quantised ones.
struct CpuModelOptions {
    int threads = 0;               ///< workers for attention and quantised products; 0 = all
    CpuTier tier = CpuTier::FP32;  ///< the linear layers' format (mtdesk/quant/tiers.h)
    /// INT tiers: root of the on-disk cache of quantised weights (QuantCache), shared with the
    /// GPU engine; "" = QuantCache::default_root(). Without a usable directory every load
    /// quantises again.
    std::string quant_cache_dir;
    bool use_quant_cache = true;  ///< false: never read or write the cache
};

/// Decoder-only transformer on the CPU. In the FP32 tier every weight is converted to fp32 at
/// load (a tied lm_head shares the embedding table). In the INT8 / INT4 tiers the linear
/// layers (Q|K|V and gate|up fused, as the GPU engine holds them, o, down and the output
/// layer) are quantised at load (mtdesk/quant/quantize.h; through the on-disk cache) and read
/// quantised by cpu::linear; the embedding, norms and biases stay fp32, and a tied output
/// layer gets its own quantised copy. Activations and the KV cache are fp32 in every tier.
/// Thread count: OpenBLAS's own (OPENBLAS_NUM_THREADS) for fp32 matrix products, `threads` (0 =
/// all hardware threads) for attention and the quantised products. One forward() at a time
/// per model (it reuses scratch buffers); states are independent of each other.
class CpuModel : public CausalLM {
  public:
    /// Builds the model from an opened, validated directory. Throws FileError naming the tensor
    /// when one is missing or has the wrong shape, Error when the heads do not divide evenly or
    /// head_dim is odd, and what quantize_int8 / quantize_int4 throw (a weight that is not
    /// finite, naming its row and column).
    static std::unique_ptr<CpuModel> load(const ModelDir& dir, const CpuModelOptions& options);
    /// load() in the FP32 tier with `threads` workers.
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

    /// Bytes of weights held (fp32 values, and for INT tiers the quantised values and scales).
    std::size_t weight_bytes() const noexcept;
    CpuTier tier() const noexcept;

  private:
    CpuModel();
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace mtdesk
