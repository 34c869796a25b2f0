#include "documents/pattern.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <memory>
#include <string>

#include "mtdesk/error.h"

namespace mtdesk::app::documents {
namespace {

std::string pcre2_message(int code) {
    PCRE2_UCHAR buffer[256];
    if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0)
        return "PCRE2 error " + std::to_string(code);
    return reinterpret_cast<const char*>(buffer);
}

constexpr uint32_t kHeapLimitKiB = 256 * 1024;

struct MatchDataDeleter {
    void operator()(pcre2_match_data* d) const { pcre2_match_data_free(d); }
};

}  // namespace

bool PatternMatch::matched(int g) const {
    return g >= 0 && static_cast<std::size_t>(g) < groups_.size() &&
           groups_[static_cast<std::size_t>(g)].first != std::string_view::npos;
}

std::size_t PatternMatch::position(int g) const {
    return matched(g) ? groups_[static_cast<std::size_t>(g)].first : std::string_view::npos;
}

std::size_t PatternMatch::length(int g) const {
    if (!matched(g)) return 0;
    const auto& [b, e] = groups_[static_cast<std::size_t>(g)];
    return e - b;
}

std::string_view PatternMatch::str(int g) const {
    return matched(g) ? subject_.substr(position(g), length(g)) : std::string_view();
}

Pattern::Pattern(std::string_view pattern) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     0, &error, &offset, nullptr);
    if (!code)
        throw Error("invalid regular expression '" + std::string(pattern) +
                    "': " + pcre2_message(error) + " at offset " + std::to_string(offset));
    uint32_t jit = 0;
    if (pcre2_config(PCRE2_CONFIG_JIT, &jit) >= 0 && jit != 0)
        pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // the interpreter runs it otherwise
    code_ = code;
    // The interpreter's backtracking memory is bounded (PCRE2's default is 20 GB): a line that
    // needs more fails, named, instead of taking the machine's memory.
    pcre2_match_context* context = pcre2_match_context_create(nullptr);
    if (!context) {
        pcre2_code_free(code);
        throw Error("out of memory for regular expression matching");
    }
    pcre2_set_heap_limit(context, kHeapLimitKiB);
    context_ = context;
}

Pattern::~Pattern() {
    pcre2_match_context_free(static_cast<pcre2_match_context*>(context_));
    pcre2_code_free(static_cast<pcre2_code*>(code_));
}

std::optional<PatternMatch> Pattern::run(std::string_view subject, std::size_t start,
                                         bool whole) const {
    const auto* code = static_cast<const pcre2_code*>(code_);
    const std::unique_ptr<pcre2_match_data, MatchDataDeleter> data(
        pcre2_match_data_create_from_pattern(code, nullptr));
    if (!data) throw Error("out of memory for regular expression matching");
    static const char kEmpty[] = "";
    const auto* text = reinterpret_cast<PCRE2_SPTR>(subject.data() ? subject.data() : kEmpty);
    const uint32_t options = whole ? PCRE2_ANCHORED | PCRE2_ENDANCHORED : 0;
    auto* context = static_cast<pcre2_match_context*>(context_);
    int rc = pcre2_match(code, text, subject.size(), start, options, data.get(), context);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)  // the interpreter keeps its state on the heap
        rc = pcre2_match(code, text, subject.size(), start, options | PCRE2_NO_JIT, data.get(),
                         context);
    if (rc == PCRE2_ERROR_NOMATCH) return std::nullopt;
    if (rc < 0)
        throw Error("a " + std::to_string(subject.size()) +
                    "-byte line is too complex to parse: " + pcre2_message(rc));
    PatternMatch m;
    m.subject_ = subject;
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    const uint32_t pairs = pcre2_get_ovector_count(data.get());
    for (uint32_t g = 0; g < pairs; ++g) {
        const PCRE2_SIZE b = ovector[2 * g], e = ovector[2 * g + 1];
        if (b == PCRE2_UNSET)
            m.groups_.emplace_back(std::string_view::npos, std::string_view::npos);
        else
            m.groups_.emplace_back(b, e);
    }
    return m;
}

std::optional<PatternMatch> Pattern::match(std::string_view subject) const {
    return run(subject, 0, true);
}

std::optional<PatternMatch> Pattern::search(std::string_view subject, std::size_t start) const {
    if (start > subject.size()) return std::nullopt;
    return run(subject, start, false);
}

std::vector<PatternMatch> Pattern::find_all(std::string_view subject) const {
    std::vector<PatternMatch> out;
    std::size_t at = 0;
    while (std::optional<PatternMatch> m = search(subject, at)) {
        const std::size_t end = m->position(0) + m->length(0);
        at = m->length(0) > 0 ? end : end + 1;  // an empty match moves on by one byte
        out.push_back(std::move(*m));
    }
    return out;
}

}  // namespace mtdesk::app::documents
