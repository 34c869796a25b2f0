// The part of the CUDA runtime API the kernel suite uses, for its build on the host emulation
// (engine/cuda/host_emulation.h): one emulated device, compute capability 9.0 with 4
// multiprocessors, whose memory is host memory and whose kernels have finished when their launch
// returns. Linked instead of libcudart, which it replaces symbol for symbol.

#include <cuda_runtime.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace {

cudaError_t last_error = cudaSuccess;

cudaError_t fail(cudaError_t e) {
    last_error = e;
    return e;
}

struct Event {
    std::chrono::steady_clock::time_point at;
};

}  // namespace

extern "C" {

cudaError_t cudaMalloc(void** ptr, size_t size) {
    *ptr = std::aligned_alloc(256, (size + 255) / 256 * 256);
    return *ptr ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaFree(void* ptr) {
    std::free(ptr);
    return cudaSuccess;
}

// Pinned host memory is host memory, and the "device" sees it at the same address.
cudaError_t cudaMallocHost(void** ptr, size_t size) {
    return cudaMalloc(ptr, size);
}

cudaError_t cudaFreeHost(void* ptr) {
    return cudaFree(ptr);
}

cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned int) {
    *device = host;
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind) {
    if (count) std::memmove(dst, src, count);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind,
                            cudaStream_t) {
    if (count) std::memmove(dst, src, count);
    return cudaSuccess;
}

cudaError_t cudaMemset(void* ptr, int value, size_t count) {
    if (count) std::memset(ptr, value, count);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t) {
    if (count) std::memset(ptr, value, count);
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t) {
    return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
    *device = 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device) {
    if (device != 0) return fail(cudaErrorInvalidDevice);
    switch (attr) {
        case cudaDevAttrComputeCapabilityMajor:
            *value = 9;
            return cudaSuccess;
        case cudaDevAttrComputeCapabilityMinor:
            *value = 0;
            return cudaSuccess;
        case cudaDevAttrMultiProcessorCount:
            *value = 4;
            return cudaSuccess;
        case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
            *value = 228 * 1024;  // sm_90's
            return cudaSuccess;
        default:
            return fail(cudaErrorInvalidValue);
    }
}

cudaError_t cudaGetLastError(void) {
    const cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) {
    return last_error;
}

const char* cudaGetErrorString(cudaError_t error) {
    switch (error) {
        case cudaSuccess:
            return "no error";
        case cudaErrorMemoryAllocation:
            return "out of memory";
        case cudaErrorInvalidDevice:
            return "invalid device ordinal";
        case cudaErrorInvalidValue:
            return "invalid argument";
        default:
            return "error (emulated runtime)";
    }
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
    *event = reinterpret_cast<cudaEvent_t>(new Event);
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
    delete reinterpret_cast<Event*>(event);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
    reinterpret_cast<Event*>(event)->at = std::chrono::steady_clock::now();
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t) {
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    *ms = std::chrono::duration<float, std::milli>(reinterpret_cast<Event*>(end)->at -
                                                   reinterpret_cast<Event*>(start)->at)
              .count();
    return cudaSuccess;
}

}  // extern "C"
