#include "tokenizer/hf_byte_level_bpe.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include "mtdesk/error.h"
#include "tokenizer/bpe.h"
#include "tokenizer/files.h"
#include "tokenizer/utf8.h"

namespace mtdesk::detail {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxCachedWord = 128;
constexpr std::size_t kMaxCacheEntries = 1 << 16;

// GPT-2's bytes_to_unicode(): printable Latin-1 bytes stand for themselves, the others are
// shifted to U+0100 and up, in byte order.
struct ByteAlphabet {
    std::array<std::string, 256> mapped;                  // byte -> UTF-8 of its stand-in character
    std::unordered_map<char32_t, unsigned char> byte_of;  // stand-in character -> byte

    ByteAlphabet() {
        char32_t next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable =
                (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            const char32_t c = printable ? static_cast<char32_t>(b) : next++;
            utf8_append(mapped[b], c);
            byte_of.emplace(c, static_cast<unsigned char>(b));
        }
    }
};

const ByteAlphabet& byte_alphabet() {
    static const ByteAlphabet alphabet;
    return alphabet;
}

// The ByteLevel decoder: a token whose characters all stand for bytes becomes those bytes;
// any other token is kept as its UTF-8 text (what tokenizers' ByteLevel decoder does).
std::string byte_level_decode(std::string_view token) {
    const ByteAlphabet& alphabet = byte_alphabet();
    std::string out;
    std::size_t pos = 0;
    while (pos < token.size()) {
        const char32_t c = utf8_next(token, pos);
        auto it = alphabet.byte_of.find(c);
        if (it == alphabet.byte_of.end()) return std::string(token);
        out.push_back(static_cast<char>(it->second));
    }
    return out;
}

// Rust's regex \w (Unicode): Alphabetic, marks, decimal numbers, connector punctuation,
// join controls. tokenizers uses it for single_word.
bool is_word_char(char32_t c) {
    const auto cp = static_cast<UChar32>(c);
    if (u_hasBinaryProperty(cp, UCHAR_ALPHABETIC) || u_hasBinaryProperty(cp, UCHAR_JOIN_CONTROL)) {
        return true;
    }
    return (U_GET_GC_MASK(cp) & (U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) != 0;
}

bool is_white_space(char32_t c) {
    return u_isUWhiteSpace(static_cast<UChar32>(c)) != 0;
}

char32_t last_char(std::string_view text) {
    std::size_t start = text.size() - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
        --start;
    std::size_t pos = start;
    return utf8_next(text, pos);
}

// Start of the run of white space that ends `text` (text.size() when there is none).
std::size_t trailing_space_start(std::string_view text) {
    std::size_t end = text.size();
    while (end > 0) {
        std::size_t start = end - 1;
        while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
            --start;
        std::size_t pos = start;
        if (!is_white_space(utf8_next(text, pos))) break;
        end = start;
    }
    return end;
}

// Length of the run of white space that starts `text`.
std::size_t leading_space_length(std::string_view text) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t next = pos;
        if (!is_white_space(utf8_next(text, next))) break;
        pos = next;
    }
    return pos;
}

std::string type_of(const json& value) {
    if (value.is_object()) {
        if (auto it = value.find("type"); it != value.end() && it->is_string()) {
            return it->get<std::string>();
        }
        return "(object without type)";
    }
    return value.type_name();
}

bool flag(const json& object, const char* key, bool fallback) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) throw std::invalid_argument(fmt::format("'{}' is not a boolean", key));
    return it->get<bool>();
}

uint64_t pair_key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

}  // namespace

std::unique_ptr<HfByteLevelBpe> HfByteLevelBpe::load(const std::filesystem::path& tokenizer_json,
                                                     const std::filesystem::path& tokenizer_config,
                                                     int vocab_limit) {
    const std::string file = display_name(tokenizer_json);
    const json root = read_json_file(tokenizer_json);
    std::unique_ptr<HfByteLevelBpe> tok(new HfByteLevelBpe());
    auto unsupported = [&](const std::string& what) { return UnsupportedError(file, what); };
    auto malformed = [&](const std::string& what) { return FileError(file, what); };

    try {
        if (!root.is_object()) throw malformed("expected a JSON object");

        // ---- model ----
        auto model_it = root.find("model");
        if (model_it == root.end() || !model_it->is_object()) throw malformed("no 'model' object");
        const json& model = *model_it;
        const std::string model_type =
            model.contains("type") ? type_of(model) : (model.contains("merges") ? "BPE" : "?");
        if (model_type != "BPE") {
            throw unsupported(
                fmt::format("model type '{}' is not supported (only byte-level BPE "
                            "is)",
                            model_type));
        }
        if (flag(model, "byte_fallback", false)) {
            throw unsupported("BPE with byte_fallback is not supported");
        }
        if (auto it = model.find("dropout"); it != model.end() && !it->is_null()) {
            if (!it->is_number()) throw malformed("model.dropout is not a number");
            if (it->get<double>() > 0.0) throw unsupported("BPE dropout is not supported");
        }
        for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
            if (auto it = model.find(key); it != model.end() && !it->is_null()) {
                if (!it->is_string()) throw malformed(fmt::format("model.{} is not a string", key));
                if (!it->get<std::string>().empty()) {
                    throw unsupported(fmt::format("BPE with a {} is not supported", key));
                }
            }
        }
        tok->fuse_unk_ = flag(model, "fuse_unk", false);
        tok->ignore_merges_ = flag(model, "ignore_merges", false);

        auto vocab_it = model.find("vocab");
        if (vocab_it == model.end() || !vocab_it->is_object()) {
            throw malformed("model.vocab is missing or not an object");
        }
        int64_t max_id = -1;
        std::unordered_map<int32_t, std::string> token_of_id;
        token_of_id.reserve(vocab_it->size());
        tok->vocab_.reserve(vocab_it->size());
        for (const auto& [token, value] : vocab_it->items()) {
            if (!value.is_number_integer()) {
                throw malformed(
                    fmt::format("model.vocab: the id of '{}' is not an integer", token));
            }
            const auto id = value.get<int64_t>();
            if (id < 0 || id > std::numeric_limits<int32_t>::max() - 1) {
                throw malformed(fmt::format("model.vocab: invalid id {} for '{}'", id, token));
            }
            const auto id32 = static_cast<int32_t>(id);
            if (auto [it, inserted] = token_of_id.emplace(id32, token); !inserted) {
                throw malformed(fmt::format("model.vocab: id {} is used by both '{}' and '{}'", id,
                                            it->second, token));
            }
            tok->vocab_.emplace(token, id32);
            max_id = std::max(max_id, id);
        }
        if (auto it = model.find("unk_token"); it != model.end() && !it->is_null()) {
            if (!it->is_string()) throw malformed("model.unk_token is not a string");
            auto v = tok->vocab_.find(it->get<std::string>());
            if (v == tok->vocab_.end()) {
                throw malformed(fmt::format("model.unk_token '{}' is not in the vocabulary",
                                            it->get<std::string>()));
            }
            tok->unk_id_ = v->second;
        }

        auto merges_it = model.find("merges");
        if (merges_it == model.end() || !merges_it->is_array()) {
            throw malformed("model.merges is missing or not an array");
        }
        tok->merges_.reserve(merges_it->size());
        uint32_t rank = 0;
        for (const json& merge : *merges_it) {
            std::string left;
            std::string right;
            if (merge.is_string()) {
                const auto& text = merge.get_ref<const std::string&>();
                const std::size_t space = text.find(' ');
                if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
                    throw malformed(
                        fmt::format("merge {} ('{}') is not two tokens separated by one "
                                    "space",
                                    rank, text));
                }
                left = text.substr(0, space);
                right = text.substr(space + 1);
            } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
                       merge[1].is_string()) {
                left = merge[0].get<std::string>();
                right = merge[1].get<std::string>();
            } else {
                throw malformed(fmt::format("merge {} is neither \"a b\" nor [a, b]", rank));
            }
            auto a = tok->vocab_.find(left);
            auto b = tok->vocab_.find(right);
            auto ab = tok->vocab_.find(left + right);
            for (const auto& [found, name] :
                 {std::pair{a, left}, std::pair{b, right}, std::pair{ab, left + right}}) {
                if (found == tok->vocab_.end()) {
                    throw malformed(
                        fmt::format("merge {} ('{}' '{}'): '{}' is not in the "
                                    "vocabulary",
                                    rank, left, right, name));
                }
            }
            // A repeated pair takes the rank of its last occurrence, as in tokenizers.
            tok->merges_[pair_key(a->second, b->second)] = {rank, ab->second};
            ++rank;
        }

        // ---- normalizer ----
        auto add_normalizer = [&](const json& n, auto&& self) -> void {
            if (n.is_null()) return;
            const std::string type = type_of(n);
            if (type == "Sequence") {
                auto list = n.find("normalizers");
                if (list == n.end() || !list->is_array()) {
                    throw malformed("normalizer Sequence without a 'normalizers' array");
                }
                for (const json& item : *list)
                    self(item, self);
            } else if (type == "NFC") {
                tok->normalizers_.push_back(Normalization::NFC);
            } else if (type == "NFD") {
                tok->normalizers_.push_back(Normalization::NFD);
            } else if (type == "NFKC") {
                tok->normalizers_.push_back(Normalization::NFKC);
            } else if (type == "NFKD") {
                tok->normalizers_.push_back(Normalization::NFKD);
            } else {
                throw unsupported(fmt::format("normalizer '{}' is not supported", type));
            }
        };
        if (auto it = root.find("normalizer"); it != root.end())
            add_normalizer(*it, add_normalizer);

        // ---- pre-tokenizer ----
        bool has_byte_level = false;
        auto add_step = [&](const json& p, auto&& self) -> void {
            const std::string type = type_of(p);
            if (type == "Sequence") {
                auto list = p.find("pretokenizers");
                if (list == p.end() || !list->is_array()) {
                    throw malformed("pre_tokenizer Sequence without a 'pretokenizers' array");
                }
                for (const json& item : *list)
                    self(item, self);
            } else if (type == "ByteLevel") {
                PreTokenizerStep step;
                step.byte_level = true;
                step.add_prefix_space = flag(p, "add_prefix_space", true);
                if (flag(p, "use_regex", true)) {
                    step.regex = std::make_unique<Regex>(kGpt2Pattern, file);
                }
                tok->steps_.push_back(std::move(step));
                has_byte_level = true;
            } else if (type == "Split") {
                PreTokenizerStep step;
                auto pattern = p.find("pattern");
                if (pattern == p.end() || !pattern->is_object()) {
                    throw malformed("Split pre-tokenizer without a pattern");
                }
                if (auto r = pattern->find("Regex"); r != pattern->end() && r->is_string()) {
                    step.regex = std::make_unique<Regex>(r->get<std::string>(), file);
                } else if (auto s = pattern->find("String");
                           s != pattern->end() && s->is_string()) {
                    if (s->get<std::string>().empty()) {
                        throw unsupported("Split pre-tokenizer with an empty String pattern");
                    }
                    step.regex = std::make_unique<Regex>(s->get<std::string>(), file, true);
                } else {
                    throw malformed(
                        "Split pattern is neither {\"Regex\": ...} nor {\"String\": ...}");
                }
                const std::string behavior = p.contains("behavior") && p["behavior"].is_string()
                                                 ? p["behavior"].get<std::string>()
                                                 : std::string("?");
                if (behavior == "Removed") {
                    step.behavior = SplitBehavior::Removed;
                } else if (behavior == "Isolated") {
                    step.behavior = SplitBehavior::Isolated;
                } else if (behavior == "MergedWithPrevious") {
                    step.behavior = SplitBehavior::MergedWithPrevious;
                } else if (behavior == "MergedWithNext") {
                    step.behavior = SplitBehavior::MergedWithNext;
                } else if (behavior == "Contiguous") {
                    step.behavior = SplitBehavior::Contiguous;
                } else {
                    throw unsupported(
                        fmt::format("Split behavior '{}' is not supported", behavior));
                }
                step.invert = flag(p, "invert", false);
                tok->steps_.push_back(std::move(step));
            } else {
                throw unsupported(
                    fmt::format("pre-tokenizer '{}' is not supported (byte-level BPE "
                                "needs ByteLevel, optionally with Split)",
                                type));
            }
        };
        if (auto it = root.find("pre_tokenizer"); it != root.end() && !it->is_null()) {
            add_step(*it, add_step);
        }
        if (!has_byte_level) {
            throw unsupported("the pre-tokenizer has no ByteLevel step: not a byte-level BPE");
        }

        // ---- decoder ----
        auto decoder_it = root.find("decoder");
        if (decoder_it == root.end() || decoder_it->is_null()) {
            throw unsupported("no decoder: a byte-level BPE needs the ByteLevel decoder");
        }
        if (type_of(*decoder_it) != "ByteLevel") {
            throw unsupported(fmt::format("decoder '{}' is not supported (only ByteLevel is)",
                                          type_of(*decoder_it)));
        }

        // ---- added tokens ----
        // tokenizers ignores the ids written in the file: it gives each added token, in file
        // order, the id of the same text in the model vocabulary, or of an earlier added token,
        // or the next free id (max(model vocabulary size, highest added id + 1)). A file whose
        // ids disagree with that is inconsistent; rather than guess, it is refused.
        std::unordered_map<int32_t, std::string> origin_of_id;
        const auto model_size = static_cast<int64_t>(tok->vocab_.size());
        int64_t max_added = -1;
        auto add_token = [&](AddedToken token, int64_t declared, const std::string& origin) {
            if (token.content.empty()) {
                throw FileError(origin, fmt::format("added token {} has empty content", declared));
            }
            if (!utf8_valid(token.content)) {
                throw FileError(origin, fmt::format("added token {} is not UTF-8", declared));
            }
            int64_t id = 0;
            std::string reason;
            auto existing = tok->added_by_content_.find(token.content);
            if (auto v = tok->vocab_.find(token.content); v != tok->vocab_.end()) {
                id = v->second;
                reason = "its id in the model vocabulary";
            } else if (existing != tok->added_by_content_.end()) {
                id = tok->added_[existing->second].id;
                reason = "the id of the same token earlier in the list";
            } else {
                id = max_added >= model_size ? max_added + 1 : model_size;
                reason = "the next free id after the vocabulary and earlier added tokens";
            }
            if (declared != id) {
                throw FileError(origin, fmt::format("added token '{}' is given id {}, but it gets "
                                                    "id {} ({})",
                                                    token.content, declared, id, reason));
            }
            token.id = static_cast<int32_t>(id);
            max_added = std::max(max_added, id);
            if (existing != tok->added_by_content_.end()) {
                tok->added_[existing->second] = std::move(token);  // the later flags win
                return;
            }
            if (auto it = tok->added_by_id_.find(token.id); it != tok->added_by_id_.end()) {
                throw FileError(
                    origin, fmt::format("added tokens '{}' and '{}' share id {}",
                                        tok->added_[it->second].content, token.content, token.id));
            }
            const std::size_t index = tok->added_.size();
            origin_of_id[token.id] = origin;
            tok->added_by_id_.emplace(token.id, index);
            tok->added_by_content_.emplace(token.content, index);
            max_id = std::max<int64_t>(max_id, token.id);
            tok->added_.push_back(std::move(token));
        };
        auto parse_added = [&](const json& value, int64_t id, const std::string& origin) {
            if (!value.is_object() || !value.contains("content") || !value["content"].is_string()) {
                throw FileError(origin, fmt::format("added token {} has no content", id));
            }
            if (id < 0 || id > std::numeric_limits<int32_t>::max() - 1) {
                throw FileError(origin, fmt::format("added token '{}' has an invalid id {}",
                                                    value["content"].get<std::string>(), id));
            }
            AddedToken token;
            token.content = value["content"].get<std::string>();
            try {
                token.special = flag(value, "special", false);
                token.single_word = flag(value, "single_word", false);
                token.lstrip = flag(value, "lstrip", false);
                token.rstrip = flag(value, "rstrip", false);
                token.normalized = flag(value, "normalized", !token.special);
            } catch (const std::invalid_argument& e) {
                throw FileError(origin,
                                fmt::format("added token '{}': {}", token.content, e.what()));
            }
            add_token(std::move(token), id, origin);
        };
        if (auto it = root.find("added_tokens"); it != root.end() && !it->is_null()) {
            if (!it->is_array()) throw malformed("added_tokens is not an array");
            for (const json& value : *it) {
                if (!value.is_object() || !value.contains("id") ||
                    !value["id"].is_number_integer()) {
                    throw malformed("added_tokens: an entry has no integer id");
                }
                parse_added(value, value["id"].get<int64_t>(), file);
            }
        }
        std::error_code ec;
        if (!tokenizer_config.empty() && std::filesystem::exists(tokenizer_config, ec)) {
            const std::string config_name = display_name(tokenizer_config);
            const json config = read_json_file(tokenizer_config);
            if (!config.is_object()) throw FileError(config_name, "expected a JSON object");
            if (auto it = config.find("added_tokens_decoder");
                it != config.end() && !it->is_null()) {
                if (!it->is_object()) {
                    throw FileError(config_name, "added_tokens_decoder is not an object");
                }
                // transformers adds, in id order, the entries whose id tokenizer.json lacks.
                std::vector<std::pair<int64_t, const json*>> entries;
                for (const auto& [key, value] : it->items()) {
                    int64_t id = -1;
                    try {
                        std::size_t used = 0;
                        id = std::stoll(key, &used);
                        if (used != key.size()) id = -1;
                    } catch (const std::exception&) {
                        id = -1;
                    }
                    if (id < 0) {
                        throw FileError(config_name,
                                        fmt::format("added_tokens_decoder: invalid id '{}'", key));
                    }
                    entries.emplace_back(id, &value);
                }
                std::sort(entries.begin(), entries.end(),
                          [](const auto& a, const auto& b) { return a.first < b.first; });
                for (const auto& [id, value] : entries) {
                    if (id <= std::numeric_limits<int32_t>::max()) {
                        if (auto known = tok->added_by_id_.find(static_cast<int32_t>(id));
                            known != tok->added_by_id_.end()) {
                            const std::string& mine = tok->added_[known->second].content;
                            if (!value->is_object() || !value->contains("content") ||
                                (*value)["content"] != mine) {
                                throw FileError(
                                    config_name,
                                    fmt::format("added_tokens_decoder: token {} is not "
                                                "'{}' as in {}",
                                                id, mine, tokenizer_json.filename().string()));
                            }
                            continue;
                        }
                    }
                    parse_added(*value, id, config_name);
                }
            }
        }

        // The tries: a token is searched in the raw text or, with normalized, in the normalized
        // text (its content normalized the same way).
        for (std::size_t i = 0; i < tok->added_.size(); ++i) {
            AddedToken& token = tok->added_[i];
            if (token.normalized && !tok->normalizers_.empty()) {
                const std::string normalized = tok->normalize(token.content);
                if (normalized.empty()) {
                    throw FileError(
                        file, fmt::format("added token '{}' normalizes to nothing", token.content));
                }
                tok->normalized_trie_.insert(normalized, static_cast<int32_t>(i));
            } else if (token.normalized) {
                tok->normalized_trie_.insert(token.content, static_cast<int32_t>(i));
            } else {
                tok->raw_trie_.insert(token.content, static_cast<int32_t>(i));
            }
        }

        // ---- decoded bytes of every id ----
        if (max_id < 0) throw malformed("empty vocabulary");
        tok->vocab_size_ = static_cast<int>(max_id + 1);
        tok->id_bytes_.assign(static_cast<std::size_t>(tok->vocab_size_), std::string());
        for (const auto& [id, token] : token_of_id)
            tok->id_bytes_[id] = byte_level_decode(token);
        for (const AddedToken& token : tok->added_) {
            tok->id_bytes_[token.id] = byte_level_decode(token.content);
        }

        if (vocab_limit > 0 && tok->vocab_size_ > vocab_limit) {
            const auto worst = static_cast<int32_t>(max_id);
            std::string origin = file;
            std::string what = fmt::format("token id {}", worst);
            if (auto it = tok->added_by_id_.find(worst); it != tok->added_by_id_.end()) {
                what = fmt::format("token id {} ('{}')", worst, tok->added_[it->second].content);
                origin = origin_of_id[worst];
            } else if (auto v = token_of_id.find(worst); v != token_of_id.end()) {
                what = fmt::format("token id {} ('{}')", worst, v->second);
            }
            throw FileError(origin, fmt::format("{} does not fit the model's vocabulary of {}",
                                                what, vocab_limit));
        }
    } catch (const json::exception& e) {
        throw FileError(file, fmt::format("unexpected structure: {}", e.what()));
    } catch (const std::invalid_argument& e) {
        throw FileError(file, e.what());
    }
    return tok;
}

std::string HfByteLevelBpe::normalize(std::string_view text) const {
    if (normalizers_.empty() || text.empty()) return std::string(text);
    UErrorCode status = U_ZERO_ERROR;
    icu::UnicodeString u = icu::UnicodeString::fromUTF8(
        icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
    for (const Normalization n : normalizers_) {
        const icu::Normalizer2* normalizer = nullptr;
        switch (n) {
            case Normalization::NFC:
                normalizer = icu::Normalizer2::getNFCInstance(status);
                break;
            case Normalization::NFD:
                normalizer = icu::Normalizer2::getNFDInstance(status);
                break;
            case Normalization::NFKC:
                normalizer = icu::Normalizer2::getNFKCInstance(status);
                break;
            case Normalization::NFKD:
                normalizer = icu::Normalizer2::getNFKDInstance(status);
                break;
        }
        if (U_FAILURE(status) || normalizer == nullptr) {
            throw Error(fmt::format("ICU normalizer unavailable: {}", u_errorName(status)));
        }
        if (normalizer->isNormalized(u, status) && U_SUCCESS(status)) continue;
        status = U_ZERO_ERROR;
        u = normalizer->normalize(u, status);
        if (U_FAILURE(status)) {
            throw Error(fmt::format("ICU normalization failed: {}", u_errorName(status)));
        }
    }
    std::string out;
    u.toUTF8String(out);
    return out;
}

void HfByteLevelBpe::split_added(std::string_view text, const TokenTrie& trie, bool parse_special,
                                 std::vector<Segment>& out) const {
    // tokenizers' AddedVocabulary::find_matches over non-overlapping leftmost-longest matches.
    std::size_t start_offset = 0;
    std::size_t from = 0;
    std::size_t begin = 0;
    std::size_t length = 0;
    int32_t index = -1;
    while (trie.find(text, from, begin, length, index)) {
        from = begin + length;
        const AddedToken& token = added_[static_cast<std::size_t>(index)];
        if (token.special && !parse_special) continue;
        std::size_t start = begin;
        std::size_t stop = begin + length;
        if (token.single_word) {
            const bool space_before = start == 0 || !is_word_char(last_char(text.substr(0, start)));
            std::size_t next = stop;
            const bool space_after = stop == text.size() || !is_word_char(utf8_next(text, next));
            if (!space_before || !space_after) continue;
        }
        if (token.lstrip)
            start = std::max(trailing_space_start(text.substr(0, start)), start_offset);
        if (token.rstrip) stop += leading_space_length(text.substr(stop));
        start = std::max(start, start_offset);
        if (start > start_offset) {
            out.push_back(Segment{text.substr(start_offset, start - start_offset), -1});
        }
        out.push_back(Segment{{}, token.id});
        start_offset = stop;
    }
    if (start_offset < text.size()) {
        out.push_back(Segment{text.substr(start_offset), -1});
    }
}

std::vector<int32_t> HfByteLevelBpe::encode(std::string_view text, bool parse_special) const {
    const std::string clean = sanitize_utf8(text);
    std::vector<int32_t> out;
    out.reserve(clean.size() / 3 + 4);
    std::vector<Segment> raw;
    split_added(clean, raw_trie_, parse_special, raw);
    std::vector<Segment> normalized_segments;
    for (const Segment& seg : raw) {
        if (seg.id >= 0) {
            out.push_back(seg.id);
            continue;
        }
        const std::string normalized = normalize(seg.text);
        normalized_segments.clear();
        split_added(normalized, normalized_trie_, parse_special, normalized_segments);
        for (const Segment& piece : normalized_segments) {
            if (piece.id >= 0) {
                out.push_back(piece.id);
            } else {
                pre_tokenize_and_encode(piece.text, out);
            }
        }
    }
    return out;
}

void HfByteLevelBpe::pre_tokenize_and_encode(std::string_view text,
                                             std::vector<int32_t>& out) const {
    if (text.empty()) return;
    std::vector<std::string> pieces{std::string(text)};
    std::vector<std::string> next;
    struct Split {
        std::size_t begin;
        std::size_t end;
        bool is_match;
    };
    std::vector<Split> splits;
    std::vector<Split> merged;
    const ByteAlphabet& alphabet = byte_alphabet();
    for (const PreTokenizerStep& step : steps_) {
        next.clear();
        for (std::string& piece : pieces) {
            if (step.byte_level && step.add_prefix_space && piece.front() != ' ') {
                piece.insert(piece.begin(), ' ');
            }
            // Split the piece: every match and every gap between matches is a split.
            splits.clear();
            if (step.regex) {
                std::size_t prev = 0;
                for (const auto& [b, e] : step.regex->find_all(piece)) {
                    if (b > prev) splits.push_back({prev, b, false});
                    splits.push_back({b, e, true});
                    prev = e;
                }
                if (prev < piece.size()) splits.push_back({prev, piece.size(), false});
            } else {
                splits.push_back({0, piece.size(), false});
            }
            const SplitBehavior behavior =
                step.byte_level ? SplitBehavior::Isolated : step.behavior;
            if (!step.byte_level && step.invert) {
                for (Split& s : splits)
                    s.is_match = !s.is_match;
            }
            merged.clear();
            switch (behavior) {
                case SplitBehavior::Isolated:
                    merged = splits;
                    break;
                case SplitBehavior::Removed:
                    for (const Split& s : splits) {
                        if (!s.is_match) merged.push_back(s);
                    }
                    break;
                case SplitBehavior::MergedWithPrevious: {
                    bool previous_match = false;
                    for (const Split& s : splits) {
                        if (s.is_match && !previous_match && !merged.empty()) {
                            merged.back().end = s.end;
                        } else {
                            merged.push_back(s);
                        }
                        previous_match = s.is_match;
                    }
                    break;
                }
                case SplitBehavior::MergedWithNext: {
                    bool previous_match = false;
                    for (auto it = splits.rbegin(); it != splits.rend(); ++it) {
                        if (it->is_match && !previous_match && !merged.empty()) {
                            merged.back().begin = it->begin;
                        } else {
                            merged.push_back(*it);
                        }
                        previous_match = it->is_match;
                    }
                    std::reverse(merged.begin(), merged.end());
                    break;
                }
                case SplitBehavior::Contiguous: {
                    bool previous_match = false;
                    for (const Split& s : splits) {
                        if (s.is_match == previous_match && !merged.empty()) {
                            merged.back().end = s.end;
                        } else {
                            merged.push_back(s);
                        }
                        previous_match = s.is_match;
                    }
                    break;
                }
            }
            for (const Split& s : merged) {
                if (s.end <= s.begin) continue;  // empty splits are dropped
                std::string_view part(piece.data() + s.begin, s.end - s.begin);
                if (step.byte_level) {
                    std::string mapped;
                    mapped.reserve(part.size() * 2);
                    for (const char c : part)
                        mapped += alphabet.mapped[static_cast<unsigned char>(c)];
                    next.push_back(std::move(mapped));
                } else {
                    next.emplace_back(part);
                }
            }
        }
        pieces.swap(next);
    }
    for (const std::string& piece : pieces)
        encode_word(piece, out);
}

void HfByteLevelBpe::encode_word(std::string_view word, std::vector<int32_t>& out) const {
    if (ignore_merges_) {
        if (auto it = vocab_.find(word); it != vocab_.end()) {
            out.push_back(it->second);
            return;
        }
    }
    const bool cacheable = word.size() <= kMaxCachedWord;
    if (cacheable) {
        std::lock_guard lock(cache_mutex_);
        if (auto it = cache_.find(word); it != cache_.end()) {
            out.insert(out.end(), it->second.begin(), it->second.end());
            return;
        }
    }
    // One symbol per character; unknown characters become unk_token (fused when fuse_unk) or
    // are dropped when there is none, as tokenizers' BPE::merge_word does.
    std::vector<BpeSymbol> symbols;
    symbols.reserve(word.size());
    std::size_t pos = 0;
    bool last_was_unk = false;
    while (pos < word.size()) {
        const std::size_t start = pos;
        utf8_next(word, pos);
        auto it = vocab_.find(word.substr(start, pos - start));
        if (it != vocab_.end()) {
            symbols.push_back(
                BpeSymbol{it->second, static_cast<uint32_t>(start), static_cast<uint32_t>(pos)});
            last_was_unk = false;
        } else if (unk_id_) {
            if (fuse_unk_ && last_was_unk) {
                symbols.back().end = static_cast<uint32_t>(pos);
            } else {
                symbols.push_back(
                    BpeSymbol{*unk_id_, static_cast<uint32_t>(start), static_cast<uint32_t>(pos)});
            }
            last_was_unk = true;
        }
    }
    bpe_merge(symbols,
              [&](const BpeSymbol& left,
                  const BpeSymbol& right) -> std::optional<std::pair<uint32_t, int32_t>> {
                  auto it = merges_.find(pair_key(left.id, right.id));
                  if (it == merges_.end()) return std::nullopt;
                  return it->second;
              });
    std::vector<int32_t> ids;
    ids.reserve(symbols.size());
    for (const BpeSymbol& sym : symbols)
        ids.push_back(sym.id);
    out.insert(out.end(), ids.begin(), ids.end());
    if (cacheable) {
        std::lock_guard lock(cache_mutex_);
        if (cache_.size() >= kMaxCacheEntries) cache_.clear();
        cache_.emplace(std::string(word), std::move(ids));
    }
}

std::string HfByteLevelBpe::token_bytes(int32_t id) const {
    if (id < 0 || id >= vocab_size_) {
        throw Error(fmt::format("token id {} is outside the vocabulary [0, {})", id, vocab_size_));
    }
    return id_bytes_[static_cast<std::size_t>(id)];
}

std::optional<int32_t> HfByteLevelBpe::token_id(std::string_view token_text) const {
    if (auto it = added_by_content_.find(token_text); it != added_by_content_.end()) {
        return added_[it->second].id;
    }
    if (auto it = vocab_.find(token_text); it != vocab_.end()) return it->second;
    // The text of an ordinary token, spelled in bytes rather than in the byte-level alphabet.
    std::string mapped;
    for (const char c : token_text)
        mapped += byte_alphabet().mapped[static_cast<unsigned char>(c)];
    if (auto it = vocab_.find(mapped); it != vocab_.end()) return it->second;
    return std::nullopt;
}

bool HfByteLevelBpe::is_special(int32_t id) const noexcept {
    auto it = added_by_id_.find(id);
    return it != added_by_id_.end() && added_[it->second].special;
}

}  // namespace mtdesk::detail
