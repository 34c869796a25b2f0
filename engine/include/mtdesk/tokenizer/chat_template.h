#pragma once
// Chat templates implemented natively (no Jinja interpreter): recognised from the
// `chat_template` string of tokenizer_config.json.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace mtdesk {

enum class ChatTemplateKind {
    Hunyuan,    ///< Hunyuan / Hunyuan-MT / HY-MT1.5: "<|startoftext|>" + user + "<|extra_0|>",
                ///< the answer ends at "<|eos|>"; a system turn is "<|startoftext|>" + s +
                ///< "<|extra_4|>"
    ChatML,     ///< Qwen: "<|im_start|>user\n" + user + "<|im_end|>\n<|im_start|>assistant\n"
    HunyuanV2,  ///< HY-MT1.5-1.8B and the 2025 Hunyuan dense chat models, full-width markers:
                ///< "<｜hy_begin▁of▁sentence｜>" [+ system + "<｜hy_place▁holder▁no▁3｜>"]
                ///< + "<｜hy_User｜>" + user + "<｜hy_Assistant｜>"; the answer ends at
                ///< "<｜hy_place▁holder▁no▁2｜>"
};

/// "Hunyuan", "Hunyuan V2", "ChatML".
std::string_view chat_template_name(ChatTemplateKind kind) noexcept;

/// One of the known chat templates, rendered natively.
struct ChatTemplate {
    ChatTemplateKind kind = ChatTemplateKind::Hunyuan;
    /// ChatML only: the system message the template writes when there is none (Qwen2 / Qwen2.5
    /// templates have one, Qwen3's has none: empty).
    std::string default_system;
    /// True when the model directory has no chat template and Hunyuan's is assumed
    /// (from_model_dir), so that callers can say so: a model of another family would get a
    /// prompt it was not trained on.
    bool assumed = false;

    /// Prompt text (with special-token text, to be encoded with parse_special = true) for a single
    /// user turn with an optional system message, ready for the assistant's answer.
    std::string render(std::string_view user, std::string_view system = {}) const;
    /// Special tokens that end the assistant's answer ("<|eos|>" / "<|im_end|>" /
    /// "<｜hy_place▁holder▁no▁2｜>").
    std::vector<std::string> stop_tokens() const;

    /// Recognises the template of `model_dir`: `chat_template.jinja` when present (newer
    /// transformers save it there), otherwise the chat_template of `tokenizer_config.json` (a
    /// string, or a list of {name, template} of which "default" is used). No file, or a file
    /// without a chat_template, gives the Hunyuan template with `assumed` set; whether the
    /// tokenizer has its tokens is for the caller to check. Throws UnsupportedError naming the file
    /// for an unknown template, FileError for a malformed file.
    static ChatTemplate from_model_dir(const std::filesystem::path& model_dir);
    /// Recognises a template string by its markers: Hunyuan's '<|startoftext|>' and
    /// '<|extra_0|>', ChatML's '<|im_start|>', Hunyuan V2's '<｜hy_User｜>'. `name` is used in the
    /// error message.
    static ChatTemplate recognise(std::string_view jinja, const std::string& name);
};

}  // namespace mtdesk
