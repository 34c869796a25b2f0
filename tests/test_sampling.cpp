// Next-token selection: greedy, repetition penalty, temperature, top-k, top-p, seeded draws.

#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/runtime/sampling.h"

using namespace mtdesk;

namespace {

SamplingParams plain_sampling(uint64_t seed = 1) {
    SamplingParams p;
    p.greedy = false;
    p.temperature = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.repetition_penalty = 1.0f;
    p.seed = seed;
    return p;
}

std::vector<float> random_logits(int n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    std::vector<float> v(n);
    for (float& x : v)
        x = dist(rng);
    return v;
}

int32_t argmax(const std::vector<float>& v) {
    return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// Draws `n` tokens from fresh copies of `logits` and counts them.
std::map<int32_t, int> histogram(Sampler& s, const std::vector<float>& logits, int n) {
    std::map<int32_t, int> counts;
    for (int i = 0; i < n; ++i) {
        std::vector<float> l = logits;
        counts[s.sample(l, {})]++;
    }
    return counts;
}

// 64 draws of one sampler with `p` from the same logits.
std::vector<int32_t> draws(const SamplingParams& p, const std::vector<float>& logits) {
    Sampler s(p);
    std::vector<int32_t> out;
    for (int i = 0; i < 64; ++i) {
        auto l = logits;
        out.push_back(s.sample(l, {}));
    }
    return out;
}

}  // namespace

class TestSampling : public QObject {
    Q_OBJECT

  private slots:
    void greedy_picks_argmax() {
        Sampler s(SamplingParams::greedy_decoding());
        for (uint64_t seed = 0; seed < 20; ++seed) {
            auto logits = random_logits(1000, seed);
            const int32_t expected = argmax(logits);
            QCOMPARE(s.sample(logits, {}), expected);
        }
        // Lowest id on ties.
        std::vector<float> tied = {0.0f, 3.0f, -1.0f, 3.0f, 3.0f};
        QCOMPARE(s.sample(tied, {}), 1);
    }

    void repetition_penalty_math() {
        SamplingParams p = SamplingParams::greedy_decoding();
        p.repetition_penalty = 2.0f;
        Sampler s(p);
        std::vector<float> logits = {2.0f, -2.0f, 1.0f, 0.5f, -0.5f, 0.0f};
        const std::vector<int32_t> history = {0, 1, 1, 4, 5, 0};  // repeats count once
        // Penalised: 2/2 = 1, -2*2 = -4, 1, 0.5, -0.5*2 = -1, 0 stays 0 -> ids 0 and 2 tie.
        QCOMPARE(s.sample(logits, history), 0);
        const std::vector<float> expected = {1.0f, -4.0f, 1.0f, 0.5f, -1.0f, 0.0f};
        QCOMPARE(logits, expected);

        // A penalty below 1 rewards repeats.
        p.repetition_penalty = 0.5f;
        Sampler boost(p);
        std::vector<float> l2 = {1.0f, 1.5f, -1.0f};
        QCOMPARE(boost.sample(l2, std::vector<int32_t>{0, 2}), 0);  // 1/0.5 = 2 > 1.5
        QCOMPARE(l2, (std::vector<float>{2.0f, 1.5f, -0.5f}));

        // Out-of-vocabulary history is an error.
        std::vector<float> l3 = {1.0f, 2.0f};
        QVERIFY_THROWS_EXCEPTION(Error, s.sample(l3, std::vector<int32_t>{2}));
    }

    void temperature_scales_logits() {
        SamplingParams p = plain_sampling();
        p.temperature = 0.5f;
        Sampler s(p);
        std::vector<float> logits = {1.0f, -3.0f, 0.25f};
        s.sample(logits, {});
        QCOMPARE(logits, (std::vector<float>{2.0f, -6.0f, 0.5f}));
    }

    void top_k_one_is_greedy() {
        for (uint64_t seed = 0; seed < 50; ++seed) {
            SamplingParams p = SamplingParams::hunyuan_mt();
            p.top_k = 1;
            p.top_p = 1.0f;
            p.repetition_penalty = 1.0f;
            p.seed = seed;
            Sampler s(p);
            auto logits = random_logits(500, 100 + seed);
            const int32_t expected = argmax(logits);
            for (int i = 0; i < 5; ++i) {
                auto l = logits;
                QCOMPARE(s.sample(l, {}), expected);
            }
        }
    }

    void top_k_keeps_k() {
        SamplingParams p = plain_sampling(7);
        p.top_k = 3;
        Sampler s(p);
        const std::vector<float> logits = {0.1f, 2.0f, 1.9f, -5.0f, 1.8f, 1.7f};
        const auto counts = histogram(s, logits, 3000);
        std::set<int32_t> seen;
        for (const auto& [id, n] : counts) {
            seen.insert(id);
            QVERIFY(n > 500);
        }
        QCOMPARE(seen, (std::set<int32_t>{1, 2, 4}));

        // Ties at the k-th value are all kept, as TopKLogitsWarper does.
        p.top_k = 2;
        Sampler tie(p);
        const auto tied = histogram(tie, {1.0f, 3.0f, 2.0f, 2.0f, 0.0f}, 3000);
        std::set<int32_t> tied_seen;
        for (const auto& [id, n] : tied)
            tied_seen.insert(id);
        QCOMPARE(tied_seen, (std::set<int32_t>{1, 2, 3}));
    }

    void top_p_keeps_exactly_the_nucleus() {
        // probabilities 0.5, 0.2, 0.15, 0.1, 0.05: top_p 0.8 keeps {0, 1, 2} (0.85 >= 0.8, while
        // {0, 1} has only 0.7).
        const std::vector<double> probs = {0.5, 0.2, 0.15, 0.1, 0.05};
        std::vector<float> logits;
        for (double q : probs)
            logits.push_back(static_cast<float>(std::log(q)));
        SamplingParams p = plain_sampling(2024);
        p.top_p = 0.8f;
        Sampler s(p);
        const int draws = 40000;
        const auto counts = histogram(s, logits, draws);
        QCOMPARE(counts.size(), std::size_t{3});
        const double kept = 0.85;
        for (int32_t id = 0; id < 3; ++id) {
            const double freq = double(counts.at(id)) / draws;
            const double want = probs[id] / kept;
            QVERIFY2(std::abs(freq - want) < 0.01,
                     qPrintable(QStringLiteral("id %1: %2 vs %3").arg(id).arg(freq).arg(want)));
        }

        // The processed logits mark the removed tokens -inf.
        std::vector<float> l = logits;
        s.sample(l, {});
        QVERIFY(std::isinf(l[3]) && l[3] < 0);
        QVERIFY(std::isinf(l[4]) && l[4] < 0);
        QVERIFY(std::isfinite(l[2]));
    }

    void top_p_random_vocab() {
        // A larger random distribution: compute the nucleus here, compare frequencies.
        auto logits = random_logits(200, 77);
        SamplingParams p = plain_sampling(99);
        p.temperature = 0.8f;
        p.top_p = 0.6f;
        std::vector<double> prob(logits.size());
        double total = 0;
        const double mx = *std::max_element(logits.begin(), logits.end()) / 0.8;
        for (std::size_t i = 0; i < logits.size(); ++i) {
            prob[i] = std::exp(logits[i] / 0.8 - mx);
            total += prob[i];
        }
        std::vector<int> order(logits.size());
        for (std::size_t i = 0; i < order.size(); ++i)
            order[i] = int(i);
        std::sort(order.begin(), order.end(), [&](int a, int b) { return prob[a] > prob[b]; });
        std::set<int32_t> nucleus;
        double cum = 0;
        for (int id : order) {
            nucleus.insert(id);
            cum += prob[id] / total;
            if (cum >= 0.6) break;
        }
        Sampler s(p);
        const int draws = 30000;
        const auto counts = histogram(s, logits, draws);
        for (const auto& [id, n] : counts) {
            QVERIFY2(nucleus.count(id), qPrintable(QStringLiteral("id %1 outside").arg(id)));
        }
        for (int32_t id : nucleus) {
            const double want = prob[id] / total / cum;
            const double freq = counts.count(id) ? double(counts.at(id)) / draws : 0.0;
            QVERIFY2(std::abs(freq - want) < 0.012,
                     qPrintable(QStringLiteral("id %1: %2 vs %3").arg(id).arg(freq).arg(want)));
        }
    }

    void top_p_keeps_at_least_one() {
        SamplingParams p = plain_sampling(5);
        p.top_p = 1e-6f;
        Sampler s(p);
        const auto counts = histogram(s, {0.0f, 5.0f, 4.9f}, 200);
        QCOMPARE(counts.size(), std::size_t{1});
        QCOMPARE(counts.begin()->first, 1);
    }

    void seeds() {
        const auto logits = random_logits(50, 3);
        const auto run = [&](uint64_t seed) {
            SamplingParams p = plain_sampling(seed);
            p.temperature = 2.0f;
            return draws(p, logits);
        };
        QCOMPARE(run(11), run(11));
        QVERIFY(run(11) != run(12));
        QVERIFY(run(0) != run(1));
    }

    // Without a seed every sampler draws from a fresh random one: two runs of 64 draws at
    // temperature 2 over 50 tokens coincide by chance with a negligible probability.
    void absentSeedIsRandom() {
        const auto logits = random_logits(50, 3);
        const auto run = [&] {
            SamplingParams p = plain_sampling();
            p.seed.reset();
            p.temperature = 2.0f;
            return draws(p, logits);
        };
        QVERIFY(run() != run());
        QVERIFY(with_seed(SamplingParams{}).seed.has_value());
        SamplingParams chosen;
        chosen.seed = 5;
        QCOMPARE(with_seed(chosen).seed.value_or(0), uint64_t{5});
    }

    void invalid_params_throw() {
        const auto bad = [](auto edit) {
            SamplingParams p = SamplingParams::hunyuan_mt();
            edit(p);
            return p;
        };
        QVERIFY_THROWS_EXCEPTION(Error, Sampler(bad([](auto& p) { p.temperature = 0.0f; })));
        QVERIFY_THROWS_EXCEPTION(Error, Sampler(bad([](auto& p) { p.temperature = -1.0f; })));
        QVERIFY_THROWS_EXCEPTION(Error, Sampler(bad([](auto& p) { p.temperature = NAN; })));
        QVERIFY_THROWS_EXCEPTION(Error, Sampler(bad([](auto& p) { p.top_p = 0.0f; })));
        QVERIFY_THROWS_EXCEPTION(Error, Sampler(bad([](auto& p) { p.top_p = 1.5f; })));
        QVERIFY_THROWS_EXCEPTION(Error, Sampler(bad([](auto& p) { p.top_p = NAN; })));
        QVERIFY_THROWS_EXCEPTION(Error, Sampler(bad([](auto& p) { p.repetition_penalty = 0.0f; })));
        QVERIFY_THROWS_EXCEPTION(Error,
                                 Sampler(bad([](auto& p) { p.repetition_penalty = -1.0f; })));
        QVERIFY_THROWS_EXCEPTION(Error, Sampler(bad([](auto& p) { p.top_k = -1; })));
        // Greedy ignores the temperature.
        SamplingParams g = SamplingParams::greedy_decoding();
        g.temperature = 0.0f;
        Sampler ok(g);
        std::vector<float> l = {1.0f, 2.0f};
        QCOMPARE(ok.sample(l, {}), 1);
        // The recommended defaults are valid.
        Sampler hy(SamplingParams::hunyuan_mt());
        QCOMPARE(hy.params().top_k, 20);
    }
};

QTEST_APPLESS_MAIN(TestSampling)
#include "test_sampling.moc"
