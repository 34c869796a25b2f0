#pragma once
// Small file helpers shared by the test suites that build inputs on disk.

#include <QTemporaryDir>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

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
