"""Archive records (WARC 0.17-1.1 and ARC v1/v2, gzipped or not) with exact offsets.

``iter_records`` yields :class:`Record` for every record it can parse and
:class:`BadRecord` for every piece of damage (with file, offset and reason), and goes on
after damage wherever the format lets it resynchronise. Content is capped at
``max_content`` bytes; the rest of an oversized record is skipped, never held.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import uuid
from dataclasses import dataclass, field
from typing import BinaryIO, Iterator

from lib.warc.streams import GZIP_MAGIC, ByteReader, GzipMembers, Member, PlainReader

MAX_HEADER_LINES = 512


@dataclass
class Record:
    file: str
    offset: int | None  # of the gzip member (gz) or the record (plain); None if not addressable
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
    warning: str | None = None  # e.g. multi_record_member


@dataclass
class BadRecord:
    file: str
    offset: int | None
    reason: str
    detail: str


class RecordError(Exception):
    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def sha1_digest(payload: bytes) -> str:
    """A WARC-Payload-Digest value: ``sha1:`` + base32 of the payload's SHA-1."""
    return "sha1:" + base64.b32encode(hashlib.sha1(payload).digest()).decode()


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


def _skip_blank(r: ByteReader) -> None:
    while r.peek(1) in (b"\r", b"\n"):
        r.read(1)


def _read_content(r: ByteReader, n: int, cap: int) -> tuple[bytes, bool]:
    data = r.read(min(n, cap))
    got = len(data)
    if n > cap:
        got += r.skip(n - cap)
    if got < n:
        raise RecordError("truncated_record", f"record block declares {n} bytes, only {got} present")
    return data, n > cap


def parse_warc(r: ByteReader, file: str, cap: int) -> Record:
    line = r.readline()
    if not line.startswith(b"WARC/"):
        raise RecordError("malformed_warc_header", f"expected 'WARC/x.y' version line, found {line[:40]!r}")
    headers: dict[str, str] = {}
    last = None
    for _ in range(MAX_HEADER_LINES):
        line = r.readline()
        if not line:
            raise RecordError("truncated_record", "file ends inside the WARC header")
        if line in (b"\r\n", b"\n"):
            break
        if line[:1] in (b" ", b"\t") and last:
            headers[last] += " " + line.strip().decode("utf-8", "replace")
            continue
        name, sep, value = line.partition(b":")
        if not sep or not name.strip():
            raise RecordError("malformed_warc_header", f"header line without a name: {line[:60]!r}")
        last = name.strip().decode("utf-8", "replace").lower()
        headers[last] = value.strip().decode("utf-8", "replace")
    else:
        raise RecordError("malformed_warc_header", f"more than {MAX_HEADER_LINES} header lines")
    try:
        n = int(headers.get("content-length", ""))
        if n < 0:
            raise ValueError
    except ValueError:
        raise RecordError("malformed_warc_header", f"bad Content-Length {headers.get('content-length')!r}") from None
    content, oversized = _read_content(r, n, cap)
    url = headers.get("warc-target-uri", "").strip("<> ")
    return Record(
        file=file, offset=None, length=None, fmt="warc",
        rec_type=headers.get("warc-type", "").lower(), url=url,
        date=parse_warc_date(headers.get("warc-date")),
        record_id=headers.get("warc-record-id", ""), headers=headers,
        content=content, content_length=n, oversized=oversized,
    )


def parse_arc(r: ByteReader, file: str, cap: int, offset_hint: int) -> Record:
    line = r.readline()
    parts = line.strip().split(b" ")
    if len(parts) < 5 or not parts[-1].isdigit():
        raise RecordError("malformed_arc_header", f"expected 'URL IP DATE MIME LENGTH', found {line[:80]!r}")
    url = parts[0].decode("utf-8", "replace")
    n = int(parts[-1])
    content, oversized = _read_content(r, n, cap)
    is_desc = url.startswith("filedesc://")
    rid = uuid.uuid5(uuid.NAMESPACE_URL, f"{file}#{offset_hint}")
    mime = parts[3].decode("utf-8", "replace")
    return Record(
        file=file, offset=None, length=None, fmt="arc",
        rec_type="warcinfo" if is_desc else "response", url=url,
        date=parse_warc_date(parts[2].decode("ascii", "replace")),
        record_id=f"<urn:uuid:{rid}>",
        headers={"warc-ip-address": parts[1].decode("ascii", "replace"), "content-type": mime},
        content=content, content_length=n, oversized=oversized,
    )


def _parse(r: ByteReader, fmt: str, file: str, cap: int, offset_hint: int) -> Record:
    if fmt == "warc":
        return parse_warc(r, file, cap)
    return parse_arc(r, file, cap, offset_hint)


def sniff(head: bytes, name: str) -> tuple[bool, str | None]:
    """(gzipped, "warc"/"arc"/None) from a file's first bytes and its name."""
    if head.startswith(GZIP_MAGIC):
        return True, "arc" if ".arc" in name.rsplit("/", 1)[-1] else "warc"
    text = head.lstrip(b"\r\n")
    if text.startswith(b"WARC/"):
        return False, "warc"
    if text.startswith(b"filedesc://"):
        return False, "arc"
    return False, None


def _iter_gzip(raw: BinaryIO, file: str, fmt: str, cap: int) -> Iterator[Record | BadRecord]:
    members = GzipMembers(raw)
    seen_errors = 0

    def new_errors():
        nonlocal seen_errors
        for e in members.errors[seen_errors:]:
            yield BadRecord(file, e.offset, e.reason, e.detail)
        seen_errors = len(members.errors)

    for m in members:
        yield from new_errors()
        yield from _records_in_member(m, file, fmt, cap)
    yield from new_errors()


def _records_in_member(m: Member, file: str, fmt: str, cap: int) -> Iterator[Record | BadRecord]:
    first = True
    while True:
        _skip_blank(m)
        if not m.peek(1):
            return
        try:
            rec = _parse(m, fmt, file, cap, m.offset)
        except RecordError as e:
            if m.error is None:  # stream damage is reported by GzipMembers, not twice
                yield BadRecord(file, m.offset, e.reason, e.detail)
            return
        if m.error is not None:
            return
        _skip_blank(m)
        if first and not m.peek(1):
            m.drain()
            if not m.complete:
                return  # the member's damage is reported by GzipMembers
            rec.offset, rec.length = m.offset, m.length
            yield rec
            return
        rec.warning = "multi_record_member"
        first = False
        yield rec


def _iter_plain(raw: BinaryIO, file: str, fmt: str, cap: int) -> Iterator[Record | BadRecord]:
    r = PlainReader(raw)
    while True:
        _skip_blank(r)
        if not r.peek(1):
            return
        start = r.tell()
        try:
            rec = _parse(r, fmt, file, cap, start)
        except RecordError as e:
            yield BadRecord(file, start, e.reason, e.detail)
            if fmt != "warc" or e.reason == "truncated_record" or not _resync_plain(r):
                return
            continue
        # a record ends with two CRLFs (WARC) or one LF (ARC); count them in its length
        for _ in range(2 if fmt == "warc" else 1):
            if r.peek(2) == b"\r\n":
                r.read(2)
            elif r.peek(1) == b"\n":
                r.read(1)
        rec.offset, rec.length = start, r.tell() - start
        yield rec


def _resync_plain(r: PlainReader) -> bool:
    """Skip lines until one starts a WARC record; False at EOF."""
    while True:
        if r.peek(5) == b"WARC/":
            return True
        if not r.readline():
            return False


def iter_records(raw: BinaryIO, file: str, max_content: int = 10 << 20) -> Iterator[Record | BadRecord]:
    """Every record of an archive stream, in order; damage as :class:`BadRecord`."""
    head = raw.peek(16)[:16] if hasattr(raw, "peek") else b""
    gz, fmt = sniff(head, file)
    if fmt is None:
        if not head:
            return
        yield BadRecord(file, 0, "not_an_archive", f"neither gzip nor WARC/ARC: starts with {head[:12]!r}")
        return
    if gz:
        yield from _iter_gzip(raw, file, fmt, max_content)
    else:
        yield from _iter_plain(raw, file, fmt, max_content)
