// The generation loop: stop tokens, max_new_tokens, cancellation, limits, timings, KV cache.

#include <QTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <vector>

#include "mtdesk/cpu/cpu_model.h"
#include "mtdesk/error.h"
#include "mtdesk/model/model_dir.h"
#include "mtdesk/runtime/generate.h"

using namespace mtdesk;
namespace fs = std::filesystem;

namespace {

const fs::path kModel = fs::path(MTDESK_TEST_DATA_DIR) / "models" / "hunyuan-gqa-alpha";

GenerationParams greedy(int max_new_tokens) {
    GenerationParams p;
    p.sampling = SamplingParams::greedy_decoding();
    p.max_new_tokens = max_new_tokens;
    return p;
}

std::vector<int32_t> test_prompt(int n, int vocab) {
    std::vector<int32_t> ids(n);
    for (int i = 0; i < n; ++i)
        ids[i] = (i * 37 + 11) % vocab;
    return ids;
}

}  // namespace

class TestGenerate : public QObject {
    Q_OBJECT

    ModelDir dir_;
    std::unique_ptr<CpuModel> model_;
    std::vector<int32_t> prompt_;
    std::vector<int32_t> reference_;  // 24 greedy tokens after prompt_, no stop tokens

  private slots:
    void initTestCase() {
        if (!fs::exists(kModel / "config.json")) QFAIL("fixture model missing: make_fixtures.py");
        dir_ = ModelDir::open(kModel);
        model_ = CpuModel::load(dir_, 2);
        prompt_ = test_prompt(30, model_->config().vocab_size);
        const GenerationResult r = generate(*model_, prompt_, greedy(24));
        QCOMPARE(r.tokens.size(), std::size_t{24});
        QCOMPARE(int(r.finish), int(FinishReason::Length));
        QVERIFY(r.prefill_ms > 0);
        QVERIFY(r.decode_ms > 0);
        reference_ = r.tokens;
    }

    void stop_token_ends_and_is_excluded() {
        // A token whose first occurrence is well inside the reference continuation.
        std::size_t first = 4;
        while (std::find(reference_.begin(), reference_.begin() + first, reference_[first]) !=
               reference_.begin() + first) {
            ++first;
        }
        QVERIFY(first < reference_.size());
        const int32_t stop = reference_[first];
        GenerationParams p = greedy(24);
        p.stop_tokens = {-5, stop};
        std::vector<int32_t> streamed;
        const GenerationResult r = generate(*model_, prompt_, p, [&](int32_t t) {
            streamed.push_back(t);
            return true;
        });
        QCOMPARE(int(r.finish), int(FinishReason::Stop));
        const std::vector<int32_t> want(reference_.begin(), reference_.begin() + first);
        QCOMPARE(r.tokens, want);
        QCOMPARE(streamed, want);
    }

    void max_new_tokens() {
        for (int n : {1, 2, 7}) {
            const GenerationResult r = generate(*model_, prompt_, greedy(n));
            QCOMPARE(int(r.finish), int(FinishReason::Length));
            QCOMPARE(r.tokens, std::vector<int32_t>(reference_.begin(), reference_.begin() + n));
        }
        const GenerationResult none = generate(*model_, prompt_, greedy(0));
        QVERIFY(none.tokens.empty());
        QCOMPARE(int(none.finish), int(FinishReason::Length));
        QVERIFY_THROWS_EXCEPTION(Error, generate(*model_, prompt_, greedy(-1)));
    }

    // Ids at or above vocab_limit (a padded embedding beyond the tokenizer) are never generated:
    // with the limit set to the unconstrained first choice, that choice is excluded and the first
    // token is the argmax of the allowed prefix.
    void vocab_limit() {
        const int32_t limit = reference_[0];
        QVERIFY(limit > 1);
        GenerationParams p = greedy(16);
        p.vocab_limit = limit;
        const GenerationResult r = generate(*model_, prompt_, p);
        QCOMPARE(r.tokens.size(), std::size_t{16});
        for (int32_t t : r.tokens)
            QVERIFY(t < limit);
        std::vector<float> logits(static_cast<std::size_t>(model_->config().vocab_size));
        auto state = model_->new_state(static_cast<int>(prompt_.size()));
        model_->forward(*state, prompt_, logits, false);
        const auto best = std::max_element(logits.begin(), logits.begin() + limit);
        QCOMPARE(r.tokens[0], static_cast<int32_t>(best - logits.begin()));
        QVERIFY(r.tokens[0] != reference_[0]);
    }

    void cancellation() {
        int calls = 0;
        const GenerationResult r =
            generate(*model_, prompt_, greedy(24), [&](int32_t) { return ++calls < 3; });
        QCOMPARE(calls, 3);
        QCOMPARE(int(r.finish), int(FinishReason::Cancelled));
        QCOMPARE(r.tokens, std::vector<int32_t>(reference_.begin(), reference_.begin() + 3));
    }

    void prompt_limits() {
        const int max_pos = model_->config().max_position_embeddings;
        const int vocab = model_->config().vocab_size;
        QVERIFY_THROWS_EXCEPTION(Error,
                                 generate(*model_, test_prompt(max_pos + 1, vocab), greedy(4)));
        QVERIFY_THROWS_EXCEPTION(Error, generate(*model_, std::vector<int32_t>{}, greedy(4)));
        // An id outside the vocabulary is the model's error.
        QVERIFY_THROWS_EXCEPTION(Error,
                                 generate(*model_, std::vector<int32_t>{1, vocab}, greedy(4)));
        if (max_pos <= 4096) {
            // A prompt that fills the context leaves room for exactly one token.
            const GenerationResult r = generate(*model_, test_prompt(max_pos, vocab), greedy(8));
            QCOMPARE(r.tokens.size(), std::size_t{1});
            QCOMPARE(int(r.finish), int(FinishReason::Length));
            // Three positions left: three tokens.
            const GenerationResult r3 =
                generate(*model_, test_prompt(max_pos - 2, vocab), greedy(8));
            QCOMPARE(r3.tokens.size(), std::size_t{3});
        }
    }

    void sampling_is_seeded() {
        GenerationParams p;
        p.sampling = SamplingParams::hunyuan_mt();
        p.sampling.temperature = 1.5f;
        p.sampling.top_k = 0;
        p.sampling.top_p = 1.0f;
        p.max_new_tokens = 16;
        p.sampling.seed = 42;
        const auto a = generate(*model_, prompt_, p).tokens;
        const auto b = generate(*model_, prompt_, p).tokens;
        QCOMPARE(a, b);
        p.sampling.seed = 43;
        QVERIFY(generate(*model_, prompt_, p).tokens != a);
        p.sampling.temperature = -1.0f;
        QVERIFY_THROWS_EXCEPTION(Error, generate(*model_, prompt_, p));
    }

    void kv_state() {
        const int vocab = model_->config().vocab_size;
        auto state = model_->new_state(40);
        QCOMPARE(state->capacity(), 40);
        QCOMPARE(state->length(), 0);
        std::vector<float> a(vocab), b(vocab);
        model_->forward(*state, prompt_, a, false);
        QCOMPARE(state->length(), 30);
        // Truncate and run the last token again: same logits.
        state->truncate(29);
        model_->forward(*state, std::span(prompt_).last(1), b, false);
        double err = 0, mag = 0;  // a GEMM row and a GEMV differ in rounding only
        for (int i = 0; i < vocab; ++i) {
            err = std::max(err, double(std::abs(a[i] - b[i])));
            mag = std::max(mag, double(std::abs(a[i])));
        }
        QVERIFY2(err <= 1e-5 * mag, qPrintable(QString::number(err / mag)));
        QVERIFY_THROWS_EXCEPTION(Error, state->truncate(31));
        QVERIFY_THROWS_EXCEPTION(Error, state->truncate(-1));
        // Overflow and small buffers are errors, and leave the state as it was.
        QVERIFY_THROWS_EXCEPTION(Error, model_->forward(*state, test_prompt(11, vocab), a, false));
        std::vector<float> small(vocab - 1);
        QVERIFY_THROWS_EXCEPTION(
            Error, model_->forward(*state, std::span(prompt_).first(1), small, false));
        QCOMPARE(state->length(), 30);
        QVERIFY_THROWS_EXCEPTION(Error, model_->new_state(0));
        QVERIFY_THROWS_EXCEPTION(Error,
                                 model_->new_state(model_->config().max_position_embeddings + 1));
    }
};

QTEST_APPLESS_MAIN(TestGenerate)
#include "test_generate.moc"
