#include "tokenizer/token_trie.h"

#include <algorithm>

namespace mtdesk::detail {

void TokenTrie::insert(std::string_view text, int32_t value) {
    if (text.empty()) return;
    uint32_t node = 0;
    for (const char ch : text) {
        const auto byte = static_cast<unsigned char>(ch);
        auto& children = nodes_[node].children;
        auto it =
            std::lower_bound(children.begin(), children.end(), byte,
                             [](const auto& child, unsigned char b) { return child.first < b; });
        if (it != children.end() && it->first == byte) {
            node = it->second;
            continue;
        }
        const auto created = static_cast<uint32_t>(nodes_.size());
        children.insert(it, {byte, created});
        nodes_.emplace_back();
        node = created;
    }
    nodes_[node].terminal = true;
    nodes_[node].value = value;
    first_byte_[static_cast<unsigned char>(text.front())] = true;
}

std::size_t TokenTrie::longest_at(std::string_view text, std::size_t pos, int32_t& value) const {
    std::size_t best = 0;
    uint32_t node = 0;
    for (std::size_t i = pos; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        const auto& children = nodes_[node].children;
        auto it =
            std::lower_bound(children.begin(), children.end(), byte,
                             [](const auto& child, unsigned char b) { return child.first < b; });
        if (it == children.end() || it->first != byte) break;
        node = it->second;
        if (nodes_[node].terminal) {
            best = i + 1 - pos;
            value = nodes_[node].value;
        }
    }
    return best;
}

bool TokenTrie::find(std::string_view text, std::size_t from, std::size_t& begin,
                     std::size_t& length, int32_t& value) const {
    if (empty()) return false;
    for (std::size_t pos = from; pos < text.size(); ++pos) {
        if (!first_byte_[static_cast<unsigned char>(text[pos])]) continue;
        const std::size_t len = longest_at(text, pos, value);
        if (len > 0) {
            begin = pos;
            length = len;
            return true;
        }
    }
    return false;
}

}  // namespace mtdesk::detail
