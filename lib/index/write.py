"""Reduce side of the index job: one task merges each shard's segments into its CIFF and metadata (no Spark imports).

:func:`write_shards` is a :func:`lib.runtime.maptasks.map_tasks` function over shard numbers; for each shard it
gets, from the driver, the map tasks' report (lib.index.invert ``MAP_SCHEMA``: per input
file ``t`` with pages of the shard, its pages, tokens and segments) and reads the files
the map tasks wrote into the spill folder:

1. the reports' sums are the CIFF header's counts, their running sum in file order each
   file's docid base (docid = base[t] + local docid);
2. the segments (memory-mapped Arrow IPC) are merged without a comparison sort of
   postings: their terms (one row per term and segment) are dictionary-encoded and the
   distinct terms sorted by Arrow (UTF-8 byte order == code-point order); a stable sort of
   the term rows by term rank (segments taken in file order, then flush order) puts each
   term's rows in docid order, so gathering their postings, rebased, gives the postings
   lists in CIFF order. They go to the CIFF writer a slice of ~``SLICE_POSTINGS`` at a time;
3. the docs files, in file order: DocRecords and ``metadata-{n}.parquet``.

A record id (WARC-Record-ID) names one capture, but a real day can hold the same capture in
two archive files. Copies of one capture have the same URL and text, so they land in the same
shard; there only the first copy in docid order becomes a document (its postings, DocRecord
and metadata row), later copies are left out and counted (``duplicates``), so that a lookup
by record id (``collection_docid``) finds one document. A shard without repeated ids is
written exactly as before.

Memory: the shard's term rows and docid/tf columns (8 bytes a posting, mapped from the
page cache), one slice of gathered postings, one docs file. The CIFF writer's own checks
(docids in range and ascending, per-document lengths == sum of tfs, totals == header)
catch any segment lost or duplicated on the way.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lib.ciff.writer import CiffWriter
from lib.index import owi
from lib.index.invert import METADATA_SCHEMA, STATS_SCHEMA, docs_path, segment_path
from lib.store import atomic, layout

META_ROW_GROUP = 1 << 16
SLICE_POSTINGS = 1 << 22


@dataclass(frozen=True)
class ShardSpec:
    """Where and under which description the writer puts one shard (from the driver)."""

    folder: str  # absolute local folder of the shard's group: ROOT/{tld}/{lang}
    shard: int  # n in layout.index_name(n)
    description: str
    gzip_level: int = 2  # zlib level of the .ciff.gz (docs/index.md: speed against size)


@dataclass(frozen=True)
class ShardInput:
    """What the map tasks reported for one shard: per input file (ascending ``t``) its pages,
    tokens and segments."""

    pidx: int
    t: tuple[int, ...]
    docs: tuple[int, ...]
    tokens: tuple[int, ...]
    segments: tuple[int, ...]


def shard_inputs(rows: list[dict]) -> dict[int, ShardInput]:
    """Group the map tasks' MAP_SCHEMA rows by shard; refuses a file reported twice."""
    by: dict[int, list[dict]] = {}
    for r in rows:
        by.setdefault(r["pidx"], []).append(r)
    out = {}
    for p, rs in by.items():
        rs.sort(key=lambda r: r["t"])
        ts = [r["t"] for r in rs]
        if len(set(ts)) != len(ts):
            raise RuntimeError(f"shard {p}: an input file reported twice: {ts}")
        out[p] = ShardInput(
            p, tuple(ts), tuple(r["docs"] for r in rs), tuple(r["tokens"] for r in rs), tuple(r["segments"] for r in rs)
        )
    return out


def _read(path: str) -> pa.Table:
    with pa.memory_map(path) as src:
        return pa.ipc.open_file(src).read_all()


def _list_parts(col: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(values, row counts) of a ``list<int32>`` column (its chunks in order)."""
    vals, counts = [], []
    for ch in col.chunks:
        off = ch.offsets.to_numpy()
        vals.append(ch.values.to_numpy()[off[0] : off[-1]])
        counts.append(np.diff(off))
    return (np.concatenate(vals) if vals else np.zeros(0, np.int32)), (
        np.concatenate(counts) if counts else np.zeros(0, np.int32)
    )


class _Shard:
    def __init__(self, inp: ShardInput, spec: ShardSpec, spill: str):
        self.inp, self.spec, self.spill = inp, spec, spill
        counts = np.asarray(inp.docs, np.int64)
        self.bases = np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64)
        self.num_docs, self.total_terms = int(counts.sum()), int(sum(inp.tokens))
        self.keep, self.newid = self._first_records(spill)
        self.duplicates = 0
        if self.keep is not None:  # later copies of a record leave the shard (module doc)
            self.duplicates = int((~self.keep).sum())
            self.num_docs -= self.duplicates
            self.total_terms = int(self.lengths[self.keep].sum())
        os.makedirs(spec.folder, exist_ok=True)
        self.ciff_path = os.path.join(spec.folder, layout.index_name(spec.shard))
        self.meta_path = os.path.join(spec.folder, layout.metadata_name(spec.shard))
        self.meta_tmp = atomic.temp_path(self.meta_path)
        self.meta: pq.ParquetWriter | None = None
        self.ciff = CiffWriter(
            self.ciff_path,
            num_postings_lists=None,
            total_postings_lists=None,  # counted as written
            num_docs=self.num_docs,
            total_docs=self.num_docs,
            total_terms_in_collection=self.total_terms,
            average_doclength=self.total_terms / self.num_docs if self.num_docs else 0.0,
            description=spec.description,
            compresslevel=spec.gzip_level,
        )
        self.postings = 0

    def _first_records(self, spill: str) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(keep, new docid) per docid when a record id repeats in the shard, else (None, None):
        the first copy in docid order (file order, then page order) is kept."""
        ids, lengths = [], []
        for t in self.inp.t:
            pages = _read(docs_path(spill, self.inp.pidx, t))
            ids.append(pages.column("collection_docid").combine_chunks())
            lengths.append(pages.column("doclength").to_numpy())
        self.lengths = np.concatenate(lengths) if lengths else np.zeros(0, np.int32)
        if not ids:
            return None, None
        col = pa.concat_arrays(ids)
        if pc.count_distinct(col).as_py() == len(col):
            return None, None
        codes = col.dictionary_encode().indices.to_numpy()
        keep = np.zeros(len(codes), bool)
        keep[np.unique(codes, return_index=True)[1]] = True
        newid = np.full(len(codes), -1, np.int64)
        newid[keep] = np.arange(int(keep.sum()))
        return keep, newid

    @staticmethod
    def _drop_copies(
        keep: np.ndarray, newid: np.ndarray, seg: pa.Table, d: np.ndarray, c: np.ndarray, tf: np.ndarray
    ) -> tuple[pa.Table, np.ndarray, np.ndarray, np.ndarray]:
        """A segment's postings without the docs of repeated records (``keep`` false), docids
        renumbered (``newid``)."""
        m = keep[d]
        if not m.all():
            starts = np.r_[0, np.cumsum(c)[:-1]]
            c = np.add.reduceat(m.astype(np.int64), starts) if len(c) else c
            rows = c > 0
            seg = seg.filter(pa.array(rows))
            c, d, tf = c[rows].astype(np.int32), d[m], tf[m]
        return seg, newid[d], c, tf

    def write_postings(self) -> None:
        terms, docs, tfs, counts = [], [], [], []
        keep, newid = self.keep, self.newid
        for t, base, nseg in zip(self.inp.t, self.bases.tolist(), self.inp.segments):
            for s in range(nseg):
                seg = _read(segment_path(self.spill, self.inp.pidx, t, s))
                d, c = _list_parts(seg.column("docs"))
                d = d.astype(np.int64) + base  # absolute docids (int64: the writer's type)
                tf = _list_parts(seg.column("tfs"))[0]
                if keep is not None and newid is not None:  # both or neither (_first_records)
                    seg, d, c, tf = self._drop_copies(keep, newid, seg, d, c, tf)
                terms.extend(seg.column("term").chunks)
                docs.append(d)
                tfs.append(tf)
                counts.append(c)
        if not terms:
            return
        enc = pa.chunked_array(terms, pa.string()).combine_chunks().dictionary_encode()
        by_term = pc.sort_indices(enc.dictionary)
        rank = np.empty(len(enc.dictionary), np.int64)
        rank[by_term.to_numpy()] = np.arange(len(enc.dictionary))
        row_rank = rank[enc.indices.to_numpy()]
        order = np.argsort(row_rank, kind="stable")  # term rows: by term, then file and flush order
        count = np.concatenate(counts).astype(np.int64)
        start = np.r_[0, np.cumsum(count)[:-1]]
        d_all, t_all = np.concatenate(docs), np.concatenate(tfs)
        sorted_terms = enc.dictionary.take(by_term).to_pylist()
        r_sorted, c_sorted, s_sorted = row_rank[order], count[order], start[order]
        new = np.r_[True, r_sorted[1:] != r_sorted[:-1]]  # each list's first row
        list_first = np.flatnonzero(new)
        list_rank = r_sorted[list_first]
        list_count = np.add.reduceat(c_sorted, list_first) if len(list_first) else np.zeros(0, np.int64)
        # slices of whole lists, ~SLICE_POSTINGS postings each
        cum = np.cumsum(list_count)
        cuts = np.r_[
            0,
            np.searchsorted(cum, np.arange(SLICE_POSTINGS, int(cum[-1]), SLICE_POSTINGS), side="right"),
            len(list_first),
        ]
        cuts = np.unique(cuts)
        rows_end = np.r_[list_first[1:], len(order)]
        for a, z in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            ra, rz = int(list_first[a]), int(rows_end[z - 1])
            c = c_sorted[ra:rz]
            total = int(c.sum())
            idx = np.repeat(s_sorted[ra:rz] - (np.cumsum(c) - c), c) + np.arange(total)
            self.ciff.add_postings_batch(
                [sorted_terms[i] for i in list_rank[a:z].tolist()], list_count[a:z], d_all[idx], t_all[idx]
            )
            self.postings += total

    def write_docs(self) -> None:
        schema = METADATA_SCHEMA
        for t in self.inp.t[:1]:  # enrichment plugins' columns ride along (lib.index.owi.plugin_fields)
            with pa.memory_map(docs_path(self.spill, self.inp.pidx, t)) as src:
                schema = owi.metadata_schema(pa.ipc.open_file(src).schema)
        self.meta = meta = pq.ParquetWriter(self.meta_tmp, schema, compression="zstd")
        keep, newid = self.keep, self.newid
        pending: list[pa.RecordBatch] = []
        rows = 0
        for t, base, n in zip(self.inp.t, self.bases.tolist(), self.inp.docs):
            pages = _read(docs_path(self.spill, self.inp.pidx, t))
            if pages.num_rows != n:
                raise RuntimeError(f"shard {self.inp.pidx}: file {t} has {pages.num_rows} pages, the map reported {n}")
            docids = np.arange(base, base + n, dtype=np.int32)
            if keep is not None and newid is not None:  # both or neither (_first_records)
                kept = keep[base : base + n]
                pages, docids = pages.filter(pa.array(kept)), newid[base : base + n][kept].astype(np.int32)
                n = pages.num_rows
            self.ciff.add_docs(
                docids, [r or "" for r in pages.column("record_id").to_pylist()], pages.column("doclength").to_numpy()
            )
            cols = {c: pages.column(c) for c in pages.schema.names}
            cols["docid"] = pa.chunked_array([docids])
            pending.append(
                pa.table([cols[f.name] if f.name in cols else pa.nulls(n, f.type) for f in schema], schema=schema)
            )
            rows += n
            if rows >= META_ROW_GROUP:  # one Parquet row group per ~64k pages
                meta.write_table(pa.concat_tables(pending), row_group_size=1 << 30)
                pending, rows = [], 0
        if pending:
            meta.write_table(pa.concat_tables(pending), row_group_size=1 << 30)

    def close(self) -> pa.RecordBatch:
        self.ciff.close()
        if self.meta is None:
            raise RuntimeError(f"shard {self.inp.pidx}: closed before its docs were written")
        self.meta.close()
        atomic.replace(self.meta_tmp, self.meta_path, fsync=True)  # as the CIFF beside it
        return pa.RecordBatch.from_pylist(
            [
                dict(
                    pidx=self.inp.pidx,
                    docs=self.num_docs,
                    duplicates=self.duplicates,
                    terms=self.ciff.header.num_postings_lists,
                    postings=self.postings,
                    total_terms=self.total_terms,
                    ciff_bytes=os.path.getsize(self.ciff_path),
                    metadata_bytes=os.path.getsize(self.meta_path),
                    ciff_sha256=_sha256(self.ciff_path),
                    metadata_sha256=_sha256(self.meta_path),
                )
            ],
            schema=STATS_SCHEMA,
        )

    def abort(self) -> None:
        self.ciff.abort()
        if self.meta is not None:
            self.meta.close()
        atomic.discard(self.meta_tmp)


def _sha256(path: str) -> str:
    """Hex sha256 of a file just written (read back from the page cache)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def write_shard(inp: ShardInput, spec: ShardSpec, spill: str) -> pa.RecordBatch:
    """One shard's CIFF and metadata (module doc); its STATS_SCHEMA row."""
    shard = _Shard(inp, spec, spill)
    try:
        shard.write_postings()
        shard.write_docs()
        return shard.close()
    except BaseException:
        shard.abort()
        raise


def write_shards(
    batches: Iterator[pa.RecordBatch],
    todo: list[int],
    inputs: dict[int, ShardInput],
    specs: dict[int, ShardSpec],
    spill: str,
) -> Iterator[pa.RecordBatch]:
    """The reduce step: rows whose first column indexes ``todo`` (shard numbers)."""
    for b in batches:
        for i in b.column(0).to_pylist():
            p = todo[i]
            yield write_shard(inputs[p], specs[p], spill)
