#pragma once
// Progress of `mtdesk translate FILE...` on stderr: on a terminal one line per file, redrawn in
// place as segments are done and cleared when the file is done (the caller then prints its
// one-line result there); elsewhere (a pipe, a log file) nothing but the caller's result lines.
//
//   notes.md  [#########...........]  12/40 segments  0:05 elapsed, ~0:12 left

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

namespace mtdesk::app {

/// "0:05", "12:34", "1:02:03" for a duration in seconds (rounded down; negative counts as 0).
std::string format_duration(double seconds);

/// One progress line without its line end: the name (shortened from the left with "…" when
/// needed), a bar, "done/total segments", the elapsed time and, once something is done, an
/// estimate of the time left (elapsed / done × remaining). At most `width` columns, so that the
/// line never wraps (which would break redrawing): the name keeps up to 16 columns while the
/// bar shrinks (and goes below 5 cells), then the name is cut from the front.
std::string progress_line(std::string_view name, std::size_t done, std::size_t total,
                          double elapsed_seconds, int width = 80);

/// Draws one file's progress line on a terminal ("\r" + line + clear to the end of the line).
class ProgressBar {
  public:
    /// `out` is where lines go (stderr); `terminal` says whether it is a terminal (isatty):
    /// without one, update() draws nothing.
    ProgressBar(std::FILE* out, bool terminal);

    /// Starts a file: the clock starts at 0 and, on a terminal, the 0/total line is drawn.
    void start(std::string_view name, std::size_t total);
    /// Redraws the line with `done` of `total` segments (terminal only).
    void update(std::size_t done, std::size_t total);
    /// Clears the line, when one is drawn (before any other message is printed).
    void finish();
    /// Seconds since start().
    double elapsed() const;
    /// Whether lines are drawn (stderr is a terminal).
    bool terminal() const { return terminal_; }

  private:
    int columns() const;

    std::FILE* out_;
    bool terminal_;
    bool open_ = false;  // a line is drawn and waits for its end
    std::string name_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace mtdesk::app
