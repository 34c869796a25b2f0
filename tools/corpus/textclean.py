"""Normalisation and filters for gettext pairs (used by clean.py; no I/O here)."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

# --- accelerators (mnemonics) -----------------------------------------------------------------

# "打开(_O)", "ファイル(&F)...", "열기(_O)", full-width parentheses too: the CJK convention puts the
# mnemonic letter in parentheses after the translation.
_PAREN_MNEMONIC = re.compile(r"\s*[(（]\s*[_&][A-Za-z0-9]\s*[)）]")
_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")


def _strip_marker(s: str, mark: str) -> str:
    """Removes a single mnemonic marker ("_Open", "Save _As", "E&xit"). Doubled markers ("&&",
    "__") are literal characters and stay; so does a marker before a space or at the end, and
    anything when the string holds more than one candidate (then it is not a mnemonic)."""
    if mark == "&":
        probe = _ENTITY.sub("", s).replace("&&", "")
    else:
        probe = s.replace("__", "")
    cands = [m.start() for m in re.finditer(re.escape(mark) + r"(?=[^\W_])", probe)]
    if len(cands) != 1:
        return s
    # find the same marker in the original string (skipping doubled ones and entities)
    i = 0
    while i < len(s):
        if s.startswith(mark * 2, i):
            i += 2
            continue
        if mark == "&":
            m = _ENTITY.match(s, i)
            if m:
                i = m.end()
                continue
        if s[i] == mark and i + 1 < len(s) and (s[i + 1].isalnum()):
            return s[:i] + s[i + 1:]
        i += 1
    return s


def _words_with(s: str, mark: str) -> set[str]:
    return {w for w in re.split(r"\s+", s) if mark in w}


def strip_accelerators(src: str, tgt: str) -> tuple[str, str]:
    """Removes keyboard mnemonics from a source/translation pair.

    A word with '_' or '&' that appears verbatim on both sides (an identifier such as
    LC_ALL or file_name, a brand like AT&T) means the marker is not a mnemonic: such pairs are
    left alone for that marker."""
    tgt = _PAREN_MNEMONIC.sub("", tgt)
    src = _PAREN_MNEMONIC.sub("", src)
    for mark in ("_", "&"):
        if mark not in src and mark not in tgt:
            continue
        if _words_with(src, mark) & _words_with(tgt, mark):
            continue
        src = _strip_marker(src, mark)
        tgt = _strip_marker(tgt, mark)
    return src, tgt


# --- placeholders -----------------------------------------------------------------------------

PLACEHOLDER = re.compile(
    r"%(?:\d+\$)?[-+#0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|q|j|z|t|I64|I32)?"
    r"[diouxXeEfFgGaAcCsSpn]"
    r"|%\(\w+\)[-+ #0]*\d*(?:\.\d+)?[sdifrx]"
    r"|%[1-9][0-9]?"
    r"|\{[A-Za-z_0-9.]*\}"
    r"|\$\{\w+\}"
    r"|<[^<>]{1,80}>"
    r"|&[A-Za-z]+;"
)
_PRINTF_POS = re.compile(r"^%\d+\$")


def placeholders(s: str) -> Counter:
    out = Counter()
    for m in PLACEHOLDER.finditer(s.replace("%%", "")):
        p = m.group(0)
        if p.startswith("<") or p.startswith("&"):
            continue                         # markup: checked separately, not as a placeholder
        out[_PRINTF_POS.sub("%", p)] += 1    # %1$s and %s are the same kind
    return out


def has_words(s: str) -> bool:
    """True when something other than placeholders, markup, digits and punctuation is left."""
    rest = PLACEHOLDER.sub(" ", s.replace("%%", ""))
    return any(ch.isalpha() for ch in rest)


# --- scripts ----------------------------------------------------------------------------------

_RANGES = {
    "Latin": [(0x41, 0x5A), (0x61, 0x7A), (0xC0, 0x24F), (0x1E00, 0x1EFF)],
    "Han": [(0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FFFF)],
    "Kana": [(0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F)],
    "Hangul": [(0xAC00, 0xD7AF), (0x1100, 0x11FF), (0x3130, 0x318F)],
    "Cyrillic": [(0x400, 0x52F)],
    "Arabic": [(0x600, 0x6FF), (0x750, 0x77F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF)],
    "Hebrew": [(0x590, 0x5FF)],
    "Devanagari": [(0x900, 0x97F)],
    "Bengali": [(0x980, 0x9FF)],
    "Gujarati": [(0xA80, 0xAFF)],
    "Tamil": [(0xB80, 0xBFF)],
    "Telugu": [(0xC00, 0xC7F)],
    "Thai": [(0xE00, 0xE7F)],
    "Tibetan": [(0xF00, 0xFFF)],
    "Myanmar": [(0x1000, 0x109F)],
    "Khmer": [(0x1780, 0x17FF)],
}
LANG_SCRIPTS = {
    "zh": {"Han"}, "zh-Hant": {"Han"}, "yue": {"Han"}, "ja": {"Han", "Kana"}, "ko": {"Hangul", "Han"},
    "ru": {"Cyrillic"}, "uk": {"Cyrillic"}, "kk": {"Cyrillic"}, "mn": {"Cyrillic"},
    "ar": {"Arabic"}, "fa": {"Arabic"}, "ur": {"Arabic"}, "ug": {"Arabic"}, "he": {"Hebrew"},
    "hi": {"Devanagari"}, "mr": {"Devanagari"}, "bn": {"Bengali"}, "gu": {"Gujarati"},
    "ta": {"Tamil"}, "te": {"Telugu"}, "th": {"Thai"}, "bo": {"Tibetan"}, "my": {"Myanmar"},
    "km": {"Khmer"},
}
CJK = {"zh", "zh-Hant", "yue", "ja", "ko"}


def _script_of(ch: str) -> str | None:
    c = ord(ch)
    for name, ranges in _RANGES.items():
        for lo, hi in ranges:
            if lo <= c <= hi:
                return name
    return None


def script_share(s: str, scripts: set[str]) -> tuple[int, float]:
    """(number of units, share of them in `scripts`), placeholders and markup not counted. A
    unit is one Han or kana character, or one run of letters of another script (a word), so
    that "SIM 锁" and "OneDrive 导出" count as Chinese."""
    rest = PLACEHOLDER.sub(" ", s)
    units, prev = [], None
    for ch in rest:
        if not ch.isalpha():
            prev = None
            continue
        sc = _script_of(ch)
        if sc in ("Han", "Kana") or sc != prev:
            units.append(sc)
        prev = sc
    if not units:
        return 0, 0.0
    hit = sum(1 for sc in units if sc in scripts)
    return len(units), hit / len(units)


def target_script_ok(lang: str, tgt: str) -> bool:
    n, share = script_share(tgt, LANG_SCRIPTS.get(lang, {"Latin"}))
    if n == 0:
        return False
    if lang in LANG_SCRIPTS:
        return share >= 0.3           # brand names and code words in Latin letters are common
    return share >= 0.9


def source_is_english_like(src: str) -> bool:
    n, share = script_share(src, {"Latin"})
    return n > 0 and share >= 0.95


# --- normalisation ----------------------------------------------------------------------------

_CREDITS = re.compile(
    r"^(?:_:\s*)?(?:translator[-_ ]?credits|NAME OF TRANSLATORS|EMAIL OF TRANSLATORS|"
    r"Your names?|Your emails?|ROLES_OF_TRANSLATORS|CREDIT_FOR_TRANSLATORS|translated-by)\b",
    re.IGNORECASE)
_QUALIFIER = re.compile(r"^[A-Za-z][\w-]*\|(.+)$", re.S)   # glib's Q_("Qualifier|Text")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b\u2028\u2029\ufeff]")


def normalise(s: str) -> str:
    s = unicodedata.normalize("NFC", s.replace("\r\n", "\n").replace("\r", "\n"))
    return s.strip()


def clean_pair(lang: str, src: str, tgt: str, *, max_src: int = 200, max_tgt: int = 300):
    """Returns (source, translation) ready for training, or (None, reason) when dropped."""
    if _CREDITS.match(src):
        return None, "credits"
    if src.startswith("_:") and "\n" in src:                # KDE 3 comment prefix
        src = src.split("\n", 1)[1]
    m = _QUALIFIER.match(src)
    if m and "|" not in tgt:
        src = m.group(1)
    src, tgt = normalise(src), normalise(tgt)
    src, tgt = strip_accelerators(src, tgt)
    if "\t" in src or "\t" in tgt or _CONTROL.search(src) or _CONTROL.search(tgt):
        return None, "control"
    if not src or not tgt:
        return None, "empty"
    if src == tgt:
        return None, "identical"
    if not (1 <= len(src) <= max_src) or len(tgt) > max_tgt:
        return None, "length"
    if not has_words(src) or not has_words(tgt):
        return None, "no_words"
    if not source_is_english_like(src):
        return None, "source_not_english"
    if not target_script_ok(lang, tgt):
        return None, "target_script"
    longest = max(len(src), len(tgt))
    if longest >= 12:
        r = len(tgt) / len(src)
        lo, hi = (0.1, 2.5) if lang in CJK else (0.3, 3.5)
        if not lo <= r <= hi:
            return None, "ratio"
    if placeholders(src) != placeholders(tgt):
        return None, "placeholders"
    if src.count("\n") != tgt.count("\n") and (src.count("\n") > 0) != (tgt.count("\n") > 0):
        return None, "lines"
    return (src, tgt), None


# --- TSV --------------------------------------------------------------------------------------

def tsv_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def tsv_unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(n, "\\" + n))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)
