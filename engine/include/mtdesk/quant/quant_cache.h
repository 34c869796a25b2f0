#pragma once
// On-disk cache of quantised weights, so that a model's second load in an INT tier skips the
// quantisation.
//
// Layout: <root>/<key>/<tensor file>, one directory per (model weights, tier, format version),
// one file per tensor. <root> is $XDG_CACHE_HOME/mtdesk/quantized (default
// ~/.cache/mtdesk/quantized). A tensor file is a small binary header (magic, format version,
// kind, shape, group, the tensor's name, sizes and a 64-bit checksum of the payload) followed by
// the quantised values and the scales as fp16, little-endian. Files are written to a temporary
// name in the same directory, flushed and renamed over the final name, so a reader sees the old
// file, the new file, or nothing, never half of one. A file that is truncated, too long, has a
// wrong header or fails its checksum is ignored (load() says "not cached") and the next store()
// replaces it.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "mtdesk/quant/quantize.h"
#include "mtdesk/quant/tiers.h"

namespace mtdesk {

/// The cache of quantised tensors under one root directory. Thread-compatible; several
/// processes may share a root (writes are atomic renames; the last writer wins).
class QuantCache {
  public:
    /// Bumped whenever the file format or the quantisation scheme changes; part of every key,
    /// so old entries are simply never found again.
    static constexpr int kFormatVersion = 1;

    /// A cache rooted at `root` (created on the first store()).
    explicit QuantCache(std::filesystem::path root);

    /// $XDG_CACHE_HOME/mtdesk/quantized when XDG_CACHE_HOME is set to an absolute path (the XDG
    /// base directory rule: relative values are ignored), else $HOME/.cache/mtdesk/quantized.
    /// Throws mtdesk::Error when neither variable gives a directory.
    static std::filesystem::path default_root();

    /// The key of a model's weights in tier `tier`: "<16 hex digits>-<tier>-v<version>".
    ///
    /// The 64-bit hash covers, for each weights file in name order: its file name, size,
    /// modification time, safetensors header (the 8-byte length and the JSON), and its first
    /// and last MiB; plus the tier, the INT4 group size and kFormatVersion. That reads a few MiB
    /// per shard instead of hashing 15 GB. The trade-off: any re-download, conversion or copy
    /// (new mtime or size), and any change to the tensor list, dtypes, shapes or the edges of
    /// the data, changes the key; an edit in the middle of a shard that keeps its size and
    /// also restores its mtime would not, and would serve stale weights. Copying a model to a
    /// new place without keeping mtimes only costs one requantisation; moving it keeps the key
    /// (the directory itself is not hashed). Throws FileError naming a file that cannot be
    /// read or stat'ed, and mtdesk::Error when `weight_files` is empty.
    static std::string model_key(std::span<const std::filesystem::path> weight_files, Tier tier);

    /// The directory of `key`. Throws mtdesk::Error when `key` is empty or holds characters
    /// other than [0-9a-z-] (keys come from model_key(); this keeps paths inside the root).
    std::filesystem::path entry_dir(const std::string& key) const;

    /// The file that holds `tensor_name` under `key`: the name with every byte outside
    /// [A-Za-z0-9_.-] (and a leading '.') written as %XX, so distinct names never share a file,
    /// and ".qt" after it ("model.layers.0.qkv.qt").
    /// Throws mtdesk::Error for an invalid key or an empty name.
    std::filesystem::path tensor_path(const std::string& key, const std::string& tensor_name) const;

    /// The cached tensor, or nullopt when it is absent, unreadable, truncated, corrupt, written
    /// by another format version or for another name. Never throws for bad files.
    std::optional<QuantizedTensor> load(const std::string& key,
                                        const std::string& tensor_name) const;

    /// Writes `tensor` atomically (temporary file, fsync, rename), creating directories as
    /// needed and replacing an older entry. Throws mtdesk::Error for an invalid key, name or
    /// tensor (see validate()), and FileError naming the file when it cannot be written; then
    /// no temporary file is left behind and an older entry is untouched.
    void store(const std::string& key, const std::string& tensor_name,
               const QuantizedTensor& tensor) const;

    /// load(), or else make() and store() the result. A failing store is not an error (the
    /// cache only saves time): the tensor is returned anyway. Exceptions from make() propagate.
    QuantizedTensor load_or_make(const std::string& key, const std::string& tensor_name,
                                 const std::function<QuantizedTensor()>& make) const;

    const std::filesystem::path& root() const noexcept { return root_; }

  private:
    std::filesystem::path root_;
};

/// A 64-bit non-cryptographic hash of `bytes` (four-lane multiply-rotate mixing in the style of
/// xxHash64; not bit-compatible with it), continuing from `seed`. Several GB/s: used for the
/// cache keys and the per-file checksums.
uint64_t quant_hash64(std::span<const std::byte> bytes, uint64_t seed = 0) noexcept;

}  // namespace mtdesk
