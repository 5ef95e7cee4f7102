"""One archive record from a byte reader: a WARC record or an ARC record, header and block.

Lenient where warcio and FastWARC are: folded header values are joined, header lines that
are not ``Name: value`` are skipped with a warning, any line ending (CRLF, LF, CR CR LF)
ends a line, and an ARC URL may hold spaces. A block shorter than declared (the file ends)
is returned as far as it goes, with ``missing`` set: the caller decides whether the
record goes on in the next compressed member or was cut off.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field

from lib.errors import DailysliceError
from lib.warc.streams import ByteReader

MAX_HEADER_LINES = 512


@dataclass
class Record:
    file: str
    offset: int | None  # of the compressed member or the record (plain); None if not addressable
    length: int | None
    fmt: str  # "warc" or "arc"
    rec_type: str
    url: str
    date: dt.datetime | None
    record_id: str
    headers: dict[str, str] = field(default_factory=dict)  # WARC headers, keys lowercased
    content: bytes = b""
    content_length: int = 0  # declared length of the record block
    oversized: bool = False  # content was cut at max_content
    truncated: bool = False  # the file ends before the declared length: content is partial
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (reason, detail)
    missing: int = 0  # bytes of the declared block not (yet) read


class RecordError(DailysliceError):
    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def parse_warc_date(text: str | None) -> dt.datetime | None:
    """WARC-Date (ISO 8601, 'Z') or ARC 14-digit date -> aware UTC datetime; None if unparsable."""
    if not text:
        return None
    t = text.strip()
    try:
        if t.isdigit() and len(t) >= 8:
            t = (t + "000000")[:14]
            return dt.datetime.strptime(t, "%Y%m%d%H%M%S").replace(tzinfo=dt.timezone.utc)
        d = dt.datetime.fromisoformat(t.replace("Z", "+00:00"))
        return d.astimezone(dt.timezone.utc) if d.tzinfo else d.replace(tzinfo=dt.timezone.utc)
    except ValueError:
        return None


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def clean_uri(uri: str) -> str:
    """A target URI as readers use it: ``<...>`` (wget 1.19) removed, spaces percent-encoded
    (as warcio does), surrounding whitespace gone."""
    uri = uri.strip()
    if uri.startswith("<") and uri.endswith(">"):
        uri = uri[1:-1].strip()
    return uri.replace(" ", "%20")


def read_block(r: ByteReader, n: int, cap: int) -> tuple[bytes, bool, int]:
    """(up to ``cap`` bytes of an ``n``-byte block, whether it was cut at cap, bytes missing)."""
    data = r.read(min(n, cap))
    got = len(data)
    if n > cap:
        got += r.skip(n - cap)
    return data, n > cap, n - got


def parse_warc(r: ByteReader, file: str, cap: int) -> Record:
    line = r.readline()
    if line[:5].upper() != b"WARC/":
        raise RecordError("malformed_warc_header", f"expected 'WARC/x.y' version line, found {line[:40]!r}")
    headers: dict[str, str] = {}
    warnings: list[tuple[str, str]] = []
    last = None
    for _ in range(MAX_HEADER_LINES):
        line = r.readline()
        if not line:
            raise RecordError("truncated_record", "file ends inside the WARC header")
        text = line.rstrip()
        if not text:
            break
        if line[:1] in (b" ", b"\t"):
            if last is not None:  # folded value
                extra = _text(text.strip())
                headers[last] = f"{headers[last]} {extra}" if headers[last] else extra
            continue
        name, sep, value = text.partition(b":")
        name = name.strip()
        if not sep or not name:
            warnings.append(("warc_header_skipped", f"not a header line: {text[:60]!r}"))
            last = None
            continue
        key = _text(name).lower()
        if key in headers:  # readers take the first of repeated headers
            last = None
            continue
        headers[key] = _text(value.strip())
        last = key
    else:
        raise RecordError("malformed_warc_header", f"more than {MAX_HEADER_LINES} header lines")
    try:
        n = int(headers.get("content-length", ""))
        if n < 0:
            raise ValueError
    except ValueError:
        raise RecordError("malformed_warc_header", f"bad Content-Length {headers.get('content-length')!r}") from None
    content, oversized, missing = read_block(r, n, cap)
    return Record(
        file=file, offset=None, length=None, fmt="warc",
        rec_type=headers.get("warc-type", "").strip().lower(), url=clean_uri(headers.get("warc-target-uri", "")),
        date=parse_warc_date(headers.get("warc-date")),
        record_id=headers.get("warc-record-id", ""), headers=headers,
        content=content, content_length=n, oversized=oversized, warnings=warnings, missing=missing,
    )


# URL schemes of ARC records (a header line whose URL has none is misaligned, not a record)
_ARC_SCHEMES = (b"http:", b"https:", b"ftp:", b"dns:", b"filedesc:", b"whois:", b"mailto:", b"gopher:", b"rtsp:",
                b"mms:", b"urn:", b"file:")


def _is_date(token: bytes) -> bool:
    return token.isdigit() and 8 <= len(token) <= 17


def arc_fields(line: bytes) -> tuple[str, str, str, str, int] | None:
    """(url, ip, date, mime, length) of an ARC v1 or v2 header line; None if it is not one.

    ARC v1 is ``URL IP DATE MIME LENGTH``, v2 adds result code, checksum, location, offset
    and file name before LENGTH. The URL may hold spaces, so the fields are found from the
    date: the first 8-17-digit token after an IP-like token."""
    parts = line.split()
    if len(parts) < 5 or not parts[-1].isdigit() or not parts[0].lower().startswith(_ARC_SCHEMES):
        return None
    for i in range(1, len(parts) - 3):
        if _is_date(parts[i + 1]) and (b"." in parts[i] or b":" in parts[i] or parts[i] == b"-"):
            break
    else:  # no date where one should be ('null' is seen): the v1 or v2 layout by field count
        if len(parts) not in (5, 10):
            return None
        i = 1
    url = b" ".join(parts[:i])
    return _text(url), _text(parts[i]), _text(parts[i + 1]), _text(parts[i + 2]), int(parts[-1])


def parse_arc(r: ByteReader, file: str, cap: int, offset_hint: int, name: str | None = None) -> Record:
    """An ARC record. ARC has no record ids: the id is a UUID of the archive's ``name`` (what
    the file is, e.g. its path below the day's folder; default ``file``) and the offset."""
    line = r.readline()
    fields = arc_fields(line)
    if fields is None:
        raise RecordError("malformed_arc_header", f"expected 'URL IP DATE MIME LENGTH', found {line[:80]!r}")
    url, ip, date, mime, n = fields
    content, oversized, missing = read_block(r, n, cap)
    is_desc = url.startswith("filedesc://")
    rid = uuid.uuid5(uuid.NAMESPACE_URL, f"{name or file}#{offset_hint}")
    return Record(
        file=file, offset=None, length=None, fmt="arc",
        rec_type="warcinfo" if is_desc else "response", url=clean_uri(url),
        date=parse_warc_date(date), record_id=f"<urn:uuid:{rid}>",
        headers={"warc-ip-address": ip, "content-type": mime},
        content=content, content_length=n, oversized=oversized, missing=missing,
    )


def parse_record(r: ByteReader, file: str, cap: int, offset_hint: int, hint: str = "warc",
                 name: str | None = None) -> Record:
    """The record at the reader's position, WARC or ARC by its first line.

    ``hint`` (the file's format so far) only names the error when the line is neither;
    ``name`` is what ARC record ids derive from (:func:`parse_arc`)."""
    head = r.peek(5)
    if head.upper() == b"WARC/":
        return parse_warc(r, file, cap)
    if hint == "warc" and head.lower() != b"filed" and arc_fields(r.peek(4096).split(b"\n", 1)[0]) is None:
        return parse_warc(r, file, cap)  # raises malformed_warc_header with the line
    return parse_arc(r, file, cap, offset_hint, name)
