// GemmPlans: see gemm_cuda.h.

#include "cuda/gemm_cuda.h"

#include <string>
#include <utility>

#include "mtdesk/error.h"

namespace mtdesk::cuda {
namespace {

void check_lt(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw Error(std::string("cublasLt: ") + what +
                    " failed: " + cublasLtGetStatusString(status));
}

// A column-major layout of `rows` x `cols` with leading dimension ld, destroyed with the object.
class Layout {
  public:
    Layout(cudaDataType_t type, int rows, int cols, int ld) {
        check_lt(cublasLtMatrixLayoutCreate(&layout_, type, rows, cols, ld),
                 "cublasLtMatrixLayoutCreate");
    }
    ~Layout() { cublasLtMatrixLayoutDestroy(layout_); }
    Layout(const Layout&) = delete;
    Layout& operator=(const Layout&) = delete;
    operator cublasLtMatrixLayout_t() const noexcept { return layout_; }

  private:
    cublasLtMatrixLayout_t layout_ = nullptr;
};

// The largest power of two up to 256 that divides p's address.
uint32_t alignment(const void* p) {
    const auto v = reinterpret_cast<std::uintptr_t>(p);
    uint32_t a = 256;
    while (a > 1 && v % a != 0)
        a /= 2;
    return a;
}

}  // namespace

int gemm_bucket(int m) {
    if (m <= 16) {
        int b = 1;
        while (b < m)
            b *= 2;
        return b;
    }
    int b = 16;  // then 24, 32, 48, 64, ...: alternately 1.5x and 4/3x
    while (b < m)
        b = b % 3 == 0 ? b / 3 * 4 : b / 2 * 3;
    return b;
}

std::vector<int> gemm_buckets(int max_m) {
    std::vector<int> out;
    for (int b = 1;; b = gemm_bucket(b + 1)) {
        out.push_back(b);
        if (b >= max_m) break;
    }
    return out;
}

GemmPlans::GemmPlans() {
    check_lt(cublasLtCreate(&handle_), "cublasLtCreate");
    try {
        check_lt(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                 "cublasLtMatmulDescCreate");
        const cublasOperation_t t = CUBLAS_OP_T;
        check_lt(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)),
                 "cublasLtMatmulDescSetAttribute");
    } catch (...) {
        if (desc_) cublasLtMatmulDescDestroy(desc_);
        cublasLtDestroy(handle_);
        throw;
    }
}

GemmPlans::~GemmPlans() {
    if (desc_) cublasLtMatmulDescDestroy(desc_);
    if (handle_) cublasLtDestroy(handle_);
}

const cublasLtMatmulAlgo_t& GemmPlans::choose(const Key& key) {
    if (const auto it = algos_.find(key); it != algos_.end()) return it->second;
    const auto type = static_cast<cudaDataType_t>(key.type);
    // In cuBLAS's column-major terms yᵀ [n, rows] = op(A) · xᵀ with A viewed as [k, n].
    const Layout la(type, key.k, key.n, key.lda), lx(type, key.k, key.rows, key.k),
        ly(type, key.n, key.rows, key.ldy);
    cublasLtMatmulPreference_t pref = nullptr;
    check_lt(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    const std::size_t max_ws = key.workspace_bytes;
    cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws));
    const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> aligns[] = {
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.align_a},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.align_x},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.align_y},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.align_y}};
    for (const auto& [attr, value] : aligns)
        if (s == CUBLAS_STATUS_SUCCESS)
            s = cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulAlgoGetHeuristic(handle_, desc_, la, lx, ly, ly, pref, 1, &result,
                                           &found);
    cublasLtMatmulPreferenceDestroy(pref);
    check_lt(s, "cublasLtMatmulAlgoGetHeuristic");
    if (found < 1)
        throw Error("cublasLt: no algorithm for a GEMM of " + std::to_string(key.rows) + " x " +
                    std::to_string(key.n) + " x " + std::to_string(key.k));
    return algos_.emplace(key, result.algo).first->second;
}

void GemmPlans::run(cudaDataType_t type, const void* a, int lda, int n, const void* x, int m, int k,
                    void* y, int ldy, void* workspace, std::size_t workspace_bytes,
                    cudaStream_t stream) {
    const float alpha = 1.0f, beta = 0.0f;
    const Layout la(type, k, n, lda), lx(type, k, m, k), ly(type, n, m, ldy);
    Key key{.rows = gemm_bucket(m),
            .n = n,
            .k = k,
            .lda = lda,
            .ldy = ldy,
            .type = static_cast<int>(type),
            .workspace_bytes = workspace_bytes,
            .align_a = alignment(a),
            .align_x = alignment(x),
            .align_y = alignment(y)};
    cublasStatus_t s = cublasLtMatmul(handle_, desc_, &alpha, a, la, x, lx, &beta, y, ly, y, ly,
                                      &choose(key), workspace, workspace_bytes, stream);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_INVALID_VALUE) {
        // The bucket's algorithm cannot run this m: one chosen for m itself.
        key.rows = m;
        s = cublasLtMatmul(handle_, desc_, &alpha, a, la, x, lx, &beta, y, ly, y, ly, &choose(key),
                           workspace, workspace_bytes, stream);
    }
    check_lt(s, "cublasLtMatmul");
}

}  // namespace mtdesk::cuda
