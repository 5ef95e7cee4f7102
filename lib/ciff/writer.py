"""Streaming CIFF writer: header first, then postings lists, then doc records, checked as they come."""

from __future__ import annotations

import gzip
import os
import uuid
from typing import Sequence

import numpy as np

from lib import storage
from lib.ciff.errors import CiffError
from lib.ciff.messages import (
    INT64_MAX,
    MAX_MESSAGE,
    Header,
    check_header,
    encode_doc,
    encode_header,
    postings_list_prefix,
)
from lib.ciff.stream import is_gzip_name
from lib.ciff.varint import INT32_MAX, SMALL_LIST, encode_postings, encode_varint

FLUSH_BYTES = 1 << 20
GZIP_LEVEL = 6  # zlib's default: level 9 costs ~3x the time for ~2% smaller postings


def _check_int(name: str, v, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise CiffError(f"{name} must be an integer, got {type(v).__name__}")
    v = int(v)
    if not lo <= v <= hi:
        kind = "int32" if hi == INT32_MAX else "int64"
        raise CiffError(f"{name} = {v} outside {lo}..{hi} ({kind} limit)")
    return v


class CiffWriter:
    """Streaming CIFF writer; ``.gz`` by suffix; writes to a temp name, renamed into place by close().

    Memory: one postings list's bytes, a 1 MiB output buffer and one int64 per document (the running
    sum of tf per document, so each DocRecord's doclength is checked exactly against the postings).
    Every violation raises CiffError naming the term or docid; a failed writer leaves no file.
    """

    def __init__(
        self,
        path: str,
        *,
        num_postings_lists: int,
        num_docs: int,
        total_postings_lists: int,
        total_docs: int,
        total_terms_in_collection: int,
        average_doclength: float,
        description: str = "",
        version: int = 1,
    ) -> None:
        self.path = storage.local_path(str(path))
        ints = dict(
            version=version,
            num_postings_lists=num_postings_lists,
            num_docs=num_docs,
            total_postings_lists=total_postings_lists,
            total_docs=total_docs,
        )
        checked = {k: _check_int(k, v, 0, INT32_MAX) for k, v in ints.items()}
        checked["total_terms_in_collection"] = _check_int("total_terms_in_collection", total_terms_in_collection, 0, INT64_MAX)
        self.header = Header(**checked, average_doclength=float(average_doclength), description=str(description))
        try:
            check_header(self.header)
        except CiffError as e:
            raise e.at(path=self.path, section="Header") from None
        self._full_lists = self.header.num_postings_lists == self.header.total_postings_lists
        self._full_docs = self.header.num_docs == self.header.total_docs
        # Per-document tf sums are only complete when every postings list is in this file.
        self._doc_tf = np.zeros(self.header.num_docs, np.int64) if self._full_lists else None
        self._lists = 0
        self._docs = 0
        self._sum_tf = 0
        self._sum_dl = 0
        self._prev_term: bytes | None = None
        self._parts: list[bytes] = []
        self._buffered = 0
        self.bytes_uncompressed = 0
        self.bytes_written = 0
        self._closed = False
        folder, name = os.path.split(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        self._tmp = os.path.join(folder, f".{name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        self._raw = open(self._tmp, "wb")
        # mtime=0 and the final name in the gzip header: re-runs produce identical bytes.
        self._out = (
            gzip.GzipFile(filename=name[:-3], mode="wb", fileobj=self._raw, compresslevel=GZIP_LEVEL, mtime=0)
            if is_gzip_name(self.path)
            else self._raw
        )
        header = encode_header(self.header)
        self._write(encode_varint(len(header)), header)

    # -- output -------------------------------------------------------------------------------

    def _write(self, *chunks: bytes) -> None:
        for c in chunks:
            self._parts.append(c)
            self._buffered += len(c)
        if self._buffered >= FLUSH_BYTES:
            self._flush()

    def _flush(self) -> None:
        if self._parts:
            data = b"".join(self._parts)
            self._out.write(data)
            self.bytes_uncompressed += len(data)
            self._parts = []
            self._buffered = 0

    def _fail(self, reason: str, **where) -> CiffError:
        self.abort()
        return CiffError(reason, path=self.path, **where)

    # -- API ------------------------------------------------------------------------------------

    def add_postings(self, term: str, docids: Sequence[int], tfs: Sequence[int]) -> None:
        """docids absolute and strictly ascending (the writer gap-encodes); terms must come in code-point order."""
        where = dict(section="PostingsList", message_index=self._lists, term=term)
        if self._closed:
            raise CiffError("writer is closed", path=self.path)
        if self._docs:
            raise self._fail("postings list added after doc records", **where)
        if self._lists >= self.header.num_postings_lists:
            raise self._fail(f"more postings lists than the header's num_postings_lists {self.header.num_postings_lists}", **where)
        if not isinstance(term, str) or not term:
            raise self._fail("term must be a non-empty string", **where)
        try:
            tb = term.encode("utf-8")
        except UnicodeEncodeError as e:
            raise self._fail(f"term is not encodable as UTF-8: {e.reason}", **where) from None
        # UTF-8 byte order is code-point order, so comparing bytes is enough.
        if self._prev_term is not None and tb <= self._prev_term:
            what = "duplicate term" if tb == self._prev_term else "terms not in code-point order"
            raise self._fail(f"{what}: after {self._prev_term.decode('utf-8')!r}", **where)
        n = len(docids)
        if n == 0:
            raise self._fail("empty postings list", **where)
        try:
            body = encode_postings(docids, tfs)
        except CiffError as e:
            raise self._fail(e.reason, **where) from None
        last = int(docids[-1])
        if last >= self.header.num_docs:
            raise self._fail(f"docid {last} >= num_docs {self.header.num_docs}", **where)
        if n <= SMALL_LIST and not isinstance(tfs, np.ndarray):
            cf = sum(tfs)
            if self._doc_tf is not None:
                acc = self._doc_tf
                for d, t in zip(docids, tfs):
                    acc[d] += t
        else:
            t = np.asarray(tfs, dtype=np.int64)
            cf = int(t.sum())
            if self._doc_tf is not None:
                self._doc_tf[np.asarray(docids, dtype=np.int64)] += t  # docids are unique: no np.add.at needed
        head = postings_list_prefix(tb, n, int(cf))
        size = len(head) + len(body)
        if size > MAX_MESSAGE:
            raise self._fail(f"postings list message of {size} bytes exceeds the 2 GiB limit", **where)
        self._write(encode_varint(size), head, body)
        self._sum_tf += int(cf)
        self._lists += 1
        self._prev_term = tb

    def add_doc(self, docid: int, collection_docid: str, doclength: int) -> None:
        """docids must come as 0..n-1 in order."""
        where = dict(section="DocRecord", message_index=self._docs)
        if self._closed:
            raise CiffError("writer is closed", path=self.path)
        if self._lists != self.header.num_postings_lists:
            raise self._fail(
                f"doc record before all postings lists: {self._lists} of {self.header.num_postings_lists} written", **where
            )
        if self._docs >= self.header.num_docs:
            raise self._fail(f"more doc records than the header's num_docs {self.header.num_docs}", **where)
        try:
            docid = _check_int("docid", docid, 0, INT32_MAX)
            doclength = _check_int("doclength", doclength, 0, INT32_MAX)
        except CiffError as e:
            raise self._fail(e.reason, **where) from None
        if docid != self._docs:
            raise self._fail(f"docid {docid} != its position {self._docs}", **where)
        if not isinstance(collection_docid, str):
            raise self._fail("collection_docid must be a string", **where)
        if self._doc_tf is not None and self._doc_tf[docid] != doclength:
            raise self._fail(f"doclength {doclength} but the postings give docid {docid} {int(self._doc_tf[docid])} terms", **where)
        try:
            msg = encode_doc(docid, collection_docid, doclength)
        except UnicodeEncodeError as e:
            raise self._fail(f"collection_docid is not encodable as UTF-8: {e.reason}", **where) from None
        self._write(encode_varint(len(msg)), msg)
        self._sum_dl += doclength
        self._docs += 1

    def close(self) -> None:
        """Checks counts against the header (postings lists, docs, sum tf == sum doclength == total_terms);
        on any violation raises CiffError and removes the partial file."""
        if self._closed:
            return
        h = self.header
        if self._lists != h.num_postings_lists:
            raise self._fail(f"{self._lists} postings lists written but the header announces {h.num_postings_lists}")
        if self._docs != h.num_docs:
            raise self._fail(f"{self._docs} doc records written but the header announces {h.num_docs}")
        if self._full_lists and self._sum_tf != h.total_terms_in_collection:
            raise self._fail(f"sum of tf {self._sum_tf} != total_terms_in_collection {h.total_terms_in_collection}")
        if self._full_docs and self._sum_dl != h.total_terms_in_collection:
            raise self._fail(f"sum of doclength {self._sum_dl} != total_terms_in_collection {h.total_terms_in_collection}")
        try:
            self._flush()
            if self._out is not self._raw:
                self._out.close()
            self._raw.flush()
            os.fsync(self._raw.fileno())
            self._raw.close()
            os.replace(self._tmp, self.path)
        except BaseException:
            self.abort()
            raise
        self.bytes_written = os.path.getsize(self.path)
        self._closed = True
        self._doc_tf = None

    def abort(self) -> None:
        """Drop everything written so far; no file is left behind."""
        if self._closed:
            return
        self._closed = True
        self._doc_tf = None
        for f in (self._out, self._raw):
            try:
                f.close()
            except Exception:  # closing a half-written gzip stream may fail; the file is removed anyway
                pass
        try:
            os.remove(self._tmp)
        except FileNotFoundError:
            pass

    def __enter__(self) -> "CiffWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()
