#pragma once
// Server-sent events (the `text/event-stream` format of the WHATWG HTML standard, §9.2), as
// OpenAI-compatible servers stream chat completions: "data: {json}\n\n" per chunk, then
// "data: [DONE]\n\n". A pure parser: bytes in, events out, no I/O, so every framing case
// (chunks split anywhere, CRLF split across reads, comments, multi-line data) is unit-tested.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mtdesk::remote {

/// One dispatched event.
struct SseEvent {
    std::string type = "message";  ///< the "event:" field, "message" when absent
    std::string data;              ///< "data:" lines joined with "\n"
    std::string id;                ///< the last event id seen so far ("id:" field)
};

/// Incremental parser. Feed it the response body in whatever pieces the network delivers.
class SseParser {
  public:
    /// `max_line_bytes`: a line longer than this (a broken or hostile server) makes feed()
    /// throw mtdesk::Error rather than buffer without bound.
    explicit SseParser(std::size_t max_line_bytes = 8u << 20) : max_line_(max_line_bytes) {}

    /// Parses `bytes` and returns the events they complete, in order. Lines end with CRLF, LF
    /// or CR (a CR at the end of one piece and an LF at the start of the next are one line
    /// end); a blank line dispatches the event; lines starting with ':' are comments; a field
    /// value loses one leading space; unknown fields are ignored; an event without data is not
    /// dispatched. A UTF-8 byte order mark at the very start is skipped.
    std::vector<SseEvent> feed(std::string_view bytes);

    /// The stream ended. The standard drops an event whose blank line never came; servers that
    /// close right after their last "data:" line are common, so an event whose lines were all
    /// complete is dispatched here. A partial last line is dropped.
    std::vector<SseEvent> finish();

    /// The last "retry:" value (milliseconds), if any.
    std::optional<long> retry_ms() const { return retry_ms_; }
    /// Bytes of an unfinished line held back.
    std::size_t pending_bytes() const { return line_.size(); }

  private:
    void line(std::string_view text, std::vector<SseEvent>& out);
    void dispatch(std::vector<SseEvent>& out);

    std::size_t max_line_;
    std::string line_;       // the current line, not yet ended
    bool after_cr_ = false;  // the previous piece ended with CR: a leading LF belongs to it
    bool started_ = false;   // past the optional byte order mark
    std::string type_;       // of the event being built
    std::string data_;       // of the event being built, each line followed by "\n"
    bool has_data_ = false;  // a data field was seen since the last dispatch
    std::string last_id_;
    std::optional<long> retry_ms_;
};

}  // namespace mtdesk::remote
