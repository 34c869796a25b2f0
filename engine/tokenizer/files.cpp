#include "tokenizer/files.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "mtdesk/error.h"

namespace mtdesk::detail {

std::string read_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        throw FileError(display_name(path), "is a directory, expected a file");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw FileError(display_name(path), fmt::format("cannot open: {}", std::strerror(errno)));
    std::ostringstream content;
    content << in.rdbuf();
    if (in.bad()) throw FileError(display_name(path), "read error");
    return std::move(content).str();
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
    const std::string text = read_file(path);
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw FileError(display_name(path), fmt::format("malformed JSON: {}", e.what()));
    }
}

}  // namespace mtdesk::detail
