#include "tokenizer/tiktoken_bpe.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "mtdesk/error.h"
#include "tokenizer/bpe.h"
#include "tokenizer/files.h"
#include "tokenizer/utf8.h"

namespace mtdesk::detail {
namespace {

// Pieces up to this length are cached; longer ones (rare, and possibly huge) are not.
constexpr std::size_t kMaxCachedPiece = 128;
constexpr std::size_t kMaxCacheEntries = 1 << 16;

int base64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// Strict standard base64 (RFC 4648, with padding). nullopt when malformed.
std::optional<std::string> decode_base64(std::string_view text) {
    if (text.empty() || text.size() % 4 != 0) return std::nullopt;
    std::size_t padding = 0;
    if (text.back() == '=') ++padding;
    if (text.size() >= 2 && text[text.size() - 2] == '=') ++padding;
    std::string out;
    out.reserve(text.size() / 4 * 3);
    for (std::size_t i = 0; i < text.size(); i += 4) {
        const bool last = i + 4 == text.size();
        uint32_t quad = 0;
        for (std::size_t k = 0; k < 4; ++k) {
            const char c = text[i + k];
            int v = 0;
            if (c == '=') {
                if (!last || k < 4 - padding) return std::nullopt;
            } else {
                v = base64_value(c);
                if (v < 0) return std::nullopt;
            }
            quad = (quad << 6) | static_cast<uint32_t>(v);
        }
        out.push_back(static_cast<char>((quad >> 16) & 0xFF));
        if (!last || padding < 2) out.push_back(static_cast<char>((quad >> 8) & 0xFF));
        if (!last || padding < 1) out.push_back(static_cast<char>(quad & 0xFF));
        if (last && padding > 0 && (quad & ((1u << (8 * padding)) - 1)) != 0) {
            return std::nullopt;  // non-zero bits hidden under the padding
        }
    }
    return out;
}

std::string printable(std::string_view text) {
    std::string out;
    for (const char c : text.substr(0, 40)) {
        const auto b = static_cast<unsigned char>(c);
        if (b >= 0x20 && b < 0x7F) {
            out.push_back(c);
        } else {
            out += fmt::format("\\x{:02x}", b);
        }
    }
    if (text.size() > 40) out += "...";
    return out;
}

}  // namespace

TiktokenBpe::TiktokenBpe() : pattern_(kHunyuanPattern, "built-in Hunyuan pre-tokenizer pattern") {}

std::unique_ptr<TiktokenBpe> TiktokenBpe::load(const std::filesystem::path& tiktoken_file,
                                               const std::filesystem::path& tokenizer_config,
                                               int vocab_limit) {
    const std::string file = display_name(tiktoken_file);
    const std::string content = read_file(tiktoken_file);
    std::unique_ptr<TiktokenBpe> tok(new TiktokenBpe());

    // ---- ranks: one "base64 rank" per line (tiktoken's load_tiktoken_bpe) ----
    std::vector<std::pair<int64_t, std::string>> entries;  // rank, bytes
    std::unordered_map<int64_t, std::size_t> line_of_rank;
    StringMap<std::size_t> line_of_token;
    std::size_t line_no = 0;
    std::size_t pos = 0;
    while (pos < content.size()) {
        std::size_t end = content.find('\n', pos);
        if (end == std::string::npos) end = content.size();
        std::string_view line(content.data() + pos, end - pos);
        pos = end + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        // Fields are separated by whitespace (Python's bytes.split()).
        std::vector<std::string_view> fields;
        std::size_t i = 0;
        while (i < line.size()) {
            while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
                ++i;
            const std::size_t start = i;
            while (i < line.size() && line[i] != ' ' && line[i] != '\t')
                ++i;
            if (i > start) fields.push_back(line.substr(start, i - start));
        }
        if (fields.empty()) continue;
        if (fields.size() != 2) {
            throw FileError(file, fmt::format("line {}: expected '<base64 token> <rank>', got {} "
                                              "field(s)",
                                              line_no, fields.size()));
        }
        std::optional<std::string> bytes = decode_base64(fields[0]);
        if (!bytes) {
            throw FileError(
                file, fmt::format("line {}: invalid base64 '{}'", line_no, printable(fields[0])));
        }
        int64_t rank = -1;
        const auto [ptr, ec] =
            std::from_chars(fields[1].data(), fields[1].data() + fields[1].size(), rank);
        if (ec != std::errc() || ptr != fields[1].data() + fields[1].size() || rank < 0 ||
            rank > std::numeric_limits<int32_t>::max() - 1) {
            throw FileError(
                file, fmt::format("line {}: invalid rank '{}'", line_no, printable(fields[1])));
        }
        if (auto it = line_of_rank.find(rank); it != line_of_rank.end()) {
            throw FileError(
                file, fmt::format("line {}: duplicate rank {} (already used on line {})", line_no,
                                  rank, it->second));
        }
        if (auto it = line_of_token.find(*bytes); it != line_of_token.end()) {
            throw FileError(file, fmt::format("line {}: duplicate token '{}' (already on line {})",
                                              line_no, fields[0], it->second));
        }
        line_of_rank.emplace(rank, line_no);
        line_of_token.emplace(*bytes, line_no);
        entries.emplace_back(rank, std::move(*bytes));
    }
    if (entries.empty()) throw FileError(file, "no tokens");
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t r = 0; r < entries.size(); ++r) {
        if (entries[r].first != static_cast<int64_t>(r)) {
            throw FileError(file,
                            fmt::format("gap in ranks: rank {} is missing ({} tokens, highest "
                                        "rank {})",
                                        r, entries.size(), entries.back().first));
        }
    }
    tok->rank_bytes_.reserve(entries.size());
    tok->ranks_.reserve(entries.size());
    for (auto& [rank, bytes] : entries) {
        tok->ranks_.emplace(bytes, static_cast<int32_t>(rank));
        tok->rank_bytes_.push_back(std::move(bytes));
    }
    entries.clear();
    // Every byte that valid UTF-8 can contain must be a token, or some text could not be encoded.
    for (int b = 0; b < 0xF5; ++b) {
        if (b == 0xC0 || b == 0xC1) continue;
        const char c = static_cast<char>(b);
        if (!tok->ranks_.contains(std::string_view(&c, 1))) {
            throw FileError(file, fmt::format("byte 0x{:02x} has no token (byte-level BPE needs a "
                                              "token for every byte)",
                                              b));
        }
    }
    const auto n_ranks = static_cast<int32_t>(tok->rank_bytes_.size());
    int64_t max_id = n_ranks - 1;

    // ---- special tokens ----
    auto add_special = [&](int64_t id, std::string text, bool special, const std::string& origin) {
        if (text.empty()) throw FileError(origin, fmt::format("token id {} has empty text", id));
        if (id < 0 || id > std::numeric_limits<int32_t>::max() - 1) {
            throw FileError(origin, fmt::format("invalid token id {} for '{}'", id, text));
        }
        if (id < n_ranks) {
            // A config may list an ordinary token with its own bytes: nothing to add.
            if (tok->rank_bytes_[static_cast<std::size_t>(id)] == text) return;
            throw FileError(origin, fmt::format("special token '{}' has id {}, which collides with "
                                                "rank {} of {}",
                                                text, id, id, tiktoken_file.filename().string()));
        }
        const auto id32 = static_cast<int32_t>(id);
        if (tok->special_ids_.contains(text)) {
            throw FileError(origin, fmt::format("special token '{}' is defined twice", text));
        }
        tok->special_ids_.emplace(text, id32);
        tok->special_trie_.insert(text, id32);
        tok->specials_.emplace(id32, Special{std::move(text), special});
        max_id = std::max<int64_t>(max_id, id);
    };

    bool from_config = false;
    std::error_code ec;
    if (!tokenizer_config.empty() && std::filesystem::exists(tokenizer_config, ec)) {
        const std::string config_name = display_name(tokenizer_config);
        const nlohmann::json config = read_json_file(tokenizer_config);
        if (!config.is_object()) throw FileError(config_name, "expected a JSON object");
        if (auto it = config.find("added_tokens_decoder"); it != config.end() && !it->is_null()) {
            if (!it->is_object()) {
                throw FileError(config_name, "added_tokens_decoder is not an object");
            }
            from_config = true;
            for (const auto& [key, value] : it->items()) {
                int64_t id = -1;
                const auto [p, e] = std::from_chars(key.data(), key.data() + key.size(), id);
                if (e != std::errc() || p != key.data() + key.size()) {
                    throw FileError(config_name,
                                    fmt::format("added_tokens_decoder: invalid id '{}'", key));
                }
                if (!value.is_object() || !value.contains("content") ||
                    !value["content"].is_string()) {
                    throw FileError(
                        config_name,
                        fmt::format("added_tokens_decoder: token {} has no content", key));
                }
                bool special = true;
                if (auto s = value.find("special"); s != value.end() && s->is_boolean()) {
                    special = s->get<bool>();
                }
                add_special(id, value["content"].get<std::string>(), special, config_name);
            }
        }
    }
    if (!from_config) {
        std::vector<std::string> names = {"<|endoftext|>", "<|startoftext|>", "<|bos|>", "<|eos|>",
                                          "<|pad|>"};
        for (int i = 0; i < 205; ++i)
            names.push_back(fmt::format("<|extra_{}|>", i));
        int64_t id = n_ranks;
        for (auto& name : names)
            add_special(id++, std::move(name), true, file);
    }
    tok->vocab_size_ = static_cast<int>(max_id + 1);

    if (vocab_limit > 0 && tok->vocab_size_ > vocab_limit) {
        if (n_ranks > vocab_limit) {
            throw FileError(file, fmt::format("{} ranks do not fit the model's vocabulary of {}",
                                              n_ranks, vocab_limit));
        }
        const auto worst =
            std::max_element(tok->specials_.begin(), tok->specials_.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
        throw FileError(from_config ? display_name(tokenizer_config) : file,
                        fmt::format("token id {} ('{}') does not fit the model's vocabulary of {}",
                                    worst->first, worst->second.text, vocab_limit));
    }
    return tok;
}

std::vector<int32_t> TiktokenBpe::encode(std::string_view text, bool parse_special) const {
    const std::string clean = sanitize_utf8(text);
    const std::string_view s = clean;
    std::vector<int32_t> out;
    out.reserve(s.size() / 3 + 4);
    if (!parse_special || special_trie_.empty()) {
        encode_ordinary(s, out);
        return out;
    }
    std::size_t start = 0;
    while (start <= s.size()) {
        std::size_t begin = 0;
        std::size_t length = 0;
        int32_t id = -1;
        if (!special_trie_.find(s, start, begin, length, id)) {
            encode_ordinary(s.substr(start), out);
            break;
        }
        encode_ordinary(s.substr(start, begin - start), out);
        out.push_back(id);
        start = begin + length;
    }
    return out;
}

void TiktokenBpe::encode_ordinary(std::string_view text, std::vector<int32_t>& out) const {
    if (text.empty()) return;
    // The pattern runs on this segment alone, as tiktoken runs it between special tokens: a
    // lookahead never sees past the segment.
    for (const auto& [begin, end] : pattern_.find_all(text)) {
        encode_piece(text.substr(begin, end - begin), out);
    }
}

void TiktokenBpe::encode_piece(std::string_view piece, std::vector<int32_t>& out) const {
    if (auto it = ranks_.find(piece); it != ranks_.end()) {
        out.push_back(it->second);
        return;
    }
    const bool cacheable = piece.size() <= kMaxCachedPiece;
    if (cacheable) {
        std::lock_guard lock(cache_mutex_);
        if (auto it = cache_.find(piece); it != cache_.end()) {
            out.insert(out.end(), it->second.begin(), it->second.end());
            return;
        }
    }
    std::vector<BpeSymbol> symbols;
    symbols.reserve(piece.size());
    for (std::size_t i = 0; i < piece.size(); ++i) {
        auto it = ranks_.find(piece.substr(i, 1));
        // Load checked that every byte valid UTF-8 can contain has a rank.
        const int32_t id = it == ranks_.end() ? -1 : it->second;
        symbols.push_back(BpeSymbol{id, static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1)});
    }
    bpe_merge(symbols,
              [&](const BpeSymbol& left,
                  const BpeSymbol& right) -> std::optional<std::pair<uint32_t, int32_t>> {
                  auto it = ranks_.find(piece.substr(left.begin, right.end - left.begin));
                  if (it == ranks_.end()) return std::nullopt;
                  return std::make_pair(static_cast<uint32_t>(it->second), it->second);
              });
    std::vector<int32_t> ids;
    ids.reserve(symbols.size());
    for (const BpeSymbol& sym : symbols) {
        if (sym.id < 0) {
            throw Error(fmt::format("byte 0x{:02x} has no token",
                                    static_cast<unsigned char>(piece[sym.begin])));
        }
        ids.push_back(sym.id);
    }
    out.insert(out.end(), ids.begin(), ids.end());
    if (cacheable) {
        std::lock_guard lock(cache_mutex_);
        if (cache_.size() >= kMaxCacheEntries) cache_.clear();
        cache_.emplace(std::string(piece), std::move(ids));
    }
}

std::string TiktokenBpe::token_bytes(int32_t id) const {
    if (id < 0 || id >= vocab_size_) {
        throw Error(fmt::format("token id {} is outside the vocabulary [0, {})", id, vocab_size_));
    }
    if (id < static_cast<int32_t>(rank_bytes_.size())) return rank_bytes_[id];
    if (auto it = specials_.find(id); it != specials_.end()) return it->second.text;
    return {};  // an id no token uses
}

std::optional<int32_t> TiktokenBpe::token_id(std::string_view token_text) const {
    if (auto it = special_ids_.find(token_text); it != special_ids_.end()) return it->second;
    if (auto it = ranks_.find(token_text); it != ranks_.end()) return it->second;
    return std::nullopt;
}

bool TiktokenBpe::is_special(int32_t id) const noexcept {
    auto it = specials_.find(id);
    return it != specials_.end() && it->second.special;
}

}  // namespace mtdesk::detail
