// Private helpers of engine/model/: bounded JSON parsing and printable names for messages.

#include "model/json_util.h"

#include <fstream>
#include <set>
#include <sstream>

#include "mtdesk/error.h"

namespace mtdesk::model_detail {

namespace {
constexpr int kMaxJsonDepth = 32;
}

nlohmann::json parse_json(std::string_view text, const std::string& file, const char* what,
                          std::string* duplicate) {
    using json = nlohmann::json;
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

std::string read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FileError(path, "cannot open for reading");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw FileError(path, "read error");
    return ss.str();
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
