"""Whole-file CIFF validation: everything a reader of the format relies on, with the first violation's position.

Checks, in file order (the first failure stops the scan):
  header    version 1; counts non-negative and int32; num <= total; average_doclength ==
            total_terms_in_collection / total_docs (relative 1e-6)
  lists     exactly num_postings_lists PostingsList messages; well-formed protobuf (wire types,
            UTF-8, no truncation, varints <= 10 bytes, messages < 2 GiB); terms non-empty, unique and
            in code-point order; df == number of postings >= 1; first docid >= 0, later gaps > 0;
            docid, tf and gaps within int32; tf >= 1; cf == sum of tf; docid < num_docs
  docs      exactly num_docs DocRecord messages; docid == position; doclength >= 0; each doclength
            == the sum of that document's tfs over all lists (exact lengths: needs all lists)
  totals    sum of tf == total_terms_in_collection (when all lists are present) and sum of
            doclength == total_terms_in_collection (when all docs are present); no trailing bytes
Terms longer than 20 characters are legal but counted, because Terrier's importer drops them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lib.ciff.errors import CiffError
from lib.ciff.reader import iter_docs, iter_postings, read_header
from lib.ciff.stream import MessageStream

TERRIER_MAX_TERM = 20


@dataclass
class Report:
    """Outcome of validating one file: ``error`` is None when the file is valid."""

    path: str
    error: CiffError | None = None
    stats: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None

    def summary(self) -> str:
        if self.error is not None:
            return f"INVALID {self.error}"
        s = self.stats
        text = (
            f"OK {self.path}: {s['postings_lists']} postings lists, {s['postings']} postings, {s['docs']} docs,"
            f" {s['total_terms']} terms, {s['bytes']} bytes uncompressed"
        )
        if s.get("long_terms"):
            text += f" (note: {s['long_terms']} terms longer than {TERRIER_MAX_TERM} chars, which Terrier drops)"
        return text


class _DocTf:
    """Per-document tf sums in an array grown on demand (a header's num_docs is not trusted for allocation)."""

    def __init__(self) -> None:
        self.a = np.zeros(1024, np.int64)

    def add(self, docids: np.ndarray, tfs: np.ndarray) -> None:
        top = int(docids[-1]) + 1
        if top > len(self.a):
            size = len(self.a)
            while size < top:
                size *= 2
            grown = np.zeros(size, np.int64)
            grown[: len(self.a)] = self.a
            self.a = grown
        self.a[docids] += tfs  # docids within one list are unique

    def get(self, docid: int) -> int:
        return int(self.a[docid]) if docid < len(self.a) else 0


def validate_file(path: str) -> Report:
    """Validate one CIFF file (plain or .gz) in one streaming pass."""
    report = Report(str(path))
    try:
        report.stats = _validate(str(path))
    except CiffError as e:
        report.error = e if e.path else e.at(path=str(path))
    except OSError as e:
        report.error = CiffError(f"cannot read: {e}", path=str(path))
    return report


def _validate(path: str) -> dict:
    with MessageStream(path) as s:
        h = read_header(s)
        all_lists = h.num_postings_lists == h.total_postings_lists
        all_docs = h.num_docs == h.total_docs
        bound = h.num_docs if all_docs else h.total_docs
        doc_tf = _DocTf() if all_lists else None
        postings = 0
        sum_tf = 0
        long_terms = 0
        for _, _, raw, docids in iter_postings(s, h, num_docs=bound):
            assert docids is not None  # checked and decoded lists always carry their docids
            postings += len(docids)
            sum_tf += int(raw.cf)
            if len(raw.term) > TERRIER_MAX_TERM:
                long_terms += 1
            if doc_tf is not None:
                doc_tf.add(docids, raw.tfs)
        sum_dl = 0
        for i, offset, doc in iter_docs(s, h):
            if doc_tf is not None:
                from_postings = doc_tf.get(doc.docid)
                if from_postings != doc.doclength:
                    raise CiffError(
                        f"doclength {doc.doclength} but the postings give {from_postings} terms for docid {doc.docid}"
                        " (document lengths not exact)",
                        path=path,
                        offset=offset,
                        section="DocRecord",
                        message_index=i,
                    )
            sum_dl += doc.doclength
        # Totals last: a wrong message count in the header shows up earlier, as a parse error with a hint.
        if all_lists and sum_tf != h.total_terms_in_collection:
            raise CiffError(
                f"sum of all tf {sum_tf} != header total_terms_in_collection {h.total_terms_in_collection}",
                path=path,
                offset=s.offset,
                section="end of file",
            )
        if all_docs and sum_dl != h.total_terms_in_collection:
            raise CiffError(
                f"sum of doclength {sum_dl} != header total_terms_in_collection {h.total_terms_in_collection}",
                path=path,
                offset=s.offset,
                section="end of file",
            )
        return dict(
            postings_lists=h.num_postings_lists,
            postings=postings,
            docs=h.num_docs,
            total_terms=h.total_terms_in_collection,
            bytes=s.offset,
            long_terms=long_terms,
            description=h.description,
        )
