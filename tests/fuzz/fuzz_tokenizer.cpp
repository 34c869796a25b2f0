// libFuzzer target: the fixture tokenizers of tests/data/tokenizers (tiktoken, tokenizer.json
// with NFC + Split, GPT-2-style tokenizer.json, SentencePiece) on arbitrary bytes. Besides the
// sanitizers, it checks:
//  - sanitize_utf8 gives valid UTF-8, is idempotent and leaves valid UTF-8 alone;
//  - encode, with and without special-token parsing, gives ids inside the vocabulary;
//  - decode(encode(x)) == sanitize_utf8(x) for the tokenizers without a normalizer (SentencePiece:
//    but for U+2581, which it reads as a space), with special
//    parsing too for the byte-level BPEs (special tokens decode to their text); for the NFC one,
//    encoding the decoded text again gives the same ids;
//  - the StreamingDecoder pieces concatenate to decode(), also for the input read as raw ids;
//  - nothing throws.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/tokenizer/tokenizer.h"

namespace {

[[noreturn]] void fail(const char* tokenizer, const char* what) {
    std::fprintf(stderr, "invariant violated (%s): %s\n", tokenizer, what);
    std::abort();
}

struct Fixture {
    const char* name;
    std::unique_ptr<mtdesk::Tokenizer> tokenizer;
    bool lossless;      // decode(encode(x)) == x
    bool special_text;  // decode(encode(x, parse_special), keep specials) == x
};

std::vector<Fixture>& fixtures() {
    static std::vector<Fixture> all = [] {
        const std::filesystem::path dir =
            std::filesystem::path(MTDESK_TEST_DATA_DIR) / "tokenizers";
        std::vector<Fixture> v;
        v.push_back({"tiktoken", mtdesk::load_tokenizer(dir / "tiktoken"), true, true});
        v.push_back({"hf", mtdesk::load_tokenizer(dir / "hf"), false, false});
        v.push_back({"hf-gpt2", mtdesk::load_tokenizer(dir / "hf-gpt2"), true, true});
        v.push_back({"sentencepiece", mtdesk::load_tokenizer(dir / "sentencepiece"), true, false});
        return v;
    }();
    return all;
}

bool valid_utf8(std::string_view s) {
    return mtdesk::sanitize_utf8(s) == s;
}

std::string stream(const mtdesk::Tokenizer& t, std::span<const int32_t> ids) {
    mtdesk::StreamingDecoder decoder(t);
    std::string out;
    for (const int32_t id : ids)
        out += decoder.push(id);
    out += decoder.finish();
    return out;
}

void check_ids(const Fixture& f, const std::vector<int32_t>& ids) {
    for (const int32_t id : ids) {
        if (id < 0 || id >= f.tokenizer->vocab_size()) fail(f.name, "id outside the vocabulary");
    }
}

void check(const Fixture& f, std::string_view input, const std::string& clean) {
    const mtdesk::Tokenizer& t = *f.tokenizer;

    const std::vector<int32_t> ids = t.encode(input, false);
    check_ids(f, ids);
    const std::string decoded = t.decode(ids);
    if (f.lossless) {
        // SentencePiece writes spaces as U+2581 '▁', so a '▁' of the text comes back a space.
        std::string expected = clean;
        if (t.kind() == mtdesk::TokenizerKind::SentencePiece) {
            for (std::size_t at; (at = expected.find("\xE2\x96\x81")) != std::string::npos;) {
                expected.replace(at, 3, " ");
            }
        }
        if (decoded != expected) fail(f.name, "decode(encode(x)) != x");
    }
    if (!f.lossless && t.encode(decoded, false) != ids) fail(f.name, "encode(decode(ids)) != ids");
    if (stream(t, ids) != decoded) fail(f.name, "streaming != decode (encoded text)");

    const std::vector<int32_t> special = t.encode(input, true);
    check_ids(f, special);
    const std::string with_specials = t.decode(special, false);
    if (f.special_text && with_specials != clean) fail(f.name, "decode(encode(x, special)) != x");
    if (!valid_utf8(with_specials)) fail(f.name, "decode gave invalid UTF-8");
    if (stream(t, special) != t.decode(special)) fail(f.name, "streaming != decode (special)");

    // The input read as token ids (two bytes each).
    std::vector<int32_t> raw;
    for (std::size_t i = 0; i + 1 < input.size() && raw.size() < 256; i += 2) {
        const auto v = static_cast<uint16_t>(static_cast<unsigned char>(input[i]) |
                                             (static_cast<unsigned char>(input[i + 1]) << 8));
        raw.push_back(static_cast<int32_t>(v % static_cast<uint32_t>(t.vocab_size())));
    }
    const std::string raw_decoded = t.decode(raw);
    if (!valid_utf8(raw_decoded)) fail(f.name, "decode of raw ids gave invalid UTF-8");
    if (!valid_utf8(t.decode(raw, false))) fail(f.name, "decode (keep specials) invalid UTF-8");
    if (stream(t, raw) != raw_decoded) fail(f.name, "streaming != decode (raw ids)");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    try {
        const std::string clean = mtdesk::sanitize_utf8(input);
        if (!valid_utf8(clean)) fail("sanitize_utf8", "output is not valid UTF-8");
        if (mtdesk::sanitize_utf8(clean) != clean) fail("sanitize_utf8", "not idempotent");
        if (clean.size() < input.size()) fail("sanitize_utf8", "output shorter than input");
        for (const Fixture& f : fixtures())
            check(f, input, clean);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "unexpected exception: %s\n", e.what());
        std::abort();
    }
    return 0;
}
