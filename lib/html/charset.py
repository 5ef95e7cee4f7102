"""Decode HTML bytes: BOM, HTTP charset, <meta> charset, UTF-8, then detection."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_META = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)""", re.I)
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# WHATWG: these labels mean windows-1252 on the web
_ALIASES = {"iso-8859-1": "cp1252", "latin-1": "cp1252", "ascii": "cp1252", "us-ascii": "cp1252", "iso8859-1": "cp1252"}


@dataclass
class Decoded:
    text: str
    charset: str
    source: str  # bom, http, meta, utf-8, detected, fallback
    replaced: bool  # invalid bytes were replaced


def codec_name(label: str | None) -> str | None:
    """Python codec name for a charset label, or None if unknown."""
    if not label:
        return None
    try:
        name = codecs.lookup(label.strip().strip("\"'").lower()).name
    except LookupError:
        return None
    return _ALIASES.get(name, name)


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
        name = codec_name(label)
        if name and name not in [d[0] for d in declared]:
            declared.append((name, src))
    for name, src in declared:
        try:
            return Decoded(body.decode(name), name, src, False)
        except UnicodeDecodeError:
            continue
    try:
        return Decoded(body.decode("utf-8"), "utf-8", "utf-8", False)
    except UnicodeDecodeError:
        pass
    if declared:
        name, src = declared[0]
        return Decoded(body.decode(name, "replace"), name, src, True)
    from charset_normalizer import from_bytes

    best = from_bytes(body[:65536]).best()
    name = codec_name(best.encoding) if best is not None else None
    if name:
        text = body.decode(name, "replace")
        return Decoded(text, name, "detected", "\ufffd" in text)
    return Decoded(body.decode("cp1252", "replace"), "cp1252", "fallback", True)
