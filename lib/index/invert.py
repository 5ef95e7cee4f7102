"""Map side of the index job: preprocessed Parquet files in, partial inverted lists out (no Spark imports).

:func:`index_files` is a :func:`lib.runtime.maptasks.map_tasks` function over runs of consecutive preprocessed
files, planned by bytes (:mod:`lib.runtime.packing`); ``t`` is the position of a run's first file in the day's
sorted file list. For each run (each file of it in turn, numbered on as one) it reads
the pages with pyarrow (the text never goes through the JVM), finds each page's shard
(``pidx``: its TLD/LANG group and the first bits of MD5(url)), numbers the pages of each shard
``0, 1, ...`` in file order (the *local* docid), analyzes them (one analyzer per file: a file
holds one language) and keeps the (shard, term, local docid) occurrences of the task in
memory, like a Lucene indexing buffer. It writes them into the job's spill folder (beside the
output, so on the filesystem every executor shares), per shard ``pidx``:

* ``{pidx}/t{t}-s{seg}.post.arrow``: a *segment*, one per shard each time the buffer is
  flushed (full at ``flush_postings``, and at the end of the file): an Arrow IPC file of one
  row per term, ``term``, ``docs`` and ``tfs`` (``list<int32>``, local docids ascending);
* ``{pidx}/t{t}.docs.arrow``: the file's pages of that shard in local docid order
  (:data:`DOCS_SCHEMA`: record_id, doclength and metadata);

and yields one :data:`MAP_SCHEMA` row per (shard, file): pages, tokens, segments. The driver
turns those into each shard's header counts and each file's docid base (docid = base[t] +
local docid, bases in file order), and the writer (lib.index.write) merges the segments.
No postings go through the JVM or Spark's shuffle: Spark only schedules the tasks.
Files are written under a temporary name and renamed, so a retried task replaces its own
output. Re-runs of the same day number every document the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lib.index import owi
from lib.pages.keyspace import partition_of
from lib.store import atomic, locations
from lib.text import stoplists
from lib.text.analysis import get_analyzer
from lib.text.stoplists import Ref

#: metadata-{n}.parquet: schema 0.1.0 plus ours (lib.index.owi), in docid order
#: (collection_docid = record_id = the CIFF DocRecord's collection_docid)
METADATA_SCHEMA = owi.METADATA_SCHEMA
#: page columns the tokenizer needs besides the metadata ones
TEXT_COLUMNS = ["title", "description", "plain_text"]
#: columns every preprocessed file must have (``language`` comes from its folder name)
READ_COLUMNS = sorted({"record_id", "url", "url_suffix", *TEXT_COLUMNS, *owi.PAGE_INPUT})

#: a shard's pages of one input file, local docids 0, 1, ... (``t{t}.docs.arrow``): the metadata rows without docid
DOCS_SCHEMA = owi.DOCS_SCHEMA
#: a segment's rows (``t{t}-s{seg}.post.arrow``): one per term, the term's postings of the segment
SEGMENT_SCHEMA = pa.schema([("term", pa.string()), ("docs", pa.list_(pa.int32())), ("tfs", pa.list_(pa.int32()))])
#: what each map task reports per (shard, input file) it wrote
MAP_SCHEMA = pa.schema(
    [("pidx", pa.int32()), ("t", pa.int32()), ("docs", pa.int64()), ("tokens", pa.int64()), ("segments", pa.int32())]
)

#: what each shard's task reports: its counts and its files' sizes, then the files' sha256 (hex: the
#: day's manifest, checked by the search service, docs/serve.md)
_STATS_COUNTS = ("docs", "duplicates", "terms", "postings", "total_terms", "ciff_bytes", "metadata_bytes")
STATS_SCHEMA = pa.schema(
    [("pidx", pa.int32())]
    + [(n, pa.int64()) for n in _STATS_COUNTS]
    + [(n, pa.string()) for n in ("ciff_sha256", "metadata_sha256")]
)


@dataclass(frozen=True)
class MapPlan:
    """What every map task needs from the driver's plan (small: pickled with the function)."""

    groups: dict[tuple[str, str], tuple[int, int]]  # (url_suffix or '', language or '') -> (base pidx, bits)
    spill: str  # the job's spill folder (module doc)
    # term occurrences buffered per task before segments are written: 12 bytes each (48 MB),
    # about twice that while the buffer is sorted
    flush_postings: int = 4_000_000
    batch_rows: int = 8192
    columns: list[str] = field(default_factory=lambda: list(READ_COLUMNS))
    #: the day's near-duplicate clusters (lib.neardup.day_clusters): an Arrow file of (record_id,
    #: dup_cluster) for the pages whose representative is another page; "": every page its own
    dup_cluster: str = ""
    #: the day's pages with an earlier day's copy (lib.neardup.crossday): an Arrow file of
    #: (record_id, dup_of_day, dup_of); "": none
    dup_of: str = ""
    #: the shared stop-word lists the driver pinned (lib.text.stoplists); each task loads them,
    #: checksums checked; (): the packaged lists
    stoplists: tuple[Ref, ...] = ()


def load_dup_clusters(path: str) -> dict[str, str]:
    """The day's ``dup_cluster.arrow`` as record id -> representative (lib.neardup.day_clusters); a page
    not in it points to itself."""
    if not path:
        return {}
    with pa.memory_map(path) as m:
        t = pa.ipc.open_file(m).read_all()
    return dict(zip(t.column("record_id").to_pylist(), t.column("dup_cluster").to_pylist()))


def load_dup_of(path: str) -> dict[str, tuple[str, str]]:
    """The day's ``dup_of.arrow`` as record id -> (day, record id) of the earlier day's page it
    copies (lib.neardup.crossday); a page not in it has no earlier copy."""
    if not path:
        return {}
    with pa.memory_map(path) as m:
        t = pa.ipc.open_file(m).read_all()
    return dict(
        zip(t.column("record_id").to_pylist(), zip(*(t.column(c).to_pylist() for c in ("dup_of_day", "dup_of"))))
    )


def page_text(title: str | None, description: str | None, plain_text: str | None) -> str:
    """The text a page is indexed by: title, description and main text."""
    return "\n".join(p for p in (title, description, plain_text) if p)


def page_texts(batch: pa.RecordBatch) -> pa.Array:
    """:func:`page_text` of every row, computed by Arrow (empty parts only add separators)."""
    cols = [batch.column(c).cast(pa.string()) for c in TEXT_COLUMNS]
    return pc.binary_join_element_wise(*cols, "\n", null_handling="skip")


def shard_of(url: str | None, base: int, bits: int) -> int:
    """Global shard ordinal of a page: its group's base + its key-space partition among the
    group's ``2**bits`` (the first ``bits`` bits of MD5(url))."""
    return base + partition_of(url or "", 1 << bits)


def segment_path(spill: str, pidx: int, t: int, seg: int) -> str:
    return os.path.join(spill, str(pidx), f"t{t:06d}-s{seg:04d}.post.arrow")


def docs_path(spill: str, pidx: int, t: int) -> str:
    return os.path.join(spill, str(pidx), f"t{t:06d}.docs.arrow")


def write_arrow(path: str, table: pa.Table | pa.RecordBatch) -> None:
    """An Arrow IPC file (uncompressed: the reader maps it), written under a temporary name
    and renamed: a retried task replaces it whole."""
    with atomic.atomic_path(path) as tmp, pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write(table)


class _TaskBuffer:
    """Term occurrences of one file, all its shards, until flushed as segments."""

    def __init__(self, plan: MapPlan, t: int):
        self.plan, self.t = plan, t
        self.terms: list[str] = []  # the analyzer's vocabulary the buffered term ids index
        self.parts: list[tuple[np.ndarray, ...]] = []  # (pidx, term id, local doc) per batch
        self.shards: list[np.ndarray] = []
        self.size = 0
        self.segments: dict[int, int] = {}  # pidx -> segments written

    def add(self, vocab: list[str], shards: np.ndarray, pidx: np.ndarray, term: np.ndarray, doc: np.ndarray) -> None:
        """Buffer a batch's term occurrences; ``shards`` are the distinct values of ``pidx``."""
        if vocab is not self.terms:  # the analyzer started a new vocabulary: old ids go out first
            self.flush()
            self.terms = vocab
        i32 = np.int32  # 12 bytes an occurrence
        self.parts.append(tuple(x.astype(i32, copy=False) for x in (pidx, term, doc)))
        self.shards.append(shards)
        self.size += len(term)
        if self.size >= self.plan.flush_postings:
            self.flush()

    def flush(self) -> None:
        """One segment per shard in the buffer: a row per term, local docids ascending, tfs."""
        if not self.parts:
            return
        pidx, term, doc = (np.concatenate(c) for c in zip(*self.parts))
        shards = np.unique(np.concatenate(self.shards))  # a few values per batch: cheap
        self.parts, self.size, self.shards = [], 0, []
        v, nd = max(len(self.terms), 1), int(doc.max()) + 1
        rank = np.searchsorted(shards, pidx) if len(shards) > 1 else np.zeros(len(pidx), np.int64)
        if len(shards) * v * nd < 1 << 62:
            # one int64 sort (numpy's SIMD sort) of (shard, term, local doc): equal keys are one
            # posting's occurrences, so the runs give the tfs
            key = np.sort((rank.astype(np.int64) * v + term) * nd + doc)
            first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
            tf = np.diff(np.r_[first, len(key)]).astype(np.int32)
            rest, doc = np.divmod(key[first], nd)
            rank, term = np.divmod(rest, v)
            pidx = shards[rank]
        else:
            order = np.lexsort((doc, term, pidx))
            pidx, term, doc = pidx[order], term[order], doc[order]
            first = np.flatnonzero(
                np.r_[True, (pidx[1:] != pidx[:-1]) | (term[1:] != term[:-1]) | (doc[1:] != doc[:-1])]
            )
            tf = np.diff(np.r_[first, len(doc)]).astype(np.int32)
            pidx, term, doc = pidx[first], term[first], doc[first]
        n = len(term)
        doc = doc.astype(np.int32)
        cut = np.flatnonzero(pidx[1:] != pidx[:-1]) + 1
        words = self.terms
        for a, z in zip(np.r_[0, cut].tolist(), np.r_[cut, n].tolist()):
            p = int(pidx[a])
            tm = term[a:z]
            starts = np.r_[0, np.flatnonzero(tm[1:] != tm[:-1]) + 1]
            offsets = pa.array(np.r_[starts, z - a].astype(np.int32))
            seg = self.segments.get(p, 0)
            self.segments[p] = seg + 1
            write_arrow(
                segment_path(self.plan.spill, p, self.t, seg),
                pa.record_batch(
                    [
                        pa.array([words[i] for i in tm[starts].tolist()], pa.string()),
                        pa.ListArray.from_arrays(offsets, pa.array(doc[a:z])),
                        pa.ListArray.from_arrays(offsets, pa.array(tf[a:z])),
                    ],
                    schema=SEGMENT_SCHEMA,
                ),
            )


def _file_pidx(batch: pa.RecordBatch, language: str, plan: MapPlan, path: str) -> np.ndarray:
    urls = batch.column("url").to_pylist()
    suffixes = batch.column("url_suffix").to_pylist()
    out = np.empty(len(urls), np.int32)
    groups = plan.groups
    for i, (u, s) in enumerate(zip(urls, suffixes)):
        g = groups.get((s or "", language))
        if g is None:
            raise RuntimeError(
                f"{path}: page {u!r} (suffix {s!r}, language {language!r}) is in no planned group:"
                " the input changed since the plan was made"
            )
        out[i] = shard_of(u, *g)
    return out


def _check_columns(f: pq.ParquetFile, path: str, plan: MapPlan) -> set[str]:
    names = set(f.schema_arrow.names)
    missing = [c for c in plan.columns if c not in names]
    if missing:
        raise ValueError(f"{path}: preprocessed pages lack columns {missing}")
    return names


def _run_batches(files: list[tuple[str, str]], plan: MapPlan) -> Iterator[tuple[str, str, pa.RecordBatch]]:
    """(language, where, batch) of a run's pages in file order, in batches of up to
    ``plan.batch_rows`` rows that span consecutive files of one language and schema: a file of
    ten pages costs a tenth of a batch, not a batch (``where`` names the batch's files)."""
    rows: list[pa.RecordBatch] = []
    first = last = lang = ""

    def cut() -> Iterator[tuple[str, str, pa.RecordBatch]]:
        where = first if first == last else f"{first} .. {last}"
        for batch in pa.Table.from_batches(rows).combine_chunks().to_batches(max_chunksize=plan.batch_rows):
            yield lang, where, batch

    for path, language in files:
        f = pq.ParquetFile(locations.local_path(path))
        names = _check_columns(f, path, plan)
        columns = plan.columns + [c for c in owi.OPTIONAL_PAGE_COLUMNS if c in names]
        columns += [x.name for x in owi.plugin_fields(f.schema_arrow)]  # enrichment plugins' columns
        for b in f.iter_batches(batch_size=plan.batch_rows, columns=columns):
            if not b.num_rows:
                continue
            if rows and (language != lang or b.schema != rows[0].schema):
                yield from cut()
                rows = []
            if not rows:
                first, lang = path, language
            rows.append(b)
            last = path
            if sum(r.num_rows for r in rows) >= plan.batch_rows:
                yield from cut()
                rows = []
    if rows:
        yield from cut()


def _docs_table(batches: list[pa.RecordBatch]) -> pa.Table:
    """A shard's docs rows of a run; files of a run whose plugin columns differ give the union
    of their columns (absent ones null)."""
    if all(b.schema == batches[0].schema for b in batches):
        return pa.Table.from_batches(batches, schema=batches[0].schema).combine_chunks()
    return pa.concat_tables([pa.Table.from_batches([b]) for b in batches], promote_options="default").combine_chunks()


def index_run(t: int, files: list[tuple[str, str]], plan: MapPlan) -> Iterator[pa.RecordBatch]:
    """Segments and docs files of consecutive preprocessed files ``(path, language)``, the
    first being file ``t`` of the day; one MAP_SCHEMA row per shard, reported under ``t``.

    The run's pages are numbered on from file to file as if they were one file, and the run
    shares one buffer: a day cut into many small files writes as few segments as one cut into
    few large ones, and since the runs are consecutive in file order, every page gets the
    docid it gets in a task of its own file (docid = base of the run + local docid)."""
    buf = _TaskBuffer(plan, t)
    dups = load_dup_clusters(plan.dup_cluster)
    earlier = load_dup_of(plan.dup_of)
    docs: dict[int, int] = {}
    tokens: dict[int, int] = {}
    pages: dict[int, list[pa.RecordBatch]] = {}
    lists = stoplists.load(plan.stoplists)
    for language, where, b in _run_batches(files, plan):
        analyzer = get_analyzer(language or None, lists)
        n = b.num_rows
        if n == 0:
            continue
        pidx = _file_pidx(b, language, plan, where)
        bt = analyzer.batch_tokens(page_texts(b))
        lengths = bt.doclength
        page_rows = owi.metadata_batch(b, language, lengths, dups, earlier)
        # local docid of each row: pages of a shard numbered on in file order
        order = np.argsort(pidx, kind="stable")
        ps, first, counts = np.unique(pidx[order], return_index=True, return_counts=True)
        local = np.empty(n, np.int32)
        for p, a, c in zip(ps.tolist(), first.tolist(), counts.tolist()):
            rows = order[a : a + c]  # one shard's pages of this batch: consecutive local docids
            base = docs.get(p, 0)
            local[rows] = np.arange(base, base + c)
            docs[p] = base + c
            tokens[p] = tokens.get(p, 0) + int(lengths[rows].sum())
            pages.setdefault(p, []).append(page_rows if len(ps) == 1 else page_rows.take(pa.array(rows)))
        if len(bt.doc):
            buf.add(bt.vocab, ps, pidx[bt.doc], bt.term, local[bt.doc])
    buf.flush()
    for p in sorted(docs):
        write_arrow(docs_path(plan.spill, p, t), _docs_table(pages[p]))
    shards = sorted(docs)
    if shards:
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(shards, pa.int32()),
                pa.array([t] * len(shards), pa.int32()),
                pa.array([docs[p] for p in shards], pa.int64()),
                pa.array([tokens.get(p, 0) for p in shards], pa.int64()),
                pa.array([buf.segments.get(p, 0) for p in shards], pa.int32()),
            ],
            schema=MAP_SCHEMA,
        )


def index_file(t: int, path: str, language: str, plan: MapPlan) -> Iterator[pa.RecordBatch]:
    """:func:`index_run` of the one file ``t``."""
    return index_run(t, [(path, language)], plan)


def index_files(
    batches: Iterator[pa.RecordBatch], plan: MapPlan, runs: list[tuple[int, list[tuple[str, str]]]]
) -> Iterator[pa.RecordBatch]:
    """The map step (module doc). Input: rows whose first column indexes ``runs``, the day's
    runs of consecutive files ``(t of the first, [(path, language), ...])``."""
    for b in batches:
        for i in b.column(0).to_pylist():
            t, files = runs[i]
            yield from index_run(t, files, plan)
