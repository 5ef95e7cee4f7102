"""Streaming CIFF writer: header first, then postings lists, then doc records, checked as they come."""

from __future__ import annotations

import dataclasses
from typing import Sequence, TypedDict, Unpack

import numpy as np

from lib.ciff.batch import encode_docs, encode_lists
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
from lib.ciff.output import AtomicOutput
from lib.ciff.varint import INT32_MAX, encode_postings, encode_varint
from lib.store import locations

BATCH_LIST = 256  # lists up to this many postings are queued and encoded in batches
BATCH_POSTINGS = 1 << 16  # postings queued before a batch is encoded
# add_postings_batch encodes lists of any length together, ~this many postings a call: a call
# costs ~0.3 ms whatever its size, so one per long list would dominate on the head terms, while
# groups much larger than 64k postings run slower (the temporaries leave the CPU caches)
BATCH_ENCODE = 1 << 16
# zlib's default. On Zipfian postings (benchmarks/bench_ciff_encode.py data) level 1 runs ~5x faster
# with ~20% larger output, level 9 ~10x slower for ~4% smaller: pass compresslevel to trade.
GZIP_LEVEL = 6


class _Where(TypedDict, total=False):
    """Where a writer is: CiffError keywords (the path is the writer's)."""

    section: str
    message_index: int
    term: str


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

    Memory: one postings list's bytes (or one batch of them), a 1 MiB output buffer and one int64 per
    document (the running
    sum of tf per document, so each DocRecord's doclength is checked exactly against the postings).
    Every violation raises CiffError naming the term or docid; a failed writer leaves no file.

    ``num_postings_lists=None`` (with ``total_postings_lists=None``): the count is taken from
    the lists written, for writers that cannot know it before the end (the index job's
    reducers); close() then writes the header as a gzip member of its own before the body's.
    """

    def __init__(
        self,
        path: str,
        *,
        num_postings_lists: int | None,
        num_docs: int,
        total_postings_lists: int | None,
        total_docs: int,
        total_terms_in_collection: int,
        average_doclength: float,
        description: str = "",
        version: int = 1,
        compresslevel: int = GZIP_LEVEL,
    ) -> None:
        self.path = locations.local_path(str(path))
        # Counted mode (num_postings_lists=None): the number of lists is only known at the end,
        # so the body goes to a temp file and close() puts the header in front of it.
        self._counted = num_postings_lists is None
        if self._counted:
            if total_postings_lists is not None:
                raise ValueError("total_postings_lists must be None too when num_postings_lists is counted")
            num_postings_lists = total_postings_lists = 0  # placeholders until close()
        ints = dict(
            version=version,
            num_postings_lists=num_postings_lists,
            num_docs=num_docs,
            total_postings_lists=total_postings_lists,
            total_docs=total_docs,
        )
        checked = {k: _check_int(k, v, 0, INT32_MAX) for k, v in ints.items()}
        checked["total_terms_in_collection"] = _check_int(
            "total_terms_in_collection", total_terms_in_collection, 0, INT64_MAX
        )
        self.header = Header(**checked, average_doclength=float(average_doclength), description=str(description))
        try:
            check_header(self.header)
        except CiffError as e:
            raise e.at(path=self.path, section="Header") from None
        self._full_lists = self._counted or self.header.num_postings_lists == self.header.total_postings_lists
        self._list_limit = INT32_MAX if self._counted else self.header.num_postings_lists
        self._full_docs = self.header.num_docs == self.header.total_docs
        # Per-document tf sums are only complete when every postings list is in this file.
        self._doc_tf = np.zeros(self.header.num_docs, np.int64) if self._full_lists else None
        self._lists = 0
        self._docs = 0
        self._sum_tf = 0
        self._sum_dl = 0
        self._prev_term: bytes | None = None
        # queue of short postings lists, encoded together by _flush_lists
        self._pend_terms: list[bytes] = []
        self._pend_n: list[int] = []
        self._pend_d: list[int] = []
        self._pend_t: list[int] = []
        self._pend_first = 0
        self.bytes_written = 0
        self._closed = False
        self._output = AtomicOutput(self.path, compresslevel, header_last=self._counted)
        self._write = self._output.write
        if not self._counted:
            header = encode_header(self.header)
            self._write(encode_varint(len(header)), header)

    @property
    def bytes_uncompressed(self) -> int:
        return self._output.bytes_uncompressed

    def _fail(self, reason: str, **where: Unpack[_Where]) -> CiffError:
        self.abort()
        return CiffError(reason, path=self.path, **where)

    # -- API ------------------------------------------------------------------------------------

    def add_postings(self, term: str, docids: Sequence[int] | np.ndarray, tfs: Sequence[int] | np.ndarray) -> None:
        """docids absolute and strictly ascending (the writer gap-encodes); terms must come in code-point order.

        Lists of up to BATCH_LIST postings are queued and encoded together (see lib.ciff.batch); a
        bad posting in a queued list is then reported by the call that flushes the queue (a later
        add_postings, add_doc or close), still naming the list's term and index.
        """
        if self._closed:
            raise CiffError("writer is closed", path=self.path)
        if self._docs or self._lists >= self._list_limit or not isinstance(term, str) or not term:
            if self._docs:
                reason = "postings list added after doc records"
            elif not isinstance(term, str) or not term:
                reason = "term must be a non-empty string"
            else:
                reason = f"more postings lists than the header's num_postings_lists {self.header.num_postings_lists}"
            raise self._fail(reason, **self._where(term))
        try:
            tb = term.encode("utf-8")
        except UnicodeEncodeError as e:
            raise self._fail(f"term is not encodable as UTF-8: {e.reason}", **self._where(term)) from None
        # UTF-8 byte order is code-point order, so comparing bytes is enough.
        prev = self._prev_term
        if prev is not None and tb <= prev:
            what = "duplicate term" if tb == prev else "terms not in code-point order"
            raise self._fail(f"{what}: after {prev.decode('utf-8')!r}", **self._where(term))
        n = len(docids)
        if n == 0 or n != len(tfs):
            reason = "empty postings list" if n == 0 else f"{n} docids but {len(tfs)} tfs"
            raise self._fail(reason, **self._where(term))
        last = int(docids[-1])
        if last >= self.header.num_docs:
            raise self._fail(f"docid {last} >= num_docs {self.header.num_docs}", **self._where(term))
        if n <= BATCH_LIST:
            if isinstance(docids, np.ndarray):
                docids = docids.tolist()
            if isinstance(tfs, np.ndarray):
                tfs = tfs.tolist()
            if not self._pend_terms:
                self._pend_first = self._lists
            self._pend_terms.append(tb)
            self._pend_n.append(n)
            self._pend_d.extend(docids)
            self._pend_t.extend(tfs)
            self._lists += 1
            self._prev_term = tb
            if len(self._pend_d) >= BATCH_POSTINGS:
                self._flush_lists()
            return
        self._flush_lists()
        self._write_single(tb, term, docids, tfs)

    def _write_single(self, tb: bytes, term: str, docids, tfs) -> None:
        """Encode and write one (long) postings list right away."""
        n = len(docids)
        try:
            body = encode_postings(docids, tfs)
        except CiffError as e:
            raise self._fail(e.reason, **self._where(term)) from None
        t = np.asarray(tfs, dtype=np.int64)
        cf = int(t.sum())
        if self._doc_tf is not None:
            self._doc_tf[np.asarray(docids, dtype=np.int64)] += t  # docids are unique: no np.add.at needed
        head = postings_list_prefix(tb, n, cf)
        size = len(head) + len(body)
        if size > MAX_MESSAGE:
            raise self._fail(f"postings list message of {size} bytes exceeds the 2 GiB limit", **self._where(term))
        self._write(encode_varint(size), head, body)
        self._sum_tf += cf
        self._lists += 1
        self._prev_term = tb

    def _where(self, term: str, index: int | None = None) -> _Where:
        return {"section": "PostingsList", "message_index": self._lists if index is None else index, "term": term}

    def _flush_lists(self) -> None:
        """Encode and write the queued short lists."""
        if not self._pend_terms:
            return
        terms, counts = self._pend_terms, self._pend_n
        d = np.array(self._pend_d, dtype=np.int64)
        t = np.array(self._pend_t, dtype=np.int64)
        self._pend_terms, self._pend_n, self._pend_d, self._pend_t = [], [], [], []
        self._write_batch(terms, counts, d, t, self._pend_first)

    def _write_batch(self, terms: list[bytes], counts, d: np.ndarray, t: np.ndarray, first: int) -> None:
        """Encode and write consecutive lists (already counted in self._lists) whose first has index ``first``."""
        try:
            data, cf = encode_lists(terms, counts, d, t)
        except CiffError as e:
            i = e.message_index or 0
            raise self._fail(e.reason, **self._where(terms[i].decode("utf-8"), first + i)) from None
        if self._doc_tf is not None:
            np.add.at(self._doc_tf, d, t)
        self._sum_tf += int(cf.sum())
        self._write(data)

    def add_postings_batch(self, terms: Sequence[str], counts: Sequence[int] | np.ndarray, docids, tfs) -> None:
        """Many consecutive postings lists at once, in columns: list i is ``terms[i]`` with the next
        ``counts[i]`` entries of the concatenated absolute ``docids`` and ``tfs``.

        Same rules and result as calling add_postings for each list, without the per-call cost:
        the fast way to write from columnar data (Arrow, numpy).
        """
        if self._closed:
            raise CiffError("writer is closed", path=self.path)
        counts = np.asarray(counts, dtype=np.int64)
        d = np.asarray(docids, dtype=np.int64)
        t = np.asarray(tfs, dtype=np.int64)
        b = len(terms)
        if b == 0:
            return
        if len(counts) != b or counts.min() < 1 or int(counts.sum()) != len(d) or len(d) != len(t):
            raise self._fail(
                f"bad batch: {b} terms, {len(counts)} counts (min {counts.min() if len(counts) else '-'}) summing to"
                f" {int(counts.sum())}, {len(d)} docids, {len(t)} tfs",
                **self._where(str(terms[0])),
            )
        if self._docs or self._lists + b > self._list_limit:
            reason = (
                "postings list added after doc records"
                if self._docs
                else f"more postings lists than the header's num_postings_lists {self.header.num_postings_lists}"
            )
            raise self._fail(reason, **self._where(str(terms[0])))
        self._flush_lists()
        tbs = []
        prev = self._prev_term
        for i, term in enumerate(terms):
            if not isinstance(term, str) or not term:
                raise self._fail("term must be a non-empty string", **self._where(str(term), self._lists + i))
            try:
                tb = term.encode("utf-8")
            except UnicodeEncodeError as e:
                raise self._fail(
                    f"term is not encodable as UTF-8: {e.reason}", **self._where(term, self._lists + i)
                ) from None
            if prev is not None and tb <= prev:
                what = "duplicate term" if tb == prev else "terms not in code-point order"
                raise self._fail(f"{what}: after {prev.decode('utf-8')!r}", **self._where(term, self._lists + i))
            tbs.append(tb)
            prev = tb
        ends = np.cumsum(counts)
        starts = ends - counts
        if int(d.max()) >= self.header.num_docs:
            i = int(np.searchsorted(ends, int(np.argmax(d >= self.header.num_docs)), side="right"))
            raise self._fail(
                f"docid {int(d.max())} >= num_docs {self.header.num_docs}", **self._where(terms[i], self._lists + i)
            )
        cl, sl, el = counts.tolist(), starts.tolist(), ends.tolist()
        i = 0
        while i < b:
            if cl[i] > BATCH_ENCODE:
                self._write_single(tbs[i], terms[i], d[sl[i] : el[i]], t[sl[i] : el[i]])
                i += 1
                continue
            j, n = i, 0
            while j < b and cl[j] <= BATCH_ENCODE and n < BATCH_ENCODE:
                n += cl[j]
                j += 1
            first = self._lists
            self._lists += j - i
            self._write_batch(tbs[i:j], counts[i:j], d[sl[i] : el[j - 1]], t[sl[i] : el[j - 1]], first)
            self._prev_term = tbs[j - 1]
            i = j

    def add_doc(self, docid: int, collection_docid: str, doclength: int) -> None:
        """docids must come as 0..n-1 in order."""
        if self._closed:
            raise CiffError("writer is closed", path=self.path)
        if self._pend_terms:
            self._flush_lists()
        where: _Where = {"section": "DocRecord", "message_index": self._docs}
        if not self._counted and self._lists != self.header.num_postings_lists:
            raise self._fail(
                f"doc record before all postings lists: {self._lists} of {self.header.num_postings_lists} written",
                **where,
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
            raise self._fail(
                f"doclength {doclength} but the postings give docid {docid} {int(self._doc_tf[docid])} terms", **where
            )
        try:
            msg = encode_doc(docid, collection_docid, doclength)
        except UnicodeEncodeError as e:
            raise self._fail(f"collection_docid is not encodable as UTF-8: {e.reason}", **where) from None
        self._write(encode_varint(len(msg)), msg)
        self._sum_dl += doclength
        self._docs += 1

    def add_docs(self, docids, collection_docids: Sequence[str], doclengths) -> None:
        """Many doc records at once (docids must continue 0..n-1 in order): the same checks
        and bytes as add_doc for each, without the per-call cost."""
        if self._closed:
            raise CiffError("writer is closed", path=self.path)
        n = len(collection_docids)
        if n == 0:
            return
        d = np.asarray(docids, dtype=np.int64)
        dl = np.asarray(doclengths, dtype=np.int64)
        h = self.header
        expect = np.arange(self._docs, self._docs + n)
        bad = (d != expect) | (dl < 0) | (dl > INT32_MAX) | (expect >= h.num_docs)
        if self._doc_tf is not None and h.num_docs:
            bad |= self._doc_tf[np.minimum(expect, h.num_docs - 1)] != dl
        try:
            ids = [c.encode("utf-8") for c in collection_docids]
        except (UnicodeEncodeError, AttributeError):
            ids = None
        if ids is None or bad.any() or (not self._counted and self._lists != h.num_postings_lists):
            # one by one up to the first bad record, whose error add_doc raises as usual
            for j in range(n):
                self.add_doc(int(d[j]), collection_docids[j], int(dl[j]))
            return
        if self._pend_terms:
            self._flush_lists()
        self._write(encode_docs(d, ids, dl))
        self._sum_dl += int(dl.sum())
        self._docs += n

    def close(self) -> None:
        """Checks counts against the header (postings lists, docs, sum tf == sum doclength == total_terms);
        on any violation raises CiffError and removes the partial file."""
        if self._closed:
            return
        self._flush_lists()
        if self._counted:
            self.header = dataclasses.replace(
                self.header, num_postings_lists=self._lists, total_postings_lists=self._lists
            )
            try:
                check_header(self.header)
            except CiffError as e:
                raise self._fail(e.reason, section="Header") from None
        h = self.header
        if self._lists != h.num_postings_lists:
            raise self._fail(f"{self._lists} postings lists written but the header announces {h.num_postings_lists}")
        if self._docs != h.num_docs:
            raise self._fail(f"{self._docs} doc records written but the header announces {h.num_docs}")
        if self._full_lists and self._sum_tf != h.total_terms_in_collection:
            raise self._fail(f"sum of tf {self._sum_tf} != total_terms_in_collection {h.total_terms_in_collection}")
        if self._full_docs and self._sum_dl != h.total_terms_in_collection:
            raise self._fail(
                f"sum of doclength {self._sum_dl} != total_terms_in_collection {h.total_terms_in_collection}"
            )
        head = b""
        if self._counted:
            header = encode_header(self.header)
            head = encode_varint(len(header)) + header
        try:
            self.bytes_written = self._output.commit(head)
        except BaseException:
            self.abort()
            raise
        self._closed = True
        self._doc_tf = None

    def abort(self) -> None:
        """Drop everything written so far; no file is left behind."""
        if self._closed:
            return
        self._closed = True
        self._doc_tf = None
        self._output.abort()

    def __enter__(self) -> "CiffWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()
