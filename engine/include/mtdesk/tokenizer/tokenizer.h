#pragma once
// Text <-> token ids. Three implementations behind one interface:
//  - TiktokenBpe: tiktoken-format byte-level BPE (Hunyuan's hy.tiktoken), PCRE2 pre-tokeniser
//  - HfByteLevelBpe: Hugging Face tokenizer.json with a byte-level BPE model
//  - SentencePieceTokenizer: a SentencePiece .model through libsentencepiece

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mtdesk {

enum class TokenizerKind { Tiktoken, HfTokenizerJson, SentencePiece };

/// Converts text to token ids and back. Thread-safe for concurrent const calls.
///
/// Input text is UTF-8. Invalid UTF-8 is not an error: each maximal invalid subpart is replaced
/// by U+FFFD before tokenisation (the Unicode "substitution of maximal subparts" practice, the
/// same as Python's bytes.decode("utf-8", errors="replace")).
class Tokenizer {
  public:
    virtual ~Tokenizer() = default;

    virtual TokenizerKind kind() const noexcept = 0;
    /// Number of ids, special tokens included (max id + 1).
    virtual int vocab_size() const noexcept = 0;

    /// Encodes `text`. With `parse_special` the text of special tokens ("<|eos|>") becomes their
    /// id; without it, it is encoded as ordinary text (use this for user input).
    virtual std::vector<int32_t> encode(std::string_view text,
                                        bool parse_special = false) const = 0;

    /// The bytes one token stands for (may be a partial UTF-8 sequence). Special tokens give
    /// their text; an id inside the range that no token uses gives "". Throws Error for an id
    /// outside [0, vocab_size).
    virtual std::string token_bytes(int32_t id) const = 0;

    /// The bytes an ordinary (non-special) token adds to decoded text; `at_start` is true while
    /// no ordinary token came before it. token_bytes(id) except for SentencePiece, whose decoder
    /// drops the dummy-prefix space of the first token ("▁Hello" -> "Hello").
    virtual std::string decoded_bytes(int32_t id, [[maybe_unused]] bool at_start) const {
        return token_bytes(id);
    }

    /// Concatenated decoded_bytes of `ids` (special tokens: their text, or nothing when
    /// `skip_special`), with invalid UTF-8 replaced by U+FFFD. Throws Error for an id outside
    /// [0, vocab_size).
    virtual std::string decode(std::span<const int32_t> ids, bool skip_special = true) const;

    /// Id of a special (or any) token given by its text, e.g. "<|eos|>".
    virtual std::optional<int32_t> token_id(std::string_view token_text) const = 0;
    virtual bool is_special(int32_t id) const noexcept = 0;

    /// tokenizer_config.json's model_max_length, as transformers reads it: the longest
    /// sequence, in tokens, the model was made for (for a translation model: prompt and answer
    /// together). Absent when the file gives none, or transformers' "no limit" sentinel (any
    /// value of 10^9 or more). Translator cuts longer input into pieces that fit.
    std::optional<int> model_max_length() const noexcept { return model_max_length_; }
    void set_model_max_length(std::optional<int> tokens) noexcept { model_max_length_ = tokens; }

  private:
    std::optional<int> model_max_length_;
};

/// Loads the tokenizer of a model directory, in this order of preference: `hy.tiktoken` (or any
/// single `*.tiktoken`), `tokenizer.json`, `tokenizer.model`. Special tokens come from
/// tokenizer_config.json (added_tokens_decoder) and tokenizer.json (added_tokens), and so does
/// model_max_length() (a value that is not a positive integer is ignored, as a sentinel is).
/// `vocab_limit` > 0 checks that every id fits the model's embedding (FileError otherwise).
/// Throws FileError naming the file when none is found or it is malformed.
std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& model_dir,
                                          int vocab_limit = 0);

/// Streaming detokeniser: feed ids one by one, get back the text that is complete UTF-8 so far.
/// Holds back a trailing partial UTF-8 sequence until the next token completes it. The pieces
/// returned by push() and finish() concatenate to decode(ids, /*skip_special=*/true).
class StreamingDecoder {
  public:
    explicit StreamingDecoder(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
    /// Returns newly completed text (possibly empty). Special tokens produce nothing. Throws
    /// Error for an id outside [0, vocab_size).
    std::string push(int32_t id);
    /// Flushes what is held back (invalid tail -> U+FFFD).
    std::string finish();

  private:
    const Tokenizer& tokenizer_;
    std::string pending_;
    bool at_start_ = true;
};

/// Replaces every maximal invalid UTF-8 subpart of `text` by U+FFFD (EF BF BD).
std::string sanitize_utf8(std::string_view text);

}  // namespace mtdesk
