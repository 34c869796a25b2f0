// libFuzzer target: ModelConfig::from_json on arbitrary text. A config that is accepted must
// satisfy the invariants the engine relies on; anything rejected must be a FileError naming the
// file.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mtdesk/error.h"
#include "mtdesk/model/config.h"

namespace {

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const mtdesk::ModelConfig c = mtdesk::ModelConfig::from_json(text, "config.json");
        if (c.vocab_size <= 0 || c.hidden_size <= 0 || c.intermediate_size <= 0 ||
            c.num_layers <= 0 || c.num_heads <= 0 || c.num_kv_heads <= 0 || c.head_dim <= 0) {
            fail("non-positive size accepted");
        }
        if (c.num_heads % c.num_kv_heads != 0) fail("heads not a multiple of kv heads");
        if (c.head_dim % 2 != 0) fail("odd head_dim accepted");
        if (!(c.rms_norm_eps > 0) || !(c.rope_theta > 0)) fail("bad eps / theta accepted");
        if (c.parameter_count() <= 0) fail("parameter count");
        const auto inv = c.rope_inv_freq();
        if (inv.size() != static_cast<std::size_t>(c.head_dim / 2)) fail("inv_freq size");
        for (float f : inv) {
            if (!(f >= 0) || f != f) fail("inv_freq not a non-negative number");
        }
    } catch (const mtdesk::FileError& e) {
        if (std::string(e.what()).rfind("config.json: ", 0) != 0) fail("error does not name file");
    }
    return 0;
}
