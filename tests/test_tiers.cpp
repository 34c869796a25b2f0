// Memory per precision tier, checked against figures computed independently from the published
// shapes of Hunyuan-MT-7B and HY-MT1.5-1.8B.

#include <QTest>

#include <array>
#include <set>
#include <utility>

#include "mtdesk/error.h"
#include "mtdesk/model/config.h"
#include "mtdesk/quant/tiers.h"

using namespace mtdesk;

namespace {

ModelConfig hunyuan_mt_7b() {
    ModelConfig c;
    c.architecture_name = "HunYuanDenseV1ForCausalLM";
    c.vocab_size = 128256;
    c.hidden_size = 4096;
    c.intermediate_size = 14336;
    c.num_layers = 32;
    c.num_heads = 32;
    c.num_kv_heads = 8;
    c.head_dim = 128;
    c.qk_norm = true;
    c.qk_norm_after_rope = true;
    // Hunyuan-MT-7B ties its embeddings (its checkpoint still carries a copy as lm_head.weight).
    c.tie_word_embeddings = true;
    return c;
}

ModelConfig hy_mt15_18b() {
    ModelConfig c = hunyuan_mt_7b();
    c.vocab_size = 120818;
    c.hidden_size = 2048;
    c.intermediate_size = 6144;
    c.num_heads = 16;
    c.num_kv_heads = 4;
    return c;
}

}  // namespace

class TestTiers : public QObject {
    Q_OBJECT

  private slots:
    void names() {
        for (Tier t : all_tiers())
            QCOMPARE(parse_tier(tier_name(t)), std::optional<Tier>(t));
        QCOMPARE(parse_tier("w4a16"), std::optional<Tier>(Tier::INT4));
        QVERIFY(!parse_tier("int3"));
    }

    // BF16 holds every parameter in two bytes.
    void bf16IsTwoBytesPerParameter() {
        ModelConfig untied = hunyuan_mt_7b();
        untied.tie_word_embeddings = false;
        for (const ModelConfig& c : {hunyuan_mt_7b(), hy_mt15_18b(), untied}) {
            QCOMPARE(weight_bytes(c, Tier::BF16), std::size_t(2 * c.parameter_count()));
            QCOMPARE(weight_bytes(c, Tier::FP16), weight_bytes(c, Tier::BF16));
        }
    }

    // 7B: linear weights = 32 × (4096·4096·2 + 1024·4096·2 + 3·4096·14336) + lm_head 128256·4096
    // (tied, so in INT tiers the lm_head is a quantised copy of the 16-bit embedding).
    void int8AndInt4Of7B() {
        const ModelConfig c = hunyuan_mt_7b();
        const std::size_t per_layer_in =
            4096ull * 4096 * 2 + 1024ull * 4096 * 2 + 3ull * 4096 * 14336;
        const std::size_t linear = 32 * per_layer_in + 128256ull * 4096;
        // rows of all linear layers (one INT8 scale per row).
        const std::size_t rows = 32 * (4096ull + 1024 + 1024 + 4096 + 14336 * 2 + 4096) + 128256;
        const std::size_t other =
            128256ull * 4096 * 2 + 32 * (2 * 4096 * 2 + 2 * 128 * 2) + 4096 * 2;
        QCOMPARE(weight_bytes(c, Tier::INT8), linear + rows * 2 + other);
        // INT4: half a byte per weight, one fp16 scale per 128 inputs.
        QCOMPARE(weight_bytes(c, Tier::INT4), linear / 2 + (linear / 128) * 2 + other);
        // Sanity against the well-known size of a 7B W4A16 checkpoint: 4–5 GiB.
        const double gib = weight_bytes(c, Tier::INT4) / double(1ull << 30);
        QVERIFY2(gib > 4.0 && gib < 5.0, qPrintable(QString::number(gib)));
    }

    // A tied lm_head shares the embedding in 16-bit tiers and gets its own copy when quantised.
    void tiedHeadInQuantisedTiers() {
        ModelConfig tied = hy_mt15_18b();
        ModelConfig untied = tied;
        untied.tie_word_embeddings = false;
        QVERIFY(weight_bytes(tied, Tier::BF16) < weight_bytes(untied, Tier::BF16));
        QCOMPARE(weight_bytes(tied, Tier::INT4), weight_bytes(untied, Tier::INT4));
    }

    void kvCache() {
        // 7B: 2 × 32 layers × 8 KV heads × 128 × 8192 tokens × 2 bytes = exactly 1 GiB.
        QCOMPARE(kv_cache_bytes(hunyuan_mt_7b(), 8192), std::size_t(1) << 30);
        QCOMPARE(kv_cache_bytes(hunyuan_mt_7b(), 8192, 1), std::size_t(1) << 29);
        ModelConfig c = hunyuan_mt_7b();
        c.max_position_embeddings = 32768;  // the published config's (RoPE tables, histories)
        const MemoryEstimate e = estimate_memory(c, Tier::INT4, 8192, 1);
        QCOMPARE(e.kv_cache, std::size_t(1) << 30);
        qInfo("7B int4, 8k-token KV, one sequence: %zu MiB", e.total() >> 20);
        QCOMPARE(e.total(), e.weights + e.kv_cache + e.workspace);
        QVERIFY(e.workspace > 0);
        // Target: INT4 7B with an 8k KV budget in ≤ 6 GiB (one sequence decoding, as
        // `mtdesk bench --kv-tokens 8192 --batch 1` measures it).
        QVERIFY(e.total() < (6ull << 30));
    }

    // An int8 KV cache: one byte per element plus one fp32 scale per (position, kv head).
    void int8KvCache() {
        for (KvCacheDtype d : {KvCacheDtype::Auto, KvCacheDtype::Int8})
            QCOMPARE(parse_kv_cache_dtype(kv_cache_dtype_name(d)), std::optional<KvCacheDtype>(d));
        QCOMPARE(parse_kv_cache_dtype("auto"), std::optional<KvCacheDtype>(KvCacheDtype::Auto));
        QVERIFY(!parse_kv_cache_dtype("int4"));
        const ModelConfig c = hunyuan_mt_7b();
        // 7B: 2 × 32 layers × 8 KV heads × (128 + 4) bytes × 8192 tokens = 528 MiB.
        QCOMPARE(kv_cache_bytes(c, 8192, KvCacheDtype::Int8), std::size_t(528) << 20);
        QCOMPARE(kv_cache_bytes(c, 8192, KvCacheDtype::Auto), kv_cache_bytes(c, 8192));
        // 1.8B: 2 × 32 × 4 × 132 × 4096.
        QCOMPARE(kv_cache_bytes(hy_mt15_18b(), 4096, KvCacheDtype::Int8),
                 std::size_t(2) * 32 * 4 * 132 * 4096);
        for (Tier t : all_tiers()) {
            const MemoryEstimate bits16 = estimate_memory(c, t, 8192, 8);
            QCOMPARE(estimate_memory(c, t, 8192, 8, KvCacheDtype::Auto).total(), bits16.total());
            const MemoryEstimate int8 = estimate_memory(c, t, 8192, 8, KvCacheDtype::Int8);
            QCOMPARE(int8.weights, bits16.weights);
            // The workspaces differ by the KV cache's padding block (16 positions) alone.
            const std::size_t pad16 = kv_cache_bytes(c, 16, KvCacheDtype::Auto);
            const std::size_t pad8 = kv_cache_bytes(c, 16, KvCacheDtype::Int8);
            QCOMPARE(bits16.workspace - int8.workspace, pad16 - pad8);
            QCOMPARE(int8.kv_cache, std::size_t(528) << 20);
            QCOMPARE(bits16.total() - int8.total(),
                     (std::size_t(1) << 30) - (528u << 20) + pad16 - pad8);
        }
    }

    // The split-KV attention's partials: rows × heads × ceil(context / 512) × (head_dim + 2)
    // floats, nothing when no context is longer than one partition; contexts are bounded by
    // the model's positions.
    void splitKvWorkspace() {
        ModelConfig c = hunyuan_mt_7b();
        c.max_position_embeddings = 32768;
        QCOMPARE(split_kv_workspace_bytes(c, 512, 64), std::size_t(0));
        QCOMPARE(split_kv_workspace_bytes(c, 513, 64), std::size_t(64) * 32 * 2 * 130 * 4);
        QCOMPARE(split_kv_workspace_bytes(c, 16384, 64), std::size_t(64) * 32 * 32 * 130 * 4);
        const MemoryEstimate small = estimate_memory(c, Tier::INT4, 512, 64);
        const MemoryEstimate large = estimate_memory(c, Tier::INT4, 16384, 64);
        // Besides the partials, the decode graphs of the longer contexts: 11 batch buckets (1,
        // 2, 4, 8, 16, ..., 64) times 7 context bounds (256 ... 16384) instead of 2 (256, 512),
        // each a graph of 32 layers.
        const std::size_t graph = kDecodeGraphBytes + std::size_t(32) * kDecodeGraphBytesPerLayer;
        QCOMPARE(large.workspace - small.workspace,
                 split_kv_workspace_bytes(c, 16384, 64) + 11 * (7 - 2) * graph);
        // A KV budget beyond the model's 32768 positions: partitions and graphs for 32768 only.
        QCOMPARE(estimate_memory(c, Tier::INT4, 65536, 64).workspace - small.workspace,
                 split_kv_workspace_bytes(c, 32768, 64) + 11 * (8 - 2) * graph);
    }

    // The decode graphs a session can capture: the distinct batch buckets over every batch up
    // to the limit times the distinct context bounds over every context up to the limit (the
    // engine keys its graphs by the pair), e.g. 11 × 8 = 88 for 64 sequences and 32768
    // positions.
    void decodeGraphs() {
        // (n or context, limit, bucket)
        for (const auto& [n, limit, want] :
             {std::array{1, 64, 1}, std::array{3, 64, 4}, std::array{5, 64, 8},
              std::array{9, 64, 16}, std::array{61, 64, 64}, std::array{7, 6, 6}})
            QCOMPARE(decode_graph_batch(n, limit), want);
        for (const auto& [context, limit, want] :
             {std::array{1, 32768, 256}, std::array{257, 32768, 512},
              std::array{20000, 32768, 32768}, std::array{600, 1000, 1000},
              std::array{100, 100, 100}})
            QCOMPARE(decode_graph_context(context, limit), want);
        QCOMPARE(decode_graph_count(64, 32768), 88);
        QCOMPARE(decode_graph_count(1, 8192), 6);
        QCOMPARE(decode_graph_count(256, 65536), (3 + 32) * 9);
        QCOMPARE(decode_graph_count(0, 4096), 0);
        QCOMPARE(decode_graph_bytes(64, 32768, 32),
                 88 * (kDecodeGraphBytes + 32 * kDecodeGraphBytesPerLayer));
        for (const auto& [batches, contexts] :
             {std::pair{64, 32768}, std::pair{13, 1000}, std::pair{1, 100}, std::pair{256, 4096},
              std::pair{6, 256}, std::pair{40, 257}}) {
            std::set<int> b, ctx;
            for (int n = 1; n <= batches; ++n)
                b.insert(decode_graph_batch(n, batches));
            for (int t = 1; t <= contexts; ++t)
                ctx.insert(decode_graph_context(t, contexts));
            QCOMPARE(decode_graph_count(batches, contexts), int(b.size() * ctx.size()));
        }
    }

    // A step's activations grow with the step's token budget: per token the residual, the
    // normed input, a scratch row, qkv, the attention output, gate+up and SwiGLU's output, in
    // 16 bits, and five ints of metadata.
    void stepTokens() {
        const ModelConfig c = hunyuan_mt_7b();
        const MemoryEstimate e1 = estimate_memory(c, Tier::INT4, 8192, 8, KvCacheDtype::Auto, 1024);
        const MemoryEstimate e2 = estimate_memory(c, Tier::INT4, 8192, 8, KvCacheDtype::Auto, 2048);
        QCOMPARE(estimate_memory(c, Tier::INT4, 8192, 8).total(), e1.total());
        const std::size_t per_token = (4096 * 3 + (4096 + 2 * 1024) + 4096 + 3 * 14336) * 2 + 5 * 4;
        QCOMPARE(e2.workspace - e1.workspace, 1024 * per_token);
        QCOMPARE(e2.weights, e1.weights);
        QCOMPARE(e2.kv_cache, e1.kv_cache);
    }

    // The load error of a tier that does not fit names what it needs against what is free and
    // the tiers that would fit; nothing when it fits.
    void fitError() {
        const ModelConfig c = hunyuan_mt_7b();
        auto need = [&](Tier t) {
            return estimate_memory(c, t, 8192, 8, KvCacheDtype::Auto, 1024).total();
        };
        auto error = [&](Tier t, std::size_t free_bytes) {
            return tier_fit_error(c, t, 8192, 8, KvCacheDtype::Auto, 1024, free_bytes,
                                  std::size_t(24) << 30, "GPU 0");
        };
        QVERIFY(need(Tier::INT4) < need(Tier::INT8) && need(Tier::INT8) < need(Tier::BF16));
        QCOMPARE(error(Tier::BF16, need(Tier::BF16)), std::string());
        QCOMPARE(error(Tier::INT4, need(Tier::INT4)), std::string());
        const std::string bf16 = error(Tier::BF16, need(Tier::INT8));
        const std::string mib = std::to_string((need(Tier::BF16) + (1 << 20) - 1) >> 20);
        QVERIFY2(bf16.starts_with("the bf16 tier needs " + mib + " MiB (weights "), bf16.c_str());
        QVERIFY2(bf16.find("GPU 0 has " + std::to_string((need(Tier::INT8) + (1 << 20) - 1) >>
                                                         20)) != std::string::npos,
                 bf16.c_str());
        QVERIFY2(bf16.find("free of 24576 MiB") != std::string::npos, bf16.c_str());
        QVERIFY2(bf16.ends_with("tiers that fit: int8 (" +
                                std::to_string((need(Tier::INT8) + (1 << 20) - 1) >> 20) +
                                " MiB), int4 (" +
                                std::to_string((need(Tier::INT4) + (1 << 20) - 1) >> 20) + " MiB)"),
                 bf16.c_str());
        const std::string none = error(Tier::INT4, need(Tier::INT4) - 1);
        QVERIFY2(none.ends_with("no tier fits: lower the KV cache budget"), none.c_str());
    }

    // The CPU tiers, from the published 7B shapes counted here independently: fp32 is four
    // bytes a parameter (tied: one table); INT8 a byte a linear weight plus an fp32 scale a
    // row, INT4 half a byte plus an fp32 scale per 128 inputs, and the tied output layer a
    // quantised copy beside the fp32 embedding.
    void cpuTiers() {
        for (CpuTier t : all_cpu_tiers())
            QCOMPARE(parse_cpu_tier(cpu_tier_name(t)), std::optional<CpuTier>(t));
        QVERIFY(!parse_cpu_tier("bf16"));
        const ModelConfig c = hunyuan_mt_7b();
        const std::size_t h = 4096, f = 14336, q = 4096, kv = 1024, vocab = 128256, d = 128;
        const std::size_t linear_rows = (q + 2 * kv) + h + 2 * f + h;  // per layer
        const std::size_t linear = (q + 2 * kv) * h + h * q + 2 * f * h + h * f;
        const std::size_t norms = 32 * (2 * h + 2 * d) + h;
        QCOMPARE(estimate_cpu_memory(c, CpuTier::FP32).weights,
                 4 * (32 * linear + vocab * h + norms));
        QCOMPARE(estimate_cpu_memory(c, CpuTier::INT8).weights,
                 32 * (linear + 4 * linear_rows) + 4 * (vocab * h + norms) + vocab * h + 4 * vocab);
        // k = 4096 and 14336 are multiples of 128: no padding.
        QCOMPARE(estimate_cpu_memory(c, CpuTier::INT4).weights,
                 32 * (linear / 2 + 4 * linear / 128) + 4 * (vocab * h + norms) + vocab * h / 2 +
                     4 * vocab * h / 128);
        // The KV cache is fp32: 2 × 32 layers × 8 heads × 128 × 4 bytes a position.
        QCOMPARE(estimate_cpu_memory(c, CpuTier::INT8, 1000).kv_cache,
                 std::size_t(1000) * 2 * 32 * kv * 4);
        // About 30 GB in fp32, a quarter of it in int8 (the fp32 embedding stays).
        QVERIFY(estimate_cpu_memory(c, CpuTier::FP32).total() > (std::size_t(29) << 30));
        QVERIFY(estimate_cpu_memory(c, CpuTier::INT8).total() < (std::size_t(12) << 30));
        QVERIFY(estimate_cpu_memory(c, CpuTier::INT4).total() < (std::size_t(8) << 30));
    }

    // The tier that fits in the memory available, leaving a tenth to the rest of the system;
    // a requested one that does not fit fails with the figures and the tiers that would.
    void chooseCpuTier() {
        const ModelConfig c = hy_mt15_18b();
        auto need = [&](CpuTier t) { return estimate_cpu_memory(c, t).total(); };
        auto enough = [](std::size_t bytes) { return bytes + bytes / 9 + 1; };
        QCOMPARE(choose_cpu_tier(c, std::nullopt, enough(need(CpuTier::FP32))), CpuTier::FP32);
        QCOMPARE(choose_cpu_tier(c, std::nullopt, need(CpuTier::FP32)), CpuTier::INT8);
        QCOMPARE(choose_cpu_tier(c, std::nullopt, enough(need(CpuTier::INT4))), CpuTier::INT4);
        QCOMPARE(choose_cpu_tier(c, CpuTier::INT4, std::size_t(64) << 30), CpuTier::INT4);
        const auto mib = [](std::size_t b) { return std::to_string((b + (1 << 20) - 1) >> 20); };
        try {
            choose_cpu_tier(c, CpuTier::FP32, enough(need(CpuTier::INT8)));
            QFAIL("fp32 accepted");
        } catch (const Error& e) {
            const std::string m = e.what();
            QVERIFY2(m.starts_with("the CPU's fp32 tier needs " + mib(need(CpuTier::FP32)) +
                                   " MiB of memory (weights "),
                     m.c_str());
            QVERIFY2(m.ends_with("tiers that fit: int8 (" + mib(need(CpuTier::INT8)) +
                                 " MiB), int4 (" + mib(need(CpuTier::INT4)) + " MiB)"),
                     m.c_str());
        }
        try {
            choose_cpu_tier(c, std::nullopt, need(CpuTier::INT4));
            QFAIL("no tier fits, but one was chosen");
        } catch (const Error& e) {
            const std::string m = e.what();
            QVERIFY2(m.find("even in the CPU's int4 tier (" + mib(need(CpuTier::INT4)) + " MiB") !=
                         std::string::npos,
                     m.c_str());
        }
    }
};

QTEST_APPLESS_MAIN(TestTiers)
#include "test_tiers.moc"
