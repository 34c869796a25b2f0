#pragma once
// tiktoken-format byte-level BPE (Hunyuan's hy.tiktoken) (private to the engine).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mtdesk/tokenizer/tokenizer.h"
#include "tokenizer/regex.h"
#include "tokenizer/string_map.h"
#include "tokenizer/token_trie.h"

namespace mtdesk::detail {

/// Hunyuan's pre-tokenisation pattern (tokenization_hy.py), the same as Qwen's.
inline constexpr std::string_view kHunyuanPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

/// A tiktoken Encoding: mergeable ranks from a `base64 rank` file, Hunyuan's pattern, special
/// tokens matched in the text first when asked to (tiktoken's allowed_special="all").
class TiktokenBpe final : public Tokenizer {
  public:
    /// Loads `tiktoken_file`. Special tokens come from `tokenizer_config`'s added_tokens_decoder
    /// when that file exists and has one, otherwise Hunyuan's convention: <|endoftext|>,
    /// <|startoftext|>, <|bos|>, <|eos|>, <|pad|>, <|extra_0|> ... <|extra_204|> numbered right
    /// after the ranks. `vocab_limit` > 0: every id must be below it. Throws FileError.
    static std::unique_ptr<TiktokenBpe> load(const std::filesystem::path& tiktoken_file,
                                             const std::filesystem::path& tokenizer_config,
                                             int vocab_limit = 0);

    TokenizerKind kind() const noexcept override { return TokenizerKind::Tiktoken; }
    int vocab_size() const noexcept override { return vocab_size_; }
    std::vector<int32_t> encode(std::string_view text, bool parse_special = false) const override;
    std::string token_bytes(int32_t id) const override;
    std::optional<int32_t> token_id(std::string_view token_text) const override;
    bool is_special(int32_t id) const noexcept override;

  private:
    TiktokenBpe();
    void encode_ordinary(std::string_view text, std::vector<int32_t>& out) const;
    void encode_piece(std::string_view piece, std::vector<int32_t>& out) const;

    std::vector<std::string> rank_bytes_;  // rank -> bytes
    StringMap<int32_t> ranks_;             // bytes -> rank
    struct Special {
        std::string text;
        bool special = true;
    };
    std::unordered_map<int32_t, Special> specials_;  // id -> text
    StringMap<int32_t> special_ids_;                 // text -> id
    TokenTrie special_trie_;
    Regex pattern_;
    int vocab_size_ = 0;

    mutable std::mutex cache_mutex_;
    mutable StringMap<std::vector<int32_t>> cache_;
};

}  // namespace mtdesk::detail
