// The CPU engine's linear layers at batch 1 (decode) on the published models' shapes: fp32
// (OpenBLAS sgemv), INT8 and INT4 weight-only (engine/cpu/linear_quant_cpu.cpp). Prints one
// JSON object per line: the layer, tier, rows, milliseconds per product (median of --reps),
// GB/s of weights read and GMAC/s. Figures for docs/benchmarks.md, not a test.
//
//   build/tests/bench_linear_cpu [--threads N] [--reps R] [--rows B] [--portable]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/ops_cpu.h"
#include "cpu/thread_pool_cpu.h"
#include "mtdesk/cpu/blas_kernels.h"
#include "mtdesk/quant/quantize.h"

using namespace mtdesk;

namespace {

struct Shape {
    const char* name;
    int n, k;
};

// HY-MT1.5-1.8B (hidden 2048, intermediate 6144, 16/4 heads of 128) and Hunyuan-MT-7B
// (hidden 4096, intermediate 14336, 32/8 heads of 128): qkv, gate|up and down.
constexpr Shape kShapes[] = {
    {"1.8b qkv", 3072, 2048}, {"1.8b gate_up", 12288, 2048}, {"1.8b down", 2048, 6144},
    {"7b qkv", 6144, 4096},   {"7b gate_up", 28672, 4096},   {"7b down", 4096, 14336},
};

template <typename F>
double median_ms(int reps, F&& run) {
    run();  // warm: pages touched, threads awake
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        run();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

void print(const Shape& s, const char* tier, int rows, double ms, double bytes) {
    const double macs = static_cast<double>(s.n) * s.k * rows;
    std::printf(
        "{\"layer\": \"%s\", \"tier\": \"%s\", \"rows\": %d, \"ms\": %.3f, \"weight_gb_s\": "
        "%.1f, \"gmac_s\": %.1f}\n",
        s.name, tier, rows, ms, bytes / ms / 1e6, macs / ms / 1e6);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    restart_with_better_blas_kernels(argv);  // as mtdesk does: fp32 on OpenBLAS's AVX2 kernels
    int threads = 0, reps = 20, rows = 1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--threads" && i + 1 < argc)
            threads = std::atoi(argv[++i]);
        else if (a == "--reps" && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--rows" && i + 1 < argc)
            rows = std::clamp(std::atoi(argv[++i]), 1, static_cast<int>(cpu::kQuantGemvRows));
        else if (a == "--portable")
            cpu::force_portable_quant_kernels(true);
        else {
            std::fprintf(stderr,
                         "usage: bench_linear_cpu [--threads N] [--reps R] [--rows B] "
                         "[--portable]\n");
            return 2;
        }
    }
    cpu::ThreadPool pool(threads);
    std::fprintf(stderr, "threads %d, avx2 %s, OpenBLAS kernels %s\n", pool.size(),
                 cpu::quant_kernels_use_avx2() ? "yes" : "no", blas_core_name().c_str());
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    for (const Shape& s : kShapes) {
        std::vector<float> w(static_cast<std::size_t>(s.n) * s.k);
        for (float& v : w)
            v = normal(rng);
        std::vector<float> x(static_cast<std::size_t>(rows) * s.k),
            y(static_cast<std::size_t>(rows) * s.n);
        for (float& v : x)
            v = normal(rng) * 50.0f;
        const double fp32_ms = median_ms(
            reps, [&] { cpu::linear(x.data(), w.data(), nullptr, y.data(), rows, s.k, s.n); });
        print(s, "fp32", rows, fp32_ms, 4.0 * w.size());
        cpu::QuantScratch scratch;
        const QuantizedInt8 q8 = quantize_int8(w, s.n, s.k);
        const double int8_ms = median_ms(
            reps, [&] { cpu::linear(x.data(), q8, nullptr, y.data(), rows, pool, scratch); });
        print(s, "int8", rows, int8_ms, q8.q.size() + 4.0 * q8.scales.size());
        const QuantizedInt4 q4 = quantize_int4(w, s.n, s.k);
        const double int4_ms = median_ms(
            reps, [&] { cpu::linear(x.data(), q4, nullptr, y.data(), rows, pool, scratch); });
        print(s, "int4", rows, int4_ms, q4.packed.size() + 4.0 * q4.scales.size());
    }
    return 0;
}
