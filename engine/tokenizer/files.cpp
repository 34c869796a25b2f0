#include "tokenizer/files.h"

#include <fmt/format.h>

#include "model/json_util.h"
#include "mtdesk/error.h"

namespace mtdesk::detail {

std::string read_file(const std::filesystem::path& path) {
    return model_detail::read_text_file(display_name(path));
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
    const std::string text = read_file(path);
    // nlohmann stops at a NUL byte as at the end of the input (see model_detail::parse_json).
    if (const auto nul = text.find('\0'); nul != std::string::npos) {
        throw FileError(display_name(path),
                        fmt::format("malformed JSON: a NUL byte at byte {} (a damaged or "
                                    "incomplete download?)",
                                    nul));
    }
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw FileError(display_name(path), fmt::format("malformed JSON: {}", e.what()));
    }
}

}  // namespace mtdesk::detail
