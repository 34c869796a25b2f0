// Every CUDA decoder kernel against the CPU implementation (engine/cpu/ops_cpu.h) on random
// inputs, in bf16 and fp16, with odd sizes: head_dim 64 and 128 and 40, sequences crossing KV
// block boundaries, prefill and decode rows in one batch, 1 and 63 rows.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <QCoreApplication>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "cpu/ops_cpu.h"
#include "cpu/thread_pool_cpu.h"
#include "cuda/cuda_common.h"
#include "cuda/ops_cuda.h"
#include "mtdesk/runtime/sampling.h"

using namespace mtdesk;
using mtdesk::cuda::DeviceBuffer;

namespace {

template <typename T>
float f32(T v) {
    return static_cast<float>(v);
}

/// Random values already rounded to T, as fp32 (so CPU and GPU see the same inputs).
template <typename T>
std::vector<float> random_values(std::size_t n, std::mt19937& rng, float scale = 1.0f) {
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v)
        x = f32(T(d(rng)));
    return v;
}

template <typename T>
DeviceBuffer to_device(const std::vector<float>& v) {
    std::vector<T> h(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        h[i] = T(v[i]);
    DeviceBuffer d(std::max<std::size_t>(h.size(), 1) * sizeof(T));
    MTDESK_CUDA_CHECK(cudaMemcpy(d.get(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

DeviceBuffer ints_to_device(const std::vector<int32_t>& v) {
    DeviceBuffer d(std::max<std::size_t>(v.size(), 1) * sizeof(int32_t));
    MTDESK_CUDA_CHECK(
        cudaMemcpy(d.get(), v.data(), v.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
    return d;
}

template <typename T>
std::vector<float> from_device(const DeviceBuffer& d, std::size_t n) {
    std::vector<T> h(n);
    MTDESK_CUDA_CHECK(cudaDeviceSynchronize());
    MTDESK_CUDA_CHECK(cudaMemcpy(h.data(), d.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
    std::vector<float> out(n);
    for (std::size_t i = 0; i < n; ++i)
        out[i] = f32(h[i]);
    return out;
}

/// max |got - want| / max(|want|, floor)
double rel_error(const std::vector<float>& got, const std::vector<float>& want) {
    double err = 0, mag = 1e-6;
    for (std::size_t i = 0; i < want.size(); ++i) {
        err = std::max(err, std::abs(double(got[i]) - double(want[i])));
        mag = std::max(mag, std::abs(double(want[i])));
    }
    return err / mag;
}

// One 16-bit rounding is 2^-8 relative in bf16 and 2^-11 in fp16; kernels round a few times.
template <typename T>
double tolerance() {
    return std::is_same_v<T, __nv_bfloat16> ? 2.5e-2 : 4e-3;
}

}  // namespace

class TestKernels : public QObject {
    Q_OBJECT

  private:
    template <typename T>
    void check_rms_norm() {
        std::mt19937 rng(1);
        for (int rows : {1, 63}) {
            for (int dim : {64, 200, 4096}) {
                const auto x = random_values<T>(size_t(rows) * dim, rng, 2.0f);
                const auto delta = random_values<T>(x.size(), rng, 0.5f);
                const auto w = random_values<T>(dim, rng);
                // rms_norm
                std::vector<float> want(x.size());
                cpu::rms_norm(x.data(), w.data(), want.data(), rows, dim, 1e-5f);
                DeviceBuffer dx = to_device<T>(x), dw = to_device<T>(w), dout(x.size() * sizeof(T));
                cuda::rms_norm<T>(dx.as<T>(), dw.as<T>(), dout.as<T>(), rows, dim, 1e-5f, nullptr);
                const double e1 = rel_error(from_device<T>(dout, x.size()), want);
                QVERIFY2(e1 < tolerance<T>(), qPrintable(QString("rms_norm %1").arg(e1)));
                // add_rms_norm, out aliasing delta
                std::vector<float> residual = x, want2(x.size());
                cpu::add_rms_norm(residual.data(), delta.data(), w.data(), want2.data(), rows, dim,
                                  1e-5f);
                DeviceBuffer dres = to_device<T>(x), ddelta = to_device<T>(delta);
                cuda::add_rms_norm<T>(dres.as<T>(), ddelta.as<T>(), dw.as<T>(), ddelta.as<T>(),
                                      rows, dim, 1e-5f, nullptr);
                QVERIFY(rel_error(from_device<T>(ddelta, x.size()), want2) < tolerance<T>());
                QVERIFY(rel_error(from_device<T>(dres, x.size()), residual) < tolerance<T>());
            }
        }
    }

    template <typename T>
    void check_qkv_rope_cache(int head_dim, cuda::QkNorm norm) {
        std::mt19937 rng(2);
        const int tokens = 37, heads = 4, kvh = 2, width = (heads + 2 * kvh) * head_dim;
        const int half = head_dim / 2, block = 16, max_pos = 300;
        auto qkv = random_values<T>(size_t(tokens) * width, rng);
        const auto bias = random_values<T>(width, rng, 0.1f);
        const auto qn = random_values<T>(head_dim, rng), kn = random_values<T>(head_dim, rng);
        std::vector<int32_t> positions(tokens), slot_ids(tokens);
        for (int t = 0; t < tokens; ++t) {
            positions[t] = (t * 7) % max_pos;
            slot_ids[t] = t * 3 + 1;  // scattered slots in a cache of 8 blocks
        }
        ModelConfig cfg;
        cfg.head_dim = head_dim;
        cfg.rope_theta = 10000.0;
        const auto freqs = cpu::rope_frequencies(cfg);
        std::vector<float> cs(size_t(max_pos) * half), sn(cs.size());
        cpu::rope_cos_sin(freqs, 0, max_pos, cs.data(), sn.data());

        // CPU: bias, norm/rope per head, in fp32.
        std::vector<float> q(size_t(tokens) * heads * head_dim), k(size_t(tokens) * kvh * head_dim),
            v(k.size());
        for (int t = 0; t < tokens; ++t)
            for (int i = 0; i < width; ++i) {
                const float x = qkv[size_t(t) * width + i] + bias[i];
                if (i < heads * head_dim)
                    q[size_t(t) * heads * head_dim + i] = x;
                else if (i < (heads + kvh) * head_dim)
                    k[size_t(t) * kvh * head_dim + i - heads * head_dim] = x;
                else
                    v[size_t(t) * kvh * head_dim + i - (heads + kvh) * head_dim] = x;
            }
        for (int t = 0; t < tokens; ++t) {
            float* qt = q.data() + size_t(t) * heads * head_dim;
            float* kt = k.data() + size_t(t) * kvh * head_dim;
            const float* c = cs.data() + size_t(positions[t]) * half;
            const float* s = sn.data() + size_t(positions[t]) * half;
            if (norm == cuda::QkNorm::BeforeRope) {
                cpu::rms_norm(qt, qn.data(), qt, heads, head_dim, 1e-6f);
                cpu::rms_norm(kt, kn.data(), kt, kvh, head_dim, 1e-6f);
            }
            cpu::rope(qt, 1, heads, head_dim, c, s);
            cpu::rope(kt, 1, kvh, head_dim, c, s);
            if (norm == cuda::QkNorm::AfterRope) {
                cpu::rms_norm(qt, qn.data(), qt, heads, head_dim, 1e-6f);
                cpu::rms_norm(kt, kn.data(), kt, kvh, head_dim, 1e-6f);
            }
        }
        const std::size_t cache_elems = size_t(8) * block * kvh * head_dim;
        DeviceBuffer dqkv = to_device<T>(qkv), dbias = to_device<T>(bias), dqn = to_device<T>(qn),
                     dkn = to_device<T>(kn);
        DeviceBuffer dcos(cs.size() * 4), dsin(sn.size() * 4);
        MTDESK_CUDA_CHECK(cudaMemcpy(dcos.get(), cs.data(), cs.size() * 4, cudaMemcpyHostToDevice));
        MTDESK_CUDA_CHECK(cudaMemcpy(dsin.get(), sn.data(), sn.size() * 4, cudaMemcpyHostToDevice));
        DeviceBuffer dpos = ints_to_device(positions), dslots = ints_to_device(slot_ids);
        DeviceBuffer dk(cache_elems * sizeof(T)), dv(cache_elems * sizeof(T));
        cuda::qkv_rope_cache<T>(dqkv.as<T>(), dbias.as<T>(), dqn.as<T>(), dkn.as<T>(), norm, 1e-6f,
                                dcos.as<float>(), dsin.as<float>(), dpos.as<int32_t>(),
                                dslots.as<int32_t>(), dk.as<T>(), dv.as<T>(), tokens, heads, kvh,
                                head_dim, nullptr);
        const auto got_qkv = from_device<T>(dqkv, qkv.size());
        const auto got_k = from_device<T>(dk, cache_elems), got_v = from_device<T>(dv, cache_elems);
        std::vector<float> gq(q.size()), gk(k.size()), gv(v.size());
        for (int t = 0; t < tokens; ++t) {
            std::copy_n(got_qkv.begin() + size_t(t) * width, heads * head_dim,
                        gq.begin() + size_t(t) * heads * head_dim);
            std::copy_n(got_k.begin() + size_t(slot_ids[t]) * kvh * head_dim, kvh * head_dim,
                        gk.begin() + size_t(t) * kvh * head_dim);
            std::copy_n(got_v.begin() + size_t(slot_ids[t]) * kvh * head_dim, kvh * head_dim,
                        gv.begin() + size_t(t) * kvh * head_dim);
        }
        const double tol = 2 * tolerance<T>();
        QVERIFY2(rel_error(gq, q) < tol, qPrintable(QString::number(rel_error(gq, q))));
        QVERIFY2(rel_error(gk, k) < tol, qPrintable(QString::number(rel_error(gk, k))));
        QVERIFY(rel_error(gv, v) < tolerance<T>());
    }

    template <typename T>
    void check_attention(int head_dim) {
        std::mt19937 rng(3);
        const int heads = 8, kvh = 2, block = 16, max_blocks = 16;
        // Three sequences: lengths across block boundaries; the first two decode (1 new
        // token), the third prefills its last 21 positions.
        const std::vector<int> lengths = {1, 17, 100};
        const std::vector<int> fresh = {1, 1, 21};
        std::vector<int32_t> free_blocks(48);
        std::iota(free_blocks.begin(), free_blocks.end(), 0);
        std::shuffle(free_blocks.begin(), free_blocks.end(), rng);
        std::vector<int32_t> tables(lengths.size() * max_blocks, 0);
        const std::size_t cache_elems = size_t(48) * block * kvh * head_dim;
        std::vector<float> kc(cache_elems, 0.0f), vc(cache_elems, 0.0f);
        std::vector<int32_t> token_seq, token_pos;
        std::vector<std::vector<float>> seq_k, seq_v;
        int next = 0;
        for (std::size_t s = 0; s < lengths.size(); ++s) {
            const int nb = (lengths[s] + block - 1) / block;
            for (int b = 0; b < nb; ++b)
                tables[s * max_blocks + b] = free_blocks[next++];
            auto k = random_values<T>(size_t(lengths[s]) * kvh * head_dim, rng);
            auto v = random_values<T>(k.size(), rng);
            for (int p = 0; p < lengths[s]; ++p) {
                const size_t slot = size_t(tables[s * max_blocks + p / block]) * block + p % block;
                std::copy_n(k.begin() + size_t(p) * kvh * head_dim, kvh * head_dim,
                            kc.begin() + slot * kvh * head_dim);
                std::copy_n(v.begin() + size_t(p) * kvh * head_dim, kvh * head_dim,
                            vc.begin() + slot * kvh * head_dim);
            }
            seq_k.push_back(k);
            seq_v.push_back(v);
            for (int p = lengths[s] - fresh[s]; p < lengths[s]; ++p) {
                token_seq.push_back(static_cast<int32_t>(s));
                token_pos.push_back(p);
            }
        }
        const int tokens = static_cast<int>(token_seq.size());
        const auto q = random_values<T>(size_t(tokens) * heads * head_dim, rng);
        const float scale = 1.0f / std::sqrt(float(head_dim));
        // CPU reference per sequence, on its contiguous cache.
        cpu::ThreadPool pool(1);
        std::vector<float> want(q.size());
        int t0 = 0;
        for (std::size_t s = 0; s < lengths.size(); ++s) {
            cpu::attention(q.data() + size_t(t0) * heads * head_dim, seq_k[s].data(),
                           seq_v[s].data(), want.data() + size_t(t0) * heads * head_dim, fresh[s],
                           lengths[s] - fresh[s], heads, kvh, head_dim, scale, pool);
            t0 += fresh[s];
        }
        DeviceBuffer dq = to_device<T>(q), dk = to_device<T>(kc), dv = to_device<T>(vc);
        DeviceBuffer dt = ints_to_device(tables), ds = ints_to_device(token_seq),
                     dp = ints_to_device(token_pos), dout(q.size() * sizeof(T));
        cuda::paged_attention<T>(dq.as<T>(), int64_t(heads) * head_dim, dk.as<T>(), dv.as<T>(),
                                 dt.as<int32_t>(), max_blocks, ds.as<int32_t>(), dp.as<int32_t>(),
                                 dout.as<T>(), tokens, heads, kvh, head_dim, block, scale, nullptr);
        const double e = rel_error(from_device<T>(dout, q.size()), want);
        QVERIFY2(e < tolerance<T>(),
                 qPrintable(QString("attention d=%1: %2").arg(head_dim).arg(e)));
    }

    template <typename T>
    void check_swiglu_embedding_gather() {
        std::mt19937 rng(4);
        const int rows = 63, inter = 300;
        const auto gu = random_values<T>(size_t(rows) * 2 * inter, rng, 3.0f);
        std::vector<float> gate(size_t(rows) * inter), up(gate.size()), want(gate.size());
        for (int r = 0; r < rows; ++r)
            for (int i = 0; i < inter; ++i) {
                gate[size_t(r) * inter + i] = gu[size_t(r) * 2 * inter + i];
                up[size_t(r) * inter + i] = gu[size_t(r) * 2 * inter + inter + i];
            }
        cpu::swiglu(gate.data(), up.data(), want.data(), int64_t(want.size()));
        DeviceBuffer dgu = to_device<T>(gu), dout(want.size() * sizeof(T));
        cuda::swiglu<T>(dgu.as<T>(), dout.as<T>(), rows, inter, nullptr);
        QVERIFY(rel_error(from_device<T>(dout, want.size()), want) < tolerance<T>());

        const int vocab = 1000, hidden = 96;
        const auto table = random_values<T>(size_t(vocab) * hidden, rng);
        const std::vector<int32_t> ids = {0, 999, 5, 5, 123};
        std::vector<float> emb(ids.size() * hidden);
        cpu::embedding(table.data(), vocab, hidden, ids, emb.data());
        DeviceBuffer dtab = to_device<T>(table), dids = ints_to_device(ids),
                     demb(emb.size() * sizeof(T));
        cuda::embedding<T>(dtab.as<T>(), hidden, dids.as<int32_t>(), int(ids.size()), demb.as<T>(),
                           nullptr);
        QCOMPARE(from_device<T>(demb, emb.size()), emb);  // a copy: exact

        const std::vector<int32_t> rows_idx = {4, 0, 2};
        DeviceBuffer drows = ints_to_device(rows_idx), dg(rows_idx.size() * hidden * sizeof(T));
        cuda::gather_rows<T>(demb.as<T>(), drows.as<int32_t>(), dg.as<T>(), 3, hidden, nullptr);
        const auto g = from_device<T>(dg, rows_idx.size() * hidden);
        for (int r = 0; r < 3; ++r)
            for (int i = 0; i < hidden; ++i)
                QCOMPARE(g[size_t(r) * hidden + i], emb[size_t(rows_idx[r]) * hidden + i]);
    }

    template <typename T>
    void check_sampling() {
        std::mt19937 rng(5);
        const int rows = 63, vocab = 5003, stride = 5120;
        const auto logits = random_values<T>(size_t(rows) * stride, rng, 3.0f);
        std::vector<std::vector<int32_t>> hist(rows);
        std::vector<int32_t> offsets = {0}, ids;
        std::uniform_int_distribution<int> pick(0, vocab - 1);
        for (int r = 0; r < rows; ++r) {
            for (int i = 0; i < 40; ++i)
                hist[r].push_back(pick(rng));
            ids.insert(ids.end(), hist[r].begin(), hist[r].end());
            offsets.push_back(static_cast<int32_t>(ids.size()));
        }
        DeviceBuffer dlog = to_device<T>(logits), doff = ints_to_device(offsets),
                     dids = ints_to_device(ids), dscratch(size_t(rows) * vocab * 4), dout(rows * 4),
                     dparams(rows * sizeof(cuda::SampleParams));
        auto run = [&](const std::vector<cuda::SampleParams>& p) {
            MTDESK_CUDA_CHECK(cudaMemcpy(dparams.get(), p.data(), p.size() * sizeof(p[0]),
                                         cudaMemcpyHostToDevice));
            cuda::sample_tokens<T>(dlog.as<T>(), stride, vocab, rows,
                                   dparams.as<cuda::SampleParams>(), doff.as<int32_t>(),
                                   dids.as<int32_t>(), dscratch.as<float>(), dout.as<int32_t>(),
                                   nullptr);
            std::vector<int32_t> out(rows);
            MTDESK_CUDA_CHECK(cudaDeviceSynchronize());
            MTDESK_CUDA_CHECK(cudaMemcpy(out.data(), dout.get(), rows * 4, cudaMemcpyDeviceToHost));
            return out;
        };
        // Greedy with a repetition penalty = the CPU Sampler's greedy choice.
        std::vector<cuda::SampleParams> p(rows);
        for (auto& x : p) {
            x.temperature = 0;
            x.repetition_penalty = 1.3f;
        }
        const auto greedy = run(p);
        SamplingParams sp = SamplingParams::greedy_decoding();
        sp.repetition_penalty = 1.3f;
        for (int r = 0; r < rows; ++r) {
            std::vector<float> row(logits.begin() + size_t(r) * stride,
                                   logits.begin() + size_t(r) * stride + vocab);
            Sampler s(sp);
            QCOMPARE(greedy[r], s.sample(row, hist[r]));
        }
        // top_k 1 and a tiny top_p are greedy too; top_k 5 stays in the CPU's top-5 set.
        for (auto& x : p) {
            x.temperature = 0.7f;
            x.top_k = 1;
        }
        QCOMPARE(run(p), greedy);
        for (auto& x : p) {
            x.top_k = 0;
            x.top_p = 1e-6f;
        }
        QCOMPARE(run(p), greedy);
        int differs = 0;
        for (int seed = 0; seed < 8; ++seed) {
            for (auto& x : p) {
                x.top_k = 5;
                x.top_p = 1.0f;
                x.seed = seed;
                x.step = 3;
            }
            const auto sampled = run(p);
            for (int r = 0; r < rows; ++r) {
                std::vector<float> row(logits.begin() + size_t(r) * stride,
                                       logits.begin() + size_t(r) * stride + vocab);
                const std::vector<float> original = row;  // a repeated id is penalised once
                for (int id : hist[r])
                    row[id] = original[id] < 0 ? original[id] * 1.3f : original[id] / 1.3f;
                for (float& v : row)
                    v *= 1.0f / 0.7f;  // the kernel's temperature step
                // top-k keeps every logit >= the k-th largest (ties included, as transformers'
                // TopKLogitsWarper): 16-bit logits tie often.
                std::vector<float> sorted = row;
                std::nth_element(sorted.begin(), sorted.begin() + 4, sorted.end(),
                                 std::greater<float>());
                QVERIFY(row[sampled[r]] >= sorted[4]);
                differs += sampled[r] != greedy[r];
            }
        }
        QVERIFY2(differs > 0, "sampling never left the argmax");
    }

  private slots:
    void rmsNormBf16() { check_rms_norm<__nv_bfloat16>(); }
    void rmsNormFp16() { check_rms_norm<__half>(); }
    void ropeHunyuanBf16() { check_qkv_rope_cache<__nv_bfloat16>(128, cuda::QkNorm::AfterRope); }
    void ropeQwen3Fp16() { check_qkv_rope_cache<__half>(64, cuda::QkNorm::BeforeRope); }
    void ropePlainOddDim() { check_qkv_rope_cache<__nv_bfloat16>(40, cuda::QkNorm::None); }
    void attentionBf16() {
        check_attention<__nv_bfloat16>(128);
        check_attention<__nv_bfloat16>(64);
    }
    void attentionFp16() {
        check_attention<__half>(128);
        check_attention<__half>(40);
    }
    void swigluEmbeddingGather() {
        check_swiglu_embedding_gather<__nv_bfloat16>();
        check_swiglu_embedding_gather<__half>();
    }
    void sampling() {
        check_sampling<__nv_bfloat16>();
        check_sampling<__half>();
    }
};

int main(int argc, char** argv) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::puts("no CUDA device: GPU tests skipped");
        return 77;
    }
    QCoreApplication app(argc, argv);
    TestKernels t;
    return QTest::qExec(&t, argc, argv);
}
#include "gpu_test_kernels.moc"
