// GPU linear layers (engine/cuda/linear_cuda.*) against the CPU reference: every weight format
// and activation type, batch sizes 1 .. 200, odd shapes, both INT paths (GEMV and dequantise +
// cuBLAS), small workspaces (tiled prefill, no split-K), unaligned activations, determinism,
// and the errors. Exits with 77 (skipped) when no CUDA device is present.

#include <QTest>

#include <cuda_runtime.h>

#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda/cuda_common.h"
#include "cuda/gemm_cuda.h"
#include "cuda/linear_cuda.h"
#include "cuda/ops_cuda.h"
#include "gpu_linear_check.h"
#include "mtdesk/error.h"

using namespace mtdesk;
using cuda::WeightFormat;
using test::LinearCase;
using test::run_linear_case;

namespace {

// " [path]" a case ran on.
QString path_name(const test::PathCase& pc) {
    const bool f16 = pc.c.format == WeightFormat::BF16 || pc.c.format == WeightFormat::FP16;
    if (f16)
        return pc.f16_gemv_max_m >= pc.c.m
                   ? QString(" [gemv, simt, %1 rows per warp]").arg(pc.f16_gemv_rows)
                   : QString(" [cublas]");
    if (pc.gemv_max_m < pc.c.m) return " [dequant+gemm]";
    return pc.tensor_cores ? " [gemv, tensor cores]" : " [gemv, simt]";
}

// Runs `cases` on `ctx`, setting its gemv_max_m per case; returns the failures (at most 12).
QString failures_of(const std::vector<test::PathCase>& cases, cuda::LinearContext& ctx,
                    int* ran = nullptr) {
    QStringList out;
    int count = 0;
    for (const test::PathCase& pc : cases) {
        ctx.gemv_max_m = pc.gemv_max_m;
        ctx.tensor_core_gemv = pc.tensor_cores;
        ctx.f16_gemv_max_m = pc.f16_gemv_max_m;
        ctx.f16_gemv_any_shape = true;  // forced: the cases' shapes are small
        ctx.f16_gemv_rows = pc.f16_gemv_rows;
        const test::LinearResult r = run_linear_case(pc.c, ctx);
        ++count;
        if (!r.failure.empty()) out << QString::fromStdString(r.failure) + path_name(pc);
    }
    ctx.gemv_max_m = cuda::kGemvMaxM;
    ctx.tensor_core_gemv = true;
    ctx.f16_gemv_max_m = cuda::kF16GemvMaxM;
    ctx.f16_gemv_any_shape = false;
    ctx.f16_gemv_rows = 0;
    if (ran) *ran = count;
    if (out.size() > 12) {
        const int more = static_cast<int>(out.size()) - 12;
        out = out.mid(0, 12);
        out << QString("... and %1 more").arg(more);
    }
    return out.join('\n');
}

// Random 16-bit values of T (as bits) in [lo, hi).
std::vector<uint16_t> random_bits(std::size_t count, bool bf16, float lo, float hi, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<uint16_t> v(count);
    for (uint16_t& b : v)
        b = bf16 ? test::to_bf16_bits(d(rng)) : fp32_to_fp16_bits(d(rng));
    return v;
}

cuda::DeviceBuffer upload_bits(const std::vector<uint16_t>& bits) {
    cuda::DeviceBuffer b(bits.size() * 2);
    MTDESK_CUDA_CHECK(cudaMemcpy(b.get(), bits.data(), bits.size() * 2, cudaMemcpyHostToDevice));
    return b;
}

std::vector<uint16_t> download_bits(const cuda::DeviceBuffer& b, std::size_t count) {
    std::vector<uint16_t> v(count);
    MTDESK_CUDA_CHECK(cudaMemcpy(v.data(), b.get(), count * 2, cudaMemcpyDeviceToHost));
    return v;
}

// linear_swiglu and linear_add_rms_norm against linear() followed by swiglu(GateUp::Pairs) and
// add_rms_norm(), on `ctx`'s path for weight `w` and m rows: the same bits. Returns a failure.
template <typename T>
QString compare_fused(const cuda::DeviceLinear& w, int m, cuda::LinearContext& ctx, uint32_t seed) {
    constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
    const int n = w.n(), k = w.k();
    const std::size_t ny = std::size_t(m) * n;
    cuda::DeviceBuffer x = upload_bits(random_bits(std::size_t(m) * k, kBf16, -1, 1, seed));
    const std::vector<uint16_t> res0 = random_bits(ny, kBf16, -2, 2, seed + 1);
    cuda::DeviceBuffer norm = upload_bits(random_bits(std::size_t(n), kBf16, 0.5f, 1.5f, seed + 2));
    cuda::DeviceBuffer y(ny * 2), y2(ny * 2), act(ny), act2(ny), out(ny * 2), out2(ny * 2);
    cuda::DeviceBuffer res = upload_bits(res0), res2 = upload_bits(res0);
    const float eps = 1e-6f;
    cuda::linear<T>(w, x.as<T>(), y.as<T>(), m, ctx, nullptr);
    cuda::swiglu<T>(y.as<T>(), act.as<T>(), m, n / 2, cuda::GateUp::Pairs, nullptr);
    cuda::add_rms_norm<T>(res.as<T>(), y.as<T>(), norm.as<T>(), out.as<T>(), m, n, eps, nullptr);
    cuda::linear_swiglu<T>(w, x.as<T>(), y2.as<T>(), act2.as<T>(), m, ctx, nullptr);
    cuda::linear_add_rms_norm<T>(w, x.as<T>(), y2.as<T>(), res2.as<T>(), norm.as<T>(), out2.as<T>(),
                                 m, eps, ctx, nullptr);
    MTDESK_CUDA_CHECK(cudaDeviceSynchronize());
    const QString name = QString("%1 [%2, %3] m=%4 %5 path %6")
                             .arg(cuda::format_name(w.format()))
                             .arg(n)
                             .arg(k)
                             .arg(m)
                             .arg(kBf16 ? "bf16" : "fp16")
                             .arg(int(cuda::linear_path(w, x.get(), m, ctx)));
    if (download_bits(act, ny / 2) != download_bits(act2, ny / 2))
        return name + ": linear_swiglu differs from linear + swiglu";
    if (download_bits(res, ny) != download_bits(res2, ny))
        return name + ": linear_add_rms_norm's residual differs";
    if (download_bits(out, ny) != download_bits(out2, ny))
        return name + ": linear_add_rms_norm's output differs";
    if (download_bits(res, ny) == res0) return name + ": the residual was not updated";
    return {};
}

// The one-row MLP input step of a decode step where the norm goes into the gate/up layer:
// linear_swiglu_norm_in (x made by its blocks from residual + delta) against add_rms_norm() then
// linear_swiglu(), and the down layer's linear_add_rms_norm with `pending` = delta against the
// same call on the residual the reference's add_rms_norm() updated: the same bits, and the
// fused form leaves the residual alone until the down layer. Returns a failure.
template <typename T>
QString compare_norm_in(const cuda::DeviceLinear& gate_up, const cuda::DeviceLinear& down,
                        cuda::LinearContext& ctx, uint32_t seed) {
    constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
    const int k = gate_up.k(), inter = gate_up.n() / 2;
    const std::vector<uint16_t> res0 = random_bits(k, kBf16, -2, 2, seed);
    cuda::DeviceBuffer delta = upload_bits(random_bits(k, kBf16, -1, 1, seed + 1));
    cuda::DeviceBuffer norm = upload_bits(random_bits(k, kBf16, 0.5f, 1.5f, seed + 2));
    cuda::DeviceBuffer norm2 = upload_bits(random_bits(k, kBf16, 0.5f, 1.5f, seed + 3));
    cuda::DeviceBuffer res = upload_bits(res0), res2 = upload_bits(res0);
    // y: the gate/up layer's [2 · inter] (unwritten at one row), then the down layer's [k].
    cuda::DeviceBuffer h(std::size_t(k) * 2), y(std::size_t(std::max(2 * inter, k)) * 2),
        y2(y.bytes());
    cuda::DeviceBuffer act(std::size_t(inter) * 2), act2(act.bytes());
    cuda::DeviceBuffer out(std::size_t(k) * 2), out2(out.bytes());
    const float eps = 1e-5f;
    cuda::add_rms_norm<T>(res.as<T>(), delta.as<T>(), norm.as<T>(), h.as<T>(), 1, k, eps, nullptr);
    cuda::linear_swiglu<T>(gate_up, h.as<T>(), y.as<T>(), act.as<T>(), 1, ctx, nullptr);
    cuda::linear_swiglu_norm_in<T>(gate_up, res2.as<T>(), delta.as<T>(), norm.as<T>(), eps,
                                   act2.as<T>(), ctx, nullptr);
    MTDESK_CUDA_CHECK(cudaDeviceSynchronize());
    const QString name = QString("INT4 gate/up [%1, %2], down [%3, %4] %5")
                             .arg(gate_up.n())
                             .arg(k)
                             .arg(down.n())
                             .arg(down.k())
                             .arg(kBf16 ? "bf16" : "fp16");
    if (download_bits(act, inter) != download_bits(act2, inter))
        return name + ": linear_swiglu_norm_in differs from add_rms_norm + linear_swiglu";
    if (download_bits(res2, k) != res0) return name + ": linear_swiglu_norm_in wrote the residual";
    cuda::linear_add_rms_norm<T>(down, act.as<T>(), y.as<T>(), res.as<T>(), norm2.as<T>(),
                                 out.as<T>(), 1, eps, ctx, nullptr);
    cuda::linear_add_rms_norm<T>(down, act2.as<T>(), y2.as<T>(), res2.as<T>(), norm2.as<T>(),
                                 out2.as<T>(), 1, eps, ctx, nullptr, delta.as<T>());
    MTDESK_CUDA_CHECK(cudaDeviceSynchronize());
    if (download_bits(res, k) != download_bits(res2, k))
        return name + ": linear_add_rms_norm with pending: the residual differs";
    if (download_bits(out, k) != download_bits(out2, k))
        return name + ": linear_add_rms_norm with pending: the output differs";
    return {};
}

}  // namespace

class TestGpuLinear : public QObject {
    Q_OBJECT

    cuda::LinearContext ctx_;

  private slots:
    void initTestCase() {
        // Enough for the whole dequantised weight of every standard case (1024 × 256 × 2 B is
        // the largest) and the split-K partials.
        ctx_ = cuda::LinearContext::create(64u << 20);
        QVERIFY(ctx_.workspace != nullptr && ctx_.gemm_workspace != nullptr);
        // Launched as the engine launches them: with programmatic dependent launch on sm_90+.
        cuda::set_programmatic_launch(ctx_.sm_major >= 9);
        QVERIFY(ctx_.sm_count > 0);
    }

    void allFormatsShapesAndBatches() {
        int ran = 0;
        const QString failures = failures_of(test::standard_linear_cases(), ctx_, &ran);
        QVERIFY2(failures.isEmpty(), qPrintable(failures));
        QVERIFY(ran > 500);
    }

    // The default threshold, with activations that are not 16-byte aligned (scalar loads), and
    // weights handed over already quantised (the cache's path).
    void defaultPathUnalignedAndPrequantised() {
        std::vector<test::PathCase> cases;
        uint32_t seed = 1000;
        for (WeightFormat f : {WeightFormat::INT8, WeightFormat::INT4}) {
            for (bool bf16 : {true, false}) {
                for (int m : {1, 5, 16, 17, 64}) {
                    LinearCase c{f, bf16, m, 96, 384, seed++, 0, true};
                    cases.push_back({c, cuda::kGemvMaxM});
                    c.x_offset = 3;  // 6 bytes past an aligned address
                    c.prequantised = false;
                    cases.push_back({c, 1 << 30});
                    cases.push_back({c, 0});
                }
            }
        }
        const QString failures = failures_of(cases, ctx_);
        QVERIFY2(failures.isEmpty(), qPrintable(failures));
    }

    // A workspace that holds only a few dequantised rows: the prefill runs in row tiles; the
    // GEMV runs without split-K when the partial sums do not fit.
    void smallWorkspace() {
        for (WeightFormat f : {WeightFormat::INT8, WeightFormat::INT4}) {
            const int n = 129, k = 300;
            const int k_padded = f == WeightFormat::INT8 ? 304 : 384;
            cuda::LinearContext small = cuda::LinearContext::create(5 * k_padded * 2 + 7);
            std::vector<test::PathCase> cases;
            for (int m : {1, 3, 40}) {
                cases.push_back({LinearCase{f, true, m, n, k, uint32_t(m), 0, false}, 0});
                cases.push_back({LinearCase{f, false, m, n, k, uint32_t(m), 0, false}, 1 << 30});
                cases.push_back({LinearCase{f, true, m, 8, 8192, uint32_t(m), 0, false}, 1 << 30});
            }
            const QString failures = failures_of(cases, small);
            QVERIFY2(failures.isEmpty(), qPrintable(failures));

            cuda::LinearContext none = cuda::LinearContext::create(0);
            const QString no_ws =
                failures_of({{LinearCase{f, true, 2, 8, 8192, 7, 0, false}, 64}}, none);
            QVERIFY2(no_ws.isEmpty(), qPrintable(no_ws));
        }
    }

    // The GEMMs run every row count of a bucket with the algorithm chosen for the bucket
    // (gemm_cuda.h): right results at every count, one algorithm per bucket and shape (65, 80
    // and 96 rows: bucket 96; 97 and 128: 128; 130: 192; 500: 512), and for INT weights on the
    // dequantise + GEMM path too.
    void gemmAlgorithmPerBucket() {
        cuda::LinearContext ctx = cuda::LinearContext::create(16u << 20);
        std::vector<test::PathCase> cases;
        for (int m : {65, 80, 96, 97, 128, 130, 500})
            cases.push_back(
                {LinearCase{WeightFormat::BF16, true, m, 96, 384, uint32_t(m), 0, false}, 0, true,
                 0});
        QString failures = failures_of(cases, ctx);
        QVERIFY2(failures.isEmpty(), qPrintable(failures));
        QVERIFY(ctx.gemm_plans != nullptr);
        QCOMPARE(ctx.gemm_plans->algorithms(), std::size_t{4});
        cases.clear();
        for (int m : {65, 90, 200})
            cases.push_back(
                {LinearCase{WeightFormat::INT4, true, m, 96, 384, uint32_t(m), 0, false}, 0, true,
                 0});
        failures = failures_of(cases, ctx);
        QVERIFY2(failures.isEmpty(), qPrintable(failures));
        // Another shape (k 384 padded alike, n the same: the INT4 tile is the same GEMM shape as
        // the BF16 one) adds no algorithm for 65 and 90 (bucket 96) and one for 200 (256).
        QCOMPARE(ctx.gemm_plans->algorithms(), std::size_t{5});
    }

    // The GEMV runs on the tensor cores where the device and shape allow, else on the SIMT
    // kernel; 16-bit weights always go to cuBLAS.
    void pathChoice() {
        int major = 0;
        QCOMPARE(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
        const std::vector<float> w(static_cast<std::size_t>(64) * 256, 0.5f);
        const auto i4 = cuda::DeviceLinear::upload(w, 64, 256, WeightFormat::INT4);
        const auto i8 = cuda::DeviceLinear::upload(w, 64, 256, WeightFormat::INT8);
        const auto b16 = cuda::DeviceLinear::upload(w, 64, 256, WeightFormat::BF16);
        alignas(16) static char x[16];
        const auto tc = major >= 8 ? cuda::LinearPath::GemvTensorCores : cuda::LinearPath::GemvSimt;
        QCOMPARE(cuda::linear_path(i4, x, 2, ctx_), tc);
        QCOMPARE(cuda::linear_path(i8, x, cuda::kGemvMaxM, ctx_), tc);
        // One row: INT4 on the tensor cores (the one-row kernel), INT8 on the SIMT kernel up to
        // two rows; misaligned x: only the SIMT kernel can.
        QCOMPARE(cuda::linear_path(i4, x, 1, ctx_), tc);
        QCOMPARE(cuda::linear_path(i4, x + 2, 1, ctx_), cuda::LinearPath::GemvSimt);
        QCOMPARE(cuda::linear_path(i8, x, 2, ctx_), cuda::LinearPath::GemvSimt);
        QCOMPARE(cuda::linear_path(i8, x + 2, 8, ctx_), cuda::LinearPath::GemvSimt);
        QCOMPARE(cuda::linear_path(i4, x, cuda::kGemvMaxM + 1, ctx_),
                 cuda::LinearPath::DequantCublas);
        // 16-bit weights: cuBLAS for a layer whose GEMV would fill less than a wave; where the
        // shape allows, the SIMT GEMV up to kF16GemvMaxM rows, cuBLAS above and for rows that
        // are not whole 16-byte chunks.
        QCOMPARE(cuda::linear_path(b16, x, 1, ctx_), cuda::LinearPath::Cublas);
        // 96 rows per multiprocessor: one wave of warps with 6 rows each (with 4, one and a half).
        const int six_n = 96 * ctx_.sm_count;
        const auto six = cuda::DeviceLinear::upload(
            std::vector<float>(static_cast<std::size_t>(six_n) * 64, 0.5f), six_n, 64,
            WeightFormat::BF16);
        QCOMPARE(cuda::linear_path(six, x, 1, ctx_), cuda::LinearPath::GemvSimt);
        // Three waves of 4-row warps: the GEMV; two: cuBLAS (with 6 rows, more than one wave).
        for (const int waves : {3, 2}) {
            const int n = 64 * waves * ctx_.sm_count;
            const auto layer = cuda::DeviceLinear::upload(
                std::vector<float>(static_cast<std::size_t>(n) * 64, 0.5f), n, 64,
                WeightFormat::BF16);
            QCOMPARE(cuda::linear_path(layer, x, 1, ctx_),
                     waves == 3 ? cuda::LinearPath::GemvSimt : cuda::LinearPath::Cublas);
        }
        ctx_.f16_gemv_any_shape = true;
        QCOMPARE(cuda::linear_path(b16, x, cuda::kF16GemvMaxM, ctx_), cuda::LinearPath::GemvSimt);
        QCOMPARE(cuda::linear_path(b16, x, cuda::kF16GemvMaxM + 1, ctx_), cuda::LinearPath::Cublas);
        const auto b16_odd = cuda::DeviceLinear::upload(std::vector<float>(8 * 100, 1.0f), 8, 100,
                                                        WeightFormat::BF16);
        QCOMPARE(cuda::linear_path(b16_odd, x, 1, ctx_), cuda::LinearPath::Cublas);
        ctx_.f16_gemv_any_shape = false;
        ctx_.tensor_core_gemv = false;
        QCOMPARE(cuda::linear_path(i4, x, 8, ctx_), cuda::LinearPath::GemvSimt);
        ctx_.tensor_core_gemv = true;
        const auto odd_k = cuda::DeviceLinear::upload(std::vector<float>(8 * 100, 1.0f), 8, 100,
                                                      WeightFormat::INT4);
        QCOMPARE(cuda::linear_path(odd_k, x, 8, ctx_), cuda::LinearPath::GemvSimt);
    }

    // INT4 at one row on each one-row kernel, forced (LinearContext::row_gemv): x in
    // registers with its own rounds per slice and with 4, 2 and 1 (one to fourteen k-slices,
    // idle warps in the last), and rounds per warp; odd n, k past whole rounds (300, 1000,
    // 3000), whole rounds up to the 7B down layer's 14336; against the CPU reference. Then
    // the same layer's bits twice on each (the x-in-registers kernel sums in a fixed order).
    void oneRowKernels() {
        using RowGemv = cuda::LinearContext::RowGemv;
        struct Restore {
            cuda::LinearContext& ctx;
            ~Restore() {
                ctx.row_gemv = RowGemv::Auto;
                ctx.row_gemv_rounds_per_split = 0;
            }
        } restore{ctx_};
        struct Kernel {
            RowGemv kind;
            int rounds_per_split;
        };
        const Kernel kernels[] = {{RowGemv::XInRegisters, 0},
                                  {RowGemv::XInRegisters, 4},
                                  {RowGemv::XInRegisters, 2},
                                  {RowGemv::XInRegisters, 1},
                                  {RowGemv::RoundsPerWarp, 0}};
        QStringList failures;
        uint32_t seed = 1300;
        for (const auto& [n, k] :
             {std::pair{37, 300}, std::pair{37, 3000}, std::pair{1000, 1000}, std::pair{96, 14336},
              std::pair{4100, 2048}, std::pair{600, 8192}, std::pair{2050, 4096}}) {
            for (const Kernel& kr : kernels) {
                ctx_.row_gemv = kr.kind;
                ctx_.row_gemv_rounds_per_split = kr.rounds_per_split;
                for (bool bf16 : {true, false}) {
                    const LinearCase c{WeightFormat::INT4, bf16, 1, n, k, seed++, 0, false};
                    const test::LinearResult r = run_linear_case(c, ctx_);
                    if (!r.failure.empty())
                        failures << QString::fromStdString(r.failure) +
                                        QString(" [%1, %2 rounds a slice]")
                                            .arg(kr.kind == RowGemv::XInRegisters
                                                     ? "x in registers"
                                                     : "rounds per warp")
                                            .arg(kr.rounds_per_split);
                    if (bf16 && n == 4100) {
                        const test::LinearResult again = run_linear_case(c, ctx_);
                        if (again.y != r.y)
                            failures << QString("one row, [%1, %2]: two runs differ").arg(n).arg(k);
                    }
                }
            }
        }
        failures.removeAll(QString());
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
    }

    // Split-K sums its slices in a fixed order: repeated runs give the same bits, on both GEMV
    // kernels (and the SIMT one reading 16-bit weights) and for one to 32 rows.
    void deterministic() {
        // The context goes back to its defaults however this test ends.
        struct Restore {
            cuda::LinearContext& ctx;
            ~Restore() {
                ctx.gemv_max_m = cuda::kGemvMaxM;
                ctx.tensor_core_gemv = true;
                ctx.f16_gemv_max_m = cuda::kF16GemvMaxM;
                ctx.f16_gemv_any_shape = false;
            }
        } restore{ctx_};
        for (WeightFormat f : {WeightFormat::INT8, WeightFormat::INT4, WeightFormat::BF16}) {
            for (bool tc : {false, true}) {
                if (f == WeightFormat::BF16 && tc) continue;
                for (int m : {1, 4, 32}) {
                    const LinearCase c{f, true, m, 40, 8192, 77, 0, false};
                    ctx_.gemv_max_m = 1 << 30;
                    ctx_.f16_gemv_max_m = 1 << 30;
                    ctx_.f16_gemv_any_shape = true;
                    ctx_.tensor_core_gemv = tc;
                    const test::LinearResult a = run_linear_case(c, ctx_);
                    QVERIFY2(a.failure.empty(), a.failure.c_str());
                    for (int run = 0; run < 4; ++run) {
                        const test::LinearResult b = run_linear_case(c, ctx_);
                        QVERIFY2(b.failure.empty(), b.failure.c_str());
                        QVERIFY(a.y == b.y);
                    }
                }
            }
        }
    }

    // The fused epilogues give the unfused results bit for bit on every path: the SIMT GEMV
    // with SwiGLU in its store (one k-slice: 8192 rows fill a wave) and in the split-K sum
    // (2048 rows), the residual add + RMSNorm in the split-K sum, the tensor-core GEMV (its sum;
    // 80 rows: two slices of x), cuBLAS (16-bit weights at m > 1) and dequantise + cuBLAS
    // (m = 200), where they run after y. The first case, INT4 [8192, 512] at one row, is also
    // the one that caught the GEMV's weight loads hoisted out of their guard (load_weights):
    // its last row ends where nothing else is mapped.
    void fusedEpilogues() {
        struct Restore {
            cuda::LinearContext& ctx;
            ~Restore() {
                ctx.tensor_core_gemv = true;
                ctx.f16_gemv_any_shape = false;
            }
        } restore{ctx_};
        QStringList failures;
        uint32_t seed = 500;
        for (const auto& [n, k] :
             {std::pair{8192, 512}, std::pair{2048, 2048}, std::pair{64, 264}}) {
            std::vector<float> wf(static_cast<std::size_t>(n) * k);
            std::mt19937 rng(seed++);
            std::normal_distribution<float> d(0.0f, 0.05f);
            for (float& v : wf)
                v = d(rng);
            for (WeightFormat f :
                 {WeightFormat::INT4, WeightFormat::INT8, WeightFormat::BF16, WeightFormat::FP16}) {
                const cuda::DeviceLinear w = cuda::DeviceLinear::upload(wf, n, k, f);
                for (int m : {1, 2, 7, 33, 80, 200}) {
                    for (bool tc : {true, false}) {
                        ctx_.tensor_core_gemv = tc;
                        ctx_.f16_gemv_any_shape = !tc;  // 16-bit: the GEMV on every shape once
                        if (f == WeightFormat::FP16)
                            failures << compare_fused<__half>(w, m, ctx_, seed++);
                        else
                            failures << compare_fused<__nv_bfloat16>(w, m, ctx_, seed++);
                        if (f == WeightFormat::INT4 && m == 2)
                            failures << compare_fused<__half>(w, m, ctx_, seed++);
                        if (f == WeightFormat::INT4 && m == 1 && tc) {
                            ctx_.row_gemv = cuda::LinearContext::RowGemv::XInRegisters;
                            failures << compare_fused<__nv_bfloat16>(w, m, ctx_, seed++);
                            ctx_.row_gemv = cuda::LinearContext::RowGemv::Auto;
                        }
                    }
                }
            }
        }
        failures.removeAll(QString());
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
    }

    // linear_swiglu_norm_in and linear_add_rms_norm's `pending` (compare_norm_in) on the 1.8B
    // model's MLP shapes (down in three k-slices: the pending add in the fused split-K sum), on
    // k = 4096 (two chunks a norm thread; a down layer of one slice: the add before the separate
    // norm kernel), on k = 1536 and 1000 (x not whole 1024-element blocks; 1000: chunks past the
    // last whole group of 8), and in fp16; then where it is refused.
    void normInput() {
        QStringList failures;
        uint32_t seed = 900;
        const cuda::DeviceBuffer probe(256);  // a 16-byte aligned vector for the checks
        const void* p = probe.get();
        for (const auto& [inter, k] : {std::pair{6144, 2048}, std::pair{256, 4096},
                                       std::pair{384, 1536}, std::pair{64, 1000}}) {
            const cuda::DeviceLinear gate_up =
                cuda::DeviceLinear::random(2 * inter, k, WeightFormat::INT4, seed++);
            const cuda::DeviceLinear down =
                cuda::DeviceLinear::random(k, inter, WeightFormat::INT4, seed++);
            QVERIFY(cuda::linear_swiglu_norm_in_supported(gate_up, p, p, p, ctx_));
            // On the engine's choice of one-row kernel, then on each one forced.
            for (const auto rg :
                 {cuda::LinearContext::RowGemv::Auto, cuda::LinearContext::RowGemv::XInRegisters,
                  cuda::LinearContext::RowGemv::RoundsPerWarp}) {
                ctx_.row_gemv = rg;
                failures << compare_norm_in<__nv_bfloat16>(gate_up, down, ctx_, seed);
                seed += 4;
                if (k == 2048) failures << compare_norm_in<__half>(gate_up, down, ctx_, seed);
                seed += 4;
            }
            ctx_.row_gemv = cuda::LinearContext::RowGemv::Auto;
        }
        failures.removeAll(QString());
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
        // Refused: INT8 weights, k above 4096, an unaligned vector, the SIMT GEMV forced.
        std::vector<float> wf(std::size_t(64) * 8192, 0.01f);
        const cuda::DeviceLinear i8 = cuda::DeviceLinear::upload(
            std::vector<float>(wf.begin(), wf.begin() + 64 * 1024), 64, 1024, WeightFormat::INT8);
        const cuda::DeviceLinear wide =
            cuda::DeviceLinear::upload(wf, 64, 8192, WeightFormat::INT4);
        const cuda::DeviceLinear ok = cuda::DeviceLinear::upload(
            std::vector<float>(wf.begin(), wf.begin() + 64 * 1024), 64, 1024, WeightFormat::INT4);
        QVERIFY(!cuda::linear_swiglu_norm_in_supported(i8, p, p, p, ctx_));
        QVERIFY(!cuda::linear_swiglu_norm_in_supported(wide, p, p, p, ctx_));
        QVERIFY(!cuda::linear_swiglu_norm_in_supported(ok, static_cast<const char*>(p) + 2, p, p,
                                                       ctx_));
        QVERIFY(cuda::linear_swiglu_norm_in_supported(ok, p, p, p, ctx_));
        ctx_.tensor_core_gemv = false;
        QVERIFY(!cuda::linear_swiglu_norm_in_supported(ok, p, p, p, ctx_));
        ctx_.tensor_core_gemv = true;
        const auto* b = static_cast<const __nv_bfloat16*>(p);
        auto* out = static_cast<__nv_bfloat16*>(probe.get());
        QVERIFY_THROWS_EXCEPTION(Error, cuda::linear_swiglu_norm_in<__nv_bfloat16>(
                                            wide, b, b, b, 1e-5f, out, ctx_, nullptr));
    }

    void deviceMemoryAndMoves() {
        const int n = 10, k = 200;
        const std::vector<float> w(static_cast<std::size_t>(n) * k, 0.25f);
        cuda::DeviceLinear a = cuda::DeviceLinear::upload(w, n, k, WeightFormat::INT4);
        // 256 padded inputs: 128 bytes and 2 fp16 scales per row.
        QCOMPARE(a.device_bytes(), std::size_t(n) * (128 + 2 * 2));
        QCOMPARE(a.k_padded(), 256);
        QCOMPARE(a.group(), 128);
        cuda::DeviceLinear i8 = cuda::DeviceLinear::upload(w, n, k, WeightFormat::INT8);
        QCOMPARE(i8.device_bytes(), std::size_t(n) * (208 + 2));  // rows padded to 16 bytes
        cuda::DeviceLinear b16 = cuda::DeviceLinear::upload(w, n, k, WeightFormat::BF16);
        QCOMPARE(b16.device_bytes(), std::size_t(n) * k * 2);
        cuda::DeviceLinear moved = std::move(a);
        QCOMPARE(moved.n(), n);
        QCOMPARE(moved.format(), WeightFormat::INT4);
        QCOMPARE(a.n(), 0);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
        QCOMPARE(a.device_bytes(), std::size_t(0));
        QCOMPARE(cuda::linear_workspace_bytes(moved, cuda::kGemvMaxM + 1),
                 std::size_t(n) * 256 * 2);
        QCOMPARE(cuda::linear_workspace_bytes(b16, 64), std::size_t(0));
    }

    void errors() {
        const std::vector<float> w(64 * 128, 0.5f);
        cuda::DeviceLinear b16 = cuda::DeviceLinear::upload(w, 64, 128, WeightFormat::BF16);
        cuda::DeviceLinear i4 = cuda::DeviceLinear::upload(w, 64, 128, WeightFormat::INT4);
        __half* hx = nullptr;
        QCOMPARE(cudaMalloc(&hx, 64 * 128 * sizeof(__half)), cudaSuccess);
        __half* hy = hx + 64 * 64;  // separate halves of one buffer (m = 2 needs 2·128 and 2·64)
        // BF16 weights with fp16 activations.
        QVERIFY_THROWS_EXCEPTION(Error, cuda::linear<__half>(b16, hx, hy, 2, ctx_, nullptr));
        QVERIFY_THROWS_EXCEPTION(Error, cuda::linear<__half>(i4, hx, hy, -1, ctx_, nullptr));
        cuda::linear<__half>(i4, hx, hy, 0, ctx_, nullptr);  // nothing to do
        cuda::DeviceLinear empty;
        QVERIFY_THROWS_EXCEPTION(Error, cuda::linear<__half>(empty, hx, hy, 1, ctx_, nullptr));
        // 2^32 group scales (65536 rows of 2^23 INT4 weights): more than the one-row GEMV
        // indexes, refused before anything is allocated.
        QVERIFY_THROWS_EXCEPTION(
            Error, cuda::DeviceLinear::random(65536, 1 << 23, WeightFormat::INT4, 1, 1.0f));
        // The prefill path needs room for one dequantised row.
        cuda::LinearContext bare;
        bare.gemv_max_m = 0;
        QVERIFY_THROWS_EXCEPTION(Error, cuda::linear<__half>(i4, hx, hy, 2, bare, nullptr));
        cuda::LinearContext tiny = cuda::LinearContext::create(100);
        tiny.gemv_max_m = 0;
        try {
            cuda::linear<__half>(i4, hx, hy, 2, tiny, nullptr);
            QFAIL("a 100-byte workspace was accepted");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("256 bytes"), e.what());
        }
        // The GEMV path needs neither.
        bare.gemv_max_m = 16;
        cuda::linear<__half>(i4, hx, hy, 2, bare, nullptr);
        QCOMPARE(cudaDeviceSynchronize(), cudaSuccess);
        // The fused epilogues: gate/up pairs need an even number of rows, the norm its buffers.
        const cuda::DeviceLinear odd = cuda::DeviceLinear::upload(
            std::vector<float>(63 * 128, 0.5f), 63, 128, WeightFormat::INT4);
        QVERIFY_THROWS_EXCEPTION(Error,
                                 cuda::linear_swiglu<__half>(odd, hx, hy, hy, 1, ctx_, nullptr));
        QVERIFY_THROWS_EXCEPTION(
            Error, cuda::linear_swiglu<__half>(i4, hx, hy, nullptr, 1, ctx_, nullptr));
        QVERIFY_THROWS_EXCEPTION(Error, cuda::linear_add_rms_norm<__half>(
                                            i4, hx, hy, nullptr, hx, hy, 1, 1e-6f, ctx_, nullptr));
        cudaFree(hx);

        QVERIFY_THROWS_EXCEPTION(Error, cuda::DeviceLinear::upload(w, 64, 127, WeightFormat::INT8));
        std::vector<float> big(4, 1e6f);
        QVERIFY_THROWS_EXCEPTION(Error, cuda::DeviceLinear::upload(big, 2, 2, WeightFormat::FP16));
        QuantizedInt4 odd_group = quantize_int4(w, 64, 128, 16);
        QVERIFY_THROWS_EXCEPTION(Error, cuda::DeviceLinear::upload(odd_group));
        QVERIFY_THROWS_EXCEPTION(Error, cuda::DeviceLinear::upload_16bit(std::vector<uint16_t>(4),
                                                                         2, 2, WeightFormat::INT8));
    }
};

int main(int argc, char** argv) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::puts("no CUDA device: skipped");
        return 77;
    }
    TestGpuLinear test;
    return QTest::qExec(&test, argc, argv);
}

#include "gpu_test_linear.moc"
