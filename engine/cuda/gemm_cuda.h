#pragma once
// GEMMs of 16-bit matrices through cublasLt, with the algorithm chosen once per bucket of row
// counts and reused for every row count in the bucket. Private to the engine.
//
// Why: cuBLAS chooses an algorithm per problem shape, and the first time it runs a kernel it
// has not run before, it costs 2-4 ms of host time (H200, CUDA 13; setting module loading to
// eager does not change it); choosing alone costs ~0.15 ms. A prefill chunk's row count is the
// prompt's length, so with cublasGemmEx a user's prompt of a length not seen before paid
// 3-10 ms more before its first token (7B bf16, 1,833 tokens: 54 ms the first time, 51 the
// second; 1.8B bf16 25 against 18). Here every length in a bucket runs the kernel chosen for
// the bucket's largest length, which CudaModel::warm_up() runs once at load.

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace mtdesk::cuda {

/// The bucket of a GEMM of m rows (m >= 1): the smallest of 1, 2, 4, 8, 16, 24, 32, 48, 64, 96,
/// 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, ... (powers of two and 1.5 times
/// them) that is >= m.
int gemm_bucket(int m);

/// Every bucket up to and including gemm_bucket(max_m), ascending (max_m >= 1).
std::vector<int> gemm_buckets(int max_m);

/// A cublasLt handle and the algorithm chosen per (bucket, n, k, strides, type, workspace,
/// alignments). Not copied or moved (LinearContext holds it by pointer), not thread-safe (one
/// per LinearContext, whose stream it serves).
class GemmPlans {
  public:
    /// Creates the cublasLt handle. Throws mtdesk::Error if cublasLt fails.
    GemmPlans();
    ~GemmPlans();
    GemmPlans(const GemmPlans&) = delete;
    GemmPlans& operator=(const GemmPlans&) = delete;

    /// Row-major y [m, n] (row stride ldy) = x [m, k] (dense) · A [n, k]ᵀ (row stride lda), all
    /// of `type` (CUDA_R_16BF or CUDA_R_16F), fp32 accumulation, on `stream`, asynchronously.
    /// `workspace` (16-byte aligned, may be null with 0 bytes) bounds the algorithms chosen.
    /// The first call in a bucket asks cublasLt's heuristic at the bucket's row count, for
    /// the pointers' alignments (part of the bucket's key); an algorithm that cannot run the
    /// given m (cublasLt says so) is replaced by one chosen for m itself. Throws mtdesk::Error
    /// for cublasLt failures.
    void run(cudaDataType_t type, const void* a, int lda, int n, const void* x, int m, int k,
             void* y, int ldy, void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

    /// Algorithms chosen so far (for tests).
    std::size_t algorithms() const noexcept { return algos_.size(); }

  private:
    struct Key {
        int rows;  // the row count the algorithm was chosen at
        int n, k, lda, ldy, type;
        std::size_t workspace_bytes;
        uint32_t align_a, align_x, align_y;  // the pointers' alignments, bytes (up to 256)
        auto operator<=>(const Key&) const = default;
    };
    const cublasLtMatmulAlgo_t& choose(const Key& key);

    cublasLtHandle_t handle_ = nullptr;
    cublasLtMatmulDesc_t desc_ = nullptr;  // fp32 compute and scale, op(A) = Aᵀ
    std::map<Key, cublasLtMatmulAlgo_t> algos_;
};

}  // namespace mtdesk::cuda
