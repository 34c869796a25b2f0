#include "mtdesk/tokenizer/chat_template.h"

#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "mtdesk/error.h"
#include "tokenizer/files.h"

namespace mtdesk {
namespace {

constexpr std::string_view kStartOfText = "<|startoftext|>";
constexpr std::string_view kExtra0 = "<|extra_0|>";
constexpr std::string_view kExtra4 = "<|extra_4|>";
constexpr std::string_view kImStart = "<|im_start|>";
constexpr std::string_view kImEnd = "<|im_end|>";
constexpr std::string_view kHyBos = "<｜hy_begin▁of▁sentence｜>";
constexpr std::string_view kHyUser = "<｜hy_User｜>";
constexpr std::string_view kHyAssistant = "<｜hy_Assistant｜>";
constexpr std::string_view kHySystemEnd = "<｜hy_place▁holder▁no▁3｜>";
constexpr std::string_view kHyEos = "<｜hy_place▁holder▁no▁2｜>";

// The default system message of a ChatML template: a string literal of the template that reads
// '<|im_start|>system\n' + literal text + '<|im_end|>' (Qwen2: "You are a helpful assistant.",
// Qwen2.5: "You are Qwen, created by Alibaba Cloud. ..."). Literals built from variables
// ('<|im_start|>system\n' + messages[0]['content'] ...) end at their closing quote and do not
// count. The newline is either a "\n" escape or a raw newline inside the literal.
std::optional<std::string> chatml_default_system(std::string_view jinja) {
    static constexpr std::string_view kHead = "<|im_start|>system";
    std::size_t search = 0;
    while (true) {
        const std::size_t at = jinja.find(kHead, search);
        if (at == std::string_view::npos) return std::nullopt;
        search = at + kHead.size();
        if (at == 0) continue;
        const char quote = jinja[at - 1];
        if (quote != '\'' && quote != '"') continue;
        std::size_t pos = search;
        if (jinja.substr(pos, 2) == "\\n") {
            pos += 2;
        } else if (jinja.substr(pos, 1) == "\n") {
            pos += 1;
        } else {
            continue;
        }
        std::string text;
        bool ok = false;
        while (pos < jinja.size()) {
            if (jinja.substr(pos, kImEnd.size()) == kImEnd) {
                ok = true;
                break;
            }
            const char c = jinja[pos];
            if (c == quote) break;  // the literal ends before <|im_end|>
            if (c == '\\' && pos + 1 < jinja.size()) {
                const char e = jinja[pos + 1];
                switch (e) {
                    case 'n':
                        text.push_back('\n');
                        break;
                    case 't':
                        text.push_back('\t');
                        break;
                    case 'r':
                        text.push_back('\r');
                        break;
                    default:
                        text.push_back(e);  // \\ \' \"
                        break;
                }
                pos += 2;
                continue;
            }
            text.push_back(c);
            ++pos;
        }
        if (ok && !text.empty()) return text;
    }
}

}  // namespace

std::string_view chat_template_name(ChatTemplateKind kind) noexcept {
    switch (kind) {
        case ChatTemplateKind::Hunyuan:
            return "Hunyuan";
        case ChatTemplateKind::HunyuanV2:
            return "Hunyuan V2";
        case ChatTemplateKind::ChatML:
            return "ChatML";
    }
    return "?";
}

std::string ChatTemplate::render(std::string_view user, std::string_view system) const {
    std::string out;
    switch (kind) {
        case ChatTemplateKind::Hunyuan:
            // Hunyuan-MT's template: a non-empty first system message becomes
            // '<|startoftext|>' + s + '<|extra_4|>' and the user turn after it only gains
            // '<|extra_0|>'; without one (or with an empty one, has_head = false) the user turn is
            // '<|startoftext|>' + u + '<|extra_0|>'. The answer follows directly.
            out.reserve(user.size() + system.size() + 48);
            out.append(kStartOfText);
            if (!system.empty()) {
                out.append(system);
                out.append(kExtra4);
            }
            out.append(user);
            out.append(kExtra0);
            break;
        case ChatTemplateKind::ChatML: {
            const std::string_view sys = system.empty() ? std::string_view(default_system) : system;
            if (!sys.empty()) {
                out.append(kImStart).append("system\n").append(sys).append(kImEnd).append("\n");
            }
            out.append(kImStart).append("user\n").append(user).append(kImEnd).append("\n");
            out.append(kImStart).append("assistant\n");
            break;
        }
        case ChatTemplateKind::HunyuanV2:
            // bos_token, the system prompt and its separator when there is one, then the user
            // turn and the generation prompt.
            out.append(kHyBos);
            if (!system.empty()) out.append(system).append(kHySystemEnd);
            out.append(kHyUser).append(user).append(kHyAssistant);
            break;
    }
    return out;
}

std::vector<std::string> ChatTemplate::stop_tokens() const {
    switch (kind) {
        case ChatTemplateKind::Hunyuan:
            return {"<|eos|>"};
        case ChatTemplateKind::ChatML:
            return {std::string(kImEnd)};
        case ChatTemplateKind::HunyuanV2:
            return {std::string(kHyEos)};
    }
    return {};
}

ChatTemplate ChatTemplate::recognise(std::string_view jinja, const std::string& name) {
    ChatTemplate t;
    if (jinja.find(kStartOfText) != std::string_view::npos &&
        jinja.find(kExtra0) != std::string_view::npos) {
        t.kind = ChatTemplateKind::Hunyuan;
        return t;
    }
    if (jinja.find(kHyUser) != std::string_view::npos &&
        jinja.find(kHyAssistant) != std::string_view::npos) {
        t.kind = ChatTemplateKind::HunyuanV2;
        return t;
    }
    if (jinja.find(kImStart) != std::string_view::npos &&
        jinja.find(kImEnd) != std::string_view::npos) {
        t.kind = ChatTemplateKind::ChatML;
        t.default_system = chatml_default_system(jinja).value_or(std::string());
        return t;
    }
    throw UnsupportedError(name,
                           "unsupported chat template: it has none of the markers of Hunyuan "
                           "('<|startoftext|>' ... '<|extra_0|>'), Hunyuan V2 ('<｜hy_User｜>' "
                           "... '<｜hy_Assistant｜>') or ChatML ('<|im_start|>' ... '<|im_end|>')");
}

ChatTemplate ChatTemplate::from_model_dir(const std::filesystem::path& model_dir) {
    namespace fs = std::filesystem;
    ChatTemplate assumed;
    assumed.assumed = true;
    std::error_code ec;
    const fs::path jinja_file = model_dir / "chat_template.jinja";
    if (fs::is_regular_file(jinja_file, ec)) {
        return recognise(detail::read_file(jinja_file), detail::display_name(jinja_file));
    }
    const fs::path config_file = model_dir / "tokenizer_config.json";
    if (!fs::exists(config_file, ec)) return assumed;
    const std::string name = detail::display_name(config_file);
    const nlohmann::json config = detail::read_json_file(config_file);
    if (!config.is_object()) throw FileError(name, "expected a JSON object");
    auto it = config.find("chat_template");
    if (it == config.end() || it->is_null()) return assumed;
    if (it->is_string()) return recognise(it->get<std::string>(), name);
    if (it->is_array()) {
        // [{"name": "default", "template": "..."}, {"name": "tool_use", ...}]
        const nlohmann::json* chosen = nullptr;
        for (const nlohmann::json& entry : *it) {
            if (!entry.is_object() || !entry.contains("template") ||
                !entry["template"].is_string()) {
                throw FileError(name, "chat_template list entry without a template string");
            }
            if (auto n = entry.find("name"); n != entry.end() && *n == "default") chosen = &entry;
        }
        if (chosen == nullptr && !it->empty()) chosen = &it->front();
        if (chosen == nullptr) return assumed;
        return recognise((*chosen)["template"].get<std::string>(), name);
    }
    throw FileError(name, "chat_template is neither a string nor a list of templates");
}

}  // namespace mtdesk
