#include "mtdesk/tokenizer/tokenizer.h"

#include <algorithm>

#include <fmt/format.h>

#include "mtdesk/error.h"
#include "tokenizer/files.h"
#include "tokenizer/hf_byte_level_bpe.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/tiktoken_bpe.h"
#include "tokenizer/utf8.h"

namespace mtdesk {

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
    std::string bytes;
    bool at_start = true;
    for (const int32_t id : ids) {
        if (is_special(id)) {
            if (!skip_special) bytes += token_bytes(id);
            continue;
        }
        bytes += decoded_bytes(id, at_start);
        at_start = false;
    }
    return sanitize_utf8(bytes);
}

std::string StreamingDecoder::push(int32_t id) {
    if (tokenizer_.is_special(id)) return {};
    pending_ += tokenizer_.decoded_bytes(id, at_start_);
    at_start_ = false;
    // Everything up to a trailing sequence that the next bytes could still complete is final:
    // such a sequence starts with a lead byte, which always begins a new maximal subpart, so
    // repairing the two parts separately gives what repairing them together gives.
    const std::size_t keep = detail::utf8_incomplete_tail(pending_);
    std::string ready = sanitize_utf8(std::string_view(pending_).substr(0, pending_.size() - keep));
    pending_.erase(0, pending_.size() - keep);
    return ready;
}

std::string StreamingDecoder::finish() {
    std::string rest = sanitize_utf8(pending_);
    pending_.clear();
    return rest;
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& model_dir, int vocab_limit) {
    namespace fs = std::filesystem;
    const std::string dir = detail::display_name(model_dir);
    std::error_code ec;
    if (!fs::exists(model_dir, ec)) throw FileError(dir, "does not exist");
    if (!fs::is_directory(model_dir, ec)) throw FileError(dir, "is not a directory");
    const fs::path config = model_dir / "tokenizer_config.json";
    // A name that is there in any form (a FIFO, a broken link) is the tokenizer: reading it then
    // says what is wrong with it, where skipping it would say "no tokenizer found".
    auto present = [](const fs::path& p) {
        std::error_code e;
        return fs::symlink_status(p, e).type() != fs::file_type::not_found && !e;
    };

    fs::path tiktoken = model_dir / "hy.tiktoken";
    if (!present(tiktoken)) {
        std::vector<fs::path> found;
        for (fs::directory_iterator it(model_dir, ec), end; !ec && it != end; it.increment(ec)) {
            if (it->path().extension() == ".tiktoken" && it->is_regular_file(ec)) {
                found.push_back(it->path());
            }
        }
        if (ec) throw FileError(dir, fmt::format("cannot list the directory: {}", ec.message()));
        std::sort(found.begin(), found.end());
        if (found.size() > 1) {
            std::string names;
            for (const fs::path& p : found) {
                names += (names.empty() ? "" : ", ") + p.filename().string();
            }
            throw FileError(dir, fmt::format("several .tiktoken files ({}); expected hy.tiktoken "
                                             "or a single one",
                                             names));
        }
        tiktoken = found.empty() ? fs::path() : found.front();
    }
    std::unique_ptr<Tokenizer> tokenizer;
    const fs::path json = model_dir / "tokenizer.json";
    const fs::path model = model_dir / "tokenizer.model";
    if (!tiktoken.empty()) {
        tokenizer = detail::TiktokenBpe::load(tiktoken, config, vocab_limit);
    } else if (present(json)) {
        tokenizer = detail::HfByteLevelBpe::load(json, config, vocab_limit);
    } else if (present(model)) {
        tokenizer = detail::SentencePieceTokenizer::load(model, vocab_limit);
    } else {
        throw FileError(dir,
                        "no tokenizer found (looked for hy.tiktoken, *.tiktoken, tokenizer.json "
                        "and tokenizer.model)");
    }
    if (present(config)) {
        const nlohmann::json c = detail::read_json_file(config);
        const auto it = c.is_object() ? c.find("model_max_length") : c.end();
        // transformers writes int(1e30) for "no limit": not an integer here, or a huge one.
        if (it != c.end() && it->is_number_integer() && it->get<int64_t>() > 0 &&
            it->get<int64_t>() < 1'000'000'000)
            tokenizer->set_model_max_length(static_cast<int>(it->get<int64_t>()));
    }
    return tokenizer;
}

}  // namespace mtdesk
