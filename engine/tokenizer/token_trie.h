#pragma once
// Finds special / added token text in a string, leftmost-longest (private to the engine).

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace mtdesk::detail {

class TokenTrie {
  public:
    /// Adds `text` (non-empty) with `value`; a second insert of the same text replaces the value.
    void insert(std::string_view text, int32_t value);
    bool empty() const noexcept { return nodes_.size() <= 1; }

    /// Length of the longest token that starts at `pos` of `text`, 0 if none; sets `value`.
    std::size_t longest_at(std::string_view text, std::size_t pos, int32_t& value) const;

    /// The leftmost-longest match at or after `from`: sets `begin`/`length`/`value`, false if none.
    bool find(std::string_view text, std::size_t from, std::size_t& begin, std::size_t& length,
              int32_t& value) const;

  private:
    struct Node {
        std::vector<std::pair<unsigned char, uint32_t>> children;  // sorted by byte
        int32_t value = -1;
        bool terminal = false;
    };
    std::vector<Node> nodes_{Node{}};
    bool first_byte_[256] = {};
};

}  // namespace mtdesk::detail
