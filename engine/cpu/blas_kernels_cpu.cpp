#include "mtdesk/cpu/blas_kernels.h"

#include <cblas.h>

#include <unistd.h>

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

void restart_with_better_blas_kernels(char** argv) {
    const auto coretype = better_blas_coretype();
    if (!coretype || std::getenv("MTDESK_BLAS_RESTARTED")) return;
    setenv("OPENBLAS_CORETYPE", coretype->c_str(), 1);
    setenv("MTDESK_BLAS_RESTARTED", "1", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: then carry on as we are
}

}  // namespace mtdesk
