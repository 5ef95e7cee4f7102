"""Archive records (WARC 0.17-1.1 and ARC v1/v2; gzip, zstd, LZ4 or none) with exact offsets.

``iter_records`` yields :class:`Record` for every record it can parse and
:class:`BadRecord` for every piece of damage (with file, offset and reason), and goes on
after damage wherever the format lets it resynchronise. Content is capped at
``max_content`` bytes; the rest of an oversized record is skipped, never held.

As lenient as warcio and FastWARC where they read a record: the compression is sniffed
from the first bytes and the format (WARC or ARC) from each record's first line, never
from the file name; folded and junk WARC header lines and any line ending are read; a
record continued across compressed members is joined; a record cut off by the end of
the file is returned with what is there, flagged ``truncated``.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from lib.warc.parse import Record, RecordError, arc_fields, parse_record
from lib.warc.streams import PADDING, ByteReader, GzipMembers, Member, PlainReader, sniff_codec

__all__ = ["ARCHIVE_SUFFIXES", "BadRecord", "Record", "iter_records", "sha1_digest"]
#: names of archive files a day's folder is searched for (any case; the content decides the format)
ARCHIVE_SUFFIXES = (".warc.gz", ".warc", ".arc.gz", ".arc", ".warc.zst", ".warc.lz4")


@dataclass
class BadRecord:
    file: str
    offset: int | None
    reason: str
    detail: str


def sha1_digest(payload: bytes) -> str:
    """A WARC-Payload-Digest value: ``sha1:`` + base32 of the payload's SHA-1."""
    return "sha1:" + base64.b32encode(hashlib.sha1(payload).digest()).decode()


def _skip_blank(r: ByteReader) -> None:
    """Skip the line ends between records (and space or NUL padding some writers leave)."""
    while True:
        head = r.peek(64)
        n = len(head) - len(head.lstrip(PADDING))
        if n == 0:
            return
        r.read(n)


def _truncated(rec: Record) -> None:
    rec.truncated = True
    got = rec.content_length - rec.missing
    rec.warnings.append(("truncated_record", f"record block declares {rec.content_length} bytes, the file holds {got}"))


def _extend(rec: Record, m: Member, cap: int) -> None:
    """Read the rest of ``rec``'s block from the next member ``m`` (within ``cap``)."""
    room = max(0, cap - len(rec.content))
    take = min(rec.missing, room)
    data = m.read(take)
    got = len(data)
    if rec.missing > take:
        got += m.skip(rec.missing - take)
    rec.content += data
    rec.missing -= got


class _State:
    """What the records of one file share: its name, the content cap, the format seen last."""

    def __init__(self, file: str, cap: int, name: str | None = None):
        self.file = file
        self.name = name
        self.cap = cap
        self.fmt = "warc"

    def parse(self, r: ByteReader, offset_hint: int) -> Record:
        rec = parse_record(r, self.file, self.cap, offset_hint, self.fmt, self.name)
        self.fmt = rec.fmt
        return rec


def _records_in_member(m: Member, members: Iterator[Member], st: _State) -> Iterator[Record | BadRecord]:
    """The records starting in member ``m``; a record whose block goes on past the end of its
    member takes the following members from ``members``."""
    first = True
    cur = m
    while True:
        _skip_blank(cur)
        if not cur.peek(1):
            return
        start = cur
        try:
            rec = st.parse(cur, cur.offset)
        except RecordError as e:
            if cur.error is None:  # stream damage is reported by GzipMembers, not twice
                yield BadRecord(st.file, cur.offset, e.reason, e.detail)
            return
        spanned = False
        while rec.missing and cur.complete:  # the member ended cleanly: the block goes on in the next
            nxt = next(members, None)
            if nxt is None:
                break
            cur, spanned = nxt, True
            _extend(rec, cur, st.cap)
        if rec.missing or cur.error is not None:
            if cur.error is not None and not cur.error.reason.startswith("truncated_"):
                return  # corrupt data inside the block: reported by GzipMembers
            if rec.missing:
                _truncated(rec)
            else:  # the block is whole, the file ends inside the member's trailer
                rec.truncated = True
                rec.warnings.append(("truncated_member", "the file ends inside this record's compressed member"))
            cur.drain()
            cur.absorbed = True  # the record carries the damage as its warning
        _skip_blank(cur)
        ends = not cur.peek(1)
        if ends:
            cur.drain()
        if first and ends and (cur.complete or rec.truncated):
            end = cur.offset + cur.length if cur.complete and cur.length is not None else cur.owner._pos
            rec.offset, rec.length = start.offset, end - start.offset
            if spanned:
                rec.warnings.append(("record_spans_members", "record block continues in the next compressed member(s)"))
        else:
            rec.warnings.append(
                ("multi_record_member", "record shares its compressed member with others: no byte range")
            )
        yield rec
        if ends or rec.truncated:
            return
        first = False


def _iter_members(
    raw: BinaryIO, codec: str, st: _State, start: int = 0, stop: int | None = None
) -> Iterator[Record | BadRecord]:
    members = GzipMembers(raw, codec=codec, start=start)
    it = iter(members)
    seen = 0
    while True:
        m = next(it, None)
        for e in members.errors[seen:]:  # damage before m
            yield BadRecord(st.file, e.offset, e.reason, e.detail)
        seen = len(members.errors)
        if m is None:
            return
        if stop is not None and m.offset >= stop and m.peek(5).upper() == b"WARC/":
            return  # the next range's first member (lib.warc.split.member_start finds the same)
        yield from _records_in_member(m, it, st)


def _iter_plain(r: PlainReader, st: _State) -> Iterator[Record | BadRecord]:
    while True:
        _skip_blank(r)
        if not r.peek(1):
            return
        start = r.tell()
        try:
            rec = st.parse(r, start)
        except RecordError as e:
            yield BadRecord(st.file, start, e.reason, e.detail)
            if e.reason == "truncated_record" or not _resync_plain(r):
                return
            continue
        if rec.missing:
            _truncated(rec)
        # a record ends with two CRLFs (WARC) or one LF (ARC); count them in its length
        for _ in range(2 if rec.fmt == "warc" else 1):
            if r.peek(2) == b"\r\n":
                r.read(2)
            elif r.peek(1) == b"\n":
                r.read(1)
        rec.offset, rec.length = start, r.tell() - start
        yield rec
        if rec.truncated:
            return


def _starts_record(line: bytes) -> bool:
    return line[:5].upper() == b"WARC/" or arc_fields(line) is not None


def _starts_archive(line: bytes) -> bool:
    """A file's first line: a record, or an ARC file header however broken its fields are."""
    return _starts_record(line) or line[:11].lower() == b"filedesc://"


def _resync_plain(r: PlainReader) -> bool:
    """Skip lines until one starts a WARC or ARC record; False at EOF."""
    while True:
        if _starts_record(r.peek(4096).split(b"\n", 1)[0]):
            return True
        if not r.readline():
            return False


def iter_records(
    raw: BinaryIO,
    file: str,
    max_content: int = 10 << 20,
    name: str | None = None,
    start: int = 0,
    stop: int | None = None,
) -> Iterator[Record | BadRecord]:
    """Every record of an archive stream, in order; damage as :class:`BadRecord`.

    ``file`` names the archive in records and reports; ``name`` (default ``file``) is what
    it is independent of where it is read from, which ARC record ids derive from.

    gzip, zstd and LZ4 are recognised by their magic numbers, WARC and ARC by each
    record's first line: the file name decides nothing.

    A byte range of a gzip file: ``raw`` positioned at file offset ``start``, a member that
    begins a record (:func:`lib.warc.split.member_start`); offsets are the file's, and the read
    ends before the first member at or after ``stop`` that begins a WARC record (the member
    straddling ``stop``, and the members a record spans past it, are this range's). Any other
    file read from 0 is read whole, ``stop`` or not."""
    st = _State(file, max_content, name)
    head = raw.peek(16)[:16] if hasattr(raw, "peek") else b""
    codec = sniff_codec(head)
    if codec != "gzip":
        if start:
            raise ValueError(f"{file}: only a gzip archive is read by byte range, from a member start")
        stop = None  # a file that is not gzip, whatever its name, is read whole by its first range
    if codec is not None:
        yield from _iter_members(raw, codec, st, start, stop)
        return
    r = PlainReader(raw)
    if hasattr(raw, "peek") and not head:
        return
    first = r.peek(4096).lstrip(PADDING).split(b"\n", 1)[0]
    if not first:
        return
    if not _starts_archive(first):
        yield BadRecord(
            file, 0, "not_an_archive", f"neither gzip, zstd, LZ4 nor a WARC/ARC record: starts with {first[:12]!r}"
        )
        return
    yield from _iter_plain(r, st)
