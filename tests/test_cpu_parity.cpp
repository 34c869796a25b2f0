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

    // (e) The chat-template prompt of the Hunyuan fixture.
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
