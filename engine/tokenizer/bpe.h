#pragma once
// The byte-pair merge loop shared by the BPE tokenizers (private to the engine).

#include <cstdint>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

namespace mtdesk::detail {

/// One symbol of a word being merged: a token id and the byte range of the word it covers.
struct BpeSymbol {
    int32_t id;
    uint32_t begin;
    uint32_t end;
};

/// Merges adjacent symbols of `symbols` in place: always the pair of lowest rank, the leftmost
/// one among equal ranks, until no adjacent pair has a rank. This is the order of tiktoken's
/// byte_pair_merge and of tokenizers' Word::merge_all; a heap with lazily dropped stale entries
/// makes it O(n log n) instead of their O(n^2) on long words.
///
/// `pair_rank(left, right)` returns std::optional<std::pair<uint32_t rank, int32_t merged_id>>.
template <class PairRank>
void bpe_merge(std::vector<BpeSymbol>& symbols, PairRank&& pair_rank) {
    const std::size_t n = symbols.size();
    if (n < 2) return;
    struct Entry {
        uint32_t rank;
        uint32_t left;
        uint32_t right;
        uint32_t left_version;
        uint32_t right_version;
        int32_t merged_id;
    };
    struct Later {
        bool operator()(const Entry& a, const Entry& b) const noexcept {
            return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
        }
    };
    constexpr uint32_t kNone = UINT32_MAX;
    std::vector<uint32_t> prev(n);
    std::vector<uint32_t> next(n);
    std::vector<uint32_t> version(n, 0);
    std::vector<char> alive(n, 1);
    for (std::size_t i = 0; i < n; ++i) {
        prev[i] = i == 0 ? kNone : static_cast<uint32_t>(i - 1);
        next[i] = i + 1 == n ? kNone : static_cast<uint32_t>(i + 1);
    }
    std::vector<Entry> storage;
    storage.reserve(n);
    std::priority_queue<Entry, std::vector<Entry>, Later> heap(Later{}, std::move(storage));
    auto push = [&](uint32_t left) {
        const uint32_t right = next[left];
        if (right == kNone) return;
        const std::optional<std::pair<uint32_t, int32_t>> merge =
            pair_rank(symbols[left], symbols[right]);
        if (merge) {
            heap.push(
                Entry{merge->first, left, right, version[left], version[right], merge->second});
        }
    };
    for (std::size_t i = 0; i + 1 < n; ++i)
        push(static_cast<uint32_t>(i));

    while (!heap.empty()) {
        const Entry e = heap.top();
        heap.pop();
        if (!alive[e.left] || version[e.left] != e.left_version || next[e.left] != e.right ||
            version[e.right] != e.right_version) {
            continue;  // stale: one of the two symbols changed since the entry was made
        }
        BpeSymbol& left = symbols[e.left];
        left.id = e.merged_id;
        left.end = symbols[e.right].end;
        ++version[e.left];
        alive[e.right] = 0;
        ++version[e.right];
        next[e.left] = next[e.right];
        if (next[e.right] != kNone) prev[next[e.right]] = e.left;
        if (prev[e.left] != kNone) push(prev[e.left]);
        push(e.left);
    }

    std::size_t out = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (alive[i]) symbols[out++] = symbols[i];
    }
    symbols.resize(out);
}

}  // namespace mtdesk::detail
