"""Executor side of the index job: Arrow batches in, Arrow batches out (no Spark imports).

Two steps, each a ``mapInArrow`` function over one Spark partition:

1. :func:`tokenize_partition` gets the partition's pages sorted by (shard, record_id) —
   every page of a shard is in the same partition — and numbers them 0..n-1 per shard in
   that order (the CIFF docid), so it writes ``metadata-{n}.parquet`` as they come. It
   analyzes the pages, and emits one *doc* row per page (docid, record_id, doclength), per
   Arrow batch one *chunk* row per (shard, term): the term's docids/tfs in that batch (a
   partial inverted list, like a Lucene segment), and at the end one *stats* row per shard.
2. :func:`write_partition` gets those rows sorted by (shard, kind, term, first docid): the
   stats row (the CIFF header's counts), then a term's chunks one after another with
   ascending docids, so concatenating them is the merge, then the docs. It streams each
   shard into ``index-{n}.ciff.gz`` with bounded memory (one postings list at a time) and
   returns one stats row per shard.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lib.analysis import get_analyzer

KIND_STATS, KIND_CHUNK, KIND_DOC = -1, 0, 1  # the order a shard's rows reach its writer

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

#: rows between the two steps, in one schema: a stats row per shard (kind -1), chunk rows
#: (kind 0) and doc rows (kind 1)
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
        # the stats row of a shard: its CIFF header's counts
        ("n_docs", pa.int64()),
        ("n_terms", pa.int64()),
        ("n_tokens", pa.int64()),
    ]
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


def page_texts(batch: pa.RecordBatch) -> pa.Array:
    """:func:`page_text` of every row, computed by Arrow (empty parts only add separators)."""
    import pyarrow.compute as pc

    cols = [batch.column(c).cast(pa.string()) for c in TEXT_COLUMNS]
    return pc.binary_join_element_wise(*cols, "\n", null_handling="skip")


def _chunks(pidx: int, base: int, bt) -> pa.RecordBatch:
    """Chunk rows (one per term) of a batch's (doc, term, tf) triples, which come sorted by
    (term, doc); docids = base + doc."""
    terms = bt.term
    starts = np.flatnonzero(np.r_[True, terms[1:] != terms[:-1]])
    offsets = pa.array(np.r_[starts, len(terms)].astype(np.int32))
    docids = (bt.doc + base).astype(np.int32)
    n = len(starts)
    vocab = bt.vocab
    cols = {
        "pidx": pa.array(np.full(n, pidx, np.int32)),
        "kind": pa.array(np.full(n, KIND_CHUNK, np.int8)),
        "term": pa.array([vocab[t] for t in terms[starts].tolist()], pa.string()),
        "first": pa.array(docids[starts]),
        "docids": pa.ListArray.from_arrays(offsets, pa.array(docids)),
        "tfs": pa.ListArray.from_arrays(offsets, pa.array(bt.tf.astype(np.int32))),
    }
    return _batch(cols, n)


def _batch(cols: dict[str, pa.Array], n: int) -> pa.RecordBatch:
    arrays = [cols[f.name] if f.name in cols else pa.nulls(n, f.type) for f in CHUNK_SCHEMA]
    return pa.RecordBatch.from_arrays(arrays, schema=CHUNK_SCHEMA)


def _runs(keys: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of runs of equal consecutive values."""
    if len(keys) == 0:
        return []
    cut = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    bounds = [0, *cut.tolist(), len(keys)]
    return list(zip(bounds[:-1], bounds[1:]))


class _MetaWriter:
    """metadata-{n}.parquet of one shard, written under a temporary name, renamed by close()."""

    def __init__(self, spec: ShardSpec):
        from lib.index_plan import metadata_name

        os.makedirs(spec.folder, exist_ok=True)
        self.path = os.path.join(spec.folder, metadata_name(spec.shard))
        self.tmp = f"{self.path}.tmp-{uuid.uuid4().hex[:8]}"
        self.out = pq.ParquetWriter(self.tmp, METADATA_SCHEMA, compression="zstd")

    def write(self, part: pa.RecordBatch, docids: np.ndarray, lengths: np.ndarray) -> None:
        cols = {"collection_docid": part.column("record_id"), "docid": pa.array(docids), "doclength": pa.array(lengths)}
        cols.update({c: part.column(c).cast(METADATA_SCHEMA.field(c).type) for c in _META_IN})
        self.out.write_batch(pa.RecordBatch.from_arrays([cols[f.name] for f in METADATA_SCHEMA], schema=METADATA_SCHEMA))

    def close(self) -> None:
        self.out.close()
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        self.out.close()
        if os.path.exists(self.tmp):
            os.remove(self.tmp)


def tokenize_partition(batches: Iterator[pa.RecordBatch], specs: dict[int, ShardSpec]) -> Iterator[pa.RecordBatch]:
    """Step 1 (module doc). Input: :data:`INPUT_COLUMNS`, sorted by (pidx, record_id).
    Every input batch gives one chunk per (shard, term) it contains, and its doc rows; the
    end of the partition gives one stats row per shard (docs, distinct terms, tokens), which
    the sort puts first, so the writer knows its CIFF header before the postings come."""
    next_docid: dict[int, int] = {}
    last_key: dict[int, str] = {}
    vocab: dict[int, set[str]] = {}
    tokens: dict[int, int] = {}
    meta: dict[int, _MetaWriter] = {}
    try:
        yield from _tokenize(batches, specs, next_docid, last_key, vocab, tokens, meta)
        for w in meta.values():
            w.close()
    except BaseException:
        for w in meta.values():
            w.abort()
        raise
    if next_docid:
        ps = sorted(next_docid)
        yield _batch({
            "pidx": pa.array(ps, pa.int32()),
            "kind": pa.array([KIND_STATS] * len(ps), pa.int8()),
            "n_docs": pa.array([next_docid[p] for p in ps], pa.int64()),
            "n_terms": pa.array([len(vocab.get(p, ())) for p in ps], pa.int64()),
            "n_tokens": pa.array([tokens.get(p, 0) for p in ps], pa.int64()),
        }, len(ps))


def _tokenize(batches: Iterator[pa.RecordBatch], specs: dict[int, ShardSpec], next_docid: dict[int, int],
              last_key: dict[int, str], vocab: dict[int, set[str]], tokens: dict[int, int],
              meta: dict[int, _MetaWriter]) -> Iterator[pa.RecordBatch]:
    """The loop of :func:`tokenize_partition`, which owns the state passed in."""
    for b in batches:
        pidx_all = b.column("pidx").to_numpy(zero_copy_only=False)
        for start, end in _runs(pidx_all):
            part = b.slice(start, end - start)
            p = int(pidx_all[start])
            rids = [r or "" for r in part.column("record_id").to_pylist()]
            # docids are positions in record_id order: a plan that broke the sort would
            # silently scramble them, so check it here
            prev = last_key.get(p)
            for r in rids:
                if prev is not None and r < prev:
                    raise RuntimeError(f"pages of shard {p} not sorted by record_id: {r!r} after {prev!r}")
                prev = r
            last_key[p] = prev  # type: ignore[assignment]
            analyzers = {get_analyzer(lang) for lang in set(part.column("language").to_pylist())}
            if len(analyzers) != 1:
                raise RuntimeError(f"shard {p} mixes languages: {sorted(a.lang for a in analyzers)}")
            bt = analyzers.pop().analyze_batch(page_texts(part))
            base = next_docid.get(p, 0)
            n = part.num_rows
            next_docid[p] = base + n
            vocab.setdefault(p, set()).update(bt.vocab)  # every vocab term occurs in the batch
            tokens[p] = tokens.get(p, 0) + int(bt.doclength.sum())
            if len(bt.doc):
                yield _chunks(p, base, bt)
            docids = np.arange(base, base + n, dtype=np.int32)
            lengths = bt.doclength.astype(np.int32)
            if p not in meta:
                for q in list(meta):  # rows come sorted by shard: the previous one is complete
                    meta.pop(q).close()
                meta[p] = _MetaWriter(specs[p])
            meta[p].write(part, docids, lengths)
            cols = {
                "pidx": part.column("pidx").cast(pa.int32()),
                "kind": pa.array(np.full(n, KIND_DOC, np.int8)),
                "first": pa.array(docids),
                "record_id": part.column("record_id"),
                "doclength": pa.array(lengths),
            }
            yield _batch(cols, n)


@dataclass(frozen=True)
class ShardSpec:
    """Where and under which description the writer puts one shard (from the driver)."""

    folder: str  # absolute local folder of the shard's group: ROOT/{tld}/{lang}
    shard: int  # n in index-{n}.ciff.gz
    description: str
    gzip_level: int = 3  # zlib level of the .ciff.gz: 3 is ~3x faster than 6 for ~10% more bytes


class _ShardWriter:
    def __init__(self, pidx: int, spec: ShardSpec, docs: int, terms: int, total_terms: int):
        from lib.ciff.writer import CiffWriter
        from lib.index_plan import index_name, metadata_name

        self.pidx, self.spec = pidx, spec
        os.makedirs(spec.folder, exist_ok=True)
        self.ciff_path = os.path.join(spec.folder, index_name(spec.shard))
        self.meta_path = os.path.join(spec.folder, metadata_name(spec.shard))
        self.terms, self.total_terms = terms, total_terms
        self.ciff = CiffWriter(
            self.ciff_path,
            num_postings_lists=terms,
            num_docs=docs,
            total_postings_lists=terms,
            total_docs=docs,
            total_terms_in_collection=total_terms,
            average_doclength=total_terms / docs if docs else 0.0,
            description=spec.description,
            compresslevel=spec.gzip_level,
        )
        self.term: str | None = None
        self.docids: list[np.ndarray] = []
        self.tfs: list[np.ndarray] = []
        self.postings = 0
        self.docs = 0

    def chunks(self, terms: list[str], docids: pa.ListArray, tfs: pa.ListArray) -> None:
        """Chunk rows sorted by (term, first docid): a term's rows are consecutive, and so
        are their values, so each run of equal terms is one postings list; all complete runs
        of the batch go to the CIFF writer in one call. The last run may go on in the next
        batch: it waits in ``self.term``/``docids``/``tfs``."""
        if not terms:
            return
        # offsets of a sliced ListArray index its unsliced values
        d_off, t_off = docids.offsets.to_numpy(), tfs.offsets.to_numpy()
        d_val = docids.values.to_numpy()[d_off[0] : d_off[-1]]
        t_val = tfs.values.to_numpy()[t_off[0] : t_off[-1]]
        starts = d_off[:-1] - d_off[0]  # where each row's values start in d_val/t_val
        new = [0] + [i for i in range(1, len(terms)) if terms[i] != terms[i - 1]]  # run starts
        if terms[0] == self.term:  # the pending list goes on in this batch
            cut = int(starts[new[1]]) if len(new) > 1 else len(d_val)
            self.docids.append(d_val[:cut])
            self.tfs.append(t_val[:cut])
            if len(new) == 1:
                return
            new = new[1:]
        self._flush_term()
        run_start = starts[new]
        a, z = int(run_start[0]), int(run_start[-1])
        if len(new) > 1:  # every run but the last is complete
            self.ciff.add_postings_batch([terms[i] for i in new[:-1]], np.diff(run_start), d_val[a:z], t_val[a:z])
            self.postings += z - a
        self.term = terms[new[-1]]
        self.docids, self.tfs = [d_val[z:]], [t_val[z:]]

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

    def close(self) -> pa.RecordBatch:
        self._flush_term()
        self.ciff.close()
        return pa.RecordBatch.from_pylist(
            [dict(pidx=self.pidx, docs=self.docs, terms=self.terms, postings=self.postings,
                  total_terms=self.total_terms, ciff_bytes=os.path.getsize(self.ciff_path),
                  # written by the tokenize step of the same task, which has finished
                  metadata_bytes=os.path.getsize(self.meta_path) if os.path.exists(self.meta_path) else 0)],
            schema=STATS_SCHEMA,
        )

    def abort(self) -> None:
        self.ciff.abort()


def write_partition(batches: Iterator[pa.RecordBatch], specs: dict[int, ShardSpec]) -> Iterator[pa.RecordBatch]:
    """Step 2 (module doc). Input: :data:`CHUNK_SCHEMA` rows sorted by (pidx, kind, term, first)."""
    cur: _ShardWriter | None = None
    try:
        for b in batches:
            if b.num_rows == 0:
                continue
            pidx = b.column("pidx").to_numpy(zero_copy_only=False)
            kind = b.column("kind").to_numpy(zero_copy_only=False)
            for start, end in _runs(pidx.astype(np.int64) * 4 + kind + 1):
                p = int(pidx[start])
                part = b.slice(start, end - start)
                if kind[start] == KIND_STATS:
                    if cur is not None:
                        w, cur = cur, None
                        yield w.close()
                    if part.num_rows != 1:
                        raise RuntimeError(f"shard {p}: {part.num_rows} stats rows")
                    st = part.to_pylist()[0]
                    cur = _ShardWriter(p, specs[p], st["n_docs"], st["n_terms"], st["n_tokens"])
                elif cur is None or cur.pidx != p:
                    raise RuntimeError(f"shard {p}: rows before its stats row (partition not sorted by kind?)")
                elif kind[start] == KIND_CHUNK:
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
