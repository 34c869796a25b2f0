#pragma once
// config.json / generation_config.json of a Hugging Face causal-LM checkpoint.
// Reference for the field names and their meaning: transformers' configuration_*.py of
// HunYuanDenseV1, Llama, Qwen2 and Qwen3.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mtdesk {

/// Model families the engine implements. They share one decoder layer with switches.
enum class Architecture {
    HunYuanDenseV1,  ///< HunYuanDenseV1ForCausalLM: QK RMSNorm after RoPE, dynamic-alpha RoPE
    Llama,           ///< LlamaForCausalLM
    Qwen2,           ///< Qwen2ForCausalLM: bias on q/k/v projections
    Qwen3,           ///< Qwen3ForCausalLM: QK RMSNorm before RoPE
};

/// How rotary position embedding frequencies are computed.
enum class RopeType {
    Default,       ///< inv_freq[i] = theta^(-2i/d)
    DynamicAlpha,  ///< Hunyuan: theta' = theta * alpha^(d/(d-2)), then Default
    Linear,        ///< positions divided by `rope_factor`
    Llama3,        ///< Llama 3.1 frequency-band scaling
};

/// The decoder-only transformer's hyper-parameters, after every family default is applied.
///
/// Family defaults (transformers 5) for keys config.json leaves out: num_key_value_heads =
/// num_attention_heads (Qwen2/Qwen3: 32 when the key is absent); head_dim = `head_dim`, else
/// Hunyuan's `attention_head_dim`, else 128 for Qwen3, else hidden_size / num_attention_heads;
/// max_position_embeddings 2048 (Qwen: 32768); rms_norm_eps 1e-5 (Hunyuan) / 1e-6; rope_theta
/// 10000; tie_word_embeddings false; bos/eos 1/2 (Hunyuan, Llama), pad 0 (Hunyuan).
/// vocab_size, hidden_size, intermediate_size, num_hidden_layers and num_attention_heads are
/// required.
struct ModelConfig {
    Architecture architecture = Architecture::HunYuanDenseV1;
    std::string architecture_name;  ///< as written in config.json (or implied by model_type)
    int vocab_size = 0;
    int hidden_size = 0;
    int intermediate_size = 0;
    int num_layers = 0;
    int num_heads = 0;     ///< query heads
    int num_kv_heads = 0;  ///< key/value heads (GQA when < num_heads)
    int head_dim = 0;      ///< always even
    int max_position_embeddings = 0;
    float rms_norm_eps = 1e-6f;
    double rope_theta = 10000.0;  ///< as configured; see effective_rope_theta()
    RopeType rope_type = RopeType::Default;
    double rope_alpha = 1.0;                ///< DynamicAlpha only
    double rope_factor = 1.0;               ///< Linear / Llama3
    double rope_low_freq_factor = 1.0;      ///< Llama3
    double rope_high_freq_factor = 4.0;     ///< Llama3
    int rope_original_max_position = 8192;  ///< Llama3
    bool tie_word_embeddings = false;
    bool attention_bias = false;  ///< bias on q/k/v projections (Qwen2; attention_bias in others)
    bool attention_out_bias = false;  ///< bias on o_proj (attention_bias of Hunyuan, Llama, Qwen3
                                      ///< covers both; never for Qwen2)
    bool mlp_bias = false;            ///< bias on gate/up/down (Llama's mlp_bias only)
    bool qk_norm = false;             ///< per-head RMSNorm on Q and K (Hunyuan: query_layernorm /
                           ///< key_layernorm, Qwen3: q_norm / k_norm; weights [head_dim])
    bool qk_norm_after_rope = false;  ///< true for HunYuanDenseV1, false for Qwen3
    std::string torch_dtype;  ///< "dtype" (transformers 5) or "torch_dtype": "bfloat16", ... or ""
    /// Token ids as config.json gives them (non-negative, not checked against vocab_size: some
    /// published configs disagree with their tokenizer; the tokenizer files win).
    std::optional<int> bos_token_id;
    std::vector<int> eos_token_ids;  ///< eos_token_id: one id or a list
    std::optional<int> pad_token_id;

    /// Effective rotary base after DynamicAlpha scaling: rope_theta * alpha^(d / (d - 2)) with
    /// d = head_dim; rope_theta for the other types.
    double effective_rope_theta() const;
    /// The head_dim / 2 rotary inverse frequencies of this config (all RoPE types), computed as
    /// transformers does (fp32 exponent and result): inv_freq[i] = 1 / base^(2i / head_dim) with
    /// base = effective_rope_theta(), then divided by rope_factor (Linear) or band-scaled
    /// (Llama3). The angle of position p is p * inv_freq[i], applied rotate-half style.
    std::vector<float> rope_inv_freq() const;
    /// Number of parameters implied by the shapes: the sum over expected_tensors() (embeddings
    /// counted once when tied). Cannot overflow for a config that from_json accepted.
    int64_t parameter_count() const;

    /// Reads and validates `path` (config.json). Throws FileError naming the file and the field
    /// for malformed JSON, a missing / mistyped / non-positive / absurdly large size,
    /// num_attention_heads not a multiple of num_key_value_heads, an odd head_dim, malformed rope
    /// parameters; UnsupportedError for an unknown architecture, a rope type other than
    /// default / linear / llama3 / Hunyuan's dynamic-with-alpha ("dynamic" without alpha, "yarn",
    /// "longrope", ... are refused), partial rotary, a hidden_act other than silu, sliding-window
    /// layers, and Hunyuan flags transformers does not implement (use_qk_norm false, use_cla,
    /// use_mla, MoE).
    static ModelConfig from_file(const std::filesystem::path& path);
    /// Same, from JSON text; `name` is used in error messages (as the file).
    static ModelConfig from_json(const std::string& json_text, const std::string& name);
};

/// generation_config.json: the sampling defaults the model's publisher recommends.
struct GenerationConfig {
    std::optional<bool> do_sample;
    std::optional<float> temperature;
    std::optional<int> top_k;
    std::optional<float> top_p;
    std::optional<float> repetition_penalty;
    std::optional<int> max_new_tokens;
    std::optional<int> bos_token_id;
    std::vector<int> eos_token_ids;
    std::optional<int> pad_token_id;

    /// Missing file -> all fields empty. Malformed JSON or a mistyped / out-of-range field ->
    /// FileError naming the file and the field.
    static GenerationConfig from_file(const std::filesystem::path& path);
};

/// Name and dtype-independent shape of every tensor a config needs, in the order of
/// transformers' state_dict(): "model.embed_tokens.weight" [vocab, hidden]; per layer N
/// "model.layers.N.self_attn.{q,k,v,o}_proj.weight" ([heads*head_dim, hidden],
/// [kv_heads*head_dim, hidden] x2, [hidden, heads*head_dim]) each followed by its ".bias" [rows]
/// when the config has one, then the QK norms [head_dim] (Hunyuan
/// "self_attn.query_layernorm.weight" / "self_attn.key_layernorm.weight", Qwen3
/// "self_attn.q_norm.weight" / "self_attn.k_norm.weight"), "mlp.{gate,up}_proj.weight"
/// [intermediate, hidden], "mlp.down_proj.weight" [hidden, intermediate] (+ biases with
/// mlp_bias), "input_layernorm.weight" and "post_attention_layernorm.weight" [hidden]; then
/// "model.norm.weight" [hidden] and, unless tie_word_embeddings, "lm_head.weight"
/// [vocab, hidden]. Used to validate checkpoints before any allocation.
struct ExpectedTensor {
    std::string name;
    std::vector<int64_t> shape;
};
std::vector<ExpectedTensor> expected_tensors(const ModelConfig& config);

/// The configuration of a published model's shapes for benchmarks with random weights:
/// "hy-mt-7b" (Hunyuan-MT-7B and HY-MT1.5-7B: hidden 4096, 32 layers, 32 query / 8 KV heads of
/// 128, SwiGLU 14336, vocabulary 128256) or "hy-mt1.5-1.8b" (hidden 2048, 32 layers, 16 / 4
/// heads of 128, SwiGLU 6144, vocabulary 120818); RoPE, norm and QK-norm settings are `base`'s
/// (the bundled demo model has the same architecture); untied output layer, no biases.
/// nullopt for other names.
std::optional<ModelConfig> published_shapes(std::string_view name, const ModelConfig& base);

}  // namespace mtdesk
