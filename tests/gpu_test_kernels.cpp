// Every CUDA decoder kernel against the CPU implementation (engine/cpu/ops_cpu.h) on random
// inputs, in bf16 and fp16, with odd sizes: head_dim 64 and 128 and 40, sequences crossing KV
// block boundaries, prefill and decode rows in one batch, 1 and 63 rows; the KV cache in 16-bit
// and int8, attention in one pass and split into partitions (contexts across the partition
// boundaries, grouped-query, multi-query and multi-head layouts).

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <QCoreApplication>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "cpu/ops_cpu.h"
#include "cpu/thread_pool_cpu.h"
#include "cuda/cuda_common.h"
#include "cuda/ops_cuda.h"
#include "mtdesk/quant/tiers.h"
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

template <typename V>
DeviceBuffer bytes_to_device(const std::vector<V>& v) {
    DeviceBuffer d(std::max<std::size_t>(v.size() * sizeof(V), 4));
    MTDESK_CUDA_CHECK(cudaMemcpy(d.get(), v.data(), v.size() * sizeof(V), cudaMemcpyHostToDevice));
    return d;
}

template <typename V>
std::vector<V> bytes_from_device(const DeviceBuffer& d, std::size_t n) {
    std::vector<V> h(n);
    MTDESK_CUDA_CHECK(cudaDeviceSynchronize());
    MTDESK_CUDA_CHECK(cudaMemcpy(h.data(), d.get(), n * sizeof(V), cudaMemcpyDeviceToHost));
    return h;
}

/// One attention step over a paged KV cache: sequences with random keys and values in shuffled
/// blocks, each attended by its last `fresh` positions (1: a decode token; more: a prefill
/// chunk), with the cache images for a 16-bit and an int8 cache.
struct PagedStep {
    int heads = 0, kv_heads = 0, head_dim = 0, block = 16, max_blocks = 0;
    std::vector<int> lengths, fresh;
    std::vector<int32_t> tables, token_seq, token_pos;
    // Per sequence [length, kv_heads, head_dim]: the keys/values as a 16-bit cache holds them
    // (already rounded to T), and as an int8 cache gives them back (dequantised).
    std::vector<std::vector<float>> k, v, k_int8, v_int8;
    std::vector<float> q;                 // [tokens, heads, head_dim]
    std::vector<float> k16, v16;          // 16-bit cache [slots, kv_heads, head_dim]
    std::vector<int8_t> k8, v8;           // int8 cache [slots, kv_heads, head_dim]
    std::vector<float> k_scale, v_scale;  // [slots, kv_heads]
    std::vector<int32_t> spare_blocks;    // blocks no sequence owns (zeros)

    int tokens() const { return static_cast<int>(token_seq.size()); }
    int max_context() const { return *std::max_element(lengths.begin(), lengths.end()); }
};

template <typename T>
PagedStep make_step(int heads, int kv_heads, int head_dim, const std::vector<int>& lengths,
                    const std::vector<int>& fresh, std::mt19937& rng, int block = 16) {
    PagedStep s;
    s.block = block;
    s.heads = heads;
    s.kv_heads = kv_heads;
    s.head_dim = head_dim;
    s.lengths = lengths;
    s.fresh = fresh;
    const int w = kv_heads * head_dim;  // floats per position
    int num_blocks = 0;
    for (int l : lengths) {
        s.max_blocks = std::max(s.max_blocks, (l + s.block - 1) / s.block);
        num_blocks += (l + s.block - 1) / s.block;
    }
    num_blocks += 3;  // spare blocks nobody owns
    std::vector<int32_t> free_blocks(num_blocks);
    std::iota(free_blocks.begin(), free_blocks.end(), 0);
    std::shuffle(free_blocks.begin(), free_blocks.end(), rng);
    const std::size_t num_slots = std::size_t(num_blocks) * s.block;
    s.tables.assign(lengths.size() * s.max_blocks, 0);
    s.k16.assign(num_slots * w, 0.0f);
    s.v16.assign(num_slots * w, 0.0f);
    s.k8.assign(num_slots * w, 0);
    s.v8.assign(num_slots * w, 0);
    s.k_scale.assign(num_slots * kv_heads, 0.0f);
    s.v_scale.assign(num_slots * kv_heads, 0.0f);
    int next = 0;
    for (std::size_t q = 0; q < lengths.size(); ++q) {
        const int len = lengths[q];
        for (int b = 0; b < (len + s.block - 1) / s.block; ++b)
            s.tables[q * s.max_blocks + b] = free_blocks[next++];
        // Each head vector scaled by its own power of two (exact in T): magnitudes that differ
        // from position to position, as in a real cache, so per-vector int8 scales matter.
        std::vector<float> k = random_values<T>(std::size_t(len) * w, rng);
        std::vector<float> v = random_values<T>(k.size(), rng, 2.0f);
        std::uniform_int_distribution<int> k_exp(-2, 2), v_exp(-3, 3);
        for (std::size_t r = 0; r < std::size_t(len) * kv_heads; ++r) {
            const int ek = k_exp(rng), ev = v_exp(rng);
            for (int i = 0; i < head_dim; ++i) {
                k[r * head_dim + i] = std::ldexp(k[r * head_dim + i], ek);
                v[r * head_dim + i] = std::ldexp(v[r * head_dim + i], ev);
            }
        }
        std::vector<int8_t> kq(k.size()), vq(v.size());
        std::vector<float> ks(std::size_t(len) * kv_heads), vs(ks.size());
        cpu::quantize_kv_int8(k.data(), int64_t(len) * kv_heads, head_dim, kq.data(), ks.data());
        cpu::quantize_kv_int8(v.data(), int64_t(len) * kv_heads, head_dim, vq.data(), vs.data());
        std::vector<float> kd(k.size()), vd(v.size());
        cpu::dequantize_kv_int8(kq.data(), ks.data(), int64_t(len) * kv_heads, head_dim, kd.data());
        cpu::dequantize_kv_int8(vq.data(), vs.data(), int64_t(len) * kv_heads, head_dim, vd.data());
        for (int p = 0; p < len; ++p) {
            const std::size_t slot =
                std::size_t(s.tables[q * s.max_blocks + p / s.block]) * s.block + p % s.block;
            std::copy_n(k.begin() + std::size_t(p) * w, w, s.k16.begin() + slot * w);
            std::copy_n(v.begin() + std::size_t(p) * w, w, s.v16.begin() + slot * w);
            std::copy_n(kq.begin() + std::size_t(p) * w, w, s.k8.begin() + slot * w);
            std::copy_n(vq.begin() + std::size_t(p) * w, w, s.v8.begin() + slot * w);
            std::copy_n(ks.begin() + std::size_t(p) * kv_heads, kv_heads,
                        s.k_scale.begin() + slot * kv_heads);
            std::copy_n(vs.begin() + std::size_t(p) * kv_heads, kv_heads,
                        s.v_scale.begin() + slot * kv_heads);
        }
        s.k.push_back(std::move(k));
        s.v.push_back(std::move(v));
        s.k_int8.push_back(std::move(kd));
        s.v_int8.push_back(std::move(vd));
        for (int p = len - fresh[q]; p < len; ++p) {
            s.token_seq.push_back(static_cast<int32_t>(q));
            s.token_pos.push_back(p);
        }
    }
    s.spare_blocks.assign(free_blocks.begin() + next, free_blocks.end());
    s.q = random_values<T>(std::size_t(s.tokens()) * heads * head_dim, rng, 1.5f);
    return s;
}

/// The same step with a decode token of a new one-position sequence (zeros, in a spare block)
/// in front: every other token moves down one row, so prefill runs fall differently into the
/// tensor-core kernel's blocks of 64 rows.
PagedStep with_leading_token(const PagedStep& s) {
    PagedStep r = s;
    const std::size_t w = std::size_t(s.kv_heads) * s.head_dim;
    r.lengths.insert(r.lengths.begin(), 1);
    r.fresh.insert(r.fresh.begin(), 1);
    std::vector<int32_t> table(s.max_blocks, 0);
    table[0] = s.spare_blocks.at(0);
    r.tables.insert(r.tables.begin(), table.begin(), table.end());
    r.token_seq.assign(1, 0);
    for (int32_t q : s.token_seq)
        r.token_seq.push_back(q + 1);
    r.token_pos.insert(r.token_pos.begin(), 0);
    for (auto* kv : {&r.k, &r.v, &r.k_int8, &r.v_int8})
        kv->insert(kv->begin(), std::vector<float>(w, 0.0f));
    r.q.insert(r.q.begin(), std::size_t(s.heads) * s.head_dim, 0.0f);
    return r;
}

/// The host's in_run(): token t and a neighbour are one sequence at adjacent positions (a
/// prefill run, the tensor-core kernel's work).
bool in_run(const PagedStep& s, int t) {
    auto linked = [&](int a, int b) {
        return a >= 0 && b < s.tokens() && s.token_seq[a] == s.token_seq[b] &&
               s.token_pos[b] == s.token_pos[a] + 1;
    };
    return linked(t - 1, t) || linked(t, t + 1);
}

/// The CPU attention of every token of the step, on the keys/values a 16-bit cache holds, or
/// (int8) on the dequantised values of the int8 cache.
std::vector<float> reference_attention(const PagedStep& s, bool int8, cpu::ThreadPool& pool) {
    const int hd = s.heads * s.head_dim;
    std::vector<float> out(s.q.size());
    const float scale = 1.0f / std::sqrt(float(s.head_dim));
    int t0 = 0;
    for (std::size_t q = 0; q < s.lengths.size(); ++q) {
        cpu::attention(s.q.data() + std::size_t(t0) * hd, (int8 ? s.k_int8 : s.k)[q].data(),
                       (int8 ? s.v_int8 : s.v)[q].data(), out.data() + std::size_t(t0) * hd,
                       s.fresh[q], s.lengths[q] - s.fresh[q], s.heads, s.kv_heads, s.head_dim,
                       scale, pool);
        t0 += s.fresh[q];
    }
    return out;
}

/// One run of check_rope_attention's step: its qkv rows, cache and output on the device.
struct RopeAttentionRun {
    DeviceBuffer qkv, k, v, ks, vs, out;
    cuda::KvCacheLayer cache;
};

/// How a test runs cuda::paged_attention.
struct AttentionRun {
    bool int8 = false;
    cuda::AttentionSplit split = cuda::AttentionSplit::Auto;
    cuda::AttentionPrefill prefill = cuda::AttentionPrefill::Off;
    int workspace_rows = 64;       // 0: no workspace
    int workspace_partitions = 0;  // 0: enough for the step's longest context
    int max_context = 0;           // 0: the step's true maximum
    cuda::AttentionGrouping grouping = cuda::AttentionGrouping::Auto;
};

template <typename T>
std::vector<float> run_attention(const PagedStep& s, const AttentionRun& r) {
    DeviceBuffer dq = to_device<T>(s.q), dt = ints_to_device(s.tables),
                 ds = ints_to_device(s.token_seq), dp = ints_to_device(s.token_pos),
                 dout(s.q.size() * sizeof(T));
    DeviceBuffer dk, dv, dks, dvs;
    cuda::KvCacheLayer kv;
    if (r.int8) {
        dk = bytes_to_device(s.k8);
        dv = bytes_to_device(s.v8);
        dks = bytes_to_device(s.k_scale);
        dvs = bytes_to_device(s.v_scale);
        kv.storage = cuda::KvCacheLayer::Storage::Int8;
        kv.k_scale = dks.as<float>();
        kv.v_scale = dvs.as<float>();
    } else {
        dk = to_device<T>(s.k16);
        dv = to_device<T>(s.v16);
    }
    kv.k = dk.get();
    kv.v = dv.get();
    const int max_context = r.max_context > 0 ? r.max_context : s.max_context();
    cuda::SplitKvWorkspace ws;
    DeviceBuffer dws;
    if (r.workspace_rows > 0) {
        ws.rows = r.workspace_rows;
        ws.max_partitions = r.workspace_partitions > 0
                                ? r.workspace_partitions
                                : (s.max_context() + kSplitKvPartition - 1) / kSplitKvPartition;
        ws.capacity =
            cuda::split_kv_workspace_floats(ws.rows, s.heads, s.head_dim, ws.max_partitions);
        dws.allocate(ws.capacity * sizeof(float));
        // NaN everywhere: a partial the combine reads without the partition kernel having
        // written it shows up in the result.
        MTDESK_CUDA_CHECK(cudaMemset(dws.get(), 0xff, dws.bytes()));
        ws.data = dws.as<float>();
    }
    MTDESK_CUDA_CHECK(cudaMemset(dout.get(), 0xff, dout.bytes()));
    cuda::paged_attention<T>(dq.as<T>(), int64_t(s.heads) * s.head_dim, kv, dt.as<int32_t>(),
                             s.max_blocks, ds.as<int32_t>(), dp.as<int32_t>(), dout.as<T>(),
                             s.tokens(), s.heads, s.kv_heads, s.head_dim, s.block,
                             1.0f / std::sqrt(float(s.head_dim)), max_context, ws, nullptr, r.split,
                             r.prefill, r.grouping);
    return from_device<T>(dout, s.q.size());
}

/// rel_error over the rows of the tokens whose context is (or is not) longer than one
/// partition; 0 when there are none.
double rel_error_rows(const PagedStep& s, const std::vector<float>& got,
                      const std::vector<float>& want, bool split_rows) {
    std::vector<float> g, w;
    const std::size_t hd = std::size_t(s.heads) * s.head_dim;
    for (int t = 0; t < s.tokens(); ++t)
        if ((s.token_pos[t] + 1 > kSplitKvPartition) == split_rows) {
            g.insert(g.end(), got.begin() + t * hd, got.begin() + (t + 1) * hd);
            w.insert(w.end(), want.begin() + t * hd, want.begin() + (t + 1) * hd);
        }
    return w.empty() ? 0.0 : rel_error(g, w);
}

/// True when the rows of the tokens `which` picks are bit-identical in a and b.
template <typename Pick>
bool same_rows(const PagedStep& s, const std::vector<float>& a, const std::vector<float>& b,
               Pick which) {
    const std::size_t hd = std::size_t(s.heads) * s.head_dim;
    for (int t = 0; t < s.tokens(); ++t)
        if (which(t) && std::memcmp(&a[t * hd], &b[t * hd], hd * sizeof(float)) != 0) return false;
    return true;
}

/// True when the rows of tokens with contexts of one partition are bit-identical.
bool same_short_rows(const PagedStep& s, const std::vector<float>& a, const std::vector<float>& b) {
    return same_rows(s, a, b, [&](int t) { return s.token_pos[t] + 1 <= kSplitKvPartition; });
}

/// rel_error over the rows of the tokens `which` picks (0 when it picks none).
template <typename Pick>
double rel_error_picked(const PagedStep& s, const std::vector<float>& got,
                        const std::vector<float>& want, Pick which) {
    std::vector<float> g, w;
    const std::size_t hd = std::size_t(s.heads) * s.head_dim;
    for (int t = 0; t < s.tokens(); ++t)
        if (which(t)) {
            g.insert(g.end(), got.begin() + t * hd, got.begin() + (t + 1) * hd);
            w.insert(w.end(), want.begin() + t * hd, want.begin() + (t + 1) * hd);
        }
    return w.empty() ? 0.0 : rel_error(g, w);
}

bool all_finite(const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

// Contexts across KV block (16) and partition (512) boundaries; the decode rows of a batch
// beyond those take kBatchContexts in turn; the longest context of the prefill step; the
// vocabulary and rows of the sampling check. Built on the host emulation (test_kernels_emulated),
// where every CUDA thread is a fiber, the same boundaries in smaller shapes: two and three
// partitions instead of up to nine, short contexts for the rest of a batch, a fifth of the
// vocabulary and 9 rows instead of 63.
#if defined(MTDESK_CUDA_HOST_EMULATION)
constexpr bool kHostEmulation = true;
const std::vector<int> kContexts = {1, 15, 16, 17, 511, 513, 1030};
const std::vector<int> kBatchContexts = {1, 15, 16, 17};
constexpr int kPrefillLongest = 1030;
constexpr int kSamplingVocab = 1003;
constexpr int kSamplingVocabSlices = kSampleSlice + 1003;
constexpr int kSamplingRows = 9;
#else
constexpr bool kHostEmulation = false;
const std::vector<int> kContexts = {1, 15, 16, 17, 511, 512, 513, 2047, 4100};
const std::vector<int> kBatchContexts = kContexts;
constexpr int kPrefillLongest = 4100;
constexpr int kSamplingVocab = 5003;
constexpr int kSamplingVocabSlices = 2 * kSampleSlice + 3627;
constexpr int kSamplingRows = 63;
#endif

}  // namespace

class TestKernels : public QObject {
    Q_OBJECT

  private:
    template <typename T>
    void check_rms_norm() {
        std::mt19937 rng(1);
        // Rows of whole 16-byte chunks up to 8192 take the register-resident kernel (one, two,
        // three or four chunks a thread); 130 and 9000 the scalar one.
        for (int rows : {1, 63}) {
            for (int dim : {64, 130, 200, 2048, 4096, 6144, 8192, 9000}) {
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

    // `tokens`: 37 runs the decode shape (a warp per block), 131 the prefill shape (four warps
    // a block, the last one partly empty).
    template <typename T>
    void check_qkv_rope_cache(int head_dim, cuda::QkNorm norm, int tokens) {
        std::mt19937 rng(2);
        const int heads = 4, kvh = 2, width = (heads + 2 * kvh) * head_dim;
        const int half = head_dim / 2, block = 16, max_pos = 300;
        auto qkv = random_values<T>(size_t(tokens) * width, rng);
        const auto bias = random_values<T>(width, rng, 0.1f);
        const auto qn = random_values<T>(head_dim, rng), kn = random_values<T>(head_dim, rng);
        std::vector<int32_t> positions(tokens), slot_ids(tokens);
        for (int t = 0; t < tokens; ++t) {
            positions[t] = (t * 7) % max_pos;
            slot_ids[t] = t * 3 + 1;
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
        // Scattered slots (t * 3 + 1) in a cache of just enough blocks.
        const std::size_t cache_elems = size_t(3 * tokens / block + 1) * block * kvh * head_dim;
        DeviceBuffer dqkv = to_device<T>(qkv), dbias = to_device<T>(bias), dqn = to_device<T>(qn),
                     dkn = to_device<T>(kn);
        DeviceBuffer dcos(cs.size() * 4), dsin(sn.size() * 4);
        MTDESK_CUDA_CHECK(cudaMemcpy(dcos.get(), cs.data(), cs.size() * 4, cudaMemcpyHostToDevice));
        MTDESK_CUDA_CHECK(cudaMemcpy(dsin.get(), sn.data(), sn.size() * 4, cudaMemcpyHostToDevice));
        DeviceBuffer dpos = ints_to_device(positions), dslots = ints_to_device(slot_ids);
        DeviceBuffer dk(cache_elems * sizeof(T)), dv(cache_elems * sizeof(T));
        cuda::KvCacheLayer cache;
        cache.k = dk.get();
        cache.v = dv.get();
        cuda::qkv_rope_cache<T>(dqkv.as<T>(), dbias.as<T>(), dqn.as<T>(), dkn.as<T>(), norm, 1e-6f,
                                dcos.as<float>(), dsin.as<float>(), dpos.as<int32_t>(),
                                dslots.as<int32_t>(), cache, tokens, heads, kvh, head_dim, nullptr);
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

        // The same step into an int8 cache: Q as before, and every written K/V head vector is
        // exactly cpu::quantize_kv_int8 of what the 16-bit cache got (same bits, same scale).
        DeviceBuffer dqkv8 = to_device<T>(qkv), dk8(cache_elems), dv8(cache_elems),
                     dks(cache_elems / head_dim * 4), dvs(cache_elems / head_dim * 4);
        cuda::KvCacheLayer cache8;
        cache8.storage = cuda::KvCacheLayer::Storage::Int8;
        cache8.k = dk8.get();
        cache8.v = dv8.get();
        cache8.k_scale = dks.as<float>();
        cache8.v_scale = dvs.as<float>();
        cuda::qkv_rope_cache<T>(dqkv8.as<T>(), dbias.as<T>(), dqn.as<T>(), dkn.as<T>(), norm, 1e-6f,
                                dcos.as<float>(), dsin.as<float>(), dpos.as<int32_t>(),
                                dslots.as<int32_t>(), cache8, tokens, heads, kvh, head_dim,
                                nullptr);
        const auto got_qkv8 = from_device<T>(dqkv8, qkv.size());
        for (int t = 0; t < tokens; ++t)
            for (int i = 0; i < heads * head_dim; ++i)
                QCOMPARE(got_qkv8[size_t(t) * width + i], got_qkv[size_t(t) * width + i]);
        const auto k8 = bytes_from_device<int8_t>(dk8, cache_elems);
        const auto v8 = bytes_from_device<int8_t>(dv8, cache_elems);
        const auto ks = bytes_from_device<float>(dks, cache_elems / head_dim);
        const auto vs = bytes_from_device<float>(dvs, cache_elems / head_dim);
        std::vector<int8_t> want8(size_t(kvh) * head_dim);
        std::vector<float> want_scale(kvh);
        for (int t = 0; t < tokens; ++t) {
            const std::size_t row = size_t(slot_ids[t]) * kvh;  // first head vector of the slot
            for (int which = 0; which < 2; ++which) {
                const auto& cache16 = which == 0 ? got_k : got_v;
                const auto& got8 = which == 0 ? k8 : v8;
                const auto& got_scale = which == 0 ? ks : vs;
                cpu::quantize_kv_int8(cache16.data() + row * head_dim, kvh, head_dim, want8.data(),
                                      want_scale.data());
                QVERIFY(std::equal(want8.begin(), want8.end(), got8.begin() + row * head_dim));
                for (int g = 0; g < kvh; ++g) {
                    QCOMPARE(got_scale[row + g], want_scale[g]);
                    QVERIFY(want_scale[g] > 0.0f);
                }
            }
        }
    }

    // rope_paged_attention against qkv_rope_cache then paged_attention: the attention output
    // and every byte of the cache the same bits. Where the launch is staged (AttentionGrouping:
    // 4 · tokens · heads · partitions <= multiprocessors) the input step runs inside the
    // attention kernel and leaves qkv as it was, which tells the paths apart; elsewhere the two
    // kernels run and qkv's queries are rewritten. Steps of one decode token at contexts 1, 17,
    // 100 and 600 (two partitions), two tokens, and five.
    template <typename T>
    void check_rope_attention(int head_dim, int heads, int kv_heads, cuda::QkNorm norm, bool int8,
                              bool bias) {
        std::mt19937 rng(head_dim * 100 + heads * 10 + kv_heads + int8);
        const int width = (heads + 2 * kv_heads) * head_dim, half = head_dim / 2;
        const int block = 16, max_blocks = 48, seqs = 5, max_pos = max_blocks * block;
        const std::size_t slots_total = std::size_t(seqs) * max_blocks * block;
        const std::size_t cache_elems = slots_total * kv_heads * head_dim;
        std::vector<int32_t> tables(std::size_t(seqs) * max_blocks);
        std::iota(tables.begin(), tables.end(), 0);
        std::shuffle(tables.begin(), tables.end(), rng);
        ModelConfig cfg;
        cfg.head_dim = head_dim;
        cfg.rope_theta = 10000.0;
        std::vector<float> cs(std::size_t(max_pos) * half), sn(cs.size());
        cpu::rope_cos_sin(cpu::rope_frequencies(cfg), 0, max_pos, cs.data(), sn.data());
        DeviceBuffer dcos(cs.size() * 4), dsin(sn.size() * 4);
        MTDESK_CUDA_CHECK(cudaMemcpy(dcos.get(), cs.data(), cs.size() * 4, cudaMemcpyHostToDevice));
        MTDESK_CUDA_CHECK(cudaMemcpy(dsin.get(), sn.data(), sn.size() * 4, cudaMemcpyHostToDevice));
        DeviceBuffer dbias = to_device<T>(random_values<T>(width, rng, 0.1f));
        DeviceBuffer dqn = to_device<T>(random_values<T>(head_dim, rng));
        DeviceBuffer dkn = to_device<T>(random_values<T>(head_dim, rng));
        const T* bias_ptr = bias ? dbias.as<T>() : nullptr;
        // The earlier positions' keys and values (what the cache holds before the step).
        const std::vector<float> k16 = random_values<T>(cache_elems, rng);
        const std::vector<float> v16 = random_values<T>(cache_elems, rng);
        std::vector<int8_t> k8(cache_elems), v8(cache_elems);
        for (std::size_t i = 0; i < cache_elems; ++i) {
            k8[i] = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
            v8[i] = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
        }
        std::vector<float> k_scale(slots_total * kv_heads), v_scale(k_scale.size());
        for (std::size_t i = 0; i < k_scale.size(); ++i) {
            k_scale[i] = 0.001f + 0.02f * static_cast<float>(rng() % 100) / 100.0f;
            v_scale[i] = 0.001f + 0.02f * static_cast<float>(rng() % 100) / 100.0f;
        }
        int sms = 0;
        QCOMPARE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
        const float scale = 1.0f / std::sqrt(float(head_dim));
        int staged_steps = 0;
        for (const std::vector<int>& contexts :
             std::vector<std::vector<int>>{{1}, {17}, {100}, {600}, {40, 300}, {9, 1, 33, 70, 2}}) {
            const int tokens = static_cast<int>(contexts.size());
            std::vector<int32_t> token_seq(tokens), token_pos(tokens), token_slots(tokens);
            int max_context = 0;
            for (int t = 0; t < tokens; ++t) {
                token_seq[t] = t;
                token_pos[t] = contexts[t] - 1;
                token_slots[t] =
                    tables[std::size_t(t) * max_blocks + token_pos[t] / block] * block +
                    token_pos[t] % block;
                max_context = std::max(max_context, contexts[t]);
            }
            const std::vector<float> qkv = random_values<T>(std::size_t(tokens) * width, rng);
            DeviceBuffer dt = ints_to_device(tables), ds = ints_to_device(token_seq),
                         dp = ints_to_device(token_pos), dsl = ints_to_device(token_slots);
            cuda::SplitKvWorkspace ws;
            ws.rows = 64;
            ws.max_partitions = (max_context + kSplitKvPartition - 1) / kSplitKvPartition;
            ws.capacity =
                cuda::split_kv_workspace_floats(ws.rows, heads, head_dim, ws.max_partitions);
            DeviceBuffer dws(ws.capacity * sizeof(float));
            ws.data = dws.as<float>();
            auto setup = [&] {
                RopeAttentionRun r;
                r.qkv = to_device<T>(qkv);
                r.out.allocate(std::size_t(tokens) * heads * head_dim * sizeof(T));
                if (int8) {
                    r.k = bytes_to_device(k8);
                    r.v = bytes_to_device(v8);
                    r.ks = bytes_to_device(k_scale);
                    r.vs = bytes_to_device(v_scale);
                    r.cache.storage = cuda::KvCacheLayer::Storage::Int8;
                    r.cache.k_scale = r.ks.as<float>();
                    r.cache.v_scale = r.vs.as<float>();
                } else {
                    r.k = to_device<T>(k16);
                    r.v = to_device<T>(v16);
                }
                r.cache.k = r.k.get();
                r.cache.v = r.v.get();
                return r;
            };
            RopeAttentionRun a = setup(), b = setup();
            cuda::qkv_rope_cache<T>(a.qkv.as<T>(), bias_ptr, dqn.as<T>(), dkn.as<T>(), norm, 1e-6f,
                                    dcos.as<float>(), dsin.as<float>(), dp.as<int32_t>(),
                                    dsl.as<int32_t>(), a.cache, tokens, heads, kv_heads, head_dim,
                                    nullptr);
            cuda::paged_attention<T>(a.qkv.as<T>(), width, a.cache, dt.as<int32_t>(), max_blocks,
                                     ds.as<int32_t>(), dp.as<int32_t>(), a.out.as<T>(), tokens,
                                     heads, kv_heads, head_dim, block, scale, max_context, ws,
                                     nullptr);
            cuda::rope_paged_attention<T>(
                b.qkv.as<T>(), bias_ptr, dqn.as<T>(), dkn.as<T>(), norm, 1e-6f, dcos.as<float>(),
                dsin.as<float>(), dsl.as<int32_t>(), b.cache, dt.as<int32_t>(), max_blocks,
                ds.as<int32_t>(), dp.as<int32_t>(), b.out.as<T>(), tokens, heads, kv_heads,
                head_dim, block, scale, max_context, ws, nullptr);
            const QString what = QString("d%1 %2/%3 %4%5%6, %7 tokens, longest context %8")
                                     .arg(head_dim)
                                     .arg(heads)
                                     .arg(kv_heads)
                                     .arg(int8 ? "int8 " : "")
                                     .arg(std::is_same_v<T, __half> ? "fp16" : "bf16")
                                     .arg(bias ? " bias" : "")
                                     .arg(tokens)
                                     .arg(max_context);
            const std::size_t out_n = std::size_t(tokens) * heads * head_dim;
            QVERIFY2(bytes_from_device<uint16_t>(a.out, out_n) ==
                         bytes_from_device<uint16_t>(b.out, out_n),
                     qPrintable(what + ": the outputs differ"));
            const std::size_t cache_bytes = cache_elems * (int8 ? 1 : sizeof(T));
            QVERIFY2(bytes_from_device<uint8_t>(a.k, cache_bytes) ==
                             bytes_from_device<uint8_t>(b.k, cache_bytes) &&
                         bytes_from_device<uint8_t>(a.v, cache_bytes) ==
                             bytes_from_device<uint8_t>(b.v, cache_bytes),
                     qPrintable(what + ": the caches differ"));
            if (int8)
                QVERIFY2(bytes_from_device<float>(a.ks, k_scale.size()) ==
                                 bytes_from_device<float>(b.ks, k_scale.size()) &&
                             bytes_from_device<float>(a.vs, v_scale.size()) ==
                                 bytes_from_device<float>(b.vs, v_scale.size()),
                         qPrintable(what + ": the cache scales differ"));
            // The path: staged launches leave qkv raw, the two kernels rewrite its queries.
            const long launched = max_context > kSplitKvPartition ? ws.max_partitions : 1;
            const bool staged = head_dim <= 128 && 4L * tokens * heads * launched <= sms;
            const std::size_t qkv_n = qkv.size();
            const auto raw = bytes_from_device<uint16_t>(setup().qkv, qkv_n);
            const auto got = bytes_from_device<uint16_t>(b.qkv, qkv_n);
            QVERIFY2(staged ? got == raw : got == bytes_from_device<uint16_t>(a.qkv, qkv_n),
                     qPrintable(what + (staged ? ": staged, but qkv was rewritten"
                                               : ": not staged, but qkv differs")));
            staged_steps += staged;
        }
        qInfo("input step inside attention: %d of 6 steps staged", staged_steps);
        QVERIFY(staged_steps > 0);
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
        cuda::KvCacheLayer cache;
        cache.k = dk.get();
        cache.v = dv.get();
        cuda::paged_attention<T>(dq.as<T>(), int64_t(heads) * head_dim, cache, dt.as<int32_t>(),
                                 max_blocks, ds.as<int32_t>(), dp.as<int32_t>(), dout.as<T>(),
                                 tokens, heads, kvh, head_dim, block, scale, 100,
                                 cuda::SplitKvWorkspace{}, nullptr);
        const double e = rel_error(from_device<T>(dout, q.size()), want);
        QVERIFY2(e < tolerance<T>(),
                 qPrintable(QString("attention d=%1: %2").arg(head_dim).arg(e)));
    }

    // Split-KV against one pass and the CPU; the int8 cache against the CPU on its dequantised
    // values (as tight as the 16-bit cache) and against the 16-bit cache (loose, reported).
    // batch 1: a step per context of kContexts (one decode token each) and a 40-position
    // prefill chunk across the first partition boundary; batch 63: 62 decode tokens with the
    // contexts (then kBatchContexts) in turn and that prefill chunk in one step (102 tokens, so
    // the split path runs in pieces of its workspace's 64 rows).
    template <typename T>
    void check_paged_attention(int head_dim, int heads, int kv_heads, int batch, bool int8) {
        std::mt19937 rng(head_dim * 1000 + heads * 100 + kv_heads * 10 + batch + int8);
        cpu::ThreadPool pool(0);
        std::vector<PagedStep> steps;
        if (batch == 1) {
            for (int c : kContexts)
                steps.push_back(make_step<T>(heads, kv_heads, head_dim, {c}, {1}, rng));
            steps.push_back(make_step<T>(heads, kv_heads, head_dim, {530}, {40}, rng));
            // Cache blocks smaller than a warp's positions per step (each position's block
            // looked up on its own), and of 10 (steps of 8 and of 4 positions that cross a
            // block's end).
            for (int block : {4, 10})
                steps.push_back(make_step<T>(heads, kv_heads, head_dim, {700}, {1}, rng, block));
        } else {
            std::vector<int> lengths, fresh;
            for (int i = 0; i + 1 < batch; ++i) {
                lengths.push_back(i < static_cast<int>(kContexts.size())
                                      ? kContexts[i]
                                      : kBatchContexts[i % kBatchContexts.size()]);
                fresh.push_back(1);
            }
            lengths.push_back(530);
            fresh.push_back(40);
            steps.push_back(make_step<T>(heads, kv_heads, head_dim, lengths, fresh, rng));
        }
        const double tol = tolerance<T>();
        double worst = 0, worst_one_pass = 0, worst_vs_16bit = 0;
        for (const PagedStep& s : steps) {
            const QString what = QString("longest context %1, %2 tokens, blocks of %3")
                                     .arg(s.max_context())
                                     .arg(s.tokens())
                                     .arg(s.block);
            const auto want = reference_attention(s, int8, pool);
            AttentionRun run;
            run.int8 = int8;
            const auto split = run_attention<T>(s, run);
            run.split = cuda::AttentionSplit::Never;
            const auto one_pass = run_attention<T>(s, run);
            QVERIFY2(all_finite(split) && all_finite(one_pass), qPrintable(what));
            const double e = rel_error(split, want), e1 = rel_error(one_pass, want);
            worst = std::max(worst, e);
            worst_one_pass = std::max(worst_one_pass, e1);
            QVERIFY2(e < tol, qPrintable(what + QString(": split vs CPU %1").arg(e)));
            QVERIFY2(e1 < tol, qPrintable(what + QString(": one pass vs CPU %1").arg(e1)));
            // Contexts of one partition take the very same path in both modes; split ones agree
            // to rounding.
            QVERIFY2(same_short_rows(s, split, one_pass), qPrintable(what));
            // Blocks per kv head (a group's query heads sharing each key and value load), per
            // query head, or per query head staged (many steps' loads at once, the softmax
            // replayed from shared memory): the same bits, split or in one pass.
            auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
                return a.size() == b.size() &&
                       std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
            };
            for (const auto grouping :
                 {cuda::AttentionGrouping::PerKvHead, cuda::AttentionGrouping::PerQueryHead,
                  cuda::AttentionGrouping::Staged}) {
                run.grouping = grouping;
                run.split = cuda::AttentionSplit::Auto;
                QVERIFY2(same(run_attention<T>(s, run), split), qPrintable(what));
                run.split = cuda::AttentionSplit::Never;
                QVERIFY2(same(run_attention<T>(s, run), one_pass), qPrintable(what));
            }
            run.grouping = cuda::AttentionGrouping::Auto;
            const double e_rows = rel_error_rows(s, split, one_pass, true);
            QVERIFY2(e_rows < tol,
                     qPrintable(what + QString(": split vs one pass %1").arg(e_rows)));

            // A workspace of 16 rows (the step in pieces) gives the same bits as 64 rows.
            run.split = cuda::AttentionSplit::Auto;
            run.workspace_rows = 16;
            const auto pieces = run_attention<T>(s, run);
            QVERIFY2(std::memcmp(pieces.data(), split.data(), split.size() * sizeof(float)) == 0,
                     qPrintable(what));
            // Fewer partitions than the context needs (the workspace's limit, or a max_context
            // below the true one): the rest goes to the last partition, still correct.
            run.workspace_rows = 64;
            run.workspace_partitions = 2;
            const double e_clamped = rel_error(run_attention<T>(s, run), want);
            QVERIFY2(e_clamped < tol,
                     qPrintable(what + QString(": 2 partitions %1").arg(e_clamped)));
            run.workspace_partitions = 0;
            run.max_context = 600;
            const double e_under = rel_error(run_attention<T>(s, run), want);
            QVERIFY2(e_under < tol,
                     qPrintable(what + QString(": max_context 600 %1").arg(e_under)));

            // Prefill runs on tensor cores: close to the CPU; every other token's row is the
            // split path's, bit for bit.
            run = AttentionRun{};
            run.int8 = int8;
            run.prefill = cuda::AttentionPrefill::TensorCores;
            const auto tc = run_attention<T>(s, run);
            const double e_tc = rel_error(tc, want);
            QVERIFY2(all_finite(tc) && e_tc < tol,
                     qPrintable(what + QString(": tensor-core prefill %1").arg(e_tc)));
            QVERIFY2(same_rows(s, tc, split, [&](int t) { return !in_run(s, t); }),
                     qPrintable(what));

            if (int8) {
                const auto bits16 = run_attention<T>(s, AttentionRun{});
                const double e16 = rel_error(split, bits16);
                worst_vs_16bit = std::max(worst_vs_16bit, e16);
                // Measured on an H200: up to 0.05 at contexts of 2,047 (these keys are scaled
                // by up to 4 per position, which sharpens the softmax and with it the effect of
                // rounding a key to 1/254 of its largest element).
                QVERIFY2(e16 < 0.1, qPrintable(what + QString(": int8 vs 16-bit %1").arg(e16)));
            }
        }
        if (int8)
            qInfo(
                "int8 KV: max rel. error %.3g vs the CPU on the dequantised cache (one pass "
                "%.3g), %.3g vs the 16-bit cache",
                worst, worst_one_pass, worst_vs_16bit);
        else
            qInfo("16-bit KV: max rel. error %.3g split, %.3g one pass vs the CPU", worst,
                  worst_one_pass);
    }

    // The tensor-core prefill on a step of prefill chunks (from position 0 and after a long
    // past, across its 64-row blocks, 64-key tiles and the 512-position partitions) mixed with
    // decode tokens and two-token chunks: against the CPU and the one-pass kernel; lone tokens
    // exactly as without it; and a run's rows bit-identical however the step's rows fall into
    // the kernel's blocks.
    template <typename T>
    void check_prefill(int head_dim, int heads, int kv_heads, bool int8) {
        std::mt19937 rng(head_dim * 1000 + heads * 100 + kv_heads * 10 + int8 + 7);
        cpu::ThreadPool pool(0);
        const PagedStep s = make_step<T>(heads, kv_heads, head_dim,
                                         {1, 70, 200, 600, 17, 513, kPrefillLongest, 130, 2},
                                         {1, 70, 37, 130, 2, 1, 65, 128, 2}, rng);
        const double tol = tolerance<T>();
        const auto want = reference_attention(s, int8, pool);
        AttentionRun run;
        run.int8 = int8;
        const auto split = run_attention<T>(s, run);
        run.split = cuda::AttentionSplit::Never;
        const auto one_pass = run_attention<T>(s, run);
        run.split = cuda::AttentionSplit::Auto;
        run.prefill = cuda::AttentionPrefill::TensorCores;
        const auto tc = run_attention<T>(s, run);
        QVERIFY(all_finite(tc));
        auto runs = [&](int t) { return in_run(s, t); };
        auto lone = [&](int t) { return !in_run(s, t); };
        const double e = rel_error(tc, want);
        const double e_runs = rel_error_picked(s, tc, want, runs);
        const double e_one = rel_error_picked(s, tc, one_pass, runs);
        qInfo(
            "tensor-core prefill: max rel. error %.3g vs the CPU (prefill rows %.3g), %.3g vs "
            "the one-pass kernel",
            e, e_runs, e_one);
        QVERIFY2(e < tol, qPrintable(QString::number(e)));
        QVERIFY2(e_one < tol, qPrintable(QString::number(e_one)));
        QVERIFY(same_rows(s, tc, split, lone));
        // The tiles copied one stage deep (what sm_86 / sm_89 run): the same bits.
        run.prefill = cuda::AttentionPrefill::TensorCoresOneStage;
        const auto tc1 = run_attention<T>(s, run);
        run.prefill = cuda::AttentionPrefill::TensorCores;
        QCOMPARE(tc1.size(), tc.size());
        QVERIFY(std::memcmp(tc1.data(), tc.data(), tc.size() * sizeof(float)) == 0);
        // One row further down: the same bits.
        const PagedStep shifted = with_leading_token(s);
        const auto tc2 = run_attention<T>(shifted, run);
        const std::size_t hd = std::size_t(heads) * head_dim;
        QCOMPARE(tc2.size(), tc.size() + hd);
        QVERIFY(std::memcmp(tc2.data() + hd, tc.data(), tc.size() * sizeof(float)) == 0);
    }

    // Decode attention times in the 7B shape (32 query / 8 KV heads of 128, bf16), one pass
    // against split, 16-bit against int8 cache: figures for the notes, with the bytes of K/V
    // read per call over the time. The one check: at batch 1 the split path is the faster (32
    // thread blocks cannot keep a GPU's memory busy; 32 per partition can).
    void attention_figures() {
        // Its checks compare times, which on the host emulation say nothing about a GPU.
        if (kHostEmulation) QSKIP("timings: GPU only");
        using T = __nv_bfloat16;
        const int heads = 32, kvh = 8, d = 128, block = 16;
        struct Shape {
            int batch, context;
        };
        for (const Shape shape :
             {Shape{1, 4096}, Shape{8, 4096}, Shape{64, 1024}, Shape{64, 2048}}) {
            const int blocks_per_seq = shape.context / block;
            const int num_blocks = shape.batch * blocks_per_seq;
            const std::size_t vectors = std::size_t(num_blocks) * block * kvh;
            std::vector<int32_t> tables(std::size_t(shape.batch) * blocks_per_seq),
                seq(shape.batch), pos(shape.batch, shape.context - 1);
            std::iota(tables.begin(), tables.end(), 0);
            std::iota(seq.begin(), seq.end(), 0);
            DeviceBuffer dt = ints_to_device(tables), ds = ints_to_device(seq),
                         dp = ints_to_device(pos);
            DeviceBuffer dq(std::size_t(shape.batch) * heads * d * sizeof(T)),
                dout(std::size_t(shape.batch) * heads * d * sizeof(T));
            DeviceBuffer dk(vectors * d * sizeof(T)), dv(vectors * d * sizeof(T)),
                dscale(vectors * sizeof(float));
            // Any finite values do for timing: 0x3c3c is 0.0115 in bf16, 60 in int8.
            for (DeviceBuffer* b : {&dq, &dk, &dv})
                MTDESK_CUDA_CHECK(cudaMemset(b->get(), 0x3c, b->bytes()));
            MTDESK_CUDA_CHECK(cudaMemset(dscale.get(), 0, dscale.bytes()));
            cuda::SplitKvWorkspace ws;
            ws.rows = shape.batch;
            ws.max_partitions = shape.context / kSplitKvPartition;
            ws.capacity = cuda::split_kv_workspace_floats(ws.rows, heads, d, ws.max_partitions);
            DeviceBuffer dws(ws.capacity * sizeof(float));
            ws.data = dws.as<float>();
            cudaEvent_t start, stop;
            MTDESK_CUDA_CHECK(cudaEventCreate(&start));
            MTDESK_CUDA_CHECK(cudaEventCreate(&stop));
            auto time_us = [&](bool int8, cuda::AttentionSplit split) {
                cuda::KvCacheLayer kv;
                kv.k = dk.get();
                kv.v = dv.get();
                if (int8) {
                    kv.storage = cuda::KvCacheLayer::Storage::Int8;
                    kv.k_scale = kv.v_scale = dscale.as<float>();
                }
                auto call = [&] {
                    cuda::paged_attention<T>(dq.as<T>(), int64_t(heads) * d, kv, dt.as<int32_t>(),
                                             blocks_per_seq, ds.as<int32_t>(), dp.as<int32_t>(),
                                             dout.as<T>(), shape.batch, heads, kvh, d, block,
                                             0.088f, shape.context, ws, nullptr, split);
                };
                for (int i = 0; i < 3; ++i)
                    call();
                constexpr int kReps = 20;
                MTDESK_CUDA_CHECK(cudaEventRecord(start));
                for (int i = 0; i < kReps; ++i)
                    call();
                MTDESK_CUDA_CHECK(cudaEventRecord(stop));
                MTDESK_CUDA_CHECK(cudaEventSynchronize(stop));
                float ms = 0;
                MTDESK_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
                return 1000.0 * ms / kReps;
            };
            const double split16 = time_us(false, cuda::AttentionSplit::Auto);
            const double one16 = time_us(false, cuda::AttentionSplit::Never);
            const double split8 = time_us(true, cuda::AttentionSplit::Auto);
            const double one8 = time_us(true, cuda::AttentionSplit::Never);
            MTDESK_CUDA_CHECK(cudaEventDestroy(start));
            MTDESK_CUDA_CHECK(cudaEventDestroy(stop));
            const double kv_bytes16 = 2.0 * shape.batch * shape.context * kvh * d * sizeof(T);
            const double kv_bytes8 = 2.0 * shape.batch * shape.context * kvh * (d + 4);
            qInfo(
                "decode attention, batch %d x context %d: 16-bit cache split %.1f us (%.0f "
                "GB/s), one pass %.1f us; int8 cache split %.1f us (%.0f GB/s), one pass "
                "%.1f us",
                shape.batch, shape.context, split16, kv_bytes16 / split16 / 1e3, one16, split8,
                kv_bytes8 / split8 / 1e3, one8);
            if (shape.batch == 1) QVERIFY(split16 < one16 && split8 < one8);
        }

        // Prefill of a 2,048-token prompt (positions 0 .. 2047 of one sequence) in one step:
        // the tensor-core kernel against the per-token kernels. Checked: the former is faster.
        const int n = 2048, blocks = n / block;
        const std::size_t vectors = std::size_t(blocks) * block * kvh;
        std::vector<int32_t> table(blocks), seq(n, 0), pos(n);
        std::iota(table.begin(), table.end(), 0);
        std::iota(pos.begin(), pos.end(), 0);
        DeviceBuffer dt = ints_to_device(table), ds = ints_to_device(seq), dp = ints_to_device(pos);
        DeviceBuffer dq(std::size_t(n) * heads * d * sizeof(T)), dout(dq.bytes());
        DeviceBuffer dk(vectors * d * sizeof(T)), dv(vectors * d * sizeof(T));
        for (DeviceBuffer* b : {&dq, &dk, &dv})
            MTDESK_CUDA_CHECK(cudaMemset(b->get(), 0x3c, b->bytes()));
        cuda::SplitKvWorkspace ws;
        ws.rows = 64;
        ws.max_partitions = n / kSplitKvPartition;
        ws.capacity = cuda::split_kv_workspace_floats(ws.rows, heads, d, ws.max_partitions);
        DeviceBuffer dws(ws.capacity * sizeof(float));
        ws.data = dws.as<float>();
        cuda::KvCacheLayer kv;
        kv.k = dk.get();
        kv.v = dv.get();
        cudaEvent_t start, stop;
        MTDESK_CUDA_CHECK(cudaEventCreate(&start));
        MTDESK_CUDA_CHECK(cudaEventCreate(&stop));
        auto time_us = [&](cuda::AttentionPrefill prefill) {
            auto call = [&] {
                cuda::paged_attention<T>(dq.as<T>(), int64_t(heads) * d, kv, dt.as<int32_t>(),
                                         blocks, ds.as<int32_t>(), dp.as<int32_t>(), dout.as<T>(),
                                         n, heads, kvh, d, block, 0.088f, n, ws, nullptr,
                                         cuda::AttentionSplit::Auto, prefill);
            };
            call();
            constexpr int kReps = 5;
            MTDESK_CUDA_CHECK(cudaEventRecord(start));
            for (int i = 0; i < kReps; ++i)
                call();
            MTDESK_CUDA_CHECK(cudaEventRecord(stop));
            MTDESK_CUDA_CHECK(cudaEventSynchronize(stop));
            float ms = 0;
            MTDESK_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            return 1000.0 * ms / kReps;
        };
        const double tc = time_us(cuda::AttentionPrefill::TensorCores);
        const double tc1 = time_us(cuda::AttentionPrefill::TensorCoresOneStage);
        const double per_token = time_us(cuda::AttentionPrefill::Off);
        MTDESK_CUDA_CHECK(cudaEventDestroy(start));
        MTDESK_CUDA_CHECK(cudaEventDestroy(stop));
        // Causal: n (n + 1) / 2 query-key pairs, 2 d multiply-adds each for QK and PV.
        const double flop = 4.0 * d * heads * (double(n) * (n + 1) / 2);
        qInfo(
            "prefill attention, 2048 tokens: tensor cores %.1f us (%.1f TFLOP/s; tiles one stage "
            "deep %.1f us), per-token kernels %.1f us",
            tc, flop / tc / 1e6, tc1, per_token);
        int device = 0, major = 0;
        MTDESK_CUDA_CHECK(cudaGetDevice(&device));
        MTDESK_CUDA_CHECK(
            cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
        if (major >= 8) QVERIFY(tc < per_token);
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
        cuda::swiglu<T>(dgu.as<T>(), dout.as<T>(), rows, inter, cuda::GateUp::Halves, nullptr);
        const std::vector<float> halves = from_device<T>(dout, want.size());
        QVERIFY(rel_error(halves, want) < tolerance<T>());
        // The same rows with gate i and up i side by side: the same bits.
        std::vector<float> pairs(gu.size());
        for (int r = 0; r < rows; ++r)
            for (int i = 0; i < inter; ++i) {
                pairs[size_t(r) * 2 * inter + 2 * i] = gate[size_t(r) * inter + i];
                pairs[size_t(r) * 2 * inter + 2 * i + 1] = up[size_t(r) * inter + i];
            }
        DeviceBuffer dpairs = to_device<T>(pairs);
        cuda::swiglu<T>(dpairs.as<T>(), dout.as<T>(), rows, inter, cuda::GateUp::Pairs, nullptr);
        QCOMPARE(from_device<T>(dout, want.size()), halves);

        // Rows of whole 16-byte chunks (96; 8200: more chunks than a block's threads take in
        // one pass) and not (90: element by element).
        for (const int hidden : {96, 8200, 90}) {
            const int vocab = 1000;
            const auto table = random_values<T>(size_t(vocab) * hidden, rng);
            const std::vector<int32_t> ids = {0, 999, 5, 5, 123};
            std::vector<float> emb(ids.size() * hidden);
            cpu::embedding(table.data(), vocab, hidden, ids, emb.data());
            DeviceBuffer dtab = to_device<T>(table), dids = ints_to_device(ids),
                         demb(emb.size() * sizeof(T));
            cuda::embedding<T>(dtab.as<T>(), hidden, dids.as<int32_t>(), int(ids.size()),
                               demb.as<T>(), nullptr);
            QCOMPARE(from_device<T>(demb, emb.size()), emb);  // a copy: exact
            // Pending ids (-1 - r: row r of `pending`, a sample the host has not read).
            const std::vector<int32_t> pending = {5, 999}, with_pending = {0, -2, 5, -1, 123};
            DeviceBuffer dpend = ints_to_device(pending), dwp = ints_to_device(with_pending),
                         demb2(emb.size() * sizeof(T));
            cuda::embedding<T>(dtab.as<T>(), hidden, dwp.as<int32_t>(), int(ids.size()),
                               demb2.as<T>(), nullptr, dpend.as<int32_t>());
            QCOMPARE(from_device<T>(demb2, emb.size()), emb);

            const std::vector<int32_t> rows_idx = {4, 0, 2};
            DeviceBuffer drows = ints_to_device(rows_idx), dg(rows_idx.size() * hidden * sizeof(T));
            cuda::gather_rows<T>(demb.as<T>(), drows.as<int32_t>(), dg.as<T>(), 3, hidden, nullptr);
            const auto g = from_device<T>(dg, rows_idx.size() * hidden);
            for (int r = 0; r < 3; ++r)
                for (int i = 0; i < hidden; ++i)
                    QCOMPARE(g[size_t(r) * hidden + i], emb[size_t(rows_idx[r]) * hidden + i]);
        }
    }

    template <typename T>
    void check_sampling() {
        std::mt19937 rng(5);
        const int rows = kSamplingRows, vocab = kSamplingVocab,
                  stride = (vocab + 1023) / 1024 * 1024;
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
                     dids = ints_to_device(ids), dscratch(sample_scratch_floats(rows, vocab) * 4),
                     dout(rows * 4), dalso(rows * 4), dparams(rows * sizeof(cuda::SampleParams));
        auto run = [&](const std::vector<cuda::SampleParams>& p,
                       const DeviceBuffer* hist_ids = nullptr, const int32_t* pending = nullptr) {
            MTDESK_CUDA_CHECK(cudaMemcpy(dparams.get(), p.data(), p.size() * sizeof(p[0]),
                                         cudaMemcpyHostToDevice));
            cuda::sample_tokens<T>(
                dlog.as<T>(), stride, vocab, rows, dparams.as<cuda::SampleParams>(),
                doff.as<int32_t>(), (hist_ids ? *hist_ids : dids).as<int32_t>(),
                dscratch.as<float>(), dout.as<int32_t>(), nullptr, pending, dalso.as<int32_t>());
            std::vector<int32_t> out(rows), also(rows);
            MTDESK_CUDA_CHECK(cudaDeviceSynchronize());
            MTDESK_CUDA_CHECK(cudaMemcpy(out.data(), dout.get(), rows * 4, cudaMemcpyDeviceToHost));
            MTDESK_CUDA_CHECK(
                cudaMemcpy(also.data(), dalso.get(), rows * 4, cudaMemcpyDeviceToHost));
            if (also != out) qFatal("sample_tokens: the second copy of the ids differs");
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
        // The same with each history's last id pending (-1 - r: row r of a sample the host
        // has not read, on the device only).
        {
            std::vector<int32_t> pending(rows), ids2 = ids;
            for (int r = 0; r < rows; ++r) {
                pending[r] = hist[r].back();
                ids2[offsets[r + 1] - 1] = -1 - r;
            }
            DeviceBuffer dpend = ints_to_device(pending), dids2 = ints_to_device(ids2);
            QCOMPARE(run(p, &dids2, dpend.as<int32_t>()), greedy);
        }
        // Greedy without a penalty (the argmax straight from the logits) = the CPU Sampler's,
        // a tie going to the lower id (row 0: ids 9 and 4 both at the maximum).
        {
            std::vector<float> tied = logits;
            tied[9] = tied[4] = 40.0f;
            dlog = to_device<T>(tied);
            for (auto& x : p)
                x.repetition_penalty = 1.0f;
            const auto plain = run(p);
            for (int r = 0; r < rows; ++r) {
                std::vector<float> row(tied.begin() + size_t(r) * stride,
                                       tied.begin() + size_t(r) * stride + vocab);
                Sampler s(SamplingParams::greedy_decoding());
                QCOMPARE(plain[r], s.sample(row, {}));
            }
            QCOMPARE(plain[0], 4);
            dlog = to_device<T>(logits);
            for (auto& x : p)
                x.repetition_penalty = 1.3f;
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

    // The draw itself against a host replica of the kernels' rule (candidates in better()'s
    // order: value, then the lower id; the normaliser over the candidates with top-k, over the
    // vocabulary without; the nucleus; u = SplitMix64(seed, step) × mass), on a vocabulary of
    // several kSampleSlice-id slices, with 16-bit logits that tie across slices. The GPU's exp and
    // sums round differently: a choice may differ only where u lies within 1e-4 of the mass of
    // a boundary between two candidates.
    template <typename T>
    void check_sampling_draws() {
        std::mt19937 rng(11);
        const int vocab = kSamplingVocabSlices, rows = 5;
        std::vector<float> logits = random_values<T>(std::size_t(rows) * vocab, rng, 3.0f);
        for (int i = 0; i < vocab; ++i)  // row 4: 17 values, so ties across every slice
            logits[4 * std::size_t(vocab) + i] = f32(T(0.5f * float(int(rng() % 17) - 4)));
        std::vector<cuda::SampleParams> p(rows);
        p[0] = {0.7f, 20, 0.6f, 1.05f, 0, 0};  // Hunyuan-MT's recommended sampling
        p[1] = {1.0f, 0, 0.9f, 1.0f, 0, 0};    // no top-k: the nucleus of 256 candidates
        p[2] = {0.5f, 256, 1.0f, 1.2f, 0, 0};
        p[3] = {0.0f, 0, 1.0f, 1.3f, 0, 0};    // greedy with a penalty
        p[4] = {1.3f, 50, 0.95f, 1.0f, 0, 0};  // the top 50 are all tied
        std::vector<std::vector<int32_t>> hist(rows);
        std::vector<int32_t> offsets = {0}, ids;
        for (int r = 0; r < rows; ++r) {
            for (int i = 0; i < 60; ++i)  // the last slice's ids too
                hist[r].push_back(i % 3 == 0 ? vocab - 1 - int(rng() % 100) : int(rng() % vocab));
            if (p[r].repetition_penalty != 1.0f)
                ids.insert(ids.end(), hist[r].begin(), hist[r].end());
            offsets.push_back(static_cast<int32_t>(ids.size()));
        }
        ids.push_back(0);  // never empty
        DeviceBuffer dlog = to_device<T>(logits), doff = ints_to_device(offsets),
                     dids = ints_to_device(ids), dscratch(sample_scratch_floats(rows, vocab) * 4),
                     dout(rows * 4), dparams(rows * sizeof(cuda::SampleParams));
        auto splitmix = [](uint64_t seed, uint64_t step) {
            uint64_t z = seed + 0x9E3779B97F4A7C15ull * (step + 1);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            z ^= z >> 31;
            return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
        };
        int draws = 0, moved = 0, left_argmax = 0;
        for (int seed = 0; seed < 12; ++seed) {
            for (auto& x : p) {
                x.seed = 1000 + seed;
                x.step = 7 * seed;
            }
            MTDESK_CUDA_CHECK(
                cudaMemcpy(dparams.get(), p.data(), rows * sizeof(p[0]), cudaMemcpyHostToDevice));
            cuda::sample_tokens<T>(dlog.as<T>(), vocab, vocab, rows,
                                   dparams.as<cuda::SampleParams>(), doff.as<int32_t>(),
                                   dids.as<int32_t>(), dscratch.as<float>(), dout.as<int32_t>(),
                                   nullptr);
            std::vector<int32_t> got(rows);
            MTDESK_CUDA_CHECK(cudaDeviceSynchronize());
            MTDESK_CUDA_CHECK(cudaMemcpy(got.data(), dout.get(), rows * 4, cudaMemcpyDeviceToHost));
            for (int r = 0; r < rows; ++r) {
                const cuda::SampleParams& q = p[r];
                std::vector<float> v(logits.begin() + std::size_t(r) * vocab,
                                     logits.begin() + std::size_t(r + 1) * vocab);
                const std::vector<float> original = v;
                if (q.repetition_penalty != 1.0f)
                    for (int id : hist[r])
                        v[id] = original[id] < 0 ? original[id] * q.repetition_penalty
                                                 : original[id] / q.repetition_penalty;
                const bool greedy = q.temperature <= 0 || q.top_k == 1;
                if (!greedy)
                    for (float& x : v)
                        x *= 1.0f / q.temperature;
                std::vector<int> order(vocab);
                std::iota(order.begin(), order.end(), 0);
                const int k = greedy ? 1 : q.top_k > 0 ? std::min(q.top_k, 256) : 256;
                std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) {
                    return v[a] > v[b] || (v[a] == v[b] && a < b);
                });
                const QString what = QString("row %1 seed %2: got %3").arg(r).arg(seed).arg(got[r]);
                if (greedy) {
                    QVERIFY2(got[r] == order[0], qPrintable(what));
                    continue;
                }
                const double mx = v[order[0]];
                double z = 0;
                if (q.top_k > 0)
                    for (int i = 0; i < k; ++i)
                        z += std::exp(double(v[order[i]]) - mx);
                else
                    for (float x : v)
                        z += std::exp(double(x) - mx);
                // Cumulative probabilities of the candidates; the nucleus ends where they
                // reach top_p.
                std::vector<double> acc(k);
                for (int i = 0; i < k; ++i)
                    acc[i] = (i ? acc[i - 1] : 0.0) + std::exp(double(v[order[i]]) - mx);
                int keep = k;
                bool near_edge = false;
                for (int i = 0; i < k && q.top_p < 1.0f; ++i) {
                    near_edge |= std::abs(acc[i] / z - q.top_p) < 1e-4;
                    if (acc[i] / z >= q.top_p && keep == k) keep = i + 1;
                }
                const double mass = acc[keep - 1];
                const double u = splitmix(q.seed, q.step) * mass;
                const int want = std::min(
                    int(std::upper_bound(acc.begin(), acc.begin() + keep, u) - acc.begin()),
                    keep - 1);
                const int at =
                    int(std::find(order.begin(), order.begin() + k, got[r]) - order.begin());
                ++draws;
                left_argmax += at != 0;
                QVERIFY2(at < k, qPrintable(what + ": not a candidate"));
                if (at == want) continue;
                // Rounding may move the draw across a boundary it lies next to, or move the
                // nucleus' edge (and with it the mass u scales).
                const bool next_to =
                    std::abs(at - want) == 1 && std::abs(u - acc[std::min(at, want)]) < 1e-4 * mass;
                QVERIFY2(
                    next_to || near_edge,
                    qPrintable(what + QString(", expected rank %1, got %2").arg(want).arg(at)));
                ++moved;
            }
        }
        // Greedy without a penalty: each slice's argmax, the lowest id among ties across slices
        // (row 4's maximum is in every slice).
        for (auto& x : p)
            x = cuda::SampleParams{};
        MTDESK_CUDA_CHECK(
            cudaMemcpy(dparams.get(), p.data(), rows * sizeof(p[0]), cudaMemcpyHostToDevice));
        cuda::sample_tokens<T>(dlog.as<T>(), vocab, vocab, rows, dparams.as<cuda::SampleParams>(),
                               doff.as<int32_t>(), dids.as<int32_t>(), dscratch.as<float>(),
                               dout.as<int32_t>(), nullptr);
        std::vector<int32_t> argmax(rows);
        MTDESK_CUDA_CHECK(cudaDeviceSynchronize());
        MTDESK_CUDA_CHECK(cudaMemcpy(argmax.data(), dout.get(), rows * 4, cudaMemcpyDeviceToHost));
        for (int r = 0; r < rows; ++r) {
            const auto row = logits.begin() + std::size_t(r) * vocab;
            QCOMPARE(argmax[r], int(std::max_element(row, row + vocab) - row));
        }
        QVERIFY(std::count(logits.begin() + 4 * std::size_t(vocab), logits.end(), 6.0f) > 3);

        qInfo(
            "sampling: %d draws over %d ids (%d-id slices), %d as the host rule picks, %d moved "
            "by rounding, %d not the argmax",
            draws, vocab, kSampleSlice, draws - moved, moved, left_argmax);
        QVERIFY(moved <= draws / 10);
        QVERIFY(left_argmax > draws / 4);
    }

  private slots:
    // The kernels are launched as the engine launches them: with programmatic dependent launch
    // on sm_90+.
    void initTestCase() {
        int major = 0;
        QCOMPARE(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
        cuda::set_programmatic_launch(major >= 9);
    }
    void rmsNormBf16() { check_rms_norm<__nv_bfloat16>(); }
    void rmsNormFp16() { check_rms_norm<__half>(); }
    void ropeHunyuanBf16() {
        for (int tokens : {37, 131})
            check_qkv_rope_cache<__nv_bfloat16>(128, cuda::QkNorm::AfterRope, tokens);
    }
    void ropeQwen3Fp16() {
        for (int tokens : {37, 131})
            check_qkv_rope_cache<__half>(64, cuda::QkNorm::BeforeRope, tokens);
    }
    void ropePlainOddDim() {
        for (int tokens : {37, 131})
            check_qkv_rope_cache<__nv_bfloat16>(40, cuda::QkNorm::None, tokens);
    }
    // The attention input step inside the staged decode attention (check_rope_attention): the
    // 1.8B and 7B shapes, Qwen3's norm before RoPE with a bias, an int8 cache, head_dim 40.
    void ropeInsideAttention() {
        check_rope_attention<__nv_bfloat16>(128, 16, 4, cuda::QkNorm::AfterRope, false, false);
        check_rope_attention<__nv_bfloat16>(128, 32, 8, cuda::QkNorm::AfterRope, false, false);
        check_rope_attention<__half>(64, 8, 2, cuda::QkNorm::BeforeRope, false, true);
        check_rope_attention<__nv_bfloat16>(128, 16, 4, cuda::QkNorm::AfterRope, true, false);
        check_rope_attention<__half>(40, 6, 3, cuda::QkNorm::None, true, true);
    }
    void attentionBf16() {
        check_attention<__nv_bfloat16>(128);
        check_attention<__nv_bfloat16>(64);
    }
    void attentionFp16() {
        check_attention<__half>(128);
        check_attention<__half>(40);
    }
    void pagedAttention_data() {
        QTest::addColumn<bool>("fp16");
        QTest::addColumn<int>("head_dim");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("kv_heads");
        QTest::addColumn<int>("batch");
        QTest::addColumn<bool>("int8");
        QTest::newRow("bf16 d128 gqa 8/2 batch 1") << false << 128 << 8 << 2 << 1 << false;
        QTest::newRow("bf16 d128 gqa 8/2 batch 63") << false << 128 << 8 << 2 << 63 << false;
        QTest::newRow("bf16 d256 gqa 8/2 batch 1") << false << 256 << 8 << 2 << 1 << false;
        QTest::newRow("fp16 d64 gqa 8/2 batch 1") << true << 64 << 8 << 2 << 1 << false;
        QTest::newRow("fp16 d64 gqa 8/2 batch 63") << true << 64 << 8 << 2 << 63 << false;
        QTest::newRow("bf16 d40 gqa 6/3 batch 63") << false << 40 << 6 << 3 << 63 << false;
        QTest::newRow("fp16 d40 mha 4/4 batch 1") << true << 40 << 4 << 4 << 1 << false;
        QTest::newRow("bf16 d64 mqa 16/1 batch 63") << false << 64 << 16 << 1 << 63 << false;
        QTest::newRow("int8 bf16 d128 gqa 8/2 batch 63") << false << 128 << 8 << 2 << 63 << true;
        QTest::newRow("int8 fp16 d128 gqa 8/2 batch 1") << true << 128 << 8 << 2 << 1 << true;
        QTest::newRow("int8 bf16 d40 gqa 6/3 batch 1") << false << 40 << 6 << 3 << 1 << true;
        QTest::newRow("int8 fp16 d64 mqa 16/1 batch 63") << true << 64 << 16 << 1 << 63 << true;
    }
    void pagedAttention() {
        QFETCH(bool, fp16);
        QFETCH(int, head_dim);
        QFETCH(int, heads);
        QFETCH(int, kv_heads);
        QFETCH(int, batch);
        QFETCH(bool, int8);
        if (fp16)
            check_paged_attention<__half>(head_dim, heads, kv_heads, batch, int8);
        else
            check_paged_attention<__nv_bfloat16>(head_dim, heads, kv_heads, batch, int8);
    }
    void prefillTensorCores_data() {
        QTest::addColumn<bool>("fp16");
        QTest::addColumn<int>("head_dim");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("kv_heads");
        QTest::addColumn<bool>("int8");
        QTest::newRow("bf16 d128 gqa 8/2") << false << 128 << 8 << 2 << false;
        QTest::newRow("fp16 d128 gqa 8/2") << true << 128 << 8 << 2 << false;
        QTest::newRow("bf16 d64 mqa 16/1") << false << 64 << 16 << 1 << false;
        QTest::newRow("fp16 d40 gqa 6/3") << true << 40 << 6 << 3 << false;
        QTest::newRow("bf16 d32 mha 4/4") << false << 32 << 4 << 4 << false;
        QTest::newRow("bf16 d96 gqa 8/2") << false << 96 << 8 << 2 << false;
        QTest::newRow("int8 bf16 d128 gqa 8/2") << false << 128 << 8 << 2 << true;
        QTest::newRow("int8 fp16 d64 gqa 8/2") << true << 64 << 8 << 2 << true;
        QTest::newRow("int8 bf16 d40 gqa 6/3") << false << 40 << 6 << 3 << true;
    }
    void prefillTensorCores() {
        int device = 0, major = 0;
        MTDESK_CUDA_CHECK(cudaGetDevice(&device));
        MTDESK_CUDA_CHECK(
            cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
        if (major < 8) QSKIP("tensor-core prefill needs sm_80 or later");
        QFETCH(bool, fp16);
        QFETCH(int, head_dim);
        QFETCH(int, heads);
        QFETCH(int, kv_heads);
        QFETCH(bool, int8);
        if (fp16)
            check_prefill<__half>(head_dim, heads, kv_heads, int8);
        else
            check_prefill<__nv_bfloat16>(head_dim, heads, kv_heads, int8);
    }
    void decodeAttentionFigures() { attention_figures(); }
    void swigluEmbeddingGather() {
        check_swiglu_embedding_gather<__nv_bfloat16>();
        check_swiglu_embedding_gather<__half>();
    }
    // upload_from_host: n ints from pinned host memory, read through its device address, land
    // in device memory and nothing past them changes (the 16-byte chunks and the tail of 1-3).
    void uploadFromHost() {
        for (const std::size_t n : {1u, 3u, 4u, 5u, 1027u, 4099u, 300001u}) {
            int32_t* host = nullptr;
            MTDESK_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host), n * 4));
            for (std::size_t i = 0; i < n; ++i)
                host[i] = static_cast<int32_t>(i * 2654435761u);
            void* view = nullptr;
            MTDESK_CUDA_CHECK(cudaHostGetDevicePointer(&view, host, 0));
            DeviceBuffer d((n + 4) * 4);
            MTDESK_CUDA_CHECK(cudaMemset(d.get(), 0xff, d.bytes()));
            cuda::upload_from_host(d.as<int32_t>(), static_cast<const int32_t*>(view), n, nullptr);
            std::vector<int32_t> got(n + 4);
            MTDESK_CUDA_CHECK(cudaDeviceSynchronize());
            MTDESK_CUDA_CHECK(cudaMemcpy(got.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost));
            const bool same = std::equal(host, host + n, got.begin());
            MTDESK_CUDA_CHECK(cudaFreeHost(host));
            QVERIFY2(same, qPrintable(QString("%1 ints").arg(n)));
            for (std::size_t i = n; i < n + 4; ++i)
                QCOMPARE(got[i], -1);
        }
        DeviceBuffer d(64);
        QVERIFY_THROWS_EXCEPTION(
            Error, cuda::upload_from_host(d.as<int32_t>() + 1, d.as<int32_t>(), 4, nullptr));
    }
    void sampling() {
        check_sampling<__nv_bfloat16>();
        check_sampling<__half>();
        check_sampling_draws<__nv_bfloat16>();
        check_sampling_draws<__half>();
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
