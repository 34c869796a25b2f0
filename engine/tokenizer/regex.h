#pragma once
// A compiled PCRE2 pattern for pre-tokenisation (private to the engine).
//
// Patterns are compiled with UTF and UCP (Unicode properties for \w, \d, \s, \p{..}) and JIT
// compiled when the library supports it. `\s` and `\S` are rewritten to Unicode White_Space
// (what Rust's regex / fancy_regex and Oniguruma mean by them: PCRE2's \s misses U+0085).

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mtdesk::detail {

class Regex {
  public:
    /// Compiles `pattern`; a syntax error throws FileError(`file`, ...). With `literal` the
    /// pattern is a plain string to find.
    Regex(std::string_view pattern, const std::string& file, bool literal = false);
    ~Regex();
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;

    /// The non-overlapping matches in `subject` (valid UTF-8), as [begin, end) byte offsets,
    /// iterated like Rust's regex / fancy_regex / onig find_iter: after an empty match the next
    /// search starts one character further, and an empty match right after a match is skipped.
    /// Thread-safe. Throws Error when the match engine gives up (resource limits).
    std::vector<std::pair<std::size_t, std::size_t>> find_all(std::string_view subject) const;

    const std::string& pattern() const noexcept { return pattern_; }

  private:
    bool find(std::string_view subject, std::size_t start, std::size_t& match_begin,
              std::size_t& match_end) const;

    std::string pattern_;
    void* code_ = nullptr;  // pcre2_code*
};

/// Rewrites `\s` / `\S` of a Perl-style pattern into explicit Unicode White_Space classes.
std::string rewrite_whitespace_classes(std::string_view pattern);

}  // namespace mtdesk::detail
