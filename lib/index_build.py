"""Executor side of the index job: Arrow batches in, Arrow batches out (no Spark imports).

Two steps, each a ``mapInArrow`` function over one Spark partition:

1. :func:`tokenize_partition` gets the partition's pages sorted by (shard, record_id) —
   every page of a shard is in the same partition — and numbers them 0..n-1 per shard in
   that order (the CIFF docid). It analyzes each page, and emits one *doc* row per page
   (docid, doclength, metadata) and, every :data:`CHUNK_POSTINGS` postings, one *chunk*
   row per (shard, term): the term's docids/tfs over the pages seen since the last flush
   (a partial inverted list, like a Lucene segment).
2. :func:`write_partition` gets those rows sorted by (shard, kind, term, first docid): a
   term's chunks come one after another with ascending docids, so concatenating them is the
   merge. It streams each shard into ``index-{n}.ciff.gz`` and ``metadata-{n}.parquet``
   with bounded memory (one postings list at a time) and returns one stats row per shard.
"""

from __future__ import annotations

import os
import uuid
from array import array
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lib.analysis import get_analyzer

CHUNK_POSTINGS = 1_000_000  # postings buffered per task before a chunk flush (~10 MB)
KIND_CHUNK, KIND_DOC = 0, 1

#: metadata-{n}.parquet columns, in docid order (collection_docid = CIFF DocRecord id).
METADATA_SCHEMA = pa.schema(
    [
        ("collection_docid", pa.string()),
        ("docid", pa.int32()),
        ("url", pa.string()),
        ("title", pa.string()),
        ("language", pa.string()),
        ("warc_file", pa.string()),
        ("warc_offset", pa.int64()),
        ("warc_length", pa.int64()),
        ("warc_date", pa.timestamp("us", tz="UTC")),
        ("id", pa.string()),
        ("url_host", pa.string()),
        ("doclength", pa.int32()),
    ]
)
#: page columns the tokenizer needs besides the metadata ones
TEXT_COLUMNS = ["title", "description", "plain_text"]
INPUT_COLUMNS = ["pidx", "record_id", "url", "title", "description", "plain_text", "language",
                 "warc_file", "warc_offset", "warc_length", "warc_date", "id", "url_host"]

_META_IN = [f.name for f in METADATA_SCHEMA if f.name not in ("collection_docid", "docid", "doclength")]

#: rows between the two steps: chunk rows (kind 0) and doc rows (kind 1) in one schema
CHUNK_SCHEMA = pa.schema(
    [
        ("pidx", pa.int32()),
        ("kind", pa.int8()),
        ("term", pa.string()),
        ("first", pa.int32()),  # first docid of a chunk; the docid of a doc row
        ("docids", pa.list_(pa.int32())),
        ("tfs", pa.list_(pa.int32())),
        ("record_id", pa.string()),
        ("doclength", pa.int32()),
    ]
    + [(n, METADATA_SCHEMA.field(n).type) for n in _META_IN]
)

STATS_SCHEMA = pa.schema(
    [
        ("pidx", pa.int32()),
        ("docs", pa.int64()),
        ("terms", pa.int64()),
        ("postings", pa.int64()),
        ("total_terms", pa.int64()),
        ("ciff_bytes", pa.int64()),
        ("metadata_bytes", pa.int64()),
    ]
)


def page_text(title: str | None, description: str | None, plain_text: str | None) -> str:
    """The text a page is indexed by: title, description and main text."""
    return "\n".join(p for p in (title, description, plain_text) if p)


class _Postings:
    """Partial inverted lists of one task: {(pidx, term): (docids, tfs)} as int32 arrays."""

    def __init__(self) -> None:
        self.lists: dict[tuple[int, str], tuple[array, array]] = {}
        self.count = 0

    def add(self, pidx: int, docid: int, counts: dict[str, int]) -> None:
        lists = self.lists
        for term, tf in counts.items():
            e = lists.get((pidx, term))
            if e is None:
                e = lists[(pidx, term)] = (array("i"), array("i"))
            e[0].append(docid)
            e[1].append(tf)
        self.count += len(counts)

    def flush(self) -> pa.RecordBatch | None:
        if not self.lists:
            return None
        keys = list(self.lists)
        vals = list(self.lists.values())
        lengths = np.fromiter((len(d) for d, _ in vals), dtype=np.int32, count=len(vals))
        offsets = pa.array(np.concatenate([[0], np.cumsum(lengths, dtype=np.int32)]).astype(np.int32))
        docids = np.frombuffer(b"".join(d.tobytes() for d, _ in vals), dtype=np.int32)
        tfs = np.frombuffer(b"".join(t.tobytes() for _, t in vals), dtype=np.int32)
        n = len(keys)
        cols = {
            "pidx": pa.array([k[0] for k in keys], pa.int32()),
            "kind": pa.array(np.full(n, KIND_CHUNK, np.int8)),
            "term": pa.array([k[1] for k in keys], pa.string()),
            "first": pa.array([d[0] for d, _ in vals], pa.int32()),
            "docids": pa.ListArray.from_arrays(offsets, pa.array(docids)),
            "tfs": pa.ListArray.from_arrays(offsets, pa.array(tfs)),
        }
        self.lists = {}
        self.count = 0
        return _batch(cols, n)


def _batch(cols: dict[str, pa.Array], n: int) -> pa.RecordBatch:
    arrays = [cols[f.name] if f.name in cols else pa.nulls(n, f.type) for f in CHUNK_SCHEMA]
    return pa.RecordBatch.from_arrays(arrays, schema=CHUNK_SCHEMA)


def tokenize_partition(batches: Iterator[pa.RecordBatch], chunk_postings: int = CHUNK_POSTINGS) -> Iterator[pa.RecordBatch]:
    """Step 1 (module doc). Input: :data:`INPUT_COLUMNS`, sorted by (pidx, record_id)."""
    next_docid: dict[int, int] = {}
    last_key: dict[int, str] = {}
    post = _Postings()
    for b in batches:
        if b.num_rows == 0:
            continue
        pidx = b.column("pidx").to_pylist()
        rids = b.column("record_id").to_pylist()
        langs = b.column("language").to_pylist()
        titles, descs, texts = (b.column(c).to_pylist() for c in TEXT_COLUMNS)
        docids = np.empty(b.num_rows, np.int32)
        lengths = np.empty(b.num_rows, np.int32)
        for i, p in enumerate(pidx):
            rid = rids[i] or ""
            # docids are positions in record_id order: a plan that broke the sort would
            # silently scramble them, so check it here
            if p in last_key and rid < last_key[p]:
                raise RuntimeError(f"pages of shard {p} not sorted by record_id: {rid!r} after {last_key[p]!r}")
            last_key[p] = rid
            d = next_docid.get(p, 0)
            next_docid[p] = d + 1
            counts = get_analyzer(langs[i]).term_counts(page_text(titles[i], descs[i], texts[i]))
            post.add(p, d, counts)
            docids[i] = d
            lengths[i] = sum(counts.values())
            if post.count >= chunk_postings:
                yield post.flush()  # type: ignore[misc]
        n = b.num_rows
        cols = {
            "pidx": b.column("pidx").cast(pa.int32()),
            "kind": pa.array(np.full(n, KIND_DOC, np.int8)),
            "first": pa.array(docids),
            "record_id": b.column("record_id"),
            "doclength": pa.array(lengths),
        }
        for c in _META_IN:
            cols[c] = b.column(c).cast(CHUNK_SCHEMA.field(c).type)
        yield _batch(cols, n)
    last = post.flush()
    if last is not None:
        yield last


@dataclass(frozen=True)
class ShardSpec:
    """What the writer of one shard needs to know up front (the CIFF header)."""

    folder: str  # absolute local folder of the shard's group: ROOT/{tld}/{lang}
    shard: int  # n in index-{n}.ciff.gz
    docs: int
    terms: int
    total_terms: int
    description: str


class _ShardWriter:
    def __init__(self, pidx: int, spec: ShardSpec):
        from lib.ciff.writer import CiffWriter
        from lib.index_plan import index_name, metadata_name

        self.pidx, self.spec = pidx, spec
        os.makedirs(spec.folder, exist_ok=True)
        self.ciff_path = os.path.join(spec.folder, index_name(spec.shard))
        self.meta_path = os.path.join(spec.folder, metadata_name(spec.shard))
        avg = spec.total_terms / spec.docs if spec.docs else 0.0
        self.ciff = CiffWriter(
            self.ciff_path,
            num_postings_lists=spec.terms,
            num_docs=spec.docs,
            total_postings_lists=spec.terms,
            total_docs=spec.docs,
            total_terms_in_collection=spec.total_terms,
            average_doclength=avg,
            description=spec.description,
        )
        self._meta_tmp = f"{self.meta_path}.tmp-{uuid.uuid4().hex[:8]}"
        self.meta = pq.ParquetWriter(self._meta_tmp, METADATA_SCHEMA, compression="zstd")
        self.term: str | None = None
        self.docids: list[np.ndarray] = []
        self.tfs: list[np.ndarray] = []
        self.postings = 0
        self.docs = 0

    def chunks(self, terms: list[str], docids: pa.ListArray, tfs: pa.ListArray) -> None:
        # offsets of a sliced ListArray index its unsliced values
        d_off, d_val = docids.offsets.to_numpy(), docids.values.to_numpy()
        t_off, t_val = tfs.offsets.to_numpy(), tfs.values.to_numpy()
        for i, term in enumerate(terms):
            if term != self.term:
                self._flush_term()
                self.term = term
            self.docids.append(d_val[d_off[i] : d_off[i + 1]])
            self.tfs.append(t_val[t_off[i] : t_off[i + 1]])

    def _flush_term(self) -> None:
        if self.term is None:
            return
        d = self.docids[0] if len(self.docids) == 1 else np.concatenate(self.docids)
        t = self.tfs[0] if len(self.tfs) == 1 else np.concatenate(self.tfs)
        self.ciff.add_postings(self.term, d, t)
        self.postings += len(d)
        self.term, self.docids, self.tfs = None, [], []

    def docs_rows(self, rows: pa.RecordBatch) -> None:
        self._flush_term()
        add = self.ciff.add_doc
        for docid, rid, dl in zip(rows.column("first").to_pylist(), rows.column("record_id").to_pylist(),
                                  rows.column("doclength").to_pylist()):
            add(docid, rid or "", dl)
        self.docs += rows.num_rows
        cols = {"collection_docid": rows.column("record_id"), "docid": rows.column("first"),
                "doclength": rows.column("doclength")}
        cols.update({c: rows.column(c) for c in _META_IN})
        self.meta.write_batch(pa.RecordBatch.from_arrays([cols[f.name] for f in METADATA_SCHEMA], schema=METADATA_SCHEMA))

    def close(self) -> pa.RecordBatch:
        self._flush_term()
        self.ciff.close()
        self.meta.close()
        os.replace(self._meta_tmp, self.meta_path)
        return pa.RecordBatch.from_pylist(
            [dict(pidx=self.pidx, docs=self.docs, terms=self.spec.terms, postings=self.postings,
                  total_terms=self.spec.total_terms, ciff_bytes=os.path.getsize(self.ciff_path),
                  metadata_bytes=os.path.getsize(self.meta_path))],
            schema=STATS_SCHEMA,
        )

    def abort(self) -> None:
        self.ciff.abort()
        self.meta.close()
        for p in (self._meta_tmp,):
            if os.path.exists(p):
                os.remove(p)


def _runs(keys: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of runs of equal consecutive values."""
    if len(keys) == 0:
        return []
    cut = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    bounds = [0, *cut.tolist(), len(keys)]
    return list(zip(bounds[:-1], bounds[1:]))


def write_partition(batches: Iterator[pa.RecordBatch], specs: dict[int, ShardSpec]) -> Iterator[pa.RecordBatch]:
    """Step 2 (module doc). Input: :data:`CHUNK_SCHEMA` rows sorted by (pidx, kind, term, first)."""
    cur: _ShardWriter | None = None
    try:
        for b in batches:
            if b.num_rows == 0:
                continue
            pidx = b.column("pidx").to_numpy(zero_copy_only=False)
            kind = b.column("kind").to_numpy(zero_copy_only=False)
            for start, end in _runs(pidx.astype(np.int64) * 2 + kind):
                p = int(pidx[start])
                if cur is None or cur.pidx != p:
                    if cur is not None:
                        yield cur.close()
                    cur = _ShardWriter(p, specs[p])
                part = b.slice(start, end - start)
                if kind[start] == KIND_CHUNK:
                    cur.chunks(part.column("term").to_pylist(), part.column("docids"), part.column("tfs"))
                else:
                    cur.docs_rows(part)
        if cur is not None:
            w, cur = cur, None
            yield w.close()
    except BaseException:
        if cur is not None:
            cur.abort()
        raise
