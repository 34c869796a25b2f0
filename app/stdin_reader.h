#pragma once
// stdin as text that arrives over time: `tail -f app.log | mtdesk translate --to de` translates
// each line when it comes, instead of when the input ends.

#include <cstddef>
#include <optional>
#include <string>

namespace mtdesk::app {

/// Reads a file descriptor (normally stdin) as UTF-8 text in whole lines, as they arrive.
///
/// How the input is decoded is decided once, from the first bytes read:
/// - a regular file, a UTF-16 byte-order mark, a NUL byte, or a first read that is not UTF-8
///   (an incomplete character at its end allowed): the input is read to its end and decoded
///   whole, as a .txt file is (documents::decode_text: uchardet for legacy encodings), with a
///   note on stderr when it was not UTF-8;
/// - otherwise (a pipe or a terminal giving UTF-8, with or without a byte-order mark, which
///   is dropped) lines are passed on as they arrive. A later line that is not UTF-8 is decoded
///   on its own (uchardet), or has its invalid bytes replaced by U+FFFD when that fails, with
///   a note on stderr naming the line.
/// Not thread-safe: one reader thread.
class StdinReader {
  public:
    /// `fd` stays owned by the caller; `name` ("stdin") is what messages call it.
    explicit StdinReader(int fd, std::string name = "stdin");

    /// The descriptor, for poll(2): read_lines() does not block when it is readable (POLLIN or
    /// POLLHUP).
    int fd() const noexcept { return fd_; }

    /// One read(2), which blocks until input comes: the whole lines it completed, each with its
    /// line end, as UTF-8 ("" when it completed none); at the end of the input, what is left
    /// (a last line without its end). Decoding whole input reads to the end here. nullopt
    /// once the input has ended and everything was returned. Throws mtdesk::FileError naming
    /// the input when it cannot be read, is binary, or cannot be decoded.
    std::optional<std::string> read_lines();

    /// read_lines() until it returns text or nullopt: blocks until at least one whole line (or
    /// the end of the input).
    std::optional<std::string> next_lines();

    /// Whether lines are passed on as they arrive (false until decided, and for input decoded
    /// whole).
    bool streaming() const noexcept { return mode_ == Mode::Stream; }

  private:
    enum class Mode { Undecided, Stream, Whole };

    /// Appends one read(2) to pending_; false at the end of the input.
    bool read_once();
    /// Chooses the mode from pending_ (the first bytes read) and whether the input ended.
    void decide();
    /// The whole lines of `bytes` as UTF-8, each line that is not UTF-8 decoded on its own.
    std::string valid_utf8(std::string bytes);

    int fd_;
    std::string name_;
    Mode mode_ = Mode::Undecided;
    std::string pending_;    ///< bytes read and not yet returned
    bool ended_ = false;     ///< read(2) returned 0
    bool done_ = false;      ///< everything returned
    std::size_t lines_ = 0;  ///< lines returned so far, for the line numbers of notes
};

/// Removes terminal escape sequences (ECMA-48: CSI such as colours "\x1b[31m"; OSC such as
/// titles and links "\x1b]8;;URL\x07", and DCS, APC, PM strings; character set designations
/// "\x1b(B"; two-byte ESC sequences) from `text`, which a model would otherwise translate as
/// text. Returns whether any were found.
bool strip_terminal_escapes(std::string& text);

}  // namespace mtdesk::app
