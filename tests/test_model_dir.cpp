// ModelDir::open: tiny model directories written by the test (every family, dtype, single and
// sharded), every rejected checkpoint, and the transformers-made fixtures of tests/data/models.

#include <sys/stat.h>

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mtdesk/error.h"
#include "mtdesk/model/model_dir.h"

using namespace mtdesk;
using json = nlohmann::json;
namespace fs = std::filesystem;

#include "test_files.h"

using mtdesk::test::write_file;

namespace {

// ---- A tiny model-directory writer ------------------------------------------------------------

struct Tensor {
    std::string name;
    std::string dtype;
    std::vector<int64_t> shape;
};

std::size_t dtype_bytes(const std::string& dtype) {
    if (dtype == "F64" || dtype == "I64") return 8;
    if (dtype == "F32" || dtype == "I32") return 4;
    if (dtype == "F16" || dtype == "BF16" || dtype == "I16") return 2;
    return 1;
}

/// A safetensors file whose tensors hold a repeating byte pattern (the content does not matter
/// to ModelDir).
void write_safetensors(const fs::path& path, const std::vector<Tensor>& tensors) {
    json header = json::object();
    std::size_t offset = 0;
    for (const Tensor& t : tensors) {
        std::size_t n = dtype_bytes(t.dtype);
        for (int64_t d : t.shape)
            n *= static_cast<std::size_t>(d);
        header[t.name] = {
            {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + n}}};
        offset += n;
    }
    header["__metadata__"] = {{"format", "pt"}};
    std::string text = header.dump();
    while (text.size() % 8)
        text += ' ';
    const uint64_t len = text.size();
    std::string bytes(8, '\0');
    std::memcpy(bytes.data(), &len, 8);
    bytes += text;
    bytes += std::string(offset, '\x3c');
    write_file(path, bytes);
}

const char* arch_name(const std::string& family) {
    if (family == "hunyuan") return "HunYuanDenseV1ForCausalLM";
    if (family == "llama") return "LlamaForCausalLM";
    if (family == "qwen2") return "Qwen2ForCausalLM";
    return "Qwen3ForCausalLM";
}

json tiny_config(const std::string& family) {
    json j = {{"architectures", {arch_name(family)}},
              {"vocab_size", 40},
              {"hidden_size", 16},
              {"intermediate_size", 24},
              {"num_hidden_layers", 2},
              {"num_attention_heads", 4},
              {"num_key_value_heads", 2},
              {"head_dim", 4},
              {"tie_word_embeddings", false},
              {"rms_norm_eps", 1e-5}};
    if (family == "hunyuan") {
        j["rope_scaling"] = {{"type", "dynamic"}, {"alpha", 1000.0}, {"factor", 1.0}};
        j["use_qk_norm"] = true;
    }
    return j;
}

/// Tensors of `config` (names and shapes written out here, independently of expected_tensors()).
std::vector<Tensor> tensors_for(const json& cfg, const std::string& family,
                                const std::string& dtype) {
    const int64_t v = cfg["vocab_size"], h = cfg["hidden_size"], inter = cfg["intermediate_size"];
    const int64_t heads = cfg["num_attention_heads"], kv = cfg["num_key_value_heads"];
    const int64_t hd = cfg["head_dim"];
    const int layers = cfg["num_hidden_layers"];
    const bool bias = cfg.value("attention_bias", false);
    std::vector<Tensor> out = {{"model.embed_tokens.weight", dtype, {v, h}}};
    for (int l = 0; l < layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        out.push_back({p + "self_attn.q_proj.weight", dtype, {heads * hd, h}});
        out.push_back({p + "self_attn.k_proj.weight", dtype, {kv * hd, h}});
        out.push_back({p + "self_attn.v_proj.weight", dtype, {kv * hd, h}});
        out.push_back({p + "self_attn.o_proj.weight", dtype, {h, heads * hd}});
        if (family == "qwen2" || bias) {
            out.push_back({p + "self_attn.q_proj.bias", dtype, {heads * hd}});
            out.push_back({p + "self_attn.k_proj.bias", dtype, {kv * hd}});
            out.push_back({p + "self_attn.v_proj.bias", dtype, {kv * hd}});
        }
        if (family != "qwen2" && bias) out.push_back({p + "self_attn.o_proj.bias", dtype, {h}});
        if (family == "hunyuan") {
            out.push_back({p + "self_attn.query_layernorm.weight", dtype, {hd}});
            out.push_back({p + "self_attn.key_layernorm.weight", dtype, {hd}});
        } else if (family == "qwen3") {
            out.push_back({p + "self_attn.q_norm.weight", dtype, {hd}});
            out.push_back({p + "self_attn.k_norm.weight", dtype, {hd}});
        }
        out.push_back({p + "mlp.gate_proj.weight", dtype, {inter, h}});
        out.push_back({p + "mlp.up_proj.weight", dtype, {inter, h}});
        out.push_back({p + "mlp.down_proj.weight", dtype, {h, inter}});
        out.push_back({p + "input_layernorm.weight", dtype, {h}});
        out.push_back({p + "post_attention_layernorm.weight", dtype, {h}});
    }
    out.push_back({"model.norm.weight", dtype, {h}});
    if (!cfg["tie_word_embeddings"].get<bool>()) out.push_back({"lm_head.weight", dtype, {v, h}});
    return out;
}

/// Writes config.json and the weights: one file, or `shards` files plus the index.
void write_model(const fs::path& dir, const json& cfg, const std::vector<Tensor>& tensors,
                 int shards = 1) {
    write_file(dir / "config.json", cfg.dump(2));
    if (shards <= 1) {
        write_safetensors(dir / "model.safetensors", tensors);
        return;
    }
    json map = json::object();
    std::vector<std::vector<Tensor>> parts(static_cast<std::size_t>(shards));
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        parts[i * parts.size() / tensors.size()].push_back(tensors[i]);
    }
    for (int s = 0; s < shards; ++s) {
        char name[64];
        std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, shards);
        write_safetensors(dir / name, parts[static_cast<std::size_t>(s)]);
        for (const Tensor& t : parts[static_cast<std::size_t>(s)])
            map[t.name] = name;
    }
    write_file(dir / "model.safetensors.index.json",
               json{{"metadata", {{"total_size", 0}}}, {"weight_map", map}}.dump(2));
}

template <typename Fn>
void expect_error(Fn fn, bool unsupported, const std::vector<std::string>& words) {
    try {
        fn();
    } catch (const UnsupportedError& e) {
        const std::string what = e.what();
        QVERIFY2(unsupported, ("unexpected UnsupportedError: " + what).c_str());
        for (const std::string& w : words)
            QVERIFY2(what.find(w) != std::string::npos, what.c_str());
        return;
    } catch (const FileError& e) {
        const std::string what = e.what();
        QVERIFY2(!unsupported, ("expected UnsupportedError, got: " + what).c_str());
        for (const std::string& w : words)
            QVERIFY2(what.find(w) != std::string::npos, what.c_str());
        return;
    } catch (const std::exception& e) {
        QFAIL((std::string("wrong exception type: ") + e.what()).c_str());
    }
    QFAIL("no exception");
}

fs::path fixtures_dir() {
    return fs::path(MTDESK_TEST_DATA_DIR) / "models";
}
fs::path goldens_dir() {
    return fs::path(MTDESK_TEST_DATA_DIR) / "goldens";
}

json read_json(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return json::parse(ss.str());
}

}  // namespace

class TestModelDir : public QObject {
    Q_OBJECT

  private slots:
    void opens_data();
    void opens();
    void tiedWithLmHeadCopy();
    void harmlessExtras();
    void generationConfigRead();
    void rejected_data();
    void rejected();
    void fixtures_data();
    void fixtures();
};

void TestModelDir::opens_data() {
    QTest::addColumn<QString>("family");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<int>("shards");
    QTest::addColumn<bool>("tied");
    QTest::addColumn<bool>("bias");
    for (const char* fam : {"hunyuan", "llama", "qwen2", "qwen3"}) {
        for (const char* dt : {"F32", "F16", "BF16"}) {
            QTest::addRow("%s %s", fam, dt) << fam << dt << 1 << false << false;
        }
        QTest::addRow("%s sharded", fam) << fam << "BF16" << 3 << false << false;
        QTest::addRow("%s tied", fam) << fam << "F16" << 1 << true << false;
        QTest::addRow("%s attention_bias", fam) << fam << "F32" << 2 << false << true;
    }
}

void TestModelDir::opens() {
    QFETCH(QString, family);
    QFETCH(QString, dtype);
    QFETCH(int, shards);
    QFETCH(bool, tied);
    QFETCH(bool, bias);
    const std::string fam = family.toStdString();
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const fs::path dir = tmp.path().toStdString();
    json cfg = tiny_config(fam);
    cfg["tie_word_embeddings"] = tied;
    if (bias) cfg["attention_bias"] = true;
    const std::vector<Tensor> tensors = tensors_for(cfg, fam, dtype.toStdString());
    write_model(dir, cfg, tensors, shards);

    const ModelDir m = ModelDir::open(dir);
    QCOMPARE(m.path, dir);
    QCOMPARE(m.config.architecture_name, std::string(arch_name(fam)));
    QCOMPARE(m.config.num_layers, 2);
    QCOMPARE(m.config.head_dim, 4);
    QCOMPARE(m.config.tie_word_embeddings, tied);
    QCOMPARE(m.tensors->all().size(), tensors.size());
    QCOMPARE(int(m.tensors->files().size()), shards);
    QCOMPARE(expected_tensors(m.config).size(), tensors.size());
    for (const Tensor& t : tensors) {
        const TensorView& v = m.tensors->at(t.name);
        QCOMPARE(v.shape, t.shape);
        QCOMPARE(std::string(dtype_name(v.dtype)), t.dtype);
    }
    if (fam == "hunyuan") QCOMPARE(m.config.rope_type, RopeType::DynamicAlpha);
}

void TestModelDir::tiedWithLmHeadCopy() {
    // Published Hunyuan-MT checkpoints are tied yet ship lm_head.weight too: accepted.
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    json cfg = tiny_config("hunyuan");
    cfg["tie_word_embeddings"] = true;
    std::vector<Tensor> tensors = tensors_for(cfg, "hunyuan", "BF16");
    tensors.push_back({"lm_head.weight", "BF16", {40, 16}});
    write_model(dir, cfg, tensors);
    const ModelDir m = ModelDir::open(dir);
    QVERIFY(m.config.tie_word_embeddings);
    QVERIFY(m.tensors->find("lm_head.weight") != nullptr);

    // ... but only when it is well-formed.
    tensors.back().shape = {41, 16};
    write_model(dir, cfg, tensors);
    expect_error([&] { (void)ModelDir::open(dir); }, false,
                 {"model.safetensors", "lm_head.weight", "[41, 16]", "[40, 16]"});
}

void TestModelDir::harmlessExtras() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    const json cfg = tiny_config("llama");
    std::vector<Tensor> tensors = tensors_for(cfg, "llama", "F32");
    tensors.push_back({"model.layers.0.self_attn.rotary_emb.inv_freq", "F32", {2}});
    tensors.push_back({"model.rotary_emb.inv_freq", "F32", {2}});
    write_model(dir, cfg, tensors);
    const ModelDir m = ModelDir::open(dir);
    QCOMPARE(m.tensors->all().size(), tensors.size());
}

void TestModelDir::generationConfigRead() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    const json cfg = tiny_config("qwen3");
    write_model(dir, cfg, tensors_for(cfg, "qwen3", "F32"));
    QVERIFY(!ModelDir::open(dir).generation.top_k.has_value());
    write_file(dir / "generation_config.json", R"({"top_k": 20, "eos_token_id": [3, 4]})");
    const ModelDir m = ModelDir::open(dir);
    QCOMPARE(m.generation.top_k, std::optional<int>(20));
    QCOMPARE(m.generation.eos_token_ids, (std::vector<int>{3, 4}));
}

void TestModelDir::rejected_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<bool>("unsupported");
    QTest::addColumn<QStringList>("words");
    QTest::newRow("directory missing") << "no_dir" << false << QStringList{"does not exist"};
    QTest::newRow("a file, not a directory")
        << "file_dir" << false << QStringList{"not a directory"};
    QTest::newRow("config.json missing")
        << "no_config" << false << QStringList{"config.json", "missing"};
    QTest::newRow("weights missing")
        << "no_weights" << false << QStringList{"no model.safetensors"};
    QTest::newRow("tensor missing")
        << "drop" << false
        << QStringList{"model.safetensors", "'model.layers.1.mlp.up_proj.weight'", "[24, 16]",
                       "missing"};
    QTest::newRow("tensor missing, sharded")
        << "drop_sharded" << false
        << QStringList{"model.safetensors.index.json", "'model.norm.weight'", "missing"};
    QTest::newRow("lm_head missing, untied")
        << "drop_lm_head" << false << QStringList{"'lm_head.weight'", "missing"};
    QTest::newRow("several missing") << "drop_two" << false << QStringList{"and 1 more"};
    QTest::newRow("mis-shaped tensor")
        << "shape" << false
        << QStringList{"model.safetensors", "'model.layers.0.self_attn.k_proj.weight'", "[12, 16]",
                       "[8, 16]"};
    QTest::newRow("mis-shaped qk norm")
        << "shape_norm" << false
        << QStringList{"'model.layers.1.self_attn.query_layernorm.weight'", "[8]", "[4]"};
    QTest::newRow("mis-shaped in a shard")
        << "shape_sharded" << false
        << QStringList{"model-00003-of-00003.safetensors", "'model.norm.weight'", "[17]"};
    QTest::newRow("integer dtype")
        << "int_dtype" << false << QStringList{"'model.norm.weight'", "I32", "F32, F16 or BF16"};
    QTest::newRow("F64 dtype") << "f64_dtype" << false << QStringList{"F64"};
    QTest::newRow("unexpected bias")
        << "extra_bias" << false
        << QStringList{"model.safetensors", "unexpected", "'model.layers.0.self_attn.q_proj.bias'",
                       "attention_bias"};
    QTest::newRow("unexpected layer")
        << "extra_layer" << false << QStringList{"'model.layers.2.", "num_hidden_layers 2"};
    QTest::newRow("unexpected tensor")
        << "extra_other" << false << QStringList{"unexpected", "'model.vision.proj'"};
    QTest::newRow("qwen3 norms on a hunyuan config")
        << "wrong_family" << false << QStringList{"query_layernorm", "missing"};
    QTest::newRow("fused qkv") << "fused" << false << QStringList{"fused", "qkv_proj"};
    QTest::newRow("malformed config.json")
        << "bad_config" << false << QStringList{"config.json", "not valid JSON"};
    QTest::newRow("config.json without hidden_size")
        << "config_field" << false << QStringList{"config.json", "hidden_size"};
    QTest::newRow("unsupported rope") << "yarn" << true << QStringList{"config.json", "yarn"};
    QTest::newRow("unknown architecture")
        << "arch" << true << QStringList{"config.json", "GPTNeoXForCausalLM"};
    QTest::newRow("malformed generation_config.json")
        << "bad_generation" << false << QStringList{"generation_config.json", "not valid JSON"};
    QTest::newRow("config.json padded with NUL bytes")
        << "nul_config" << false << QStringList{"config.json", "a NUL byte at byte"};
    QTest::newRow("config.json a FIFO")
        << "fifo_config" << false << QStringList{"config.json", "not a regular file"};
    QTest::newRow("config.json a symlink loop")
        << "loop_config" << false << QStringList{"config.json", "cannot be read"};
    QTest::newRow("config.json of 300 MiB")
        << "huge_config" << false << QStringList{"config.json", "300.0 MiB", "256 MiB"};
    QTest::newRow("generation_config.json a device")
        << "device_generation" << false
        << QStringList{"generation_config.json", "not a regular file"};
    QTest::newRow("shard index a FIFO")
        << "fifo_index" << false
        << QStringList{"model.safetensors.index.json", "not a regular file"};
    QTest::newRow("truncated weights")
        << "truncated" << false << QStringList{"model.safetensors", "past the end"};
}

void TestModelDir::rejected() {
    QFETCH(QString, kind);
    QFETCH(bool, unsupported);
    QFETCH(QStringList, words);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    fs::path dir = tmp.path().toStdString();
    const std::string family = kind == "wrong_family" || kind == "shape_norm" ? "hunyuan" : "llama";
    json cfg = tiny_config(family);
    std::vector<Tensor> tensors = tensors_for(cfg, family, "BF16");
    int shards = 1;
    auto find = [&](const std::string& name) -> Tensor& {
        for (Tensor& t : tensors) {
            if (t.name == name) return t;
        }
        qFatal("no tensor %s", name.c_str());
    };
    auto erase = [&](const std::string& name) {
        std::erase_if(tensors, [&](const Tensor& t) { return t.name == name; });
    };

    if (kind == "drop") {
        erase("model.layers.1.mlp.up_proj.weight");
    } else if (kind == "drop_sharded") {
        erase("model.norm.weight");
        shards = 3;
    } else if (kind == "drop_lm_head") {
        erase("lm_head.weight");
    } else if (kind == "drop_two") {
        erase("model.layers.0.mlp.up_proj.weight");
        erase("model.layers.1.mlp.up_proj.weight");
    } else if (kind == "shape") {
        find("model.layers.0.self_attn.k_proj.weight").shape = {12, 16};
    } else if (kind == "shape_norm") {
        find("model.layers.1.self_attn.query_layernorm.weight").shape = {8};
    } else if (kind == "shape_sharded") {
        find("model.norm.weight").shape = {17};
        shards = 3;
    } else if (kind == "int_dtype") {
        find("model.norm.weight").dtype = "I32";
    } else if (kind == "f64_dtype") {
        find("model.norm.weight").dtype = "F64";
    } else if (kind == "extra_bias") {
        tensors.push_back({"model.layers.0.self_attn.q_proj.bias", "BF16", {16}});
    } else if (kind == "extra_layer") {
        tensors.push_back({"model.layers.2.input_layernorm.weight", "BF16", {16}});
    } else if (kind == "extra_other") {
        tensors.push_back({"model.vision.proj", "BF16", {4, 4}});
    } else if (kind == "wrong_family") {
        for (Tensor& t : tensors) {
            const auto pos = t.name.find("query_layernorm");
            if (pos != std::string::npos) t.name.replace(pos, 15, "q_norm");
            const auto kpos = t.name.find("key_layernorm");
            if (kpos != std::string::npos) t.name.replace(kpos, 13, "k_norm");
        }
    } else if (kind == "fused") {
        for (int l = 0; l < 2; ++l) {
            const std::string p = "model.layers." + std::to_string(l) + ".self_attn.";
            erase(p + "q_proj.weight");
            erase(p + "k_proj.weight");
            erase(p + "v_proj.weight");
            tensors.push_back({p + "qkv_proj.weight", "BF16", {32, 16}});
        }
    } else if (kind == "config_field") {
        cfg.erase("hidden_size");
    } else if (kind == "yarn") {
        cfg["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
    } else if (kind == "fifo_index") {
        shards = 2;
    } else if (kind == "arch") {
        cfg["architectures"] = {"GPTNeoXForCausalLM"};
    }

    if (kind == "no_dir") {
        dir /= "nope";
    } else if (kind == "file_dir") {
        write_file(dir / "afile", "x");
        dir /= "afile";
    } else {
        write_model(dir, cfg, tensors, shards);
        if (kind == "no_config") fs::remove(dir / "config.json");
        if (kind == "no_weights") fs::remove(dir / "model.safetensors");
        if (kind == "bad_config") write_file(dir / "config.json", "{\"vocab_size\": ");
        if (kind == "bad_generation") write_file(dir / "generation_config.json", "{,}");
        if (kind == "truncated") fs::resize_file(dir / "model.safetensors", 4000);
        if (kind == "nul_config")
            write_file(dir / "config.json", cfg.dump() + std::string(32, '\0') + "junk");
        if (kind == "fifo_config" || kind == "loop_config" || kind == "huge_config")
            fs::remove(dir / "config.json");
        if (kind == "fifo_config") QCOMPARE(::mkfifo((dir / "config.json").c_str(), 0600), 0);
        if (kind == "loop_config") fs::create_symlink("config.json", dir / "config.json");
        if (kind == "huge_config") {
            write_file(dir / "config.json", cfg.dump());
            fs::resize_file(dir / "config.json", std::uintmax_t{300} << 20);  // sparse
        }
        if (kind == "device_generation")
            fs::create_symlink("/dev/zero", dir / "generation_config.json");
        if (kind == "fifo_index") {
            fs::remove(dir / "model.safetensors.index.json");
            QCOMPARE(::mkfifo((dir / "model.safetensors.index.json").c_str(), 0600), 0);
        }
    }
    std::vector<std::string> w;
    for (const QString& s : words)
        w.push_back(s.toStdString());
    expect_error([&] { (void)ModelDir::open(dir); }, unsupported, w);
}

// ---- The fixtures generated with transformers (tools/fixtures) --------------------------------

void TestModelDir::fixtures_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("architecture");
    QTest::addColumn<QString>("dtype");  // safetensors dtype of every tensor
    for (auto [name, arch, dtype] :
         {std::tuple{"hunyuan-gqa-alpha", Architecture::HunYuanDenseV1, "BF16"},
          std::tuple{"hunyuan-tied", Architecture::HunYuanDenseV1, "F16"},
          std::tuple{"qwen3", Architecture::Qwen3, "F32"},
          std::tuple{"qwen2", Architecture::Qwen2, "BF16"},
          std::tuple{"llama", Architecture::Llama, "BF16"}}) {
        QTest::newRow(name) << name << int(arch) << dtype;
    }
}

void TestModelDir::fixtures() {
    QFETCH(QString, name);
    QFETCH(int, architecture);
    QFETCH(QString, dtype);
    const fs::path dir = fixtures_dir() / name.toStdString();
    const ModelDir m = ModelDir::open(dir);
    const ModelConfig& c = m.config;
    const json raw = read_json(dir / "config.json");

    QCOMPARE(int(c.architecture), architecture);
    QCOMPARE(c.architecture_name, raw["architectures"][0].get<std::string>());
    QCOMPARE(c.vocab_size, raw["vocab_size"].get<int>());
    QCOMPARE(c.hidden_size, raw["hidden_size"].get<int>());
    QCOMPARE(c.intermediate_size, raw["intermediate_size"].get<int>());
    QCOMPARE(c.num_layers, raw["num_hidden_layers"].get<int>());
    QCOMPARE(c.num_heads, raw["num_attention_heads"].get<int>());
    QCOMPARE(c.num_kv_heads, raw["num_key_value_heads"].get<int>());
    QCOMPARE(c.max_position_embeddings, raw["max_position_embeddings"].get<int>());
    QCOMPARE(c.rms_norm_eps, raw["rms_norm_eps"].get<float>());
    QCOMPARE(c.tie_word_embeddings, raw["tie_word_embeddings"].get<bool>());
    if (raw.contains("head_dim")) QCOMPARE(c.head_dim, raw["head_dim"].get<int>());
    if (raw.contains("bos_token_id") && !raw["bos_token_id"].is_null()) {
        QCOMPARE(c.bos_token_id, std::optional<int>(raw["bos_token_id"].get<int>()));
    }
    if (raw.contains("pad_token_id")) {
        QCOMPARE(c.pad_token_id.has_value(), !raw["pad_token_id"].is_null());
    }
    QCOMPARE(c.qk_norm, c.architecture == Architecture::HunYuanDenseV1 ||
                            c.architecture == Architecture::Qwen3);
    QCOMPARE(c.attention_bias, c.architecture == Architecture::Qwen2);
    QVERIFY(!c.attention_out_bias);

    // The summary the generator wrote next to its goldens, and what transformers computed.
    const json golden = read_json(goldens_dir() / (name.toStdString() + ".json"));
    QCOMPARE(c.head_dim, golden["head_dim"].get<int>());
    QCOMPARE(c.tie_word_embeddings, golden["tie_word_embeddings"].get<bool>());
    QCOMPARE(int(m.tensors->files().size()), int(golden["weight_files"].size()));
    QCOMPARE(c.attention_bias, golden["qkv_bias"].get<bool>());
    const std::vector<float> inv = c.rope_inv_freq();
    const json& ref = golden["facts"]["rope"]["inv_freq_fp32"];
    QCOMPARE(inv.size(), ref.size());
    for (std::size_t i = 0; i < inv.size(); ++i) {
        const double want = ref[i].get<double>();
        QVERIFY2(std::fabs(inv[i] - want) <= 2e-7 * std::fabs(want),
                 qPrintable(QString("inv_freq[%1] %2 vs %3").arg(i).arg(inv[i]).arg(want)));
    }
    if (golden["facts"]["rope"].contains("base")) {
        const double base = golden["facts"]["rope"]["base"].get<double>();
        QVERIFY(std::fabs(c.effective_rope_theta() / base - 1.0) < 1e-12);
    }
    if (name == "hunyuan-gqa-alpha") {
        QCOMPARE(c.rope_type, RopeType::DynamicAlpha);
        QCOMPARE(c.rope_alpha, 1000.0);
        QVERIFY(c.num_kv_heads < c.num_heads);
        QVERIFY(m.tensors->files().size() > 1);
        QCOMPARE(m.tensors->source().filename().string(),
                 std::string("model.safetensors.index.json"));
    } else {
        QCOMPARE(c.rope_type, RopeType::Default);
    }
    if (name == "llama") {
        QCOMPARE(c.rope_theta, 500000.0);  // from rope_parameters, transformers-5 form
        QCOMPARE(c.torch_dtype, std::string("bfloat16"));  // from "dtype"
    }

    // Every tensor: expected, stored in the fixture's dtype.
    const std::vector<ExpectedTensor> expected = expected_tensors(c);
    QCOMPARE(m.tensors->all().size(), expected.size());
    for (const ExpectedTensor& e : expected) {
        const TensorView& t = m.tensors->at(e.name);
        QCOMPARE(t.shape, e.shape);
        QCOMPARE(QString::fromUtf8(dtype_name(t.dtype).data(), int(dtype_name(t.dtype).size())),
                 dtype);
    }
    int64_t stored = 0;
    for (const auto& [n, t] : m.tensors->all())
        stored += t->numel();
    QCOMPARE(stored, c.parameter_count());

    // Values convert: RMSNorm weights are 1 + 0.1 * normal.
    const std::vector<float> norm = m.tensors->at("model.norm.weight").to_fp32();
    double mean = 0;
    for (float x : norm)
        mean += x;
    mean /= double(norm.size());
    QVERIFY2(std::fabs(mean - 1.0) < 0.1, qPrintable(QString::number(mean)));
}

QTEST_APPLESS_MAIN(TestModelDir)
#include "test_model_dir.moc"
