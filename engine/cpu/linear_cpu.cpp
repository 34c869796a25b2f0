// Dense linear layers through OpenBLAS.

#include <cblas.h>

#include <cstring>

#include "cpu/ops_cpu.h"

namespace mtdesk::cpu {

void linear(const float* x, const float* w, const float* bias, float* y, int64_t rows, int64_t in,
            int64_t out) {
    if (rows <= 0 || out <= 0) return;
    float beta = 0.0f;
    if (bias != nullptr) {
        for (int64_t r = 0; r < rows; ++r)
            std::memcpy(y + r * out, bias, sizeof(float) * out);
        beta = 1.0f;
    }
    if (rows == 1) {
        cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<blasint>(out),
                    static_cast<blasint>(in), 1.0f, w, static_cast<blasint>(in), x, 1, beta, y, 1);
    } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(rows),
                    static_cast<blasint>(out), static_cast<blasint>(in), 1.0f, x,
                    static_cast<blasint>(in), w, static_cast<blasint>(in), beta, y,
                    static_cast<blasint>(out));
    }
}

}  // namespace mtdesk::cpu
