"""Streaming CIFF reader: the header, then postings lists, then doc records, one message at a time."""

from __future__ import annotations

from typing import Iterator, TypedDict

import numpy as np

from lib.ciff.errors import CiffError
from lib.ciff.messages import DocRecord, Header, PostingsList, check_header, decode_doc, decode_header
from lib.ciff.postings import RawPostings, check_postings, decode_postings_list
from lib.ciff.stream import MessageStream

# Hints for a wrong message count in the header: the first message of the next section then fails
# to parse as the expected type (different wire types for field 1).
_TOO_MANY_LISTS = " (a DocRecord here? the header's num_postings_lists may be too large)"
_TOO_FEW_LISTS = " (a PostingsList here? the header's num_postings_lists may be too small)"


class _Where(TypedDict):
    """The message a reader is at: CiffError keywords (the offset and term are given apart)."""

    path: str
    section: str
    message_index: int


def read_header(stream: MessageStream, *, check: bool = True) -> Header:
    """Read and (by default) check the Header message."""
    got = stream.next_message("Header")
    if got is None:
        raise CiffError("empty file: no Header message", path=stream.path, offset=0, section="Header")
    offset, msg = got
    try:
        header = decode_header(msg)
        if check:
            check_header(header)
    except CiffError as e:
        raise e.at(path=stream.path, offset=offset, section="Header") from None
    return header


def _next(stream: MessageStream, i: int, announced: int, what: str, field: str, where: _Where) -> tuple[int, bytes]:
    """The next message of a section, or a CiffError saying the file ended before the header's count."""
    try:
        got = stream.next_message(where["section"])
    except CiffError as e:
        raise e.at(**where) from None
    if got is None:
        raise CiffError(
            f"file ends after {i} {what} but the header announces {announced} (truncated file or wrong {field})",
            offset=stream.offset,
            **where,
        )
    return got


def iter_postings(
    stream: MessageStream,
    header: Header,
    *,
    decode: bool = True,
    check: bool = True,
    num_docs: int | None = None,
    select: frozenset[str] | set[str] | None = None,
) -> Iterator[tuple[int, int, RawPostings, np.ndarray | None]]:
    """Yield (index, offset, raw list, absolute docids or None) for the header's num_postings_lists lists.

    With check=True every list is checked on its own (see check_postings) and terms must be strictly
    increasing in code-point order. decode=False only parses term/df/cf (for skipping), except for
    the terms in ``select``, which are decoded (and checked) in full.
    """
    prev: str | None = None
    for i in range(header.num_postings_lists):
        where: _Where = {"path": stream.path, "section": "PostingsList", "message_index": i}
        offset, msg = _next(stream, i, header.num_postings_lists, "postings lists", "num_postings_lists", where)
        try:
            raw = decode_postings_list(msg, postings=decode)
            full = decode
            if select is not None and not decode and raw.term in select:
                raw = decode_postings_list(msg)
                full = True
        except CiffError as e:
            hint = (
                _TOO_MANY_LISTS
                if e.reason.startswith(("field term has wire type 0", "field df has wire type 2"))
                else ""
            )
            raise CiffError(e.reason + hint, offset=offset, **where) from None
        docids = None
        if check:
            try:
                if prev is not None and raw.term <= prev:
                    what = "duplicate term" if raw.term == prev else "terms not in code-point order"
                    raise CiffError(f"{what}: {raw.term!r} after {prev!r}")
                if full:
                    docids = check_postings(raw, num_docs)
            except CiffError as e:
                raise CiffError(e.reason, offset=offset, term=raw.term, **where) from None
        elif full:
            docids = np.cumsum(raw.gaps)
        prev = raw.term
        yield i, offset, raw, docids


def iter_docs(stream: MessageStream, header: Header, *, check: bool = True) -> Iterator[tuple[int, int, DocRecord]]:
    """Yield (index, offset, record) for the header's num_docs doc records, then require end of file."""
    for i in range(header.num_docs):
        where: _Where = {"path": stream.path, "section": "DocRecord", "message_index": i}
        offset, msg = _next(stream, i, header.num_docs, "doc records", "num_docs", where)
        try:
            doc = decode_doc(msg)
        except CiffError as e:
            hint = _TOO_FEW_LISTS if "field docid has wire type 2" in e.reason else ""
            raise CiffError(e.reason + hint, offset=offset, **where) from None
        if check:
            reason = None
            if doc.docid != i:
                reason = f"docid {doc.docid} != its position {i}"
            elif doc.doclength < 0:
                reason = f"negative doclength {doc.doclength}"
            if reason:
                raise CiffError(reason, offset=offset, **where)
        yield i, offset, doc
    if check and not stream.at_eof():
        raise CiffError(
            f"data after the last of the {header.num_docs} doc records (header counts too small?)",
            path=stream.path,
            offset=stream.offset,
        )


class CiffReader:
    """Streaming reader with bounded memory: one message at a time.

    ``postings()`` and ``docs()`` each read the file from the start (``docs()`` skips the postings
    lists), so they can be used in any order; both check what they read and raise CiffError with the
    position of the first violation. Whole-file checks are in lib.ciff.validate.
    """

    def __init__(self, path: str) -> None:
        self.path = str(path)
        with MessageStream(self.path) as s:
            self.header: Header = read_header(s)
        # docids index the doc records; an export of only some documents may refer to all of them
        h = self.header
        self._docid_bound = h.num_docs if h.num_docs == h.total_docs else h.total_docs

    def postings(self) -> Iterator[PostingsList]:
        """Postings lists in file order, docids absolute."""
        with MessageStream(self.path) as s:
            read_header(s)
            for _, _, raw, docids in iter_postings(s, self.header, num_docs=self._docid_bound):
                assert docids is not None  # checked and decoded lists always carry their docids
                yield PostingsList(raw.term, raw.df, raw.cf, docids.tolist(), raw.tfs.tolist())

    def raw_postings(self, *, decode: bool = True) -> Iterator[tuple[RawPostings, np.ndarray | None]]:
        """Postings lists as numpy arrays (faster than postings()); decode=False gives terms only."""
        with MessageStream(self.path) as s:
            read_header(s)
            for _, _, raw, docids in iter_postings(s, self.header, decode=decode, num_docs=self._docid_bound):
                yield raw, docids

    def docs(self) -> Iterator[DocRecord]:
        """Doc records in docid order."""
        with MessageStream(self.path) as s:
            read_header(s)
            for _ in iter_postings(s, self.header, decode=False):
                pass
            for _, _, doc in iter_docs(s, self.header):
                yield doc

    def close(self) -> None:
        """Nothing stays open between calls; kept for symmetry with the writer."""

    def __enter__(self) -> "CiffReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
