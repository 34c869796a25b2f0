#pragma once
// A model directory as published on the model hubs: config.json, generation_config.json,
// safetensors weights (single or sharded) and tokenizer files.

#include <filesystem>
#include <memory>

#include "mtdesk/model/config.h"
#include "mtdesk/model/safetensors.h"

namespace mtdesk {

/// An opened, validated model directory. Weights stay memory-mapped.
struct ModelDir {
    std::filesystem::path path;
    ModelConfig config;
    GenerationConfig generation;
    std::unique_ptr<TensorSet> tensors;

    /// Opens `dir`, parses the configs, maps the weights and checks every expected tensor's
    /// presence, shape and dtype (F32/F16/BF16) against the config. Tensors the config does not
    /// explain are an error too (e.g. a bias the config says is absent). Throws FileError /
    /// UnsupportedError naming the offending file and tensor. Nothing is allocated beyond the
    /// mappings and the parsed headers.
    static ModelDir open(const std::filesystem::path& dir);
};

}  // namespace mtdesk
