// Opening a model directory: configs parsed, weights mapped, every tensor checked against the
// config before anything is allocated.

#include "mtdesk/model/model_dir.h"

#include <set>
#include <string>
#include <string_view>

#include "model/json_util.h"
#include "mtdesk/error.h"

namespace mtdesk {

namespace {

namespace fs = std::filesystem;
using model_detail::quote_name;

bool is_float_dtype(DType t) {
    return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

// Tensors that carry no weights: buffers some exporters saved along with the parameters.
bool is_harmless_extra(std::string_view name) {
    return std::string_view(name).ends_with("rotary_emb.inv_freq");
}

// Why a tensor the config does not explain might be there, for the error message.
std::string unexpected_hint(const std::string& name, const ModelConfig& c) {
    const std::string layers = "model.layers.";
    if (name.rfind(layers, 0) == 0) {
        std::size_t pos = layers.size();
        long long index = 0;
        bool digits = false;
        while (pos < name.size() && name[pos] >= '0' && name[pos] <= '9' && index < 1000000) {
            index = index * 10 + (name[pos++] - '0');
            digits = true;
        }
        if (digits && index >= c.num_layers) {
            return " (config.json has num_hidden_layers " + std::to_string(c.num_layers) + ")";
        }
    }
    if (std::string_view(name).ends_with("_proj.bias")) {
        if (name.find(".self_attn.") != std::string::npos) {
            return " (config.json gives this " + c.architecture_name +
                   " no bias on that attention projection: attention_bias is false)";
        }
        if (name.find(".mlp.") != std::string::npos) {
            return " (config.json gives this " + c.architecture_name + " no MLP bias)";
        }
    }
    return " (is the checkpoint of another architecture than " + c.architecture_name + "?)";
}

}  // namespace

ModelDir ModelDir::open(const fs::path& dir) {
    // fs::exists() is false, with `ec` set, for a path it may not look at: say so, rather
    // than calling an unreadable directory missing.
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
        if (ec) throw FileError(dir.string(), "cannot be read: " + ec.message());
        throw FileError(dir.string(), "model directory does not exist");
    }
    if (!fs::is_directory(dir, ec)) throw FileError(dir.string(), "is not a directory");
    const fs::path config_path = dir / "config.json";
    if (!fs::exists(config_path, ec)) {
        if (ec) throw FileError(config_path.string(), "cannot be read: " + ec.message());
        throw FileError(config_path.string(),
                        "missing: a model directory needs config.json next to its weights");
    }

    ModelDir m;
    m.path = dir;
    m.config = ModelConfig::from_file(config_path);
    m.generation = GenerationConfig::from_file(dir / "generation_config.json");
    m.tensors = std::make_unique<TensorSet>(dir);

    const ModelConfig& c = m.config;
    const TensorSet& ts = *m.tensors;
    const std::string source = ts.source().string();

    auto check_tensor = [&](const TensorView& t, const std::vector<int64_t>& shape) {
        if (t.shape != shape) {
            throw FileError(t.file, "tensor " + quote_name(t.name) + " has shape " +
                                        shape_string(t.shape) + ", but config.json (" +
                                        c.architecture_name + ") implies " + shape_string(shape));
        }
        if (!is_float_dtype(t.dtype)) {
            throw FileError(t.file, "tensor " + quote_name(t.name) + " has dtype " +
                                        std::string(dtype_name(t.dtype)) +
                                        "; weights must be F32, F16 or BF16");
        }
    };

    const std::vector<ExpectedTensor> expected = expected_tensors(c);
    std::set<std::string_view> explained;
    std::vector<const ExpectedTensor*> missing;
    for (const ExpectedTensor& e : expected) {
        const TensorView* t = ts.find(e.name);
        if (!t) {
            missing.push_back(&e);
            continue;
        }
        check_tensor(*t, e.shape);
        explained.insert(e.name);
    }
    if (!missing.empty()) {
        std::string problem = "tensor " + quote_name(missing[0]->name) + " " +
                              shape_string(missing[0]->shape) + " is missing";
        if (missing.size() > 1) {
            problem += " (and " + std::to_string(missing.size() - 1) + " more, e.g. " +
                       quote_name(missing[1]->name) + ")";
        }
        problem += "; config.json describes a " + c.architecture_name + " with " +
                   std::to_string(c.num_layers) + " layers";
        // Some Hunyuan dense exports fuse the projections; transformers does not read those.
        for (const auto& [name, t] : ts.all()) {
            if (std::string_view(name).ends_with(".qkv_proj.weight") ||
                std::string_view(name).ends_with(".gate_and_up_proj.weight")) {
                problem += " (the checkpoint has fused projections such as " + quote_name(name) +
                           ", which are not supported: split them into q/k/v and gate/up)";
                break;
            }
        }
        throw FileError(source, problem);
    }

    for (const auto& [name, t] : ts.all()) {
        if (explained.count(name) || is_harmless_extra(name)) continue;
        if (c.tie_word_embeddings && name == "lm_head.weight") {
            // Some checkpoints with tied embeddings also carry a copy of them as lm_head.weight.
            // Accept it when it is well-formed. transformers 5 keeps such a head untied when its
            // values differ from the embedding (and warns), so the forward pass uses
            // lm_head.weight whenever the checkpoint has one, model.embed_tokens.weight
            // otherwise: the same logits as transformers in both cases.
            check_tensor(*t, {c.vocab_size, c.hidden_size});
            continue;
        }
        throw FileError(t->file, "unexpected tensor " + quote_name(name) + " " +
                                     shape_string(t->shape) + " that config.json does not explain" +
                                     unexpected_hint(name, c));
    }
    return m;
}

}  // namespace mtdesk
