#pragma once
// Which OpenBLAS kernels the CPU engine runs on, and a correction for hypervisors that hide the
// CPU model.
//
// OpenBLAS (Debian builds it with DYNAMIC_ARCH) picks its kernels once, when the library loads,
// from the CPUID family/model. Some virtual machines report a model it does not know; it then
// falls back to its oldest x86-64 kernels ("Prescott", SSE3), 3-4x slower than the AVX2 /
// AVX-512 kernels the CPU can run. The choice can only be overridden through the
// OPENBLAS_CORETYPE environment variable, read at load time.

#include <optional>
#include <string>

namespace mtdesk {

/// The kernel set OpenBLAS chose ("Haswell", "SkylakeX", "Prescott", ...).
std::string blas_core_name();

/// The OPENBLAS_CORETYPE that would give faster kernels on this CPU, when OpenBLAS fell back to
/// its generic ones although the CPU supports AVX2 ("Haswell") or AVX-512 ("SkylakeX"), and the
/// user has not set OPENBLAS_CORETYPE. nullopt otherwise.
std::optional<std::string> better_blas_coretype();

/// When better_blas_coretype() has an answer, runs this program again (execv of
/// /proc/self/exe with `argv`) with OPENBLAS_CORETYPE set to it, once: MTDESK_BLAS_RESTARTED
/// marks the second start. Returns only when there is nothing better or the execv failed; the
/// program then goes on with the kernels it has. Call first thing in main(), before threads.
void restart_with_better_blas_kernels(char** argv);

}  // namespace mtdesk
