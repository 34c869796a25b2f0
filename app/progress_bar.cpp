#include "progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace mtdesk::app {
namespace {

// Terminal columns of UTF-8 text, counting each code point as one column (good enough for a
// file name; wide CJK characters make the line a little longer than counted, hence the margin
// the caller keeps).
std::size_t columns_of(std::string_view s) {
    return static_cast<std::size_t>(std::count_if(
        s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The last `n` columns of `s` behind "…", cut at a code point boundary.
std::string tail(std::string_view s, std::size_t n) {
    if (columns_of(s) <= n) return std::string(s);
    if (n == 0) return {};
    std::size_t keep = n - 1, i = s.size();
    while (i > 0 && keep > 0) {
        --i;
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) --keep;
    }
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80)
        ++i;
    return "\u2026" + std::string(s.substr(i));
}

}  // namespace

std::string format_duration(double seconds) {
    const long s = seconds > 0 && std::isfinite(seconds) ? static_cast<long>(seconds) : 0;
    char buf[32];
    if (s >= 3600)
        std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
    return buf;
}

std::string progress_line(std::string_view name, std::size_t done, std::size_t total,
                          double elapsed_seconds, int width) {
    done = std::min(done, total);
    std::string stats = "  " + std::to_string(done) + "/" + std::to_string(total) + " segments  " +
                        format_duration(elapsed_seconds) + " elapsed";
    if (done > 0 && done < total)
        stats += ", ~" +
                 format_duration(elapsed_seconds / static_cast<double>(done) *
                                 static_cast<double>(total - done)) +
                 " left";
    // The stats always; then up to 16 columns of the name; then the bar (20 cells, fewer when
    // narrow, none below 5); then the rest of the name.
    const std::size_t w = static_cast<std::size_t>(std::max(width, 20));
    const std::size_t avail = w - std::min(w, columns_of(stats));
    const std::size_t name_min = std::min<std::size_t>(columns_of(name), 16);
    std::size_t cells = avail > name_min + 4 ? std::min<std::size_t>(20, avail - name_min - 4) : 0;
    if (cells < 5) cells = 0;
    const std::size_t name_room = avail - (cells ? cells + 4 : 0);
    std::string line = tail(name, name_room);
    if (cells) {
        const std::size_t filled = total ? cells * done / total : cells;
        line += "  [" + std::string(filled, '#') + std::string(cells - filled, '.') + "]";
    }
    line += stats;
    return line;
}

ProgressBar::ProgressBar(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {}

void ProgressBar::start(std::string_view name, std::size_t total) {
    name_ = std::string(name);
    start_ = std::chrono::steady_clock::now();
    update(0, total);
}

void ProgressBar::update(std::size_t done, std::size_t total) {
    if (!terminal_) return;
    // One column spare: some terminals wrap when the last column is written.
    const std::string line = progress_line(name_, done, total, elapsed(), columns() - 1);
    std::fprintf(out_, "\r%s\x1b[K", line.c_str());
    std::fflush(out_);
    open_ = true;
}

void ProgressBar::finish() {
    if (!open_) return;
    std::fputs("\r\x1b[K", out_);
    std::fflush(out_);
    open_ = false;
}

double ProgressBar::elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

int ProgressBar::columns() const {
    winsize ws{};
    if (ioctl(fileno(out_), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

}  // namespace mtdesk::app
