#pragma once
// Asynchronous copies from global to shared memory (cp.async, sm_80+; PTX ISA "cp.async"), shared
// by the tensor-core GEMV (linear_kernels.cuh) and the tensor-core prefill attention
// (attention_cuda.cu). On the host emulation the copies are queued per thread and made when a
// wait requires them (host_emulation.h).

#include <cuda_runtime.h>

#include "cuda/launch_cuda.cuh"  // with MTDESK_CUDA_HOST_EMULATION, also the emulation

namespace mtdesk::cuda {

// Asynchronous copies global -> shared (sm_80+), completed in groups: cp_async_commit() closes
// the group of this thread's copies since the last commit, cp_async_wait<N>() waits until at
// most its N most recent groups are in flight. The "memory" clobbers keep the compiler from
// moving shared-memory reads across them.
// 16 bytes, L1 bypassed; `valid` false writes zeros instead (global must still be a valid address).
__device__ __forceinline__ void cp_async_16(void* shared, const void* global, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(global),
                 "r"(valid ? 16 : 0)
                 : "memory");
#elif defined(MTDESK_CUDA_HOST_EMULATION)
    emulation::cp_async(shared, global, 16, valid ? 16 : 0);
#endif
}
// 4 bytes (a 4-byte aligned global address).
__device__ __forceinline__ void cp_async_4(void* shared, const void* global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(s), "l"(global) : "memory");
#elif defined(MTDESK_CUDA_HOST_EMULATION)
    emulation::cp_async(shared, global, 4, 4);
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#elif defined(MTDESK_CUDA_HOST_EMULATION)
    emulation::cp_async_commit();
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#elif defined(MTDESK_CUDA_HOST_EMULATION)
    emulation::cp_async_wait(N);
#endif
}

}  // namespace mtdesk::cuda
