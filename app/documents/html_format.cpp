// HTML (.html, .htm, .xhtml): the text and a few attributes are translated, the markup is kept
// byte for byte.
//
// A small tokenizer of our own reads the markup (Debian has no HTML5 parser library for C++):
// tags with their attributes, comments, doctype, CDATA, processing instructions. The content of
// <script>, <style>, <textarea> and the like, of <pre>, <code>, <kbd>, <samp>, <var>, <svg>,
// <math>, and of any element marked translate="no" or class="notranslate" stays as it is.
//
// Segments: the text between two block boundaries (any tag that is not an inline element, a
// comment, <br>, <img>, ...) is one segment, whitespace collapsed to single spaces and character
// references decoded for the model. Inline elements inside it (<b>, <i>, <a>, <span>, <em>,
// <strong>, ...) become HY-MT1.5 format tags: "Click <a href="x">here</a> now" is the segment
// "Click <s1>here</s1> now", so the model translates the sentence whole and the link keeps its
// text. A translation without exactly the same tags in the same order is never written: the
// pipeline translates such a segment again run by run (translate_segments), and write() keeps
// the source text for one that still does not match (check_placeholders reports it). Inline
// elements whose start or end lies outside the segment stay literal and split it.
//
// Attributes translated: title, alt, placeholder, aria-label, the value of <input> buttons and
// the content of <meta name="description">. The output is UTF-8; a <meta> charset naming another
// encoding is rewritten (or one is added when the source had none; closed, "<meta ... />", in
// XHTML), so is the encoding an XML declaration at the very start names (XHTML), and <html lang>
// becomes the target language. A segment whose translation is the source text is written
// exactly as it was (entities and line breaks included), so write(read(x), segments) == x for
// UTF-8 files.

#include <QFileInfo>
#include <QStringDecoder>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "documents/formats.h"
#include "documents/pattern.h"
#include "documents/tagged.h"
#include "mtdesk/error.h"
#include "mtdesk/translate/prompt.h"

namespace mtdesk::app::documents {
namespace {

// ---- characters and entities

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f';
}

bool is_alpha(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

char to_lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = to_lower(c);
    return out;
}

bool starts_with_ci(std::string_view s, std::size_t at, std::string_view prefix) {
    if (s.size() - std::min(at, s.size()) < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (to_lower(s[at + i]) != prefix[i]) return false;
    return true;
}

// The HTML 4 character entities (Python's html.entities.name2codepoint) and &apos;. Other
// references are left as they are written, in the text and in the output.
struct Entity {
    const char* name;
    char32_t code;
};
constexpr Entity kEntities[] = {
    {"AElig", 0xC6},     {"Aacute", 0xC1},   {"Acirc", 0xC2},     {"Agrave", 0xC0},
    {"Alpha", 0x391},    {"Aring", 0xC5},    {"Atilde", 0xC3},    {"Auml", 0xC4},
    {"Beta", 0x392},     {"Ccedil", 0xC7},   {"Chi", 0x3A7},      {"Dagger", 0x2021},
    {"Delta", 0x394},    {"ETH", 0xD0},      {"Eacute", 0xC9},    {"Ecirc", 0xCA},
    {"Egrave", 0xC8},    {"Epsilon", 0x395}, {"Eta", 0x397},      {"Euml", 0xCB},
    {"Gamma", 0x393},    {"Iacute", 0xCD},   {"Icirc", 0xCE},     {"Igrave", 0xCC},
    {"Iota", 0x399},     {"Iuml", 0xCF},     {"Kappa", 0x39A},    {"Lambda", 0x39B},
    {"Mu", 0x39C},       {"Ntilde", 0xD1},   {"Nu", 0x39D},       {"OElig", 0x152},
    {"Oacute", 0xD3},    {"Ocirc", 0xD4},    {"Ograve", 0xD2},    {"Omega", 0x3A9},
    {"Omicron", 0x39F},  {"Oslash", 0xD8},   {"Otilde", 0xD5},    {"Ouml", 0xD6},
    {"Phi", 0x3A6},      {"Pi", 0x3A0},      {"Prime", 0x2033},   {"Psi", 0x3A8},
    {"Rho", 0x3A1},      {"Scaron", 0x160},  {"Sigma", 0x3A3},    {"THORN", 0xDE},
    {"Tau", 0x3A4},      {"Theta", 0x398},   {"Uacute", 0xDA},    {"Ucirc", 0xDB},
    {"Ugrave", 0xD9},    {"Upsilon", 0x3A5}, {"Uuml", 0xDC},      {"Xi", 0x39E},
    {"Yacute", 0xDD},    {"Yuml", 0x178},    {"Zeta", 0x396},     {"aacute", 0xE1},
    {"acirc", 0xE2},     {"acute", 0xB4},    {"aelig", 0xE6},     {"agrave", 0xE0},
    {"alefsym", 0x2135}, {"alpha", 0x3B1},   {"amp", 0x26},       {"and", 0x2227},
    {"ang", 0x2220},     {"apos", 0x27},     {"aring", 0xE5},     {"asymp", 0x2248},
    {"atilde", 0xE3},    {"auml", 0xE4},     {"bdquo", 0x201E},   {"beta", 0x3B2},
    {"brvbar", 0xA6},    {"bull", 0x2022},   {"cap", 0x2229},     {"ccedil", 0xE7},
    {"cedil", 0xB8},     {"cent", 0xA2},     {"chi", 0x3C7},      {"circ", 0x2C6},
    {"clubs", 0x2663},   {"cong", 0x2245},   {"copy", 0xA9},      {"crarr", 0x21B5},
    {"cup", 0x222A},     {"curren", 0xA4},   {"dArr", 0x21D3},    {"dagger", 0x2020},
    {"darr", 0x2193},    {"deg", 0xB0},      {"delta", 0x3B4},    {"diams", 0x2666},
    {"divide", 0xF7},    {"eacute", 0xE9},   {"ecirc", 0xEA},     {"egrave", 0xE8},
    {"empty", 0x2205},   {"emsp", 0x2003},   {"ensp", 0x2002},    {"epsilon", 0x3B5},
    {"equiv", 0x2261},   {"eta", 0x3B7},     {"eth", 0xF0},       {"euml", 0xEB},
    {"euro", 0x20AC},    {"exist", 0x2203},  {"fnof", 0x192},     {"forall", 0x2200},
    {"frac12", 0xBD},    {"frac14", 0xBC},   {"frac34", 0xBE},    {"frasl", 0x2044},
    {"gamma", 0x3B3},    {"ge", 0x2265},     {"gt", 0x3E},        {"hArr", 0x21D4},
    {"harr", 0x2194},    {"hearts", 0x2665}, {"hellip", 0x2026},  {"iacute", 0xED},
    {"icirc", 0xEE},     {"iexcl", 0xA1},    {"igrave", 0xEC},    {"image", 0x2111},
    {"infin", 0x221E},   {"int", 0x222B},    {"iota", 0x3B9},     {"iquest", 0xBF},
    {"isin", 0x2208},    {"iuml", 0xEF},     {"kappa", 0x3BA},    {"lArr", 0x21D0},
    {"lambda", 0x3BB},   {"lang", 0x2329},   {"laquo", 0xAB},     {"larr", 0x2190},
    {"lceil", 0x2308},   {"ldquo", 0x201C},  {"le", 0x2264},      {"lfloor", 0x230A},
    {"lowast", 0x2217},  {"loz", 0x25CA},    {"lrm", 0x200E},     {"lsaquo", 0x2039},
    {"lsquo", 0x2018},   {"lt", 0x3C},       {"macr", 0xAF},      {"mdash", 0x2014},
    {"micro", 0xB5},     {"middot", 0xB7},   {"minus", 0x2212},   {"mu", 0x3BC},
    {"nabla", 0x2207},   {"nbsp", 0xA0},     {"ndash", 0x2013},   {"ne", 0x2260},
    {"ni", 0x220B},      {"not", 0xAC},      {"notin", 0x2209},   {"nsub", 0x2284},
    {"ntilde", 0xF1},    {"nu", 0x3BD},      {"oacute", 0xF3},    {"ocirc", 0xF4},
    {"oelig", 0x153},    {"ograve", 0xF2},   {"oline", 0x203E},   {"omega", 0x3C9},
    {"omicron", 0x3BF},  {"oplus", 0x2295},  {"or", 0x2228},      {"ordf", 0xAA},
    {"ordm", 0xBA},      {"oslash", 0xF8},   {"otilde", 0xF5},    {"otimes", 0x2297},
    {"ouml", 0xF6},      {"para", 0xB6},     {"part", 0x2202},    {"permil", 0x2030},
    {"perp", 0x22A5},    {"phi", 0x3C6},     {"pi", 0x3C0},       {"piv", 0x3D6},
    {"plusmn", 0xB1},    {"pound", 0xA3},    {"prime", 0x2032},   {"prod", 0x220F},
    {"prop", 0x221D},    {"psi", 0x3C8},     {"quot", 0x22},      {"rArr", 0x21D2},
    {"radic", 0x221A},   {"rang", 0x232A},   {"raquo", 0xBB},     {"rarr", 0x2192},
    {"rceil", 0x2309},   {"rdquo", 0x201D},  {"real", 0x211C},    {"reg", 0xAE},
    {"rfloor", 0x230B},  {"rho", 0x3C1},     {"rlm", 0x200F},     {"rsaquo", 0x203A},
    {"rsquo", 0x2019},   {"sbquo", 0x201A},  {"scaron", 0x161},   {"sdot", 0x22C5},
    {"sect", 0xA7},      {"shy", 0xAD},      {"sigma", 0x3C3},    {"sigmaf", 0x3C2},
    {"sim", 0x223C},     {"spades", 0x2660}, {"sub", 0x2282},     {"sube", 0x2286},
    {"sum", 0x2211},     {"sup", 0x2283},    {"sup1", 0xB9},      {"sup2", 0xB2},
    {"sup3", 0xB3},      {"supe", 0x2287},   {"szlig", 0xDF},     {"tau", 0x3C4},
    {"there4", 0x2234},  {"theta", 0x3B8},   {"thetasym", 0x3D1}, {"thinsp", 0x2009},
    {"thorn", 0xFE},     {"tilde", 0x2DC},   {"times", 0xD7},     {"trade", 0x2122},
    {"uArr", 0x21D1},    {"uacute", 0xFA},   {"uarr", 0x2191},    {"ucirc", 0xFB},
    {"ugrave", 0xF9},    {"uml", 0xA8},      {"upsih", 0x3D2},    {"upsilon", 0x3C5},
    {"uuml", 0xFC},      {"weierp", 0x2118}, {"xi", 0x3BE},       {"yacute", 0xFD},
    {"yen", 0xA5},       {"yuml", 0xFF},     {"zeta", 0x3B6},     {"zwj", 0x200D},
    {"zwnj", 0x200C},
};

const std::unordered_map<std::string_view, char32_t>& entity_map() {
    static const auto map = [] {
        std::unordered_map<std::string_view, char32_t> m;
        for (const Entity& e : kEntities)
            m.emplace(e.name, e.code);
        return m;
    }();
    return map;
}

void append_utf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
}

// Length of the character reference at s[i] ('&') and its character, or 0 when there is none
// that we know ("&" alone, "&unknown;", no ';').
std::size_t reference_at(std::string_view s, std::size_t i, char32_t& c) {
    std::size_t k = i + 1;
    if (k < s.size() && s[k] == '#') {
        ++k;
        const bool hex = k < s.size() && (s[k] == 'x' || s[k] == 'X');
        if (hex) ++k;
        const std::size_t digits = k;
        std::uint32_t v = 0;
        while (k < s.size() && k - digits < 8) {
            const char d = s[k];
            int n = -1;
            if (d >= '0' && d <= '9') n = d - '0';
            if (hex && d >= 'a' && d <= 'f') n = d - 'a' + 10;
            if (hex && d >= 'A' && d <= 'F') n = d - 'A' + 10;
            if (n < 0) break;
            v = v * (hex ? 16 : 10) + static_cast<std::uint32_t>(n);
            ++k;
        }
        if (k == digits || k >= s.size() || s[k] != ';') return 0;
        c = (v == 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) ? 0xFFFD : v;
        return k + 1 - i;
    }
    while (k < s.size() && k - i <= 32 && (is_alpha(s[k]) || (s[k] >= '0' && s[k] <= '9')))
        ++k;
    if (k == i + 1 || k >= s.size() || s[k] != ';') return 0;
    const auto it = entity_map().find(s.substr(i + 1, k - i - 1));
    if (it == entity_map().end()) return 0;
    c = it->second;
    return k + 1 - i;
}

// Text with character references decoded; with `collapse`, each run of whitespace becomes one
// space (how a browser shows it).
std::string decode(std::string_view raw, bool collapse) {
    std::string out;
    for (std::size_t i = 0; i < raw.size();) {
        if (collapse && is_space(raw[i])) {
            out += ' ';
            while (i < raw.size() && is_space(raw[i]))
                ++i;
            continue;
        }
        char32_t c = 0;
        if (raw[i] == '&') {
            if (const std::size_t n = reference_at(raw, i, c)) {
                append_utf8(out, c);
                i += n;
                continue;
            }
        }
        out += raw[i++];
    }
    return out;
}

// Length of the outer space starting at s[i]: whitespace, or a no-break space (U+00A0 as
// UTF-8, &nbsp;, &#160;); 0 for anything else. Space around a segment stays literal: the
// model's translation would drop it.
std::size_t outer_space_at(std::string_view s, std::size_t i) {
    if (i >= s.size()) return 0;
    if (is_space(s[i])) return 1;
    if (s.substr(i, 2) == "\xC2\xA0") return 2;
    char32_t c = 0;
    const std::size_t n = s[i] == '&' ? reference_at(s, i, c) : 0;
    return n && c == 0xA0 ? n : 0;
}

// The same for the outer space ending at s[e - 1].
std::size_t outer_space_before(std::string_view s, std::size_t e) {
    if (e == 0) return 0;
    if (is_space(s[e - 1])) return 1;
    if (e >= 2 && s.substr(e - 2, 2) == "\xC2\xA0") return 2;
    if (s[e - 1] != ';') return 0;
    for (std::size_t k = e - 1; k-- > 0 && e - k <= 10;)  // "&#x000A0;" at most
        if (s[k] == '&') return outer_space_at(s, k) == e - k ? e - k : 0;
    return 0;
}

// True when s[i] ('&') starts "&name;" that decode() left alone: it must stay as written.
bool unknown_reference_at(std::string_view s, std::size_t i) {
    std::size_t k = i + 1;
    while (k < s.size() && (is_alpha(s[k]) || (s[k] >= '0' && s[k] <= '9')))
        ++k;
    char32_t c = 0;
    return k > i + 1 && k < s.size() && s[k] == ';' && reference_at(s, i, c) == 0;
}

// Text for HTML: '&', '<' and '>' escaped, and `quote` (an attribute value's quote character,
// or 0 for text).
std::string escape(std::string_view s, char quote) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '&' && !unknown_reference_at(s, i))
            out += "&amp;";
        else if (c == '<')
            out += "&lt;";
        else if (c == '>')
            out += "&gt;";
        else if (quote && c == quote)
            out += c == '"' ? "&quot;" : "&#39;";
        else
            out += c;
    }
    return out;
}

// ---- tags

struct Attr {
    std::string name;                            ///< lower case
    std::size_t value_begin = 0, value_end = 0;  ///< the value as written, quotes included
    std::string value;                           ///< decoded
};

struct Tag {
    std::string name;  ///< lower case
    bool closing = false, self_closing = false;
    std::size_t begin = 0, end = 0;  ///< '<' .. just after '>'
    std::vector<Attr> attrs;

    const Attr* attr(std::string_view n) const {
        for (const Attr& a : attrs)
            if (a.name == n) return &a;
        return nullptr;
    }
    std::string value(std::string_view n) const {
        const Attr* a = attr(n);
        return a ? a->value : std::string();
    }
};

// True when text[i] starts a start tag ("<a") or an end tag ("</a").
bool tag_starts_at(std::string_view text, std::size_t i) {
    if (text[i] != '<' || i + 1 >= text.size()) return false;
    if (is_alpha(text[i + 1])) return true;
    return text[i + 1] == '/' && i + 2 < text.size() && is_alpha(text[i + 2]);
}

// Parses the tag at text[i] (tag_starts_at). False when it does not end before the text does.
bool parse_tag(std::string_view text, std::size_t i, Tag& tag) {
    tag = Tag{};
    tag.begin = i;
    std::size_t k = i + 1;
    if (text[k] == '/') {
        tag.closing = true;
        ++k;
    }
    const std::size_t name_begin = k;
    while (k < text.size() && !is_space(text[k]) && text[k] != '/' && text[k] != '>')
        ++k;
    tag.name = lower(text.substr(name_begin, k - name_begin));
    for (;;) {
        while (k < text.size() && (is_space(text[k]) || text[k] == '/')) {
            tag.self_closing = text[k] == '/';
            ++k;
        }
        if (k >= text.size()) return false;
        if (text[k] == '>') {
            tag.end = k + 1;
            return true;
        }
        tag.self_closing = false;
        Attr a;
        const std::size_t attr_begin = k;
        ++k;  // the first character may be anything, '=' included
        while (k < text.size() && !is_space(text[k]) && text[k] != '/' && text[k] != '>' &&
               text[k] != '=')
            ++k;
        a.name = lower(text.substr(attr_begin, k - attr_begin));
        std::size_t v = k;
        while (v < text.size() && is_space(text[v]))
            ++v;
        if (v < text.size() && text[v] == '=') {
            ++v;
            while (v < text.size() && is_space(text[v]))
                ++v;
            if (v >= text.size()) return false;
            a.value_begin = v;
            if (text[v] == '"' || text[v] == '\'') {
                const std::size_t close = text.find(text[v], v + 1);
                if (close == std::string_view::npos) return false;
                a.value = decode(text.substr(v + 1, close - v - 1), false);
                k = close + 1;
            } else {
                k = v;
                while (k < text.size() && !is_space(text[k]) && text[k] != '>')
                    ++k;
                a.value = decode(text.substr(v, k - v), false);
            }
            a.value_end = k;
        }
        tag.attrs.push_back(std::move(a));
    }
}

bool in(const std::unordered_set<std::string_view>& set, std::string_view name) {
    return set.count(name) != 0;
}

// Elements whose content is not markup: kept literal up to their end tag.
const std::unordered_set<std::string_view> kRawText = {
    "script", "style", "textarea", "xmp", "iframe", "noembed", "noframes", "plaintext"};
// Elements whose content (markup and text) is kept literal: code, and foreign content.
const std::unordered_set<std::string_view> kLiteral = {"pre", "code",    "kbd", "samp",
                                                       "var", "listing", "svg", "math"};
// Inline elements that stay inside a segment as format tags.
const std::unordered_set<std::string_view> kInline = {
    "a",     "abbr", "acronym", "b",      "bdi", "bdo",   "big",  "cite", "data", "del",
    "dfn",   "em",   "font",    "i",      "ins", "label", "mark", "nobr", "q",    "s",
    "small", "span", "strike",  "strong", "sub", "sup",   "time", "tt",   "u"};
const std::unordered_set<std::string_view> kVoid = {"area",  "base",   "br",    "col",  "embed",
                                                    "hr",    "img",    "input", "link", "meta",
                                                    "param", "source", "track", "wbr",  "keygen"};

// ---- document state

constexpr int kLanguageSlot = -2;  // a Piece holding <html lang>'s value, replaced on write

struct Token {
    TagToken::Kind kind = TagToken::Kind::Text;
    std::string raw;          ///< Text: as written; Close: the end tag
    std::vector<Piece> open;  ///< Open: the start tag, with its attribute slots
};

struct HtmlSegment {
    bool attribute = false;     ///< an attribute value (raw has its quotes)
    std::string raw;            ///< the source as written
    std::vector<Token> tokens;  ///< tagged segments: text runs and inline tags, in order
};

struct HtmlState : FormatState {
    std::vector<HtmlSegment> segments;  // 1:1 with Document::segments
};

void append_literal(std::vector<Piece>& pieces, std::string_view text) {
    if (text.empty()) return;
    if (!pieces.empty() && pieces.back().segment == -1)
        pieces.back().literal.append(text);
    else
        pieces.push_back({std::string(text), -1});
}

std::size_t line_of(std::string_view text, std::size_t offset) {
    return 1 + static_cast<std::size_t>(std::count(
                   text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// ---- reading

struct Item {
    TagToken::Kind kind = TagToken::Kind::Text;
    std::size_t begin = 0, end = 0;  ///< in the text: the text, or the tag
    std::string name;                ///< tags: element name
    std::vector<Piece> open;         ///< Open: the tag with attribute slots
};

class Reader {
  public:
    Reader(std::string_view text, const QString& path, Document& doc, HtmlState& state)
        : text_(text), path_(path), doc_(doc), state_(state) {}

    bool charset_changed = false;  ///< the source was not UTF-8: meta charset says UTF-8 now
    bool add_meta = false;         ///< no meta charset: add one (after <head>, or <html>, or first)
    bool xml_syntax = false;       ///< XHTML: an added element must be closed ("<meta .../>")

    void run() {
        if (add_meta) {
            // After <head>, or <html>, or the doctype, or first.
            const std::string l = lower(text_);
            auto has_tag = [&](const std::string& name) {
                for (std::size_t k = 0; (k = l.find("<" + name, k)) != std::string::npos; ++k) {
                    const std::size_t after = k + 1 + name.size();
                    if (after < l.size() && (is_space(l[after]) || l[after] == '>')) return true;
                }
                return false;
            };
            const std::size_t first = l.find_first_not_of(" \t\r\n\f");
            if (has_tag("head"))
                add_meta_at_ = "head";
            else if (has_tag("html"))
                add_meta_at_ = "html";
            else if (first != std::string::npos && l.compare(first, 9, "<!doctype") == 0)
                add_meta_at_ = "!doctype";
            if (add_meta_at_.empty()) {
                emit_literal(meta());
                add_meta = false;
            }
        }
        const std::string_view t = text_;
        std::size_t pos = 0;
        while (pos < t.size()) {
            if (t[pos] != '<') {
                const std::size_t next = std::min(t.find('<', pos + 1), t.size());
                add_text(pos, next);
                pos = next;
            } else if (t.compare(pos, 4, "<!--") == 0) {
                pos = literal_until(pos, "-->", "a comment");
            } else if (starts_with_ci(t, pos, "<![cdata[")) {
                pos = literal_until(pos, "]]>", "a CDATA section");
            } else if (pos == 0 && charset_changed && t.starts_with("<?xml") && t.size() > 5 &&
                       is_space(t[5])) {
                pos = xml_declaration();
            } else if (t.compare(pos, 2, "<!") == 0 || t.compare(pos, 2, "<?") == 0) {
                pos = literal_until(pos, ">", "a declaration");
            } else if (tag_starts_at(t, pos)) {
                Tag tag;
                if (!parse_tag(t, pos, tag))
                    fail_at(
                        path_, line_of(t, pos),
                        "the tag <" + std::string(t.substr(pos + 1, 20)) + " never ends (no '>')");
                pos = tag.closing ? end_tag(tag) : start_tag(tag);
            } else {
                add_text(pos, pos + 1);
                ++pos;
            }
        }
        flush();
    }

  private:
    std::string_view meta() const {
        return xml_syntax ? "<meta charset=\"UTF-8\"/>" : "<meta charset=\"UTF-8\">";
    }

    std::size_t literal_until(std::size_t pos, std::string_view end, const char* what) {
        const std::size_t close = text_.find(end, pos + 2);
        if (close == std::string_view::npos)
            fail_at(path_, line_of(text_, pos),
                    std::string(what) + " never ends (no '" + std::string(end) + "')");
        flush();
        emit_literal(text_.substr(pos, close + end.size() - pos));
        if (add_meta && add_meta_at_ == "!doctype") {
            emit_literal(meta());
            add_meta = false;
        }
        return close + end.size();
    }

    // The XML declaration at the start of an XHTML file whose encoding changes: the encoding
    // it declares becomes UTF-8 (in the same quotes), as the output is. Returns the position
    // after it.
    std::size_t xml_declaration() {
        static const Pattern encoding(R"(\sencoding\s*=\s*("[^"]*"|'[^']*'))");
        const std::size_t close = text_.find('>');
        if (close == std::string_view::npos) fail_at(path_, 1, "a declaration never ends (no '>')");
        std::string declaration(text_.substr(0, close + 1));
        if (const std::optional<PatternMatch> m = encoding.search(declaration))
            declaration.replace(m->position(1), m->length(1), quoted_like(m->str(1), "UTF-8"));
        emit_literal(declaration);
        return close + 1;
    }

    void add_text(std::size_t b, std::size_t e) {
        if (!para_.empty() && para_.back().kind == TagToken::Kind::Text && para_.back().end == b)
            para_.back().end = e;
        else
            para_.push_back({TagToken::Kind::Text, b, e, {}, {}});
    }

    void emit_literal(std::string_view s) { doc_.add_literal(s); }

    void emit_pieces(const std::vector<Piece>& pieces) {
        for (const Piece& p : pieces) {
            if (p.segment == -1) {
                doc_.add_literal(p.literal);
            } else {
                doc_.skeleton.push_back(p);
                // A following literal must not be merged into a language slot.
                if (p.segment == kLanguageSlot) doc_.skeleton.push_back({{}, -1});
            }
        }
    }

    int new_segment(std::string text, HtmlSegment info) {
        const int index = static_cast<int>(doc_.segments.size());
        check_segment_limit(doc_);
        doc_.segments.push_back(std::move(text));
        state_.segments.push_back(std::move(info));
        return index;
    }

    bool translatable_attribute(const Tag& tag, const Attr& a) const {
        if (a.name == "title" || a.name == "alt" || a.name == "placeholder" ||
            a.name == "aria-label")
            return true;
        if (tag.name == "input" && a.name == "value") {
            const std::string type = lower(tag.value("type"));
            return type == "submit" || type == "button" || type == "reset";
        }
        return tag.name == "meta" && a.name == "content" &&
               lower(tag.value("name")) == "description";
    }

    // The tag as pieces: literal text, a slot for each translatable attribute, the language
    // slot of <html lang>, the charset of <meta> rewritten when the output changes encoding.
    std::vector<Piece> tag_pieces(const Tag& tag, bool translate_attributes) {
        std::vector<Piece> pieces;
        std::size_t at = tag.begin;
        for (const Attr& a : tag.attrs) {
            if (a.value_begin == a.value_end) continue;
            const std::string_view raw = text_.substr(a.value_begin, a.value_end - a.value_begin);
            std::string replacement;
            int slot = -1;
            if (translate_attributes && translatable_attribute(tag, a) && has_letters(a.value)) {
                HtmlSegment info;
                info.attribute = true;
                info.raw = std::string(raw);
                std::string value = decode(a.value, true);
                const std::size_t b = value.find_first_not_of(' ');
                const std::size_t e = value.find_last_not_of(' ');
                slot = new_segment(value.substr(b, e + 1 - b), std::move(info));
            } else if (tag.name == "html" && (a.name == "lang" || a.name == "xml:lang")) {
                slot = kLanguageSlot;
                replacement = std::string(raw);
            } else if (charset_changed && tag.name == "meta" && a.name == "charset") {
                replacement = quoted_like(raw, "UTF-8");
            } else if (charset_changed && tag.name == "meta" && a.name == "content" &&
                       lower(tag.value("http-equiv")) == "content-type") {
                replacement = std::string(raw);
                const std::size_t cs = lower(replacement).find("charset=");
                if (cs != std::string::npos) {
                    std::size_t e = cs + 8;
                    while (e < replacement.size() && replacement[e] != ';' &&
                           replacement[e] != '"' && replacement[e] != '\'' &&
                           !is_space(replacement[e]))
                        ++e;
                    replacement.replace(cs + 8, e - cs - 8, "UTF-8");
                }
            } else {
                continue;
            }
            append_literal(pieces, text_.substr(at, a.value_begin - at));
            if (slot == -1)
                append_literal(pieces, replacement);
            else
                pieces.push_back({replacement, slot});
            at = a.value_end;
        }
        append_literal(pieces, text_.substr(at, tag.end - at));
        if (add_meta && !tag.closing && tag.name == add_meta_at_) {
            append_literal(pieces, meta());
            add_meta = false;
        }
        return pieces;
    }

    static std::string quoted_like(std::string_view raw, std::string_view value) {
        if (!raw.empty() && (raw[0] == '"' || raw[0] == '\''))
            return raw[0] + std::string(value) + raw[0];
        return std::string(value);
    }

    static bool translate_no(const Tag& tag) {
        if (lower(tag.value("translate")) == "no") return true;
        std::string cls = " " + lower(tag.value("class")) + " ";
        std::replace_if(cls.begin(), cls.end(), is_space, ' ');
        return cls.find(" notranslate ") != std::string::npos;
    }

    // Position just after the end tag of `name` that closes the element whose content starts at
    // `from` (same-name elements nested in it counted), or the end of the text.
    std::size_t matching_end(const std::string& name, std::size_t from) const {
        int depth = 1;
        std::size_t k = from;
        while ((k = text_.find('<', k)) != std::string_view::npos) {
            if (text_.compare(k, 4, "<!--") == 0) {
                const std::size_t c = text_.find("-->", k + 4);
                if (c == std::string_view::npos) return text_.size();
                k = c + 3;
                continue;
            }
            Tag tag;
            if (tag_starts_at(text_, k) && parse_tag(text_, k, tag) && tag.name == name) {
                if (tag.closing && --depth == 0) return tag.end;
                if (!tag.closing && !tag.self_closing) ++depth;
                k = tag.end;
                continue;
            }
            ++k;
        }
        return text_.size();
    }

    // Position of "</name" (followed by a delimiter) at or after `from`, or npos.
    std::size_t raw_text_end(const std::string& name, std::size_t from) const {
        for (std::size_t k = from; (k = text_.find("</", k)) != std::string_view::npos; ++k) {
            const std::size_t after = k + 2 + name.size();
            if (starts_with_ci(text_, k + 2, name) &&
                (after >= text_.size() || is_space(text_[after]) || text_[after] == '>' ||
                 text_[after] == '/'))
                return k;
        }
        return std::string_view::npos;
    }

    std::size_t start_tag(const Tag& tag) {
        const std::string& name = tag.name;
        const bool no = translate_no(tag);
        if (in(kInline, name) && !no && !tag.self_closing) {
            para_.push_back(
                {TagToken::Kind::Open, tag.begin, tag.end, name, tag_pieces(tag, true)});
            return tag.end;
        }
        flush();
        emit_pieces(tag_pieces(tag, !no));
        if (tag.self_closing || in(kVoid, name)) return tag.end;
        if (name == "plaintext") {
            emit_literal(text_.substr(tag.end));
            return text_.size();
        }
        if (in(kRawText, name) || name == "title") {
            const std::size_t close = raw_text_end(name, tag.end);
            const std::size_t end = close == std::string_view::npos ? text_.size() : close;
            const std::string_view content = text_.substr(tag.end, end - tag.end);
            if (name == "title" && !no)
                add_plain_segment(tag.end, end);
            else
                emit_literal(content);
            return end;
        }
        if (in(kLiteral, name) || no) {
            const std::size_t end = matching_end(name, tag.end);
            emit_literal(text_.substr(tag.end, end - tag.end));
            return end;
        }
        return tag.end;
    }

    std::size_t end_tag(const Tag& tag) {
        if (in(kInline, tag.name)) {
            para_.push_back({TagToken::Kind::Close, tag.begin, tag.end, tag.name, {}});
        } else {
            flush();
            emit_literal(text_.substr(tag.begin, tag.end - tag.begin));
        }
        return tag.end;
    }

    // Raw text [b, e) as one segment, its outer whitespace literal; literal when it has no
    // letter.
    void add_plain_segment(std::size_t b, std::size_t e) {
        std::size_t tb = b, te = e;
        for (std::size_t n; tb < te && (n = outer_space_at(text_.substr(0, te), tb));)
            tb += n;
        for (std::size_t n; te > tb && (n = outer_space_before(text_.substr(tb), te - tb));)
            te -= n;
        const std::string text = decode(text_.substr(tb, te - tb), true);
        if (!has_letters(text)) {
            emit_literal(text_.substr(b, e - b));
            return;
        }
        emit_literal(text_.substr(b, tb - b));
        HtmlSegment info;
        info.raw = std::string(text_.substr(tb, te - tb));
        doc_.skeleton.push_back({{}, new_segment(text, std::move(info))});
        emit_literal(text_.substr(te, e - te));
    }

    void emit_item(const Item& it) {
        if (it.kind == TagToken::Kind::Open)
            emit_pieces(it.open);
        else
            emit_literal(text_.substr(it.begin, it.end - it.begin));
    }

    // Letters in items [b, e)?
    bool items_have_letters(std::size_t b, std::size_t e) const {
        for (std::size_t i = b; i < e; ++i)
            if (para_[i].kind == TagToken::Kind::Text &&
                has_letters(
                    decode(text_.substr(para_[i].begin, para_[i].end - para_[i].begin), false)))
                return true;
        return false;
    }

    bool blank_text(const Item& it) const {
        if (it.kind != TagToken::Kind::Text) return false;
        for (std::size_t k = it.begin; k < it.end; ++k)
            if (!is_space(text_[k])) return false;
        return true;
    }

    // The collected run of text and inline tags becomes segments.
    void flush() {
        const std::size_t n = para_.size();
        if (n == 0) return;
        match_.assign(n, -1);
        std::vector<std::size_t> open;
        for (std::size_t i = 0; i < n; ++i) {
            if (para_[i].kind == TagToken::Kind::Open) {
                open.push_back(i);
            } else if (para_[i].kind == TagToken::Kind::Close && !open.empty() &&
                       para_[open.back()].name == para_[i].name) {
                match_[i] = static_cast<int>(open.back());
                match_[open.back()] = static_cast<int>(i);
                open.pop_back();
            }
        }
        // A pair around an unmatched tag cannot be a format tag either: the segment is cut at
        // the unmatched one.
        for (bool changed = true; changed;) {
            changed = false;
            for (std::size_t i = 0; i < n; ++i) {
                if (para_[i].kind != TagToken::Kind::Open || match_[i] < 0) continue;
                const auto j = static_cast<std::size_t>(match_[i]);
                for (std::size_t k = i + 1; k < j; ++k)
                    if (para_[k].kind != TagToken::Kind::Text && match_[k] < 0) {
                        match_[i] = match_[j] = -1;
                        changed = true;
                        break;
                    }
            }
        }
        std::size_t start = 0;
        for (std::size_t i = 0; i < n; ++i) {
            if (para_[i].kind == TagToken::Kind::Text || match_[i] >= 0) continue;
            segment(start, i);
            emit_item(para_[i]);
            start = i + 1;
        }
        segment(start, n);
        para_.clear();
    }

    // Items [b, e), every tag in them paired inside them: literal wrapping and empty pairs
    // peeled off, the rest one segment.
    void segment(std::size_t b, std::size_t e) {
        std::vector<std::size_t> tail;  // items emitted after the segment, last first
        for (bool changed = true; changed && b < e;) {
            changed = false;
            const Item& first = para_[b];
            const Item& last = para_[e - 1];
            if (blank_text(first)) {
                emit_item(first);
                ++b;
                changed = true;
            } else if (blank_text(last)) {
                tail.push_back(--e);
                changed = true;
            } else if (first.kind == TagToken::Kind::Open &&
                       static_cast<std::size_t>(match_[b]) == e - 1) {
                emit_item(first);  // the whole segment is inside one element
                tail.push_back(--e);
                ++b;
                changed = true;
            } else if (first.kind == TagToken::Kind::Open &&
                       !items_have_letters(b, static_cast<std::size_t>(match_[b]))) {
                const auto j = static_cast<std::size_t>(match_[b]);
                for (std::size_t k = b; k <= j; ++k)
                    emit_item(para_[k]);
                b = j + 1;
                changed = true;
            } else if (last.kind == TagToken::Kind::Close &&
                       !items_have_letters(static_cast<std::size_t>(match_[e - 1]), e)) {
                const auto j = static_cast<std::size_t>(match_[e - 1]);
                for (std::size_t k = e; k-- > j;)
                    tail.push_back(k);
                e = j;
                changed = true;
            }
        }
        if (b < e) {
            bool tags = false;
            for (std::size_t i = b; i < e; ++i)
                tags = tags || para_[i].kind != TagToken::Kind::Text;
            if (!items_have_letters(b, e)) {
                for (std::size_t i = b; i < e; ++i)
                    emit_item(para_[i]);
            } else if (!tags) {
                add_plain_segment(para_[b].begin, para_[e - 1].end);
            } else {
                tagged_segment(b, e);
            }
        }
        for (auto it = tail.rbegin(); it != tail.rend(); ++it)
            emit_item(para_[*it]);
    }

    void tagged_segment(std::size_t b, std::size_t e) {
        // Source text that itself reads as a format tag would confuse the tags: cut there.
        for (std::size_t i = b; i < e; ++i)
            if (para_[i].kind == TagToken::Kind::Text &&
                contains_tag(
                    decode(text_.substr(para_[i].begin, para_[i].end - para_[i].begin), false))) {
                for (std::size_t k = b; k < e; ++k) {
                    if (para_[k].kind == TagToken::Kind::Text)
                        add_plain_segment(para_[k].begin, para_[k].end);
                    else
                        emit_item(para_[k]);
                }
                return;
            }
        // Outer whitespace stays literal.
        std::size_t lead = 0, trail = 0;
        if (const Item& first = para_[b]; first.kind == TagToken::Kind::Text) {
            const std::string_view t = text_.substr(first.begin, first.end - first.begin);
            for (std::size_t n; (n = outer_space_at(t, lead));)
                lead += n;
        }
        if (const Item& last = para_[e - 1]; last.kind == TagToken::Kind::Text) {
            const std::string_view t = text_.substr(last.begin, last.end - last.begin);
            for (std::size_t n;
                 (n = outer_space_before(t.substr(b == e - 1 ? lead : 0),
                                         t.size() - trail - (b == e - 1 ? lead : 0)));)
                trail += n;
        }
        emit_literal(text_.substr(para_[b].begin, lead));
        HtmlSegment info;
        std::string text;
        std::vector<int> ids(e - b, 0);
        int next_id = 1;
        for (std::size_t i = b; i < e; ++i) {
            const Item& it = para_[i];
            Token token;
            token.kind = it.kind;
            if (it.kind == TagToken::Kind::Text) {
                const std::size_t from = it.begin + (i == b ? lead : 0);
                const std::size_t to = it.end - (i + 1 == e ? trail : 0);
                token.raw = std::string(text_.substr(from, to - from));
                text += decode(token.raw, true);
            } else if (it.kind == TagToken::Kind::Open) {
                ids[i - b] = next_id++;
                token.open = it.open;
                text += open_tag(ids[i - b]);
            } else {
                ids[i - b] = ids[static_cast<std::size_t>(match_[i]) - b];
                token.raw = std::string(text_.substr(it.begin, it.end - it.begin));
                text += close_tag(ids[i - b]);
            }
            info.tokens.push_back(std::move(token));
        }
        const int index = new_segment(std::move(text), std::move(info));
        doc_.set_tagged(static_cast<std::size_t>(index));
        doc_.skeleton.push_back({{}, index});
        emit_literal(text_.substr(para_[e - 1].end - trail, trail));
    }

    std::string_view text_;
    const QString& path_;
    Document& doc_;
    HtmlState& state_;
    std::vector<Item> para_;
    std::vector<int> match_;
    std::string add_meta_at_;
};

// ---- encoding

// The charset a <meta> near the start of the file names, lower case, or "".
std::string meta_charset(const QByteArray& bytes) {
    const std::string head = bytes.left(16384).toStdString();
    for (std::size_t k = 0; (k = head.find('<', k)) != std::string::npos; ++k) {
        if (head.compare(k, 4, "<!--") == 0) {
            k = head.find("-->", k);
            if (k == std::string::npos) break;
            continue;
        }
        if (!starts_with_ci(head, k, "<meta") || !tag_starts_at(head, k)) continue;
        Tag tag;
        if (!parse_tag(head, k, tag)) break;
        if (tag.attr("charset")) return lower(tag.value("charset"));
        if (lower(tag.value("http-equiv")) == "content-type") {
            const std::string content = lower(tag.value("content"));
            const std::size_t cs = content.find("charset=");
            if (cs == std::string::npos) continue;
            std::size_t e = cs + 8;
            while (e < content.size() && content[e] != ';' && !is_space(content[e]))
                ++e;
            return content.substr(cs + 8, e - cs - 8);
        }
    }
    return {};
}

DecodedText decode_html(const QByteArray& bytes, const QString& path) {
    const bool bom = bytes.startsWith("\xEF\xBB\xBF") || bytes.startsWith("\xFF\xFE") ||
                     bytes.startsWith("\xFE\xFF");
    std::string charset = bom ? std::string() : meta_charset(bytes);
    // As browsers do: these names mean windows-1252, and a meta tag read as ASCII cannot mean
    // UTF-16.
    if (charset == "iso-8859-1" || charset == "latin1" || charset == "us-ascii" ||
        charset == "ascii")
        charset = "windows-1252";
    if (charset.empty() || charset == "utf-8" || charset == "utf8" || charset.starts_with("utf-16"))
        return decode_text(bytes, path);
    if (bytes.contains('\0')) throw FileError(path.toStdString(), "is a binary file, not HTML");
    QStringDecoder decoder(charset.c_str(), QStringDecoder::Flag::Stateless);
    if (!decoder.isValid()) return decode_text(bytes, path);
    const QString text = decoder.decode(bytes);
    if (decoder.hasError())
        throw FileError(path.toStdString(), "is not valid " + charset +
                                                " text (the charset its "
                                                "<meta> tag names)");
    return {text.toStdString(), false, charset};
}

// Whether the file is XHTML (XML syntax): named .xhtml, or with an XML declaration or the
// XHTML namespace.
bool is_xhtml(std::string_view text, const QString& path) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    return QFileInfo(path).suffix().compare(QLatin1String("xhtml"), Qt::CaseInsensitive) == 0 ||
           (first != std::string_view::npos && text.substr(first).starts_with("<?xml")) ||
           text.find("http://www.w3.org/1999/xhtml") != std::string_view::npos;
}

class HtmlFormat : public DocumentFormat {
  public:
    std::vector<std::string> extensions() const override { return {"html", "htm", "xhtml"}; }

    Document read(const QByteArray& bytes, const QString& path) const override {
        const DecodedText decoded = decode_html(bytes, path);
        auto state = std::make_shared<HtmlState>();
        Document doc;
        if (decoded.had_bom) doc.add_literal("\xEF\xBB\xBF");  // output is UTF-8; keep the mark
        Reader reader(decoded.text, path, doc, *state);
        reader.charset_changed = decoded.encoding != "UTF-8";
        reader.add_meta =
            reader.charset_changed && meta_charset(QByteArray::fromStdString(decoded.text)).empty();
        reader.xml_syntax = is_xhtml(decoded.text, path);
        reader.run();
        doc.state = state;
        return doc;
    }

    QByteArray write(const Document& doc,
                     const std::vector<std::string>& translations) const override {
        const HtmlState* state = &checked_state<HtmlState>(doc, translations, "an HTML document");
        std::string out;
        Writer{doc, *state, translations, out}.pieces(doc.skeleton);
        return QByteArray::fromStdString(out);
    }

  private:
    struct Writer {
        const Document& doc;
        const HtmlState& state;
        const std::vector<std::string>& translations;
        std::string& out;

        void pieces(const std::vector<Piece>& list) {
            for (const Piece& p : list) {
                if (p.segment == kLanguageSlot)
                    out += doc.target_language.empty() ? p.literal
                                                       : quoted(p.literal, doc.target_language);
                else if (p.segment < 0)
                    out += p.literal;
                else
                    segment(static_cast<std::size_t>(p.segment));
            }
        }

        static std::string quoted(std::string_view raw, std::string_view value) {
            const char q = !raw.empty() && raw[0] == '\'' ? '\'' : '"';
            return q + std::string(value) + q;
        }

        void segment(std::size_t i) {
            const HtmlSegment& info = state.segments[i];
            const std::string& source = doc.segments[i];
            const std::string translation = single_line(translations[i]);
            const bool unchanged = translation == source;
            if (info.attribute) {
                // In the source's quotes (double quotes for an unquoted value).
                const char q = info.raw.starts_with('\'') ? '\'' : '"';
                out += unchanged ? info.raw : q + escape(translation, q) + q;
                return;
            }
            if (info.tokens.empty()) {
                out += unchanged ? info.raw : escape(translation, 0);
                return;
            }
            if (!unchanged && same_tags(source, translation)) {
                // Each tag of the translation is the source's tag with the same number.
                std::vector<const Token*> opens;
                for (const Token& t : info.tokens) {
                    if (t.kind == TagToken::Kind::Open) opens.push_back(&t);
                }
                std::vector<const Token*> close_of(opens.size() + 1, nullptr);
                std::vector<int> stack;
                int next = 0;
                for (const Token& t : info.tokens) {
                    if (t.kind == TagToken::Kind::Open) stack.push_back(++next);
                    if (t.kind == TagToken::Kind::Close) {
                        close_of[static_cast<std::size_t>(stack.back())] = &t;
                        stack.pop_back();
                    }
                }
                for (const TagToken& t : tag_tokens(translation)) {
                    const auto id = static_cast<std::size_t>(t.id);
                    if (t.kind == TagToken::Kind::Text)
                        out += escape(t.text, 0);
                    else if (t.kind == TagToken::Kind::Open)
                        pieces(opens[id - 1]->open);
                    else
                        out += close_of[id]->raw;
                }
                return;
            }
            // Unchanged, or a translation that lost its tags: the source as it was.
            for (const Token& t : info.tokens) {
                if (t.kind == TagToken::Kind::Open)
                    pieces(t.open);
                else
                    out += t.raw;
            }
        }
    };
};

}  // namespace

const DocumentFormat& html_format() {
    static const HtmlFormat f;
    return f;
}

}  // namespace mtdesk::app::documents
