#include "cpu/kv_cache_cpu.h"

#include <new>
#include <string>

#include "mtdesk/error.h"

namespace mtdesk::cpu {

CpuKvState::CpuKvState(int layers, int capacity, int kv_heads, int head_dim) : capacity_(capacity) {
    if (capacity < 1) {
        throw Error("KV cache capacity must be at least 1, got " + std::to_string(capacity));
    }
    const std::size_t per_layer = static_cast<std::size_t>(capacity) * kv_heads * head_dim;
    try {
        keys_.resize(layers);
        values_.resize(layers);
        for (int l = 0; l < layers; ++l) {
            keys_[l].resize(per_layer);
            values_[l].resize(per_layer);
        }
    } catch (const std::bad_alloc&) {
        throw Error("not enough memory for a KV cache of " + std::to_string(capacity) +
                    " positions (" + std::to_string(per_layer * 2 * layers * sizeof(float) >> 20) +
                    " MiB)");
    }
}

void CpuKvState::truncate(int n) {
    if (n < 0 || n > length_) {
        throw Error("KV cache truncate(" + std::to_string(n) + ") outside [0, " +
                    std::to_string(length_) + "]");
    }
    length_ = n;
}

}  // namespace mtdesk::cpu
