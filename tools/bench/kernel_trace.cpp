/*
 * Kernel timeline of a CUDA program as it runs, CUDA graphs and programmatic dependent launch
 * included: a CUPTI injection library that records every kernel's start and end on the GPU
 * (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, which traces each kernel node of a replayed graph) and
 * writes one CSV line per kernel when the program exits. Unlike Nsight Compute, which runs
 * kernels one at a time, kernels overlap here as they do in the engine, so
 * tools/bench/step_timeline.py can say how much of a decode step each kernel holds on its
 * critical path.
 *
 * Build: the CMake build makes build/tests/kernel_trace.so where CUDA is found; by hand:
 *   g++ -O2 -shared -fPIC -I /usr/local/cuda/include tools/bench/kernel_trace.cpp \
 *       -L /usr/local/cuda/lib64 -lcupti -o kernel_trace.so
 * Run (on the GPU machine; the CUDA driver loads the library when the program initialises CUDA):
 *   CUDA_INJECTION64_PATH=$PWD/build/tests/kernel_trace.so KERNEL_TRACE_OUT=trace.csv \
 *       build/app/mtdesk bench --synthetic hy-mt-7b --tier int4 --batch 1 --new-tokens 48
 *   python3 tools/bench/step_timeline.py trace.csv
 * Output: start_ns,end_ns,grid_x,grid_y,block_x,name (GPU timestamps; the demangled name with
 * commas replaced by semicolons). KERNEL_TRACE_OUT defaults to kernel_trace.csv.
 * Reference: CUPTI Activity API (CUDA toolkit documentation, "CUPTI", "Activity API" and
 * "Injection").
 */

#include <cupti.h>
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

FILE* out = nullptr;
constexpr std::size_t kBufferBytes = 32u << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
    *size = kBufferBytes;
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, std::size_t,
                               std::size_t valid) {
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        int status = 0;
        char* demangled = abi::__cxa_demangle(k->name, nullptr, nullptr, &status);
        std::string name = demangled ? demangled : k->name;
        std::free(demangled);
        for (char& c : name)
            if (c == ',') c = ';';  // one CSV field
        std::fprintf(out, "%llu,%llu,%d,%d,%d,%s\n", static_cast<unsigned long long>(k->start),
                     static_cast<unsigned long long>(k->end), k->gridX, k->gridY, k->blockX,
                     name.c_str());
    }
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0)
        std::fprintf(stderr, "kernel_trace: %zu records dropped\n", dropped);
    std::free(buffer);
}

void finish() {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (out) std::fclose(out);
    out = nullptr;
}

bool check(CUptiResult r, const char* what) {
    if (r == CUPTI_SUCCESS) return true;
    const char* text = nullptr;
    cuptiGetResultString(r, &text);
    std::fprintf(stderr, "kernel_trace: %s: %s\n", what, text ? text : "unknown error");
    return false;
}

}  // namespace

/// Called by the CUDA driver when CUDA_INJECTION64_PATH names this library; returns 1 on
/// success (tracing on), 0 otherwise (the program then runs untraced).
extern "C" int InitializeInjection() {
    const char* path = std::getenv("KERNEL_TRACE_OUT");
    if (!path) path = "kernel_trace.csv";
    out = std::fopen(path, "w");
    if (!out) {
        std::fprintf(stderr, "kernel_trace: cannot write %s\n", path);
        return 0;
    }
    if (!check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
               "cuptiActivityRegisterCallbacks") ||
        !check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable"))
        return 0;
    std::atexit(finish);
    return 1;
}
