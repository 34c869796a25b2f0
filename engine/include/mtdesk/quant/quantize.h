#pragma once
// Weight-only quantisation of linear-layer weights, and the CPU reference of the quantised
// matrix product that the CUDA kernels are tested against.
//
// Weights are in PyTorch nn.Linear layout: W [n = out_features, k = in_features], row-major,
// y [m, n] = x [m, k] · Wᵀ.
//
// INT8 (W8A16): symmetric, one scale per output row: scale = max|w_row| / 127, rounded *up* to
// the next fp16 value; q = round-half-even(w / scale), in [-127, 127].
// INT4 (W4A16): symmetric, one scale per group of `group` (128) consecutive inputs of a row:
// scale = max|w_group| / 7, rounded up to fp16; q = round-half-even(w / scale), in [-7, 7] (the
// nibble's -8 is never produced, so the grid is symmetric around 0).
//
// Scales are held on the device as fp16, so the CPU side rounds them to fp16 too: every scale
// here is a float whose value is exactly an fp16 value, and dequantised weights (q · scale in
// fp32) are bit-identical on both sides. Rounding the scale up rather than to nearest means
// |w| / scale never exceeds 127 (7), so nothing is clipped and |w − q·scale| <= scale / 2 holds
// for every element, fp16 subnormal scales included. An all-zero row (group) gets scale 0 and
// q 0, and dequantises to exact zeros.
//
// The scheme is the usual round-to-nearest ("RTN") weight-only quantisation that GPTQ and AWQ
// use as their baseline, with llama.cpp's Q8_0/Q4_0-style symmetric scales.

#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "mtdesk/quant/tiers.h"

namespace mtdesk {

/// A W8A16 weight: int8 values and one scale per output row.
struct QuantizedInt8 {
    int n = 0;                  ///< rows (out_features)
    int k = 0;                  ///< columns (in_features)
    std::vector<int8_t> q;      ///< [n, k] row-major, each in [-127, 127]
    std::vector<float> scales;  ///< [n], >= 0, each exactly representable in fp16

    /// Dequantised element (row, col): q · scale in fp32.
    float value(int row, int col) const noexcept {
        return static_cast<float>(q[static_cast<std::size_t>(row) * k + col]) * scales[row];
    }
};

/// A W4A16 weight: int4 values packed two per byte, one scale per group of inputs.
///
/// Packing: each row is padded with zeros from `k` up to `k_padded` (the next multiple of
/// `group`); the row's elements 2j and 2j+1 share byte j, element 2j in the low nibble and 2j+1
/// in the high nibble, each as a 4-bit two's-complement number. Rows follow each other with no
/// gap: byte j of row r is packed[r · k_padded / 2 + j]. Read as a little-endian 32-bit word,
/// nibble i of word w of a row is element 8w + i.
struct QuantizedInt4 {
    int n = 0;                    ///< rows (out_features)
    int k = 0;                    ///< columns (in_features), before padding
    int group = kInt4GroupSize;   ///< inputs per scale; even, >= 2
    int k_padded = 0;             ///< k rounded up to a multiple of `group`
    std::vector<uint8_t> packed;  ///< [n, k_padded / 2]
    std::vector<float> scales;    ///< [n, k_padded / group], >= 0, each exact in fp16

    int groups() const noexcept { return group > 0 ? k_padded / group : 0; }
    /// The int4 value of element (row, col), col < k_padded, in [-8, 7].
    int q(int row, int col) const noexcept {
        const uint8_t byte = packed[static_cast<std::size_t>(row) * (k_padded / 2) + col / 2];
        const int nibble = (col % 2 == 0) ? (byte & 0x0F) : (byte >> 4);
        return nibble >= 8 ? nibble - 16 : nibble;
    }
    /// Dequantised element (row, col): q · scale in fp32.
    float value(int row, int col) const noexcept {
        return static_cast<float>(q(row, col)) *
               scales[static_cast<std::size_t>(row) * groups() + col / group];
    }
};

/// Either quantised form (what the on-disk cache stores).
using QuantizedTensor = std::variant<QuantizedInt8, QuantizedInt4>;

/// fp32 -> IEEE binary16 bits, rounding to nearest even (overflow -> ±inf, NaN stays NaN).
uint16_t fp32_to_fp16_bits(float value) noexcept;

/// The smallest fp16 value >= `value` (value >= 0), as a float. Throws mtdesk::Error when it
/// is not finite or exceeds the largest fp16 value (65504).
float fp16_round_up(float value);

/// Quantises W [n, k] (`w.size()` == n·k) to INT8 as described at the top of this file.
/// Throws mtdesk::Error when n or k is not positive, the size does not match, a weight is not
/// finite (naming the row and column), or a row's scale would exceed the fp16 range.
QuantizedInt8 quantize_int8(std::span<const float> w, int n, int k);

/// Quantises W [n, k] to INT4 with `group` inputs per scale (k padded with zeros up to a
/// multiple of `group`; the padding quantises to q = 0 and never changes a scale).
/// Throws mtdesk::Error like quantize_int8, and when `group` is not even and >= 2.
QuantizedInt4 quantize_int4(std::span<const float> w, int n, int k, int group = kInt4GroupSize);

/// Checks the invariants of a quantised tensor (positive shape, vector sizes, k_padded, scales
/// finite, >= 0 and exact in fp16, int8 values in [-127, 127]). Throws mtdesk::Error saying what
/// is wrong. Used before uploading data that came from elsewhere (e.g. the cache).
void validate(const QuantizedInt8& w);
void validate(const QuantizedInt4& w);
void validate(const QuantizedTensor& w);

/// Dequantised W [n, k] in fp32 (INT4 padding dropped).
std::vector<float> dequantize(const QuantizedInt8& w);
std::vector<float> dequantize(const QuantizedInt4& w);
std::vector<float> dequantize(const QuantizedTensor& w);

/// Reference y [m, n] = x [m, k] · deq(W)ᵀ on the CPU. Products and sums are taken in double
/// precision (so the reference itself adds no measurable rounding) and stored as fp32.
/// Throws mtdesk::Error when m < 0 or x / y do not hold m·k / m·n values.
void linear_reference(const QuantizedInt8& w, std::span<const float> x, int m, std::span<float> y);
void linear_reference(const QuantizedInt4& w, std::span<const float> x, int m, std::span<float> y);
std::vector<float> linear_reference(const QuantizedTensor& w, std::span<const float> x, int m);

/// Reference y [m, n] = x [m, k] · Wᵀ for a dense fp32 W [n, k] (double accumulation).
/// Throws mtdesk::Error on size mismatches.
std::vector<float> linear_reference_dense(std::span<const float> w, int n, int k,
                                          std::span<const float> x, int m);

}  // namespace mtdesk
