#pragma once
// Reading the transformers goldens of tools/fixtures/make_fixtures.py
// (tests/data/goldens/<fixture>.safetensors), shared by the CPU and GPU parity suites.

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "mtdesk/model/safetensors.h"

namespace mtdesk::test {

/// One fixture's goldens: token ids (I64) and logits.
struct Golden {
    std::unique_ptr<SafetensorsFile> file;

    explicit Golden(const std::filesystem::path& path)
        : file(std::make_unique<SafetensorsFile>(path)) {}

    const TensorView* find(const std::string& name) const {
        for (const TensorView& t : file->tensors())
            if (t.name == name) return &t;
        return nullptr;
    }
    /// Throws std::runtime_error when the tensor is missing.
    const TensorView& at(const std::string& name) const {
        const TensorView* t = find(name);
        if (t == nullptr) throw std::runtime_error("golden tensor " + name + " missing");
        return *t;
    }
    /// An I64 tensor as int32 ids. Throws std::runtime_error for another dtype.
    std::vector<int32_t> ids(const std::string& name) const {
        const TensorView& t = at(name);
        if (t.dtype != DType::I64) throw std::runtime_error(name + " is not I64");
        std::vector<int32_t> out(static_cast<std::size_t>(t.numel()));
        for (std::size_t i = 0; i < out.size(); ++i) {
            int64_t v;
            std::memcpy(&v, t.data + i * sizeof v, sizeof v);
            out[i] = static_cast<int32_t>(v);
        }
        return out;
    }
};

}  // namespace mtdesk::test
