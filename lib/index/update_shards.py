"""One index shard (CIFF + metadata) in memory, for index updates (docs/mirror.md).

An update carries, per shard, only the documents it adds or replaces; a mirror merges them into
its copy of the shard. Both sides work on :class:`Shard`: the CIFF's postings lists as numpy
arrays, its doc records and the metadata rows beside it (sorted by docid). :func:`subset` keeps
some documents, :func:`concat` appends one shard's documents to another's, :func:`write` puts a
shard back as ``index-N.ciff.gz`` + ``metadata-N.parquet``; docids are renumbered 0..n-1 each
time, which the canonical digests (:mod:`lib.index.shard_digests`) do not see. :func:`fingerprints`
gives each document a content hash (its postings, length and metadata row), so an update can
tell a changed document from an unchanged one.

A shard is held whole in memory: the cost is that of the shards an update touches, not the day's.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lib.ciff.reader import CiffReader
from lib.ciff.writer import CiffWriter
from lib.store import atomic, layout


@dataclass
class Shard:
    """A shard's content: ``ids[d]``/``lengths[d]`` are document ``d``'s record id and length,
    ``postings`` the (term, docids, tfs) lists in term order, ``meta`` its metadata rows by docid."""

    description: str
    ids: list[str]
    lengths: np.ndarray
    postings: list[tuple[str, np.ndarray, np.ndarray]]
    meta: pa.Table

    @property
    def num_docs(self) -> int:
        return len(self.ids)


def metadata_path(ciff_path: str) -> str:
    """The metadata file beside ``ciff_path`` (``index-N.ciff.gz`` -> ``metadata-N.parquet``)."""
    name = layout.metadata_for(ciff_path)
    if name is None:
        raise ValueError(f"{ciff_path}: not an index file name (index-N.ciff[.gz])")
    return os.path.join(os.path.dirname(ciff_path), name)


def read(ciff_path: str) -> Shard:
    """The shard of ``ciff_path`` and the metadata file beside it."""
    r = CiffReader(ciff_path)
    postings = [(raw.term, np.asarray(d, np.int64), np.asarray(raw.tfs, np.int64)) for raw, d in r.raw_postings()]
    docs = list(r.docs())
    meta = pq.read_table(metadata_path(ciff_path))
    meta = meta.take(pc.sort_indices(meta.column("docid")))
    if meta.num_rows != len(docs):
        raise ValueError(f"{ciff_path}: {len(docs)} documents but {meta.num_rows} metadata rows beside it")
    return Shard(
        r.header.description,
        [d.collection_docid for d in docs],
        np.array([d.doclength for d in docs], np.int64),
        postings,
        meta,
    )


def subset(shard: Shard, keep: np.ndarray) -> Shard:
    """The documents whose docids ``keep`` lists (ascending), renumbered in that order."""
    keep = np.asarray(keep, np.int64)
    newid = np.full(shard.num_docs, -1, np.int64)
    newid[keep] = np.arange(len(keep))
    postings = []
    for term, d, tf in shard.postings:
        m = newid[d] >= 0
        if m.any():
            postings.append((term, newid[d[m]], tf[m]))
    meta = shard.meta.take(pa.array(keep))
    meta = meta.set_column(meta.schema.get_field_index("docid"), "docid", pa.array(np.arange(len(keep)), pa.int32()))
    return Shard(shard.description, [shard.ids[i] for i in keep.tolist()], shard.lengths[keep], postings, meta)


def concat(a: Shard, b: Shard, description: str) -> Shard:
    """``a``'s documents, then ``b``'s (docids shifted by ``a.num_docs``), postings merged by term."""
    off = a.num_docs
    lists: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for term, d, tf in a.postings:
        lists.setdefault(term, []).append((d, tf))
    for term, d, tf in b.postings:
        lists.setdefault(term, []).append((d + off, tf))
    postings = [
        (t, np.concatenate([d for d, _ in parts]), np.concatenate([tf for _, tf in parts]))
        for t, parts in sorted(lists.items())
    ]
    bmeta = b.meta.set_column(
        b.meta.schema.get_field_index("docid"), "docid", pa.array(np.arange(off, off + b.num_docs), pa.int32())
    )
    meta = pa.concat_tables([a.meta, bmeta.cast(a.meta.schema)]) if a.meta.num_rows else bmeta
    return Shard(description, a.ids + b.ids, np.concatenate([a.lengths, b.lengths]), postings, meta)


def write(shard: Shard, ciff_path: str) -> None:
    """``ciff_path`` and the metadata file beside it, each written to a temp name and renamed."""
    total = int(shard.lengths.sum())
    os.makedirs(os.path.dirname(ciff_path), exist_ok=True)
    with CiffWriter(
        ciff_path,
        num_postings_lists=None,
        total_postings_lists=None,
        num_docs=shard.num_docs,
        total_docs=shard.num_docs,
        total_terms_in_collection=total,
        average_doclength=total / shard.num_docs if shard.num_docs else 0.0,
        description=shard.description,
    ) as w:
        for term, d, tf in shard.postings:
            w.add_postings(term, d, tf)
        w.add_docs(np.arange(shard.num_docs), shard.ids, shard.lengths)
        w.close()
    meta = metadata_path(ciff_path)
    tmp = atomic.temp_path(meta)
    try:
        pq.write_table(shard.meta, tmp, compression="zstd")
        os.replace(tmp, meta)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def fingerprints(shard: Shard) -> list[str]:
    """Per docid, the sha256 of the document's postings (term, tf), length and metadata row
    (without ``docid``, which renumbering changes)."""
    per_doc: list[list[str]] = [[] for _ in range(shard.num_docs)]
    for term, d, tf in shard.postings:  # term order, so each document's list comes sorted
        for doc, n in zip(d.tolist(), tf.tolist()):
            per_doc[doc].append(f"{term}\t{n}")
    rows = shard.meta.drop_columns(["docid"]).to_pylist()
    return [
        hashlib.sha256("\n".join([*terms, str(int(n)), repr(row)]).encode()).hexdigest()
        for terms, n, row in zip(per_doc, shard.lengths.tolist(), rows)
    ]
