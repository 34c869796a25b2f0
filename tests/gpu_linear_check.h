#pragma once
// One case of the GPU linear layer checked against the CPU reference: random W and x, the
// layer uploaded in a format, y = linear<T>(x) on the device, compared with the CPU product of
// exactly what the device was given (x rounded to T; W rounded to bf16/fp16, or quantised).
// Plain C++ (no Qt), so the same checks also run from a standalone driver.
//
// The comparison, per output element i (u = unit roundoff of T: 2^-8 for bf16, 2^-11 for fp16):
//   |y_gpu - y_ref| <= u·|y_ref| + (u + k·2^-23)·Σ_k |x_k·w_k| + tiny
// (T's output rounding, the prefill path's rounding of the dequantised weight to T, fp32
// summation in any order): a rigorous bound, loose for long rows; plus a statistical one that
// catches a few wrong weights among thousands: rms over outputs of (y_gpu - y_ref) <= 2u · rms of
// sqrt(Σ_k (x_k·w_k)²), the size of both y and its rounding errors for random data.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda/linear_cuda.h"
#include "mtdesk/model/dtype.h"
#include "mtdesk/quant/quantize.h"

namespace mtdesk::test {

struct LinearCase {
    cuda::WeightFormat format = cuda::WeightFormat::INT8;
    bool bf16 = true;  ///< activations: __nv_bfloat16, else __half
    int m = 1, n = 1, k = 1;
    uint32_t seed = 1;
    int x_offset = 0;  ///< x starts this many elements into its buffer (0: 256-byte aligned)
    bool prequantised = false;  ///< upload(QuantizedTensor) instead of upload(w, format)
};

struct LinearResult {
    std::string failure;      ///< empty when the case passed
    double max_excess = 0;    ///< max |err| / bound
    double rms_ratio = 0;     ///< rms(err) / rms(sqrt(Σ (x·w)²))
    std::vector<uint16_t> y;  ///< the device's output bits (for determinism checks)
};

inline uint16_t to_bf16_bits(float f) {
    const uint32_t u = std::bit_cast<uint32_t>(f);
    return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

inline std::string case_name(const LinearCase& c) {
    return std::string(cuda::format_name(c.format)) + (c.bf16 ? "/bf16" : "/fp16") +
           " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
           (c.x_offset ? " x+" + std::to_string(c.x_offset) : "") +
           (c.prequantised ? " prequantised" : "");
}

inline std::string cuda_status(cudaError_t e) {
    return e == cudaSuccess ? std::string() : std::string(cudaGetErrorString(e));
}

/// Runs `c` with `ctx` (its gemv_max_m picks the path). Returns the failure text, if any.
inline LinearResult run_linear_case(const LinearCase& c, cuda::LinearContext& ctx) {
    LinearResult res;
    std::mt19937 rng(c.seed);
    std::normal_distribution<float> wd(0.0f, 0.05f);
    std::uniform_real_distribution<float> xd(-1.0f, 1.0f);
    std::vector<float> w(static_cast<std::size_t>(c.n) * c.k);
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = wd(rng) * (i % 61 == 0 ? 6.0f : 1.0f);
    std::vector<uint16_t> xbits(static_cast<std::size_t>(c.m) * c.k);
    std::vector<float> xf(xbits.size());
    for (std::size_t i = 0; i < xbits.size(); ++i) {
        const float v = xd(rng);
        xbits[i] = c.bf16 ? to_bf16_bits(v) : fp32_to_fp16_bits(v);
        xf[i] = c.bf16 ? bf16_to_fp32(xbits[i]) : fp16_to_fp32(xbits[i]);
    }

    // What the device holds, in fp32.
    std::vector<float> wdev;
    cuda::DeviceLinear dw;
    switch (c.format) {
        case cuda::WeightFormat::BF16:
        case cuda::WeightFormat::FP16: {
            const bool b = c.format == cuda::WeightFormat::BF16;
            wdev.resize(w.size());
            for (std::size_t i = 0; i < w.size(); ++i)
                wdev[i] =
                    b ? bf16_to_fp32(to_bf16_bits(w[i])) : fp16_to_fp32(fp32_to_fp16_bits(w[i]));
            dw = cuda::DeviceLinear::upload(w, c.n, c.k, c.format);
            break;
        }
        case cuda::WeightFormat::INT8:
        case cuda::WeightFormat::INT4: {
            QuantizedTensor q;
            if (c.format == cuda::WeightFormat::INT8)
                q = quantize_int8(w, c.n, c.k);
            else
                q = quantize_int4(w, c.n, c.k);
            wdev = dequantize(q);
            dw = c.prequantised ? cuda::DeviceLinear::upload(q)
                                : cuda::DeviceLinear::upload(w, c.n, c.k, c.format);
            break;
        }
    }
    const std::vector<float> ref = linear_reference_dense(wdev, c.n, c.k, xf, c.m);

    // Device buffers (x placed c.x_offset elements into an aligned allocation).
    void* dx = nullptr;
    void* dy = nullptr;
    const std::size_t xbytes = (xbits.size() + c.x_offset) * 2, ybytes = ref.size() * 2;
    std::string err = cuda_status(cudaMalloc(&dx, std::max<std::size_t>(xbytes, 2)));
    if (err.empty()) err = cuda_status(cudaMalloc(&dy, std::max<std::size_t>(ybytes, 2)));
    uint16_t* xdev = static_cast<uint16_t*>(dx) + c.x_offset;
    if (err.empty())
        err = cuda_status(cudaMemcpy(xdev, xbits.data(), xbits.size() * 2, cudaMemcpyHostToDevice));
    if (err.empty()) err = cuda_status(cudaMemset(dy, 0xff, std::max<std::size_t>(ybytes, 2)));
    res.y.assign(ref.size(), 0);
    if (err.empty()) {
        try {
            if (c.bf16)
                cuda::linear<__nv_bfloat16>(dw, reinterpret_cast<const __nv_bfloat16*>(xdev),
                                            static_cast<__nv_bfloat16*>(dy), c.m, ctx, nullptr);
            else
                cuda::linear<__half>(dw, reinterpret_cast<const __half*>(xdev),
                                     static_cast<__half*>(dy), c.m, ctx, nullptr);
            err = cuda_status(cudaDeviceSynchronize());
            if (err.empty())
                err = cuda_status(cudaMemcpy(res.y.data(), dy, ybytes, cudaMemcpyDeviceToHost));
        } catch (const std::exception& e) {
            err = e.what();
        }
    }
    cudaFree(dx);
    cudaFree(dy);
    if (!err.empty()) {
        res.failure = case_name(c) + ": " + err;
        return res;
    }

    const double u = c.bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
    double err2 = 0, scale2 = 0;
    std::size_t worst = 0;
    for (int i = 0; i < c.m; ++i) {
        for (int j = 0; j < c.n; ++j) {
            const std::size_t o = static_cast<std::size_t>(i) * c.n + j;
            double abs_sum = 0, sq_sum = 0;
            for (int t = 0; t < c.k; ++t) {
                const double p =
                    double(xf[std::size_t(i) * c.k + t]) * wdev[std::size_t(j) * c.k + t];
                abs_sum += std::fabs(p);
                sq_sum += p * p;
            }
            const double got = c.bf16 ? bf16_to_fp32(res.y[o]) : fp16_to_fp32(res.y[o]);
            const double e = std::fabs(got - ref[o]);
            const double bound =
                u * std::fabs(ref[o]) + (u + c.k * std::ldexp(1.0, -23)) * abs_sum + 1e-6;
            const double ratio = std::isnan(e) ? INFINITY : e / bound;
            if (ratio > res.max_excess) {
                res.max_excess = ratio;
                worst = o;
            }
            err2 += std::isnan(e) ? INFINITY : e * e;
            scale2 += sq_sum;  // random-sign sums: |y| and rounding errors scale with this
        }
    }
    res.rms_ratio = scale2 > 0 ? std::sqrt(err2 / scale2) : std::sqrt(err2);
    // The statistical check needs many outputs of long rows to be meaningful.
    const bool statistical = static_cast<long>(c.m) * c.n >= 32 && c.k >= 64;
    const double rms_limit = 2.0 * u;
    if (res.max_excess > 1.0 || (statistical && !(res.rms_ratio <= rms_limit))) {
        const float got = c.bf16 ? bf16_to_fp32(res.y[worst]) : fp16_to_fp32(res.y[worst]);
        res.failure = case_name(c) + ": max error / bound " + std::to_string(res.max_excess) +
                      " (y[" + std::to_string(worst / c.n) + ", " + std::to_string(worst % c.n) +
                      "] = " + std::to_string(got) + ", expected " + std::to_string(ref[worst]) +
                      "), rms error / rms scale " + std::to_string(res.rms_ratio) + " (limit " +
                      std::to_string(rms_limit) + ")";
    }
    return res;
}

/// A case and the path it is run on (LinearContext::gemv_max_m, tensor_core_gemv,
/// f16_gemv_max_m).
struct PathCase {
    LinearCase c;
    int gemv_max_m = cuda::kGemvMaxM;
    bool tensor_cores = true;
    int f16_gemv_max_m = cuda::kF16GemvMaxM;
    int f16_gemv_rows = 0;
};

/// Every format × activation type × m ∈ {1, 2, 7, 16, 17, 33, 63, 64, 200} × shapes with odd n and
/// k, k not a multiple of 8, 16 or 128, n = 1, and a long k with few rows (split-K). INT8/INT4 run
/// on all three paths (GEMV forced with gemv_max_m = 1 << 30, on the tensor cores where the
/// shape allows and on the SIMT kernel; dequantise + cuBLAS with 0), BF16/FP16 on both of theirs
/// (the SIMT GEMV forced where k % 8 == 0, at one row with 4 and 6 rows per warp, and cuBLAS).
inline std::vector<PathCase> standard_linear_cases() {
    using cuda::WeightFormat;
    struct Shape {
        int n, k;
    };
    const Shape shapes[] = {{1, 1},      {3, 5},     {17, 200}, {64, 128},  {129, 257},
                            {256, 1000}, {40, 8192}, {1, 4096}, {1024, 256}};
    // 17 and 33: the tensor-core GEMV with x staged in shared memory, two and four tiles with
    // rows past m; 63, 64: four tiles; 200: several slices.
    const int ms[] = {1, 2, 7, 16, 17, 33, 63, 64, 200};
    struct Combo {
        WeightFormat f;
        bool bf16;
    };
    const Combo combos[] = {{WeightFormat::BF16, true}, {WeightFormat::FP16, false},
                            {WeightFormat::INT8, true}, {WeightFormat::INT8, false},
                            {WeightFormat::INT4, true}, {WeightFormat::INT4, false}};
    std::vector<PathCase> out;
    uint32_t seed = 1;
    for (const Combo& combo : combos) {
        for (const Shape& s : shapes) {
            for (int m : ms) {
                LinearCase c;
                c.format = combo.f;
                c.bf16 = combo.bf16;
                c.m = m;
                c.n = s.n;
                c.k = s.k;
                c.seed = seed++;
                if (combo.f == WeightFormat::BF16 || combo.f == WeightFormat::FP16) {
                    out.push_back({c, cuda::kGemvMaxM, true, 1 << 30, 4});
                    if (m == 1) out.push_back({c, cuda::kGemvMaxM, true, 1 << 30, 6});
                    out.push_back({c, cuda::kGemvMaxM, true, 0});
                } else {
                    out.push_back({c, 1 << 30, true});
                    out.push_back({c, 1 << 30, false});
                    out.push_back({c, 0});
                }
            }
        }
    }
    return out;
}

}  // namespace mtdesk::test
