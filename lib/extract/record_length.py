"""The length of a record whose index gives only its offset (a CDX without ``S``).

Legends such as `` CDX A b e a m s c k r V v D d g M n`` (Bui's Node.js document key store)
name where a record starts but not how long it is. The task that opens the archive finds the end itself, reading only
that record:

- compressed files (gzip member, zstd or LZ4 frame): the one member that starts at the
  offset is decompressed (output dropped, memory bounded by the chunk) until it ends; its
  length is the compressed bytes it took, so the raw member is then copied as any other;
- uncompressed WARC/ARC: the header gives the block's end (WARC ``Content-Length``, the ARC
  header line's length field); the record's closing line ends are counted in when the file
  holds them (``lib.extract.terminator`` appends any that are missing).
"""

from __future__ import annotations

from typing import Any, Iterable

from lib.extract.formats import ArchiveFormat
from lib.extract.lines import ExtractError, Item
from lib.extract.terminator import ARC_END, HEAD_SCAN, WARC_END, block_end
from lib.extract.verify import magic_error

FIRST_READ = 64 << 10  # most members are smaller: one read (one GET on S3) each
CHUNK = 1 << 20


def _past_eof(src: Any, offset: int, what: str) -> ExtractError:
    return ExtractError(
        "past-eof", f"{what} at {offset} runs past the end of {src.uri} ({src.size} bytes): truncated file?"
    )


def member_length(src: Any, fmt: ArchiveFormat, offset: int) -> int:
    """Compressed bytes of the one member (gzip member, zstd or LZ4 frame) starting at ``offset``."""
    decoder = fmt.decoder()
    pos, want = offset, FIRST_READ
    while True:
        data = src.head(pos, min(want, src.size - pos)) if pos < src.size else b""
        if not data:
            raise _past_eof(src, offset, f"the {fmt.codec} member")
        if pos == offset and not fmt.starts_record(data):
            raise magic_error(fmt, data[:8])
        view = memoryview(data)
        while view:
            try:
                out, used = decoder.feed(view)
            except ValueError as e:
                raise ExtractError("not-member", f"corrupt {fmt.codec} member at {offset}: {e}") from None
            pos += used
            view = view[used:]
            if decoder.eof:
                return pos - offset
            if not used and not out:
                raise ExtractError("not-member", f"the {fmt.codec} member at {offset} does not decode")
        want = CHUNK


def plain_length(src: Any, fmt: ArchiveFormat, offset: int) -> int:
    """Bytes of the uncompressed WARC/ARC record at ``offset``, its closing line ends included
    as far as the file holds them."""
    head = src.head(offset, HEAD_SCAN)
    if not fmt.starts_record(head):
        raise magic_error(fmt, head[:8])
    end = block_end(fmt.kind, head)
    if end is None:
        what = "Content-Length" if fmt.kind == "warc" else "length field"
        raise ExtractError(
            "not-member", f"record header at {offset} has no readable {what} in its first {HEAD_SCAN} bytes"
        )
    if offset + end > src.size:
        raise _past_eof(src, offset, "the record")
    term = WARC_END if fmt.kind == "warc" else ARC_END
    tail = src.head(offset + end, len(term))
    k = 0
    while k < len(tail) and tail[k] == term[k]:
        k += 1
    return end + k


def record_length(src: Any, fmt: ArchiveFormat, offset: int) -> int:
    """The length of the record at ``offset`` of the open source ``src`` (``head(offset, n)``,
    ``size``, ``uri``) of format ``fmt``; :class:`ExtractError` when none starts there."""
    if offset >= src.size:
        raise _past_eof(src, offset, "the record")
    if fmt.codec is not None:
        return member_length(src, fmt, offset)
    return plain_length(src, fmt, offset)


def measure_items(
    src: Any, fmt: ArchiveFormat, items: Iterable[Item]
) -> tuple[list[Item], list[tuple[Item, ExtractError]]]:
    """``items`` with every unknown length (0) found in the archive; the items whose record
    could not be measured come back with their error instead."""
    done: list[Item] = []
    failed: list[tuple[Item, ExtractError]] = []
    for it in items:
        if it.length:
            done.append(it)
            continue
        try:
            done.append(it._replace(length=record_length(src, fmt, it.offset)))
        except ExtractError as e:
            failed.append((it, e))
        except Exception as e:  # an I/O error after retries (S3 or local)
            failed.append((it, ExtractError("read-error", f"{src.uri}: {type(e).__name__}: {e}")))
    return done, failed
