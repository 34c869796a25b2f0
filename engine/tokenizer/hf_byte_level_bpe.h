#pragma once
// Hugging Face tokenizer.json with a byte-level BPE model (private to the engine).

#include <array>
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

/// The GPT-2 pre-tokenisation pattern of the ByteLevel pre-tokenizer (use_regex: true).
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

/// What the `tokenizers` library does for a byte-level BPE tokenizer.json, restricted to the
/// components byte-level BPE models use:
///  - added tokens (special or not) are found in the text first, leftmost-longest, honouring
///    single_word / lstrip / rstrip / normalized;
///  - normalizer: none, NFC / NFD / NFKC / NFKD, or a Sequence of those;
///  - pre-tokenizer: ByteLevel (add_prefix_space, use_regex), Split (Regex or String pattern, any
///    behavior, invert), or a Sequence of those;
///  - model BPE (merges as "a b" strings or [a, b] pairs, ignore_merges, unk_token / fuse_unk),
///    decoder ByteLevel.
/// The post-processor is not applied: encode() corresponds to add_special_tokens=False.
/// Anything else is an UnsupportedError naming the file and the component.
class HfByteLevelBpe final : public Tokenizer {
  public:
    /// Loads `tokenizer_json`; added tokens of `tokenizer_config` (added_tokens_decoder), when it
    /// exists, that tokenizer.json lacks are added. `vocab_limit` > 0: every id must be below it.
    static std::unique_ptr<HfByteLevelBpe> load(const std::filesystem::path& tokenizer_json,
                                                const std::filesystem::path& tokenizer_config,
                                                int vocab_limit = 0);

    TokenizerKind kind() const noexcept override { return TokenizerKind::HfTokenizerJson; }
    int vocab_size() const noexcept override { return vocab_size_; }
    std::vector<int32_t> encode(std::string_view text, bool parse_special = false) const override;
    std::string token_bytes(int32_t id) const override;
    std::optional<int32_t> token_id(std::string_view token_text) const override;
    bool is_special(int32_t id) const noexcept override;

    enum class Normalization { NFC, NFD, NFKC, NFKD };
    enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };
    struct PreTokenizerStep {
        bool byte_level = false;  // ByteLevel; otherwise Split
        bool add_prefix_space = false;
        std::unique_ptr<Regex> regex;  // ByteLevel with use_regex, or Split's pattern
        SplitBehavior behavior = SplitBehavior::Isolated;
        bool invert = false;
    };
    struct AddedToken {
        int32_t id = 0;
        std::string content;
        bool special = false;
        bool single_word = false;
        bool lstrip = false;
        bool rstrip = false;
        bool normalized = false;
    };

  private:
    HfByteLevelBpe() = default;
    struct Segment {
        std::string_view text;
        int32_t id = -1;  // >= 0: an added token
    };
    void split_added(std::string_view text, const TokenTrie& trie, bool parse_special,
                     std::vector<Segment>& out) const;
    std::string normalize(std::string_view text) const;
    void pre_tokenize_and_encode(std::string_view text, std::vector<int32_t>& out) const;
    void encode_word(std::string_view mapped, std::vector<int32_t>& out) const;

    std::vector<Normalization> normalizers_;
    std::vector<PreTokenizerStep> steps_;

    StringMap<int32_t> vocab_;  // token (byte-level alphabet) -> id
    std::unordered_map<uint64_t, std::pair<uint32_t, int32_t>> merges_;  // (a, b) -> rank, id
    std::optional<int32_t> unk_id_;
    bool fuse_unk_ = false;
    bool ignore_merges_ = false;

    std::vector<AddedToken> added_;  // trie values index this
    std::unordered_map<int32_t, std::size_t> added_by_id_;
    StringMap<std::size_t> added_by_content_;
    TokenTrie raw_trie_;         // added tokens with normalized = false, on the raw text
    TokenTrie normalized_trie_;  // normalized = true, on the normalized text

    std::vector<std::string> id_bytes_;  // decoded bytes of every id ("" for unused ids)
    int vocab_size_ = 0;

    mutable std::mutex cache_mutex_;
    mutable StringMap<std::vector<int32_t>> cache_;
};

}  // namespace mtdesk::detail
