"""Reduce side of the index job: one task writes each shard's CIFF and metadata, streaming (no Spark imports).

:func:`write_partition` is a ``mapInArrow`` function over the rows of lib.index_build
(:data:`~lib.index_build.CHUNK_SCHEMA`) after Spark's shuffle by shard and sort by
(skey, term, t, first) (``skey`` carries the kind and the term's first bytes). Per
shard it gets:

1. the *stats* rows, one per input file with pages of the shard, in file order: their
   sums are the CIFF header's counts and their running sum each file's docid base;
2. the *chunk* rows, term by term (UTF-8 byte order == code-point order), each term's
   chunks in file order with ascending local docids, so base + local docid, concatenated,
   is the term's postings list: it goes to the CIFF writer without another sort;
3. the *doc* rows in docid order, each a small Arrow batch of pages: DocRecords and
   ``metadata-{n}.parquet``.

Memory is one postings list, one Arrow batch and up to 64k pages of metadata; the CIFF writer's own checks (docids in
range and ascending, per-document lengths == sum of tfs, totals == header) catch any row
lost or duplicated on the way.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lib.index_build import (DOCS_SCHEMA, KIND_CHUNK, KIND_STATS, META_COLUMNS, METADATA_SCHEMA, STATS_SCHEMA,
                             kinds, read_stats, read_varint_column)


META_ROW_GROUP = 1 << 16


@dataclass(frozen=True)
class ShardSpec:
    """Where and under which description the writer puts one shard (from the driver)."""

    folder: str  # absolute local folder of the shard's group: ROOT/{tld}/{lang}
    shard: int  # n in index-{n}.ciff.gz
    description: str
    gzip_level: int = 2  # zlib level of the .ciff.gz (docs/index.md: speed against size)


def _runs(keys: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of runs of equal consecutive values."""
    if len(keys) == 0:
        return []
    cut = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    bounds = [0, *cut.tolist(), len(keys)]
    return list(zip(bounds[:-1], bounds[1:]))


class _Shard:
    def __init__(self, pidx: int, spec: ShardSpec):
        self.pidx, self.spec = pidx, spec
        self.stat_t: list[int] = []
        self.stat_docs: list[int] = []
        self.stat_tokens: list[int] = []
        self.ciff = None
        self.meta: pq.ParquetWriter | None = None
        self.term: str | None = None
        self.docids: list[np.ndarray] = []
        self.tfs: list[np.ndarray] = []
        self.postings = 0
        self.docs = 0
        self.pending: list[pa.RecordBatch] = []  # metadata rows not yet written
        self.pending_rows = 0

    def stats(self, part: pa.RecordBatch) -> None:
        if self.ciff is not None:
            raise RuntimeError(f"shard {self.pidx}: stats rows after its postings (partition not sorted by kind?)")
        self.stat_t += part.column("t").to_pylist()
        for data in part.column("data").to_pylist():
            docs, tokens = read_stats(data)
            self.stat_docs.append(docs)
            self.stat_tokens.append(tokens)

    def _start(self) -> None:
        from lib.ciff.writer import CiffWriter
        from lib.index_plan import index_name, metadata_name

        ts = np.asarray(self.stat_t, np.int64)
        if len(ts) == 0:
            raise RuntimeError(f"shard {self.pidx}: rows before its stats rows (partition not sorted by kind?)")
        if (np.diff(ts) <= 0).any():
            raise RuntimeError(f"shard {self.pidx}: stats rows not one per input file in file order: {self.stat_t}")
        self.ts = ts
        counts = np.asarray(self.stat_docs, np.int64)
        self.bases = np.r_[0, np.cumsum(counts)[:-1]]
        docs, tokens = int(counts.sum()), int(sum(self.stat_tokens))
        os.makedirs(self.spec.folder, exist_ok=True)
        self.ciff_path = os.path.join(self.spec.folder, index_name(self.spec.shard))
        self.meta_path = os.path.join(self.spec.folder, metadata_name(self.spec.shard))
        self.total_terms = tokens
        self.ciff = CiffWriter(
            self.ciff_path, num_postings_lists=None, total_postings_lists=None,  # counted as written
            num_docs=docs, total_docs=docs, total_terms_in_collection=tokens,
            average_doclength=tokens / docs if docs else 0.0,
            description=self.spec.description, compresslevel=self.spec.gzip_level,
        )
        self.meta_tmp = f"{self.meta_path}.tmp-{uuid.uuid4().hex[:8]}"
        self.meta = pq.ParquetWriter(self.meta_tmp, METADATA_SCHEMA, compression="zstd")

    def _base_of(self, t: pa.Array) -> np.ndarray:
        tv = t.to_numpy(zero_copy_only=False).astype(np.int64)
        i = np.searchsorted(self.ts, tv).clip(0, len(self.ts) - 1)
        if (self.ts[i] != tv).any():
            bad = int(tv[np.flatnonzero(self.ts[i] != tv)[0]])
            raise RuntimeError(f"shard {self.pidx}: rows of input file {bad}, which has no stats row")
        return self.bases[i]

    def chunks(self, part: pa.RecordBatch) -> None:
        """Chunk rows sorted by (term, t, first): a term's rows are consecutive and so are
        their docids, so each run of equal terms is one postings list; all complete runs go
        to the CIFF writer in one call, the last may go on in the next batch (it waits in
        ``self.term``/``docids``/``tfs``)."""
        if self.ciff is None:
            self._start()
        terms = part.column("term").to_pylist()
        pairs, pair_bounds = read_varint_column(part.column("postings"))
        if len(pairs) % 2 or (pair_bounds % 2).any():
            raise RuntimeError(f"shard {self.pidx}: chunk rows with an odd number of varints")
        gaps, t_val, bounds = pairs[0::2], pairs[1::2], pair_bounds // 2
        counts = np.diff(bounds)
        csum = np.cumsum(gaps)  # each row's first gap is absolute: undo the gaps row by row
        before = np.r_[0, csum][bounds[:-1]]
        d_val = csum - np.repeat(before - self._base_of(part.column("t")), counts)
        starts = bounds[:-1]
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

    def doc_rows(self, part: pa.RecordBatch) -> None:
        """Doc rows sorted by (t, first): each holds consecutive docids from base[t] + first."""
        if self.ciff is None:
            self._start()
        self._flush_term()
        starts = self._base_of(part.column("t")) + part.column("first").to_numpy(zero_copy_only=False)
        for start, blob in zip(starts.tolist(), part.column("data").to_pylist()):
            pages = pa.ipc.read_record_batch(pa.py_buffer(blob), DOCS_SCHEMA)
            n = pages.num_rows
            docids = np.arange(start, start + n, dtype=np.int32)
            self.ciff.add_docs(docids, [r or "" for r in pages.column("record_id").to_pylist()], pages.column("doclength").to_numpy())
            self.docs += n
            cols = {"collection_docid": pages.column("record_id"), "docid": pa.array(docids), "doclength": pages.column("doclength")}
            cols.update({c: pages.column(c) for c in META_COLUMNS})
            self.pending.append(pa.RecordBatch.from_arrays([cols[f.name] for f in METADATA_SCHEMA], schema=METADATA_SCHEMA))
            self.pending_rows += n
            if self.pending_rows >= META_ROW_GROUP:
                self._flush_meta()

    def _flush_meta(self) -> None:
        """One Parquet row group per ~64k pages (a small group per Arrow batch would bloat the file)."""
        if self.pending:
            self.meta.write_table(pa.Table.from_batches(self.pending), row_group_size=1 << 30)
            self.pending, self.pending_rows = [], 0

    def close(self) -> pa.RecordBatch:
        if self.ciff is None:
            self._start()
        self._flush_term()
        self.ciff.close()
        self._flush_meta()
        self.meta.close()
        os.replace(self.meta_tmp, self.meta_path)
        return pa.RecordBatch.from_pylist(
            [dict(pidx=self.pidx, docs=self.docs, terms=self.ciff.header.num_postings_lists, postings=self.postings,
                  total_terms=self.total_terms, ciff_bytes=os.path.getsize(self.ciff_path),
                  metadata_bytes=os.path.getsize(self.meta_path))],
            schema=STATS_SCHEMA,
        )

    def abort(self) -> None:
        if self.ciff is not None:
            self.ciff.abort()
        if self.meta is not None:
            self.meta.close()
            if os.path.exists(self.meta_tmp):
                os.remove(self.meta_tmp)


def write_partition(batches: Iterator[pa.RecordBatch], specs: dict[int, ShardSpec]) -> Iterator[pa.RecordBatch]:
    """The reduce step (module doc): one stats row (:data:`STATS_SCHEMA`) per shard written."""
    cur: _Shard | None = None
    try:
        for b in batches:
            if b.num_rows == 0:
                continue
            pidx = b.column("pidx").to_numpy(zero_copy_only=False)
            kind = kinds(b.column("skey"))
            for start, end in _runs(pidx.astype(np.int64) * 4 + kind + 1):
                p = int(pidx[start])
                part = b.slice(start, end - start)
                if kind[start] == KIND_STATS:
                    if cur is not None and cur.pidx != p:
                        w, cur = cur, None
                        yield w.close()
                    if cur is None:
                        cur = _Shard(p, specs[p])
                    cur.stats(part)
                elif cur is None or cur.pidx != p:
                    raise RuntimeError(f"shard {p}: rows before its stats rows (partition not sorted by kind?)")
                elif kind[start] == KIND_CHUNK:
                    cur.chunks(part)
                else:
                    cur.doc_rows(part)
        if cur is not None:
            w, cur = cur, None
            yield w.close()
    except BaseException:
        if cur is not None:
            cur.abort()
        raise
