"""Decode HTML bytes: BOM, HTTP charset, <meta> charset, UTF-8, then detection.

Charset labels mean what the WHATWG Encoding Standard says they mean, because that is
how browsers (and so the pages' authors) read them: ``gb2312`` is GBK (decoded as
gb18030, its superset), ``shift_jis`` is Windows-31J (cp932), ``euc-kr`` is cp949,
``iso-8859-1``/``ascii`` are windows-1252, and windows-1252's five unassigned bytes
are C1 controls rather than errors. Python's strict codecs of the same names reject
bytes every browser shows.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from charset_normalizer import from_bytes
from webencodings.labels import LABELS as WHATWG_LABELS

_META = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)""", re.I)
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# WHATWG encoding name -> the Python codec that decodes like a browser does
_PYTHON_CODEC = {
    "gbk": "gb18030",
    "shift_jis": "cp932",
    "euc-kr": "cp949",
    "big5": "big5hkscs",
    "windows-1252": "cp1252",
    "iso-8859-8-i": "iso8859-8",
    "x-mac-cyrillic": "mac-cyrillic",
    "macintosh": "mac-roman",
    "windows-874": "cp874",
}
_C1_BYTES = frozenset(b"\x81\x8d\x8f\x90\x9d")  # unassigned in Python's cp1252


def _c1_passthrough(err: UnicodeError):
    """Decode error handler: windows-1252's unassigned bytes become U+0081.. as in browsers."""
    if isinstance(err, UnicodeDecodeError):
        chunk = err.object[err.start : err.end]
        if all(b in _C1_BYTES for b in chunk):
            return "".join(map(chr, chunk)), err.end
    raise err


codecs.register_error("dailyslice-c1", _c1_passthrough)


@dataclass
class Decoded:
    text: str
    charset: str
    source: str  # bom, http, meta, utf-8, detected, fallback
    replaced: bool  # invalid bytes were replaced


def codec_name(label: str | None) -> str | None:
    """Python codec name for a charset label as the WHATWG Encoding Standard maps it, or None
    if the label is unknown or means the 'replacement' encoding (ISO-2022-KR, HZ, ...)."""
    if not label:
        return None
    key = label.strip().strip("\"'").strip().lower()
    whatwg = WHATWG_LABELS.get(key)
    if whatwg is None:
        # not a WHATWG label: Python's own aliases (utf_8, latin_1, ...) as a last resort
        try:
            whatwg = codecs.lookup(key).name
        except LookupError:
            return None
        whatwg = WHATWG_LABELS.get(whatwg, whatwg)
    if whatwg == "replacement":
        return None
    try:
        return codecs.lookup(_PYTHON_CODEC.get(whatwg, whatwg)).name
    except LookupError:
        return None


def _strict(name: str) -> str:
    return "dailyslice-c1" if name == "cp1252" else "strict"


def meta_charset(head: bytes) -> str | None:
    m = _META.search(head)
    return m.group(1).decode("ascii", "ignore") if m else None


def decode_html(body: bytes, http_charset: str | None = None) -> Decoded:
    """Text of an HTML body. Declared charsets are tried strictly first; a page whose bytes
    are invalid in its declared charset is decoded with replacement and flagged."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return Decoded(body[len(bom) :].decode(name, "replace"), name, "bom", False)
    declared: list[tuple[str, str]] = []
    for src, label in (("http", http_charset), ("meta", meta_charset(body[:4096]))):
        codec = codec_name(label)
        if codec and codec not in [d[0] for d in declared]:
            declared.append((codec, src))
    for name, src in declared:
        try:
            return Decoded(body.decode(name, _strict(name)), name, src, False)
        except UnicodeDecodeError:
            continue
    try:
        return Decoded(body.decode("utf-8"), "utf-8", "utf-8", False)
    except UnicodeDecodeError:
        pass
    if declared:
        name, src = declared[0]
        return Decoded(body.decode(name, "replace"), name, src, True)
    best = from_bytes(body[:65536]).best()
    detected = codec_name(best.encoding) if best is not None else None
    if detected:
        text = body.decode(detected, "replace")
        return Decoded(text, detected, "detected", "\ufffd" in text)
    return Decoded(body.decode("cp1252", "dailyslice-c1"), "cp1252", "fallback", True)
