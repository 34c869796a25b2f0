#pragma once
// The CUDA twin of every decoder operation in cpu/ops_cpu.h (same names, same arithmetic
// order), for 16-bit activations T = __nv_bfloat16 or __half with fp32 math inside each
// kernel. Results are rounded to T at the points where transformers' bf16/fp16 forward pass
// rounds, so that the engine tracks the reference implementation step by step; the GPU tests
// compare each kernel with the CPU implementation. Every function is asynchronous on `stream`;
// pointers are device pointers unless said otherwise. Shapes are [outer, ..., inner], dense.

#include <cuda_runtime.h>

#include <cstdint>

namespace mtdesk::cuda {

/// out[t, :] = table[ids[t], :]. table: [vocab, hidden]; ids: [tokens] (already checked to be
/// in [0, vocab) on the host); out: [tokens, hidden].
template <typename T>
void embedding(const T* table, int64_t hidden, const int32_t* ids, int tokens, T* out,
               cudaStream_t stream);

/// RMSNorm as transformers' LlamaRMSNorm in 16-bit: n = T(x * rsqrt(mean(x²) + eps)) in fp32,
/// out = T(weight * n). x, out: [rows, dim] (out may equal x); weight: [dim].
template <typename T>
void rms_norm(const T* x, const T* weight, T* out, int rows, int dim, float eps,
              cudaStream_t stream);

/// residual = T(residual + delta), then out = rms_norm(residual). residual, delta, out:
/// [rows, dim] (out may equal delta); weight: [dim].
template <typename T>
void add_rms_norm(T* residual, const T* delta, const T* weight, T* out, int rows, int dim,
                  float eps, cudaStream_t stream);

/// x[r, c] = T(x[r, c] + bias[c]). x: [rows, cols]; bias: [cols].
template <typename T>
void add_bias(T* x, const T* bias, int rows, int cols, cudaStream_t stream);

/// Where the per-head Q/K RMSNorm sits relative to RoPE.
enum class QkNorm { None, BeforeRope /* Qwen3 */, AfterRope /* HunYuanDenseV1 */ };

/// The attention input step for a batch of tokens, fused: optional QKV bias, per-head Q/K
/// RMSNorm before or after the rotary embedding (rotate_half convention, with transformers'
/// 16-bit rounding: cos/sin rounded to T, each product and the sum rounded to T), then the
/// token's K and V written into the paged KV cache.
///   qkv:        [tokens, (heads + 2 kv_heads) * head_dim], Q then K then V per row; Q is
///               rewritten in place (rotated and normed), K/V are read.
///   qkv_bias:   [(heads + 2 kv_heads) * head_dim] or null.
///   q_norm, k_norm: [head_dim] (ignored when norm == None).
///   cos, sin:   fp32 tables [max_positions, head_dim / 2] (cpu::rope_cos_sin's values).
///   positions:  [tokens]; slots: [tokens], slot = block * block_size + offset in the cache.
///   k_cache, v_cache: [num_blocks * block_size, kv_heads, head_dim] of this layer.
template <typename T>
void qkv_rope_cache(T* qkv, const T* qkv_bias, const T* q_norm, const T* k_norm, QkNorm norm,
                    float eps, const float* cos, const float* sin, const int32_t* positions,
                    const int32_t* slots, T* k_cache, T* v_cache, int tokens, int heads,
                    int kv_heads, int head_dim, cudaStream_t stream);

/// Causal attention over a paged KV cache (the PagedAttention layout of Kwon et al. 2023,
/// vLLM), for prefill chunks and decode steps alike: token t of sequence s = token_seq[t] at
/// position p = token_pos[t] attends to positions 0 .. p of its sequence, whose keys/values
/// live in blocks block_tables[s, 0 ..]. One thread block per (token, head); warps take keys
/// in turn with an online softmax (Milakov & Gimelshein 2018), combined at the end; fp32
/// math, output rounded to T. Grouped-query heads: head h reads kv head h / (heads/kv_heads).
///   q:     [tokens, heads, head_dim] (the Q part of qkv: row stride q_stride elements)
///   out:   [tokens, heads, head_dim]
///   block_tables: [seqs, max_blocks_per_seq]; head_dim <= 256.
template <typename T>
void paged_attention(const T* q, int64_t q_stride, const T* k_cache, const T* v_cache,
                     const int32_t* block_tables, int max_blocks_per_seq, const int32_t* token_seq,
                     const int32_t* token_pos, T* out, int tokens, int heads, int kv_heads,
                     int head_dim, int block_size, float scale, cudaStream_t stream);

/// SwiGLU on a fused gate|up product: out[r, i] = T(T(silu(gu[r, i])) * gu[r, inter + i]).
/// gu: [rows, 2 * inter]; out: [rows, inter].
template <typename T>
void swiglu(const T* gate_up, T* out, int rows, int inter, cudaStream_t stream);

/// out[i, :] = x[rows[i], :]. x: [*, dim]; rows: [n]; out: [n, dim].
template <typename T>
void gather_rows(const T* x, const int32_t* rows, T* out, int n, int dim, cudaStream_t stream);

/// Per-row sampling parameters for sample_tokens().
struct SampleParams {
    float temperature = 0;         ///< <= 0: greedy (argmax)
    int top_k = 0;                 ///< 0: off
    float top_p = 1;               ///< 1: off
    float repetition_penalty = 1;  ///< 1: off
    uint64_t seed = 0;             ///< with `step`, selects the random draw
    uint64_t step = 0;
};

/// Most candidates sampling considers per row: top_k is capped at this, and without top_k the
/// nucleus is taken from this many most likely tokens (probabilities still over the full
/// vocabulary).
inline constexpr int kMaxSampleCandidates = 256;

/// Chooses one token per row as transformers' logits processors would (repetition penalty →
/// temperature → top-k → top-p, then a draw), with argmax (lowest id on ties) for greedy rows.
///   logits:  [rows, row_stride] in T; only ids < vocab are considered.
///   params:  [rows]; history: ids seen so far per row (prompt + output) as CSR:
///            history_offsets [rows + 1], history_ids [history_offsets[rows]].
///   scratch: fp32 [rows, vocab] workspace.
///   out:     [rows] chosen ids.
template <typename T>
void sample_tokens(const T* logits, int64_t row_stride, int vocab, int rows,
                   const SampleParams* params, const int32_t* history_offsets,
                   const int32_t* history_ids, float* scratch, int32_t* out, cudaStream_t stream);

/// out[i] = float(x[i]). For logits that leave the GPU (tests, CausalLM::forward).
template <typename T>
void to_float(const T* x, float* out, int64_t n, cudaStream_t stream);

}  // namespace mtdesk::cuda
