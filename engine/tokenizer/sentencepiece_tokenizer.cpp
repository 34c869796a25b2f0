#include "tokenizer/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <fmt/format.h>

#include "mtdesk/error.h"
#include "tokenizer/files.h"

namespace mtdesk::detail {
namespace {

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";       // U+2581 '▁'
constexpr std::string_view kUnknownSurface = " \xE2\x81\x87 ";  // " ⁇ ", SentencePiece's

std::string replace_space_symbol(std::string_view piece) {
    std::string out;
    out.reserve(piece.size());
    std::size_t pos = 0;
    while (pos < piece.size()) {
        if (piece.substr(pos, kSpaceSymbol.size()) == kSpaceSymbol) {
            out.push_back(' ');
            pos += kSpaceSymbol.size();
        } else {
            out.push_back(piece[pos++]);
        }
    }
    return out;
}

// "<0xAB>" -> 0xAB.
int parse_byte_piece(std::string_view piece) {
    if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
    int value = 0;
    for (const char c : piece.substr(3, 2)) {
        value <<= 4;
        if (c >= '0' && c <= '9') {
            value |= c - '0';
        } else if (c >= 'A' && c <= 'F') {
            value |= c - 'A' + 10;
        } else if (c >= 'a' && c <= 'f') {
            value |= c - 'a' + 10;
        } else {
            return -1;
        }
    }
    return value;
}

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer()
    : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::load(
    const std::filesystem::path& model_file, int vocab_limit) {
    const std::string file = display_name(model_file);
    // Read the file ourselves so that a missing or unreadable file gets our message.
    const std::string serialized = read_file(model_file);
    std::unique_ptr<SentencePieceTokenizer> tok(new SentencePieceTokenizer());
    const sentencepiece::util::Status status = tok->sp_->LoadFromSerializedProto(serialized);
    if (!status.ok()) {
        // The library's message for bytes that are no model is its own source location
        // ("./src/sentencepiece_processor.cc(232) [model_proto->ParseFromArray(...)]").
        const std::string why = status.ToString();
        throw FileError(file, why.find("ParseFromArray") != std::string::npos
                                  ? "not a SentencePiece model (its bytes do not parse as one: "
                                    "damaged, cut short, or another kind of file)"
                                  : "not a SentencePiece model: " + why);
    }
    tok->vocab_size_ = tok->sp_->GetPieceSize();
    if (tok->vocab_size_ <= 0) throw FileError(file, "the model has no pieces");
    if (vocab_limit > 0 && tok->vocab_size_ > vocab_limit) {
        throw FileError(file, fmt::format("{} pieces do not fit the model's vocabulary of {}",
                                          tok->vocab_size_, vocab_limit));
    }
    const auto n = static_cast<std::size_t>(tok->vocab_size_);
    tok->bytes_.resize(n);
    tok->special_.assign(n, 0);
    tok->drops_prefix_.assign(n, 0);
    for (int id = 0; id < tok->vocab_size_; ++id) {
        const std::string& piece = tok->sp_->IdToPiece(id);
        std::string& bytes = tok->bytes_[static_cast<std::size_t>(id)];
        if (tok->sp_->IsControl(id)) {
            bytes = piece;
            tok->special_[static_cast<std::size_t>(id)] = 1;
            if (!piece.empty()) tok->control_trie_.insert(piece, id);
        } else if (tok->sp_->IsUnknown(id)) {
            bytes = std::string(kUnknownSurface);
        } else if (tok->sp_->IsByte(id)) {
            const int value = parse_byte_piece(piece);
            if (value < 0) {
                throw FileError(file, fmt::format("byte piece {} is '{}', not <0xHH>", id, piece));
            }
            bytes = std::string(1, static_cast<char>(value));
        } else {
            bytes = replace_space_symbol(piece);
            tok->drops_prefix_[static_cast<std::size_t>(id)] =
                std::string_view(piece).substr(0, kSpaceSymbol.size()) == kSpaceSymbol;
        }
    }
    return tok;
}

void SentencePieceTokenizer::encode_plain(std::string_view text, std::vector<int32_t>& out) const {
    if (text.empty()) return;
    std::vector<int> ids;
    const sentencepiece::util::Status status = sp_->Encode(text, &ids);
    if (!status.ok())
        throw Error(fmt::format("SentencePiece encoding failed: {}", status.ToString()));
    out.insert(out.end(), ids.begin(), ids.end());
}

std::vector<int32_t> SentencePieceTokenizer::encode(std::string_view text,
                                                    bool parse_special) const {
    const std::string clean = sanitize_utf8(text);
    const std::string_view s = clean;
    std::vector<int32_t> out;
    if (!parse_special || control_trie_.empty()) {
        encode_plain(s, out);
        return out;
    }
    std::size_t start = 0;
    std::size_t begin = 0;
    std::size_t length = 0;
    int32_t id = -1;
    while (control_trie_.find(s, start, begin, length, id)) {
        encode_plain(s.substr(start, begin - start), out);
        out.push_back(id);
        start = begin + length;
    }
    encode_plain(s.substr(start), out);
    return out;
}

std::string SentencePieceTokenizer::token_bytes(int32_t id) const {
    if (id < 0 || id >= vocab_size_) {
        throw Error(fmt::format("token id {} is outside the vocabulary [0, {})", id, vocab_size_));
    }
    return bytes_[static_cast<std::size_t>(id)];
}

std::string SentencePieceTokenizer::decoded_bytes(int32_t id, bool at_start) const {
    std::string bytes = token_bytes(id);
    // SentencePiece drops the space of a leading "▁" at the start of the text: the dummy prefix
    // its normalizer added. Ask the library whether this model does (it depends on the
    // normalizer's add_dummy_prefix / remove_extra_whitespaces).
    if (at_start && drops_prefix_[static_cast<std::size_t>(id)]) {
        const std::string alone = sp_->DecodeIds(std::vector<int>{id});
        if (alone.size() + 1 == bytes.size()) bytes.erase(0, 1);
    }
    return bytes;
}

std::optional<int32_t> SentencePieceTokenizer::token_id(std::string_view token_text) const {
    const int id = sp_->PieceToId(token_text);
    if (id < 0 || id >= vocab_size_ || sp_->IdToPiece(id) != token_text) return std::nullopt;
    return id;
}

bool SentencePieceTokenizer::is_special(int32_t id) const noexcept {
    return id >= 0 && id < vocab_size_ && special_[static_cast<std::size_t>(id)] != 0;
}

}  // namespace mtdesk::detail
