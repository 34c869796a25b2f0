#include "documents/document.h"

#include <QFile>
#include <QFileInfo>
#include <QStringDecoder>

#include <uchardet.h>

#include <algorithm>

#include "documents/formats.h"
#include "documents/tagged.h"
#include "mtdesk/error.h"
#include "mtdesk/translate/prompt.h"

namespace mtdesk::app::documents {
namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f';
}

bool has_letter(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u >= 0x80 || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z');
    });
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
    return true;
}

// Length of a protected span starting at text[i] (code span, URL, link target, HTML tag), or 0.
std::size_t protected_span(std::string_view text, std::size_t i) {
    const char c = text[i];
    if (c == '`') {
        std::size_t run = 0;
        while (i + run < text.size() && text[i + run] == '`')
            ++run;
        const std::string fence(run, '`');
        const std::size_t close = text.find(fence, i + run);
        return close == std::string_view::npos ? run : close + run - i;
    }
    if ((c == '[' || (c == '!' && i + 1 < text.size() && text[i + 1] == '[')) &&
        text.find("](", i) != std::string_view::npos)
        return c == '[' ? 1 : 2;  // opening bracket of a link or image: "[text](url)"
    if (c == ']' && i + 1 < text.size() && text[i + 1] == '(') {
        const std::size_t close = text.find(')', i + 2);
        if (close != std::string_view::npos) return close + 1 - i;
    }
    if (c == '<' && i + 1 < text.size() &&
        (std::isalpha(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '/' ||
         text[i + 1] == '!')) {
        const std::size_t close = text.find('>', i + 1);
        if (close != std::string_view::npos) return close + 1 - i;
    }
    const std::string_view rest = text.substr(i);
    if ((i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]))) &&
        (starts_with_ci(rest, "http://") || starts_with_ci(rest, "https://") ||
         starts_with_ci(rest, "ftp://") || starts_with_ci(rest, "mailto:") ||
         starts_with_ci(rest, "www."))) {
        std::size_t n = 0;
        while (n < rest.size() && !is_space(rest[n]) && rest[n] != '<' && rest[n] != '>' &&
               rest[n] != '"' && rest[n] != ')')
            ++n;
        while (n > 0 && (rest[n - 1] == '.' || rest[n - 1] == ',' || rest[n - 1] == ';' ||
                         rest[n - 1] == ':' || rest[n - 1] == '!' || rest[n - 1] == '?'))
            --n;  // sentence punctuation after a URL is text
        return n;
    }
    return 0;
}

}  // namespace

void Document::add_literal(std::string_view text) {
    if (text.empty()) return;
    if (!skeleton.empty() && skeleton.back().segment < 0)
        skeleton.back().literal.append(text);
    else
        skeleton.push_back({std::string(text), -1});
}

void Document::set_tagged(std::size_t index) {
    if (tagged.size() <= index) tagged.resize(index + 1, false);
    tagged[index] = true;
}

void check_segment_limit(const Document& doc) {
    if (doc.segments.size() >= kMaxSegments)
        throw Error("has more than " + std::to_string(kMaxSegments) +
                    " segments (lines or sentences to translate); mtdesk translates at most " +
                    std::to_string(kMaxSegments) + " per document");
}

int Document::add_segment(std::string text) {
    check_segment_limit(*this);
    const int index = static_cast<int>(segments.size());
    segments.push_back(std::move(text));
    skeleton.push_back({{}, index});
    return index;
}

void Document::add_trimmed(std::string_view text, bool need_letter) {
    std::size_t b = 0, e = text.size();
    while (b < e && is_space(text[b]))
        ++b;
    while (e > b && is_space(text[e - 1]))
        --e;
    if (b == e || (need_letter && !has_letter(text.substr(b, e - b)))) {
        add_literal(text);
        return;
    }
    add_literal(text.substr(0, b));
    add_segment(std::string(text.substr(b, e - b)));
    add_literal(text.substr(e));
}

void Document::add_inline(std::string_view text) {
    std::size_t start = 0, i = 0;
    while (i < text.size()) {
        const std::size_t n = protected_span(text, i);
        if (n == 0) {
            ++i;
            continue;
        }
        add_trimmed(text.substr(start, i - start), true);
        add_literal(text.substr(i, n));
        i += n;
        start = i;
    }
    add_trimmed(text.substr(start), true);
}

void check_translation_count(const Document& doc, const std::vector<std::string>& translations) {
    if (translations.size() != doc.segments.size())
        throw Error("document has " + std::to_string(doc.segments.size()) + " segments but " +
                    std::to_string(translations.size()) + " translations were given");
}

std::string assemble(const Document& doc, const std::vector<std::string>& translations) {
    check_translation_count(doc, translations);
    std::string out;
    for (const Piece& p : doc.skeleton) {
        if (p.segment < 0) {
            out += p.literal;
            continue;
        }
        const std::string& t = translations[static_cast<std::size_t>(p.segment)];
        // Keep the line structure: a one-line segment stays one line.
        const bool one_line =
            doc.segments[static_cast<std::size_t>(p.segment)].find('\n') == std::string::npos;
        out += one_line ? single_line(t) : t;
    }
    return out;
}

QByteArray DocumentFormat::write(const Document& doc,
                                 const std::vector<std::string>& translations) const {
    return QByteArray::fromStdString(assemble(doc, translations));
}

namespace {
const std::vector<const DocumentFormat*>& registry() {
    static const std::vector<const DocumentFormat*> formats = {
        &text_format(), &markdown_format(), &srt_format(), &vtt_format(), &po_format(),
        &html_format(), &docx_format(),     &ts_format(),  &pdf_format()};
    return formats;
}
}  // namespace

const DocumentFormat* find_format(const QString& path) {
    const std::string ext = QFileInfo(path).suffix().toLower().toStdString();
    if (ext.empty()) return nullptr;
    for (const DocumentFormat* f : registry())
        for (const std::string& e : f->extensions())
            if (e == ext) return f;
    return nullptr;
}

std::vector<std::string> supported_extensions() {
    std::vector<std::string> out;
    for (const DocumentFormat* f : registry())
        for (const std::string& e : f->extensions())
            out.push_back(e);
    return out;
}

std::string detection_sample(const Document& doc) {
    constexpr std::size_t kBytes = 16 * 1024;  // plenty for CLD2, cheap for long documents
    std::string sample;
    for (const std::string& s : doc.segments) {
        if (sample.size() >= kBytes) break;
        sample.append(s).append("\n");
    }
    return sample;
}

const DocumentFormat& format_for(const QString& path) {
    if (const DocumentFormat* f = find_format(path)) return *f;
    std::string list;
    for (const std::string& e : supported_extensions())
        list += (list.empty() ? "." : ", .") + e;
    throw FileError(path.toStdString(), "unsupported document type (supported: " + list + ")");
}

Document read_document(const QString& path, const DocumentFormat** format) {
    const DocumentFormat& f = format_for(path);
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw FileError(path.toStdString(), "cannot open: " + file.errorString().toStdString());
    const auto mib = [](qint64 bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20); };
    if (file.size() > f.max_file_size())
        throw FileError(path.toStdString(), "is " + mib(file.size()) + " MiB; mtdesk reads ." +
                                                QFileInfo(path).suffix().toLower().toStdString() +
                                                " documents of at most " + mib(f.max_file_size()) +
                                                " MiB");
    const QByteArray bytes = file.readAll();
    if (file.error() != QFileDevice::NoError)
        throw FileError(path.toStdString(), "cannot read: " + file.errorString().toStdString());
    if (format) *format = &f;
    try {
        return f.read(bytes, path);
    } catch (const FileError&) {
        throw;
    } catch (const Error& e) {  // a limit reached while parsing: a problem of this file
        throw FileError(path.toStdString(), e.what());
    }
}

std::vector<std::string> translate_segments(
    const Document& doc, const std::function<std::string(const std::string&)>& translate,
    const std::function<void(std::size_t, std::size_t)>& progress) {
    std::vector<std::string> out;
    out.reserve(doc.segments.size());
    for (std::size_t i = 0; i < doc.segments.size(); ++i) {
        const std::string& s = doc.segments[i];
        out.push_back(doc.is_tagged(i) ? translate_runs(s, translate) : translate(s));
        if (progress) progress(out.size(), doc.segments.size());
    }
    return out;
}

std::vector<std::string> translate_segments(
    const Document& doc, const FormattedTranslate& translate,
    const std::function<void(std::size_t, std::size_t)>& progress, bool formatted_prompt) {
    const auto plain = [&](const std::string& s) { return translate(s, false); };
    std::vector<std::string> out;
    out.reserve(doc.segments.size());
    for (std::size_t i = 0; i < doc.segments.size(); ++i) {
        const std::string& s = doc.segments[i];
        if (!doc.is_tagged(i)) {
            out.push_back(translate(s, false));
        } else if (!formatted_prompt) {
            out.push_back(translate_runs(s, plain));
        } else {
            std::string t = translate(s, true);
            // The model may drop or move a tag; the run-by-run translation cannot.
            out.push_back(usable_formatted(s, t) ? std::move(t) : translate_runs(s, plain));
        }
        if (progress) progress(out.size(), doc.segments.size());
    }
    return out;
}

std::vector<Line> split_lines(std::string_view text) {
    std::vector<Line> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        // A lone CR ends a line too: files from old Macs have nothing else.
        const std::size_t end = text.find_first_of("\r\n", start);
        if (end == std::string_view::npos) {
            lines.push_back({text.substr(start), {}});
            break;
        }
        const std::size_t next = text.compare(end, 2, "\r\n") == 0 ? end + 2 : end + 1;
        lines.push_back({text.substr(start, end - start), text.substr(end, next - end)});
        start = next;
    }
    return lines;
}

[[noreturn]] void fail_at(const QString& path, std::size_t line, const std::string& what) {
    throw FileError(path.toStdString(), "line " + std::to_string(line) + ": " + what);
}

DecodedText decode_text(const QByteArray& bytes, const QString& path) {
    DecodedText out;
    auto convert = [&](QStringDecoder& decoder, QByteArrayView data, const std::string& name) {
        const QString text = decoder.decode(data);
        if (decoder.hasError())
            throw FileError(path.toStdString(), "is not valid " + name + " text");
        out.text = text.toStdString();
        out.encoding = name;
        return out;
    };
    // A byte-order mark decides.
    if (bytes.startsWith("\xEF\xBB\xBF")) {
        out.had_bom = true;
        QStringDecoder d(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
        return convert(d, QByteArrayView(bytes).sliced(3), "UTF-8");
    }
    if (bytes.startsWith("\xFF\xFE") || bytes.startsWith("\xFE\xFF")) {
        out.had_bom = true;
        const bool le = bytes.startsWith("\xFF\xFE");
        QStringDecoder d(le ? QStringDecoder::Utf16LE : QStringDecoder::Utf16BE,
                         QStringDecoder::Flag::Stateless);
        return convert(d, QByteArrayView(bytes).sliced(2), le ? "UTF-16LE" : "UTF-16BE");
    }
    if (bytes.contains('\0'))
        throw FileError(path.toStdString(), "is a binary file, not text (or UTF-16 without BOM)");
    {
        QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
        (void)QString(utf8.decode(bytes));
        if (!utf8.hasError()) {
            out.text = bytes.toStdString();
            out.encoding = "UTF-8";
            return out;
        }
    }
    std::string charset;
    {
        uchardet_t detector = uchardet_new();
        const int rc = uchardet_handle_data(detector, bytes.constData(),
                                            static_cast<std::size_t>(bytes.size()));
        uchardet_data_end(detector);
        if (rc == 0 && uchardet_get_charset(detector)) charset = uchardet_get_charset(detector);
        uchardet_delete(detector);
    }
    if (charset.empty() || charset == "ASCII" || charset == "UTF-8")
        throw FileError(path.toStdString(),
                        "cannot decode the text: it is not UTF-8 and its encoding was not "
                        "recognised");
    QStringDecoder d(charset.c_str(), QStringDecoder::Flag::Stateless);
    if (!d.isValid())
        throw FileError(path.toStdString(),
                        "text encoding " + charset + " is not supported by this system");
    return convert(d, QByteArrayView(bytes), charset);
}

}  // namespace mtdesk::app::documents
