#include "stdin_reader.h"

#include <QByteArray>
#include <QString>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "documents/document.h"
#include "mtdesk/error.h"
#include "mtdesk/tokenizer/tokenizer.h"

namespace mtdesk::app {
namespace {

constexpr std::size_t kReadBytes = 64 * 1024;  // a pipe's whole buffer in one read

bool is_utf8(std::string_view bytes) {
    return sanitize_utf8(bytes) == bytes;
}

// Bytes at the end of `bytes` that start a UTF-8 character the read cut off (0 to 3).
std::size_t incomplete_tail(std::string_view bytes) {
    for (std::size_t back = 1; back <= 3 && back <= bytes.size(); ++back) {
        const auto c = static_cast<unsigned char>(bytes[bytes.size() - back]);
        if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
        const std::size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        return length > back ? back : 0;
    }
    return 0;
}

}  // namespace

StdinReader::StdinReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
    // A file is all there already: decoded whole, its encoding found from all of it.
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) mode_ = Mode::Whole;
}

bool StdinReader::read_once() {
    char buffer[kReadBytes];
    ssize_t n = 0;
    do {
        n = ::read(fd_, buffer, sizeof buffer);
    } while (n < 0 && errno == EINTR);
    if (n < 0) throw FileError(name_, std::string("cannot be read: ") + std::strerror(errno));
    if (n == 0) ended_ = true;
    pending_.append(buffer, static_cast<std::size_t>(n));
    return n > 0;
}

void StdinReader::decide() {
    if (pending_.starts_with("\xEF\xBB\xBF")) {
        pending_.erase(0, 3);  // a UTF-8 byte-order mark says UTF-8; it is not text
        mode_ = Mode::Stream;
        return;
    }
    const bool utf16 = pending_.starts_with("\xFF\xFE") || pending_.starts_with("\xFE\xFF");
    const std::string_view head(pending_.data(), pending_.size() - incomplete_tail(pending_));
    const bool utf8 = !utf16 && pending_.find('\0') == std::string::npos && is_utf8(head);
    mode_ = utf8 ? Mode::Stream : Mode::Whole;
}

std::optional<std::string> StdinReader::read_lines() {
    if (done_) return std::nullopt;
    if (mode_ == Mode::Whole) {
        while (read_once()) {
        }
        done_ = true;
        const documents::DecodedText decoded = documents::decode_text(
            QByteArray::fromRawData(pending_.data(), static_cast<qsizetype>(pending_.size())),
            QString::fromStdString(name_));
        pending_.clear();
        if (decoded.encoding != "UTF-8")
            std::fprintf(stderr, "mtdesk: %s: read as %s; the translation is written as UTF-8\n",
                         name_.c_str(), decoded.encoding.c_str());
        return decoded.text;
    }
    read_once();
    if (mode_ == Mode::Undecided) {
        // Two bytes could be half of a byte-order mark: decide on a line, four bytes, or all.
        if (!ended_ && pending_.size() < 4 && pending_.find('\n') == std::string::npos)
            return std::string();
        decide();
        if (mode_ == Mode::Whole) return read_lines();
    }
    const std::size_t newline = pending_.rfind('\n');
    std::size_t cut = newline == std::string::npos ? 0 : newline + 1;
    if (ended_) {
        cut = pending_.size();
        done_ = true;
        if (cut == 0) return std::nullopt;
    }
    std::string lines = pending_.substr(0, cut);
    pending_.erase(0, cut);
    return valid_utf8(std::move(lines));
}

std::optional<std::string> StdinReader::next_lines() {
    for (;;) {
        std::optional<std::string> lines = read_lines();
        if (!lines || !lines->empty()) return lines;
    }
}

std::string StdinReader::valid_utf8(std::string bytes) {
    if (is_utf8(bytes)) {
        for (char c : bytes)
            lines_ += c == '\n';
        return bytes;
    }
    std::string out;
    out.reserve(bytes.size());
    std::size_t start = 0;
    while (start < bytes.size()) {
        const std::size_t newline = bytes.find('\n', start);
        const std::size_t end = newline == std::string::npos ? bytes.size() : newline + 1;
        const std::string_view line(bytes.data() + start, end - start);
        ++lines_;
        start = end;
        if (is_utf8(line)) {
            out += line;
            continue;
        }
        try {
            const documents::DecodedText decoded =
                documents::decode_text(QByteArray(line.data(), static_cast<qsizetype>(line.size())),
                                       QString::fromStdString(name_));
            out += decoded.text;
            std::fprintf(stderr, "mtdesk: %s: line %zu is not UTF-8; read as %s\n", name_.c_str(),
                         lines_, decoded.encoding.c_str());
        } catch (const FileError&) {
            out += sanitize_utf8(line);
            std::fprintf(stderr,
                         "mtdesk: %s: line %zu is not valid UTF-8; its invalid bytes are read as "
                         "U+FFFD\n",
                         name_.c_str(), lines_);
        }
    }
    return out;
}

bool strip_terminal_escapes(std::string& text) {
    if (text.find('\x1b') == std::string::npos) return false;
    std::string out;
    out.reserve(text.size());
    const std::size_t n = text.size();
    std::size_t i = 0;
    while (i < n) {
        if (text[i] != '\x1b') {
            out += text[i++];
            continue;
        }
        if (i + 1 == n) break;  // a lone ESC at the end: dropped
        const char kind = text[i + 1];
        std::size_t j = i + 2;
        if (kind == '[') {
            // CSI: parameter bytes 0x30-0x3F, intermediate bytes 0x20-0x2F, one final 0x40-0x7E.
            while (j < n && text[j] >= 0x20 && text[j] <= 0x3F)
                ++j;
            if (j < n && text[j] >= 0x40 && text[j] <= 0x7E) ++j;
        } else if (kind == ']' || kind == 'P' || kind == '_' || kind == '^') {
            // OSC, DCS, APC, PM: a string ended by BEL or ST (ESC \), or by the line's end.
            while (j < n && text[j] != '\x07' && text[j] != '\n' &&
                   !(text[j] == '\x1b' && j + 1 < n && text[j + 1] == '\\'))
                ++j;
            if (j < n && text[j] == '\x07')
                ++j;
            else if (j < n && text[j] == '\x1b')
                j += 2;
        } else if (kind >= 0x20 && kind <= 0x2F) {
            // nF (character sets, "ESC ( B"): intermediate bytes, then one final byte.
            while (j < n && text[j] >= 0x20 && text[j] <= 0x2F)
                ++j;
            if (j < n && text[j] >= 0x30 && text[j] <= 0x7E) ++j;
        } else if (kind >= 0x30 && kind <= 0x7E) {
            j = i + 2;  // two bytes: ESC 7, ESC M, ESC c...
        } else {
            j = i + 1;  // a lone ESC: dropped
        }
        i = j;
    }
    text = std::move(out);
    return true;
}

}  // namespace mtdesk::app
