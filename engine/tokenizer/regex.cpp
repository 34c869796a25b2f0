#include "tokenizer/regex.h"

#include <pcre2.h>

#include <fmt/format.h>

#include "mtdesk/error.h"

namespace mtdesk::detail {
namespace {

std::string pcre2_message(int code) {
    PCRE2_UCHAR buffer[256];
    if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0)
        return fmt::format("error {}", code);
    return std::string(reinterpret_cast<const char*>(buffer));
}

// Per-thread match state: match data with room for the whole match only (enough for any
// pattern: PCRE2 then reports 0 but fills in the match), and a JIT stack larger than the
// default 32 KiB so that long runs of one character class never hit its limit.
struct ThreadMatchState {
    pcre2_match_data* data = nullptr;
    pcre2_match_context* context = nullptr;
    pcre2_jit_stack* jit_stack = nullptr;

    ThreadMatchState() {
        data = pcre2_match_data_create(1, nullptr);
        context = pcre2_match_context_create(nullptr);
        jit_stack = pcre2_jit_stack_create(64 * 1024, 16 * 1024 * 1024, nullptr);
        if (context != nullptr && jit_stack != nullptr) {
            pcre2_jit_stack_assign(context, nullptr, jit_stack);
        }
    }
    ~ThreadMatchState() {
        pcre2_jit_stack_free(jit_stack);
        pcre2_match_context_free(context);
        pcre2_match_data_free(data);
    }
    ThreadMatchState(const ThreadMatchState&) = delete;
    ThreadMatchState& operator=(const ThreadMatchState&) = delete;
};

ThreadMatchState& thread_state() {
    thread_local ThreadMatchState state;
    if (state.data == nullptr) throw Error("out of memory for regular expression matching");
    return state;
}

std::size_t char_length(std::string_view text, std::size_t pos) {
    const auto b = static_cast<unsigned char>(text[pos]);
    std::size_t len = 1;
    if (b >= 0xF0) {
        len = 4;
    } else if (b >= 0xE0) {
        len = 3;
    } else if (b >= 0xC0) {
        len = 2;
    }
    return std::min(len, text.size() - pos);
}

}  // namespace

std::string rewrite_whitespace_classes(std::string_view pattern) {
    // Unicode White_Space: U+0009..U+000D, U+0085 and the separators (Z: Zs, Zl, Zp).
    static constexpr std::string_view kInner = "\\t-\\r\\x{85}\\p{Z}";
    std::string out;
    out.reserve(pattern.size() + 32);
    bool in_class = false;
    std::size_t i = 0;
    const std::size_t n = pattern.size();
    while (i < n) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < n) {
            const char d = pattern[i + 1];
            if (d == 's') {
                if (in_class) {
                    out.append(kInner);
                } else {
                    out.append("[").append(kInner).append("]");
                }
                i += 2;
                continue;
            }
            if (d == 'S' && !in_class) {
                out.append("[^").append(kInner).append("]");
                i += 2;
                continue;
            }
            if (d == 'Q') {  // \Q...\E: copied as is
                const std::size_t end = pattern.find("\\E", i + 2);
                const std::size_t stop = end == std::string_view::npos ? n : end + 2;
                out.append(pattern.substr(i, stop - i));
                i = stop;
                continue;
            }
            out.push_back(c);
            out.push_back(d);
            i += 2;
            continue;
        }
        if (in_class) {
            if (c == '[' && i + 1 < n && pattern[i + 1] == ':') {  // [:alpha:]
                const std::size_t end = pattern.find(":]", i + 2);
                if (end != std::string_view::npos) {
                    out.append(pattern.substr(i, end + 2 - i));
                    i = end + 2;
                    continue;
                }
            }
            if (c == ']') in_class = false;
            out.push_back(c);
            ++i;
            continue;
        }
        out.push_back(c);
        ++i;
        if (c == '[') {
            in_class = true;
            if (i < n && pattern[i] == '^') out.push_back(pattern[i++]);
            if (i < n && pattern[i] == ']') out.push_back(pattern[i++]);  // a literal ']'
        }
    }
    return out;
}

Regex::Regex(std::string_view pattern, const std::string& file, bool literal) : pattern_(pattern) {
    const std::string source = literal ? std::string(pattern) : rewrite_whitespace_classes(pattern);
    int error = 0;
    PCRE2_SIZE offset = 0;
    // PCRE2_LITERAL admits few other options; UCP means nothing for a literal anyway.
    const uint32_t options = literal ? (PCRE2_UTF | PCRE2_LITERAL) : (PCRE2_UTF | PCRE2_UCP);
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(),
                                     options, &error, &offset, nullptr);
    if (code == nullptr) {
        throw FileError(file, fmt::format("invalid regular expression '{}': {} at offset {}",
                                          pattern_, pcre2_message(error), offset));
    }
    uint32_t jit = 0;
    if (pcre2_config(PCRE2_CONFIG_JIT, &jit) >= 0 && jit != 0) {
        pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter on failure
    }
    code_ = code;
}

Regex::~Regex() {
    pcre2_code_free(static_cast<pcre2_code*>(code_));
}

bool Regex::find(std::string_view subject, std::size_t start, std::size_t& match_begin,
                 std::size_t& match_end) const {
    ThreadMatchState& state = thread_state();
    static const char kEmpty[] = "";
    const char* data = subject.data() != nullptr ? subject.data() : kEmpty;
    const int rc =
        pcre2_match(static_cast<const pcre2_code*>(code_), reinterpret_cast<PCRE2_SPTR>(data),
                    subject.size(), start, PCRE2_NO_UTF_CHECK, state.data, state.context);
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    if (rc < 0) {
        throw Error(fmt::format("pre-tokenizer pattern '{}' failed on a {}-byte text: {}", pattern_,
                                subject.size(), pcre2_message(rc)));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
    match_end = ovector[1];
    match_begin = std::min<std::size_t>(ovector[0], match_end);  // \K could put it after the end
    return true;
}

std::vector<std::pair<std::size_t, std::size_t>> Regex::find_all(std::string_view subject) const {
    std::vector<std::pair<std::size_t, std::size_t>> matches;
    const std::size_t n = subject.size();
    std::size_t pos = 0;
    bool have_last = false;
    std::size_t last_end = 0;
    while (pos <= n) {
        std::size_t begin = 0;
        std::size_t end = 0;
        if (!find(subject, pos, begin, end)) break;
        if (begin == end) {
            const std::size_t next = begin < n ? begin + char_length(subject, begin) : n + 1;
            const bool right_after_match = have_last && last_end == end;
            pos = next;
            if (right_after_match) continue;
        } else {
            pos = end;
        }
        matches.emplace_back(begin, end);
        have_last = true;
        last_end = end;
    }
    return matches;
}

}  // namespace mtdesk::detail
