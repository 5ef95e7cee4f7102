"""Index lines written elsewhere, as OutbackCDX takes them: CDXJ lines or 11-column CDX lines
(the legend ``N b a m s k r M S V g``, with or without its `` CDX`` header), checked and turned
into the capture index's CDXJ lines (lib.catalogue.capindex.add_lines).

Each line's key is computed again from its URL (lib.pages.weburls.surt_key, as the day's CDXJ
is keyed), as OutbackCDX canonicalises what it is given: a look-up finds it whatever key the
writer used. A batch with one bad line is refused whole, naming the line and why: nothing of it
is added.
"""

from __future__ import annotations

import json

from lib.catalogue.cdxj import CDXJError, parse_line
from lib.errors import UsageError
from lib.pages.weburls import surt_key

MAX_LINES = 1_000_000  # one batch; more is refused, not cut
#: the 11-column legend's fields after N and b, as the CDXJ names them (None: not kept)
CDX11 = ("url", "mime", "status", "digest", None, None, "length", "offset", "filename")


class CdxLineError(UsageError):  # a ValueError too: HTTP 400
    """A batch the index refuses: the message names the line (1-based) and why."""


def _cdxj(n: int, line: str) -> str:
    try:
        _, ts, fields = parse_line(line, f"line {n}")
    except CDXJError as e:
        raise CdxLineError(str(e)) from None
    return _line(n, ts, fields)


def _cdx(n: int, line: str) -> str:
    cols = line.split(" ")
    if len(cols) != 11:
        raise CdxLineError(f"line {n}: a CDX line has the 11 fields N b a m s k r M S V g, this one {len(cols)}")
    fields = {name: v for name, v in zip(CDX11, cols[2:]) if name and v != "-"}
    return _line(n, cols[1], fields)


def _line(n: int, ts: str, fields: dict) -> str:
    if len(ts) != 14 or not ts.isdigit():
        raise CdxLineError(f"line {n}: timestamp must be 14 digits, got {ts!r}")
    url = fields.get("url")
    if not isinstance(url, str) or not url:
        raise CdxLineError(f"line {n}: no url")
    for name in ("offset", "length"):
        if name in fields and not str(fields[name]).isdigit():
            raise CdxLineError(f"line {n}: {name} must be a whole number, got {fields[name]!r}")
    body = json.dumps({k: str(v) for k, v in fields.items()}, ensure_ascii=False, separators=(",", ":"))
    return f"{surt_key(url)} {ts} {body}"


def parse_batch(text: str) -> list[str]:
    """The CDXJ lines of a POSTed batch (blank lines and a `` CDX`` header skipped; each line CDXJ
    if its third field starts a JSON object, else 11-column CDX). CdxLineError on the first bad line."""
    out: list[str] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip("\r")
        if not line.strip() or line.startswith(" CDX"):
            continue
        if len(out) >= MAX_LINES:
            raise CdxLineError(f"more than {MAX_LINES} lines in one batch: post them in several")
        parts = line.split(" ", 2)
        out.append(_cdxj(n, line) if len(parts) == 3 and parts[2].startswith("{") else _cdx(n, line))
    if not out:
        raise CdxLineError("no index line in the batch")
    return out
