#pragma once
// The CPU KV cache of one sequence: per layer, keys and values of every position so far.

#include <cstdint>
#include <vector>

#include "mtdesk/runtime/causal_lm.h"

namespace mtdesk::cpu {

/// Contiguous fp32 storage: for each layer, K and V of shape [capacity, kv_heads, head_dim]
/// (position-major, so the K/V projections of new tokens are written straight into rows
/// length() .. length() + n - 1). Allocated in full at construction.
class CpuKvState : public KvState {
  public:
    /// Throws Error when capacity < 1 or the allocation would not fit in memory.
    CpuKvState(int layers, int capacity, int kv_heads, int head_dim);

    int length() const noexcept override { return length_; }
    int capacity() const noexcept override { return capacity_; }
    /// Throws Error unless 0 <= n <= length().
    void truncate(int n) override;

    /// [capacity, kv_heads, head_dim] of layer `layer`.
    float* keys(int layer) noexcept { return keys_[layer].data(); }
    float* values(int layer) noexcept { return values_[layer].data(); }
    /// Marks `n` more positions as filled (after every layer has written them).
    void advance(int n) noexcept { length_ += n; }

  private:
    int capacity_ = 0;
    int length_ = 0;
    std::vector<std::vector<float>> keys_;
    std::vector<std::vector<float>> values_;
};

}  // namespace mtdesk::cpu
