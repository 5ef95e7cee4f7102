"""The day's CDX beside its CDXJ: the common 11-column legend `` CDX N b a m s k r M S V g``,
as pywb's ``cdx-indexer`` writes it (Wayback-era tools read this, not CDXJ).

Each line is the CDXJ line's fields in the legend's order (massaged url = the SURT key,
date, original url, mime, status, digest, redirect, meta tags, compressed length, offset,
file name), ``-`` where a field has no value (pywb writes ``- -`` for redirect and meta
tags). Fields are separated by single spaces, so whitespace inside a value is
percent-escaped (``%20``). Lines are sorted as pywb's sorted writer sorts them (whole lines,
code point = UTF-8 byte order), after the header line.

Written from the sorted CDXJ in one streaming pass: CDXJ lines are in (key, timestamp)
order already (keys hold no byte below ``!``), and CDX lines sort the same way except among
lines of equal key and timestamp, so only those small groups are re-sorted.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Iterable, Iterator

from lib.store import atomic

HEADER = " CDX N b a m s k r M S V g"
#: the CDXJ fields after key and timestamp, in the legend's order (None: always '-')
FIELDS = ("url", "mime", "status", "digest", None, None, "length", "offset", "filename")
_SPACE = re.compile(r"[\x00-\x20\x7f]")


def cdx_field(value: object) -> str:
    """One CDX field: ``-`` for no value, whitespace and control bytes percent-escaped."""
    if value is None or value == "":
        return "-"
    return _SPACE.sub(lambda m: f"%{ord(m.group()):02X}", str(value))


def cdx_line(key: str, timestamp: str, fields: dict) -> str:
    """The 11-column CDX line (no newline) of a CDXJ line's key, timestamp and JSON fields."""
    return " ".join([key, timestamp, *(cdx_field(fields.get(f)) if f else "-" for f in FIELDS)])


def cdx_lines(cdxj_lines: Iterable[str]) -> Iterator[str]:
    """CDX lines in sort order from CDXJ lines in sort order (pywb meta lines ``!`` skipped)."""
    parsed = (ln.rstrip("\n").split(" ", 2) for ln in cdxj_lines if ln.strip() and not ln.startswith("!"))
    for _, group in itertools.groupby(parsed, key=lambda p: (p[0], p[1])):
        lines = [cdx_line(key, ts, json.loads(body)) for key, ts, body in group]
        yield from sorted(lines, key=lambda s: s.encode("utf-8", "surrogateescape")) if len(lines) > 1 else lines


def write_cdx(cdxj_path: str, dest: str) -> int:
    """Write the CDX of the sorted CDXJ file ``cdxj_path`` to ``dest`` (atomically); returns
    its line count without the header."""
    count = 0
    with (
        open(cdxj_path, encoding="utf-8", errors="surrogateescape") as src,
        atomic.atomic_file(dest, "w", newline="\n", encoding="utf-8", errors="surrogateescape") as out,
    ):
        out.write(HEADER + "\n")
        for line in cdx_lines(src):
            out.write(line + "\n")
            count += 1
    return count
