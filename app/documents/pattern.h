#pragma once
// Regular expressions for the document formats, matched with PCRE2.
//
// std::regex (libstdc++) recurses once per character a repetition consumes, so a line of a
// few tens of kilobytes overflows the stack and crashes the program. PCRE2 keeps its
// backtracking state on the heap (and JIT-compiled patterns on a stack of their own), so lines
// of any length are safe. Patterns work on bytes, as std::regex did: the document text is
// UTF-8 and every pattern here is ASCII.

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace mtdesk::app::documents {

/// What a Pattern matched in a subject: the whole match (group 0) and the capture groups.
class PatternMatch {
  public:
    /// Whether group `g` took part in the match.
    bool matched(int g) const;
    /// Byte offset of group `g` in the subject (npos when it did not take part).
    std::size_t position(int g) const;
    /// Length of group `g` in bytes (0 when it did not take part).
    std::size_t length(int g) const;
    /// The text of group `g` (empty when it did not take part).
    std::string_view str(int g) const;

  private:
    friend class Pattern;
    std::string_view subject_;
    std::vector<std::pair<std::size_t, std::size_t>> groups_;  // [begin, end) or npos
};

/// A compiled PCRE2 pattern (Perl syntax). Thread-safe: one instance can be used by several
/// threads at once, so the formats keep theirs in function-local statics. Matching throws
/// mtdesk::Error when PCRE2 gives up (its match or memory limit).
class Pattern {
  public:
    /// Compiles `pattern`. A syntax error is a bug in mtdesk: throws mtdesk::Error.
    explicit Pattern(std::string_view pattern);
    ~Pattern();
    Pattern(const Pattern&) = delete;
    Pattern& operator=(const Pattern&) = delete;

    /// The match of the whole of `subject`, or nullopt.
    std::optional<PatternMatch> match(std::string_view subject) const;
    /// Whether the whole of `subject` matches.
    bool matches(std::string_view subject) const { return match(subject).has_value(); }
    /// The first match in `subject` that starts at `start` or later, or nullopt.
    std::optional<PatternMatch> search(std::string_view subject, std::size_t start = 0) const;
    /// Every non-overlapping match in `subject`, left to right.
    std::vector<PatternMatch> find_all(std::string_view subject) const;

  private:
    std::optional<PatternMatch> run(std::string_view subject, std::size_t start, bool whole) const;

    void* code_ = nullptr;     // pcre2_code*
    void* context_ = nullptr;  // pcre2_match_context*, read-only while matching
};

}  // namespace mtdesk::app::documents
