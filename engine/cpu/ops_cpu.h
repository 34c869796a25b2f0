#pragma once
// The CPU implementation of every decoder operation, fp32, row-major. One file per family
// (embedding_cpu.cpp, rms_norm_cpu.cpp, rope_cpu.cpp, linear_cpu.cpp, linear_quant_cpu.cpp,
// attention_cpu.cpp, swiglu_cpu.cpp). These are the reference the CUDA twins in engine/cuda/ are
// tested against, so each one states its exact arithmetic. Reference for the arithmetic:
// transformers' modeling_hunyuan_v1_dense.py / modeling_llama.py / modeling_qwen3.py and
// modeling_rope_utils.py.
//
// Shapes are given as [outer, ..., inner]; every buffer is contiguous. Output buffers must not
// overlap inputs unless a function says so. Scratch is at most one row per thread.

#include <cstdint>
#include <span>
#include <vector>

#include "mtdesk/model/config.h"
#include "mtdesk/quant/quantize.h"

namespace mtdesk::cpu {

class ThreadPool;

// ---- embedding_cpu.cpp ----

/// out[t, :] = table[ids[t], :]. table: [vocab, hidden]; out: [ids.size(), hidden].
/// Throws Error when an id is outside [0, vocab).
void embedding(const float* table, int64_t vocab, int64_t hidden, std::span<const int32_t> ids,
               float* out);

// ---- rms_norm_cpu.cpp ----

/// RMSNorm (Zhang & Sennrich 2019) as transformers' LlamaRMSNorm computes it in fp32:
/// out[r, :] = weight * (x[r, :] * (1 / sqrt(mean(x[r, :]^2) + eps))).
/// x, out: [rows, dim]; weight: [dim]. The mean of squares is accumulated in double.
/// `out` may equal `x` (in place). Used for the layer norms ([tokens, hidden]) and for the
/// per-head Q/K norms ([tokens * heads, head_dim]).
void rms_norm(const float* x, const float* weight, float* out, int64_t rows, int64_t dim,
              float eps);

/// The residual add fused with the next norm: residual += delta, then
/// out = rms_norm(residual, weight). residual, delta, out: [rows, dim]; weight: [dim].
/// `out` may equal `delta`.
void add_rms_norm(float* residual, const float* delta, const float* weight, float* out,
                  int64_t rows, int64_t dim, float eps);

// ---- rope_cpu.cpp ----

/// Inverse frequencies of the rotary embedding (Su et al. 2021, RoFormer), one per pair of
/// dimensions, and how angles are formed from them.
struct RopeFrequencies {
    std::vector<double> inv_freq;  ///< [head_dim / 2]
    bool float32_like_torch = true;
};

/// Computes the inverse frequencies the way transformers does:
///   Default:      inv_freq[i] = 1 / theta^(2i / d)
///   DynamicAlpha: the same with theta' = effective_rope_theta() = theta * alpha^(d / (d - 2))
///                 (Hunyuan's compute_ntk_alpha_rope_parameters)
///   Linear:       Default / rope_factor
///   Llama3:       _compute_llama3_parameters: frequencies whose wavelength exceeds
///                 original_max / low_freq_factor are divided by factor, those below
///                 original_max / high_freq_factor kept, a smooth interpolation in between.
/// With `float32_like_torch` (the default) every step is done in float32 like torch does it
/// (theta rounded to float, exponent float(2i) / float(d), 1 / pow in float), so the values are
/// the float32 numbers transformers uses; otherwise the formulas are evaluated in double.
/// Throws Error for an odd or non-positive head_dim.
RopeFrequencies rope_frequencies(const ModelConfig& config, bool float32_like_torch = true);

/// cos and sin tables for positions start_pos .. start_pos + tokens - 1: cos, sin:
/// [tokens, head_dim / 2]. The angle of position p, pair i is float(p) * float(inv_freq[i])
/// rounded to float (the float32 product of transformers' rotary embedding) when
/// float32_like_torch, else the double product; cos / sin are evaluated in double and rounded.
void rope_cos_sin(const RopeFrequencies& freqs, int64_t start_pos, int64_t tokens, float* cos,
                  float* sin);

/// Rotates `x` in place with the rotate_half (GPT-NeoX, not interleaved) convention: for token
/// t, head h and i < d/2, with c = cos[t, i], s = sin[t, i]:
///   x[t, h, i]       <- x[t, h, i] * c - x[t, h, i + d/2] * s
///   x[t, h, i + d/2] <- x[t, h, i + d/2] * c + x[t, h, i] * s
/// x: [tokens, heads, head_dim] (head_dim even); cos, sin: [tokens, head_dim / 2].
void rope(float* x, int64_t tokens, int64_t heads, int64_t head_dim, const float* cos,
          const float* sin);

// ---- linear_cpu.cpp ----

/// y = x * w^T (+ bias), as torch.nn.Linear: x: [rows, in]; w: [out, in]; bias: [out] or null;
/// y: [rows, out]. One OpenBLAS cblas_sgemm for rows > 1 (all prompt tokens at once),
/// cblas_sgemv for rows == 1.
void linear(const float* x, const float* w, const float* bias, float* y, int64_t rows, int64_t in,
            int64_t out);

// ---- linear_quant_cpu.cpp ----

/// Inputs a quantised linear layer takes straight from the quantised weights; with more rows
/// (prefill) it dequantises tiles and runs an sgemm, whose cost the rows then share.
inline constexpr int64_t kQuantGemvRows = 4;

/// Scratch of the quantised linear layers, reused across calls: the input of an INT4 product
/// (its even and odd elements apart, padded) and the fp32 tile of a prefill (at most
/// kCpuDequantTileBytes).
struct QuantScratch {
    std::vector<float> x, tile;
};

/// y = x · deq(W)ᵀ (+ bias) for an INT8 or INT4 weight (mtdesk/quant/quantize.h, the same
/// format as the GPU tiers): x: [rows, w.k]; y: [rows, w.n]; bias: [w.n] or null; all fp32.
/// Up to kQuantGemvRows rows: each output row's dot products are taken from the quantised
/// values in fp32 (INT8: sum of x·q, times the row's scale; INT4: per group, the group's sum
/// times its scale), output rows split over `pool`. More rows: the weight is dequantised in
/// tiles of whole rows of at most kCpuDequantTileBytes and multiplied by cblas_sgemm. Either
/// way the result is x · deq(W)ᵀ up to fp32 rounding (checked against quantize.h's
/// linear_reference in test_cpu_ops). Throws mtdesk::Error for a negative row count.
void linear(const float* x, const QuantizedInt8& w, const float* bias, float* y, int64_t rows,
            ThreadPool& pool, QuantScratch& scratch);
void linear(const float* x, const QuantizedInt4& w, const float* bias, float* y, int64_t rows,
            ThreadPool& pool, QuantScratch& scratch);
void linear(const float* x, const QuantizedTensor& w, const float* bias, float* y, int64_t rows,
            ThreadPool& pool, QuantScratch& scratch);

/// Whether the quantised products run their AVX2 + FMA form (chosen at run time from the CPU;
/// the portable loops otherwise, with the same sums in another order).
bool quant_kernels_use_avx2() noexcept;
/// Makes the quantised products use the portable loops even where AVX2 is there (for tests,
/// which check both forms against the reference). Process-wide.
void force_portable_quant_kernels(bool on) noexcept;

// ---- swiglu_cpu.cpp ----

/// The SwiGLU gate (Shazeer 2020): out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)).
/// gate, up, out: [n]; `out` may equal `gate` or `up`.
void swiglu(const float* gate, const float* up, float* out, int64_t n);

// ---- attention_cpu.cpp ----

/// Causal scaled dot-product attention (Vaswani et al. 2017) with grouped-query heads
/// (Ainslie et al. 2023): query head h reads key/value head h / (heads / kv_heads).
/// Query row t sits at position past + t and attends to cache positions 0 .. past + t:
///   out[t, h, :] = sum_j softmax_j(scale * q[t, h, :] . k[j, g, :]) * v[j, g, :]
/// The softmax subtracts the row maximum; exponentials and sums in float.
/// q, out: [tokens, heads, head_dim]; k_cache, v_cache: [>= past + tokens, kv_heads, head_dim]
/// (the keys / values of the new tokens already written at rows past ..). heads must be a
/// multiple of kv_heads. Parallel over (token, head) pairs on `pool` (serial when the step is
/// small).
void attention(const float* q, const float* k_cache, const float* v_cache, float* out,
               int64_t tokens, int64_t past, int64_t heads, int64_t kv_heads, int64_t head_dim,
               float scale, ThreadPool& pool);

/// The INT8 KV cache's format (the reference for the CUDA cache write, engine/cuda/ops_cuda.h):
/// each row (one position's key or value vector of one kv head) is quantised symmetrically,
///   amax = max_i |x[r, i]|, scale[r] = amax / 127,
///   q[r, i] = clamp(round_half_even(x[r, i] * (127 / amax)), -127, 127),
/// in fp32 with exactly these operations (so the GPU, doing the same, gets the same bits); a
/// zero row gets scale 0 and zeros. The error per element is at most scale / 2.
/// x: [rows, dim]; q: [rows, dim] int8; scale: [rows] fp32.
void quantize_kv_int8(const float* x, int64_t rows, int64_t dim, int8_t* q, float* scale);

/// x[r, i] = q[r, i] * scale[r] (fp32): the values the attention kernels compute with.
void dequantize_kv_int8(const int8_t* q, const float* scale, int64_t rows, int64_t dim, float* x);

}  // namespace mtdesk::cpu
