#pragma once
// Memory-mapped safetensors files, single or sharded.
// Format: https://github.com/huggingface/safetensors (8-byte little-endian header length N,
// N bytes of JSON {name: {dtype, shape, data_offsets:[begin,end]}, "__metadata__": {...}},
// then the data buffer; offsets are relative to the start of the buffer).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "mtdesk/model/dtype.h"

namespace mtdesk {

/// A read-only memory mapping of a whole file. Unmapped on destruction.
class MappedFile {
  public:
    /// Maps `path`. Throws FileError when it cannot be opened or mapped.
    explicit MappedFile(const std::filesystem::path& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const std::byte* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    const std::filesystem::path& path() const noexcept { return path_; }

  private:
    std::filesystem::path path_;
    const std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

/// One tensor inside a mapped safetensors file. `data` points into the mapping and stays
/// valid while the owning SafetensorsFile / TensorSet lives. Row-major, little-endian.
/// `data` is not necessarily aligned to the element size (the format does not promise it):
/// read elements with memcpy or convert_to_fp32, never through a cast pointer.
struct TensorView {
    std::string name;
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    const std::byte* data = nullptr;
    std::size_t nbytes = 0;
    std::string file;  ///< path of the file it lives in, for error messages

    /// Product of `shape` (1 for a scalar). Never overflows for a validated tensor.
    int64_t numel() const noexcept;
    /// Copies the tensor to fp32 (F32/F16/BF16 sources). Throws FileError (an Error) naming the
    /// file and tensor for other dtypes.
    std::vector<float> to_fp32() const;
};

/// "[4096, 128]": a shape as error messages and listings show it.
std::string shape_string(const std::vector<int64_t>& shape);

/// A single safetensors file: header parsed and validated (offsets inside the file, sizes equal
/// to numel * dtype size, no overlaps), data memory-mapped. Throws FileError naming the file and
/// the problem for a missing/unreadable file, truncated files, a header length past the end or
/// over 100 MB, malformed JSON or a header that is not an object, entries without
/// dtype/shape/data_offsets, unknown dtypes, negative or overflowing shapes, data_offsets that
/// are not [begin, end] with begin <= end inside the data buffer, a byte size other than
/// numel * dtype size, overlapping tensors, a name given twice, and a "__metadata__" that is not
/// a string -> string object. Dtypes of the format that mtdesk does not read (F8_*, U16, U32,
/// U64, ...) throw UnsupportedError (a FileError).
class SafetensorsFile {
  public:
    explicit SafetensorsFile(const std::filesystem::path& path);

    /// Parses a header held in memory (`bytes` = the whole file). Used by the fuzzer and tests;
    /// same checks and errors as the constructor, `name` stands in for the file name. The views
    /// point into `bytes` and are returned in data-offset order; `metadata` (when given)
    /// receives "__metadata__".
    static std::vector<TensorView> parse(std::span<const std::byte> bytes, const std::string& name,
                                         std::map<std::string, std::string>* metadata = nullptr);

    const std::vector<TensorView>& tensors() const noexcept { return tensors_; }
    const std::map<std::string, std::string>& metadata() const noexcept { return metadata_; }
    const std::filesystem::path& path() const noexcept { return file_->path(); }

  private:
    std::unique_ptr<MappedFile> file_;
    std::vector<TensorView> tensors_;
    std::map<std::string, std::string> metadata_;
};

/// All tensors of a model directory: `model.safetensors`, or the shards listed by
/// `model.safetensors.index.json` (weight_map: tensor name -> shard file); like transformers,
/// the single file wins when both exist. Each shard is mapped once. Throws FileError when
/// neither exists, the index is malformed or names a file outside the directory, a shard is
/// missing, a tensor is listed in the index but absent from its shard, or a name appears in two
/// files; and whatever SafetensorsFile throws for a bad file. Tensors that a shard holds but the
/// index does not list are kept, as transformers does.
class TensorSet {
  public:
    explicit TensorSet(const std::filesystem::path& model_dir);

    /// nullptr when absent.
    const TensorView* find(const std::string& name) const;
    /// Throws FileError (naming the model directory) when absent.
    const TensorView& at(const std::string& name) const;
    const std::map<std::string, const TensorView*>& all() const noexcept { return by_name_; }
    /// Files the tensors came from (one, or the shards).
    std::vector<std::filesystem::path> files() const;
    /// `model.safetensors` or `model.safetensors.index.json`: the file to name in errors about
    /// the set as a whole (e.g. a tensor that is missing).
    const std::filesystem::path& source() const noexcept { return source_; }
    /// Sum of tensor bytes as stored.
    std::size_t total_bytes() const noexcept;

  private:
    std::filesystem::path dir_;
    std::filesystem::path source_;
    std::vector<std::unique_ptr<SafetensorsFile>> files_;
    std::map<std::string, const TensorView*> by_name_;
};

}  // namespace mtdesk
