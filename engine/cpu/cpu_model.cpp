// The decoder assembled from the CPU operations. Order of operations per layer, as in
// transformers' HunYuanDenseV1DecoderLayer / LlamaDecoderLayer / Qwen3DecoderLayer:
//   h = input_layernorm(x)
//   q, k, v = q_proj(h), k_proj(h), v_proj(h)
//   Qwen3:     q, k = q_norm(q), k_norm(k); then RoPE
//   HunYuan:   RoPE; then q, k = query_layernorm(q), key_layernorm(k)
//   x = x + o_proj(attention(q, K, V))
//   x = x + down_proj(silu(gate_proj(h')) * up_proj(h')),  h' = post_attention_layernorm(x)
// then logits = lm_head(norm(x)).

#include "mtdesk/cpu/cpu_model.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cpu/kv_cache_cpu.h"
#include "cpu/ops_cpu.h"
#include "cpu/thread_pool_cpu.h"
#include "mtdesk/error.h"
#include "mtdesk/quant/quant_cache.h"

namespace mtdesk {

namespace {

struct Layer {
    std::vector<float> input_norm, post_norm;
    std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo;
    std::vector<float> q_norm, k_norm;
    std::vector<float> w_gate, w_up, w_down, b_gate, b_up, b_down;
    // INT tiers: the quantised linear layers (the fp32 w* above stay empty), and the fused
    // biases of the fused layers (q|k|v, gate|up).
    std::optional<QuantizedTensor> qkv, o, gate_up, down;
    std::vector<float> b_qkv, b_gate_up;
};

int rows_of(const QuantizedTensor& t) {
    return std::visit([](const auto& w) { return w.n; }, t);
}
int cols_of(const QuantizedTensor& t) {
    return std::visit([](const auto& w) { return w.k; }, t);
}
std::size_t bytes_of(const QuantizedTensor& t) {
    return std::visit(
        [](const auto& w) {
            using W = std::decay_t<decltype(w)>;
            if constexpr (std::is_same_v<W, QuantizedInt8>)
                return w.q.size() + w.scales.size() * sizeof(float);
            else
                return w.packed.size() + w.scales.size() * sizeof(float);
        },
        t);
}

const float* ptr_or_null(const std::vector<float>& v) {
    return v.empty() ? nullptr : v.data();
}

}  // namespace

struct CpuModel::Impl {
    ModelConfig config;
    std::vector<float> embed;
    std::vector<float> final_norm;
    std::vector<float> lm_head_own;  // empty when tied
    const float* lm_head = nullptr;
    std::optional<QuantizedTensor> lm_head_q;  // INT tiers
    CpuTier tier = CpuTier::FP32;
    std::optional<QuantCache> cache;
    std::string cache_key;
    std::vector<Layer> layers;
    cpu::RopeFrequencies rope;
    float attn_scale = 1.0f;
    std::unique_ptr<cpu::ThreadPool> pool;
    std::size_t weight_bytes = 0;

    // Scratch reused across forward calls (sized for the largest call so far).
    std::vector<float> x, h, q, attn, tmp, gate, up, cos, sin, fused;
    cpu::QuantScratch quant_scratch;

    std::vector<float> load(const TensorSet& tensors, const std::string& name,
                            std::initializer_list<int64_t> shape) {
        std::vector<float> v = check(tensors, name, shape).to_fp32();
        weight_bytes += v.size() * sizeof(float);
        return v;
    }

    /// The tensor `name`; throws FileError naming it when its shape is not `shape`.
    static const TensorView& check(const TensorSet& tensors, const std::string& name,
                                   std::initializer_list<int64_t> shape) {
        const TensorView& t = tensors.at(name);
        const std::vector<int64_t> want(shape);
        if (t.shape != want) {
            std::string got, expected;
            for (auto d : t.shape)
                got += (got.empty() ? "" : ", ") + std::to_string(d);
            for (auto d : want)
                expected += (expected.empty() ? "" : ", ") + std::to_string(d);
            throw FileError(
                t.file, "tensor " + name + " has shape [" + got + "], expected [" + expected + "]");
        }
        return t;
    }

    /// The rows of the named [rows, k] tensors, concatenated and quantised in this tier,
    /// through the cache under `name` (the GPU engine's names and row order, so both engines
    /// share the entries). A cached entry of another shape is replaced. `fp32`: the tensors'
    /// values already converted (the embedding, for a tied output layer), so that no second
    /// fp32 copy is made.
    QuantizedTensor quantised(const TensorSet& ts, const std::string& name,
                              const std::vector<std::string>& tensors, int64_t k,
                              const std::vector<float>* fp32 = nullptr) {
        int64_t n = 0;  // the shapes were checked by the caller (check())
        for (const std::string& t : tensors)
            n += ts.at(t).shape[0];
        const int rows = static_cast<int>(n), cols = static_cast<int>(k);
        const auto quantise = [&](const std::vector<float>& w) {
            return tier == CpuTier::INT8 ? QuantizedTensor(quantize_int8(w, rows, cols))
                                         : QuantizedTensor(quantize_int4(w, rows, cols));
        };
        const auto make = [&]() {
            if (fp32 != nullptr) return quantise(*fp32);
            if (tensors.size() == 1)  // no second copy of the largest layers
                return quantise(ts.at(tensors[0]).to_fp32());
            std::vector<float> w;
            w.reserve(static_cast<std::size_t>(n * k));
            for (const std::string& t : tensors) {
                const std::vector<float> v = ts.at(t).to_fp32();
                w.insert(w.end(), v.begin(), v.end());
            }
            return quantise(w);
        };
        const bool int8 = tier == CpuTier::INT8;
        auto fits = [&](const QuantizedTensor& q) {
            return std::holds_alternative<QuantizedInt8>(q) == int8 && rows_of(q) == n &&
                   cols_of(q) == k;
        };
        QuantizedTensor q = cache ? cache->load_or_make(cache_key, name, make) : make();
        if (!fits(q)) {  // a cached entry of another shape: replace it
            q = make();
            try {
                cache->store(cache_key, name, q);
            } catch (const Error&) {
                // not cached: the next load quantises again
            }
        }
        weight_bytes += bytes_of(q);
        return q;
    }

    static std::vector<float> concat(std::initializer_list<const std::vector<float>*> parts) {
        std::vector<float> v;
        for (const auto* p : parts)
            v.insert(v.end(), p->begin(), p->end());
        return v;
    }

    void ensure_scratch(int64_t n) {
        const ModelConfig& c = config;
        const auto grow = [](std::vector<float>& v, int64_t size) {
            if (static_cast<int64_t>(v.size()) < size) v.resize(size);
        };
        grow(x, n * c.hidden_size);
        grow(h, n * c.hidden_size);
        grow(tmp, n * c.hidden_size);
        grow(q, n * c.num_heads * c.head_dim);
        grow(attn, n * c.num_heads * c.head_dim);
        grow(gate, n * c.intermediate_size);
        grow(up, n * c.intermediate_size);
        grow(cos, n * c.head_dim / 2);
        grow(sin, n * c.head_dim / 2);
        if (tier != CpuTier::FP32)
            grow(fused, n * std::max<int64_t>((c.num_heads + 2 * c.num_kv_heads) * c.head_dim,
                                              2 * c.intermediate_size));
    }
};

CpuModel::CpuModel() : impl_(std::make_unique<Impl>()) {}
CpuModel::~CpuModel() = default;

std::unique_ptr<CpuModel> CpuModel::load(const ModelDir& dir, int threads) {
    CpuModelOptions options;
    options.threads = threads;
    return load(dir, options);
}

std::unique_ptr<CpuModel> CpuModel::load(const ModelDir& dir, const CpuModelOptions& options) {
    const int threads = options.threads;
    if (!dir.tensors) throw Error("CpuModel::load: model directory has no tensors");
    const TensorSet& ts = *dir.tensors;
    const ModelConfig& c = dir.config;
    if (c.num_heads <= 0 || c.num_kv_heads <= 0 || c.num_heads % c.num_kv_heads != 0) {
        throw Error("CpuModel::load: num_attention_heads (" + std::to_string(c.num_heads) +
                    ") must be a positive multiple of num_key_value_heads (" +
                    std::to_string(c.num_kv_heads) + ")");
    }

    std::unique_ptr<CpuModel> model(new CpuModel());
    Impl& m = *model->impl_;
    m.config = c;
    // float32 frequencies and angles, as torch computes them: against transformers' fp32 logits
    // over 1000 positions this halves the error of the double-precision formulas at positions
    // 900-999 (1.8e-6 vs 3.5e-6 relative), and the gap grows with the position.
    m.rope = cpu::rope_frequencies(c);
    m.attn_scale = static_cast<float>(std::pow(static_cast<double>(c.head_dim), -0.5));
    m.pool = std::make_unique<cpu::ThreadPool>(threads);
    m.tier = options.tier;
    const bool quantised = m.tier != CpuTier::FP32;
    if (quantised && options.use_quant_cache) {
        try {
            m.cache_key = QuantCache::model_key(ts.files(),
                                                m.tier == CpuTier::INT8 ? Tier::INT8 : Tier::INT4);
            m.cache.emplace(options.quant_cache_dir.empty()
                                ? QuantCache::default_root()
                                : std::filesystem::path(options.quant_cache_dir));
        } catch (const std::exception&) {
            m.cache.reset();  // no usable cache directory: quantise every time
        }
    }

    const int64_t hidden = c.hidden_size, inter = c.intermediate_size, hd = c.head_dim;
    const int64_t q_dim = c.num_heads * hd, kv_dim = c.num_kv_heads * hd;
    m.embed = m.load(ts, "model.embed_tokens.weight", {c.vocab_size, hidden});
    m.final_norm = m.load(ts, "model.norm.weight", {hidden});
    // Tied: the embedding is the output layer, and an lm_head.weight the checkpoint ships too is
    // ignored, as transformers (tie_weights) and vLLM do.
    if (quantised) {
        m.lm_head_q =
            c.tie_word_embeddings
                ? m.quantised(ts, "lm_head.tied", {"model.embed_tokens.weight"}, hidden, &m.embed)
                : (m.check(ts, "lm_head.weight", {c.vocab_size, hidden}),
                   m.quantised(ts, "lm_head", {"lm_head.weight"}, hidden));
    } else if (c.tie_word_embeddings) {
        m.lm_head = m.embed.data();
    } else {
        m.lm_head_own = m.load(ts, "lm_head.weight", {c.vocab_size, hidden});
        m.lm_head = m.lm_head_own.data();
    }

    m.layers.resize(c.num_layers);
    for (int i = 0; i < c.num_layers; ++i) {
        Layer& L = m.layers[i];
        const std::string p = "model.layers." + std::to_string(i) + ".";
        L.input_norm = m.load(ts, p + "input_layernorm.weight", {hidden});
        L.post_norm = m.load(ts, p + "post_attention_layernorm.weight", {hidden});
        if (quantised) {
            m.check(ts, p + "self_attn.q_proj.weight", {q_dim, hidden});
            m.check(ts, p + "self_attn.k_proj.weight", {kv_dim, hidden});
            m.check(ts, p + "self_attn.v_proj.weight", {kv_dim, hidden});
            m.check(ts, p + "self_attn.o_proj.weight", {hidden, q_dim});
            L.qkv = m.quantised(ts, p + "qkv",
                                {p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight",
                                 p + "self_attn.v_proj.weight"},
                                hidden);
            L.o = m.quantised(ts, p + "o_proj", {p + "self_attn.o_proj.weight"}, q_dim);
        } else {
            L.wq = m.load(ts, p + "self_attn.q_proj.weight", {q_dim, hidden});
            L.wk = m.load(ts, p + "self_attn.k_proj.weight", {kv_dim, hidden});
            L.wv = m.load(ts, p + "self_attn.v_proj.weight", {kv_dim, hidden});
            L.wo = m.load(ts, p + "self_attn.o_proj.weight", {hidden, q_dim});
        }
        if (c.attention_bias) {
            L.bq = m.load(ts, p + "self_attn.q_proj.bias", {q_dim});
            L.bk = m.load(ts, p + "self_attn.k_proj.bias", {kv_dim});
            L.bv = m.load(ts, p + "self_attn.v_proj.bias", {kv_dim});
        }
        if (c.attention_out_bias) L.bo = m.load(ts, p + "self_attn.o_proj.bias", {hidden});
        if (c.qk_norm) {
            // HunYuanDenseV1 names them query_layernorm / key_layernorm, Qwen3 q_norm / k_norm.
            const bool hunyuan_names = ts.find(p + "self_attn.query_layernorm.weight") != nullptr;
            L.q_norm = m.load(ts,
                              p + (hunyuan_names ? "self_attn.query_layernorm.weight"
                                                 : "self_attn.q_norm.weight"),
                              {hd});
            L.k_norm = m.load(
                ts,
                p + (hunyuan_names ? "self_attn.key_layernorm.weight" : "self_attn.k_norm.weight"),
                {hd});
        }
        if (quantised) {
            m.check(ts, p + "mlp.gate_proj.weight", {inter, hidden});
            m.check(ts, p + "mlp.up_proj.weight", {inter, hidden});
            m.check(ts, p + "mlp.down_proj.weight", {hidden, inter});
            L.gate_up = m.quantised(ts, p + "gate_up",
                                    {p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"}, hidden);
            L.down = m.quantised(ts, p + "down_proj", {p + "mlp.down_proj.weight"}, inter);
        } else {
            L.w_gate = m.load(ts, p + "mlp.gate_proj.weight", {inter, hidden});
            L.w_up = m.load(ts, p + "mlp.up_proj.weight", {inter, hidden});
            L.w_down = m.load(ts, p + "mlp.down_proj.weight", {hidden, inter});
        }
        if (c.mlp_bias) {
            L.b_gate = m.load(ts, p + "mlp.gate_proj.bias", {inter});
            L.b_up = m.load(ts, p + "mlp.up_proj.bias", {inter});
            L.b_down = m.load(ts, p + "mlp.down_proj.bias", {hidden});
        }
        if (quantised) {
            if (c.attention_bias) L.b_qkv = Impl::concat({&L.bq, &L.bk, &L.bv});
            if (c.mlp_bias) L.b_gate_up = Impl::concat({&L.b_gate, &L.b_up});
        }
    }
    return model;
}

const ModelConfig& CpuModel::config() const noexcept {
    return impl_->config;
}

std::size_t CpuModel::weight_bytes() const noexcept {
    return impl_->weight_bytes;
}

CpuTier CpuModel::tier() const noexcept {
    return impl_->tier;
}

std::unique_ptr<KvState> CpuModel::new_state(int max_positions) const {
    const ModelConfig& c = impl_->config;
    if (max_positions < 1 || max_positions > c.max_position_embeddings) {
        throw Error("KV cache of " + std::to_string(max_positions) +
                    " positions requested; the model allows 1 .. " +
                    std::to_string(c.max_position_embeddings));
    }
    return std::make_unique<cpu::CpuKvState>(c.num_layers, max_positions, c.num_kv_heads,
                                             c.head_dim);
}

void CpuModel::forward(KvState& state, std::span<const int32_t> tokens, std::span<float> logits,
                       bool all_positions) {
    Impl& m = *impl_;
    const ModelConfig& c = m.config;
    auto* st = dynamic_cast<cpu::CpuKvState*>(&state);
    if (st == nullptr) throw Error("CpuModel::forward: the state was not made by a CpuModel");
    const int64_t n = static_cast<int64_t>(tokens.size());
    if (n == 0) throw Error("CpuModel::forward: no tokens");
    const int64_t start = st->length();
    if (start + n > st->capacity()) {
        throw Error("KV cache overflow: " + std::to_string(start) + " positions held + " +
                    std::to_string(n) + " new > capacity " + std::to_string(st->capacity()));
    }
    const int64_t out_rows = all_positions ? n : 1;
    if (static_cast<int64_t>(logits.size()) < out_rows * c.vocab_size) {
        throw Error("CpuModel::forward: logits buffer of " + std::to_string(logits.size()) +
                    " floats, need " + std::to_string(out_rows * c.vocab_size));
    }

    const int64_t hidden = c.hidden_size, inter = c.intermediate_size, hd = c.head_dim;
    const int64_t heads = c.num_heads, kv_heads = c.num_kv_heads;
    const int64_t q_dim = heads * hd, kv_dim = kv_heads * hd;
    const float eps = c.rms_norm_eps;
    m.ensure_scratch(n);
    float* x = m.x.data();
    float* h = m.h.data();
    float* q = m.q.data();
    float* attn = m.attn.data();
    float* tmp = m.tmp.data();
    float* gate = m.gate.data();
    float* up = m.up.data();

    cpu::embedding(m.embed.data(), c.vocab_size, hidden, tokens, x);  // throws on a bad id
    cpu::rope_cos_sin(m.rope, start, n, m.cos.data(), m.sin.data());
    if (!m.layers.empty()) cpu::rms_norm(x, m.layers[0].input_norm.data(), h, n, hidden, eps);

    for (std::size_t l = 0; l < m.layers.size(); ++l) {
        const Layer& L = m.layers[l];
        float* k_cache = st->keys(static_cast<int>(l));
        float* v_cache = st->values(static_cast<int>(l));
        float* k_new = k_cache + start * kv_dim;
        float* v_new = v_cache + start * kv_dim;

        if (L.qkv) {
            // One product for q|k|v, then each row's parts to where they belong.
            const int64_t width = q_dim + 2 * kv_dim;
            float* f = m.fused.data();
            cpu::linear(h, *L.qkv, ptr_or_null(L.b_qkv), f, n, *m.pool, m.quant_scratch);
            for (int64_t t = 0; t < n; ++t) {
                const float* row = f + t * width;
                std::memcpy(q + t * q_dim, row, sizeof(float) * q_dim);
                std::memcpy(k_new + t * kv_dim, row + q_dim, sizeof(float) * kv_dim);
                std::memcpy(v_new + t * kv_dim, row + q_dim + kv_dim, sizeof(float) * kv_dim);
            }
        } else {
            cpu::linear(h, L.wq.data(), ptr_or_null(L.bq), q, n, hidden, q_dim);
            cpu::linear(h, L.wk.data(), ptr_or_null(L.bk), k_new, n, hidden, kv_dim);
            cpu::linear(h, L.wv.data(), ptr_or_null(L.bv), v_new, n, hidden, kv_dim);
        }
        if (c.qk_norm && !c.qk_norm_after_rope) {
            cpu::rms_norm(q, L.q_norm.data(), q, n * heads, hd, eps);
            cpu::rms_norm(k_new, L.k_norm.data(), k_new, n * kv_heads, hd, eps);
        }
        cpu::rope(q, n, heads, hd, m.cos.data(), m.sin.data());
        cpu::rope(k_new, n, kv_heads, hd, m.cos.data(), m.sin.data());
        if (c.qk_norm && c.qk_norm_after_rope) {
            cpu::rms_norm(q, L.q_norm.data(), q, n * heads, hd, eps);
            cpu::rms_norm(k_new, L.k_norm.data(), k_new, n * kv_heads, hd, eps);
        }
        cpu::attention(q, k_cache, v_cache, attn, n, start, heads, kv_heads, hd, m.attn_scale,
                       *m.pool);
        if (L.o)
            cpu::linear(attn, *L.o, ptr_or_null(L.bo), tmp, n, *m.pool, m.quant_scratch);
        else
            cpu::linear(attn, L.wo.data(), ptr_or_null(L.bo), tmp, n, q_dim, hidden);
        cpu::add_rms_norm(x, tmp, L.post_norm.data(), h, n, hidden, eps);

        if (L.gate_up) {
            float* f = m.fused.data();  // [n, 2 * inter]: each row's gate, then its up
            cpu::linear(h, *L.gate_up, ptr_or_null(L.b_gate_up), f, n, *m.pool, m.quant_scratch);
            for (int64_t t = 0; t < n; ++t)
                cpu::swiglu(f + t * 2 * inter, f + t * 2 * inter + inter, gate + t * inter, inter);
            cpu::linear(gate, *L.down, ptr_or_null(L.b_down), tmp, n, *m.pool, m.quant_scratch);
        } else {
            cpu::linear(h, L.w_gate.data(), ptr_or_null(L.b_gate), gate, n, hidden, inter);
            cpu::linear(h, L.w_up.data(), ptr_or_null(L.b_up), up, n, hidden, inter);
            cpu::swiglu(gate, up, gate, n * inter);
            cpu::linear(gate, L.w_down.data(), ptr_or_null(L.b_down), tmp, n, inter, hidden);
        }
        const float* next_norm =
            l + 1 < m.layers.size() ? m.layers[l + 1].input_norm.data() : m.final_norm.data();
        cpu::add_rms_norm(x, tmp, next_norm, h, n, hidden, eps);
    }
    if (m.layers.empty()) cpu::rms_norm(x, m.final_norm.data(), h, n, hidden, eps);

    const float* rows = all_positions ? h : h + (n - 1) * hidden;
    if (m.lm_head_q)
        cpu::linear(rows, *m.lm_head_q, nullptr, logits.data(), out_rows, *m.pool, m.quant_scratch);
    else
        cpu::linear(rows, m.lm_head, nullptr, logits.data(), out_rows, hidden, c.vocab_size);
    st->advance(static_cast<int>(n));
}

}  // namespace mtdesk
