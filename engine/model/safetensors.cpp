// Memory-mapped safetensors files, single or sharded, with every header field validated.

#include "mtdesk/model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <optional>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "model/json_util.h"
#include "mtdesk/error.h"

namespace mtdesk {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; big-endian hosts are not supported");

namespace {

using json = nlohmann::json;
using model_detail::parse_json;
using model_detail::quote_name;
using model_detail::read_text_file;

// Same limit as the reference implementation (safetensors' MAX_HEADER_SIZE).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// safetensors dtypes that exist in the format but that mtdesk does not read.
bool is_known_unsupported_dtype(std::string_view name) {
    static constexpr std::string_view kNames[] = {"F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3",
                                                  "F6_E3M2", "F4",      "U16",     "U32",
                                                  "U64",     "C64",     "I4",      "U4"};
    return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

std::string errno_text(int err) {
    return std::strerror(err);
}

// Reads a non-negative JSON integer; nullopt when `v` is not one.
std::optional<uint64_t> as_unsigned(const json& v) {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    return std::nullopt;
}

struct Range {
    uint64_t begin;
    uint64_t end;
    std::size_t index;
};

}  // namespace

std::string shape_string(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

// ---------------------------------------------------------------------------------------------
// MappedFile

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path) {
    const std::string name = path.string();
    int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        throw FileError(name, err == ENOENT ? "file does not exist"
                                            : "cannot open for reading: " + errno_text(err));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw FileError(name, "cannot stat: " + errno_text(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw FileError(
            name, S_ISDIR(st.st_mode) ? "is a directory, not a file" : "is not a regular file");
    }
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ > 0) {
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            throw FileError(
                name, "cannot memory-map " + std::to_string(size_) + " bytes: " + errno_text(err));
        }
        data_ = static_cast<const std::byte*>(p);
    }
    ::close(fd);  // the mapping keeps the file referenced
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
}

// ---------------------------------------------------------------------------------------------
// TensorView

int64_t TensorView::numel() const noexcept {
    int64_t n = 1;
    for (int64_t d : shape)
        n *= d;
    return n;
}

std::vector<float> TensorView::to_fp32() const {
    if (dtype != DType::F32 && dtype != DType::F16 && dtype != DType::BF16) {
        throw FileError(file, "tensor " + quote_name(name) + " is " +
                                  std::string(dtype_name(dtype)) +
                                  ", not a floating-point type (F32, F16 or BF16)");
    }
    std::vector<float> out(static_cast<std::size_t>(numel()));
    convert_to_fp32(dtype, data, out.data(), out.size());
    return out;
}

// ---------------------------------------------------------------------------------------------
// SafetensorsFile

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path)
    : file_(std::make_unique<MappedFile>(path)) {
    tensors_ =
        parse(std::span<const std::byte>(file_->data(), file_->size()), path.string(), &metadata_);
}

std::vector<TensorView> SafetensorsFile::parse(std::span<const std::byte> bytes,
                                               const std::string& name,
                                               std::map<std::string, std::string>* metadata) {
    const uint64_t file_size = bytes.size();
    if (file_size < 8) {
        throw FileError(name, "file is truncated: " + std::to_string(file_size) +
                                  " bytes, too short for the 8-byte safetensors header length");
    }
    uint64_t header_len = 0;
    std::memcpy(&header_len, bytes.data(), 8);  // little-endian (static_assert above)
    if (header_len > file_size - 8) {
        throw FileError(name, "header length " + std::to_string(header_len) +
                                  " runs past the end of the file (" + std::to_string(file_size) +
                                  " bytes): truncated or not a safetensors file");
    }
    if (header_len > kMaxHeaderBytes) {
        throw FileError(name, "header length " + std::to_string(header_len) +
                                  " is absurdly large (limit " + std::to_string(kMaxHeaderBytes) +
                                  " bytes)");
    }
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + 8,
                                static_cast<std::size_t>(header_len));
    std::string duplicate;
    const json header = parse_json(text, name, "header", &duplicate);
    if (!header.is_object()) {
        throw FileError(name, "header is not a JSON object");
    }
    if (!duplicate.empty()) {
        throw FileError(name, "tensor " + quote_name(duplicate) + " appears twice in the header");
    }

    const uint64_t data_size = file_size - 8 - header_len;
    const std::byte* data_base = bytes.data() + 8 + header_len;

    std::vector<TensorView> tensors;
    std::vector<Range> ranges;
    tensors.reserve(header.size());
    for (auto it = header.begin(); it != header.end(); ++it) {
        const std::string& tname = it.key();
        const json& entry = it.value();
        if (tname == "__metadata__") {
            if (entry.is_null()) continue;
            if (!entry.is_object()) {
                throw FileError(name, "__metadata__ is not an object of strings");
            }
            for (auto m = entry.begin(); m != entry.end(); ++m) {
                if (!m.value().is_string()) {
                    throw FileError(
                        name, "__metadata__ entry " + quote_name(m.key()) + " is not a string");
                }
                if (metadata) (*metadata)[m.key()] = m.value().get<std::string>();
            }
            continue;
        }
        const std::string what = "tensor " + quote_name(tname);
        if (!entry.is_object()) throw FileError(name, what + " is not a JSON object");

        // dtype
        const auto dt = entry.find("dtype");
        if (dt == entry.end()) throw FileError(name, what + " has no dtype");
        if (!dt->is_string()) throw FileError(name, what + ": dtype is not a string");
        const std::string& dtype_text = dt->get_ref<const std::string&>();
        const std::optional<DType> dtype = parse_dtype(dtype_text);
        if (!dtype) {
            if (is_known_unsupported_dtype(dtype_text)) {
                throw UnsupportedError(
                    name, what + " has dtype " + dtype_text + ", which mtdesk does not read");
            }
            throw FileError(name, what + " has unknown dtype " + quote_name(dtype_text));
        }

        // shape
        const auto sh = entry.find("shape");
        if (sh == entry.end()) throw FileError(name, what + " has no shape");
        if (!sh->is_array()) throw FileError(name, what + ": shape is not an array");
        TensorView view;
        view.name = tname;
        view.dtype = *dtype;
        view.file = name;
        uint64_t numel = 1;
        bool overflow = false;
        for (const json& d : *sh) {
            if (d.is_number_integer() && !d.is_number_unsigned()) {
                throw FileError(name, what + " has a negative dimension in its shape");
            }
            const auto dim = as_unsigned(d);
            if (!dim) throw FileError(name, what + ": shape holds a non-integer");
            if (*dim > static_cast<uint64_t>(INT64_MAX)) overflow = true;
            if (__builtin_mul_overflow(numel, *dim, &numel)) overflow = true;
            view.shape.push_back(static_cast<int64_t>(*dim));
        }
        uint64_t nbytes = 0;
        if (overflow || numel > static_cast<uint64_t>(INT64_MAX) ||
            __builtin_mul_overflow(numel, static_cast<uint64_t>(dtype_size(*dtype)), &nbytes)) {
            throw FileError(name, what + " shape " + shape_string(view.shape) +
                                      " has an element count that overflows");
        }

        // data_offsets
        const auto off = entry.find("data_offsets");
        if (off == entry.end()) throw FileError(name, what + " has no data_offsets");
        if (!off->is_array() || off->size() != 2) {
            throw FileError(name, what + ": data_offsets is not a [begin, end] pair");
        }
        const auto begin = as_unsigned((*off)[0]);
        const auto end = as_unsigned((*off)[1]);
        if (!begin || !end) {
            throw FileError(name, what + ": data_offsets are not non-negative integers");
        }
        const std::string offsets =
            "data_offsets [" + std::to_string(*begin) + ", " + std::to_string(*end) + "]";
        if (*begin > *end) throw FileError(name, what + " " + offsets + " has begin > end");
        if (*end > data_size) {
            throw FileError(name, what + " " + offsets + " run past the end of the file (" +
                                      std::to_string(file_size) + " bytes, data buffer " +
                                      std::to_string(data_size) + " bytes)");
        }
        if (*end - *begin != nbytes) {
            throw FileError(name, what + " " + offsets + " hold " + std::to_string(*end - *begin) +
                                      " bytes but " + std::string(dtype_name(*dtype)) + " " +
                                      shape_string(view.shape) + " needs " +
                                      std::to_string(nbytes) + " (size mismatch)");
        }
        view.data = data_base + *begin;
        view.nbytes = static_cast<std::size_t>(nbytes);
        ranges.push_back({*begin, *end, tensors.size()});
        tensors.push_back(std::move(view));
    }

    // Overlaps: sort by offset, every non-empty tensor must start at or after the furthest end
    // seen so far.
    std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    const Range* furthest = nullptr;
    for (const Range& r : ranges) {
        if (r.begin == r.end) continue;
        if (furthest && r.begin < furthest->end) {
            const TensorView& a = tensors[furthest->index];
            const TensorView& b = tensors[r.index];
            throw FileError(name, "tensors " + quote_name(a.name) + " [" +
                                      std::to_string(furthest->begin) + ", " +
                                      std::to_string(furthest->end) + "] and " +
                                      quote_name(b.name) + " [" + std::to_string(r.begin) + ", " +
                                      std::to_string(r.end) + "] overlap");
        }
        if (!furthest || r.end > furthest->end) furthest = &r;
    }
    // The format wants the data buffer indexed entirely, without holes (as the reference
    // implementation checks): bytes no tensor covers mean a damaged file, or one appended to.
    uint64_t covered = 0;
    for (const Range& r : ranges) {
        if (r.begin == r.end) continue;
        if (r.begin > covered) {
            throw FileError(name, "bytes " + std::to_string(covered) + " to " +
                                      std::to_string(r.begin) + " of the data buffer belong to " +
                                      "no tensor (the format allows no holes: a damaged file?)");
        }
        covered = std::max(covered, r.end);
    }
    if (covered != data_size) {
        throw FileError(name, std::to_string(data_size - covered) +
                                  " bytes after the last tensor belong to no tensor (the format "
                                  "allows none: a damaged file, or something appended to it?)");
    }

    // Return the tensors in file order (sequential reads page in the mapping front to back).
    std::vector<TensorView> ordered;
    ordered.reserve(tensors.size());
    for (const Range& r : ranges)
        ordered.push_back(std::move(tensors[r.index]));
    return ordered;
}

// ---------------------------------------------------------------------------------------------
// TensorSet

namespace {

constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";

// A shard name from the index must stay inside the model directory.
bool is_safe_relative(const std::filesystem::path& p) {
    if (p.empty() || p.is_absolute() || p.has_root_name() || p.has_root_directory()) return false;
    for (const auto& part : p) {
        if (part == "..") return false;
    }
    return true;
}

}  // namespace

TensorSet::TensorSet(const std::filesystem::path& model_dir) : dir_(model_dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path single = model_dir / kSingleFile;
    const fs::path index = model_dir / kIndexFile;

    auto add_file = [&](std::unique_ptr<SafetensorsFile> file) {
        for (const TensorView& t : file->tensors()) {
            auto [it, inserted] = by_name_.emplace(t.name, &t);
            if (!inserted) {
                throw FileError(file->path().string(),
                                "tensor " + quote_name(t.name) + " is also in " + it->second->file +
                                    " (a tensor may appear in only one file)");
            }
        }
        files_.push_back(std::move(file));
    };

    // transformers looks for the single file first, then the index; so do we.
    if (fs::is_regular_file(single, ec)) {
        source_ = single;
        add_file(std::make_unique<SafetensorsFile>(single));
        return;
    }
    for (const fs::path& p : {single, index}) {
        if (fs::exists(p, ec) && !fs::is_regular_file(p, ec))
            throw FileError(p.string(), "is not a regular file");
    }
    if (!fs::is_regular_file(index, ec)) {
        std::string problem = "no " + std::string(kSingleFile) + " or " + kIndexFile;
        if (fs::exists(model_dir / "pytorch_model.bin", ec) ||
            fs::exists(model_dir / "pytorch_model.bin.index.json", ec)) {
            problem +=
                " (only PyTorch .bin weights, which mtdesk does not read: convert them to "
                "safetensors)";
        } else if (!fs::is_directory(model_dir, ec)) {
            problem = "is not a directory";
        }
        throw FileError(model_dir.string(), problem);
    }
    source_ = index;

    const std::string index_name = index.string();
    const json j = parse_json(read_text_file(index_name), index_name, "index", nullptr);
    if (!j.is_object()) throw FileError(index_name, "not a JSON object");
    const auto wm = j.find("weight_map");
    if (wm == j.end()) throw FileError(index_name, "has no weight_map");
    if (!wm->is_object()) throw FileError(index_name, "weight_map is not an object");
    if (wm->empty()) throw FileError(index_name, "weight_map is empty");

    // shard file -> tensor names the index places in it (map: deterministic order).
    std::map<std::string, std::vector<std::string>> shards;
    for (auto it = wm->begin(); it != wm->end(); ++it) {
        if (!it.value().is_string()) {
            throw FileError(index_name,
                            "weight_map entry " + quote_name(it.key()) + " is not a file name");
        }
        const std::string& shard = it.value().get_ref<const std::string&>();
        // Longer than any path Linux can open (PATH_MAX): said here, quoted short, rather than
        // echoed whole in a message about a missing shard.
        if (shard.size() >= 4096) {
            throw FileError(index_name, "weight_map entry " + quote_name(it.key()) +
                                            " names a file of " + std::to_string(shard.size()) +
                                            " bytes, longer than any path: " + quote_name(shard));
        }
        if (!is_safe_relative(shard)) {
            throw FileError(index_name,
                            "weight_map entry " + quote_name(it.key()) +
                                " names a file outside the model directory: " + quote_name(shard));
        }
        // "./a.safetensors" and "a.safetensors" are one file, mapped once.
        shards[fs::path(shard).lexically_normal().string()].push_back(it.key());
    }
    for (const auto& [shard, names] : shards) {
        const fs::path shard_path = model_dir / shard;
        if (!fs::exists(shard_path, ec)) {
            throw FileError(shard_path.string(), "shard does not exist (listed in " +
                                                     std::string(kIndexFile) + " for " +
                                                     std::to_string(names.size()) + " tensor" +
                                                     (names.size() == 1 ? "" : "s") + ", e.g. " +
                                                     quote_name(names[0]) + ")");
        }
        auto file = std::make_unique<SafetensorsFile>(shard_path);
        std::set<std::string_view> present;
        for (const TensorView& t : file->tensors())
            present.insert(t.name);
        for (const std::string& n : names) {
            if (!present.count(n)) {
                throw FileError(shard_path.string(), "tensor " + quote_name(n) + " listed in " +
                                                         std::string(kIndexFile) +
                                                         " is not in this file");
            }
        }
        // Tensors of a shard that the index does not list are kept (transformers loads every
        // tensor of every shard); a name found in two shards is an error.
        add_file(std::move(file));
    }
}

const TensorView* TensorSet::find(const std::string& name) const {
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
}

const TensorView& TensorSet::at(const std::string& name) const {
    const TensorView* t = find(name);
    if (!t)
        throw FileError(dir_.string(), "tensor " + quote_name(name) + " not found in the weights");
    return *t;
}

std::vector<std::filesystem::path> TensorSet::files() const {
    std::vector<std::filesystem::path> out;
    out.reserve(files_.size());
    for (const auto& f : files_)
        out.push_back(f->path());
    return out;
}

std::size_t TensorSet::total_bytes() const noexcept {
    std::size_t total = 0;
    for (const auto& [name, t] : by_name_)
        total += t->nbytes;
    return total;
}

}  // namespace mtdesk
