// config.json / generation_config.json parsing: the published Hunyuan-MT shapes, transformers'
// per-family defaults, RoPE variants, tensor lists checked against transformers' state_dict(),
// and every rejected input.

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mtdesk/error.h"
#include "mtdesk/model/config.h"
#include "mtdesk/translate/translator.h"

using namespace mtdesk;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Modelled on the published config.json of tencent/Hunyuan-MT-7B (Hunyuan-7B layout: GQA 32/8
// heads of 128, dynamic-alpha RoPE, tied embeddings, extra keys of Tencent's own code).
const char* kHunyuanMT7B = R"({
  "architectures": ["HunYuanDenseV1ForCausalLM"],
  "model_type": "hunyuan_v1_dense",
  "add_classification_head": false,
  "attention_bias": false,
  "attention_dropout": 0.0,
  "attention_head_dim": 128,
  "head_dim": 128,
  "bos_token_id": 1,
  "cla_share_factor": 2,
  "eod_token_id": 127967,
  "eos_token_id": 127960,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "mlp_bias": false,
  "norm_type": "rms",
  "num_attention_heads": 32,
  "num_experts": 1,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "pad_token_id": 127961,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0,
                   "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic"},
  "rope_theta": 10000.0,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.56.0",
  "use_cache": true,
  "use_cla": false,
  "use_mla": false,
  "use_qk_norm": true,
  "use_rotary_pos_emb": true,
  "vocab_size": 128256
})";

// HY-MT1.5-1.8B (public module dump): vocab 120818, hidden 2048, 16/4 heads of 128,
// intermediate 6144, 32 layers, tied embeddings; transformers-5 style rope_parameters.
const char* kHYMT15_18B = R"({
  "architectures": ["HunYuanDenseV1ForCausalLM"],
  "model_type": "hunyuan_v1_dense",
  "attention_bias": false,
  "bos_token_id": 1,
  "dtype": "bfloat16",
  "eos_token_id": [127960, 127967],
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "intermediate_size": 6144,
  "max_position_embeddings": 262144,
  "num_attention_heads": 16,
  "num_hidden_layers": 32,
  "num_key_value_heads": 4,
  "pad_token_id": 120002,
  "rms_norm_eps": 1e-05,
  "rope_parameters": {"alpha": 1000.0, "factor": 1.0, "rope_theta": 10000.0, "rope_type": "dynamic"},
  "tie_word_embeddings": true,
  "use_qk_norm": true,
  "vocab_size": 120818
})";

int64_t sum_expected(const ModelConfig& c) {
    int64_t total = 0;
    for (const ExpectedTensor& t : expected_tensors(c)) {
        int64_t n = 1;
        for (int64_t d : t.shape)
            n *= d;
        total += n;
    }
    return total;
}

/// A minimal valid config of `arch` with `extra` merged in (null values delete keys).
std::string config_with(const std::string& arch, const json& extra = json::object()) {
    json j = {{"architectures", {arch}}, {"vocab_size", 64},       {"hidden_size", 32},
              {"intermediate_size", 48}, {"num_hidden_layers", 2}, {"num_attention_heads", 4},
              {"num_key_value_heads", 2}};
    for (auto it = extra.begin(); it != extra.end(); ++it) {
        if (it.value().is_string() && it.value() == "<delete>") {
            j.erase(it.key());
        } else {
            j[it.key()] = it.value();
        }
    }
    return j.dump();
}

template <typename Fn>
void expect_error(Fn fn, bool unsupported, const std::string& file, const std::string& word) {
    try {
        fn();
    } catch (const UnsupportedError& e) {
        const std::string what = e.what();
        QVERIFY2(unsupported, ("unexpected UnsupportedError: " + what).c_str());
        QVERIFY2(what.find(file) != std::string::npos, what.c_str());
        QVERIFY2(what.find(word) != std::string::npos, what.c_str());
        return;
    } catch (const FileError& e) {
        const std::string what = e.what();
        QVERIFY2(!unsupported, ("expected UnsupportedError, got: " + what).c_str());
        QVERIFY2(what.find(file) != std::string::npos, what.c_str());
        QVERIFY2(what.find(word) != std::string::npos, what.c_str());
        return;
    } catch (const std::exception& e) {
        QFAIL((std::string("wrong exception type: ") + e.what()).c_str());
    }
    QFAIL(("no exception; expected one mentioning '" + word + "'").c_str());
}

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

}  // namespace

class TestConfig : public QObject {
    Q_OBJECT

  private slots:
    void hunyuanMT7B();
    void hyMT15_18B();
    void attentionHeadDimFallback();
    void familyDefaults_data();
    void familyDefaults();
    void rope_data();
    void rope();
    void ropeInvFreq_data();
    void ropeInvFreq();
    void eosForms_data();
    void eosForms();
    void dtypeKeys();
    void expectedTensors_data();
    void expectedTensors();
    void rejected_data();
    void rejected();
    void fromFile();
    void generationConfig();
    void generationConfigErrors_data();
    void generationConfigErrors();
};

void TestConfig::hunyuanMT7B() {
    const ModelConfig c = ModelConfig::from_json(kHunyuanMT7B, "config.json");
    QCOMPARE(c.architecture, Architecture::HunYuanDenseV1);
    QCOMPARE(c.architecture_name, std::string("HunYuanDenseV1ForCausalLM"));
    QCOMPARE(c.vocab_size, 128256);
    QCOMPARE(c.hidden_size, 4096);
    QCOMPARE(c.intermediate_size, 14336);
    QCOMPARE(c.num_layers, 32);
    QCOMPARE(c.num_heads, 32);
    QCOMPARE(c.num_kv_heads, 8);
    QCOMPARE(c.head_dim, 128);
    QCOMPARE(c.max_position_embeddings, 32768);
    QCOMPARE(c.rms_norm_eps, 1e-5f);
    QCOMPARE(c.rope_type, RopeType::DynamicAlpha);
    QCOMPARE(c.rope_theta, 10000.0);
    QCOMPARE(c.rope_alpha, 1000.0);
    QVERIFY(std::fabs(c.effective_rope_theta() / (10000.0 * std::pow(1000.0, 128.0 / 126.0)) -
                      1.0) < 1e-12);
    QVERIFY(c.tie_word_embeddings);
    QVERIFY(!c.attention_bias);
    QVERIFY(!c.attention_out_bias);
    QVERIFY(!c.mlp_bias);
    QVERIFY(c.qk_norm);
    QVERIFY(c.qk_norm_after_rope);
    QCOMPARE(c.torch_dtype, std::string("bfloat16"));
    QCOMPARE(c.bos_token_id, std::optional<int>(1));
    QCOMPARE(c.eos_token_ids, std::vector<int>{127960});
    QCOMPARE(c.pad_token_id, std::optional<int>(127961));
    // Count from transformers (HunYuanDenseV1ForCausalLM on the meta device, same shapes).
    QCOMPARE(c.parameter_count(), int64_t(7'504'932'864));
    QCOMPARE(c.parameter_count(), sum_expected(c));
    QCOMPARE(expected_tensors(c).size(), std::size_t(1 + 32 * 11 + 1));
}

void TestConfig::hyMT15_18B() {
    const ModelConfig c = ModelConfig::from_json(kHYMT15_18B, "config.json");
    QCOMPARE(c.architecture, Architecture::HunYuanDenseV1);
    QCOMPARE(c.vocab_size, 120818);
    QCOMPARE(c.hidden_size, 2048);
    QCOMPARE(c.intermediate_size, 6144);
    QCOMPARE(c.num_layers, 32);
    QCOMPARE(c.num_heads, 16);
    QCOMPARE(c.num_kv_heads, 4);
    QCOMPARE(c.head_dim, 128);
    QCOMPARE(c.rope_type, RopeType::DynamicAlpha);
    QCOMPARE(c.rope_alpha, 1000.0);
    QCOMPARE(c.torch_dtype, std::string("bfloat16"));
    QCOMPARE(c.eos_token_ids, (std::vector<int>{127960, 127967}));
    QCOMPARE(c.pad_token_id, std::optional<int>(120002));
    QVERIFY(c.tie_word_embeddings);
    QCOMPARE(c.parameter_count(), int64_t(1'791'080'448));  // from transformers, meta device
    QCOMPARE(c.parameter_count(), sum_expected(c));

    // Untied: one more [vocab, hidden] matrix.
    json j = json::parse(kHYMT15_18B);
    j["tie_word_embeddings"] = false;
    const ModelConfig u = ModelConfig::from_json(j.dump(), "config.json");
    QCOMPARE(u.parameter_count(), c.parameter_count() + int64_t(120818) * 2048);
    QCOMPARE(expected_tensors(u).back().name, std::string("lm_head.weight"));
}

void TestConfig::attentionHeadDimFallback() {
    // Tencent's configs spell it attention_head_dim; head_dim wins when both are there.
    json j = json::parse(kHunyuanMT7B);
    j.erase("head_dim");
    j["attention_head_dim"] = 64;
    QCOMPARE(ModelConfig::from_json(j.dump(), "config.json").head_dim, 64);
    j["head_dim"] = 96;
    QCOMPARE(ModelConfig::from_json(j.dump(), "config.json").head_dim, 96);
    j.erase("head_dim");
    j.erase("attention_head_dim");
    QCOMPARE(ModelConfig::from_json(j.dump(), "config.json").head_dim, 4096 / 32);
}

void TestConfig::familyDefaults_data() {
    QTest::addColumn<QString>("arch");
    QTest::addColumn<int>("architecture");
    QTest::addColumn<int>("kv_heads");  // num_key_value_heads absent, 64 query heads
    QTest::addColumn<int>("head_dim");  // when head_dim is absent (hidden 32, 4 heads)
    QTest::addColumn<int>("max_pos");
    QTest::addColumn<double>("eps");
    QTest::addColumn<bool>("qkv_bias");  // attention_bias absent
    QTest::addColumn<bool>("qk_norm");
    QTest::addColumn<bool>("after_rope");
    QTest::addColumn<int>("bos");  // -1: none
    QTest::addColumn<int>("eos");
    QTest::addColumn<int>("pad");
    QTest::newRow("hunyuan") << "HunYuanDenseV1ForCausalLM" << int(Architecture::HunYuanDenseV1)
                             << 64 << 8 << 2048 << 1e-5 << false << true << true << 1 << 2 << 0;
    QTest::newRow("llama") << "LlamaForCausalLM" << int(Architecture::Llama) << 64 << 8 << 2048
                           << 1e-6 << false << false << false << 1 << 2 << -1;
    QTest::newRow("qwen2") << "Qwen2ForCausalLM" << int(Architecture::Qwen2) << 32 << 8 << 32768
                           << 1e-6 << true << false << false << -1 << -1 << -1;
    QTest::newRow("qwen3") << "Qwen3ForCausalLM" << int(Architecture::Qwen3) << 32 << 128 << 32768
                           << 1e-6 << false << true << false << -1 << -1 << -1;
}

void TestConfig::familyDefaults() {
    QFETCH(QString, arch);
    QFETCH(int, architecture);
    QFETCH(int, kv_heads);
    QFETCH(int, head_dim);
    QFETCH(int, max_pos);
    QFETCH(double, eps);
    QFETCH(bool, qkv_bias);
    QFETCH(bool, qk_norm);
    QFETCH(bool, after_rope);
    QFETCH(int, bos);
    QFETCH(int, eos);
    QFETCH(int, pad);
    // 64 query heads: Hunyuan/Llama default to as many kv heads, Qwen to 32.
    const json extra = {
        {"num_key_value_heads", "<delete>"}, {"num_attention_heads", 64}, {"hidden_size", 512}};
    const ModelConfig c = ModelConfig::from_json(config_with(arch.toStdString(), extra), "c.json");
    QCOMPARE(int(c.architecture), architecture);
    QCOMPARE(c.num_kv_heads, kv_heads);
    QCOMPARE(c.max_position_embeddings, max_pos);
    QCOMPARE(c.rms_norm_eps, float(eps));
    QCOMPARE(c.attention_bias, qkv_bias);
    QCOMPARE(c.attention_out_bias, false);
    QCOMPARE(c.mlp_bias, false);
    QCOMPARE(c.qk_norm, qk_norm);
    QCOMPARE(c.qk_norm_after_rope, after_rope);
    QVERIFY(!c.tie_word_embeddings);
    QCOMPARE(c.rope_type, RopeType::Default);
    QCOMPARE(c.rope_theta, 10000.0);
    QCOMPARE(c.bos_token_id, bos < 0 ? std::nullopt : std::optional<int>(bos));
    QCOMPARE(c.eos_token_ids, eos < 0 ? std::vector<int>{} : std::vector<int>{eos});
    QCOMPARE(c.pad_token_id, pad < 0 ? std::nullopt : std::optional<int>(pad));

    // head_dim default, with 4 heads of a hidden size of 32; null kv heads -> query heads.
    const ModelConfig small = ModelConfig::from_json(
        config_with(arch.toStdString(), {{"num_key_value_heads", nullptr}}), "c.json");
    QCOMPARE(small.head_dim, head_dim);
    QCOMPARE(small.num_kv_heads, 4);

    // model_type alone (no architectures) names the family too.
    static const char* kTypes[] = {"hunyuan_v1_dense", "llama", "qwen2", "qwen3"};
    const ModelConfig by_type = ModelConfig::from_json(
        config_with(arch.toStdString(),
                    {{"architectures", "<delete>"}, {"model_type", kTypes[architecture]}}),
        "c.json");
    QCOMPARE(int(by_type.architecture), architecture);

    // attention_bias: all four projections for Hunyuan/Llama/Qwen3, ignored by Qwen2.
    const ModelConfig biased = ModelConfig::from_json(
        config_with(arch.toStdString(), {{"attention_bias", true}, {"mlp_bias", true}}), "c.json");
    QVERIFY(biased.attention_bias);
    QCOMPARE(biased.attention_out_bias, biased.architecture != Architecture::Qwen2);
    QCOMPARE(biased.mlp_bias, biased.architecture == Architecture::Llama);
    const ModelConfig unbiased = ModelConfig::from_json(
        config_with(arch.toStdString(), {{"attention_bias", false}}), "c.json");
    QCOMPARE(unbiased.attention_bias, unbiased.architecture == Architecture::Qwen2);
}

void TestConfig::rope_data() {
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QString>("extra");  // JSON merged into the config
    QTest::addColumn<int>("type");
    QTest::addColumn<double>("theta");
    QTest::addColumn<double>("alpha");
    QTest::addColumn<double>("factor");
    const QString hy = "HunYuanDenseV1ForCausalLM";
    const QString llama = "LlamaForCausalLM";
    QTest::newRow("absent") << llama << "{}" << int(RopeType::Default) << 10000.0 << 1.0 << 1.0;
    QTest::newRow("top-level theta")
        << llama << R"({"rope_theta": 500000})" << int(RopeType::Default) << 500000.0 << 1.0 << 1.0;
    QTest::newRow("rope_scaling null") << llama << R"({"rope_scaling": null, "rope_theta": 1e6})"
                                       << int(RopeType::Default) << 1e6 << 1.0 << 1.0;
    QTest::newRow("v5 rope_parameters")
        << llama << R"({"rope_parameters": {"rope_type": "default", "rope_theta": 250000.0}})"
        << int(RopeType::Default) << 250000.0 << 1.0 << 1.0;
    QTest::newRow("dict theta wins")
        << llama
        << R"({"rope_theta": 5.0, "rope_parameters": {"rope_type": "default", "rope_theta": 7.0}})"
        << int(RopeType::Default) << 7.0 << 1.0 << 1.0;
    QTest::newRow("rope_scaling wins")
        << llama
        << R"({"rope_scaling": {"type": "linear", "factor": 2.0}, "rope_parameters": {"rope_type": "default"}})"
        << int(RopeType::Linear) << 10000.0 << 1.0 << 2.0;
    QTest::newRow("empty rope_scaling")
        << llama
        << R"({"rope_scaling": {}, "rope_parameters": {"rope_type": "linear", "factor": 3}})"
        << int(RopeType::Linear) << 10000.0 << 1.0 << 3.0;
    QTest::newRow("per layer type")
        << llama
        << R"({"rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 4, "rope_theta": 100.0}}})"
        << int(RopeType::Linear) << 100.0 << 1.0 << 4.0;
    QTest::newRow("legacy linear")
        << llama << R"({"rope_scaling": {"type": "linear", "factor": 4}})" << int(RopeType::Linear)
        << 10000.0 << 1.0 << 4.0;
    QTest::newRow("llama3")
        << llama
        << R"({"rope_theta": 500000.0, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})"
        << int(RopeType::Llama3) << 500000.0 << 1.0 << 8.0;
    QTest::newRow("hunyuan legacy alpha")
        << hy << R"({"rope_scaling": {"type": "dynamic", "alpha": 1000.0, "factor": 1.0}})"
        << int(RopeType::DynamicAlpha) << 10000.0 << 1000.0 << 1.0;
    QTest::newRow("hunyuan v5 alpha")
        << hy
        << R"({"rope_parameters": {"rope_type": "dynamic", "alpha": 50, "rope_theta": 20000}})"
        << int(RopeType::DynamicAlpha) << 20000.0 << 50.0 << 1.0;
    QTest::newRow("hunyuan ntk_alpha")
        << hy << R"({"rope_parameters": {"rope_type": "ntk_alpha", "alpha": 2.5}})"
        << int(RopeType::DynamicAlpha) << 10000.0 << 2.5 << 1.0;
    QTest::newRow("qwen3 default")
        << "Qwen3ForCausalLM"
        << R"({"rope_theta": 1000000})" << int(RopeType::Default) << 1e6 << 1.0 << 1.0;
}

void TestConfig::rope() {
    QFETCH(QString, arch);
    QFETCH(QString, extra);
    QFETCH(int, type);
    QFETCH(double, theta);
    QFETCH(double, alpha);
    QFETCH(double, factor);
    const ModelConfig c = ModelConfig::from_json(
        config_with(arch.toStdString(), json::parse(extra.toStdString())), "config.json");
    QCOMPARE(int(c.rope_type), type);
    QCOMPARE(c.rope_theta, theta);
    QCOMPARE(c.rope_alpha, alpha);
    QCOMPARE(c.rope_factor, factor);
    if (c.rope_type == RopeType::Llama3) {
        QCOMPARE(c.rope_low_freq_factor, 1.0);
        QCOMPARE(c.rope_high_freq_factor, 4.0);
        QCOMPARE(c.rope_original_max_position, 8192);
    }
    const double d = c.head_dim;
    const double want =
        c.rope_type == RopeType::DynamicAlpha ? theta * std::pow(alpha, d / (d - 2)) : theta;
    QCOMPARE(c.effective_rope_theta(), want);
}

void TestConfig::ropeInvFreq_data() {
    // Reference values: transformers' rotary embedding classes, inv_freq buffer (fp32).
    QTest::addColumn<QString>("config");
    QTest::addColumn<QList<int>>("index");
    QTest::addColumn<QList<double>>("value");
    QTest::newRow("hunyuan alpha 1000, d 128")
        << QString::fromStdString(config_with(
               "HunYuanDenseV1ForCausalLM",
               {{"hidden_size", 4096},
                {"num_attention_heads", 32},
                {"num_key_value_heads", 8},
                {"head_dim", 128},
                {"rope_scaling", {{"type", "dynamic"}, {"alpha", 1000.0}, {"factor", 1.0}}}}))
        << QList<int>{0, 1, 2, 10, 32, 63}
        << QList<double>{1.0,
                         0.7760343551635742,
                         0.6022293567657471,
                         0.0792153850197792,
                         0.00029935772181488574,
                         1.1547820122359553e-07};
    QTest::newRow("llama3 factor 8")
        << QString::fromStdString(
               config_with("LlamaForCausalLM", {{"hidden_size", 4096},
                                                {"num_attention_heads", 32},
                                                {"num_key_value_heads", 8},
                                                {"max_position_embeddings", 131072},
                                                {"rope_theta", 500000.0},
                                                {"rope_scaling",
                                                 {{"rope_type", "llama3"},
                                                  {"factor", 8.0},
                                                  {"low_freq_factor", 1.0},
                                                  {"high_freq_factor", 4.0},
                                                  {"original_max_position_embeddings", 8192}}}}))
        << QList<int>{0, 1, 20, 28, 29, 30, 33, 34, 35, 40, 63}
        << QList<double>{1.0,
                         0.8146172165870667,
                         0.016560440883040428,
                         0.0032114461064338684,
                         0.0021665706299245358,
                         0.0013718936825171113,
                         0.0003126936499029398,
                         0.0001785077911335975,
                         9.556212171446532e-05,
                         3.428102354519069e-05,
                         3.068925877869333e-07};
    QTest::newRow("linear factor 4, d 64")
        << QString::fromStdString(config_with(
               "LlamaForCausalLM", {{"hidden_size", 256},
                                    {"num_attention_heads", 4},
                                    {"num_key_value_heads", 4},
                                    {"rope_scaling", {{"type", "linear"}, {"factor", 4.0}}}}))
        << QList<int>{0, 1, 31} << QList<double>{0.25, 0.18747355043888092, 3.333803761051968e-05};
}

void TestConfig::ropeInvFreq() {
    QFETCH(QString, config);
    QFETCH(QList<int>, index);
    QFETCH(QList<double>, value);
    const ModelConfig c = ModelConfig::from_json(config.toStdString(), "config.json");
    const std::vector<float> inv = c.rope_inv_freq();
    QCOMPARE(int(inv.size()), c.head_dim / 2);
    for (int i = 0; i < index.size(); ++i) {
        const double got = inv[index[i]];
        QVERIFY2(std::fabs(got - value[i]) <= 2e-7 * std::fabs(value[i]),
                 qPrintable(QString("inv_freq[%1] = %2, transformers %3")
                                .arg(index[i])
                                .arg(got, 0, 'g', 12)
                                .arg(value[i], 0, 'g', 12)));
    }
}

void TestConfig::eosForms_data() {
    QTest::addColumn<QString>("value");
    QTest::addColumn<QList<int>>("ids");
    QTest::newRow("int") << "7" << QList<int>{7};
    QTest::newRow("list") << "[7, 9]" << QList<int>{7, 9};
    QTest::newRow("empty list") << "[]" << QList<int>{};
    QTest::newRow("null") << "null" << QList<int>{};
}

void TestConfig::eosForms() {
    QFETCH(QString, value);
    QFETCH(QList<int>, ids);
    const ModelConfig c = ModelConfig::from_json(
        config_with("LlamaForCausalLM", {{"eos_token_id", json::parse(value.toStdString())}}),
        "config.json");
    QCOMPARE(c.eos_token_ids, std::vector<int>(ids.begin(), ids.end()));
}

void TestConfig::dtypeKeys() {
    // transformers 5 writes "dtype", older versions "torch_dtype".
    QCOMPARE(ModelConfig::from_json(config_with("Qwen3ForCausalLM", {{"dtype", "float32"}}), "c")
                 .torch_dtype,
             std::string("float32"));
    QCOMPARE(
        ModelConfig::from_json(config_with("Qwen3ForCausalLM", {{"torch_dtype", "float16"}}), "c")
            .torch_dtype,
        std::string("float16"));
    QCOMPARE(ModelConfig::from_json(config_with("Qwen3ForCausalLM", {{"dtype", nullptr}}), "c")
                 .torch_dtype,
             std::string());
}

void TestConfig::expectedTensors_data() {
    // Names and shapes printed by transformers 5.x: model.state_dict() of a one-layer model
    // (vocab 64, hidden 32, intermediate 48, 4 heads, 2 kv heads), in state_dict() order.
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QString>("extra");
    QTest::addColumn<QStringList>("names");
    QTest::addColumn<QString>("shapes");  // JSON list of shapes
    QTest::newRow("hunyuan, head_dim 8, attention_bias")
        << "HunYuanDenseV1ForCausalLM"
        << R"({"head_dim": 8, "attention_bias": true})"
        << QStringList{"model.embed_tokens.weight",
                       "model.layers.0.self_attn.q_proj.weight",
                       "model.layers.0.self_attn.q_proj.bias",
                       "model.layers.0.self_attn.k_proj.weight",
                       "model.layers.0.self_attn.k_proj.bias",
                       "model.layers.0.self_attn.v_proj.weight",
                       "model.layers.0.self_attn.v_proj.bias",
                       "model.layers.0.self_attn.o_proj.weight",
                       "model.layers.0.self_attn.o_proj.bias",
                       "model.layers.0.self_attn.query_layernorm.weight",
                       "model.layers.0.self_attn.key_layernorm.weight",
                       "model.layers.0.mlp.gate_proj.weight",
                       "model.layers.0.mlp.up_proj.weight",
                       "model.layers.0.mlp.down_proj.weight",
                       "model.layers.0.input_layernorm.weight",
                       "model.layers.0.post_attention_layernorm.weight",
                       "model.norm.weight",
                       "lm_head.weight"}
        << "[[64,32],[32,32],[32],[16,32],[16],[16,32],[16],[32,32],[32],[8],[8],[48,32],[48,32],"
           "[32,48],[32],[32],[32],[64,32]]";
    QTest::newRow("llama, attention_bias + mlp_bias")
        << "LlamaForCausalLM"
        << R"({"attention_bias": true, "mlp_bias": true})"
        << QStringList{"model.embed_tokens.weight",
                       "model.layers.0.self_attn.q_proj.weight",
                       "model.layers.0.self_attn.q_proj.bias",
                       "model.layers.0.self_attn.k_proj.weight",
                       "model.layers.0.self_attn.k_proj.bias",
                       "model.layers.0.self_attn.v_proj.weight",
                       "model.layers.0.self_attn.v_proj.bias",
                       "model.layers.0.self_attn.o_proj.weight",
                       "model.layers.0.self_attn.o_proj.bias",
                       "model.layers.0.mlp.gate_proj.weight",
                       "model.layers.0.mlp.gate_proj.bias",
                       "model.layers.0.mlp.up_proj.weight",
                       "model.layers.0.mlp.up_proj.bias",
                       "model.layers.0.mlp.down_proj.weight",
                       "model.layers.0.mlp.down_proj.bias",
                       "model.layers.0.input_layernorm.weight",
                       "model.layers.0.post_attention_layernorm.weight",
                       "model.norm.weight",
                       "lm_head.weight"}
        << "[[64,32],[32,32],[32],[16,32],[16],[16,32],[16],[32,32],[32],[48,32],[48],[48,32],[48],"
           "[32,48],[32],[32],[32],[32],[64,32]]";
    QTest::newRow("qwen2")
        << "Qwen2ForCausalLM"
        << "{}"
        << QStringList{"model.embed_tokens.weight",
                       "model.layers.0.self_attn.q_proj.weight",
                       "model.layers.0.self_attn.q_proj.bias",
                       "model.layers.0.self_attn.k_proj.weight",
                       "model.layers.0.self_attn.k_proj.bias",
                       "model.layers.0.self_attn.v_proj.weight",
                       "model.layers.0.self_attn.v_proj.bias",
                       "model.layers.0.self_attn.o_proj.weight",
                       "model.layers.0.mlp.gate_proj.weight",
                       "model.layers.0.mlp.up_proj.weight",
                       "model.layers.0.mlp.down_proj.weight",
                       "model.layers.0.input_layernorm.weight",
                       "model.layers.0.post_attention_layernorm.weight",
                       "model.norm.weight",
                       "lm_head.weight"}
        << "[[64,32],[32,32],[32],[16,32],[16],[16,32],[16],[32,32],[48,32],[48,32],[32,48],[32],"
           "[32],[32],[64,32]]";
    QTest::newRow("qwen3, head_dim 16")
        << "Qwen3ForCausalLM"
        << R"({"head_dim": 16})"
        << QStringList{"model.embed_tokens.weight",
                       "model.layers.0.self_attn.q_proj.weight",
                       "model.layers.0.self_attn.k_proj.weight",
                       "model.layers.0.self_attn.v_proj.weight",
                       "model.layers.0.self_attn.o_proj.weight",
                       "model.layers.0.self_attn.q_norm.weight",
                       "model.layers.0.self_attn.k_norm.weight",
                       "model.layers.0.mlp.gate_proj.weight",
                       "model.layers.0.mlp.up_proj.weight",
                       "model.layers.0.mlp.down_proj.weight",
                       "model.layers.0.input_layernorm.weight",
                       "model.layers.0.post_attention_layernorm.weight",
                       "model.norm.weight",
                       "lm_head.weight"}
        << "[[64,32],[64,32],[32,32],[32,32],[32,64],[16],[16],[48,32],[48,32],[32,48],[32],[32],"
           "[32],[64,32]]";
    QTest::newRow("hunyuan tied")
        << "HunYuanDenseV1ForCausalLM"
        << R"({"head_dim": 8, "tie_word_embeddings": true})"
        << QStringList{"model.embed_tokens.weight",
                       "model.layers.0.self_attn.q_proj.weight",
                       "model.layers.0.self_attn.k_proj.weight",
                       "model.layers.0.self_attn.v_proj.weight",
                       "model.layers.0.self_attn.o_proj.weight",
                       "model.layers.0.self_attn.query_layernorm.weight",
                       "model.layers.0.self_attn.key_layernorm.weight",
                       "model.layers.0.mlp.gate_proj.weight",
                       "model.layers.0.mlp.up_proj.weight",
                       "model.layers.0.mlp.down_proj.weight",
                       "model.layers.0.input_layernorm.weight",
                       "model.layers.0.post_attention_layernorm.weight",
                       "model.norm.weight"}
        << "[[64,32],[32,32],[16,32],[16,32],[32,32],[8],[8],[48,32],[48,32],[32,48],[32],[32],"
           "[32]]";
}

void TestConfig::expectedTensors() {
    QFETCH(QString, arch);
    QFETCH(QString, extra);
    QFETCH(QStringList, names);
    QFETCH(QString, shapes);
    json merged = json::parse(extra.toStdString());
    merged["num_hidden_layers"] = 1;
    const ModelConfig c =
        ModelConfig::from_json(config_with(arch.toStdString(), merged), "config.json");
    const std::vector<ExpectedTensor> got = expected_tensors(c);
    const json want_shapes = json::parse(shapes.toStdString());
    QCOMPARE(int(got.size()), names.size());
    QCOMPARE(want_shapes.size(), got.size());
    int64_t total = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        QCOMPARE(QString::fromStdString(got[i].name), names[int(i)]);
        QCOMPARE(got[i].shape, want_shapes[i].get<std::vector<int64_t>>());
        int64_t n = 1;
        for (int64_t d : got[i].shape)
            n *= d;
        total += n;
    }
    QCOMPARE(c.parameter_count(), total);
}

void TestConfig::rejected_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("unsupported");
    QTest::addColumn<QString>("word");
    auto hy = [](const json& extra) {
        return QString::fromStdString(config_with("HunYuanDenseV1ForCausalLM", extra));
    };
    auto llama = [](const json& extra) {
        return QString::fromStdString(config_with("LlamaForCausalLM", extra));
    };
    auto qwen2 = [](const json& extra) {
        return QString::fromStdString(config_with("Qwen2ForCausalLM", extra));
    };

    // Malformed files -> FileError
    QTest::newRow("malformed JSON") << R"({"vocab_size": 12,)" << false << "not valid JSON";
    QTest::newRow("not an object") << "[1, 2]" << false << "not a JSON object";
    QTest::newRow("empty") << "" << false << "not valid JSON";
    QTest::newRow("missing hidden_size")
        << llama({{"hidden_size", "<delete>"}}) << false << "hidden_size";
    QTest::newRow("missing vocab_size")
        << llama({{"vocab_size", "<delete>"}}) << false << "vocab_size";
    QTest::newRow("vocab_size 0") << llama({{"vocab_size", 0}}) << false << "vocab_size";
    QTest::newRow("negative layers")
        << llama({{"num_hidden_layers", -2}}) << false << "num_hidden_layers";
    QTest::newRow("absurd layers")
        << llama({{"num_hidden_layers", 1000000}}) << false << "num_hidden_layers";
    QTest::newRow("absurd hidden")
        << llama({{"hidden_size", 4611686018427387904LL}}) << false << "hidden_size";
    QTest::newRow("absurd head_dim") << llama({{"head_dim", 1 << 20}}) << false << "head_dim";
    QTest::newRow("size as string") << llama({{"hidden_size", "32"}}) << false << "hidden_size";
    QTest::newRow("fractional size")
        << llama({{"intermediate_size", 47.5}}) << false << "intermediate_size";
    QTest::newRow("heads not divisible")
        << llama({{"num_attention_heads", 4}, {"num_key_value_heads", 3}}) << false
        << "num_key_value_heads";
    QTest::newRow("more kv heads than heads")
        << llama({{"num_attention_heads", 4}, {"num_key_value_heads", 8}}) << false
        << "num_key_value_heads";
    QTest::newRow("kv heads 0") << llama({{"num_key_value_heads", 0}}) << false
                                << "num_key_value_heads";
    QTest::newRow("odd head_dim") << llama({{"head_dim", 7}}) << false << "head_dim";
    QTest::newRow("hidden not divisible, no head_dim")
        << llama({{"hidden_size", 30}}) << false << "hidden_size";
    QTest::newRow("eps 0") << llama({{"rms_norm_eps", 0}}) << false << "rms_norm_eps";
    QTest::newRow("eps string") << llama({{"rms_norm_eps", "1e-6"}}) << false << "rms_norm_eps";
    QTest::newRow("tie not bool") << llama({{"tie_word_embeddings", 1}}) << false
                                  << "tie_word_embeddings";
    QTest::newRow("eos string") << llama({{"eos_token_id", "2"}}) << false << "eos_token_id";
    QTest::newRow("eos negative") << llama({{"eos_token_id", {-1}}}) << false << "eos_token_id";
    QTest::newRow("bos negative") << llama({{"bos_token_id", -5}}) << false << "bos_token_id";
    QTest::newRow("architectures not a list")
        << llama({{"architectures", "LlamaForCausalLM"}}) << false << "architectures";
    QTest::newRow("no architecture at all")
        << llama({{"architectures", "<delete>"}}) << false << "architectures";
    QTest::newRow("rope_scaling not an object")
        << llama({{"rope_scaling", "linear"}}) << false << "rope_scaling";
    QTest::newRow("linear without factor")
        << llama({{"rope_scaling", {{"type", "linear"}}}}) << false << "factor";
    QTest::newRow("llama3 without low_freq_factor")
        << llama({{"rope_scaling",
                   {{"rope_type", "llama3"}, {"factor", 8}, {"high_freq_factor", 4}}}})
        << false << "low_freq_factor";
    QTest::newRow("llama3 high <= low") << llama({{"rope_scaling",
                                                   {{"rope_type", "llama3"},
                                                    {"factor", 8},
                                                    {"low_freq_factor", 4},
                                                    {"high_freq_factor", 4}}}})
                                        << false << "high_freq_factor";
    QTest::newRow("negative theta") << llama({{"rope_theta", -1}}) << false << "rope_theta";
    QTest::newRow("negative alpha")
        << hy({{"rope_scaling", {{"type", "dynamic"}, {"alpha", -3.0}}}}) << false << "alpha";
    QTest::newRow("ntk_alpha without alpha")
        << hy({{"rope_parameters", {{"rope_type", "ntk_alpha"}}}}) << false << "alpha";

    // Well-formed but not implemented -> UnsupportedError
    QTest::newRow("unknown architecture")
        << QString::fromStdString(config_with("MistralForCausalLM")) << true
        << "MistralForCausalLM";
    QTest::newRow("unknown model_type")
        << llama({{"architectures", "<delete>"}, {"model_type", "gemma"}}) << true << "gemma";
    QTest::newRow("dynamic without alpha")
        << llama({{"rope_scaling", {{"type", "dynamic"}, {"factor", 2.0}}}}) << true << "dynamic";
    QTest::newRow("hunyuan dynamic without alpha")
        << hy({{"rope_scaling", {{"type", "dynamic"}, {"factor", 2.0}}}}) << true << "dynamic";
    QTest::newRow("hunyuan dynamic alpha 0")
        << hy({{"rope_scaling", {{"type", "dynamic"}, {"alpha", 0}, {"factor", 2.0}}}}) << true
        << "dynamic";
    QTest::newRow("llama dynamic with alpha")
        << llama({{"rope_scaling", {{"type", "dynamic"}, {"alpha", 1000.0}}}}) << true
        << "Hunyuan's NTK-alpha RoPE, which LlamaForCausalLM does not have";
    QTest::newRow("yarn")
        << qwen2(
               {{"rope_scaling",
                 {{"type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 32768}}}})
        << true << "yarn";
    QTest::newRow("longrope") << llama({{"rope_parameters",
                                         {{"rope_type", "longrope"}, {"factor", 4.0}}}})
                              << true << "longrope";
    QTest::newRow("partial rotary")
        << llama({{"partial_rotary_factor", 0.5}}) << true << "partial_rotary_factor";
    QTest::newRow("gelu") << llama({{"hidden_act", "gelu"}}) << true << "hidden_act";
    QTest::newRow("use_qk_norm false") << hy({{"use_qk_norm", false}}) << true << "use_qk_norm";
    QTest::newRow("use_cla") << hy({{"use_cla", true}}) << true << "use_cla";
    QTest::newRow("moe") << hy({{"num_experts", 8}}) << true << "num_experts";
    QTest::newRow("qwen2 sliding window")
        << qwen2({{"use_sliding_window", true}, {"sliding_window", 4096}, {"max_window_layers", 1}})
        << true << "sliding";
    QTest::newRow("sliding layer types")
        << qwen2({{"layer_types", {"full_attention", "sliding_attention"}}}) << true
        << "sliding_attention";
    QTest::newRow("per-layer rope differs")
        << llama({{"rope_parameters",
                   {{"full_attention", {{"rope_type", "default"}}},
                    {"sliding_attention", {{"rope_type", "default"}}}}}})
        << true << "per layer";
}

void TestConfig::rejected() {
    QFETCH(QString, text);
    QFETCH(bool, unsupported);
    QFETCH(QString, word);
    expect_error([&] { (void)ModelConfig::from_json(text.toStdString(), "config.json"); },
                 unsupported, "config.json", word.toStdString());
}

void TestConfig::fromFile() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    write_text(dir / "config.json", kHYMT15_18B);
    const ModelConfig c = ModelConfig::from_file(dir / "config.json");
    QCOMPARE(c.vocab_size, 120818);
    expect_error([&] { (void)ModelConfig::from_file(dir / "nope" / "config.json"); }, false,
                 "config.json", "does not exist");
    write_text(dir / "bad.json", R"({"architectures": ["LlamaForCausalLM"], )");
    expect_error([&] { (void)ModelConfig::from_file(dir / "bad.json"); }, false,
                 (dir / "bad.json").string(), "not valid JSON");
    write_text(
        dir / "yarn.json",
        config_with("Qwen2ForCausalLM", {{"rope_scaling", {{"type", "yarn"}, {"factor", 4}}}}));
    expect_error([&] { (void)ModelConfig::from_file(dir / "yarn.json"); }, true, "yarn.json",
                 "yarn");
}

void TestConfig::generationConfig() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    const GenerationConfig none = GenerationConfig::from_file(dir / "generation_config.json");
    QVERIFY(!none.do_sample && !none.temperature && !none.top_k && !none.top_p);
    QVERIFY(!none.repetition_penalty && !none.max_new_tokens && !none.bos_token_id);
    QVERIFY(none.eos_token_ids.empty() && !none.pad_token_id);

    // The recommended sampling of the Hunyuan-MT model cards.
    write_text(dir / "generation_config.json", R"({
      "bos_token_id": 1, "do_sample": true, "eos_token_id": [127960, 127967],
      "pad_token_id": 127961, "repetition_penalty": 1.05, "temperature": 0.7,
      "top_k": 20, "top_p": 0.6, "max_new_tokens": 2048, "transformers_version": "4.56.0"})");
    const GenerationConfig g = GenerationConfig::from_file(dir / "generation_config.json");
    QCOMPARE(g.do_sample, std::optional<bool>(true));
    QCOMPARE(g.temperature, std::optional<float>(0.7f));
    QCOMPARE(g.top_k, std::optional<int>(20));
    QCOMPARE(g.top_p, std::optional<float>(0.6f));
    QCOMPARE(g.repetition_penalty, std::optional<float>(1.05f));
    QCOMPARE(g.max_new_tokens, std::optional<int>(2048));
    QCOMPARE(g.bos_token_id, std::optional<int>(1));
    QCOMPARE(g.eos_token_ids, (std::vector<int>{127960, 127967}));
    QCOMPARE(g.pad_token_id, std::optional<int>(127961));

    write_text(dir / "g2.json", R"({"eos_token_id": 2, "temperature": 1, "top_p": null})");
    const GenerationConfig g2 = GenerationConfig::from_file(dir / "g2.json");
    QCOMPARE(g2.eos_token_ids, std::vector<int>{2});
    QCOMPARE(g2.temperature, std::optional<float>(1.0f));
    QVERIFY(!g2.top_p);
    // vLLM writes top_k -1 for "off": read as transformers' 0.
    write_text(dir / "g3.json", R"({"top_k": -1})");
    QCOMPARE(GenerationConfig::from_file(dir / "g3.json").top_k, std::optional<int>(0));
    // Sampling with a temperature or a top-p of 0 keeps one token: greedy decoding.
    GenerationConfig zero;
    zero.do_sample = true;
    zero.temperature = 0.0f;
    QVERIFY(recommended_sampling(zero).greedy);
    zero.temperature = 0.7f;
    QVERIFY(!recommended_sampling(zero).greedy);
    zero.top_p = 0.0f;
    QVERIFY(recommended_sampling(zero).greedy);
}

void TestConfig::generationConfigErrors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("word");
    QTest::newRow("malformed") << R"({"top_k": )"
                               << "not valid JSON";
    QTest::newRow("array") << "[]"
                           << "not a JSON object";
    QTest::newRow("top_k string") << R"({"top_k": "20"})"
                                  << "top_k";
    QTest::newRow("top_k fractional") << R"({"top_k": 2.5})"
                                      << "top_k";
    QTest::newRow("top_p above 1") << R"({"top_p": 1.5})"
                                   << "top_p is 1.5";
    QTest::newRow("top_k -2") << R"({"top_k": -2})"
                              << "top_k is -2; it must be a whole number >= 0 (0 or -1: off)";
    QTest::newRow("temperature negative") << R"({"temperature": -1})"
                                          << "temperature";
    QTest::newRow("do_sample string") << R"({"do_sample": "yes"})"
                                      << "do_sample";
    QTest::newRow("max_new_tokens 0") << R"({"max_new_tokens": 0})"
                                      << "max_new_tokens";
    QTest::newRow("eos list of strings") << R"({"eos_token_id": ["a"]})"
                                         << "eos_token_id";
}

void TestConfig::generationConfigErrors() {
    QFETCH(QString, text);
    QFETCH(QString, word);
    QTemporaryDir tmp;
    const fs::path path = fs::path(tmp.path().toStdString()) / "generation_config.json";
    write_text(path, text.toStdString());
    expect_error([&] { (void)GenerationConfig::from_file(path); }, false, "generation_config.json",
                 word.toStdString());
}

QTEST_APPLESS_MAIN(TestConfig)
#include "test_config.moc"
