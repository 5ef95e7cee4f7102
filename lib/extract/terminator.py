"""Plain (uncompressed) records always come out whole.

A WARC record ends with two CRLFs after its block, an ARC record with one newline after its
block. Lengths from warcio, cdxj-indexer and pywb's CDX indexer for uncompressed files leave
these out (their record length stops at the end of the block), so copies made with them run
together and readers misread the output. :func:`missing_terminator` tells, from the record's
header, which closing bytes a copied range lacks; the task appends them and counts it.
"""

from __future__ import annotations

WARC_END = b"\r\n\r\n"
ARC_END = b"\n"
#: the start of a record searched for its header (a WARC header longer than this is not fixed)
HEAD_SCAN = 64 * 1024


def block_end(kind: str, head: bytes) -> int | None:
    """Where the record's block ends (bytes from its start), from its header; None when the
    header does not parse."""
    if kind == "warc":
        end = head.find(b"\r\n\r\n")
        if end < 0:
            return None
        for line in head[:end].split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                try:
                    return end + 4 + int(value.strip())
                except ValueError:
                    return None
        return None
    nl = head.find(b"\n")
    if nl < 0:
        return None
    fields = head[:nl].rstrip(b"\r").split(b" ")
    try:
        return nl + 1 + int(fields[-1]) if len(fields) >= 3 else None
    except ValueError:
        return None


def missing_terminator(kind: str, head: bytes, length: int) -> bytes:
    """The closing bytes a plain ``kind`` ("warc"/"arc") record of ``length`` bytes starting
    with ``head`` lacks: the whole terminator when the range stops at the end of the block,
    its tail when it stops inside it, nothing when it is whole (or its header does not parse,
    or the range is shorter than the block: that is a truncated record, not ours to fix)."""
    end = block_end(kind, head)
    if end is None:
        return b""
    term = WARC_END if kind == "warc" else ARC_END
    missing = end + len(term) - length
    if 0 < missing <= len(term):
        return term[len(term) - missing :]
    return b""
