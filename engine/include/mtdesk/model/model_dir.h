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
    /// presence, shape and dtype (F32/F16/BF16) against the config (see expected_tensors()).
    /// Tensors the config does not explain are an error too (e.g. a bias the config says is
    /// absent), except weightless buffers ("*rotary_emb.inv_freq"), which are ignored. With
    /// tie_word_embeddings a checkpoint may still hold "lm_head.weight" [vocab, hidden]: it is
    /// accepted, and a forward pass must then use it rather than the embedding (transformers 5
    /// keeps it untied when the values differ). Throws FileError naming the offending file
    /// (config.json, the weights file or index, the shard) and tensor: a missing directory,
    /// config.json or weights, a missing or mis-shaped tensor (expected vs found shape), a
    /// non-float dtype, an unexpected tensor; UnsupportedError from the config. Nothing is
    /// allocated beyond the mappings and the parsed headers.
    static ModelDir open(const std::filesystem::path& dir);
};

}  // namespace mtdesk
