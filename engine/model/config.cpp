// config.json / generation_config.json parsing with transformers' per-family defaults, and the
// list of tensors each family's checkpoint holds.
//
// Defaults and switches follow transformers 5 (models/<family>/configuration_*.py and
// modeling_*.py, modeling_rope_utils.py):
//   HunYuanDenseV1: num_key_value_heads=heads, max_position_embeddings=2048, rms_norm_eps=1e-5,
//     bos=1, eos=2, pad=0; attention_bias covers q/k/v/o; no MLP bias; query_layernorm /
//     key_layernorm (per-head RMSNorm) applied AFTER RoPE; rope "dynamic" with an `alpha` is a
//     fixed NTK-alpha base: theta * alpha^(d/(d-2)).
//   Llama: num_key_value_heads=heads, max_position_embeddings=2048, rms_norm_eps=1e-6, bos=1,
//     eos=2; attention_bias covers q/k/v/o; mlp_bias covers gate/up/down.
//   Qwen2: num_key_value_heads=32 when the key is absent, max_position_embeddings=32768,
//     rms_norm_eps=1e-6; bias on q/k/v always, never on o; no ids by default.
//   Qwen3: like Qwen2 but head_dim=128 when absent, attention_bias covers q/k/v/o, q_norm /
//     k_norm applied BEFORE RoPE.
// All four: hidden_act "silu", tie_word_embeddings false, rope_theta 10000.

#include "mtdesk/model/config.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <numbers>

#include <nlohmann/json.hpp>

#include "model/json_util.h"
#include "mtdesk/error.h"

namespace mtdesk {

namespace {

using json = nlohmann::json;
using model_detail::quote_name;
using model_detail::short_dump;

// Anything bigger is not a model this engine could hold; refusing it keeps every product of two
// sizes well inside int64.
constexpr int64_t kMaxDim = int64_t{1} << 28;
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxHeadDim = 65536;

// Typed access to the fields of one JSON object, with errors naming the file and the field.
class Fields {
  public:
    Fields(const json& object, const std::string& file, std::string prefix = {})
        : j_(object), file_(file), prefix_(std::move(prefix)) {}

    /// The value of `key`, nullptr when absent or JSON null.
    const json* get(const char* key) const {
        const auto it = j_.find(key);
        if (it == j_.end() || it->is_null()) return nullptr;
        return &*it;
    }
    bool has_key(const char* key) const { return j_.contains(key); }

    std::optional<int64_t> integer(const char* key) const {
        const json* v = get(key);
        if (!v) return std::nullopt;
        if (v->is_number_integer()) return v->get<int64_t>();
        // 4096.0 is an integer written as a float: accept it, reject 4096.5.
        if (v->is_number_float()) {
            const double d = v->get<double>();
            if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
                return static_cast<int64_t>(d);
            }
        }
        fail(key, "must be an integer, got " + short_dump(*v));
    }
    std::optional<double> number(const char* key) const {
        const json* v = get(key);
        if (!v) return std::nullopt;
        if (!v->is_number()) fail(key, "must be a number, got " + short_dump(*v));
        const double d = v->get<double>();
        if (!std::isfinite(d)) fail(key, "must be finite");
        return d;
    }
    std::optional<bool> boolean(const char* key) const {
        const json* v = get(key);
        if (!v) return std::nullopt;
        if (!v->is_boolean()) fail(key, "must be true or false, got " + short_dump(*v));
        return v->get<bool>();
    }
    std::optional<std::string> string(const char* key) const {
        const json* v = get(key);
        if (!v) return std::nullopt;
        if (!v->is_string()) fail(key, "must be a string, got " + short_dump(*v));
        return v->get<std::string>();
    }
    /// A token id: a non-negative integer (or absent / null).
    std::optional<int> token_id(const char* key) const {
        const auto v = integer(key);
        if (!v) return std::nullopt;
        if (*v < 0 || *v > std::numeric_limits<int>::max()) {
            fail(key, "must be a non-negative token id, got " + std::to_string(*v));
        }
        return static_cast<int>(*v);
    }
    /// An id or a list of ids (eos_token_id). Absent / null -> nullopt.
    std::optional<std::vector<int>> token_ids(const char* key) const {
        const json* v = get(key);
        if (!v) return std::nullopt;
        if (!v->is_array()) return std::vector<int>{*token_id(key)};
        std::vector<int> out;
        for (const json& e : *v) {
            if (!e.is_number_integer() || e.get<int64_t>() < 0 ||
                e.get<int64_t>() > std::numeric_limits<int>::max()) {
                fail(key, "must be a token id or a list of token ids, got " + short_dump(*v));
            }
            out.push_back(e.get<int>());
        }
        return out;
    }

    [[noreturn]] void fail(const char* key, const std::string& problem) const {
        throw FileError(file_, prefix_ + key + " " + problem);
    }
    [[noreturn]] void unsupported(const std::string& problem) const {
        throw UnsupportedError(file_, problem);
    }
    const std::string& file() const { return file_; }

  private:
    const json& j_;
    const std::string& file_;
    std::string prefix_;
};

struct Family {
    const char* architecture;
    const char* model_type;
    Architecture arch;
};

constexpr Family kFamilies[] = {
    {"HunYuanDenseV1ForCausalLM", "hunyuan_v1_dense", Architecture::HunYuanDenseV1},
    {"LlamaForCausalLM", "llama", Architecture::Llama},
    {"Qwen2ForCausalLM", "qwen2", Architecture::Qwen2},
    {"Qwen3ForCausalLM", "qwen3", Architecture::Qwen3},
};

std::string supported_list() {
    std::string s;
    for (const Family& f : kFamilies) {
        if (!s.empty()) s += ", ";
        s += f.architecture;
    }
    return s;
}

const Family& pick_family(const Fields& f) {
    const json* archs = f.get("architectures");
    if (archs) {
        if (!archs->is_array() || archs->empty()) {
            f.fail("architectures", "must be a non-empty list of class names");
        }
        for (const json& a : *archs) {
            if (!a.is_string()) f.fail("architectures", "must hold strings");
            for (const Family& fam : kFamilies) {
                if (a.get_ref<const std::string&>() == fam.architecture) return fam;
            }
        }
        f.unsupported("architecture " + quote_name((*archs)[0].get<std::string>()) +
                      " is not supported (mtdesk implements " + supported_list() + ")");
    }
    // No "architectures": fall back on model_type, as AutoModelForCausalLM would.
    const auto model_type = f.string("model_type");
    if (!model_type) {
        f.fail("architectures", "is missing (and there is no model_type either)");
    }
    for (const Family& fam : kFamilies) {
        if (*model_type == fam.model_type) return fam;
    }
    f.unsupported("model_type " + quote_name(*model_type) +
                  " is not supported (mtdesk implements " + supported_list() + ")");
}

int positive(const Fields& f, const char* key, std::optional<int64_t> value,
             int64_t limit = kMaxDim) {
    if (!value) f.fail(key, "is missing");
    if (*value <= 0) f.fail(key, "must be a positive integer, got " + std::to_string(*value));
    if (*value > limit) {
        f.fail(key, "is absurdly large (" + std::to_string(*value) + ", limit " +
                        std::to_string(limit) + ")");
    }
    return static_cast<int>(*value);
}

void parse_rope(const Fields& top, ModelConfig& c) {
    // transformers: `rope_scaling` (legacy name) wins over `rope_parameters` when it is a
    // non-empty dict; rope_theta inside the dict wins over the top-level key; the type is
    // "rope_type", else the legacy "type", else "default".
    const json* rp = nullptr;
    const char* rp_key = "rope_scaling";
    if (const json* rs = top.get("rope_scaling"); rs && !(rs->is_object() && rs->empty())) {
        rp = rs;
    } else if (const json* p = top.get("rope_parameters")) {
        rp = p;
        rp_key = "rope_parameters";
    }
    static const json kEmpty = json::object();
    if (rp && !rp->is_object()) top.fail(rp_key, "must be an object, got " + short_dump(*rp));
    if (rp && rp->contains("full_attention") && (*rp)["full_attention"].is_object()) {
        // Per-layer-type form ({"full_attention": {...}}): only one kind of layer is implemented.
        if (rp->size() != 1) {
            top.unsupported(std::string(rp_key) +
                            " differs per layer type, which is not supported");
        }
        rp = &(*rp)["full_attention"];
    }
    const Fields r(rp ? *rp : kEmpty, top.file(), std::string(rp_key) + ".");

    const auto theta = r.number("rope_theta") ? r.number("rope_theta") : top.number("rope_theta");
    c.rope_theta = theta.value_or(10000.0);
    if (!(c.rope_theta > 0)) top.fail("rope_theta", "must be positive");

    auto partial = r.number("partial_rotary_factor");
    if (!partial) partial = top.number("partial_rotary_factor");
    if (partial && *partial != 1.0) {
        top.unsupported("partial_rotary_factor " + std::to_string(*partial) +
                        " (RoPE on part of the head) is not supported");
    }

    std::string type = "default";
    if (auto t = r.string("rope_type")) {
        type = *t;
    } else if (auto legacy = r.string("type")) {
        type = *legacy;
    }

    const bool hunyuan = c.architecture == Architecture::HunYuanDenseV1;
    const auto alpha = r.number("alpha");
    if (type == "default") {
        c.rope_type = RopeType::Default;
    } else if (hunyuan && ((type == "dynamic" && alpha && *alpha != 0.0) || type == "ntk_alpha")) {
        // HunYuanDenseV1RotaryEmbedding: "dynamic" with a (truthy) alpha is the fixed NTK-alpha
        // base, not length-dependent dynamic NTK.
        if (!alpha) r.fail("alpha", "is missing (needed by rope type ntk_alpha)");
        if (!(*alpha > 0)) r.fail("alpha", "must be positive, got " + std::to_string(*alpha));
        c.rope_type = RopeType::DynamicAlpha;
        c.rope_alpha = *alpha;
    } else if (type == "linear") {
        const auto factor = r.number("factor");
        if (!factor) r.fail("factor", "is missing (needed by rope type linear)");
        if (!(*factor > 0)) r.fail("factor", "must be positive");
        c.rope_type = RopeType::Linear;
        c.rope_factor = *factor;
    } else if (type == "llama3") {
        const auto factor = r.number("factor");
        const auto low = r.number("low_freq_factor");
        const auto high = r.number("high_freq_factor");
        if (!factor) r.fail("factor", "is missing (needed by rope type llama3)");
        if (!low) r.fail("low_freq_factor", "is missing (needed by rope type llama3)");
        if (!high) r.fail("high_freq_factor", "is missing (needed by rope type llama3)");
        if (!(*factor > 0)) r.fail("factor", "must be positive");
        if (!(*low > 0)) r.fail("low_freq_factor", "must be positive");
        if (!(*high > *low)) r.fail("high_freq_factor", "must be greater than low_freq_factor");
        // Priority as in standardize_rope_params: a top-level original_max_position_embeddings,
        // then the dict's, then max_position_embeddings.
        auto original = top.integer("original_max_position_embeddings");
        if (!original) original = r.integer("original_max_position_embeddings");
        if (!original) original = c.max_position_embeddings;
        if (*original <= 0 || *original > kMaxDim) {
            r.fail("original_max_position_embeddings", "must be a positive integer");
        }
        c.rope_type = RopeType::Llama3;
        c.rope_factor = *factor;
        c.rope_low_freq_factor = *low;
        c.rope_high_freq_factor = *high;
        c.rope_original_max_position = static_cast<int>(*original);
    } else if (type == "dynamic") {
        // Only HunYuanDenseV1 reads an alpha; for the others "dynamic" is length-dependent NTK.
        top.unsupported(alpha && !hunyuan
                            ? "rope type 'dynamic' with an alpha is Hunyuan's NTK-alpha RoPE, "
                              "which " +
                                  c.architecture_name +
                                  " does not have (is the architecture right?); its own "
                                  "length-dependent dynamic NTK scaling is not supported"
                            : "rope type 'dynamic' without an alpha (length-dependent dynamic "
                              "NTK scaling) is not supported");
    } else {
        top.unsupported("rope type " + quote_name(type) +
                        " is not supported (mtdesk implements default, linear, llama3 and "
                        "Hunyuan's dynamic alpha)");
    }
}

void check_sliding_window(const Fields& f, const ModelConfig& c) {
    if (const json* lt = f.get("layer_types")) {
        if (!lt->is_array()) f.fail("layer_types", "must be a list of strings");
        for (const json& t : *lt) {
            if (!t.is_string()) f.fail("layer_types", "must be a list of strings");
            if (t.get_ref<const std::string&>() != "full_attention") {
                f.unsupported("layer type " + quote_name(t.get<std::string>()) +
                              " is not supported (only full_attention)");
            }
        }
        return;
    }
    // Qwen2/Qwen3 without layer_types: layers >= max_window_layers slide when use_sliding_window.
    if (f.boolean("use_sliding_window").value_or(false) &&
        (c.architecture == Architecture::Qwen2 || c.architecture == Architecture::Qwen3)) {
        const int64_t max_window_layers = f.integer("max_window_layers").value_or(28);
        if (f.get("sliding_window") && max_window_layers < c.num_layers) {
            f.unsupported("sliding-window attention (use_sliding_window) is not supported");
        }
    }
}

// Sum of the expected tensors' sizes; nullopt when it overflows int64.
std::optional<int64_t> checked_parameter_count(const ModelConfig& c) {
    int64_t total = 0;
    for (const ExpectedTensor& t : expected_tensors(c)) {
        int64_t n = 1;
        for (int64_t d : t.shape) {
            if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
        }
        if (__builtin_add_overflow(total, n, &total)) return std::nullopt;
    }
    return total;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

ModelConfig ModelConfig::from_file(const std::filesystem::path& path) {
    const std::string name = path.string();
    return from_json(model_detail::read_text_file(name), name);
}

ModelConfig ModelConfig::from_json(const std::string& json_text, const std::string& name) {
    const json root = model_detail::parse_json(json_text, name, "config");
    if (!root.is_object()) throw FileError(name, "config is not a JSON object");
    const Fields f(root, name);

    ModelConfig c;
    const Family& fam = pick_family(f);
    c.architecture = fam.arch;
    c.architecture_name = fam.architecture;
    const Architecture a = c.architecture;
    const bool hunyuan = a == Architecture::HunYuanDenseV1;
    const bool qwen = a == Architecture::Qwen2 || a == Architecture::Qwen3;

    // Sizes. The core ones have transformers defaults too (a 7B-ish shape), but a config.json
    // without them is broken, not a 7B model: they are required here.
    c.vocab_size = positive(f, "vocab_size", f.integer("vocab_size"));
    c.hidden_size = positive(f, "hidden_size", f.integer("hidden_size"));
    c.intermediate_size = positive(f, "intermediate_size", f.integer("intermediate_size"));
    c.num_layers = positive(f, "num_hidden_layers", f.integer("num_hidden_layers"), kMaxLayers);
    c.num_heads = positive(f, "num_attention_heads", f.integer("num_attention_heads"));

    // num_key_value_heads: Qwen2/Qwen3 default to 32 when the key is absent, and to the number
    // of query heads when it is null; the others default to the number of query heads.
    if (qwen && !f.has_key("num_key_value_heads")) {
        c.num_kv_heads = 32;
    } else {
        const auto kv = f.integer("num_key_value_heads");
        c.num_kv_heads = kv ? positive(f, "num_key_value_heads", kv) : c.num_heads;
    }
    if (c.num_kv_heads > c.num_heads || c.num_heads % c.num_kv_heads != 0) {
        f.fail("num_attention_heads", "(" + std::to_string(c.num_heads) +
                                          ") must be a multiple of num_key_value_heads (" +
                                          std::to_string(c.num_kv_heads) + ")");
    }

    // head_dim: `head_dim`, else Hunyuan's `attention_head_dim`, else Qwen3's default 128, else
    // hidden_size / num_attention_heads.
    if (auto hd = f.integer("head_dim")) {
        c.head_dim = positive(f, "head_dim", hd, kMaxHeadDim);
    } else if (auto ahd = hunyuan ? f.integer("attention_head_dim") : std::nullopt) {
        c.head_dim = positive(f, "attention_head_dim", ahd, kMaxHeadDim);
    } else if (a == Architecture::Qwen3 && !f.has_key("head_dim")) {
        c.head_dim = 128;
    } else {
        if (c.hidden_size % c.num_heads != 0) {
            f.fail("hidden_size", "(" + std::to_string(c.hidden_size) +
                                      ") is not a multiple of num_attention_heads (" +
                                      std::to_string(c.num_heads) + ") and head_dim is not given");
        }
        c.head_dim = c.hidden_size / c.num_heads;
        if (c.head_dim > kMaxHeadDim) f.fail("hidden_size", "per head is absurdly large");
    }
    if (c.head_dim % 2 != 0) {
        f.fail("head_dim", "must be even for rotary embeddings, got " + std::to_string(c.head_dim));
    }
    if (int64_t{c.num_heads} * c.head_dim > kMaxDim) {
        f.fail("num_attention_heads", "times head_dim is absurdly large");
    }

    c.max_position_embeddings = positive(
        f, "max_position_embeddings",
        f.integer("max_position_embeddings").value_or(qwen ? 32768 : 2048), int64_t{1} << 30);
    c.rms_norm_eps = static_cast<float>(f.number("rms_norm_eps").value_or(hunyuan ? 1e-5 : 1e-6));
    if (!(c.rms_norm_eps > 0) || !std::isfinite(c.rms_norm_eps)) {
        f.fail("rms_norm_eps", "must be a positive fp32 number");
    }

    if (auto act = f.string("hidden_act"); act && *act != "silu") {
        f.unsupported("hidden_act " + quote_name(*act) + " is not supported (only silu)");
    }

    c.tie_word_embeddings = f.boolean("tie_word_embeddings").value_or(false);
    const bool attention_bias = f.boolean("attention_bias").value_or(false);
    switch (a) {
        case Architecture::HunYuanDenseV1:
        case Architecture::Llama:
        case Architecture::Qwen3:
            c.attention_bias = attention_bias;
            c.attention_out_bias = attention_bias;
            break;
        case Architecture::Qwen2:  // nn.Linear(bias=True) for q/k/v, bias=False for o
            c.attention_bias = true;
            c.attention_out_bias = false;
            break;
    }
    // Only Llama's MLP reads mlp_bias; Hunyuan and Qwen build it without bias whatever the key.
    c.mlp_bias = a == Architecture::Llama && f.boolean("mlp_bias").value_or(false);

    switch (a) {
        case Architecture::HunYuanDenseV1:
            c.qk_norm = true;
            c.qk_norm_after_rope = true;
            break;
        case Architecture::Qwen3:
            c.qk_norm = true;
            c.qk_norm_after_rope = false;
            break;
        default:
            c.qk_norm = false;
            c.qk_norm_after_rope = false;
            break;
    }

    if (hunyuan) {
        // transformers' HunYuanDenseV1 always builds and applies query/key_layernorm and has no
        // cross-layer attention, MLA or MoE; Tencent's own code switches these with flags. A
        // config asking for anything else describes a model that transformers would misread.
        if (f.boolean("use_qk_norm") == false) {
            f.unsupported(
                "use_qk_norm false is not supported (transformers' HunYuanDenseV1 "
                "always applies query/key layer norms)");
        }
        for (const char* flag : {"use_cla", "use_mla", "use_mixed_mlp_moe"}) {
            if (f.boolean(flag).value_or(false)) {
                f.unsupported(std::string(flag) + " true is not supported by the dense model");
            }
        }
        if (const json* ne = f.get("num_experts");
            ne && ne->is_number_integer() && ne->get<int64_t>() > 1) {
            f.unsupported("num_experts > 1 (mixture of experts) is not supported");
        }
        if (f.boolean("use_rotary_pos_emb") == false) {
            f.unsupported("use_rotary_pos_emb false is not supported");
        }
    }
    check_sliding_window(f, c);

    if (auto dt = f.string("dtype")) {
        c.torch_dtype = *dt;
    } else if (auto tdt = f.string("torch_dtype")) {
        c.torch_dtype = *tdt;
    }
    if (c.torch_dtype.rfind("torch.", 0) == 0) c.torch_dtype.erase(0, 6);

    // Token ids: family defaults apply only when the key is absent; null means "none".
    auto id_or = [&](const char* key, std::optional<int> fallback) -> std::optional<int> {
        return f.has_key(key) ? f.token_id(key) : fallback;
    };
    const bool ids_default = a == Architecture::HunYuanDenseV1 || a == Architecture::Llama;
    c.bos_token_id = id_or("bos_token_id", ids_default ? std::optional<int>(1) : std::nullopt);
    c.pad_token_id = id_or("pad_token_id", hunyuan ? std::optional<int>(0) : std::nullopt);
    if (f.has_key("eos_token_id")) {
        c.eos_token_ids = f.token_ids("eos_token_id").value_or(std::vector<int>{});
    } else if (ids_default) {
        c.eos_token_ids = {2};
    }

    parse_rope(f, c);
    if (c.rope_type == RopeType::DynamicAlpha && c.head_dim <= 2) {
        f.fail("head_dim", "must be greater than 2 for Hunyuan's alpha RoPE");
    }
    if (!checked_parameter_count(c)) {
        throw FileError(name, "sizes are absurdly large: the parameter count overflows");
    }
    return c;
}

double ModelConfig::effective_rope_theta() const {
    if (rope_type == RopeType::DynamicAlpha) {
        const double d = head_dim;
        return rope_theta * std::pow(rope_alpha, d / (d - 2.0));
    }
    return rope_theta;
}

std::vector<float> ModelConfig::rope_inv_freq() const {
    // As transformers computes it: base ** (arange(0, d, 2).float() / d) in fp32, then 1 / that.
    const int d = head_dim;
    const float base = static_cast<float>(effective_rope_theta());
    std::vector<float> inv(static_cast<std::size_t>(d / 2));
    for (int i = 0; i < d / 2; ++i) {
        const float exponent = static_cast<float>(2 * i) / static_cast<float>(d);
        inv[i] = 1.0f / static_cast<float>(
                            std::pow(static_cast<double>(base), static_cast<double>(exponent)));
    }
    if (rope_type == RopeType::Linear) {
        for (float& x : inv)
            x = static_cast<float>(x / rope_factor);
    } else if (rope_type == RopeType::Llama3) {
        // _compute_llama3_parameters: long wavelengths divided by factor, short ones kept,
        // a smooth blend in between.
        const double old_len = rope_original_max_position;
        const double low_wavelen = old_len / rope_low_freq_factor;
        const double high_wavelen = old_len / rope_high_freq_factor;
        for (float& x : inv) {
            const double wavelen = 2.0 * std::numbers::pi / x;
            if (wavelen > low_wavelen) {
                x = static_cast<float>(x / rope_factor);
            } else if (wavelen >= high_wavelen) {
                const double smooth = (old_len / wavelen - rope_low_freq_factor) /
                                      (rope_high_freq_factor - rope_low_freq_factor);
                x = static_cast<float>((1.0 - smooth) * x / rope_factor + smooth * x);
            }
        }
    }
    return inv;
}

int64_t ModelConfig::parameter_count() const {
    return checked_parameter_count(*this).value_or(std::numeric_limits<int64_t>::max());
}

std::vector<ExpectedTensor> expected_tensors(const ModelConfig& c) {
    const int64_t hidden = c.hidden_size;
    const int64_t q_out = int64_t{c.num_heads} * c.head_dim;
    const int64_t kv_out = int64_t{c.num_kv_heads} * c.head_dim;
    const int64_t inter = c.intermediate_size;
    const bool hunyuan = c.architecture == Architecture::HunYuanDenseV1;

    std::vector<ExpectedTensor> out;
    out.reserve(static_cast<std::size_t>(c.num_layers) * 21 + 3);
    out.push_back({"model.embed_tokens.weight", {c.vocab_size, hidden}});
    // Per layer, in the order of transformers' state_dict().
    for (int l = 0; l < c.num_layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        auto linear = [&](const std::string& name, int64_t rows, int64_t cols, bool bias) {
            out.push_back({p + name + ".weight", {rows, cols}});
            if (bias) out.push_back({p + name + ".bias", {rows}});
        };
        linear("self_attn.q_proj", q_out, hidden, c.attention_bias);
        linear("self_attn.k_proj", kv_out, hidden, c.attention_bias);
        linear("self_attn.v_proj", kv_out, hidden, c.attention_bias);
        linear("self_attn.o_proj", hidden, q_out, c.attention_out_bias);
        if (c.qk_norm) {
            out.push_back(
                {p + (hunyuan ? "self_attn.query_layernorm.weight" : "self_attn.q_norm.weight"),
                 {c.head_dim}});
            out.push_back(
                {p + (hunyuan ? "self_attn.key_layernorm.weight" : "self_attn.k_norm.weight"),
                 {c.head_dim}});
        }
        linear("mlp.gate_proj", inter, hidden, c.mlp_bias);
        linear("mlp.up_proj", inter, hidden, c.mlp_bias);
        linear("mlp.down_proj", hidden, inter, c.mlp_bias);
        out.push_back({p + "input_layernorm.weight", {hidden}});
        out.push_back({p + "post_attention_layernorm.weight", {hidden}});
    }
    out.push_back({"model.norm.weight", {hidden}});
    if (!c.tie_word_embeddings) out.push_back({"lm_head.weight", {c.vocab_size, hidden}});
    return out;
}

// ---------------------------------------------------------------------------------------------

GenerationConfig GenerationConfig::from_file(const std::filesystem::path& path) {
    GenerationConfig g;
    // Optional; but one that is there in any form (a broken link, a FIFO) is read, and fails.
    std::error_code ec;
    if (std::filesystem::symlink_status(path, ec).type() == std::filesystem::file_type::not_found)
        return g;
    const std::string name = path.string();
    const json root =
        model_detail::parse_json(model_detail::read_text_file(name), name, "generation config");
    if (!root.is_object()) throw FileError(name, "generation config is not a JSON object");
    const Fields f(root, name);

    g.do_sample = f.boolean("do_sample");
    if (auto t = f.number("temperature")) {
        if (*t < 0) f.fail("temperature", "must not be negative");
        g.temperature = static_cast<float>(*t);
    }
    if (auto k = f.integer("top_k")) {
        // -1 is "off" as vLLM writes it, 0 as transformers does.
        if (*k < -1 || *k > std::numeric_limits<int>::max())
            f.fail("top_k", "is " + std::to_string(*k) +
                                "; it must be a whole number >= 0 (0 "
                                "or -1: off)");
        g.top_k = *k < 0 ? 0 : static_cast<int>(*k);
    }
    if (auto p = f.number("top_p")) {
        if (*p < 0 || *p > 1) f.fail("top_p", fmt::format("is {}; it must be within [0, 1]", *p));
        g.top_p = static_cast<float>(*p);
    }
    if (auto r = f.number("repetition_penalty")) {
        if (!(*r > 0)) f.fail("repetition_penalty", "must be positive");
        g.repetition_penalty = static_cast<float>(*r);
    }
    if (auto m = f.integer("max_new_tokens")) {
        if (*m <= 0 || *m > std::numeric_limits<int>::max()) {
            f.fail("max_new_tokens", "must be a positive integer");
        }
        g.max_new_tokens = static_cast<int>(*m);
    }
    g.bos_token_id = f.token_id("bos_token_id");
    g.pad_token_id = f.token_id("pad_token_id");
    g.eos_token_ids = f.token_ids("eos_token_id").value_or(std::vector<int>{});
    return g;
}

std::optional<ModelConfig> published_shapes(std::string_view name, const ModelConfig& base) {
    ModelConfig c = base;
    // Dimensions of the published checkpoints (config.json of Hunyuan-MT-7B / HY-MT1.5-7B and
    // of HY-MT1.5-1.8B); RoPE, norms and QK-norm are the family's and come from `base`.
    if (name == "hy-mt-7b") {
        c.hidden_size = 4096;
        c.num_layers = 32;
        c.num_heads = 32;
        c.num_kv_heads = 8;
        c.head_dim = 128;
        c.intermediate_size = 14336;
        c.vocab_size = 128256;
        c.max_position_embeddings = 32768;
    } else if (name == "hy-mt1.5-1.8b") {
        c.hidden_size = 2048;
        c.num_layers = 32;
        c.num_heads = 16;
        c.num_kv_heads = 4;
        c.head_dim = 128;
        c.intermediate_size = 6144;
        c.vocab_size = 120818;
        c.max_position_embeddings = 32768;
    } else {
        return std::nullopt;
    }
    c.tie_word_embeddings = false;  // a synthetic model always has its own output layer
    c.attention_bias = c.attention_out_bias = c.mlp_bias = false;
    return c;
}

}  // namespace mtdesk
