// RMSNorm, plain and fused with the residual add.

#include <cmath>

#include "cpu/ops_cpu.h"

namespace mtdesk::cpu {

namespace {

inline void norm_row(const float* x, const float* weight, float* out, int64_t dim, float eps) {
    double sum = 0;
    for (int64_t i = 0; i < dim; ++i)
        sum += static_cast<double>(x[i]) * x[i];
    const float variance = static_cast<float>(sum / static_cast<double>(dim));
    const float inv = 1.0f / std::sqrt(variance + eps);
    for (int64_t i = 0; i < dim; ++i)
        out[i] = weight[i] * (x[i] * inv);
}

}  // namespace

void rms_norm(const float* x, const float* weight, float* out, int64_t rows, int64_t dim,
              float eps) {
    for (int64_t r = 0; r < rows; ++r)
        norm_row(x + r * dim, weight, out + r * dim, dim, eps);
}

void add_rms_norm(float* residual, const float* delta, const float* weight, float* out,
                  int64_t rows, int64_t dim, float eps) {
    for (int64_t r = 0; r < rows; ++r) {
        float* res = residual + r * dim;
        const float* d = delta + r * dim;
        for (int64_t i = 0; i < dim; ++i)
            res[i] += d[i];
        norm_row(res, weight, out + r * dim, dim, eps);
    }
}

}  // namespace mtdesk::cpu
