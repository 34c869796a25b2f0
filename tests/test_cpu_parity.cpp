// The CPU decoder against transformers: tiny random-weight checkpoints made by
// tools/fixtures/make_fixtures.py, with golden logits and greedy continuations computed by
// transformers in fp32 (tests/data/goldens/<name>.safetensors).

#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../engine/cpu/ops_cpu.h"
#include "goldens.h"
#include "mtdesk/cpu/cpu_model.h"
#include "mtdesk/model/model_dir.h"
#include "mtdesk/model/safetensors.h"
#include "mtdesk/quant/quantize.h"
#include "mtdesk/runtime/generate.h"
#include "test_files.h"

using namespace mtdesk;
namespace fs = std::filesystem;

namespace {

const fs::path kData = MTDESK_TEST_DATA_DIR;
const char* const kFixtures[] = {"hunyuan-gqa-alpha", "hunyuan-tied", "qwen3", "qwen2", "llama"};
constexpr double kRelTolerance = 1e-4;  // max |delta| <= 1e-4 * max |golden logit|

using test::Golden;

struct Fixture {
    ModelDir dir;
    std::unique_ptr<CpuModel> model;
    std::unique_ptr<Golden> golden;
};

// max |a - b| / max |b|
double relative_error(std::span<const float> got, std::span<const float> want) {
    double err = 0, mag = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        err = std::max(err, std::abs(double(got[i]) - double(want[i])));
        mag = std::max(mag, std::abs(double(want[i])));
    }
    return err / std::max(mag, 1e-30);
}

// A copy of the fixture `from` in `to` whose linear weights are those of CPU tier `tier`,
// dequantised, in fp32: what the INT tier computes with, for the FP32 tier to run. A tied
// checkpoint is written untied, with the dequantised embedding as its lm_head.weight (the INT
// tiers quantise a copy of the embedding for the output layer and keep the lookup exact).
void write_dequantised_copy(const fs::path& from, const fs::path& to, CpuTier tier) {
    for (const auto& e : fs::directory_iterator(from))
        if (e.path().filename() != "model.safetensors")
            fs::copy_file(e.path(), to / e.path().filename());
    nlohmann::json config = nlohmann::json::parse(test::read_file(to / "config.json"));
    const bool tied = config.value("tie_word_embeddings", false);
    config["tie_word_embeddings"] = false;
    test::write_file(to / "config.json", config.dump(2));
    const TensorSet ts(from);
    auto quantised = [tier](const std::vector<float>& v, const std::vector<int64_t>& shape) {
        const int n = static_cast<int>(shape[0]), k = static_cast<int>(shape[1]);
        return tier == CpuTier::INT8 ? dequantize(quantize_int8(v, n, k))
                                     : dequantize(quantize_int4(v, n, k));
    };
    std::vector<std::pair<std::string, std::pair<std::vector<int64_t>, std::vector<float>>>> out;
    for (const auto& [name, t] : ts.all()) {
        std::vector<float> v = t->to_fp32();
        const bool linear = name.ends_with("_proj.weight") || name == "lm_head.weight";
        if (linear && !(tied && name == "lm_head.weight")) v = quantised(v, t->shape);
        if (tied && name == "lm_head.weight") continue;
        if (tied && name == "model.embed_tokens.weight")
            out.push_back({"lm_head.weight", {t->shape, quantised(v, t->shape)}});
        out.push_back({name, {t->shape, std::move(v)}});
    }
    nlohmann::json header = nlohmann::json::object();
    std::string data;
    for (const auto& [name, tensor] : out) {
        const auto& [shape, v] = tensor;
        header[name] = {{"dtype", "F32"},
                        {"shape", shape},
                        {"data_offsets", {data.size(), data.size() + v.size() * 4}}};
        data.append(reinterpret_cast<const char*>(v.data()), v.size() * 4);
    }
    const std::string text = header.dump();
    const uint64_t n = text.size();
    test::write_file(to / "model.safetensors",
                     std::string(reinterpret_cast<const char*>(&n), 8) + text + data);
}

QString ids_text(const std::vector<int32_t>& ids) {
    QStringList parts;
    for (int32_t id : ids)
        parts << QString::number(id);
    return parts.join(' ');
}

}  // namespace

class TestCpuParity : public QObject {
    Q_OBJECT

    std::map<std::string, std::unique_ptr<Fixture>> cache_;

    Fixture& fixture(const std::string& name) {
        auto it = cache_.find(name);
        if (it != cache_.end()) return *it->second;
        auto f = std::make_unique<Fixture>();
        f->dir = ModelDir::open(kData / "models" / name);
        f->model = CpuModel::load(f->dir);
        f->golden = std::make_unique<Golden>(kData / "goldens" / (name + ".safetensors"));
        return *cache_.emplace(name, std::move(f)).first->second;
    }

    static void add_rows() {
        QTest::addColumn<QString>("name");
        for (const char* name : kFixtures)
            QTest::newRow(name) << QString::fromUtf8(name);
    }

  private slots:
    // The RoPE inverse frequencies are the float32 numbers transformers computed (recorded by
    // the generator in goldens/<name>.json, facts.rope.inv_freq_fp32), bit for bit.
    void rope_frequencies_data() { add_rows(); }
    void rope_frequencies() {
        QFETCH(QString, name);
        Fixture& f = fixture(name.toStdString());
        std::ifstream in(kData / "goldens" / (name.toStdString() + ".json"));
        const nlohmann::json facts = nlohmann::json::parse(in).at("facts");
        if (!facts.contains("rope") || !facts["rope"].contains("inv_freq_fp32")) {
            QSKIP("no inv_freq_fp32 recorded for this fixture");
        }
        const auto& want = facts["rope"]["inv_freq_fp32"];
        const auto got = cpu::rope_frequencies(f.model->config()).inv_freq;
        QCOMPARE(got.size(), want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            QCOMPARE(static_cast<float>(got[i]), want[i].get<float>());
        }
    }

    // (a) One forward over all 96 ids, logits of every position.
    void all_positions_data() { add_rows(); }
    void all_positions() {
        QFETCH(QString, name);
        Fixture& f = fixture(name.toStdString());
        const auto ids = f.golden->ids("input_ids");
        const auto want = f.golden->at("logits").to_fp32();
        const int vocab = f.model->config().vocab_size;
        QCOMPARE(want.size(), ids.size() * vocab);

        auto state = f.model->new_state(static_cast<int>(ids.size()));
        std::vector<float> logits(ids.size() * vocab);
        f.model->forward(*state, ids, logits, /*all_positions=*/true);
        QCOMPARE(state->length(), static_cast<int>(ids.size()));
        const double err = relative_error(logits, want);
        qInfo("%s: all-position logits, max relative error %.3g", qPrintable(name), err);
        QVERIFY2(err <= kRelTolerance, qPrintable(QString::number(err)));
    }

    // (b) Prefill 40 positions, then one token at a time through the KV cache.
    void incremental_data() { add_rows(); }
    void incremental() {
        QFETCH(QString, name);
        Fixture& f = fixture(name.toStdString());
        const auto ids = f.golden->ids("input_ids");
        const auto want = f.golden->at("logits").to_fp32();
        const int64_t vocab = f.model->config().vocab_size;
        const std::size_t prefill = 40;

        auto state = f.model->new_state(static_cast<int>(ids.size()));
        std::vector<float> logits(ids.size() * vocab);
        f.model->forward(*state, std::span(ids).first(prefill), logits, true);
        for (std::size_t t = prefill; t < ids.size(); ++t) {
            f.model->forward(*state, std::span(ids).subspan(t, 1),
                             std::span(logits).subspan(t * vocab, vocab), false);
        }
        const double err = relative_error(logits, want);
        qInfo("%s: incremental logits, max relative error %.3g", qPrintable(name), err);
        QVERIFY2(err <= kRelTolerance, qPrintable(QString::number(err)));

        // Last-position-only prefill gives the last row of the all-position one.
        auto state2 = f.model->new_state(static_cast<int>(ids.size()));
        std::vector<float> last(vocab);
        f.model->forward(*state2, std::span(ids).first(prefill), last, false);
        QVERIFY(relative_error(last, std::span(want).subspan((prefill - 1) * vocab, vocab)) <=
                kRelTolerance);
    }

    // (c) The 32-token greedy continuation through generate().
    void greedy_data() { add_rows(); }
    void greedy() {
        QFETCH(QString, name);
        Fixture& f = fixture(name.toStdString());
        const auto prompt = f.golden->ids("greedy_prompt");
        const auto want = f.golden->ids("greedy_tokens");
        GenerationParams params;
        params.sampling = SamplingParams::greedy_decoding();
        params.max_new_tokens = static_cast<int>(want.size());
        const GenerationResult r = generate(*f.model, prompt, params);
        QCOMPARE(ids_text(r.tokens), ids_text(want));
        QCOMPARE(int(r.finish), int(FinishReason::Length));
    }

    // (d) A tied checkpoint that ships an lm_head.weight too (as published ones do) is tied, as
    // transformers ties it: the copy is ignored, even one that differs (here: zeros).
    void tied_ignores_an_lm_head_copy() {
        Fixture& f = fixture("hunyuan-tied");
        QVERIFY(f.model->config().tie_word_embeddings);
        QTemporaryDir tmp;
        const fs::path dir = tmp.path().toStdString();
        const int vocab = f.model->config().vocab_size, hidden = f.model->config().hidden_size;
        QVERIFY(
            test::copy_with_zero_lm_head(kData / "models" / "hunyuan-tied", dir, vocab, hidden));
        const ModelDir copy = ModelDir::open(dir);
        QVERIFY(copy.tensors->find("lm_head.weight") != nullptr);
        const std::unique_ptr<CpuModel> model = CpuModel::load(copy);
        const auto ids = f.golden->ids("input_ids");
        std::vector<float> want(ids.size() * vocab), got(ids.size() * vocab);
        auto a = f.model->new_state(static_cast<int>(ids.size()));
        f.model->forward(*a, ids, want, /*all_positions=*/true);
        auto b = model->new_state(static_cast<int>(ids.size()));
        model->forward(*b, ids, got, /*all_positions=*/true);
        QVERIFY(got == want);
        QVERIFY(relative_error(got, f.golden->at("logits").to_fp32()) <= kRelTolerance);
    }

    // (e) The INT8 / INT4 tiers compute x · deq(W)ᵀ: their logits are those of the FP32 tier on
    // the dequantised weights (up to summation order), and differ from the unquantised model's
    // by more than that (so the quantised weights are the ones in use).
    void quantised_tiers_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("int4");
        for (const char* name : kFixtures)
            for (const bool int4 : {false, true})
                QTest::newRow((std::string(name) + (int4 ? "-int4" : "-int8")).c_str())
                    << QString::fromUtf8(name) << int4;
    }
    void quantised_tiers() {
        QFETCH(QString, name);
        QFETCH(bool, int4);
        const CpuTier tier = int4 ? CpuTier::INT4 : CpuTier::INT8;
        Fixture& f = fixture(name.toStdString());
        QTemporaryDir tmp;
        const fs::path copy = fs::path(tmp.path().toStdString()) / "dequantised";
        const fs::path cache = fs::path(tmp.path().toStdString()) / "cache";
        fs::create_directories(copy);
        write_dequantised_copy(kData / "models" / name.toStdString(), copy, tier);
        const ModelDir copy_dir = ModelDir::open(copy);
        const auto reference = CpuModel::load(copy_dir);
        CpuModelOptions options;
        options.tier = tier;
        options.quant_cache_dir = cache.string();
        const auto model = CpuModel::load(f.dir, options);
        QCOMPARE(int(model->tier()), int(tier));
        // What the model holds is what the memory estimate says, in both tiers.
        QCOMPARE(model->weight_bytes(), estimate_cpu_memory(f.dir.config, tier).weights);
        QCOMPARE(f.model->weight_bytes(), estimate_cpu_memory(f.dir.config, CpuTier::FP32).weights);

        const auto ids = f.golden->ids("input_ids");
        const int vocab = f.model->config().vocab_size;
        auto logits = [&](CpuModel& m, std::size_t n) {
            std::vector<float> out(n * vocab);
            auto state = m.new_state(static_cast<int>(ids.size()));
            // Prefill (the dequantised tiles) then decode one token at a time (the direct
            // products): both paths of the quantised layers.
            const std::size_t split = ids.size() - n + 1;
            std::vector<float> last(vocab);
            m.forward(*state, std::span(ids).first(split), last, /*all_positions=*/false);
            std::copy(last.begin(), last.end(), out.begin());
            for (std::size_t i = split; i < ids.size(); ++i) {
                m.forward(*state, std::span(ids).subspan(i, 1), last, false);
                std::copy(last.begin(), last.end(), out.begin() + (i - split + 1) * vocab);
            }
            return out;
        };
        const std::size_t n = 8;
        const std::vector<float> got = logits(*model, n);
        const std::vector<float> want = logits(*reference, n);
        const double err = relative_error(got, want);
        const double quant_err = relative_error(got, logits(*f.model, n));
        qInfo("%s %s: against fp32 on the dequantised weights %.3g, against the fp32 model %.3g",
              qPrintable(name), int4 ? "int4" : "int8", err, quant_err);
        QVERIFY(err <= kRelTolerance);
        QVERIFY(quant_err > 10 * err);

        // The second load reads the cache (filled by the first) and computes the same.
        QVERIFY(fs::exists(cache) && !fs::is_empty(cache));
        const auto again = CpuModel::load(f.dir, options);
        QVERIFY(logits(*again, n) == got);
    }

    // (f) The chat-template prompt of the Hunyuan fixture.
    void chat_greedy() {
        Fixture& f = fixture("hunyuan-gqa-alpha");
        const auto prompt = f.golden->ids("chat_prompt");
        const auto want = f.golden->ids("chat_greedy");
        GenerationParams params;
        params.sampling = SamplingParams::greedy_decoding();
        params.max_new_tokens = static_cast<int>(want.size());
        const GenerationResult r = generate(*f.model, prompt, params);
        QCOMPARE(ids_text(r.tokens), ids_text(want));
    }

    // Throughput on the largest fixture, so that a figure exists (tiny random models: this
    // measures overheads as much as arithmetic).
    void throughput() {
        Fixture* largest = nullptr;
        std::string largest_name;
        for (const char* name : kFixtures) {
            Fixture& f = fixture(name);
            if (!largest || f.model->weight_bytes() > largest->model->weight_bytes()) {
                largest = &f;
                largest_name = name;
            }
        }
        const auto ids = largest->golden->ids("input_ids");
        GenerationParams params;
        params.sampling = SamplingParams::greedy_decoding();
        params.max_new_tokens = 64;
        generate(*largest->model, ids, params);  // warm-up
        double prefill_ms = 0, decode_ms = 0;
        std::size_t decoded = 0;
        const int reps = 5;
        for (int i = 0; i < reps; ++i) {
            const GenerationResult r = generate(*largest->model, ids, params);
            prefill_ms += r.prefill_ms;
            decode_ms += r.decode_ms;
            decoded += r.tokens.size() - 1;
        }
        qInfo("%s (%.1f MB fp32): prefill %.0f tokens/s (%zu tokens), decode %.0f tokens/s",
              largest_name.c_str(), largest->model->weight_bytes() / 1e6,
              ids.size() * reps / (prefill_ms / 1000), ids.size(), decoded / (decode_ms / 1000));
    }
};

QTEST_APPLESS_MAIN(TestCpuParity)
#include "test_cpu_parity.moc"
