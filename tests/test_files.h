#pragma once
// Small file helpers shared by the test suites that build inputs on disk.

#include <QTemporaryDir>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

namespace mtdesk::test {

/// Writes `content` to `path` as bytes, replacing what was there.
inline void write_file(const std::filesystem::path& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary);
    out << content;
}

/// The bytes of `path` ("" when unreadable).
inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Copies the tied fixture model `from` into the directory `to` with a zero `lm_head.weight`
/// ([vocab, hidden] bf16) appended to its model.safetensors, as a tied checkpoint that ships an
/// output layer of its own would have it. Returns false when `from` has no model.safetensors.
inline bool copy_with_zero_lm_head(const std::filesystem::path& from,
                                   const std::filesystem::path& to, int vocab, int hidden) {
    namespace fs = std::filesystem;
    for (const auto& e : fs::directory_iterator(from))
        fs::copy_file(e.path(), to / e.path().filename(), fs::copy_options::overwrite_existing);
    const std::string bytes = read_file(to / "model.safetensors");
    if (bytes.size() < 8) return false;
    uint64_t header_len = 0;
    std::memcpy(&header_len, bytes.data(), 8);
    nlohmann::json header = nlohmann::json::parse(bytes.substr(8, header_len));
    const std::string data = bytes.substr(8 + header_len);
    const std::size_t head_bytes = static_cast<std::size_t>(vocab) * hidden * 2;
    header["lm_head.weight"] = {{"dtype", "BF16"},
                                {"shape", {vocab, hidden}},
                                {"data_offsets", {data.size(), data.size() + head_bytes}}};
    const std::string text = header.dump();
    const uint64_t n = text.size();
    std::ofstream out(to / "model.safetensors", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << text << data << std::string(head_bytes, '\0');
    return static_cast<bool>(out);
}

/// A temporary directory that hands out a new, empty sub-directory per test case.
class CaseDirs {
  public:
    bool valid() const { return tmp_.isValid(); }
    std::filesystem::path fresh() {
        const auto dir =
            std::filesystem::path(tmp_.path().toStdString()) / ("case" + std::to_string(n_++));
        std::filesystem::create_directories(dir);
        return dir;
    }

  private:
    QTemporaryDir tmp_;
    int n_ = 0;
};

}  // namespace mtdesk::test
