// Each CPU operation against a straightforward double-precision reference on random inputs.

#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../engine/cpu/ops_cpu.h"
#include "../engine/cpu/thread_pool_cpu.h"
#include "mtdesk/cpu/host_memory.h"
#include "mtdesk/error.h"
#include "mtdesk/quant/quantize.h"

using namespace mtdesk;

namespace {

std::vector<float> random_vector(std::size_t n, uint64_t seed, float scale = 1.0f) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v)
        x = dist(rng);
    return v;
}

// max |a - b| / max(max |b|, tiny)
double max_rel_error(const std::vector<float>& a, const std::vector<double>& b) {
    double err = 0, mag = 1e-30;
    for (std::size_t i = 0; i < b.size(); ++i) {
        err = std::max(err, std::abs(static_cast<double>(a[i]) - b[i]));
        mag = std::max(mag, std::abs(b[i]));
    }
    return err / mag;
}

std::vector<double> ref_rms_norm(const std::vector<double>& x, const std::vector<float>& w,
                                 int64_t rows, int64_t dim, double eps) {
    std::vector<double> out(x.size());
    for (int64_t r = 0; r < rows; ++r) {
        double ss = 0;
        for (int64_t i = 0; i < dim; ++i)
            ss += x[r * dim + i] * x[r * dim + i];
        const double inv = 1.0 / std::sqrt(ss / dim + eps);
        for (int64_t i = 0; i < dim; ++i)
            out[r * dim + i] = w[i] * x[r * dim + i] * inv;
    }
    return out;
}

ModelConfig rope_config(int head_dim, RopeType type) {
    ModelConfig c;
    c.head_dim = head_dim;
    c.rope_type = type;
    c.rope_theta = 10000.0;
    return c;
}

}  // namespace

class TestCpuOps : public QObject {
    Q_OBJECT

  private slots:
    void embedding() {
        const int64_t vocab = 13, hidden = 7;
        const auto table = random_vector(vocab * hidden, 1);
        const std::vector<int32_t> ids = {3, 0, 12, 3};
        std::vector<float> out(ids.size() * hidden);
        cpu::embedding(table.data(), vocab, hidden, ids, out.data());
        for (std::size_t t = 0; t < ids.size(); ++t) {
            for (int64_t i = 0; i < hidden; ++i) {
                QCOMPARE(out[t * hidden + i], table[ids[t] * hidden + i]);
            }
        }
        const std::vector<int32_t> bad = {1, 13};
        QVERIFY_THROWS_EXCEPTION(Error,
                                 cpu::embedding(table.data(), vocab, hidden, bad, out.data()));
        const std::vector<int32_t> negative = {-1};
        QVERIFY_THROWS_EXCEPTION(Error,
                                 cpu::embedding(table.data(), vocab, hidden, negative, out.data()));
    }

    void rms_norm_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("dim");
        QTest::newRow("1x1") << 1 << 1;
        QTest::newRow("7x67") << 7 << 67;
        QTest::newRow("3x128") << 3 << 128;
        QTest::newRow("40x2048") << 40 << 2048;
    }
    void rms_norm() {
        QFETCH(int, rows);
        QFETCH(int, dim);
        const auto x = random_vector(static_cast<std::size_t>(rows) * dim, 2, 3.0f);
        const auto w = random_vector(dim, 3);
        const float eps = 1e-5f;
        std::vector<float> out(x.size());
        cpu::rms_norm(x.data(), w.data(), out.data(), rows, dim, eps);
        const auto ref = ref_rms_norm(std::vector<double>(x.begin(), x.end()), w, rows, dim, eps);
        QVERIFY2(max_rel_error(out, ref) < 1e-6,
                 qPrintable(QString::number(max_rel_error(out, ref))));
        // In place.
        std::vector<float> inplace = x;
        cpu::rms_norm(inplace.data(), w.data(), inplace.data(), rows, dim, eps);
        QCOMPARE(inplace, out);
    }

    void add_rms_norm() {
        const int64_t rows = 5, dim = 33;
        auto residual = random_vector(rows * dim, 4);
        const auto delta = random_vector(rows * dim, 5);
        const auto w = random_vector(dim, 6);
        std::vector<double> sum(rows * dim);
        for (std::size_t i = 0; i < sum.size(); ++i)
            sum[i] = double(residual[i]) + delta[i];
        const auto ref = ref_rms_norm(sum, w, rows, dim, 1e-6);
        std::vector<float> out(rows * dim);
        cpu::add_rms_norm(residual.data(), delta.data(), w.data(), out.data(), rows, dim, 1e-6f);
        QVERIFY(max_rel_error(residual, sum) < 1e-7);
        QVERIFY(max_rel_error(out, ref) < 1e-6);
    }

    void rope_frequencies_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("head_dim");
        QTest::newRow("default-64") << int(RopeType::Default) << 64;
        QTest::newRow("default-6") << int(RopeType::Default) << 6;
        QTest::newRow("alpha-128") << int(RopeType::DynamicAlpha) << 128;
        QTest::newRow("alpha-34") << int(RopeType::DynamicAlpha) << 34;
        QTest::newRow("linear-64") << int(RopeType::Linear) << 64;
        QTest::newRow("llama3-128") << int(RopeType::Llama3) << 128;
    }
    void rope_frequencies() {
        QFETCH(int, type);
        QFETCH(int, head_dim);
        ModelConfig c = rope_config(head_dim, RopeType(type));
        c.rope_alpha = 1000.0;
        c.rope_factor = 8.0;
        c.rope_low_freq_factor = 1.0;
        c.rope_high_freq_factor = 4.0;
        c.rope_original_max_position = 8192;
        const double d = head_dim;
        double base = c.rope_theta;
        if (c.rope_type == RopeType::DynamicAlpha) base *= std::pow(c.rope_alpha, d / (d - 2));
        std::vector<double> ref(head_dim / 2);
        for (int i = 0; i < head_dim / 2; ++i) {
            double f = 1.0 / std::pow(base, 2.0 * i / d);
            if (c.rope_type == RopeType::Linear) f /= c.rope_factor;
            if (c.rope_type == RopeType::Llama3) {
                const double wavelen = 2 * std::numbers::pi / f;
                const double low_wl = 8192.0 / 1.0, high_wl = 8192.0 / 4.0;
                if (wavelen > low_wl) {
                    f /= 8.0;
                } else if (wavelen >= high_wl) {
                    const double s = (8192.0 / wavelen - 1.0) / (4.0 - 1.0);
                    f = (1 - s) * f / 8.0 + s * f;
                }
            }
            ref[i] = f;
        }
        for (bool like_torch : {true, false}) {
            const auto freqs = cpu::rope_frequencies(c, like_torch);
            QCOMPARE(freqs.inv_freq.size(), ref.size());
            for (std::size_t i = 0; i < ref.size(); ++i) {
                const double rel = std::abs(freqs.inv_freq[i] - ref[i]) / ref[i];
                // float32 formula: a few ulp (the exponent is rounded to float first).
                QVERIFY2(rel < (like_torch ? 2e-6 : 1e-12),
                         qPrintable(QStringLiteral("i=%1 rel=%2").arg(i).arg(rel)));
            }
        }
        ModelConfig odd = rope_config(7, RopeType::Default);
        QVERIFY_THROWS_EXCEPTION(Error, cpu::rope_frequencies(odd));
    }

    void rope_data() {
        QTest::addColumn<int>("tokens");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("head_dim");
        QTest::addColumn<int>("start");
        QTest::newRow("1tok-pos0") << 1 << 1 << 2 << 0;
        QTest::newRow("5tok-pos61") << 5 << 3 << 34 << 61;
        QTest::newRow("9tok-pos120") << 9 << 4 << 64 << 120;
        QTest::newRow("2tok-pos1000") << 2 << 2 << 128 << 1000;
    }
    void rope() {
        QFETCH(int, tokens);
        QFETCH(int, heads);
        QFETCH(int, head_dim);
        QFETCH(int, start);
        ModelConfig c = rope_config(head_dim, RopeType::DynamicAlpha);
        c.rope_alpha = 50.0;
        const int half = head_dim / 2;
        for (bool like_torch : {true, false}) {
            const auto freqs = cpu::rope_frequencies(c, like_torch);
            std::vector<float> cos(tokens * half), sin(tokens * half);
            cpu::rope_cos_sin(freqs, start, tokens, cos.data(), sin.data());
            auto x = random_vector(static_cast<std::size_t>(tokens) * heads * head_dim, 7);
            std::vector<double> ref(x.size());
            const double base = c.effective_rope_theta();
            for (int t = 0; t < tokens; ++t) {
                for (int h = 0; h < heads; ++h) {
                    const float* v = x.data() + (t * heads + h) * head_dim;
                    double* r = ref.data() + (t * heads + h) * head_dim;
                    for (int i = 0; i < half; ++i) {
                        const double a = (start + t) / std::pow(base, 2.0 * i / head_dim);
                        r[i] = v[i] * std::cos(a) - v[i + half] * std::sin(a);
                        r[i + half] = v[i + half] * std::cos(a) + v[i] * std::sin(a);
                    }
                }
            }
            cpu::rope(x.data(), tokens, heads, head_dim, cos.data(), sin.data());
            // The float32 angle of position p is off by up to ~p * 2^-24 rad.
            const double tol = like_torch ? 4e-7 * (start + tokens) + 1e-6 : 1e-6;
            const double err = max_rel_error(x, ref);
            QVERIFY2(err < tol, qPrintable(QStringLiteral("err=%1 tol=%2").arg(err).arg(tol)));
        }
    }

    void linear_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("in");
        QTest::addColumn<int>("out");
        QTest::addColumn<bool>("bias");
        QTest::newRow("1x17x9") << 1 << 17 << 9 << false;
        QTest::newRow("1x17x9-bias") << 1 << 17 << 9 << true;
        QTest::newRow("7x33x65") << 7 << 33 << 65 << false;
        QTest::newRow("7x33x65-bias") << 7 << 33 << 65 << true;
        QTest::newRow("96x256x1024") << 96 << 256 << 1024 << true;
    }
    void linear() {
        QFETCH(int, rows);
        QFETCH(int, in);
        QFETCH(int, out);
        QFETCH(bool, bias);
        const auto x = random_vector(static_cast<std::size_t>(rows) * in, 8);
        const auto w = random_vector(static_cast<std::size_t>(out) * in, 9, 0.1f);
        const auto b = random_vector(out, 10);
        std::vector<double> ref(static_cast<std::size_t>(rows) * out);
        for (int r = 0; r < rows; ++r) {
            for (int o = 0; o < out; ++o) {
                double s = bias ? b[o] : 0.0;
                for (int i = 0; i < in; ++i)
                    s += double(x[r * in + i]) * w[o * in + i];
                ref[r * out + o] = s;
            }
        }
        std::vector<float> y(ref.size(), 123.0f);
        cpu::linear(x.data(), w.data(), bias ? b.data() : nullptr, y.data(), rows, in, out);
        QVERIFY(max_rel_error(y, ref) < 1e-5);
    }

    // The CPU INT tiers' products against quantize.h's double-precision reference: rows on both
    // sides of kQuantGemvRows (direct products / dequantised tiles and sgemm), k not a multiple
    // of the INT4 group (and odd), and a weight of more than one tile.
    void linear_quantised_data() {
        QTest::addColumn<bool>("int4");
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("in");
        QTest::addColumn<int>("out");
        QTest::addColumn<bool>("bias");
        for (const bool int4 : {false, true}) {
            const char* t = int4 ? "int4-" : "int8-";
            auto row = [&](const char* name, int rows, int in, int out, bool bias) {
                QTest::newRow((std::string(t) + name).c_str()) << int4 << rows << in << out << bias;
            };
            row("1x256x63", 1, 256, 63, false);
            row("1x201x9-bias", 1, 201, 9, true);
            row("3x200x65-bias", 3, 200, 65, true);
            row("4x384x31", 4, 384, 31, false);
            row("5x200x65-bias", 5, 200, 65, true);
            row("17x129x40", 17, 129, 40, false);
            row("5x4096x2100-two-tiles", 5, 4096, 2100, true);
        }
    }
    void linear_quantised() {
        QFETCH(bool, int4);
        QFETCH(int, rows);
        QFETCH(int, in);
        QFETCH(int, out);
        QFETCH(bool, bias);
        const auto x = random_vector(static_cast<std::size_t>(rows) * in, 21);
        const auto w = random_vector(static_cast<std::size_t>(out) * in, 22, 0.05f);
        const auto b = random_vector(out, 23);
        const QuantizedTensor q = int4 ? QuantizedTensor(quantize_int4(w, out, in))
                                       : QuantizedTensor(quantize_int8(w, out, in));
        const std::vector<float> want = linear_reference(q, x, rows);
        std::vector<double> ref(want.begin(), want.end());
        if (bias)
            for (int r = 0; r < rows; ++r)
                for (int o = 0; o < out; ++o)
                    ref[static_cast<std::size_t>(r) * out + o] += b[o];
        cpu::ThreadPool pool(3);
        cpu::QuantScratch scratch;
        std::vector<float> y(ref.size(), 123.0f);
        // Both forms of the products: AVX2 (where the CPU has it) and the portable loops.
        for (const bool portable : {false, true}) {
            cpu::force_portable_quant_kernels(portable);
            std::fill(y.begin(), y.end(), 123.0f);
            cpu::linear(x.data(), q, bias ? b.data() : nullptr, y.data(), rows, pool, scratch);
            cpu::force_portable_quant_kernels(false);
            const double err = max_rel_error(y, ref);
            QVERIFY2(err < 2e-5, qPrintable(QStringLiteral("%1 (%2)").arg(err).arg(
                                     portable ? "portable" : "default")));
        }
        // The same weight dequantised and run through the fp32 path agrees as closely.
        std::vector<float> dense(ref.size());
        const std::vector<float> deq = dequantize(q);
        cpu::linear(x.data(), deq.data(), bias ? b.data() : nullptr, dense.data(), rows, in, out);
        QVERIFY(max_rel_error(dense, ref) < 2e-5);
        // And the quantisation mattered: the unquantised weight gives other outputs.
        std::vector<float> exact(ref.size());
        cpu::linear(x.data(), w.data(), bias ? b.data() : nullptr, exact.data(), rows, in, out);
        QVERIFY(max_rel_error(exact, ref) > 1e-4);
    }

    void linear_quantised_rows() {
        const auto w = random_vector(8 * 128, 24);
        const QuantizedTensor q = quantize_int8(w, 8, 128);
        cpu::ThreadPool pool(2);
        cpu::QuantScratch scratch;
        std::vector<float> y(8, 5.0f);
        cpu::linear(nullptr, q, nullptr, y.data(), 0, pool, scratch);  // nothing to do
        QCOMPARE(y, std::vector<float>(8, 5.0f));
        QVERIFY_THROWS_EXCEPTION(Error,
                                 cpu::linear(nullptr, q, nullptr, y.data(), -1, pool, scratch));
    }

    // MemAvailable, lowered to what this process's cgroup (v2) leaves when that is less.
    void host_memory() {
        QTemporaryDir tmp;
        const std::filesystem::path proc = tmp.path().toStdString() + "/proc",
                                    cg = tmp.path().toStdString() + "/cgroup";
        QVERIFY(!available_host_memory(proc, cg));  // no /proc/meminfo
        std::filesystem::create_directories(proc / "self");
        std::filesystem::create_directories(cg / "user.slice" / "app");
        auto write = [](const std::filesystem::path& p, const std::string& text) {
            std::ofstream(p) << text;
        };
        write(proc / "meminfo",
              "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n");
        QCOMPARE(available_host_memory(proc, cg), std::optional<std::size_t>(20000000ull * 1024));
        write(proc / "self" / "cgroup", "0::/user.slice/app\n");
        write(cg / "user.slice" / "app" / "memory.max", "max\n");
        write(cg / "user.slice" / "app" / "memory.current", "1000\n");
        QCOMPARE(available_host_memory(proc, cg), std::optional<std::size_t>(20000000ull * 1024));
        write(cg / "user.slice" / "app" / "memory.max", "8589934592\n");
        write(cg / "user.slice" / "app" / "memory.current", "1073741824\n");
        QCOMPARE(available_host_memory(proc, cg), std::optional<std::size_t>(7ull << 30));
        write(cg / "user.slice" / "app" / "memory.current", "9000000000\n");  // over the limit
        QCOMPARE(available_host_memory(proc, cg), std::optional<std::size_t>(0));
        // This machine's own figure is there and plausible.
        const auto here = available_host_memory();
        QVERIFY(here && *here > (std::size_t(16) << 20));
    }

    void swiglu() {
        const int64_t n = 1001;
        const auto gate = random_vector(n, 11, 4.0f);
        const auto up = random_vector(n, 12);
        std::vector<double> ref(n);
        for (int64_t i = 0; i < n; ++i)
            ref[i] = gate[i] / (1.0 + std::exp(-double(gate[i]))) * up[i];
        std::vector<float> out(n);
        cpu::swiglu(gate.data(), up.data(), out.data(), n);
        QVERIFY(max_rel_error(out, ref) < 1e-6);
        std::vector<float> inplace = gate;
        cpu::swiglu(inplace.data(), up.data(), inplace.data(), n);
        QCOMPARE(inplace, out);
    }

    void attention_data() {
        QTest::addColumn<int>("tokens");
        QTest::addColumn<int>("past");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("kv_heads");
        QTest::addColumn<int>("head_dim");
        QTest::newRow("prefill-mha") << 9 << 0 << 3 << 3 << 16;
        QTest::newRow("prefill-gqa2") << 70 << 0 << 4 << 2 << 32;
        QTest::newRow("prefill-gqa4") << 13 << 0 << 8 << 2 << 34;
        QTest::newRow("decode-gqa4") << 1 << 77 << 4 << 1 << 64;
        QTest::newRow("chunk-gqa2") << 5 << 66 << 6 << 3 << 18;
        QTest::newRow("decode-mha") << 1 << 0 << 2 << 2 << 8;
    }
    void attention() {
        QFETCH(int, tokens);
        QFETCH(int, past);
        QFETCH(int, heads);
        QFETCH(int, kv_heads);
        QFETCH(int, head_dim);
        const int ctx = past + tokens;
        const auto q = random_vector(static_cast<std::size_t>(tokens) * heads * head_dim, 13);
        const auto k = random_vector(static_cast<std::size_t>(ctx + 3) * kv_heads * head_dim, 14);
        const auto v = random_vector(static_cast<std::size_t>(ctx + 3) * kv_heads * head_dim, 15);
        const double scale = 1.0 / std::sqrt(double(head_dim));
        std::vector<double> ref(q.size());
        const int group = heads / kv_heads;
        for (int t = 0; t < tokens; ++t) {
            for (int h = 0; h < heads; ++h) {
                const int g = h / group;
                std::vector<double> s(past + t + 1);
                double mx = -1e300;
                for (int j = 0; j <= past + t; ++j) {
                    double dot = 0;
                    for (int d = 0; d < head_dim; ++d) {
                        dot += double(q[(t * heads + h) * head_dim + d]) *
                               k[(j * kv_heads + g) * head_dim + d];
                    }
                    s[j] = dot * scale;
                    mx = std::max(mx, s[j]);
                }
                double sum = 0;
                for (double& e : s)
                    sum += (e = std::exp(e - mx));
                for (int d = 0; d < head_dim; ++d) {
                    double o = 0;
                    for (int j = 0; j <= past + t; ++j) {
                        o += s[j] / sum * v[(j * kv_heads + g) * head_dim + d];
                    }
                    ref[(t * heads + h) * head_dim + d] = o;
                }
            }
        }
        for (int threads : {1, 3}) {
            cpu::ThreadPool pool(threads);
            std::vector<float> out(q.size(), 99.0f);
            cpu::attention(q.data(), k.data(), v.data(), out.data(), tokens, past, heads, kv_heads,
                           head_dim, static_cast<float>(scale), pool);
            const double err = max_rel_error(out, ref);
            QVERIFY2(err < 1e-5, qPrintable(QString::number(err)));
        }
    }

    void thread_pool() {
        for (int threads : {1, 2, 5}) {
            cpu::ThreadPool pool(threads);
            QCOMPARE(pool.size(), threads);
            for (int64_t n : {0, 1, 3, 4, 1000}) {
                std::vector<std::atomic<int>> hits(n);
                for (int rep = 0; rep < 3; ++rep) {
                    pool.parallel_for(n, [&](int64_t b, int64_t e) {
                        for (int64_t i = b; i < e; ++i)
                            hits[i]++;
                    });
                }
                for (auto& h : hits)
                    QCOMPARE(h.load(), 3);
            }
            QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                     pool.parallel_for(10, [](int64_t b, int64_t) {
                                         if (b > 0 || true) throw std::runtime_error("x");
                                     }));
            // Still usable after an exception.
            std::atomic<int64_t> total{0};
            pool.parallel_for(100, [&](int64_t b, int64_t e) { total += e - b; });
            QCOMPARE(total.load(), int64_t{100});
        }
    }

    // The hand-over between calls, back to back and after pauses in which the workers go to
    // sleep: every element is visited exactly once per call, and what a call's chunks wrote is
    // seen by the caller when parallel_for returns.
    void thread_pool_hand_over() {
        cpu::ThreadPool pool(4);
        std::vector<int64_t> values(4096, 0);  // plain ints: the pool must order the writes
        std::vector<int64_t> want(values.size(), 0);
        const auto pause = std::chrono::milliseconds(1);
        for (int call = 0; call < 3000; ++call) {
            if (call % 500 == 499) std::this_thread::sleep_for(pause);
            const int64_t n = 1 + (call * 7) % static_cast<int64_t>(values.size());
            pool.parallel_for(n, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i)
                    values[i] += call;
            });
            for (int64_t i = 0; i < n; ++i)
                want[i] += call;
            // The last chunk (a worker's) is seen complete by the caller at once.
            QCOMPARE(values[n - 1], want[n - 1]);
        }
        QCOMPARE(values, want);  // no chunk lost or run twice
        // A call after the workers have gone to sleep with an exception in a worker's chunk.
        std::this_thread::sleep_for(pause);
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, pool.parallel_for(8, [](int64_t b, int64_t) {
            if (b > 0) throw std::runtime_error("worker");
        }));
    }
};

QTEST_APPLESS_MAIN(TestCpuOps)
#include "test_cpu_ops.moc"
