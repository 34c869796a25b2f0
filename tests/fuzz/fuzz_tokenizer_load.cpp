// libFuzzer target: loading tokenizer files. The first input byte picks the file the rest of the
// input becomes (hy.tiktoken, its tokenizer_config.json next to a valid hy.tiktoken, or
// tokenizer.json); it is written to a scratch directory and loaded with load_tokenizer. A load
// either succeeds or throws FileError (UnsupportedError included) naming the file; a loaded
// tokenizer then encodes and decodes a sample text. Nothing may crash, hang or throw anything
// else.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/tokenizer/tokenizer.h"

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const char* what, const char* detail = "") {
    std::fprintf(stderr, "invariant violated: %s %s\n", what, detail);
    std::abort();
}

const fs::path& scratch() {
    static const fs::path dir = [] {
        const fs::path d =
            fs::temp_directory_path() / ("mtdesk-fuzz-tokenizer-" + std::to_string(::getpid()));
        fs::create_directories(d);
        return d;
    }();
    return dir;
}

void write(const fs::path& path, std::string_view content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

std::string byte_ranks() {
    static const char* alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (int b = 0; b < 256; ++b) {
        out += alphabet[b >> 2];
        out += alphabet[(b & 3) << 4];
        out += "== " + std::to_string(b) + "\n";
    }
    return out;
}

constexpr std::string_view kSample =
    "Hello, world! <|eos|><|im_end|> 你好，世界\n\n  x \xF0\x9F\x98\x80 it's 123 \xC3\xA9";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string_view content(reinterpret_cast<const char*>(data) + 1, size - 1);
    const int mode = data[0] % 3;
    const fs::path dir = scratch();
    std::error_code ec;
    for (const char* name : {"hy.tiktoken", "tokenizer_config.json", "tokenizer.json"}) {
        fs::remove(dir / name, ec);
    }
    const char* file = nullptr;
    switch (mode) {
        case 0:
            file = "hy.tiktoken";
            write(dir / file, content);
            break;
        case 1:
            file = "tokenizer_config.json";
            write(dir / "hy.tiktoken", byte_ranks());
            write(dir / file, content);
            break;
        default:
            file = "tokenizer.json";
            write(dir / file, content);
            break;
    }
    std::unique_ptr<mtdesk::Tokenizer> tokenizer;
    try {
        tokenizer = mtdesk::load_tokenizer(dir, data[0] >= 128 ? 2000 : 0);
    } catch (const mtdesk::FileError& e) {
        if (e.file().find(file) == std::string::npos) fail("error names another file:", e.what());
        return 0;
    } catch (const std::exception& e) {
        fail("load threw something else than FileError:", e.what());
    }
    try {
        for (const bool special : {false, true}) {
            const std::vector<int32_t> ids = tokenizer->encode(kSample, special);
            for (const int32_t id : ids) {
                if (id < 0 || id >= tokenizer->vocab_size()) fail("id outside the vocabulary");
            }
            const std::string text = tokenizer->decode(ids, false);
            if (mtdesk::sanitize_utf8(text) != text) fail("decode gave invalid UTF-8");
        }
        const int n = tokenizer->vocab_size();
        std::vector<int32_t> all;
        for (int32_t id = 0; id < n && id < 4096; ++id)
            all.push_back(id);
        (void)tokenizer->decode(all);
    } catch (const mtdesk::Error& e) {
        // A pre-tokenizer pattern from the file may exhaust the regex engine's limits; that is
        // reported, not a crash.
        if (std::string_view(e.what()).find("pre-tokenizer pattern") == std::string_view::npos) {
            fail("unexpected Error:", e.what());
        }
    } catch (const std::exception& e) {
        fail("unexpected exception:", e.what());
    }
    return 0;
}
