#pragma once
// A SentencePiece .model through libsentencepiece (private to the engine).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mtdesk/tokenizer/tokenizer.h"
#include "tokenizer/token_trie.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace mtdesk::detail {

/// SentencePiece without BOS/EOS. Control symbols (<s>, </s>) are the special tokens; with
/// parse_special their text is split out of the input first and the text around them is encoded
/// piece by piece. Decoding follows SentencePiece's: "▁" is a space, byte pieces (<0xAB>) are
/// bytes, <unk> reads " ⁇ ", and the dummy-prefix space of the first ordinary token is dropped.
class SentencePieceTokenizer final : public Tokenizer {
  public:
    /// Loads `model_file`; `vocab_limit` > 0: every id must be below it. Throws FileError.
    static std::unique_ptr<SentencePieceTokenizer> load(const std::filesystem::path& model_file,
                                                        int vocab_limit = 0);
    ~SentencePieceTokenizer() override;

    TokenizerKind kind() const noexcept override { return TokenizerKind::SentencePiece; }
    int vocab_size() const noexcept override { return vocab_size_; }
    std::vector<int32_t> encode(std::string_view text, bool parse_special = false) const override;
    std::string token_bytes(int32_t id) const override;
    std::string decoded_bytes(int32_t id, bool at_start) const override;
    std::optional<int32_t> token_id(std::string_view token_text) const override;
    bool is_special(int32_t id) const noexcept override;

  private:
    SentencePieceTokenizer();
    void encode_plain(std::string_view text, std::vector<int32_t>& out) const;

    std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
    std::vector<std::string> bytes_;  // decoded bytes of every id
    std::vector<char> special_;       // control symbols
    std::vector<char> drops_prefix_;  // ordinary pieces that start with "▁"
    TokenTrie control_trie_;
    int vocab_size_ = 0;
};

}  // namespace mtdesk::detail
