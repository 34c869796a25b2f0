#pragma once
// Kernel launches with programmatic dependent launch (PDL, sm_90+): a kernel starts while the
// kernel before it on the stream is still finishing and waits for it only where it first needs
// that kernel's results, so the launch latency and the tail of the previous kernel overlap its
// prologue (decode GEMVs fetch their first weights there: weights do not depend on earlier
// kernels). At batch 1 a decode step is a chain of a few hundred short kernels, where these
// gaps are a large share of the time.
//
// Contract of a kernel launched with launch(): it calls pdl_wait() before it reads anything the
// kernel before it may write and before it writes anything (an earlier kernel may still read
// it). griddepcontrol.wait returns once the preceding grid has completed and its memory is
// visible, so the chain stays ordered even when every kernel lets its successor start early.
// Every kernel calls pdl_launch_dependents() only after its own pdl_wait(), so a kernel that
// starts early finds every kernel but the one just before it finished: before its wait it may
// read what those wrote and what was copied before them (a step's metadata, tables made at load,
// the KV cache of earlier steps; attention_cuda.cu and rope_cuda.cu do).
// Reference: CUDA C++ Programming Guide, "Programmatic Dependent Launch and Synchronization";
// PTX ISA, griddepcontrol.

#include <cuda_runtime.h>

#include <utility>

#include "cuda/cuda_common.h"
#if defined(MTDESK_CUDA_HOST_EMULATION)
#include "cuda/host_emulation.h"
#endif

namespace mtdesk::cuda {

/// Waits for the preceding kernel on the stream (with its memory) when this kernel was launched
/// early by PDL; returns at once otherwise and below sm_90.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Lets the next kernel on the stream be launched (it still waits in its pdl_wait()).
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}

/// Launches kernel<<<grid, block, shared_bytes, stream>>>(args...) with programmatic stream
/// serialisation when programmatic_launch() is on (the kernel must follow the contract above),
/// as a plain launch otherwise. Launch errors surface from MTDESK_CUDA_CHECK_LAUNCH().
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes,
            cudaStream_t stream, Args&&... args) {
#if defined(MTDESK_CUDA_HOST_EMULATION)
    (void)stream;  // the emulation runs the kernel to completion now
    emulation::launch_with_shared(kernel, grid, block, shared_bytes, std::forward<Args>(args)...);
#else
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = programmatic_launch() ? 1 : 0;
    // The error, if any, stays pending for cudaGetLastError().
    (void)cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
#endif
}

/// Declares a kernel's dynamic shared memory (the launch's shared_bytes) as `type name[]`.
#if defined(MTDESK_CUDA_HOST_EMULATION)
#define MTDESK_DYNAMIC_SHARED(type, name) \
    type* name = static_cast<type*>(::mtdesk::cuda::emulation::dynamic_shared())
#else
#define MTDESK_DYNAMIC_SHARED(type, name) extern __shared__ __align__(16) type name[]
#endif

}  // namespace mtdesk::cuda
