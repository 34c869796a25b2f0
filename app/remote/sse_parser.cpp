#include "remote/sse_parser.h"

#include <algorithm>
#include <cctype>

#include "mtdesk/error.h"

namespace mtdesk::remote {

std::vector<SseEvent> SseParser::feed(std::string_view bytes) {
    std::vector<SseEvent> out;
    if (!started_) {
        // The BOM may itself arrive split: wait until three bytes (or a mismatch) are known.
        static constexpr std::string_view kBom = "\xEF\xBB\xBF";
        line_.append(bytes);
        if (line_.size() < kBom.size() && kBom.starts_with(line_)) return out;
        started_ = true;
        std::string all = std::move(line_);
        line_.clear();
        std::string_view rest = all;
        if (rest.starts_with(kBom)) rest.remove_prefix(kBom.size());
        std::vector<SseEvent> events = feed(rest);
        return events;
    }
    std::size_t i = 0;
    if (after_cr_ && !bytes.empty() && bytes.front() == '\n') i = 1;  // the LF of a CRLF
    after_cr_ = false;
    while (i < bytes.size()) {
        const std::size_t end = bytes.find_first_of("\r\n", i);
        if (end == std::string_view::npos) {
            line_.append(bytes.substr(i));
            if (line_.size() > max_line_)
                throw Error("the server sent an event-stream line longer than " +
                            std::to_string(max_line_) + " bytes");
            break;
        }
        std::string_view text = bytes.substr(i, end - i);
        if (!line_.empty()) {
            line_.append(text);
            line(line_, out);
            line_.clear();
        } else {
            line(text, out);
        }
        i = end + 1;
        if (bytes[end] == '\r') {
            if (i < bytes.size()) {
                if (bytes[i] == '\n') ++i;
            } else {
                after_cr_ = true;  // the LF may start the next piece
            }
        }
    }
    return out;
}

std::vector<SseEvent> SseParser::finish() {
    std::vector<SseEvent> out;
    line_.clear();  // a partial line: the stream was cut in the middle of it
    dispatch(out);
    return out;
}

void SseParser::line(std::string_view text, std::vector<SseEvent>& out) {
    if (text.empty()) {
        dispatch(out);
        return;
    }
    if (text.front() == ':') return;  // a comment (servers send them as keep-alives)
    std::string_view field = text, value;
    if (const auto colon = text.find(':'); colon != std::string_view::npos) {
        field = text.substr(0, colon);
        value = text.substr(colon + 1);
        if (value.starts_with(' ')) value.remove_prefix(1);
    }
    if (field == "data") {
        data_.append(value).push_back('\n');
        has_data_ = true;
    } else if (field == "event") {
        type_ = value;
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos) last_id_ = value;
    } else if (field == "retry") {
        if (!value.empty() && value.size() < 12 &&
            std::all_of(value.begin(), value.end(),
                        [](unsigned char c) { return std::isdigit(c); }))
            retry_ms_ = std::stol(std::string(value));
    }
}

void SseParser::dispatch(std::vector<SseEvent>& out) {
    if (has_data_) {
        SseEvent e;
        if (!type_.empty()) e.type = type_;
        e.data = std::move(data_);
        e.data.pop_back();  // the "\n" after the last data line
        e.id = last_id_;
        out.push_back(std::move(e));
    }
    type_.clear();
    data_.clear();
    has_data_ = false;
}

}  // namespace mtdesk::remote
