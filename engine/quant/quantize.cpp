// Weight-only quantisation (INT8 per row, INT4 per group) and the CPU reference product.
// Plain C++ on purpose (no fmt, no BLAS): the CUDA test and benchmark build it on its own.

#include "mtdesk/quant/quantize.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/model/dtype.h"

namespace mtdesk {
namespace {

constexpr float kFp16Max = 65504.0f;

void check_shape(std::size_t size, int n, int k, const char* what) {
    if (n <= 0 || k <= 0)
        throw Error(std::string(what) + ": shape [" + std::to_string(n) + ", " + std::to_string(k) +
                    "] is not positive");
    if (size != static_cast<std::size_t>(n) * static_cast<std::size_t>(k))
        throw Error(std::string(what) + ": " + std::to_string(size) + " values given for a [" +
                    std::to_string(n) + ", " + std::to_string(k) + "] weight");
}

void check_finite(float v, int row, int col, const char* what) {
    if (!std::isfinite(v))
        throw Error(std::string(what) + ": weight (" + std::to_string(row) + ", " +
                    std::to_string(col) + ") is not finite");
}

// Scale for a block whose largest magnitude is `amax` on a grid of ±qmax: amax / qmax rounded
// up to fp16 (0 for an all-zero block).
float block_scale(float amax, float qmax, int row, const char* what) {
    if (amax == 0.0f) return 0.0f;
    const float s = amax / qmax;
    if (!(s <= kFp16Max))
        throw Error(std::string(what) + ": row " + std::to_string(row) +
                    " has weights too large for an fp16 scale (max |w| = " + std::to_string(amax) +
                    ")");
    return fp16_round_up(s);
}

int quantize_value(float w, float scale, int qmax) {
    if (scale == 0.0f) return 0;
    // std::nearbyint rounds half to even in the default rounding mode.
    const float r = std::nearbyint(w / scale);
    return static_cast<int>(std::clamp(r, static_cast<float>(-qmax), static_cast<float>(qmax)));
}

bool exact_fp16(float s) {
    return fp16_to_fp32(fp32_to_fp16_bits(s)) == s;
}

void check_scales(const std::vector<float>& scales, const char* what) {
    for (std::size_t i = 0; i < scales.size(); ++i) {
        const float s = scales[i];
        if (!std::isfinite(s) || s < 0.0f || !exact_fp16(s))
            throw Error(std::string(what) + ": scale " + std::to_string(i) + " (" +
                        std::to_string(s) + ") is not a non-negative fp16 value");
    }
}

void check_product_sizes(int n, int k, std::size_t x_size, int m, std::size_t y_size) {
    if (m < 0) throw Error("linear_reference: m = " + std::to_string(m) + " is negative");
    const std::size_t mm = static_cast<std::size_t>(m);
    if (x_size != mm * static_cast<std::size_t>(k) || y_size != mm * static_cast<std::size_t>(n))
        throw Error("linear_reference: x holds " + std::to_string(x_size) + " and y " +
                    std::to_string(y_size) + " values; expected " + std::to_string(mm * k) +
                    " and " + std::to_string(mm * n) + " for m = " + std::to_string(m) + ", W [" +
                    std::to_string(n) + ", " + std::to_string(k) + "]");
}

// y = x · deqᵀ for a dequantised [n, k] matrix (double accumulation).
void product(const std::vector<float>& deq, int n, int k, std::span<const float> x, int m,
             std::span<float> y) {
    for (int i = 0; i < m; ++i) {
        const float* xr = x.data() + static_cast<std::size_t>(i) * k;
        for (int j = 0; j < n; ++j) {
            const float* wr = deq.data() + static_cast<std::size_t>(j) * k;
            double acc = 0.0;
            for (int c = 0; c < k; ++c)
                acc += static_cast<double>(xr[c]) * static_cast<double>(wr[c]);
            y[static_cast<std::size_t>(i) * n + j] = static_cast<float>(acc);
        }
    }
}

}  // namespace

uint16_t fp32_to_fp16_bits(float value) noexcept {
    const uint32_t x = std::bit_cast<uint32_t>(value);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    uint32_t a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) {  // inf, NaN (quiet, payload's top bits kept)
        return sign | 0x7c00u | (a > 0x7f800000u ? (0x200u | ((a >> 13) & 0x3ffu)) : 0u);
    }
    if (a >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to inf
    if (a < 0x38800000u) {
        // Below 2^-14: an fp16 subnormal (or zero), in units of 2^-24. Scaling by 2^24 is
        // exact; nearbyint rounds half to even.
        const float units = std::bit_cast<float>(a) * 16777216.0f;
        return sign | static_cast<uint16_t>(std::nearbyint(units));
    }
    // Normal: round the 23-bit mantissa to 10 bits, half to even; a carry into the exponent is
    // the right result, and re-biasing the exponent (127 -> 15) is a subtraction.
    a += 0x0fffu + ((a >> 13) & 1u);
    a -= static_cast<uint32_t>(127 - 15) << 23;
    return sign | static_cast<uint16_t>(a >> 13);
}

float fp16_round_up(float value) {
    if (!std::isfinite(value) || value < 0.0f || value > kFp16Max)
        throw Error("fp16_round_up: " + std::to_string(value) + " is outside [0, 65504]");
    uint16_t h = fp32_to_fp16_bits(value);
    if (fp16_to_fp32(h) < value) ++h;  // next fp16 up (value <= 65504, so never inf)
    return fp16_to_fp32(h);
}

/// Runs fn(row) for rows 0 .. n-1 on the machine's cores in contiguous chunks (rows are
/// independent); the first exception by row order is rethrown, as a serial loop would.
template <typename Fn>
void for_each_row(int n, const Fn& fn) {
    const int threads =
        static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 64));
    const int chunks = std::max(1, std::min(threads, n / 64));
    if (chunks == 1) {
        for (int r = 0; r < n; ++r)
            fn(r);
        return;
    }
    std::vector<std::exception_ptr> errors(chunks);
    std::vector<std::thread> pool;
    for (int c = 0; c < chunks; ++c) {
        const int begin = static_cast<int>(static_cast<int64_t>(n) * c / chunks);
        const int end = static_cast<int>(static_cast<int64_t>(n) * (c + 1) / chunks);
        pool.emplace_back([&, c, begin, end] {
            try {
                for (int r = begin; r < end; ++r)
                    fn(r);
            } catch (...) {
                errors[c] = std::current_exception();
            }
        });
    }
    for (std::thread& t : pool)
        t.join();
    for (const std::exception_ptr& e : errors)
        if (e) std::rethrow_exception(e);
}

QuantizedInt8 quantize_int8(std::span<const float> w, int n, int k) {
    check_shape(w.size(), n, k, "quantize_int8");
    QuantizedInt8 out;
    out.n = n;
    out.k = k;
    out.q.resize(static_cast<std::size_t>(n) * k);
    out.scales.resize(n);
    for_each_row(n, [&](int r) {
        const float* row = w.data() + static_cast<std::size_t>(r) * k;
        float amax = 0.0f;
        for (int c = 0; c < k; ++c) {
            check_finite(row[c], r, c, "quantize_int8");
            amax = std::max(amax, std::fabs(row[c]));
        }
        const float s = block_scale(amax, 127.0f, r, "quantize_int8");
        out.scales[r] = s;
        int8_t* q = out.q.data() + static_cast<std::size_t>(r) * k;
        for (int c = 0; c < k; ++c)
            q[c] = static_cast<int8_t>(quantize_value(row[c], s, 127));
    });
    return out;
}

QuantizedInt4 quantize_int4(std::span<const float> w, int n, int k, int group) {
    check_shape(w.size(), n, k, "quantize_int4");
    if (group < 2 || group % 2 != 0)
        throw Error("quantize_int4: group size " + std::to_string(group) +
                    " is not an even number >= 2");
    QuantizedInt4 out;
    out.n = n;
    out.k = k;
    out.group = group;
    out.k_padded = static_cast<int>((static_cast<int64_t>(k) + group - 1) / group * group);
    const int groups = out.groups();
    const std::size_t row_bytes = static_cast<std::size_t>(out.k_padded) / 2;
    out.packed.assign(static_cast<std::size_t>(n) * row_bytes, 0);
    out.scales.resize(static_cast<std::size_t>(n) * groups);
    for_each_row(n, [&](int r) {
        const float* row = w.data() + static_cast<std::size_t>(r) * k;
        uint8_t* bytes = out.packed.data() + static_cast<std::size_t>(r) * row_bytes;
        for (int g = 0; g < groups; ++g) {
            const int begin = g * group;
            const int end = std::min(k, begin + group);  // the padding is zero: never the max
            float amax = 0.0f;
            for (int c = begin; c < end; ++c) {
                check_finite(row[c], r, c, "quantize_int4");
                amax = std::max(amax, std::fabs(row[c]));
            }
            const float s = block_scale(amax, 7.0f, r, "quantize_int4");
            out.scales[static_cast<std::size_t>(r) * groups + g] = s;
            for (int c = begin; c < end; ++c) {
                const uint8_t nibble = static_cast<uint8_t>(quantize_value(row[c], s, 7) & 0x0F);
                bytes[c / 2] |= static_cast<uint8_t>(c % 2 == 0 ? nibble : nibble << 4);
            }
        }
    });
    return out;
}

void validate(const QuantizedInt8& w) {
    if (w.n <= 0 || w.k <= 0)
        throw Error("INT8 weight: shape [" + std::to_string(w.n) + ", " + std::to_string(w.k) +
                    "] is not positive");
    if (w.q.size() != static_cast<std::size_t>(w.n) * w.k || w.scales.size() != std::size_t(w.n))
        throw Error("INT8 weight [" + std::to_string(w.n) + ", " + std::to_string(w.k) +
                    "]: holds " + std::to_string(w.q.size()) + " values and " +
                    std::to_string(w.scales.size()) + " scales");
    for (int8_t v : w.q)
        if (v == -128) throw Error("INT8 weight: value -128 is outside [-127, 127]");
    check_scales(w.scales, "INT8 weight");
}

void validate(const QuantizedInt4& w) {
    std::string shape = "[";  // built by appending: GCC 12 warns falsely on "[" + std::string
    shape += std::to_string(w.n);
    shape += ", ";
    shape += std::to_string(w.k);
    shape += "]";
    if (w.n <= 0 || w.k <= 0) throw Error("INT4 weight: shape " + shape + " is not positive");
    if (w.group < 2 || w.group % 2 != 0)
        throw Error("INT4 weight " + shape + ": group size " + std::to_string(w.group) +
                    " is not an even number >= 2");
    const int64_t padded = (static_cast<int64_t>(w.k) + w.group - 1) / w.group * w.group;
    if (w.k_padded != padded)
        throw Error("INT4 weight " + shape + ": k_padded is " + std::to_string(w.k_padded) +
                    ", expected " + std::to_string(padded));
    const std::size_t bytes = static_cast<std::size_t>(w.n) * (w.k_padded / 2);
    const std::size_t scales = static_cast<std::size_t>(w.n) * w.groups();
    if (w.packed.size() != bytes || w.scales.size() != scales)
        throw Error("INT4 weight " + shape + ": holds " + std::to_string(w.packed.size()) +
                    " bytes and " + std::to_string(w.scales.size()) + " scales, expected " +
                    std::to_string(bytes) + " and " + std::to_string(scales));
    check_scales(w.scales, "INT4 weight");
}

void validate(const QuantizedTensor& w) {
    std::visit([](const auto& t) { validate(t); }, w);
}

std::vector<float> dequantize(const QuantizedInt8& w) {
    validate(w);
    std::vector<float> out(static_cast<std::size_t>(w.n) * w.k);
    for (int r = 0; r < w.n; ++r)
        for (int c = 0; c < w.k; ++c)
            out[static_cast<std::size_t>(r) * w.k + c] = w.value(r, c);
    return out;
}

std::vector<float> dequantize(const QuantizedInt4& w) {
    validate(w);
    std::vector<float> out(static_cast<std::size_t>(w.n) * w.k);
    for (int r = 0; r < w.n; ++r)
        for (int c = 0; c < w.k; ++c)
            out[static_cast<std::size_t>(r) * w.k + c] = w.value(r, c);
    return out;
}

std::vector<float> dequantize(const QuantizedTensor& w) {
    return std::visit([](const auto& t) { return dequantize(t); }, w);
}

void linear_reference(const QuantizedInt8& w, std::span<const float> x, int m, std::span<float> y) {
    check_product_sizes(w.n, w.k, x.size(), m, y.size());
    product(dequantize(w), w.n, w.k, x, m, y);
}

void linear_reference(const QuantizedInt4& w, std::span<const float> x, int m, std::span<float> y) {
    check_product_sizes(w.n, w.k, x.size(), m, y.size());
    product(dequantize(w), w.n, w.k, x, m, y);
}

std::vector<float> linear_reference(const QuantizedTensor& w, std::span<const float> x, int m) {
    return std::visit(
        [&](const auto& t) {
            std::vector<float> y(static_cast<std::size_t>(std::max(m, 0)) * t.n);
            linear_reference(t, x, m, y);
            return y;
        },
        w);
}

std::vector<float> linear_reference_dense(std::span<const float> w, int n, int k,
                                          std::span<const float> x, int m) {
    check_shape(w.size(), n, k, "linear_reference_dense");
    std::vector<float> y(static_cast<std::size_t>(std::max(m, 0)) * n);
    check_product_sizes(n, k, x.size(), m, y.size());
    product(std::vector<float>(w.begin(), w.end()), n, k, x, m, y);
    return y;
}

}  // namespace mtdesk
