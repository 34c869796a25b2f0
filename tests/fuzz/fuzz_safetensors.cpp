// libFuzzer target: SafetensorsFile::parse on arbitrary bytes. Besides the sanitizers, it checks
// the invariants callers rely on: every view lies inside the input, its size is numel * dtype
// size, views do not overlap, float views convert, and every error is a FileError naming the file.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/model/safetensors.h"

namespace {

constexpr const char* kName = "fuzz.safetensors";

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto* begin = reinterpret_cast<const std::byte*>(data);
    const std::span<const std::byte> bytes(begin, size);
    try {
        std::map<std::string, std::string> metadata;
        const std::vector<mtdesk::TensorView> views =
            mtdesk::SafetensorsFile::parse(bytes, kName, &metadata);
        std::vector<const mtdesk::TensorView*> by_offset;
        for (const mtdesk::TensorView& v : views) {
            if (v.data < begin + 8 || v.data > begin + size) fail("view starts outside the input");
            if (v.nbytes > static_cast<std::size_t>(begin + size - v.data)) {
                fail("view ends outside the input");
            }
            if (v.numel() < 0) fail("negative numel");
            if (static_cast<uint64_t>(v.numel()) * mtdesk::dtype_size(v.dtype) != v.nbytes) {
                fail("nbytes != numel * dtype size");
            }
            if (v.file != kName) fail("view names another file");
            if (v.dtype == mtdesk::DType::F32 || v.dtype == mtdesk::DType::F16 ||
                v.dtype == mtdesk::DType::BF16) {
                // Reads every byte of the view: ASan reports any read outside the input.
                const std::vector<float> values = v.to_fp32();
                if (values.size() != static_cast<std::size_t>(v.numel())) fail("to_fp32 size");
            }
            if (v.nbytes) by_offset.push_back(&v);
        }
        std::sort(by_offset.begin(), by_offset.end(),
                  [](const auto* a, const auto* b) { return a->data < b->data; });
        for (std::size_t i = 1; i < by_offset.size(); ++i) {
            if (by_offset[i - 1]->data + by_offset[i - 1]->nbytes > by_offset[i]->data) {
                fail("overlapping views");
            }
        }
        for (std::size_t i = 1; i < views.size(); ++i) {
            if (views[i - 1].data > views[i].data) fail("views not in data order");
        }
    } catch (const mtdesk::FileError& e) {
        const std::string what = e.what();
        if (what.rfind(std::string(kName) + ": ", 0) != 0) fail("error does not name the file");
        if (e.problem().empty()) fail("error without a problem");
    }
    // Anything else escaping (std::bad_alloc, a JSON library exception, ...) is a finding:
    // libFuzzer reports the uncaught exception as a crash.
    return 0;
}
