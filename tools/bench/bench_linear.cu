// Benchmark of the GPU linear layers (engine/cuda/linear_cuda.*): time per call, effective
// bandwidth (weight + activation bytes / time) against the device's measured copy bandwidth,
// and TFLOP/s, for every weight format, several batch sizes m and the three INT paths (the
// tensor-core GEMV "gemv-tc", forced at every m, the SIMT GEMV "gemv", and dequantise + cuBLAS
// "deq+gemm"; 16-bit weights: cuBLAS and the SIMT GEMV, forced at every shape with the rows per
// warp the engine would pick; INT4 at one row also each one-row kernel forced: "tc-xreg" with x
// in registers in xreg_shape's shape, "tc-xreg4" / "tc-xreg2" with 4 / 2 rounds a slice,
// "tc-xreg-b4" / "-b2" with 4 / 2 blocks a multiprocessor, "tc-rounds" with rounds per warp). Their
// crossovers are what kGemvMaxM, kF16GemvMaxM and the tensor-core minimum rows are set from.
//
// Build (from the repository root; not part of the CMake build):
//   nvcc -std=c++20 -O3 -arch=sm_90 -I engine/include -I engine tools/bench/bench_linear.cu \
//        engine/cuda/linear_cuda.cu engine/cuda/rms_norm_cuda.cu engine/cuda/swiglu_cuda.cu \
//        engine/cuda/embedding_cuda.cu engine/cuda/gemm_cuda.cpp engine/quant/quantize.cpp \
//        engine/model/dtype.cpp -lcublas -lcublasLt -o bench_linear
// Run: ./bench_linear [--shapes NxK,NxK,...] [--m 1,8,64] [--fp16] [--no-pdl]
//   default shapes 4096x4096 and 12288x4096 (gate/up-like), 4096x12288 (down-like); default m
//   1,2,4,8,12,16,24,32,64; activations bf16 unless --fp16; kernels launched with programmatic
//   dependent launch on sm_90+ (as the engine does) unless --no-pdl.
//      ./bench_linear --chain hy-mt-7b|hy-mt1.5-1.8b
//   the four linear layers of every decoder layer of that model (qkv, o, gate/up with SwiGLU,
//   down; random weights) chained at one row of x as a decode step runs them, for BF16, INT8
//   and INT4, and nothing else of the step: the floor the layers alone put under a batch-1 step.
//   With --shared-weights every layer reads the first layer's weights (the 1.8B model's 24 MB
//   then stay in L2): what the chain costs when device memory is not what it waits on; with
//   --int4 only the INT4 chain runs; --xreg / --no-xreg force the one-row INT4 kernel with x in
//   registers / with rounds per warp (default: the engine's choice per layer).
//      ./bench_linear --boundaries
//   chains of 256 dependent kernels that each load and store one value a thread: what a kernel
//   boundary of a decode step costs, with and without programmatic dependent launch, and with
//   the hand-over through arrival counters in memory instead.
//      ./bench_linear --l2
//   what L2 keeps of weights asked into it: 4-48 MiB read by a latency-bound streaming kernel
//   (16-byte loads, as the GEMVs issue them) cold, after a read of the same bytes (warm), and
//   after the bytes were asked for with cp.async.bulk.prefetch.L2 (64 or 256 KiB pieces from
//   132 blocks, or 1 MiB pieces from one block) or prefetch.global.L2 (a 128-byte line a
//   thread) and 40 µs of waiting; with how long the kernel that asks takes.
//      ./bench_linear --first-calls
//   host time of the first and the second GEMM of a shape (bf16, the 7B layers at 45-1,024 rows),
//   with cublasGemmEx as the engine called it before and with linear() now (cublasLt, one
//   algorithm per bucket of rows, gemm_cuda.h), each on a fresh handle or context.
//      ./bench_linear --stream
//   the weight bytes of the 7B INT4 layers read with the one-row INT4 GEMV's access pattern and
//   no dequantisation: what its memory access alone costs, with one or three rounds in flight
//   and with or without arithmetic between the loads; then with the GEMV's other loads added
//   (each round's x, through L1 as the GEMV reads it or staged once in shared memory, and its
//   group scales).
//
// Method: each configuration's calls cycle over enough copies of the weight to exceed the L2
// cache (so weights come from device memory as in a real model), are captured in a CUDA graph
// (so launch gaps do not count), and the median of 7 timed graph launches is reported.

#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <cublas_v2.h>

#include "cuda/cuda_common.h"
#include "cuda/launch_cuda.cuh"
#include "cuda/linear_cuda.h"
#include "cuda/linear_kernels.cuh"  // the one-row GEMV's shape and split-K rule
#include "mtdesk/quant/quantize.h"

using namespace mtdesk;
using cuda::WeightFormat;

namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        std::exit(1);
    }
}

std::vector<int> parse_list(const std::string& s) {
    std::vector<int> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        out.push_back(std::stoi(item));
    return out;
}

// Device copy bandwidth, bytes read + written per second.
double copy_bandwidth() {
    const std::size_t bytes = std::size_t(1) << 30;
    void *a = nullptr, *b = nullptr;
    check(cudaMalloc(&a, bytes), "cudaMalloc");
    check(cudaMalloc(&b, bytes), "cudaMalloc");
    check(cudaMemset(a, 1, bytes), "cudaMemset");
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int i = 0; i < 2; ++i)
        cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    std::vector<float> ms;
    for (int i = 0; i < 5; ++i) {
        cudaEventRecord(e0);
        cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float t = 0;
        cudaEventElapsedTime(&t, e0, e1);
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    cudaFree(a);
    cudaFree(b);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return 2.0 * bytes / (ms[ms.size() / 2] * 1e-3);
}

// Seconds per pass of `enqueue(stream)` (kernel launches only, no synchronisation): one pass
// outside the graph first (cuBLAS picks and loads its kernels there), then `passes` passes
// captured in one CUDA graph (so launch gaps do not count), the median of 7 graph launches.
template <typename F>
double time_graph(cudaStream_t stream, int passes, F enqueue) {
    enqueue(stream);
    check(cudaStreamSynchronize(stream), "warm-up");
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), "begin capture");
    for (int i = 0; i < passes; ++i)
        enqueue(stream);
    check(cudaStreamEndCapture(stream, &graph), "end capture");
    check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    check(cudaGraphLaunch(exec, stream), "graph launch");
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<float> ms;
    for (int rep = 0; rep < 7; ++rep) {
        cudaEventRecord(e0, stream);
        cudaGraphLaunch(exec, stream);
        cudaEventRecord(e1, stream);
        check(cudaEventSynchronize(e1), "graph run");
        float t = 0;
        cudaEventElapsedTime(&t, e0, e1);
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return ms[ms.size() / 2] * 1e-3 / passes;
}

template <typename T>
double time_calls(const std::vector<cuda::DeviceLinear>& copies, const T* x, T* y, int m,
                  cuda::LinearContext& ctx, cudaStream_t stream) {
    const int iters = std::max<int>(copies.size(), 40);
    int next = 0;  // the calls cycle over the copies
    return time_graph(stream, iters, [&](cudaStream_t s) {
        cuda::linear<T>(copies[next++ % copies.size()], x, y, m, ctx, s);
    });  // seconds per call
}

// The linear layers of `layers` decoder layers (hidden, qkv rows, intermediate) chained at one
// row of x in `format` (random weights, each layer its own, or with `shared` all the first
// layer's: then the 1.8B model's 24 MB stay in L2), in one CUDA graph: the time of one pass,
// median of 7. `bytes`: the weights a pass reads (one layer's, times the layers).
double time_chain(int hidden, int qkv_rows, int inter, int layers, WeightFormat format, bool shared,
                  cuda::LinearContext& ctx, cudaStream_t stream, std::size_t& bytes) {
    using T = __nv_bfloat16;
    std::vector<cuda::DeviceLinear> qkv, o, gate_up, down;
    bytes = 0;
    for (int l = 0; l < (shared ? 1 : layers); ++l) {
        const uint64_t seed = 4 * static_cast<uint64_t>(l);
        qkv.push_back(cuda::DeviceLinear::random(qkv_rows, hidden, format, seed + 1));
        o.push_back(cuda::DeviceLinear::random(hidden, hidden, format, seed + 2));
        gate_up.push_back(cuda::DeviceLinear::random(2 * inter, hidden, format, seed + 3));
        down.push_back(cuda::DeviceLinear::random(hidden, inter, format, seed + 4));
        bytes += qkv.back().device_bytes() + o.back().device_bytes() +
                 gate_up.back().device_bytes() + down.back().device_bytes();
    }
    T *h = nullptr, *q = nullptr, *y = nullptr, *act = nullptr, *h2 = nullptr;
    check(cudaMalloc(&h, std::size_t(hidden) * 2), "cudaMalloc");
    check(cudaMalloc(&q, std::size_t(qkv_rows) * 2), "cudaMalloc");
    check(cudaMalloc(&y, std::size_t(hidden + 2 * inter) * 2), "cudaMalloc");  // o, then gate/up
    check(cudaMalloc(&act, std::size_t(inter) * 2), "cudaMalloc");
    check(cudaMalloc(&h2, std::size_t(hidden) * 2), "cudaMalloc");
    cuda::fill_random<T>(h, hidden, 7, 1.0f);
    if (shared) bytes *= layers;
    auto pass = [&] {
        for (int l = 0; l < layers; ++l) {
            const int w = shared ? 0 : l;
            cuda::linear<T>(qkv[w], h, q, 1, ctx, stream);
            cuda::linear<T>(o[w], q, y, 1, ctx, stream);  // attention's output stands in: q
            cuda::linear_swiglu<T>(gate_up[w], y, y + hidden, act, 1, ctx, stream);
            cuda::linear<T>(down[w], act, h2, 1, ctx, stream);
            std::swap(h, h2);
        }
    };
    const double seconds = time_graph(stream, 1, [&](cudaStream_t) { pass(); });
    for (T* p : {h, q, y, act, h2})
        cudaFree(p);
    return seconds;
}

// A read-only stream with the one-row INT4 GEMV's access pattern (mma_gemv_row_kernel): blocks
// of kWarps warps, kRowWarpRows<kRowTiles> weight rows a warp, rounds of kRowRoundBytes of each
// row, lane (g, t) loading the 16 bytes at 64 g + 16 t of each with the kernel's load; grid
// (row groups, k-slices). kAhead rounds are in flight beside the one in use (a ring of register
// sets); each 16 bytes are folded into one word with kWork rounds of integer arithmetic (a
// shift, a multiply and a LOP3: a stand-in for dequantising). With kX, each round also reads
// the GEMV's x (lane (g, t): the 16-byte chunks 16 g + 4 t + j, j = 0..3, of the round's 1024
// elements), one round ahead: XFrom::L1 with __ldg as the GEMV does, XFrom::Shared from the
// block's k-slice of x copied into shared memory at the start (chunks swizzled so that each
// quarter-warp meets eight bank groups). With kScales, the round's group scale of each row
// (2 bytes, [row][group] as DeviceLinear keeps them), kAhead rounds ahead like the weights.
namespace gemv = cuda::detail;
constexpr int kStreamRows = gemv::kRowWarpRows<gemv::kRowTiles>;  // a warp's rows

enum class XFrom { None, L1, Shared };

struct StreamArgs {
    const uint8_t* w;
    int n, row_bytes, slice_rounds;
    const uint4* x;                // [row_bytes * 2 / 8] chunks of 8 bf16
    const unsigned short* scales;  // [n][row_bytes / 64]
    uint32_t* out;
};

template <int kAhead, int kWork, XFrom kX = XFrom::None, bool kScales = false>
__global__ void __launch_bounds__(gemv::kWarps * 32) stream_kernel(const StreamArgs a) {
    constexpr int kRound = gemv::kRowRoundBytes;
    const uint8_t* w = a.w;
    const int n = a.n, row_bytes = a.row_bytes;
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int row0 = (blockIdx.x * gemv::kWarps + (threadIdx.x >> 5)) * kStreamRows;
    const int r_begin = blockIdx.y * a.slice_rounds;
    const int r_end = min(row_bytes / kRound, r_begin + a.slice_rounds);
    extern __shared__ uint4 xs[];
    auto slot = [](int c) { return c ^ ((c >> 3) & 3); };
    if constexpr (kX == XFrom::Shared) {
        for (int c = threadIdx.x; c < (r_end - r_begin) * 128; c += blockDim.x)
            xs[slot(c)] = __ldg(a.x + r_begin * 128 + c);
        __syncthreads();
    }
    if (row0 >= n) return;
    uint4 xv[2][4];
    auto load_x = [&](int r, uint4(&v)[4]) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int c = g * 16 + t * 4 + j;
            if constexpr (kX == XFrom::L1) v[j] = __ldg(a.x + r * 128 + c);
            if constexpr (kX == XFrom::Shared) v[j] = xs[slot((r - r_begin) * 128 + c)];
        }
    };
    const int groups = row_bytes / 64;
    unsigned short sv[kAhead + 1][kStreamRows];
    auto load_scales = [&](int r, unsigned short(&v)[kStreamRows]) {
#pragma unroll
        for (int h = 0; h < kStreamRows; ++h)
            v[h] = __ldg(a.scales + std::size_t(min(row0 + h, n - 1)) * groups + r * 8 + g);
    };
    const uint8_t* src[kStreamRows];
    for (int h = 0; h < kStreamRows; ++h)
        src[h] = w + std::size_t(min(row0 + h, n - 1)) * row_bytes + g * 64 + t * 16;
    constexpr int kSets = kAhead + 1;
    uint4 v[kSets][kStreamRows];
    for (int i = 0; i < kAhead; ++i)
        if (r_begin + i < r_end) {
            for (int h = 0; h < kStreamRows; ++h)
                v[i][h] = gemv::load_weights(src[h] + (r_begin + i) * kRound);
            if constexpr (kScales) load_scales(r_begin + i, sv[i]);
        }
    if constexpr (kX != XFrom::None) load_x(r_begin, xv[0]);
    uint32_t acc = 0;
    for (int r0 = r_begin; r0 < r_end; r0 += kSets) {
#pragma unroll
        for (int i = 0; i < kSets; ++i) {
            const int r = r0 + i;
            if (r >= r_end) break;
            if (r + kAhead < r_end) {
                for (int h = 0; h < kStreamRows; ++h)
                    v[(i + kAhead) % kSets][h] = gemv::load_weights(src[h] + (r + kAhead) * kRound);
                if constexpr (kScales) load_scales(r + kAhead, sv[(i + kAhead) % kSets]);
            }
            if constexpr (kX != XFrom::None) {
                if (r + 1 < r_end) load_x(r + 1, xv[(i + 1) % 2]);
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    acc += xv[i % 2][j].x ^ xv[i % 2][j].w;
            }
#pragma unroll
            for (int h = 0; h < kStreamRows; ++h) {
                uint32_t x = v[i][h].x ^ v[i][h].y ^ v[i][h].z ^ v[i][h].w;
#pragma unroll
                for (int k = 0; k < kWork; ++k)
                    x = (x >> 4) ^ (x * 0x9E3779B1u) ^ (x & 0x0F0F0F0Fu);
                acc += x;
                if constexpr (kScales) acc += sv[i % kSets][h];
            }
        }
    }
    if (acc == 0x9E3779B1u) a.out[0] = acc;  // keeps the loads; practically never taken
}

int run_stream() {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    const double copy_bw = copy_bandwidth();
    std::printf("device: %s; copy bandwidth %.0f GB/s (read + write)\n", prop.name, copy_bw / 1e9);
    std::printf("%-22s %6s %6s %-20s %10s %9s %6s\n", "rows x bytes (slices)", "ahead", "work",
                "other loads", "us/call", "GB/s", "%copy");
    uint32_t* out = nullptr;
    check(cudaMalloc(&out, 4), "cudaMalloc");
    // Held to the blocks per multiprocessor the GEMV's registers allow it: dynamic shared memory.
    const int smem = static_cast<int>(prop.sharedMemPerMultiprocessor / gemv::kRowMinBlocks) - 2048;
    // The 7B INT4 layers (n, k / 2 bytes a row), cut into k-slices by the GEMV's split-K rule.
    const int shapes[][2] = {{28672, 2048}, {4096, 7168}, {6144, 2048}, {4096, 2048}};
    for (auto [n, row_bytes] : shapes) {
        const int rounds = row_bytes / gemv::kRowRoundBytes;
        const gemv::Slices sl = gemv::slices_of(
            rounds, gemv::split_count(n, 1, kStreamRows, row_bytes / gemv::kChunkBytes,
                                      prop.multiProcessorCount, static_cast<std::size_t>(-1)));
        const std::size_t bytes = std::size_t(n) * row_bytes;
        std::vector<uint8_t*> copies;
        for (std::size_t total = 0; total < 4 * std::size_t(prop.l2CacheSize) || copies.size() < 2;
             total += bytes) {
            uint8_t* p = nullptr;
            check(cudaMalloc(&p, bytes), "cudaMalloc");
            check(cudaMemset(p, int(copies.size()), bytes), "cudaMemset");
            copies.push_back(p);
        }
        // Each copy's group scales, and one x (k = 2 · row_bytes bf16 elements; L2-resident as
        // the GEMV's is).
        std::vector<unsigned short*> scales;
        for (std::size_t i = 0; i < copies.size(); ++i) {
            unsigned short* p = nullptr;
            check(cudaMalloc(&p, bytes / 32), "cudaMalloc");
            check(cudaMemset(p, 0x3c, bytes / 32), "cudaMemset");
            scales.push_back(p);
        }
        uint4* x = nullptr;
        check(cudaMalloc(&x, std::size_t(row_bytes) * 4), "cudaMalloc");
        check(cudaMemset(x, 0x3f, std::size_t(row_bytes) * 4), "cudaMemset");
        // As time_calls(): launches cycling over the copies, timed in a CUDA graph.
        cudaStream_t stream;
        check(cudaStreamCreate(&stream), "cudaStreamCreate");
        auto time = [&](auto kernel) {
            check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                  "shared memory");
            const int block_rows = gemv::kWarps * kStreamRows;
            const dim3 grid((n + block_rows - 1) / block_rows, sl.used);
            int next = 0;
            return time_graph(stream, std::max<int>(copies.size(), 40), [&](cudaStream_t st) {
                const std::size_t c = next++ % copies.size();
                kernel<<<grid, gemv::kWarps * 32, smem, st>>>(
                    StreamArgs{copies[c], n, row_bytes, sl.per, x, scales[c], out});
            });
        };
        auto row = [&](int ahead, int work, const char* also, double s) {
            char shape[32];
            std::snprintf(shape, sizeof shape, "%dx%d (%d)", n, row_bytes, sl.used);
            std::printf("%-22s %6d %6d %-20s %10.2f %9.0f %5.0f%%\n", shape, ahead, work, also,
                        s * 1e6, bytes / s / 1e9, 100.0 * bytes / s / copy_bw);
        };
        row(1, 0, "", time(stream_kernel<1, 0>));
        row(3, 0, "", time(stream_kernel<3, 0>));
        row(1, 8, "", time(stream_kernel<1, 8>));
        row(3, 8, "", time(stream_kernel<3, 8>));
        row(1, 8, "x (L1)", time(stream_kernel<1, 8, XFrom::L1>));
        row(1, 8, "scales", time(stream_kernel<1, 8, XFrom::None, true>));
        row(1, 8, "x (L1), scales", time(stream_kernel<1, 8, XFrom::L1, true>));
        row(1, 8, "x (shared), scales", time(stream_kernel<1, 8, XFrom::Shared, true>));
        std::fflush(stdout);
        cudaStreamDestroy(stream);
        for (uint8_t* c : copies)
            cudaFree(c);
        for (unsigned short* c : scales)
            cudaFree(c);
        cudaFree(x);
    }
    cudaFree(out);
    return 0;
}

int run_chain(const std::string& model, bool shared, bool int4_only,
              cuda::LinearContext::RowGemv row_gemv) {
    // hidden, qkv rows (query + 2 · kv heads of 128), intermediate: mtdesk bench's --synthetic.
    int hidden = 0, qkv_rows = 0, inter = 0;
    if (model == "hy-mt-7b") {
        hidden = 4096, qkv_rows = (32 + 2 * 8) * 128, inter = 14336;
    } else if (model == "hy-mt1.5-1.8b") {
        hidden = 2048, qkv_rows = (16 + 2 * 4) * 128, inter = 6144;
    } else {
        std::fprintf(stderr, "--chain: hy-mt-7b or hy-mt1.5-1.8b, not %s\n", model.c_str());
        return 2;
    }
    constexpr int kLayers = 32;
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    const double copy_bw = copy_bandwidth();
    cuda::set_programmatic_launch(prop.major >= 9);
    std::printf("device: %s; copy bandwidth %.0f GB/s (read + write)\n", prop.name, copy_bw / 1e9);
    std::printf("%s: %d layers of qkv %dx%d, o %dx%d, gate/up %dx%d, down %dx%d at one row\n",
                model.c_str(), kLayers, qkv_rows, hidden, hidden, hidden, 2 * inter, hidden, hidden,
                inter);
    std::printf("%-5s %10s %10s %9s %6s\n", "fmt", "ms/pass", "us/layer", "weight GB", "%copy");
    cudaStream_t stream;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    cuda::LinearContext ctx = cuda::LinearContext::create(64u << 20);
    ctx.row_gemv = row_gemv;
    const std::vector<WeightFormat> formats =
        int4_only ? std::vector{WeightFormat::INT4}
                  : std::vector{WeightFormat::BF16, WeightFormat::INT8, WeightFormat::INT4};
    for (WeightFormat f : formats) {
        std::size_t bytes = 0;
        const double s =
            time_chain(hidden, qkv_rows, inter, kLayers, f, shared, ctx, stream, bytes);
        std::printf("%-5s %10.3f %10.2f %9.2f %5.0f%%\n", cuda::format_name(f), s * 1e3,
                    s * 1e6 / kLayers, bytes / 1e9, 100.0 * bytes / s / copy_bw);
        std::fflush(stdout);
    }
    cudaStreamDestroy(stream);
    return 0;
}

// One link of a chain of dependent kernels and nothing else: waits for the kernel before (PDL),
// then one load of what it wrote and one store, as a GEMV's x and its output.
__global__ void hop_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
    cuda::pdl_wait();
    cuda::pdl_launch_dependents();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}

// The same link handed over through device memory instead of griddepcontrol.wait (as a
// persistent kernel's grid barrier does): every block of the kernel before counts itself on
// `prev` after its store (__threadfence, atomicAdd), and this one's thread 0 polls that count
// with acquire loads until all `blocks` have. Launched with programmatic dependent launch all
// the same, so that it is resident when the count completes.
__global__ void hop_counter_kernel(const float* __restrict__ x, float* __restrict__ y, int n,
                                   const unsigned* prev, unsigned* self, unsigned blocks) {
    if (prev) {
        if (threadIdx.x == 0) {
            unsigned seen = 0;
            do {
                asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
                             : "=r"(seen)
                             : "l"(prev)
                             : "memory");
            } while (seen < blocks);
        }
        __syncthreads();
    }
    cuda::pdl_launch_dependents();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(self, 1u);
    }
}

// What a kernel boundary costs in a chain like a decode step's: 256 hop_kernels in one CUDA
// graph with programmatic dependent launch, for grids of 1 to 528 blocks of 128 threads (a
// one-row GEMV's grids: 132 SMs × 4 blocks), in µs a kernel; the same without it, and the
// hand-over through arrival counters in memory (hop_counter_kernel; the counters zeroed at the
// start of each replay).
int run_boundaries() {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    cuda::set_programmatic_launch(prop.major >= 9);
    std::printf("device: %s, %d SMs; chains of 256 dependent kernels\n", prop.name,
                prop.multiProcessorCount);
    std::printf("%8s %12s %12s %14s\n", "blocks", "us (PDL)", "us (plain)", "us (counters)");
    constexpr int kChain = 256, kThreads = 128, kMaxBlocks = 528;
    float *a = nullptr, *b = nullptr;
    unsigned* counters = nullptr;
    check(cudaMalloc(&a, kMaxBlocks * kThreads * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&b, kMaxBlocks * kThreads * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&counters, kChain * sizeof(unsigned)), "cudaMalloc");
    check(cudaMemset(a, 0, kMaxBlocks * kThreads * sizeof(float)), "cudaMemset");
    cudaStream_t stream;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    for (int blocks : {1, 16, 132, 264, 528}) {
        double us[3];
        const int n = blocks * kThreads;
        for (int pdl = 1; pdl >= 0; --pdl) {
            cuda::set_programmatic_launch(pdl && prop.major >= 9);
            us[1 - pdl] = 1e6 * time_graph(stream, kChain, [&](cudaStream_t s) {
                              cuda::launch(hop_kernel, dim3(blocks), dim3(kThreads), 0, s, a, b, n);
                              std::swap(a, b);
                          });
        }
        cuda::set_programmatic_launch(prop.major >= 9);
        int link = 0;  // position in the captured chain
        us[2] = 1e6 * time_graph(stream, kChain, [&](cudaStream_t s) {
                    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
                    check(cudaStreamIsCapturing(s, &capturing), "cudaStreamIsCapturing");
                    const int k = capturing == cudaStreamCaptureStatusActive ? link++ : 0;
                    if (k == 0)
                        check(cudaMemsetAsync(counters, 0, kChain * sizeof(unsigned), s),
                              "cudaMemsetAsync");
                    cuda::launch(hop_counter_kernel, dim3(blocks), dim3(kThreads), 0, s, a, b, n,
                                 k > 0 ? static_cast<const unsigned*>(counters + k - 1) : nullptr,
                                 counters + k, static_cast<unsigned>(blocks));
                    std::swap(a, b);
                });
        std::printf("%8d %12.2f %12.2f %14.2f\n", blocks, us[0], us[1], us[2]);
    }
    cudaStreamDestroy(stream);
    cudaFree(a);
    cudaFree(b);
    cudaFree(counters);
    return 0;
}

// ---- --l2: what L2 keeps of weights asked into it ----

// Reads n 16-byte words with a grid-stride loop (one load in flight a thread, as latency-bound
// as a GEMV's loads), keeping the result alive through a store that never happens.
__global__ void l2_read_kernel(const uint4* __restrict__ w, std::size_t n, uint32_t* out) {
    uint32_t acc = 0;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
         i += std::size_t{gridDim.x} * blockDim.x) {
        uint4 v;
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(w + i));
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) out[0] = acc;
}

// Asks L2 for `bytes` at p: cp.async.bulk.prefetch.L2 of `piece`-byte pieces (sm_90), or
// prefetch.global.L2 of one 128-byte line a thread when piece == 0.
__global__ void l2_ask_kernel(const char* p, std::size_t bytes, uint32_t piece) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const std::size_t unit = piece ? piece : 128;
    const std::size_t n = (bytes + unit - 1) / unit;
    for (std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; c < n;
         c += std::size_t{gridDim.x} * blockDim.x) {
        if (piece) {
            const auto size =
                static_cast<uint32_t>(bytes - c * piece < piece ? bytes - c * piece : piece);
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p + c * piece),
                         "r"(size)
                         : "memory");
        } else {
            asm volatile("prefetch.global.L2 [%0];" ::"l"(p + c * 128));
        }
    }
#endif
}

// Waits `ns` nanoseconds of the GPU's global timer.
__global__ void l2_wait_kernel(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

// Host time of a call that enqueues GPU work, and of it with the work done (synchronised), µs.
template <typename F>
std::pair<double, double> host_us(F&& call) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const auto t1 = std::chrono::steady_clock::now();
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const auto t2 = std::chrono::steady_clock::now();
    return {std::chrono::duration<double, std::micro>(t1 - t0).count(),
            std::chrono::duration<double, std::micro>(t2 - t0).count()};
}

int run_first_calls() {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    std::printf("device: %s; µs of host time to enqueue (and with the GEMM done)\n", prop.name);
    const int shapes[][3] = {{1024, 6144, 4096},  {1024, 4096, 4096}, {1024, 28672, 4096},
                             {1024, 4096, 14336}, {45, 6144, 4096},   {497, 28672, 4096},
                             {498, 28672, 4096},  {700, 4096, 4096}};
    const std::size_t max_w = std::size_t{28672} * 4096, max_x = std::size_t{1024} * 14336;
    __nv_bfloat16 *w = nullptr, *x = nullptr, *y = nullptr;
    check(cudaMalloc(&w, max_w * 2), "cudaMalloc");
    check(cudaMalloc(&x, max_x * 2), "cudaMalloc");
    check(cudaMalloc(&y, std::size_t{1024} * 28672 * 2), "cudaMalloc");
    check(cudaMemset(w, 0, max_w * 2), "cudaMemset");
    check(cudaMemset(x, 0, max_x * 2), "cudaMemset");
    void* ws = nullptr;
    check(cudaMalloc(&ws, cuda::kGemmWorkspaceBytes), "cudaMalloc");
    cublasHandle_t h = nullptr;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS ||
        cublasSetWorkspace(h, ws, cuda::kGemmWorkspaceBytes) != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "cuBLAS setup failed\n");
        return 1;
    }
    cuda::LinearContext ctx(nullptr, 0, ws, cuda::kGemmWorkspaceBytes);
    std::printf("%6s %6s %6s %24s %24s %24s %24s\n", "m", "n", "k", "GemmEx first", "second",
                "linear() first", "second");
    for (const auto& sh : shapes) {
        const int m = sh[0], n = sh[1], k = sh[2];
        const float one = 1.0f, zero = 0.0f;
        auto gemm_ex = [&] {
            cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, w, CUDA_R_16BF, k, x,
                         CUDA_R_16BF, k, &zero, y, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT);
        };
        const cuda::DeviceLinear lin = cuda::DeviceLinear::random(n, k, WeightFormat::BF16, 7);
        auto via_linear = [&] { cuda::linear<__nv_bfloat16>(lin, x, y, m, ctx, nullptr); };
        const auto a = host_us(gemm_ex), b = host_us(gemm_ex);
        const auto c = host_us(via_linear), d = host_us(via_linear);
        std::printf("%6d %6d %6d %10.1f (%10.1f) %10.1f (%10.1f) %10.1f (%10.1f) %10.1f (%10.1f)\n",
                    m, n, k, a.first, a.second, b.first, b.second, c.first, c.second, d.first,
                    d.second);
    }
    cublasDestroy(h);
    cudaFree(ws);
    cudaFree(w);
    cudaFree(x);
    cudaFree(y);
    return 0;
}

int run_l2() {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    if (prop.major < 9) {
        std::fprintf(stderr, "--l2 needs sm_90 (cp.async.bulk.prefetch.L2)\n");
        return 1;
    }
    const int sms = prop.multiProcessorCount;
    std::printf("device: %s, %d SMs, L2 %d MiB; best of 5, µs\n", prop.name, sms,
                prop.l2CacheSize >> 20);
    constexpr std::size_t kFlush = 512ull << 20, kMax = 48ull << 20;
    char *flush = nullptr, *w = nullptr;
    uint32_t* sink = nullptr;
    check(cudaMalloc(&flush, kFlush), "cudaMalloc");
    check(cudaMalloc(&w, kMax), "cudaMalloc");
    check(cudaMalloc(&sink, 4), "cudaMalloc");
    check(cudaMemset(flush, 1, kFlush), "cudaMemset");
    check(cudaMemset(w, 2, kMax), "cudaMemset");
    cudaEvent_t ev[4];
    for (cudaEvent_t& e : ev)
        check(cudaEventCreate(&e), "cudaEventCreate");
    const dim3 read_grid(4 * sms), read_block(512);
    const char* names[] = {"cold", "warm", "bulk 64K", "bulk 256K", "bulk 1M, 1 block", "lines"};
    std::printf("%7s %-17s %12s %12s %10s\n", "MiB", "asked by", "asking", "read", "GB/s");
    for (std::size_t mib : {4, 8, 16, 24, 32, 48}) {
        const std::size_t bytes = mib << 20;
        for (int mode = 0; mode < 6; ++mode) {
            float ask = 1e9f, read = 1e9f;
            for (int rep = 0; rep < 5; ++rep) {
                l2_read_kernel<<<read_grid, read_block>>>(reinterpret_cast<const uint4*>(flush),
                                                          kFlush / 16, sink);
                if (mode == 1)
                    l2_read_kernel<<<read_grid, read_block>>>(reinterpret_cast<const uint4*>(w),
                                                              bytes / 16, sink);
                check(cudaEventRecord(ev[0]), "cudaEventRecord");
                if (mode == 2) l2_ask_kernel<<<sms, 32>>>(w, bytes, 64 << 10);
                if (mode == 3) l2_ask_kernel<<<sms, 32>>>(w, bytes, 256 << 10);
                if (mode == 4) l2_ask_kernel<<<1, 32>>>(w, bytes, 1 << 20);
                if (mode == 5) l2_ask_kernel<<<4 * sms, 256>>>(w, bytes, 0);
                check(cudaEventRecord(ev[1]), "cudaEventRecord");
                l2_wait_kernel<<<1, 32>>>(40000);
                check(cudaEventRecord(ev[2]), "cudaEventRecord");
                l2_read_kernel<<<read_grid, read_block>>>(reinterpret_cast<const uint4*>(w),
                                                          bytes / 16, sink);
                check(cudaEventRecord(ev[3]), "cudaEventRecord");
                check(cudaEventSynchronize(ev[3]), "cudaEventSynchronize");
                float a = 0, r = 0;
                check(cudaEventElapsedTime(&a, ev[0], ev[1]), "cudaEventElapsedTime");
                check(cudaEventElapsedTime(&r, ev[2], ev[3]), "cudaEventElapsedTime");
                ask = std::min(ask, a);
                read = std::min(read, r);
            }
            std::printf("%7zu %-17s %12.1f %12.1f %10.0f\n", mib, names[mode], ask * 1e3,
                        read * 1e3, bytes / (read * 1e-3) / 1e9);
        }
    }
    for (cudaEvent_t e : ev)
        cudaEventDestroy(e);
    cudaFree(flush);
    cudaFree(w);
    cudaFree(sink);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 3 && std::string(argv[1]) == "--chain") {
        bool shared = false, int4_only = false;
        using RowGemv = cuda::LinearContext::RowGemv;
        RowGemv row_gemv = RowGemv::Auto;
        for (int i = 3; i < argc; ++i) {
            const std::string a = argv[i];
            if (a == "--shared-weights")
                shared = true;
            else if (a == "--int4")
                int4_only = true;
            else if (a == "--xreg" || a == "--no-xreg")
                row_gemv = a == "--xreg" ? RowGemv::XInRegisters : RowGemv::RoundsPerWarp;
            else {
                std::fprintf(stderr, "--chain: unknown option %s\n", a.c_str());
                return 2;
            }
        }
        return run_chain(argv[2], shared, int4_only, row_gemv);
    }
    if (argc == 2 && std::string(argv[1]) == "--boundaries") return run_boundaries();
    if (argc == 2 && std::string(argv[1]) == "--stream") return run_stream();
    if (argc == 2 && std::string(argv[1]) == "--l2") return run_l2();
    if (argc == 2 && std::string(argv[1]) == "--first-calls") return run_first_calls();
    std::vector<std::pair<int, int>> shapes = {{4096, 4096}, {12288, 4096}, {4096, 12288}};
    std::vector<int> ms = {1, 2, 4, 8, 12, 16, 24, 32, 64};
    bool fp16 = false, pdl = true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--m" && i + 1 < argc) {
            ms = parse_list(argv[++i]);
        } else if (a == "--shapes" && i + 1 < argc) {
            shapes.clear();
            std::stringstream ss(argv[++i]);
            std::string item;
            while (std::getline(ss, item, ',')) {
                const auto x = item.find('x');
                shapes.emplace_back(std::stoi(item.substr(0, x)), std::stoi(item.substr(x + 1)));
            }
        } else if (a == "--fp16") {
            fp16 = true;
        } else if (a == "--no-pdl") {
            pdl = false;
        } else {
            std::fprintf(stderr,
                         "usage: %s [--shapes NxK,...] [--m 1,8,64] [--fp16] [--no-pdl]\n"
                         "       %s --chain hy-mt-7b|hy-mt1.5-1.8b [--shared-weights] [--int4]\n"
                         "             [--xreg | --no-xreg]\n"
                         "       %s --stream\n"
                         "       %s --boundaries\n"
                         "       %s --l2\n"
                         "       %s --first-calls\n",
                         argv[0], argv[0], argv[0], argv[0], argv[0], argv[0]);
            return 2;
        }
    }

    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    const double copy_bw = copy_bandwidth();
    cuda::set_programmatic_launch(pdl && prop.major >= 9);
    std::printf("device: %s, %d SMs, L2 %d MiB; copy bandwidth %.0f GB/s (read + write)\n",
                prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, copy_bw / 1e9);
    std::printf("activations: %s; GB/s counts weight + x + y bytes once per call\n\n",
                fp16 ? "fp16" : "bf16");
    std::printf("%-12s %-5s %4s %-8s %10s %9s %6s %8s\n", "n x k", "fmt", "m", "path", "us/call",
                "GB/s", "%copy", "TFLOP/s");

    cudaStream_t stream;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    const int max_m = *std::max_element(ms.begin(), ms.end());
    std::size_t ws_bytes = 0;
    for (auto [n, k] : shapes)
        ws_bytes = std::max(ws_bytes, std::size_t(n) * (k + 128) * 2);
    cuda::LinearContext ctx = cuda::LinearContext::create(ws_bytes + (64u << 20));

    std::mt19937 rng(1);
    std::normal_distribution<float> dist(0.0f, 0.02f);
    for (auto [n, k] : shapes) {
        std::vector<float> w(std::size_t(n) * k);
        for (float& v : w)
            v = dist(rng);
        std::vector<uint16_t> xbits(std::size_t(max_m) * k);
        for (std::size_t i = 0; i < xbits.size(); ++i) {
            const float v = dist(rng) * 50;
            xbits[i] = fp16 ? fp32_to_fp16_bits(v)
                            : static_cast<uint16_t>(std::bit_cast<uint32_t>(v) >> 16);
        }
        void *x = nullptr, *y = nullptr;
        check(cudaMalloc(&x, xbits.size() * 2), "cudaMalloc x");
        check(cudaMalloc(&y, std::size_t(max_m) * n * 2), "cudaMalloc y");
        check(cudaMemcpy(x, xbits.data(), xbits.size() * 2, cudaMemcpyHostToDevice), "copy x");

        for (WeightFormat f : {fp16 ? WeightFormat::FP16 : WeightFormat::BF16, WeightFormat::INT8,
                               WeightFormat::INT4}) {
            std::vector<cuda::DeviceLinear> copies;
            QuantizedTensor q;
            if (f == WeightFormat::INT8) q = quantize_int8(w, n, k);
            if (f == WeightFormat::INT4) q = quantize_int4(w, n, k);
            const bool is_int = f == WeightFormat::INT8 || f == WeightFormat::INT4;
            // Copies enough to exceed L2 four times over.
            std::size_t total = 0;
            while (total < 4 * std::size_t(prop.l2CacheSize) || copies.size() < 2) {
                copies.push_back(is_int ? cuda::DeviceLinear::upload(q)
                                        : cuda::DeviceLinear::upload(w, n, k, f));
                total += copies.back().device_bytes();
            }
            const std::size_t wbytes = copies.front().device_bytes();
            for (int m : ms) {
                // INT4 at one row, paths 3-8 force a kernel: x in registers with xreg_shape's
                // rounds per slice, with 4 and with 2, at xreg_shape's blocks a multiprocessor
                // and at 4 and 2 with its rounds; rounds per warp.
                using RowGemv = cuda::LinearContext::RowGemv;
                static const char* const kRowNames[] = {"tc-xreg",    "tc-xreg4",   "tc-xreg2",
                                                        "tc-xreg-b4", "tc-xreg-b2", "tc-rounds"};
                constexpr int kRowPaths = static_cast<int>(std::size(kRowNames));
                const int paths =
                    is_int ? (f == WeightFormat::INT4 && m == 1 ? 3 + kRowPaths : 3) : 2;
                for (int p = 0; p < paths; ++p) {
                    const int path = p >= 3 ? 0 : p;
                    ctx.row_gemv = p < 3                   ? RowGemv::Auto
                                   : p < 3 + kRowPaths - 1 ? RowGemv::XInRegisters
                                                           : RowGemv::RoundsPerWarp;
                    ctx.row_gemv_rounds_per_split = p == 4 ? 4 : p == 5 ? 2 : 0;
                    ctx.row_gemv_blocks_per_sm = p == 6 ? 4 : p == 7 ? 2 : 0;
                    ctx.gemv_max_m = path < 2 ? (1 << 30) : 0;
                    ctx.f16_gemv_max_m = !is_int && path == 1 ? (1 << 30) : 0;
                    ctx.f16_gemv_any_shape = true;
                    ctx.tensor_core_gemv = path == 0;
                    ctx.tensor_core_min_m = path == 0 ? 1 : 0;  // "gemv-tc" at every m
                    const double s =
                        fp16 ? time_calls(copies, static_cast<const __half*>(x),
                                          static_cast<__half*>(y), m, ctx, stream)
                             : time_calls(copies, static_cast<const __nv_bfloat16*>(x),
                                          static_cast<__nv_bfloat16*>(y), m, ctx, stream);
                    const double bytes = double(wbytes) + 2.0 * m * (double(k) + n);
                    const std::string path_name = !is_int     ? (path == 0 ? "cublas" : "gemv")
                                                  : p >= 3    ? kRowNames[p - 3]
                                                  : path == 0 ? "gemv-tc"
                                                  : path == 1 ? "gemv"
                                                              : "deq+gemm";
                    std::printf("%5dx%-6d %-5s %4d %-8s %10.2f %9.0f %5.0f%% %8.2f\n", n, k,
                                cuda::format_name(f), m, path_name.c_str(), s * 1e6,
                                bytes / s / 1e9, 100.0 * bytes / s / copy_bw,
                                2.0 * m * n * k / s / 1e12);
                }
            }
            std::fflush(stdout);
        }
        cudaFree(x);
        cudaFree(y);
    }
    cudaStreamDestroy(stream);
    return 0;
}
