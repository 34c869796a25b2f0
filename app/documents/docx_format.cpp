// Word .docx: the text of the paragraphs is translated; everything else stays as it was.
//
// The file is a zip archive (libzip). The parts with text are found through
// [Content_Types].xml: the main document, headers, footers, footnotes, endnotes and comments.
// In them, each paragraph (w:p, also those in tables, text boxes and notes) is cut into
// segments at the run content that is not text (tabs, breaks, drawings, fields, note
// references), so those stay where they are; most paragraphs are one segment. The text of a
// segment is spread over runs (w:r) with their formatting: runs with the same formatting (and
// the same hyperlink or other container) form one span; the span with the most text is plain
// text in the segment and every other span is an HY-MT1.5 format tag:
// "This is <s1>bold</s1> text." When the translation keeps the tags, each span gets its part
// of the translation, in its first text element (w:t), and the span's other text elements are
// emptied. Otherwise (or for a one-span segment) the whole translation goes into the first text
// element of the segment and the others are emptied: the formatting of the first run wins, the
// text is never lost. Runs, properties, tables, styles and every other part are untouched: only
// the content of w:t elements is rewritten in the XML text (pugixml finds them), with
// xml:space="preserve" added where the new text needs it. Zip members are written back in
// their order with their compression method and time; the members without changes are the
// same bytes.

#include <zip.h>

#include <pugixml.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>

#include "documents/formats.h"
#include "documents/tagged.h"
#include "mtdesk/error.h"
#include "mtdesk/translate/prompt.h"

namespace mtdesk::app::documents {
namespace {

// ---- zip

struct ZipEntry {
    std::string name;
    std::string data;
    zip_uint16_t method = ZIP_CM_DEFLATE;
    time_t mtime = 0;
    bool directory = false;
};

struct ZipDeleter {
    void operator()(zip_t* z) const { zip_discard(z); }
};

// Limits that keep a crafted archive (a "zip bomb") from taking all memory: a Word part is
// parsed into a tree several times its size, and every member is held while translating.
constexpr std::uint64_t kMaxUnpacked = std::uint64_t{1} << 30;  // the whole archive
constexpr std::uint64_t kMaxXmlPart = std::uint64_t{64} << 20;  // each XML member
constexpr std::uint64_t kMaxRatio = 100;  // real members (text, images) compress far less
constexpr std::uint64_t kRatioFrom = std::uint64_t{16} << 20;  // small members may, harmlessly

// "1 GiB", "67 MiB", "20 KiB" (rounded up).
std::string size_text(std::uint64_t bytes) {
    const int shift = bytes >= (std::uint64_t{1} << 30) ? 30 : bytes >= (1 << 20) ? 20 : 10;
    const char* unit = shift == 30 ? " GiB" : shift == 20 ? " MiB" : " KiB";
    return std::to_string((bytes + (std::uint64_t{1} << shift) - 1) >> shift) + unit;
}

std::vector<ZipEntry> read_zip(const QByteArray& bytes, const QString& path) {
    const std::string file = path.toStdString();
    if (bytes.isEmpty()) throw FileError(file, "is empty (0 bytes), not a Word document");
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* source = zip_source_buffer_create(
        bytes.constData(), static_cast<zip_uint64_t>(bytes.size()), 0, &error);
    if (!source) throw Error(std::string("libzip: ") + zip_error_strerror(&error));
    std::unique_ptr<zip_t, ZipDeleter> archive(zip_open_from_source(source, ZIP_RDONLY, &error));
    if (!archive) {
        zip_source_free(source);
        const std::string what = zip_error_strerror(&error);
        zip_error_fini(&error);
        throw FileError(file, "is not a Word document: not a readable zip archive (" + what + ")");
    }
    const zip_int64_t n = zip_get_num_entries(archive.get(), 0);
    if (n <= 0) throw FileError(file, "is not a Word document: the zip archive is empty");
    // Every member's size is checked before anything is unpacked. libzip never unpacks more
    // than the size a member declares (zip_fread stops there), so the declared sizes bound
    // what is read.
    std::vector<ZipEntry> entries;
    std::vector<zip_uint64_t> sizes;
    std::uint64_t total = 0;
    for (zip_int64_t i = 0; i < n; ++i) {
        zip_stat_t st;
        zip_stat_init(&st);
        if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0)
            throw FileError(file,
                            "damaged zip archive: " + std::string(zip_strerror(archive.get())));
        ZipEntry e;
        e.name = st.name ? st.name : "";
        e.method = static_cast<zip_uint16_t>(st.comp_method);
        e.mtime = st.mtime;
        e.directory = !e.name.empty() && e.name.back() == '/';
        if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
            throw FileError(file, "is encrypted (password protected); mtdesk cannot read it");
        total += st.size;
        if (total > kMaxUnpacked)
            throw FileError(file, "unpacks to more than " + size_text(kMaxUnpacked) +
                                      "; that is not a plain document");
        const bool xml = e.name.ends_with(".xml") || e.name.ends_with(".rels");
        if (xml && st.size > kMaxXmlPart)
            throw FileError(file, "zip member " + e.name + " unpacks to " + size_text(st.size) +
                                      "; mtdesk reads Word parts of at most " +
                                      size_text(kMaxXmlPart));
        if (st.size > kRatioFrom && st.size / std::max<zip_uint64_t>(st.comp_size, 1) > kMaxRatio)
            throw FileError(file, "zip member " + e.name + " unpacks to " + size_text(st.size) +
                                      " from " + size_text(st.comp_size) + ", more than " +
                                      std::to_string(kMaxRatio) +
                                      " times its packed size: not a plain document");
        entries.push_back(std::move(e));
        sizes.push_back(st.size);
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
        ZipEntry& e = entries[i];
        if (e.directory) continue;
        std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> f(
            zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0), zip_fclose);
        if (!f)
            throw FileError(
                file, "zip member " + e.name + " cannot be read: " + zip_strerror(archive.get()));
        e.data.resize(sizes[i]);
        const zip_int64_t got = zip_fread(f.get(), e.data.data(), sizes[i]);
        if (got < 0 || static_cast<zip_uint64_t>(got) != sizes[i])
            throw FileError(file, "zip member " + e.name + " is damaged");
    }
    return entries;
}

// The archive of `entries`, with the data of those in `replaced` (by index) replaced.
QByteArray write_zip(const std::vector<ZipEntry>& entries,
                     const std::map<std::size_t, std::string>& replaced) {
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
    if (!buffer) throw Error(std::string("libzip: ") + zip_error_strerror(&error));
    zip_source_keep(buffer);  // read back after zip_close
    std::unique_ptr<zip_source_t, void (*)(zip_source_t*)> keep(buffer, zip_source_free);
    zip_t* archive = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
    if (!archive) throw Error(std::string("libzip: ") + zip_error_strerror(&error));
    auto fail = [&](const std::string& what) {
        const std::string message =
            "cannot write the .docx: " + what + ": " + zip_strerror(archive);
        zip_discard(archive);
        throw Error(message);
    };
    for (std::size_t k = 0; k < entries.size(); ++k) {
        const ZipEntry& e = entries[k];
        const auto r = replaced.find(k);
        const std::string& bytes = r == replaced.end() ? e.data : r->second;
        zip_int64_t index = -1;
        if (e.directory) {
            index = zip_dir_add(archive, e.name.c_str(), ZIP_FL_ENC_UTF_8);
        } else {
            zip_source_t* data = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
            if (!data) fail(e.name);
            index = zip_file_add(archive, e.name.c_str(), data, ZIP_FL_ENC_UTF_8);
            if (index < 0) {
                zip_source_free(data);
                fail(e.name);
            }
            if (zip_set_file_compression(archive, static_cast<zip_uint64_t>(index),
                                         e.method == ZIP_CM_STORE ? ZIP_CM_STORE : ZIP_CM_DEFLATE,
                                         0) != 0)
                fail(e.name);
        }
        if (index < 0) fail(e.name);
        zip_file_set_mtime(archive, static_cast<zip_uint64_t>(index), e.mtime, 0);
    }
    if (zip_close(archive) != 0) fail("closing the archive");
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_source_open(buffer) != 0 || zip_source_stat(buffer, &st) != 0)
        throw Error("libzip: cannot read the archive back");
    QByteArray out(static_cast<qsizetype>(st.size), '\0');
    const zip_int64_t got = zip_source_read(buffer, out.data(), st.size);
    zip_source_close(buffer);
    if (got < 0 || static_cast<zip_uint64_t>(got) != st.size)
        throw Error("libzip: cannot read the archive back");
    return out;
}

// ---- WordprocessingML

constexpr const char* kWordNamespaces[] = {
    "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "http://purl.oclc.org/ooxml/wordprocessingml/main"};  // ISO 29500 strict

// Content types of the parts with translatable paragraphs.
bool text_part(std::string_view content_type) {
    for (const char* suffix :
         {".document.main+xml", ".template.main+xml", ".document.macroEnabled.main+xml",
          ".template.macroEnabledTemplate.main+xml", "wordprocessingml.header+xml",
          "wordprocessingml.footer+xml", "wordprocessingml.footnotes+xml",
          "wordprocessingml.endnotes+xml", "wordprocessingml.comments+xml"})
        if (content_type.ends_with(suffix)) return true;
    return false;
}

// A w:t element in the part's text.
struct TextNode {
    std::size_t begin = 0;        // '<'
    std::size_t tag_end = 0;      // after the start tag
    std::size_t content_end = 0;  // the end tag's '<' (== tag_end when self-closing)
    std::size_t end = 0;          // after the element
    bool preserve = false;        // has xml:space="preserve"
    std::string text;             // its text, decoded
};

struct Span {
    int tag = 0;                     // 0: plain text of the segment; N: <sN>
    std::vector<std::size_t> nodes;  // into Part::nodes
};

struct Stretch {
    int segment = -1;
    bool tagged = false;
    std::string lead, trail;  // whitespace outside the segment text
    std::vector<Span> spans;
};

struct Part {
    std::size_t entry = 0;  // into DocxState::entries
    std::string t_name;     // the qualified name of w:t ("w:t")
    std::vector<TextNode> nodes;
    std::vector<Stretch> stretches;
};

struct DocxState : FormatState {
    std::vector<ZipEntry> entries;
    std::vector<Part> parts;
};

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

std::size_t line_of(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    return 1 + static_cast<std::size_t>(std::count(
                   text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

class PartReader {
  public:
    PartReader(const std::string& xml, Part& part, Document& doc)
        : xml_(xml), part_(part), doc_(doc) {}

    // False when the part is not WordprocessingML (no w: namespace).
    bool run(const pugi::xml_document& x) {
        const pugi::xml_node root = x.document_element();
        bool found = false;
        for (const pugi::xml_attribute a : root.attributes()) {
            const std::string_view name = a.name();
            for (const char* ns : kWordNamespaces) {
                if (std::string_view(a.value()) != ns) continue;
                if (name == "xmlns") {
                    prefix_.clear();
                    found = true;
                } else if (name.starts_with("xmlns:")) {
                    prefix_ = std::string(name.substr(6)) + ":";
                    found = true;
                }
            }
            if (found) break;
        }
        if (!found) return false;
        part_.t_name = prefix_ + "t";
        traverse(root);
        return true;
    }

  private:
    struct Item {
        bool text = false;     // false: something that cuts the segment
        std::size_t node = 0;  // into part_.nodes
        std::string key;       // formatting and container of the run
    };

    bool is(const pugi::xml_node& n, std::string_view local) const {
        const std::string_view name = n.name();
        return name.size() == prefix_.size() + local.size() && name.starts_with(prefix_) &&
               name.substr(prefix_.size()) == local;
    }

    bool is_any(const pugi::xml_node& n, std::initializer_list<std::string_view> locals) const {
        for (const std::string_view l : locals)
            if (is(n, l)) return true;
        return false;
    }

    // Every paragraph under `root`, in document order, and then the paragraphs in text boxes
    // inside it. A loop, not recursion: elements can be nested many thousands deep.
    void traverse(const pugi::xml_node& root) {
        pugi::xml_node n = root.first_child();
        while (n) {
            if (n.type() == pugi::node_element) {
                if (is(n, "p")) paragraph(n);
                if (n.first_child()) {
                    n = n.first_child();
                    continue;
                }
            }
            while (n != root && !n.next_sibling())
                n = n.parent();
            if (n == root) break;
            n = n.next_sibling();
        }
    }

    void paragraph(const pugi::xml_node& p) {
        std::vector<Item> items;
        collect(p, p, items);
        std::size_t start = 0;
        for (std::size_t i = 0; i <= items.size(); ++i) {
            if (i < items.size() && items[i].text) continue;
            stretch(items, start, i);
            start = i + 1;
        }
    }

    // Runs and what cuts segments, in document order, under `node` (not in nested paragraphs,
    // deleted text or properties). Containers of runs are entered with a stack of our own, as
    // they can be nested many thousands deep.
    void collect(const pugi::xml_node& node, const pugi::xml_node& container,
                 std::vector<Item>& items) {
        struct Level {
            pugi::xml_node next;       // the next child to look at
            pugi::xml_node container;  // what the runs at this level are in
        };
        std::vector<Level> stack{{node.first_child(), container}};
        while (!stack.empty()) {
            const pugi::xml_node child = stack.back().next;
            if (!child) {
                stack.pop_back();
                continue;
            }
            stack.back().next = child.next_sibling();
            if (child.type() != pugi::node_element) continue;
            if (is(child, "p")) {
                items.push_back({});
            } else if (is(child, "r")) {
                run(child, stack.back().container, items);
            } else if (is_any(child, {"hyperlink", "ins", "moveTo", "smartTag", "fldSimple", "sdt",
                                      "sdtContent", "customXml", "dir", "bdo"})) {
                stack.push_back({child.first_child(), child});  // containers of runs
            } else if (is_any(child,
                              {"pPr", "rPr", "del", "moveFrom", "sdtPr", "sdtEndPr", "proofErr",
                               "bookmarkStart", "bookmarkEnd", "commentRangeStart",
                               "commentRangeEnd", "permStart", "permEnd"}) ||
                       std::string_view(child.name()).ends_with("RangeStart") ||
                       std::string_view(child.name()).ends_with("RangeEnd")) {
                continue;  // properties, deleted text, zero-width marks
            } else {
                items.push_back({});  // math, objects, anything unknown: keep it in its place
            }
        }
    }

    void run(const pugi::xml_node& r, const pugi::xml_node& container, std::vector<Item>& items) {
        std::string key =
            std::to_string(reinterpret_cast<std::uintptr_t>(container.internal_object()));
        if (const pugi::xml_node rpr = r.child((prefix_ + "rPr").c_str())) {
            struct Writer : pugi::xml_writer {
                std::string s;
                void write(const void* data, size_t size) override {
                    s.append(static_cast<const char*>(data), size);
                }
            } w;
            rpr.print(w, "", pugi::format_raw);
            key += w.s;
        }
        for (const pugi::xml_node c : r.children()) {
            if (c.type() != pugi::node_element || is(c, "rPr") || is(c, "softHyphen") ||
                is(c, "lastRenderedPageBreak"))
                continue;
            std::size_t node = 0;
            if (is(c, "t") && locate(c, node))
                items.push_back({true, node, key});
            else
                items.push_back({});  // tab, break, drawing, field character, note reference
        }
    }

    // Finds the w:t element `t` in the XML text. False when its content is not plain text.
    bool locate(const pugi::xml_node& t, std::size_t& index) {
        const std::ptrdiff_t off = t.offset_debug();
        const std::string name = t.name();
        if (off < 1 || xml_[static_cast<std::size_t>(off) - 1] != '<' ||
            xml_.compare(static_cast<std::size_t>(off), name.size(), name) != 0)
            return false;
        TextNode n;
        n.begin = static_cast<std::size_t>(off) - 1;
        const std::size_t gt = xml_.find('>', n.begin);
        if (gt == std::string::npos) return false;
        n.tag_end = gt + 1;
        const std::string start = xml_.substr(n.begin, n.tag_end - n.begin);
        n.preserve = start.find("xml:space=\"preserve\"") != std::string::npos ||
                     start.find("xml:space='preserve'") != std::string::npos;
        if (xml_[gt - 1] == '/') {
            n.content_end = n.end = n.tag_end;
        } else {
            n.content_end = xml_.find('<', n.tag_end);
            if (n.content_end == std::string::npos ||
                xml_.compare(n.content_end, 2 + name.size(), "</" + name) != 0)
                return false;  // a comment or CDATA inside: leave it alone
            const std::size_t close = xml_.find('>', n.content_end);
            if (close == std::string::npos) return false;
            n.end = close + 1;
        }
        n.text = t.text().get();
        index = part_.nodes.size();
        part_.nodes.push_back(std::move(n));
        return true;
    }

    void stretch(const std::vector<Item>& items, std::size_t b, std::size_t e) {
        if (b >= e) return;
        std::string all;
        for (std::size_t i = b; i < e; ++i)
            all += part_.nodes[items[i].node].text;
        if (!has_letters(all)) return;
        Stretch s;
        // Spans: neighbouring runs with the same key.
        std::vector<std::string> keys;
        std::vector<std::string> texts;
        for (std::size_t i = b; i < e; ++i) {
            if (s.spans.empty() || keys.back() != items[i].key) {
                s.spans.push_back({});
                keys.push_back(items[i].key);
                texts.emplace_back();
            }
            s.spans.back().nodes.push_back(items[i].node);
            texts.back() += part_.nodes[items[i].node].text;
        }
        // Outer whitespace stays where it is.
        std::string& first = texts.front();
        const std::size_t lead = std::min(first.size(), first.find_first_not_of(" \t\r\n"));
        s.lead = first.substr(0, lead);
        first.erase(0, lead);
        std::string& last = texts.back();
        const std::size_t keep = last.find_last_not_of(" \t\r\n");
        const std::size_t trail = keep == std::string::npos ? 0 : last.size() - keep - 1;
        s.trail = last.substr(last.size() - trail);
        last.erase(last.size() - trail);

        std::string text;
        if (s.spans.size() > 1 && !contains_tag(all)) {
            // The plain text: the formatting with the most characters.
            std::map<std::string, std::size_t> chars;
            for (std::size_t k = 0; k < keys.size(); ++k)
                chars[keys[k]] += texts[k].size();
            std::string base = keys.front();
            for (std::size_t k = 0; k < keys.size(); ++k)
                if (chars[keys[k]] > chars[base]) base = keys[k];
            int next = 1;
            for (std::size_t k = 0; k < s.spans.size(); ++k) {
                if (keys[k] == base) {
                    text += texts[k];
                } else {
                    s.spans[k].tag = next++;
                    text += open_tag(s.spans[k].tag) + texts[k] + close_tag(s.spans[k].tag);
                }
            }
            s.tagged = true;
        } else {
            for (const std::string& t : texts)
                text += t;
        }
        s.segment = doc_.add_segment(std::move(text));
        if (s.tagged) doc_.set_tagged(static_cast<std::size_t>(s.segment));
        part_.stretches.push_back(std::move(s));
    }

    const std::string& xml_;
    Part& part_;
    Document& doc_;
    std::string prefix_ = "w:";
};

std::string escape_xml(std::string_view s) {
    std::string out;
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '&')
            out += "&amp;";
        else if (c == '<')
            out += "&lt;";
        else if (c == '>')
            out += "&gt;";
        else if (u < 0x20 && c != '\t')
            continue;  // not allowed in XML 1.0 (and line breaks are w:br, not text)
        else
            out += c;
    }
    return out;
}

bool needs_preserve(std::string_view s) {
    return !s.empty() &&
           (is_space(s.front()) || is_space(s.back()) || s.find("  ") != std::string_view::npos ||
            s.find('\t') != std::string_view::npos);
}

// The new text of each node of `stretch`, from its translation.
void place(const Stretch& stretch, const std::string& source, const std::string& translation,
           std::map<std::size_t, std::string>& texts) {
    std::vector<std::string> span_text(stretch.spans.size());
    if (stretch.tagged && same_tags(source, translation)) {
        // Plain text between tags goes to the plain span in the same gap of the source; a gap
        // that had none in the source joins the tagged span before it (or after it, at the
        // start).
        std::vector<int> gap_span;  // per gap (before tag 1, after tag 1, ...): span or -1
        std::vector<std::size_t> tag_span;
        gap_span.push_back(-1);
        for (std::size_t k = 0; k < stretch.spans.size(); ++k) {
            if (stretch.spans[k].tag == 0) {
                gap_span.back() = static_cast<int>(k);
            } else {
                tag_span.push_back(k);
                gap_span.push_back(-1);
            }
        }
        std::size_t gap = 0;
        int inside = 0;
        for (const TagToken& t : tag_tokens(translation)) {
            if (t.kind == TagToken::Kind::Open) {
                inside = t.id;
            } else if (t.kind == TagToken::Kind::Close) {
                inside = 0;
                ++gap;
            } else if (inside) {
                span_text[tag_span[static_cast<std::size_t>(inside) - 1]] += t.text;
            } else if (gap_span[gap] >= 0) {
                span_text[static_cast<std::size_t>(gap_span[gap])] += t.text;
            } else {
                const std::size_t k = gap > 0 ? tag_span[gap - 1] : tag_span.front();
                span_text[k] = gap > 0 ? span_text[k] + t.text : t.text + span_text[k];
            }
        }
    } else {
        span_text.front() = stretch.tagged ? strip_tags(translation) : translation;
    }
    span_text.front() = stretch.lead + span_text.front();
    span_text.back() += stretch.trail;
    for (std::size_t k = 0; k < stretch.spans.size(); ++k)
        for (std::size_t n = 0; n < stretch.spans[k].nodes.size(); ++n)
            texts[stretch.spans[k].nodes[n]] = n == 0 ? span_text[k] : std::string();
}

std::string rewrite_part(const std::string& xml, const Part& part,
                         const std::map<std::size_t, std::string>& texts) {
    // In the order of the text (nodes of a text box come after its paragraph's in `nodes`).
    std::vector<std::pair<std::size_t, const std::string*>> order;
    for (const auto& [index, text] : texts)
        if (text != part.nodes[index].text) order.emplace_back(index, &text);
    std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
        return part.nodes[a.first].begin < part.nodes[b.first].begin;
    });
    std::string out;
    std::size_t at = 0;
    for (const auto& [index, text_ptr] : order) {
        const TextNode& n = part.nodes[index];
        const std::string& text = *text_ptr;
        out.append(xml, at, n.begin - at);
        std::string start = xml.substr(n.begin, n.tag_end - n.begin);
        const bool self_closing = start.size() >= 2 && start[start.size() - 2] == '/';
        if (self_closing) start.erase(start.size() - 2, 1);  // "<w:t/>" -> "<w:t>"
        if (!n.preserve && needs_preserve(text))
            start.insert(start.size() - 1, " xml:space=\"preserve\"");
        out += start;
        out += escape_xml(text);
        out += self_closing ? "</" + part.t_name + ">"
                            : xml.substr(n.content_end, n.end - n.content_end);
        at = n.end;
    }
    out.append(xml, at, std::string::npos);
    return out;
}

class DocxFormat : public DocumentFormat {
  public:
    std::vector<std::string> extensions() const override { return {"docx"}; }
    // Images make documents large; read_zip() limits what is unpacked.
    qint64 max_file_size() const override { return qint64{1} << 30; }

    Document read(const QByteArray& bytes, const QString& path) const override {
        const std::string file = path.toStdString();
        auto state = std::make_shared<DocxState>();
        state->entries = read_zip(bytes, path);
        auto find = [&](std::string_view name) -> const ZipEntry* {
            for (const ZipEntry& e : state->entries)
                if (e.name == name) return &e;
            return nullptr;
        };
        const ZipEntry* types = find("[Content_Types].xml");
        if (!types) throw FileError(file, "is not a Word document (no [Content_Types].xml)");
        pugi::xml_document types_xml;
        if (!types_xml.load_buffer(types->data.data(), types->data.size()))
            throw FileError(file, "[Content_Types].xml is not well-formed XML");
        std::vector<std::string> part_names;
        std::string main;  // the main document part, "word/document.xml"
        for (const pugi::xml_node o : types_xml.document_element().children("Override")) {
            const std::string type = o.attribute("ContentType").value();
            std::string name = o.attribute("PartName").value();
            if (!text_part(type)) continue;
            if (name.starts_with('/')) name.erase(0, 1);
            if (main.empty() && type.ends_with("main+xml")) main = name;
            part_names.push_back(name);
        }
        if (main.empty())
            throw FileError(file, "is not a Word document (it has no main document part)");
        // [Content_Types].xml alone is not a document: the main part must be there too.
        if (!find(main)) throw FileError(file, "is not a Word document (no " + main + ")");

        Document doc;
        for (std::size_t i = 0; i < state->entries.size(); ++i) {
            const ZipEntry& e = state->entries[i];
            if (std::find(part_names.begin(), part_names.end(), e.name) == part_names.end())
                continue;
            pugi::xml_document x;
            const pugi::xml_parse_result r =
                x.load_buffer(e.data.data(), e.data.size(),
                              pugi::parse_default | pugi::parse_ws_pcdata, pugi::encoding_utf8);
            if (!r)
                throw FileError(
                    file, e.name + " line " +
                              std::to_string(line_of(e.data, static_cast<std::size_t>(r.offset))) +
                              ": not well-formed XML: " + r.description());
            Part part;
            part.entry = i;
            if (PartReader(e.data, part, doc).run(x) && !part.stretches.empty())
                state->parts.push_back(std::move(part));
        }
        doc.state = state;
        return doc;
    }

    QByteArray write(const Document& doc,
                     const std::vector<std::string>& translations) const override {
        const DocxState* state = &checked_state<DocxState>(doc, translations, "a Word document");
        std::map<std::size_t, std::string> replaced;  // new data of the translated parts
        for (const Part& part : state->parts) {
            std::map<std::size_t, std::string> texts;
            for (const Stretch& s : part.stretches) {
                const auto i = static_cast<std::size_t>(s.segment);
                const std::string translation = single_line(translations[i]);
                if (translation != doc.segments[i]) place(s, doc.segments[i], translation, texts);
            }
            if (texts.empty()) continue;
            const ZipEntry& e = state->entries[part.entry];
            const std::string& data = replaced[part.entry] = rewrite_part(e.data, part, texts);
            pugi::xml_document check;
            if (!check.load_buffer(data.data(), data.size()))
                throw Error("internal error: the translated " + e.name + " is not well-formed");
        }
        return write_zip(state->entries, replaced);
    }
};

}  // namespace

const DocumentFormat& docx_format() {
    static const DocxFormat f;
    return f;
}

}  // namespace mtdesk::app::documents
