#pragma once
// The CUDA twin of every decoder operation in cpu/ops_cpu.h (same names, same arithmetic
// order), for 16-bit activations T = __nv_bfloat16 or __half with fp32 math inside each
// kernel. Results are rounded to T at the points where transformers' bf16/fp16 forward pass
// rounds, so that the engine tracks the reference implementation step by step; the GPU tests
// compare each kernel with the CPU implementation. Every function is asynchronous on `stream`;
// pointers are device pointers unless said otherwise. Shapes are [outer, ..., inner], dense.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "mtdesk/quant/tiers.h"

namespace mtdesk::cuda {

/// out[t, :] = table[ids[t], :]. table: [vocab, hidden]; ids: [tokens] (already checked to be
/// in [0, vocab) on the host), where a negative id -1 - r stands for pending[r] (a token
/// sampled on the GPU that the host has not read yet; pending may be null when no id is
/// negative); out: [tokens, hidden], not overlapping table. One block per row, 16-byte copies
/// where hidden % 8 == 0 and the rows are aligned.
template <typename T>
void embedding(const T* table, int64_t hidden, const int32_t* ids, int tokens, T* out,
               cudaStream_t stream, const int32_t* pending = nullptr);

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

/// One layer's paged KV cache as qkv_rope_cache() writes it and paged_attention() reads it.
/// Positions live in slots, slot = block * block_size + offset in the block, slots =
/// num_blocks * block_size; one slot holds one position's key and value vectors of every kv
/// head.
///   Storage::F16 (the activations' 16-bit type T):
///     k, v:  T [slots, kv_heads, head_dim]; k_scale, v_scale unused (null).
///   Storage::Int8, symmetric int8 per (slot, kv head) — the arithmetic is
///   cpu::quantize_kv_int8's, applied to the value the 16-bit cache would hold:
///     k, v:  int8 [slots, kv_heads, head_dim]
///     k_scale, v_scale: fp32 [slots, kv_heads]; x ≈ q * scale, scale = max|x| / 127.
///   The scale is fp32 rather than fp16 because bf16 activations have fp32's exponent range
///   (an fp16 scale could overflow or flush to zero for vectors a bf16 cache holds), and it
///   costs 4 bytes per head vector of head_dim bytes (3 % at head_dim 128). The per-token
///   attention kernels dequantise in registers: dot(q, k) = scale_k * dot(q, k_int8), and the
///   softmax weight of a position is multiplied by scale_v before it meets v_int8 (the
///   tensor-core prefill does it in shared memory, AttentionPrefill).
/// k and v must be 4-byte aligned (cudaMalloc'd buffers and the per-layer offsets the model
/// uses are 256-byte aligned); head_dim must be even.
struct KvCacheLayer {
    enum class Storage { F16, Int8 };
    Storage storage = Storage::F16;
    void* k = nullptr;
    void* v = nullptr;
    float* k_scale = nullptr;
    float* v_scale = nullptr;
};

/// The attention input step for a batch of tokens, fused: optional QKV bias, per-head Q/K
/// RMSNorm before or after the rotary embedding (rotate_half convention, with transformers'
/// 16-bit rounding: cos/sin rounded to T, each product and the sum rounded to T), then the
/// token's K and V written into the paged KV cache (rounded to T; for an Int8 cache the
/// rounded vector is then quantised per kv head, see KvCacheLayer).
///   qkv:        [tokens, (heads + 2 kv_heads) * head_dim], Q then K then V per row; Q is
///               rewritten in place (rotated and normed), K/V are read.
///   qkv_bias:   [(heads + 2 kv_heads) * head_dim] or null.
///   q_norm, k_norm: [head_dim] (ignored when norm == None).
///   cos, sin:   fp32 tables [max_positions, head_dim / 2] (cpu::rope_cos_sin's values).
///   positions:  [tokens]; slots: [tokens], slot = block * block_size + offset in the cache.
///   cache:      this layer's cache (KvCacheLayer).
/// Throws Error for an odd head_dim or one above 256, and for an Int8 cache without scales.
template <typename T>
void qkv_rope_cache(T* qkv, const T* qkv_bias, const T* q_norm, const T* k_norm, QkNorm norm,
                    float eps, const float* cos, const float* sin, const int32_t* positions,
                    const int32_t* slots, const KvCacheLayer& cache, int tokens, int heads,
                    int kv_heads, int head_dim, cudaStream_t stream);

/// Scratch of the split-KV attention, allocated once at load (memory stays flat while
/// serving): fp32 partial results of up to `rows` tokens with up to `max_partitions`
/// partitions each,
///   out: [rows, heads, max_partitions, head_dim] (unnormalised sums of p * v),
///   max: [rows, heads, max_partitions] (each partition's largest scaled score),
///   sum: [rows, heads, max_partitions] (each partition's sum of exp(score - max)),
/// in this order in `data`: split_kv_workspace_floats() floats. Steps with more tokens are run
/// in pieces of `rows` tokens; a context longer than max_partitions * kSplitKvPartition
/// positions gets its excess in its last partition (correct, only slower).
struct SplitKvWorkspace {
    float* data = nullptr;     ///< null: nothing is split (every token in one pass)
    std::size_t capacity = 0;  ///< floats at data (checked against the call's heads/head_dim)
    int rows = 0;
    int max_partitions = 0;
};

/// Floats a SplitKvWorkspace of this size needs.
inline std::size_t split_kv_workspace_floats(int rows, int heads, int head_dim,
                                             int max_partitions) {
    return static_cast<std::size_t>(rows) * heads * max_partitions * (head_dim + 2);
}

/// How paged_attention() divides long contexts.
enum class AttentionSplit {
    /// A token whose context is longer than kSplitKvPartition (mtdesk/quant/tiers.h) positions
    /// is split into partitions of that many positions, one thread block each, and their
    /// partial softmaxes combined by a second kernel (FlashDecoding, Dao et al. 2023; vLLM's
    /// paged_attention_v2). Shorter contexts run in one pass. The choice depends on the
    /// token's own context only, never on the rest of the batch, so a sequence's output is
    /// the same alone and inside any batch (and a short context's result is bit-identical to
    /// Never's).
    Auto,
    /// Every (token, head) in one thread block whatever its context (the reference the tests
    /// compare the split path with).
    Never,
};

/// Whether paged_attention() runs prefill chunks on tensor cores.
enum class AttentionPrefill {
    /// Every token through the per-(token, head) kernels above.
    Off,
    /// Tokens of prefill runs — two or more tokens of one sequence at consecutive positions,
    /// next to each other in the step (CudaModel::forward lays chunks out so) — through a
    /// FlashAttention-2-style kernel (Dao 2023): 64 query rows of one head per thread block,
    /// keys in tiles of 64 staged in shared memory (an int8 cache's keys converted to T there,
    /// exactly, their scales applied to the fp32 scores; its values dequantised to T),
    /// S = Q K^T and O += P V with mma.sync m16n8k16 (bf16/fp16 in, fp32 accumulate), the
    /// online softmax in fp32, P rounded to T. Each K/V tile is read once per 64 rows instead
    /// of once per row. Used with AttentionSplit::Auto, head_dim <= 128, on sm_80 and later
    /// (elsewhere the request is ignored); lone tokens (decode) keep the split-KV path. A
    /// row's result does not depend on which rows share its block. Steps without prefill
    /// chunks should pass Off: the kernel would only find nothing to do. A 16-bit cache's
    /// tiles are copied two deep (the next tile's copies in flight while this one is
    /// computed) where a multiprocessor holds two such blocks (sm_80, sm_90), one deep
    /// elsewhere (sm_86, sm_89: 100 KiB of shared memory a multiprocessor).
    TensorCores,
    /// As TensorCores with the tiles always copied one deep: the same bits (tests compare the
    /// two).
    TensorCoresOneStage,
};

/// How paged_attention()'s per-token kernel assigns query heads to thread blocks. The results
/// are the same bits either way: a head's positions, sums and their order do not change.
enum class AttentionGrouping {
    /// PerKvHead where the launch still has a block per multiprocessor or more that way
    /// (tokens × kv_heads × partitions >= multiprocessors: larger batches), else Staged where
    /// that launch takes at most a quarter of them (tokens × heads × partitions <=
    /// multiprocessors / 4: decode at batch 1), else PerQueryHead.
    Auto,
    /// One block per query head (each block loads its kv head's keys and values).
    PerQueryHead,
    /// One block of 16 warps per query head whose warps load the keys and values of up to 16
    /// steps at once and leave scores and values in shared memory, from where 4 warps run the
    /// online softmax as PerQueryHead's 4 warps do: for head_dim <= 128; others run per query
    /// head.
    Staged,
    /// One block per kv head for its whole group of query heads, so that each key and value
    /// row is loaded once for the group (as FlashDecoding++ and vLLM's GQA kernels pack
    /// heads): for groups of 2 or 4 with head_dim <= 128; others run per query head.
    PerKvHead,
};

/// Causal attention over a paged KV cache (the PagedAttention layout of Kwon et al. 2023,
/// vLLM), for prefill chunks and decode steps alike: token t of sequence s = token_seq[t] at
/// position p = token_pos[t] attends to positions 0 .. p of its sequence, whose keys/values
/// live in blocks block_tables[s, 0 ..]. One thread block per (token, head or group of heads,
/// partition); its warps take 8 positions at a time (4 above head_dim 128) each with an online
/// softmax (Milakov & Gimelshein 2018), combined at the end; fp32 math, output rounded to T.
/// Grouped-query heads: head h reads kv head h / (heads / kv_heads).
///   q:     [tokens, heads, head_dim] (the Q part of qkv: row stride q_stride elements)
///   cache: the layer's KV cache (16-bit T or int8, KvCacheLayer)
///   block_tables: [seqs, max_blocks_per_seq]; token_seq, token_pos: [tokens]
///   out:   [tokens, heads, head_dim]
///   max_context: at least the largest token_pos[t] + 1 of the step (the host knows it); it
///          sizes the split grid. A CUDA graph captured with a bound stays valid for every
///          step whose contexts stay within it (partitions past a token's context exit at
///          once); an underestimate costs speed, not correctness.
///   workspace: the split path's scratch (null data: no split).
///   scale: the softmax scale (head_dim^-0.5).
///   split, prefill, grouping: which kernels run (AttentionSplit, AttentionPrefill,
///          AttentionGrouping).
/// head_dim must be even and <= 256, heads a multiple of kv_heads. Throws Error otherwise, or
/// for a misaligned cache.
template <typename T>
void paged_attention(const T* q, int64_t q_stride, const KvCacheLayer& cache,
                     const int32_t* block_tables, int max_blocks_per_seq, const int32_t* token_seq,
                     const int32_t* token_pos, T* out, int tokens, int heads, int kv_heads,
                     int head_dim, int block_size, float scale, int max_context,
                     const SplitKvWorkspace& workspace, cudaStream_t stream,
                     AttentionSplit split = AttentionSplit::Auto,
                     AttentionPrefill prefill = AttentionPrefill::Off,
                     AttentionGrouping grouping = AttentionGrouping::Auto);

/// A decode step's attention input step and attention: qkv_rope_cache() on qkv's rows, then
/// paged_attention() on their queries (split and grouping Auto, no prefill), the same bits.
/// Where the attention launch is the staged one (AttentionGrouping: batch 1, and 2 on models of
/// 16 query heads), its blocks make their query, key and value themselves (each block its query
/// head and its kv head's key and value, which every block of that kv head writes to the cache
/// alike): one kernel fewer a layer, and qkv's query part is then left as it was (nothing reads
/// it after attention). Elsewhere the two kernels run. Arguments as the two functions'; every
/// token is a decode token (token_pos[t] is its position, `slots` its cache slot). Throws as
/// they do.
template <typename T>
void rope_paged_attention(T* qkv, const T* qkv_bias, const T* q_norm, const T* k_norm, QkNorm norm,
                          float eps, const float* cos, const float* sin, const int32_t* slots,
                          const KvCacheLayer& cache, const int32_t* block_tables,
                          int max_blocks_per_seq, const int32_t* token_seq,
                          const int32_t* token_pos, T* out, int tokens, int heads, int kv_heads,
                          int head_dim, int block_size, float scale, int max_context,
                          const SplitKvWorkspace& workspace, cudaStream_t stream);

/// Where a fused gate|up product row keeps gate i and up i: at i and inter + i (Halves, the
/// checkpoint's order of the two matrices), or at 2i and 2i + 1 (Pairs: the engine's order,
/// which lets a GEMV apply SwiGLU as it stores, linear_swiglu() in linear_cuda.h).
enum class GateUp { Halves, Pairs };

/// SwiGLU on a fused gate|up product: out[r, i] = T(T(silu(gate)) * up) with gate and up of
/// row r, element i, where `layout` puts them. gu: [rows, 2 * inter]; out: [rows, inter].
template <typename T>
void swiglu(const T* gate_up, T* out, int rows, int inter, GateUp layout, cudaStream_t stream);

/// out[i, :] = x[rows[i], :]. x: [*, dim]; rows: [n]; out: [n, dim], not overlapping x (the
/// embedding()'s kernel).
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

// kMaxSampleCandidates, kSampleSlice, sample_slices() and sample_scratch_floats() are in
// mtdesk/quant/tiers.h, beside the memory estimate that counts the scratch.

/// Chooses one token per row as transformers' logits processors would (repetition penalty →
/// temperature → top-k → top-p, then a draw), with argmax (lowest id on ties) for greedy rows.
/// Two kernels: a block per kSampleSlice-id slice of a row keeps the slice's most likely
/// candidates (its argmax for greedy rows, else a radix select), and a block per row selects
/// among them and draws.
///   logits:  [rows, row_stride] in T; only ids < vocab are considered.
///   params:  [rows]; history: ids seen so far per row (prompt + output) as CSR:
///            history_offsets [rows + 1], history_ids [history_offsets[rows]]; a negative id
///            -1 - r stands for pending[r], as in embedding().
///   scratch: sample_scratch_floats(rows, vocab) floats of workspace.
///   out:     [rows] chosen ids; `also`, when not null, a second copy (device memory, or
///            pinned host memory the GPU writes through the unified address space: the ids
///            reach the host without a copy of their own). `out` may be `pending`: the first
///            kernel reads the pending ids, the second writes the new ones.
template <typename T>
void sample_tokens(const T* logits, int64_t row_stride, int vocab, int rows,
                   const SampleParams* params, const int32_t* history_offsets,
                   const int32_t* history_ids, float* scratch, int32_t* out, cudaStream_t stream,
                   const int32_t* pending = nullptr, int32_t* also = nullptr);

/// dst[i] = src[i] for n int32 values, where src is pinned host memory as the device sees it
/// (cudaHostGetDevicePointer) and dst device memory, both 16-byte aligned. A kernel, not a
/// copy: launched behind a kernel (programmatic dependent launch), it reads src across PCIe
/// while that kernel finishes and writes dst after it. src must hold its values when this is
/// called and keep them until the kernel has run (an event after it). Throws Error on
/// misaligned pointers and on launch errors.
void upload_from_host(int32_t* dst, const int32_t* src, std::size_t n, cudaStream_t stream);

/// out[i] = float(x[i]). For logits that leave the GPU (tests, CausalLM::forward).
template <typename T>
void to_float(const T* x, float* out, int64_t n, cudaStream_t stream);

}  // namespace mtdesk::cuda
