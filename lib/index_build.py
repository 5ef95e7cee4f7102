"""Map side of the index job: preprocessed Parquet files in, partial inverted lists out (no Spark imports).

:func:`index_files` is a ``mapInArrow`` function over the day's preprocessed files, one
task each; ``t`` is a file's position in the day's sorted file list. For each file it reads
the pages with pyarrow (the text never goes through the JVM), finds each page's shard
(``pidx``: its TLD/LANG group and the first bits of MD5(url)), numbers the pages of each shard
``0, 1, ...`` in file order (the *local* docid), analyzes them (one analyzer per file: a file
holds one language) and keeps the (shard, term, local docid, tf) postings of the task in
memory, like a Lucene indexing buffer. It emits three kinds of rows, all in :data:`CHUNK_SCHEMA`
(the kind is in the top bits of ``skey``):

* *stats* (kind -1): per (shard, t) the pages and tokens: the writer sums them for the CIFF
  header and turns them into each file's docid base (docid = base[t] + local docid);
* *chunk* (kind 0): per (shard, term) the task's postings as varints of (local docid gap,
  tf) pairs, when the buffer is full (``flush_postings``) and at the end;
* *doc* (kind 1): per (shard, input batch) a small serialized Arrow batch of the pages'
  record_id, length and metadata, local docids ``first, first + 1, ...``.

Spark's shuffle by shard and sort by (skey, term, t, first) is the merge: the writer
(lib.index_write) gets each shard's stats, then each term's chunks in docid order, then the
docs in docid order, so docids follow the day's input order: file by file (sorted paths),
page by page. Re-runs of the same day number every document the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lib import storage
from lib.analysis import get_analyzer
from lib.ciff.varint import INT32_MAX, decode_varint_run, encode_varints
from lib.placement.keyspace import partition_of

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
META_COLUMNS = [f.name for f in METADATA_SCHEMA if f.name not in ("collection_docid", "docid", "doclength")]
#: columns read from each preprocessed file (``language`` comes from its folder name)
READ_COLUMNS = sorted({"record_id", "url", "url_suffix", *TEXT_COLUMNS, *META_COLUMNS} - {"language"})

#: a doc row's ``docs`` bytes: one Arrow record batch (``RecordBatch.serialize``, no schema)
#: of a shard's pages from one input batch, local docids ``first, first + 1, ...``
DOCS_SCHEMA = pa.schema([("record_id", pa.string()), ("doclength", pa.int32()),
                         *[METADATA_SCHEMA.field(c) for c in META_COLUMNS]])

#: rows between the two steps (module doc), in one schema
CHUNK_SCHEMA = pa.schema(
    [
        ("pidx", pa.int32()),  # global shard ordinal
        ("pkey", pa.int32()),  # Spark partitioning key of the shard (lib.index_plan.partition_keys)
        # sort key: the row's kind + 1 in bits 56-57, a chunk's term's first 7 UTF-8 bytes
        # below: Spark's sorter keeps a leading long as each record's sort prefix, compares
        # prefixes first and the other columns only on ties
        ("skey", pa.int64()),
        ("term", pa.string()),
        ("t", pa.int32()),  # input file
        ("first", pa.int32()),  # first local docid of a chunk or of a doc row's pages
        # chunk: varints of (docid gap, tf) pairs, the first docid absolute: ~2.5 bytes a
        # posting instead of 8 through the JVM, the shuffle and the sort
        ("postings", pa.binary()),
        # doc: a serialized DOCS_SCHEMA batch; stats: pages and tokens, two little-endian int64
        ("data", pa.binary()),
    ]
)
#: the sort that makes the shuffle a merge (sort_columns)
SORT_COLUMNS = ["skey", "term", "t", "first"]

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



@dataclass(frozen=True)
class MapPlan:
    """What every map task needs from the driver's plan (small: pickled with the function)."""

    groups: dict[tuple[str, str], tuple[int, int]]  # (url_suffix or '', language or '') -> (base pidx, bits)
    pkeys: list[int]  # pidx -> partitioning key
    # postings buffered per task before chunks are emitted: 16 bytes each (64 MB), about twice
    # that while the buffer is sorted
    flush_postings: int = 4_000_000
    batch_rows: int = 8192
    columns: list[str] = field(default_factory=lambda: list(READ_COLUMNS))


def page_text(title: str | None, description: str | None, plain_text: str | None) -> str:
    """The text a page is indexed by: title, description and main text."""
    return "\n".join(p for p in (title, description, plain_text) if p)


def page_texts(batch: pa.RecordBatch) -> pa.Array:
    """:func:`page_text` of every row, computed by Arrow (empty parts only add separators)."""
    import pyarrow.compute as pc

    cols = [batch.column(c).cast(pa.string()) for c in TEXT_COLUMNS]
    return pc.binary_join_element_wise(*cols, "\n", null_handling="skip")


def shard_of(url: str | None, base: int, bits: int) -> int:
    """Global shard ordinal of a page: its group's base + its key-space partition among the
    group's ``2**bits`` (the first ``bits`` bits of MD5(url))."""
    return base + partition_of(url or "", 1 << bits)


def kinds(skey: pa.Array) -> np.ndarray:
    """The row kinds (KIND_*) of a batch, from its ``skey`` column."""
    return (skey.to_numpy(zero_copy_only=False) >> 56) - 1


def stats_bytes(docs: int, tokens: int) -> bytes:
    return np.array([docs, tokens], "<i8").tobytes()


def read_stats(data: bytes) -> tuple[int, int]:
    """(pages, tokens) of a stats row's ``data``."""
    docs, tokens = np.frombuffer(data, "<i8", 2).tolist()
    return docs, tokens


def sort_columns(one_shard_per_partition: bool) -> list[str]:
    """Columns of the writer's sort; ``pidx`` leads only when partitions hold several shards."""
    return SORT_COLUMNS if one_shard_per_partition else ["pidx", *SORT_COLUMNS]


def sort_keys(kind: int, terms: pa.Array | None, n: int) -> pa.Array:
    """``skey`` of ``n`` rows (see :data:`CHUNK_SCHEMA`): byte order of the prefix == term order."""
    key = np.full(n, (kind + 1) << 56, np.int64)
    if terms is not None and n:
        off = np.frombuffer(terms.buffers()[1], np.int32, n + 1, terms.offset * 4).astype(np.int64)
        data = np.frombuffer(terms.buffers()[2], np.uint8) if off[-1] > off[0] else np.zeros(1, np.uint8)
        length = off[1:] - off[:-1]
        for j in range(7):
            have = length > j
            byte = data[np.where(have, off[:-1] + j, 0).clip(0, len(data) - 1)].astype(np.int64)
            key |= np.where(have, byte, 0) << (8 * (6 - j))
    return pa.array(key)


def chunk_batch(cols: dict[str, pa.Array], n: int) -> pa.RecordBatch:
    """A :data:`CHUNK_SCHEMA` batch of ``n`` rows; missing columns are null."""
    arrays = [cols[f.name] if f.name in cols else pa.nulls(n, f.type) for f in CHUNK_SCHEMA]
    return pa.RecordBatch.from_arrays(arrays, schema=CHUNK_SCHEMA)


def varint_column(values: np.ndarray, bounds: np.ndarray) -> pa.Array:
    """Binary array whose row i holds the varints of ``values[bounds[i]:bounds[i+1]]``
    (values >= 0, < 2**31; ``bounds`` relative to ``values``)."""
    data, nb = encode_varints(values)
    ends = np.r_[0, np.cumsum(nb, dtype=np.int64)]
    offsets = ends[bounds]
    if offsets[-1] > INT32_MAX:
        raise ValueError("chunk batch over 2 GiB")
    return pa.Array.from_buffers(pa.binary(), len(bounds) - 1,
                                 [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)])


def read_varint_column(col: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of :func:`varint_column`: (the values as int64, row bounds in them)."""
    offsets = np.frombuffer(col.buffers()[1], np.int32, len(col) + 1, col.offset * 4).astype(np.int64)
    lo, hi = int(offsets[0]), int(offsets[-1])
    raw = np.frombuffer(col.buffers()[2], np.uint8, hi - lo, lo) if hi > lo else np.zeros(0, np.uint8)
    values, _ = decode_varint_run(raw)
    ends = np.r_[0, np.cumsum(raw < 0x80, dtype=np.int64)]  # values completed before each byte
    return values.astype(np.int64), ends[offsets - lo]


class _TaskBuffer:
    """Postings of one task, all shards, until flushed as chunk rows."""

    def __init__(self, plan: MapPlan, t: int):
        self.plan, self.t = plan, t
        self.pkeys = np.asarray(plan.pkeys, np.int32)
        self.terms: list[str] = []  # the analyzer's vocabulary the buffered term ids index
        self.parts: list[tuple[np.ndarray, ...]] = []  # (pidx, term id, local doc, tf) per batch
        self.shards: list[np.ndarray] = []
        self.size = 0

    def add(self, vocab: list[str], shards: np.ndarray, pidx: np.ndarray, term: np.ndarray, doc: np.ndarray,
            tf: np.ndarray) -> Iterator[pa.RecordBatch]:
        """Buffer a batch's postings; ``shards`` are the distinct values of ``pidx``."""
        if vocab is not self.terms:  # the analyzer started a new vocabulary: old ids go out first
            yield from self.flush()
            self.terms = vocab
        i32 = np.int32  # 16 bytes a buffered posting
        self.parts.append(tuple(x.astype(i32, copy=False) for x in (pidx, term, doc, tf)))
        self.shards.append(shards)
        self.size += len(term)
        if self.size >= self.plan.flush_postings:
            yield from self.flush()

    def flush(self) -> Iterator[pa.RecordBatch]:
        """Chunk rows: one per (shard, term) in the buffer, local docids ascending."""
        if not self.parts:
            return
        pidx, term, doc, tf = (np.concatenate(c) for c in zip(*self.parts))
        shards = np.unique(np.concatenate(self.shards))  # a few values per batch: cheap
        self.parts, self.size, self.shards = [], 0, []
        p_rank = np.searchsorted(shards, pidx)
        n, v = len(term), max(len(self.terms), 1)
        if len(shards) * v * n < 1 << 62:
            # one int64 sort (numpy's SIMD sort) of (shard, term, position); within a (shard,
            # term) positions ascend with local docids: batches append in file order and each
            # batch's triples come sorted by (term, doc)
            order = np.sort((p_rank.astype(np.int64) * v + term.astype(np.int64)) * n + np.arange(n)) % n
        else:
            order = np.lexsort((np.arange(n), term, p_rank))
        pidx, term, doc, tf = pidx[order], term[order], doc[order], tf[order]
        cut = np.flatnonzero((term[1:] != term[:-1]) | (pidx[1:] != pidx[:-1])) + 1
        starts = np.r_[0, cut]
        bounds = np.r_[starts, n]
        words = self.terms
        rows = len(starts)
        step = 1 << 16
        for a in range(0, rows, step):
            z = min(a + step, rows)
            s = starts[a:z]
            p = pidx[s].astype(np.int32)
            b = bounds[a : z + 1] - bounds[a]
            lo, hi = int(bounds[a]), int(bounds[z])
            d = doc[lo:hi]
            gaps = d.copy()
            gaps[1:] -= d[:-1]
            gaps[b[:-1]] = d[b[:-1]]  # each chunk's first docid absolute
            names = pa.array([words[i] for i in term[s].tolist()], pa.string())
            yield chunk_batch({
                "pidx": pa.array(p),
                "pkey": pa.array(self.pkeys[p]),
                "term": names,
                "skey": sort_keys(KIND_CHUNK, names, z - a),
                "t": pa.array(np.full(z - a, self.t, np.int32)),
                "first": pa.array(doc[s].astype(np.int32)),
                "postings": varint_column(np.stack([gaps, tf[lo:hi]], axis=1).ravel(), b * 2),
            }, z - a)


def _file_pidx(batch: pa.RecordBatch, language: str, plan: MapPlan, path: str) -> np.ndarray:
    urls = batch.column("url").to_pylist()
    suffixes = batch.column("url_suffix").to_pylist()
    out = np.empty(len(urls), np.int32)
    groups = plan.groups
    for i, (u, s) in enumerate(zip(urls, suffixes)):
        g = groups.get((s or "", language))
        if g is None:
            raise RuntimeError(f"{path}: page {u!r} (suffix {s!r}, language {language!r}) is in no planned group:"
                               " the input changed since the plan was made")
        out[i] = shard_of(u, *g)
    return out


def index_file(t: int, path: str, language: str, plan: MapPlan, docs: dict[int, int], tokens: dict[int, int],
               buf: _TaskBuffer) -> Iterator[pa.RecordBatch]:
    """Doc rows and (when the buffer fills) chunk rows of one preprocessed file."""
    analyzer = get_analyzer(language or None)
    pkeys = buf.pkeys
    f = pq.ParquetFile(storage.local_path(path))
    names = set(f.schema_arrow.names)
    missing = [c for c in plan.columns if c not in names]
    if missing:
        raise ValueError(f"{path}: preprocessed pages lack columns {missing}")
    for b in f.iter_batches(batch_size=plan.batch_rows, columns=plan.columns):
        n = b.num_rows
        if n == 0:
            continue
        pidx = _file_pidx(b, language, plan, path)
        bt = analyzer.analyze_batch(page_texts(b))
        lengths = bt.doclength
        lang = pa.array([language] * n, pa.string())
        docs_cols = [b.column("record_id").cast(pa.string()), pa.array(lengths.astype(np.int32))]
        docs_cols += [lang if c == "language" else b.column(c).cast(DOCS_SCHEMA.field(c).type) for c in META_COLUMNS]
        page_rows = pa.RecordBatch.from_arrays(docs_cols, schema=DOCS_SCHEMA)
        # local docid of each row: pages of a shard numbered on in file order
        order = np.argsort(pidx, kind="stable")
        ps, first, counts = np.unique(pidx[order], return_index=True, return_counts=True)
        local = np.empty(n, np.int32)
        blobs, firsts = [], []
        for p, a, c in zip(ps.tolist(), first.tolist(), counts.tolist()):
            rows = order[a : a + c]  # one shard's pages of this batch: consecutive local docids
            base = docs.get(p, 0)
            local[rows] = np.arange(base, base + c)
            docs[p] = base + c
            tokens[p] = tokens.get(p, 0) + int(lengths[rows].sum())
            blobs.append(page_rows.take(pa.array(rows)).serialize().to_pybytes())
            firsts.append(base)
        if len(bt.doc):
            yield from buf.add(bt.vocab, ps, pidx[bt.doc], bt.term, local[bt.doc], bt.tf)
        m = len(ps)
        p32 = ps.astype(np.int32)
        yield chunk_batch({
            "pidx": pa.array(p32),
            "pkey": pa.array(pkeys[p32]),
            "skey": sort_keys(KIND_DOC, None, m),
            "t": pa.array(np.full(m, t, np.int32)),
            "first": pa.array(firsts, pa.int32()),
            "data": pa.array(blobs, pa.binary()),
        }, m)


def index_files(batches: Iterator[pa.RecordBatch], plan: MapPlan,
                files: list[tuple[int, str, str]]) -> Iterator[pa.RecordBatch]:
    """The map step (module doc). Input: rows whose first column indexes ``files``, the
    day's ``(t, path, language)``."""
    for b in batches:
        for i in b.column(0).to_pylist():
            t, path, language = files[i]
            docs: dict[int, int] = {}
            tokens: dict[int, int] = {}
            buf = _TaskBuffer(plan, t)
            yield from index_file(t, path, language, plan, docs, tokens, buf)
            yield from buf.flush()
            if docs:
                ps = sorted(docs)
                p = np.asarray(ps, np.int32)
                yield chunk_batch({
                    "pidx": pa.array(p),
                    "pkey": pa.array(buf.pkeys[p]),
                    "skey": sort_keys(KIND_STATS, None, len(ps)),
                    "t": pa.array(np.full(len(ps), t, np.int32)),
                    "data": pa.array([stats_bytes(docs[q], tokens.get(q, 0)) for q in ps], pa.binary()),
                }, len(ps))
