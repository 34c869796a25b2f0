#pragma once
// Error checking and device memory ownership shared by the CUDA side of the engine.

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <utility>

#include "mtdesk/error.h"

namespace mtdesk::cuda {

/// Throws mtdesk::Error naming the failed call, its source location and CUDA's message.
inline void check(cudaError_t status, const char* what, const char* file, int line) {
    if (status != cudaSuccess)
        throw Error(std::string("CUDA: ") + what + " failed at " + file + ":" +
                    std::to_string(line) + ": " + cudaGetErrorString(status));
}

#define MTDESK_CUDA_CHECK(call) ::mtdesk::cuda::check((call), #call, __FILE__, __LINE__)
/// After a kernel launch: launch errors (bad configuration) surface here.
#define MTDESK_CUDA_CHECK_LAUNCH() MTDESK_CUDA_CHECK(cudaGetLastError())

/// Multiprocessors of the current device (at least 1). Throws Error when CUDA cannot say.
inline int current_sm_count() {
    int device = 0, sms = 0;
    MTDESK_CUDA_CHECK(cudaGetDevice(&device));
    MTDESK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms > 0 ? sms : 1;
}

/// Whether the engine's kernels are launched with programmatic dependent launch (see
/// launch_cuda.cuh): on by default where the device has it (sm_90+), set when a model opens its
/// device; off to compare. Process-wide, as kernel launch helpers take no context.
inline std::atomic<bool>& programmatic_launch_flag() noexcept {
    static std::atomic<bool> flag{false};
    return flag;
}
inline bool programmatic_launch() noexcept {
    return programmatic_launch_flag().load(std::memory_order_relaxed);
}
inline void set_programmatic_launch(bool on) noexcept {
    programmatic_launch_flag().store(on, std::memory_order_relaxed);
}

/// Owns `bytes` of device memory; move-only. Allocation failures throw Error with the size.
class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes) { allocate(bytes); }
    ~DeviceBuffer() { release(); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& o) noexcept
        : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        if (this != &o) {
            release();
            ptr_ = std::exchange(o.ptr_, nullptr);
            bytes_ = std::exchange(o.bytes_, 0);
        }
        return *this;
    }

    void allocate(std::size_t bytes) {
        release();
        if (bytes == 0) return;
        const cudaError_t s = cudaMalloc(&ptr_, bytes);
        if (s != cudaSuccess) {
            ptr_ = nullptr;
            cudaGetLastError();  // clear the sticky-free error state
            throw Error("CUDA: out of device memory allocating " + std::to_string(bytes) +
                        " bytes (" + cudaGetErrorString(s) + ")");
        }
        bytes_ = bytes;
    }
    void release() noexcept {
        if (ptr_) cudaFree(ptr_);
        ptr_ = nullptr;
        bytes_ = 0;
    }

    void* get() const noexcept { return ptr_; }
    template <typename T>
    T* as() const noexcept {
        return static_cast<T*>(ptr_);
    }
    std::size_t bytes() const noexcept { return bytes_; }

  private:
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

}  // namespace mtdesk::cuda
