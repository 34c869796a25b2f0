#pragma once
// Reading tokenizer files with errors that name the file (private to the engine).

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace mtdesk::detail {

/// The whole content of `path`; FileError naming it when it cannot be read, is not a regular
/// file or is larger than any tokenizer file (model_detail::read_text_file).
std::string read_file(const std::filesystem::path& path);

/// Parses `path` as JSON; FileError naming it when it cannot be read or is malformed.
nlohmann::json read_json_file(const std::filesystem::path& path);

/// The path as it appears in messages.
inline std::string display_name(const std::filesystem::path& path) {
    return path.string();
}

}  // namespace mtdesk::detail
