#pragma once
// UTF-8 helpers shared by the tokenizers (private to the engine).

#include <cstddef>
#include <string>
#include <string_view>

namespace mtdesk::detail {

/// Length (1..3) of a trailing incomplete UTF-8 sequence of `bytes` that more bytes could still
/// complete; 0 when `bytes` ends on a character boundary or with bytes that can never be valid.
std::size_t utf8_incomplete_tail(std::string_view bytes) noexcept;

/// Decodes the code point at `pos` of valid UTF-8 `text` and advances `pos` past it.
char32_t utf8_next(std::string_view text, std::size_t& pos) noexcept;

/// Appends the UTF-8 encoding of `c` to `out`.
void utf8_append(std::string& out, char32_t c);

/// True when `text` is well-formed UTF-8.
bool utf8_valid(std::string_view text) noexcept;

}  // namespace mtdesk::detail
