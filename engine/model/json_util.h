#pragma once
// Private helpers of engine/model/: bounded JSON parsing and printable names for messages.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace mtdesk::model_detail {

/// Parses `text` as JSON. Throws FileError(file, "<what> is not valid JSON: ...") on a syntax
/// error and when arrays/objects nest deeper than 32 levels (no valid model file does; the limit
/// keeps hostile input from exhausting memory). When `duplicate` is given, the first key that
/// the top-level object holds twice is stored there (nlohmann keeps only the last value).
nlohmann::json parse_json(std::string_view text, const std::string& file, const char* what,
                          std::string* duplicate = nullptr);

/// Reads a whole small text file. Throws FileError when it cannot be opened or read.
std::string read_text_file(const std::string& path);

/// `s` in single quotes, control bytes escaped, cut after 200 bytes: safe to put in messages.
std::string quote_name(std::string_view s);

/// A JSON value printed for an error message, cut after 80 characters.
std::string short_dump(const nlohmann::json& v);

}  // namespace mtdesk::model_detail
