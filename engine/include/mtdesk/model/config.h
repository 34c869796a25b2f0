#pragma once
// config.json / generation_config.json of a Hugging Face causal-LM checkpoint.
// Reference for the field names and their meaning: transformers' configuration_*.py of
// HunYuanDenseV1, Llama, Qwen2 and Qwen3.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
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
    Default,         ///< inv_freq[i] = theta^(-2i/d)
    DynamicAlpha,    ///< Hunyuan: theta' = theta * alpha^(d/(d-2)), then Default
    Linear,          ///< positions divided by `rope_factor`
    Llama3,          ///< Llama 3.1 frequency-band scaling
};

/// The decoder-only transformer's hyper-parameters, after every family default is applied.
struct ModelConfig {
    Architecture architecture = Architecture::HunYuanDenseV1;
    std::string architecture_name;  ///< as written in config.json
    int vocab_size = 0;
    int hidden_size = 0;
    int intermediate_size = 0;
    int num_layers = 0;
    int num_heads = 0;     ///< query heads
    int num_kv_heads = 0;  ///< key/value heads (GQA when < num_heads)
    int head_dim = 0;
    int max_position_embeddings = 0;
    float rms_norm_eps = 1e-6f;
    double rope_theta = 10000.0;
    RopeType rope_type = RopeType::Default;
    double rope_alpha = 1.0;   ///< DynamicAlpha only
    double rope_factor = 1.0;  ///< Linear / Llama3
    double rope_low_freq_factor = 1.0;   ///< Llama3
    double rope_high_freq_factor = 4.0;  ///< Llama3
    int rope_original_max_position = 8192;  ///< Llama3
    bool tie_word_embeddings = false;
    bool attention_bias = false;  ///< bias on q/k/v projections (Qwen2; attention_bias in others)
    bool attention_out_bias = false;  ///< bias on o_proj (Llama's attention_bias covers both)
    bool mlp_bias = false;
    bool qk_norm = false;             ///< per-head RMSNorm on Q and K
    bool qk_norm_after_rope = false;  ///< true for HunYuanDenseV1, false for Qwen3
    std::string torch_dtype;          ///< "bfloat16", "float16", "float32" or empty
    std::optional<int> bos_token_id;
    std::vector<int> eos_token_ids;
    std::optional<int> pad_token_id;

    /// Effective rotary base after DynamicAlpha scaling.
    double effective_rope_theta() const;
    /// Number of parameters implied by the shapes (embeddings counted once when tied).
    int64_t parameter_count() const;

    /// Reads and validates `path` (config.json). Throws FileError for malformed JSON or missing /
    /// non-positive sizes, UnsupportedError for an unknown architecture or rope scaling type.
    static ModelConfig from_file(const std::filesystem::path& path);
    /// Same, from JSON text; `name` is used in error messages.
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

    /// Missing file -> all fields empty. Malformed JSON -> FileError.
    static GenerationConfig from_file(const std::filesystem::path& path);
};

/// Name, dtype-independent shape and role of every tensor a config needs, in load order
/// ("model.embed_tokens.weight" [vocab, hidden], ...). Used to validate checkpoints before any
/// allocation.
struct ExpectedTensor {
    std::string name;
    std::vector<int64_t> shape;
};
std::vector<ExpectedTensor> expected_tensors(const ModelConfig& config);

}  // namespace mtdesk
