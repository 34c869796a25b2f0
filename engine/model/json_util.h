#pragma once
// Private helpers of engine/model/: bounded JSON parsing and printable names for messages.

#include <cstdint>
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

/// Side files (config.json, the tokenizer's files, the shard index) are at most a few tens of
/// MB; 256 MiB is far above any real one and far below what would exhaust memory, and keeps a
/// file SentencePiece would read (its protobuf limit is 2 GiB) from aborting the process.
inline constexpr std::uintmax_t kMaxSideFileBytes = std::uintmax_t{256} << 20;

/// Reads a whole side file of a model. Throws FileError naming `path` when it does not exist,
/// cannot be read (with the system's reason, e.g. "Permission denied"), is not a regular file
/// (a directory, a FIFO, a device: reading one could block or never end) or is larger than
/// `max_bytes`.
std::string read_text_file(const std::string& path, std::uintmax_t max_bytes = kMaxSideFileBytes);

/// `s` in single quotes, control bytes escaped, cut after 200 bytes: safe to put in messages.
std::string quote_name(std::string_view s);

/// A JSON value printed for an error message, cut after 80 characters.
std::string short_dump(const nlohmann::json& v);

}  // namespace mtdesk::model_detail
