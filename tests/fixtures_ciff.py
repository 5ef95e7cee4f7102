"""Helpers for the CIFF tests: hand-made (possibly broken) CIFF files and tiny indexed corpora.

Broken files are assembled from messages serialized by the protobuf runtime (the classes shipped
with ciff-toolkit), not by lib.ciff, so the validator is tested against bytes it did not write.
"""

from __future__ import annotations

import gzip
import pathlib
import random
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
from ciff_toolkit.ciff_pb2 import DocRecord, Header, PostingsList

from lib.ciff.varint import encode_varint

HEADER_DEFAULTS = dict(version=1, description="hand-made")


def header_msg(**fields) -> bytes:
    return Header(**{**HEADER_DEFAULTS, **fields}).SerializeToString()


def list_msg(term: str, postings: list[tuple[int, int]], df: int | None = None, cf: int | None = None) -> bytes:
    """A PostingsList from (gap, tf) pairs; df/cf default to the consistent values."""
    pl = PostingsList(term=term, df=len(postings) if df is None else df, cf=sum(t for _, t in postings) if cf is None else cf)
    for gap, tf in postings:
        p = pl.postings.add()
        p.docid = gap
        p.tf = tf
    return pl.SerializeToString()


def doc_msg(docid: int, collection_docid: str, doclength: int) -> bytes:
    return DocRecord(docid=docid, collection_docid=collection_docid, doclength=doclength).SerializeToString()


def write_raw(path: pathlib.Path, messages: list[bytes], tail: bytes = b"") -> list[int]:
    """Write length-delimited messages (gzip if the name ends in .gz); returns each message's offset."""
    offsets, out, pos = [], [], 0
    for m in messages:
        framed = encode_varint(len(m)) + m
        offsets.append(pos)
        out.append(framed)
        pos += len(framed)
    data = b"".join(out) + tail
    path.write_bytes(gzip.compress(data) if str(path).endswith(".gz") else data)
    return offsets


# A small valid index: 3 docs, 4 terms.
#   doc0 "d0": apple x2, banana x1          (length 3)
#   doc1 "d1": banana x3, cherry x1         (length 4)
#   doc2 "d2": apple x1, date x2            (length 3)
GOOD_LISTS = [
    ("apple", [(0, 2), (2, 1)]),
    ("banana", [(0, 1), (1, 3)]),
    ("cherry", [(1, 1)]),
    ("date", [(2, 2)]),
]
GOOD_DOCS = [(0, "d0", 3), (1, "d1", 4), (2, "d2", 3)]
GOOD_HEADER = dict(
    num_postings_lists=4, num_docs=3, total_postings_lists=4, total_docs=3, total_terms_in_collection=10,
    average_doclength=10 / 3,
)


def good_messages(header: dict | None = None, lists=None, docs=None) -> list[bytes]:
    """The messages of the small valid index, with optional replacements."""
    h = header_msg(**{**GOOD_HEADER, **(header or {})})
    ls = [list_msg(t, p) for t, p in (lists if lists is not None else GOOD_LISTS)]
    ds = [doc_msg(*d) for d in (docs if docs is not None else GOOD_DOCS)]
    return [h, *ls, *ds]


def index_corpus(folder: pathlib.Path, docs: list[tuple[str, str, str]], lang: str = "eng", n: int = 0,
                 counted: bool = False):
    """Index (collection_docid, url, text) documents with lib.text.analysis + CiffWriter.

    Writes ``index-{n}.ciff.gz`` and ``metadata-{n}.parquet`` into folder; returns
    (ciff path, analyzer, per-document term counts). ``counted``: the writer counts the
    postings lists itself, as the index job's reducers do (header in its own gzip member).
    """
    from lib.text.analysis import get_analyzer
    from lib.ciff import CiffWriter

    analyzer = get_analyzer(lang)
    counts = [Counter(analyzer.tokens(text)) for _, _, text in docs]
    inverted: dict[str, list[tuple[int, int]]] = {}
    for docid, c in enumerate(counts):
        for term, tf in c.items():
            inverted.setdefault(term, []).append((docid, tf))
    total = sum(sum(c.values()) for c in counts)
    path = folder / f"index-{n}.ciff.gz"
    with CiffWriter(
        str(path),
        num_postings_lists=None if counted else len(inverted),
        num_docs=len(docs),
        total_postings_lists=None if counted else len(inverted),
        total_docs=len(docs),
        total_terms_in_collection=total,
        average_doclength=total / len(docs),
        description=f"test corpus; analyzer {analyzer.name}",
    ) as w:
        for term in sorted(inverted):
            w.add_postings(term, [d for d, _ in inverted[term]], [t for _, t in inverted[term]])
        for docid, (cid, _, _) in enumerate(docs):
            w.add_doc(docid, cid, sum(counts[docid].values()))
    pq.write_table(
        pa.table({"collection_docid": [d[0] for d in docs], "url": [d[1] for d in docs]}),
        folder / f"metadata-{n}.parquet",
    )
    return path, analyzer, counts


WORDS = (
    "market river city garden music school window bridge winter summer travel coffee bread "
    "mountain forest island harbor lantern library museum painting theatre village weather"
).split()


def corpus(n: int = 40, seed: int = 3) -> list[tuple[str, str, str]]:
    """n small English pages; page 17 alone mentions Zanzibar."""
    rnd = random.Random(seed)
    docs = []
    for i in range(n):
        text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(8, 30)))
        if i == 17:
            text += " the spice markets of Zanzibar"
        docs.append((f"<urn:uuid:{i:04d}>", f"https://example.org/page/{i}", text))
    return docs
