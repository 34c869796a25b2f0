#include "mtdesk/cpu/blas_kernels.h"

#include <cblas.h>

#include <cstdlib>

namespace mtdesk {

std::string blas_core_name() {
    const char* name = openblas_get_corename();
    return name ? name : "";
}

std::optional<std::string> better_blas_coretype() {
#if defined(__x86_64__)
    if (std::getenv("OPENBLAS_CORETYPE")) return std::nullopt;  // the user's choice stands
    const std::string core = blas_core_name();
    // OpenBLAS's generic x86-64 fallbacks.
    if (core != "Prescott" && core != "Core2" && core != "Nehalem" && core != "Penryn")
        return std::nullopt;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
    return std::nullopt;
}

}  // namespace mtdesk
