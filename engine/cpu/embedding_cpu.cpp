// Token embedding lookup.

#include <cstring>
#include <string>

#include "cpu/ops_cpu.h"
#include "mtdesk/error.h"

namespace mtdesk::cpu {

void embedding(const float* table, int64_t vocab, int64_t hidden, std::span<const int32_t> ids,
               float* out) {
    for (int32_t id : ids) {
        if (id < 0 || id >= vocab) {
            throw Error("token id " + std::to_string(id) + " outside the vocabulary [0, " +
                        std::to_string(vocab) + ")");
        }
    }
    for (std::size_t t = 0; t < ids.size(); ++t) {
        std::memcpy(out + static_cast<int64_t>(t) * hidden, table + ids[t] * hidden,
                    sizeof(float) * hidden);
    }
}

}  // namespace mtdesk::cpu
