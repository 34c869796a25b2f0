// Private helpers of engine/model/: bounded JSON parsing and printable names for messages.

#include "model/json_util.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "mtdesk/error.h"

namespace mtdesk::model_detail {

namespace {
constexpr int kMaxJsonDepth = 32;
}

nlohmann::json parse_json(std::string_view text, const std::string& file, const char* what,
                          std::string* duplicate) {
    using json = nlohmann::json;
    // nlohmann stops at a NUL byte as at the end of the input, so a file padded or cut off
    // with zeros (an interrupted download) would otherwise read as valid.
    if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
        throw FileError(file, fmt::format("{} is not valid JSON: a NUL byte at byte {} (a "
                                          "damaged or incomplete download?)",
                                          what, nul));
    }
    bool too_deep = false;
    std::set<std::string> keys;
    // The callback parser of nlohmann is iterative; discarding anything nested too deeply keeps
    // the resulting value (and its recursive destructor) shallow.
    auto callback = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
        if ((event == json::parse_event_t::object_start ||
             event == json::parse_event_t::array_start) &&
            depth >= kMaxJsonDepth) {
            too_deep = true;
            return false;
        }
        if (duplicate && event == json::parse_event_t::key && depth == 1 && parsed.is_string()) {
            const auto& key = parsed.get_ref<const std::string&>();
            if (!keys.insert(key).second && duplicate->empty()) *duplicate = key;
        }
        return true;
    };
    json j = json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/false);
    if (j.is_discarded() || too_deep) {
        if (too_deep) {
            throw FileError(file, std::string(what) + " is nested more than " +
                                      std::to_string(kMaxJsonDepth) + " levels deep");
        }
        // Parse again with exceptions on, for the parser's position and reason.
        std::string reason = "syntax error";
        try {
            const json again = json::parse(text.begin(), text.end(), nullptr, true);
            (void)again;
        } catch (const json::exception& e) {
            reason = e.what();
            // "[json.exception.parse_error.101] parse error at line 1, column 21: ..." -> drop
            // the library's tag; cut what it quotes of the input.
            if (!reason.empty() && reason[0] == '[') {
                const auto close = reason.find("] ");
                if (close != std::string::npos) reason.erase(0, close + 2);
            }
            if (reason.size() > 240) reason = reason.substr(0, 237) + "...";
        }
        throw FileError(file, std::string(what) + " is not valid JSON: " + reason);
    }
    return j;
}

std::string read_text_file(const std::string& path, std::uintmax_t max_bytes) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (st.type() == fs::file_type::not_found) throw FileError(path, "file does not exist");
    if (ec) throw FileError(path, "cannot be read: " + ec.message());
    if (st.type() == fs::file_type::directory) throw FileError(path, "is a directory, not a file");
    if (st.type() != fs::file_type::regular) throw FileError(path, "is not a regular file");
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) throw FileError(path, "cannot be read: " + ec.message());
    if (size > max_bytes) {
        throw FileError(path, fmt::format("is {:.1f} MiB, more than the {} MiB any file of its "
                                          "kind needs (a damaged download, or another file?)",
                                          static_cast<double>(size) / (1 << 20), max_bytes >> 20));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FileError(path, std::string("cannot be read: ") + std::strerror(errno));
    // Read at most one byte past the size seen, so a file that grows meanwhile stays bounded.
    std::string text(static_cast<std::size_t>(size) + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (in.bad()) throw FileError(path, "read error");
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) throw FileError(path, "grew while it was read");
    return text;
}

std::string quote_name(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "'";
    std::size_t n = 0;
    for (unsigned char c : s) {
        if (++n > 200) {
            out += "...";
            break;
        }
        if (c < 0x20 || c == 0x7f) {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    out += "'";
    return out;
}

std::string short_dump(const nlohmann::json& v) {
    std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (s.size() > 80) s = s.substr(0, 77) + "...";
    return s;
}

}  // namespace mtdesk::model_detail
