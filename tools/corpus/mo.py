"""A reader of GNU gettext binary catalogs (.mo), standard library only.

Format (GNU gettext manual, "The Format of GNU MO Files"): a 28-byte header (magic 0x950412de
in the file's byte order, revision, number of strings N, offset of the original-string table,
offset of the translation table, hash table size and offset), then two tables of N
(length, offset) pairs. An original string is `msgctxt \\x04 msgid`, with `\\0 msgid_plural`
appended for plural entries; its translation is the plural forms joined by `\\0`. The entry
with the empty msgid is the header (Content-Type charset, Plural-Forms, Language).

A .mo file holds no fuzzy entries (msgfmt leaves them out unless --use-fuzzy) and no
untranslated ones, apart from catalogs built with --use-untranslated style options, so those are
handled by dropping pairs whose translation is empty or equal to the source.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass


@dataclass
class MoEntry:
    context: str | None
    msgid: str
    msgid_plural: str | None
    msgstr: list[str]          # one element, or the plural forms


@dataclass
class MoCatalog:
    headers: dict[str, str]
    entries: list[MoEntry]

    @property
    def nplurals(self) -> int | None:
        m = re.search(r"nplurals\s*=\s*(\d+)", self.headers.get("Plural-Forms", ""))
        return int(m.group(1)) if m else None


class MoError(ValueError):
    pass


def _charset(header_text: str) -> str:
    m = re.search(r"charset=([A-Za-z0-9_.:-]+)", header_text)
    cs = m.group(1) if m else "utf-8"
    return "utf-8" if cs.upper() in ("CHARSET", "") else cs


def parse_mo(data: bytes) -> MoCatalog:
    if len(data) < 28:
        raise MoError("too short for a .mo header")
    magic_le = struct.unpack("<I", data[:4])[0]
    if magic_le == 0x950412DE:
        end = "<"
    elif magic_le == 0xDE120495:
        end = ">"
    else:
        raise MoError("bad magic number")
    _rev, n, o_orig, o_tran = struct.unpack(end + "4I", data[4:20])
    if o_orig + 8 * n > len(data) or o_tran + 8 * n > len(data):
        raise MoError("string tables run past the end of the file")

    def strings(offset: int) -> list[bytes]:
        out = []
        for i in range(n):
            length, off = struct.unpack(end + "2I", data[offset + 8 * i: offset + 8 * i + 8])
            if off + length > len(data):
                raise MoError("string runs past the end of the file")
            out.append(data[off: off + length])
        return out

    originals, translations = strings(o_orig), strings(o_tran)
    charset = "utf-8"
    headers: dict[str, str] = {}
    for o, t in zip(originals, translations):
        if o == b"":
            text = t.decode("utf-8", errors="replace")
            charset = _charset(text)
            try:
                text = t.decode(charset, errors="replace")
            except LookupError:
                charset = "utf-8"
            for line in text.splitlines():
                k, sep, v = line.partition(":")
                if sep:
                    headers[k.strip()] = v.strip()
            break

    def dec(b: bytes) -> str:
        try:
            return b.decode(charset, errors="replace")
        except LookupError:
            return b.decode("utf-8", errors="replace")

    entries = []
    for o, t in zip(originals, translations):
        if o == b"":
            continue
        ctx = None
        if b"\x04" in o:
            c, o = o.split(b"\x04", 1)
            ctx = dec(c)
        ids = o.split(b"\x00")
        entries.append(MoEntry(ctx, dec(ids[0]), dec(ids[1]) if len(ids) > 1 else None,
                               [dec(s) for s in t.split(b"\x00")]))
    return MoCatalog(headers, entries)


def pairs(cat: MoCatalog):
    """(context, source, translation) pairs of a catalog.

    Plural entries: with two or more plural forms, msgid -> msgstr[0] and
    msgid_plural -> msgstr[1]; with one form (Chinese, Japanese, Korean, ...), the single form
    is the translation of msgid_plural (the general "%d files"), so only that pair is kept.
    """
    np = cat.nplurals
    for e in cat.entries:
        if e.msgid_plural is None:
            yield e.context, e.msgid, e.msgstr[0]
        elif np == 1 or len(e.msgstr) == 1:
            yield e.context, e.msgid_plural, e.msgstr[0]
        else:
            yield e.context, e.msgid, e.msgstr[0]
            yield e.context, e.msgid_plural, e.msgstr[1]
