#include "stdin_translation.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "cli_commands.h"
#include "mtdesk/error.h"
#include "stdin_reader.h"

namespace mtdesk::app {
namespace {

constexpr std::size_t kMinLinesAhead = 256;

// Woken by the engine's thread when a job ends; shared with the jobs' callbacks, which can
// outlive translate_stdin() (the engine runs them until it has cancelled its jobs).
class Wakeup {
  public:
    Wakeup() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
        if (fd_ < 0) throw Error(std::string("cannot create an eventfd: ") + std::strerror(errno));
    }
    ~Wakeup() { ::close(fd_); }
    Wakeup(const Wakeup&) = delete;
    Wakeup& operator=(const Wakeup&) = delete;
    int fd() const noexcept { return fd_; }
    void signal() const noexcept {
        const uint64_t one = 1;
        [[maybe_unused]] const ssize_t n = ::write(fd_, &one, sizeof one);
    }
    void clear() const noexcept {
        uint64_t count = 0;
        [[maybe_unused]] const ssize_t n = ::read(fd_, &count, sizeof count);
    }

  private:
    int fd_;
};

// One line read and not yet written: its kept parts, and its job once submitted.
struct PendingLine {
    std::size_t number = 0;  // 1-based, for notes
    std::string indent, body, trailing, eol;
    uint64_t job = 0;  // 0: a blank line, or not submitted yet
    std::shared_future<JobOutcome> outcome;
    std::vector<GlossaryEntry> terms;  // the glossary entries its source has
};

bool ready(const PendingLine& line) {
    return line.job == 0 ||
           line.outcome.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

// Cancels every job still in flight when translate_stdin() leaves early (stdout failed).
struct CancelInFlight {
    TranslationEngine& engine;
    std::deque<PendingLine>& lines;
    ~CancelInFlight() {
        for (const PendingLine& l : lines)
            if (l.job != 0) engine.cancel(l.job);
    }
};

}  // namespace

int translate_stdin(TranslationEngine& engine, const StdinTranslation& what) {
    StdinReader reader(STDIN_FILENO);
    auto wakeup = std::make_shared<Wakeup>();
    const std::size_t ahead =
        std::max(kMinLinesAhead, 4 * static_cast<std::size_t>(std::max(1, engine.max_in_flight())));
    const std::string from = what.request.source ? std::string(what.request.source->code) : "";
    const std::string to = what.request.target ? std::string(what.request.target->code) : "";
    // Lines in input order: `submitted` (each with its job, or blank) are followed by `waiting`
    // ones (read whole at once from a file, say), which go to the engine as the output advances.
    std::deque<PendingLine> submitted, waiting;
    CancelInFlight cancel_on_exit{engine, submitted};
    std::size_t lines_read = 0;
    bool input_ended = false, first_text = true, escapes_noted = false;
    int failed = 0;

    auto read_lines = [&](const std::string& text) {
        if (first_text && !text.empty() && what.on_first_text) {
            what.on_first_text(text);
            first_text = false;
        }
        for (const TextLine& l : split_lines(text)) {
            PendingLine line;
            line.number = ++lines_read;
            line.indent = l.indent;
            line.body = l.body;
            line.trailing = l.trailing;
            line.eol = l.eol;
            if (strip_terminal_escapes(line.body) && !escapes_noted) {
                std::fprintf(stderr,
                             "mtdesk: stdin: terminal escape sequences (colours) are removed "
                             "before translating, from line %zu on\n",
                             line.number);
                escapes_noted = true;
            }
            waiting.push_back(std::move(line));
        }
    };

    auto submit = [&](PendingLine& line) {
        if (line.body.empty()) return;
        TranslationJob job{what.request, what.options};
        job.request.text = std::move(line.body);
        if (what.glossary)
            job.request.glossary = what.glossary->matching_entries(job.request.text, from, to);
        line.terms = Glossary::entries_in(job.request.text, job.request.glossary);
        auto promise = std::make_shared<std::promise<JobOutcome>>();
        line.outcome = promise->get_future().share();
        JobCallbacks callbacks;
        callbacks.on_done = [promise, wakeup](const JobOutcome& o) {
            promise->set_value(o);
            wakeup->signal();
        };
        line.job = engine.submit(std::move(job), std::move(callbacks));
    };

    auto write_line = [&](const PendingLine& line) {
        std::string out = line.indent;
        if (line.job != 0) {
            const JobOutcome o = line.outcome.get();
            const std::string where = "stdin: line " + std::to_string(line.number);
            if (o.status == JobOutcome::Status::Done) {
                out += single_line(o.text);
                warn_missing_terms(where, Glossary::check(o.text, line.terms));
                if (o.reached_limit)
                    std::fprintf(stderr,
                                 "mtdesk: %s: the translation reached the token limit "
                                 "(--max-tokens, or 4 x the source's tokens + 32) and may be cut "
                                 "short\n",
                                 where.c_str());
            } else {
                std::fprintf(stderr, "mtdesk: %s: %s\n", where.c_str(), o.error.c_str());
                ++failed;
            }
        }
        out += line.trailing;
        out += line.eol;
        write_stdout(out);
    };

    for (;;) {
        while (!waiting.empty() && submitted.size() < ahead) {
            submit(waiting.front());
            submitted.push_back(std::move(waiting.front()));
            waiting.pop_front();
        }
        if (!submitted.empty() && ready(submitted.front())) {
            write_line(submitted.front());
            submitted.pop_front();
            continue;
        }
        if (input_ended && submitted.empty() && waiting.empty()) break;
        pollfd fds[2] = {{wakeup->fd(), POLLIN, 0}, {reader.fd(), POLLIN, 0}};
        const bool want_input = !input_ended && waiting.empty() && submitted.size() < ahead;
        if (::poll(fds, want_input ? 2 : 1, -1) < 0 && errno != EINTR)
            throw Error(std::string("poll: ") + std::strerror(errno));
        if (fds[0].revents) wakeup->clear();
        if (want_input && fds[1].revents) {
            const std::optional<std::string> text = reader.read_lines();
            if (text)
                read_lines(*text);
            else
                input_ended = true;
        }
    }
    return failed ? 1 : 0;
}

}  // namespace mtdesk::app
