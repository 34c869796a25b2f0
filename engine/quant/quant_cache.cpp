// On-disk cache of quantised weights: keys, the tensor file format, atomic writes.

#include "mtdesk/quant/quant_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/model/dtype.h"

namespace mtdesk {

static_assert(std::endian::native == std::endian::little,
              "the quantised-weight cache format is little-endian");

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kP3 = 0x165667B19E3779F9ull;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ull;

uint64_t read64(const std::byte* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

uint64_t mix_round(uint64_t acc, uint64_t input) {
    acc += input * kP2;
    acc = std::rotl(acc, 31);
    return acc * kP1;
}

constexpr char kMagic[8] = {'M', 'T', 'D', 'Q', 'U', 'A', 'N', 'T'};
constexpr uint32_t kKindInt8 = 1;
constexpr uint32_t kKindInt4 = 2;
constexpr std::size_t kMiB = 1 << 20;

// Fixed part of a tensor file, written as is (all fields little-endian, no padding holes).
struct FileHeader {
    char magic[8];
    uint32_t version;
    uint32_t kind;
    int32_t n;
    int32_t k;
    int32_t group;     // 0 for INT8
    int32_t k_padded;  // k for INT8
    uint64_t name_bytes;
    uint64_t value_bytes;  // int8 values or packed int4 bytes
    uint64_t scale_count;  // fp16 scales that follow the values
    uint64_t checksum;     // quant_hash64 of name, values and scales
};
static_assert(sizeof(FileHeader) == 64);

bool valid_key(const std::string& key) {
    if (key.empty() || key.size() > 100) return false;
    return std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-';
    });
}

std::string escape_name(const std::string& name) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(name[i]);
        const bool plain = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                           (c >= 'A' && c <= 'Z') || c == '_' || c == '-' || (c == '.' && i > 0);
        if (plain) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    // File names are limited to 255 bytes: long names keep a prefix plus a hash of the whole.
    if (out.size() > 200) {
        const uint64_t h = quant_hash64(std::as_bytes(std::span(name.data(), name.size())));
        static constexpr char kDigits[] = "0123456789abcdef";
        std::string suffix = "~";
        for (int i = 15; i >= 0; --i)
            suffix += kDigits[(h >> (4 * i)) & 15];
        out = out.substr(0, 180) + suffix;
    }
    return out + ".qt";
}

std::string errno_text(int err) {
    return std::strerror(err);
}

// Appends the bytes of a trivially copyable value to a hash state.
template <typename V>
uint64_t hash_value(const V& v, uint64_t seed) {
    return quant_hash64(std::as_bytes(std::span(&v, 1)), seed);
}

uint64_t hash_string(const std::string& s, uint64_t seed) {
    seed = hash_value(static_cast<uint64_t>(s.size()), seed);
    return quant_hash64(std::as_bytes(std::span(s.data(), s.size())), seed);
}

// Reads up to `count` bytes at `offset` (fewer at the end of the file).
std::vector<std::byte> read_at(std::ifstream& in, uint64_t offset, uint64_t count) {
    std::vector<std::byte> buf(count);
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(count));
    buf.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    return buf;
}

uint64_t hash_weights_file(const fs::path& path, uint64_t seed) {
    std::error_code ec;
    const uint64_t size = fs::file_size(path, ec);
    if (ec) throw FileError(path.string(), "cannot read its size: " + ec.message());
    const auto mtime = fs::last_write_time(path, ec);
    if (ec) throw FileError(path.string(), "cannot read its modification time: " + ec.message());
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FileError(path.string(), "cannot be opened for reading");

    seed = hash_string(path.filename().string(), seed);
    seed = hash_value(size, seed);
    seed = hash_value(static_cast<int64_t>(mtime.time_since_epoch().count()), seed);
    // safetensors header: 8-byte length, then that many bytes of JSON (bounded by the file and
    // by the format's own 100 MB limit; a non-safetensors file simply hashes less).
    uint64_t header_len = 0;
    const std::vector<std::byte> len_bytes = read_at(in, 0, 8);
    if (len_bytes.size() == 8) std::memcpy(&header_len, len_bytes.data(), 8);
    header_len = std::min<uint64_t>({header_len, size > 8 ? size - 8 : 0, 100'000'000});
    seed = quant_hash64(read_at(in, 0, 8 + header_len), seed);
    seed = quant_hash64(read_at(in, 0, std::min<uint64_t>(size, kMiB)), seed);
    const uint64_t tail = std::min<uint64_t>(size, kMiB);
    seed = quant_hash64(read_at(in, size - tail, tail), seed);
    if (in.bad()) throw FileError(path.string(), "read error");
    return seed;
}

bool read_exact(int fd, void* dst, std::size_t count) {
    auto* p = static_cast<char*>(dst);
    while (count > 0) {
        const ssize_t got = ::read(fd, p, count);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        p += got;
        count -= static_cast<std::size_t>(got);
    }
    return true;
}

void write_all(int fd, const void* src, std::size_t count, const fs::path& path) {
    const auto* p = static_cast<const char*>(src);
    while (count > 0) {
        const ssize_t put = ::write(fd, p, count);
        if (put < 0 && errno == EINTR) continue;
        if (put < 0) throw FileError(path.string(), "cannot be written: " + errno_text(errno));
        p += put;
        count -= static_cast<std::size_t>(put);
    }
}

class Fd {
  public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }

  private:
    int fd_;
};

// Payload of a tensor: value bytes and fp16 scales.
struct Payload {
    uint32_t kind = 0;
    int32_t n = 0, k = 0, group = 0, k_padded = 0;
    std::span<const std::byte> values;
    std::vector<uint16_t> scales;
};

Payload payload_of(const QuantizedTensor& tensor) {
    Payload p;
    auto fp16 = [](const std::vector<float>& s) {
        std::vector<uint16_t> out(s.size());
        for (std::size_t i = 0; i < s.size(); ++i)
            out[i] = fp32_to_fp16_bits(s[i]);
        return out;
    };
    if (const auto* t8 = std::get_if<QuantizedInt8>(&tensor)) {
        p.kind = kKindInt8;
        p.n = t8->n;
        p.k = t8->k;
        p.k_padded = t8->k;
        p.values = std::as_bytes(std::span(t8->q));
        p.scales = fp16(t8->scales);
    } else {
        const auto& t4 = std::get<QuantizedInt4>(tensor);
        p.kind = kKindInt4;
        p.n = t4.n;
        p.k = t4.k;
        p.group = t4.group;
        p.k_padded = t4.k_padded;
        p.values = std::as_bytes(std::span(t4.packed));
        p.scales = fp16(t4.scales);
    }
    return p;
}

uint64_t payload_checksum(const std::string& name, std::span<const std::byte> values,
                          std::span<const uint16_t> scales) {
    uint64_t h = hash_string(name, 0);
    h = quant_hash64(values, h);
    return quant_hash64(std::as_bytes(scales), h);
}

std::atomic<unsigned> g_temp_counter{0};

}  // namespace

uint64_t quant_hash64(std::span<const std::byte> bytes, uint64_t seed) noexcept {
    const std::byte* p = bytes.data();
    const std::size_t len = bytes.size();
    const std::byte* const end = p + len;
    uint64_t h;
    if (len >= 32) {
        uint64_t v1 = seed + kP1 + kP2, v2 = seed + kP2, v3 = seed, v4 = seed - kP1;
        const std::byte* const limit = end - 32;
        do {
            v1 = mix_round(v1, read64(p));
            v2 = mix_round(v2, read64(p + 8));
            v3 = mix_round(v3, read64(p + 16));
            v4 = mix_round(v4, read64(p + 24));
            p += 32;
        } while (p <= limit);
        h = std::rotl(v1, 1) + std::rotl(v2, 7) + std::rotl(v3, 12) + std::rotl(v4, 18);
        for (uint64_t v : {v1, v2, v3, v4})
            h = (h ^ mix_round(0, v)) * kP1 + kP4;
    } else {
        h = seed + kP5;
    }
    h += static_cast<uint64_t>(len);
    for (; p + 8 <= end; p += 8)
        h = std::rotl(h ^ mix_round(0, read64(p)), 27) * kP1 + kP4;
    for (; p < end; ++p)
        h = std::rotl(h ^ (static_cast<uint64_t>(static_cast<uint8_t>(*p)) * kP5), 11) * kP1;
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    h ^= h >> 32;
    return h;
}

QuantCache::QuantCache(fs::path root) : root_(std::move(root)) {}

fs::path QuantCache::default_root() {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    if (xdg != nullptr && fs::path(xdg).is_absolute())
        return fs::path(xdg) / "mtdesk" / "quantized";
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0')
        throw Error(
            "no cache directory for quantised weights: neither XDG_CACHE_HOME nor HOME "
            "is set");
    return fs::path(home) / ".cache" / "mtdesk" / "quantized";
}

std::string QuantCache::model_key(std::span<const fs::path> weight_files, Tier tier) {
    if (weight_files.empty()) throw Error("quantised-weight cache key: no weights files given");
    std::vector<fs::path> files(weight_files.begin(), weight_files.end());
    std::sort(files.begin(), files.end(),
              [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
    uint64_t h = hash_string("mtdesk quantised weights", 0);
    h = hash_value(static_cast<int32_t>(kFormatVersion), h);
    h = hash_string(std::string(tier_name(tier)), h);
    h = hash_value(static_cast<int32_t>(kInt4GroupSize), h);
    for (const fs::path& f : files)
        h = hash_weights_file(f, h);
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string key;
    for (int i = 15; i >= 0; --i)
        key += kDigits[(h >> (4 * i)) & 15];
    return key + "-" + std::string(tier_name(tier)) + "-v" + std::to_string(kFormatVersion);
}

fs::path QuantCache::entry_dir(const std::string& key) const {
    if (!valid_key(key))
        throw Error("quantised-weight cache: invalid key \"" + key + "\" (expected [0-9a-z-])");
    return root_ / key;
}

fs::path QuantCache::tensor_path(const std::string& key, const std::string& tensor_name) const {
    if (tensor_name.empty()) throw Error("quantised-weight cache: empty tensor name");
    return entry_dir(key) / escape_name(tensor_name);
}

std::optional<QuantizedTensor> QuantCache::load(const std::string& key,
                                                const std::string& tensor_name) const {
    fs::path path;
    try {
        path = tensor_path(key, tensor_name);
    } catch (const Error&) {
        return std::nullopt;
    }
    try {
        Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (fd.get() < 0) return std::nullopt;
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
        const uint64_t file_size = static_cast<uint64_t>(st.st_size);

        FileHeader h{};
        if (file_size < sizeof h || !read_exact(fd.get(), &h, sizeof h)) return std::nullopt;
        if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 ||
            h.version != static_cast<uint32_t>(kFormatVersion))
            return std::nullopt;
        if (h.n <= 0 || h.k <= 0 || h.name_bytes != tensor_name.size()) return std::nullopt;
        uint64_t expect_values = 0, expect_scales = 0;
        const uint64_t n = static_cast<uint64_t>(h.n);
        if (h.kind == kKindInt8) {
            if (h.group != 0 || h.k_padded != h.k) return std::nullopt;
            expect_values = n * static_cast<uint64_t>(h.k);
            expect_scales = n;
        } else if (h.kind == kKindInt4) {
            if (h.group < 2 || h.group % 2 != 0) return std::nullopt;
            const int64_t padded = (static_cast<int64_t>(h.k) + h.group - 1) / h.group * h.group;
            if (h.k_padded != padded) return std::nullopt;
            expect_values = n * static_cast<uint64_t>(h.k_padded / 2);
            expect_scales = n * static_cast<uint64_t>(h.k_padded / h.group);
        } else {
            return std::nullopt;
        }
        // The exact size check comes before any allocation, so a corrupt header cannot ask for
        // more memory than the file holds.
        if (h.value_bytes != expect_values || h.scale_count != expect_scales ||
            file_size != sizeof h + h.name_bytes + expect_values + 2 * expect_scales)
            return std::nullopt;

        std::string name(h.name_bytes, '\0');
        if (!read_exact(fd.get(), name.data(), name.size()) || name != tensor_name)
            return std::nullopt;
        std::vector<std::byte> values(expect_values);
        std::vector<uint16_t> scales(expect_scales);
        if (!read_exact(fd.get(), values.data(), values.size()) ||
            !read_exact(fd.get(), scales.data(), scales.size() * 2))
            return std::nullopt;
        if (payload_checksum(name, values, scales) != h.checksum) return std::nullopt;

        std::vector<float> fscales(scales.size());
        for (std::size_t i = 0; i < scales.size(); ++i)
            fscales[i] = fp16_to_fp32(scales[i]);
        QuantizedTensor out;
        if (h.kind == kKindInt8) {
            QuantizedInt8 t;
            t.n = h.n;
            t.k = h.k;
            t.q.resize(values.size());
            std::memcpy(t.q.data(), values.data(), values.size());
            t.scales = std::move(fscales);
            out = std::move(t);
        } else {
            QuantizedInt4 t;
            t.n = h.n;
            t.k = h.k;
            t.group = h.group;
            t.k_padded = h.k_padded;
            t.packed.resize(values.size());
            std::memcpy(t.packed.data(), values.data(), values.size());
            t.scales = std::move(fscales);
            out = std::move(t);
        }
        validate(out);  // scales finite and >= 0, int8 values in range
        return out;
    } catch (const std::exception&) {
        return std::nullopt;  // bad_alloc, a failed validation: not cached
    }
}

void QuantCache::store(const std::string& key, const std::string& tensor_name,
                       const QuantizedTensor& tensor) const {
    const fs::path path = tensor_path(key, tensor_name);
    validate(tensor);
    const Payload p = payload_of(tensor);

    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec)
        throw FileError(path.parent_path().string(), "cannot create directory: " + ec.message());

    FileHeader h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = static_cast<uint32_t>(kFormatVersion);
    h.kind = p.kind;
    h.n = p.n;
    h.k = p.k;
    h.group = p.group;
    h.k_padded = p.k_padded;
    h.name_bytes = tensor_name.size();
    h.value_bytes = p.values.size();
    h.scale_count = p.scales.size();
    h.checksum = payload_checksum(tensor_name, p.values, p.scales);

    // A hidden name unique to this process and call, in the same directory (rename is atomic
    // only within one file system).
    std::string temp_name = ".";
    temp_name += path.filename().string();
    temp_name += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(g_temp_counter++);
    const fs::path temp = path.parent_path() / temp_name;
    Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (fd.get() < 0) throw FileError(temp.string(), "cannot be created: " + errno_text(errno));
    try {
        write_all(fd.get(), &h, sizeof h, temp);
        write_all(fd.get(), tensor_name.data(), tensor_name.size(), temp);
        write_all(fd.get(), p.values.data(), p.values.size(), temp);
        write_all(fd.get(), p.scales.data(), p.scales.size() * 2, temp);
        if (::fsync(fd.get()) != 0)
            throw FileError(temp.string(), "cannot be flushed: " + errno_text(errno));
        if (::close(fd.release()) != 0)
            throw FileError(temp.string(), "cannot be closed: " + errno_text(errno));
        if (::rename(temp.c_str(), path.c_str()) != 0)
            throw FileError(path.string(), "cannot be replaced: " + errno_text(errno));
    } catch (...) {
        ::unlink(temp.c_str());
        throw;
    }
}

QuantizedTensor QuantCache::load_or_make(const std::string& key, const std::string& tensor_name,
                                         const std::function<QuantizedTensor()>& make) const {
    if (auto cached = load(key, tensor_name)) return std::move(*cached);
    QuantizedTensor made = make();
    try {
        store(key, tensor_name, made);
    } catch (const Error&) {
        // Not cached this time: the next load quantises again.
    }
    return made;
}

}  // namespace mtdesk
