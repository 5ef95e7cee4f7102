"""The serving index of one published index day (of one data center): built once from its CIFF
shards and metadata into a local cache folder, then memory-mapped by the engine.

Layout of ``CACHE/DC/YYYY-MM-DD/KEY/`` (KEY: sha256 of the day's ``_stats.json``, ``_SUCCESS`` and
file list with sizes and versions (mtime or ETag), so a re-published day, or one file of it
replaced, gets a new folder and is rebuilt):

- ``terms.txt``: the day's term strings (union over its shards), sorted, one a line; a term's line
  number is its id in every array below.
- ``offsets.u64`` [S, V+1]: per shard, the start of each term's list in that shard's postings
  (cumulative, so absent terms have length 0); ``maxtf.u32`` / ``mindl.u32`` [S, V]: each
  list's largest tf and smallest document length. Score bounds are computed from them at query
  time, so they hold for any N, df, avgdl, k1 and b (any day or language selection).
- ``shard-{i}.docids.u32`` / ``shard-{i}.tfs.u32``: the postings, docids local to the shard.
- ``shard-{i}.dl.u32``: document lengths; ``shard-{i}.ids.u64``: the first 64 bits of each page's
  URL id (sha256 of the normalized URL), for de-duplication across days.
- ``shard-{i}.docs.arrow``: the hit fields in docid order (Arrow IPC, memory-mapped);
  ``texts.bin`` + ``shard-{i}.text.i64`` [n, 2]: each page's plain text (offset, length) for snippets.
- ``info.json``: shards (tld, lang, shard, analyzer, docs, length), build seconds and bytes,
  ``stoplists``: the shared stop-word lists the day was built with (its ``_stats.json``
  ``built_with``, lib.text.stoplists), words included, so its queries are analyzed with the same
  versions whatever the root's current ones are; and
  ``skipped``: the shards that could not be served, each with its reason (lib.serve.day_manifest:
  missing, truncated, not the manifest's sha256, undecodable); ``notes``: what else the build
  could not use. ``_READY`` written last (a crashed build is never loaded).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from lib.ciff.errors import CiffError
from lib.ciff.messages import check_header, decode_doc, decode_header
from lib.ciff.stream import open_ciff
from lib.ciff.varint import decode_varint
from lib.preprocess.batches import batch_number, batch_path
from lib.serve import _maxscore
from lib.serve.day_manifest import ShardError, ShardFiles, check_file, check_listed, plan_shards, rel_path
from lib.store import layout, storage
from lib.text import stoplists
from lib.text.analysis import Analyzer, analyzer_from_description
from lib.text.stoplists import StopList

READY = "_READY"
DOC_FIELDS = [
    "record_id",
    "url",
    "title",
    "language",
    "warc_date",
    "warc_file",
    "warc_offset",
    "warc_length",
    "robots",
    "dup_cluster",
]
#: what the serving index's tables hold: a change of DOC_FIELDS makes cached days build anew
DOC_FORMAT = "3: dup_cluster"


def default_cache() -> str:
    """``$DAILYSLICE_CACHE/serving`` or ``~/.cache/dailyslice/serving``."""
    base = os.environ.get("DAILYSLICE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "dailyslice")
    return os.path.join(base, "serving")


def published_days(root: str) -> list[dt.date]:
    """Index days under ROOT/index whose ``_SUCCESS`` exists, ascending."""
    days = set()
    for f in storage.list_files(f"{root.rstrip('/')}/{layout.INDEX}", [f"/{layout.SUCCESS}"]):
        d = layout.day_of(f.uri.rsplit("/", 1)[0])
        if d is not None and f.uri.count("/_SUCCESS") == 1:
            days.add(d)
    return sorted(days)


def published_slices(root: str) -> dict[dt.date, tuple[int | None, ...]]:
    """What is served of each index day under ROOT: ``(None,)``, the day's slice, once ``DD/_SUCCESS``
    exists (a closed day: its consolidation replaces its batches); before that, the numbers of its
    published batches, ``DD/batch=N/_SUCCESS`` (lib/preprocess/batches.py), ascending."""
    days: set[dt.date] = set()
    parts: dict[dt.date, list[int]] = {}
    for f in storage.list_files(f"{root.rstrip('/')}/{layout.INDEX}", [f"/{layout.SUCCESS}"]):
        folder = f.uri.rsplit("/", 1)[0]
        if f.uri.count("/_SUCCESS") != 1:
            continue
        d = layout.day_of(folder)
        if d is not None:
            days.add(d)
            continue
        n = batch_number(folder)
        d = layout.day_of(folder.rsplit("/", 1)[0]) if n is not None else None
        if d is not None and n is not None:
            parts.setdefault(d, []).append(n)
    out: dict[dt.date, tuple[int | None, ...]] = {d: (None,) for d in days}
    for d, ns in parts.items():
        out.setdefault(d, tuple(sorted(ns)))
    return dict(sorted(out.items()))


def slice_base(root: str, kind: str, day: dt.date, batch: int | None = None) -> str:
    """The folder of ``kind`` (index, preprocessed) of a day's slice, or of its batch ``batch``."""
    base = layout.day_path(root, kind, day)
    return base if batch is None else batch_path(base, batch)


def slice_name(day: dt.date, batch: int | None = None) -> str:
    """The cache folder of a day's serving index (``2026-01-15``), or of one batch (``2026-01-15@batch=2``)."""
    return day.isoformat() if batch is None else f"{day.isoformat()}@batch={batch}"


def day_key(root: str, day: dt.date, batch: int | None = None) -> tuple[str, list[storage.FileInfo]]:
    """(KEY, files): the hash that changes when the day (or its batch) is re-published or one of its
    files is replaced (a shard fixed by hand: same size, new mtime or ETag), and its files."""
    base = slice_base(root, layout.INDEX, day, batch)
    files = storage.list_files(base)
    h = hashlib.sha256(DOC_FORMAT.encode())
    for f in files:
        rel = rel_path(f.uri, base)
        h.update(f"{rel}\0{f.size}\0{f.version}\n".encode())
        if rel in (layout.STATS, layout.SUCCESS):
            h.update(storage.read_bytes(f.uri))
    return h.hexdigest()[:20], files


@dataclass
class BuildReport:
    path: str
    seconds: float
    bytes: int
    built: bool  # False: the cache already held this version of the day
    key: str = ""  # the day version's key (day_key)
    skipped: list = field(default_factory=list)  # shards left out, with reasons (info.json "skipped")


def ensure_built(root: str, day: dt.date, cache_dir: str, dc: str, batch: int | None = None) -> BuildReport:
    """The serving index of ``day`` (or its batch ``batch``) under ``cache_dir``: built unless the
    current version exists."""
    key, files = day_key(root, day, batch)
    folder = os.path.join(cache_dir, dc, slice_name(day, batch), key)
    if os.path.exists(os.path.join(folder, READY)):
        info = json.loads(open(os.path.join(folder, "info.json")).read())
        return BuildReport(folder, info["build_seconds"], info["build_bytes"], False, key, info.get("skipped", []))
    t0 = time.time()
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f"{key}.tmp-", dir=os.path.dirname(folder))
    try:
        _build(root, day, files, tmp, batch)
        nbytes = sum(os.path.getsize(os.path.join(tmp, n)) for n in os.listdir(tmp))
        info_path = os.path.join(tmp, "info.json")
        info = json.loads(open(info_path).read())
        info.update(build_seconds=round(time.time() - t0, 3), build_bytes=nbytes, key=key, day=day.isoformat(), dc=dc)
        open(info_path, "w").write(json.dumps(info))
        open(os.path.join(tmp, READY), "w").close()
        shutil.rmtree(folder, ignore_errors=True)
        os.rename(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for old in os.listdir(os.path.dirname(folder)):  # earlier versions of the day
        if old != key and not old.startswith(f"{key}.tmp-"):
            shutil.rmtree(os.path.join(os.path.dirname(folder), old), ignore_errors=True)
    return BuildReport(folder, time.time() - t0, nbytes, True, key, info["skipped"])


def _local(uri: str, tmp: str) -> str:
    """A local path for ``uri`` (s3:// objects and SWAP files over http are copied into ``tmp``)."""
    if not storage.is_s3(uri) and not storage.httpread.is_http(uri):
        return storage.local_path(uri)
    dest = os.path.join(tmp, hashlib.md5(uri.encode()).hexdigest() + "-" + uri.rsplit("/", 1)[-1])
    with storage.open_stream(uri) as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
    return dest


def _read_ciff(path: str, lists: dict[str, StopList] | None = None):
    """(analyzer name, terms, list lengths, docids, tfs, doclengths, collection_docids) of one shard.

    The postings lists are decoded by the compiled decoder (lib/serve/native/maxscore.c): a
    shard of 140k lists takes ~0.3 s instead of ~15 s through lib.ciff's per-list reader. A shard
    without postings (pages without text) has no lists and its documents. Raises ShardError
    naming what is wrong (the caller names the shard)."""
    try:
        with open_ciff(path) as f:
            data = f.read()
    except (OSError, EOFError, CiffError) as e:  # gzip.BadGzipFile is an OSError
        raise ShardError(f"unreadable: {e}") from None
    try:
        n, pos = decode_varint(data, 0)
        h = decode_header(data[pos : pos + n])
        check_header(h)
    except CiffError as e:
        raise ShardError(f"bad CIFF header: {e.reason}") from None
    pos += n
    # every message takes at least its length byte: counts beyond that are damage, not memory to allocate
    if h.num_postings_lists + h.num_docs > len(data) - pos:
        raise ShardError(
            f"header announces {h.num_postings_lists} lists and {h.num_docs} documents in {len(data) - pos} bytes"
        )
    try:
        analyzer = analyzer_from_description(h.description, lists)
    except ValueError as e:
        raise ShardError(str(e)) from None
    try:  # docids are bounded by num_docs: serving needs every posting's document length
        pos, terms, lens, docids, tfs = _maxscore.decode_lists(data, pos, h.num_postings_lists, h.num_docs)
    except ValueError as e:
        raise ShardError(str(e)) from None
    dl = np.zeros(h.num_docs, dtype=np.uint32)
    cids: list[str] = [""] * h.num_docs
    try:
        for i in range(h.num_docs):
            n, pos = decode_varint(data, pos)
            if pos + n > len(data):
                raise CiffError(f"doc record {i} ends past the end of the file")
            doc = decode_doc(data[pos : pos + n])
            pos += n
            if doc.docid != i:
                raise CiffError(f"doc record {i} has docid {doc.docid}")
            dl[i] = doc.doclength
            cids[i] = doc.collection_docid
    except CiffError as e:
        raise ShardError(e.reason) from None
    if pos != len(data):
        raise ShardError(f"{len(data) - pos} bytes after the last doc record")
    return (
        analyzer.name,
        terms,
        np.frombuffer(lens, np.int64),
        np.frombuffer(docids, np.uint32),
        np.frombuffer(tfs, np.uint32),
        dl,
        cids,
    )


def _metadata(path: str | None, cids: list[str]) -> pa.Table:
    """The shard's hit fields in docid order (record_id = CIFF collection_docid); ``path`` local."""
    n = len(cids)
    try:
        t = pq.read_table(path) if path else pa.table({"collection_docid": pa.array(cids)})
    except (OSError, pa.ArrowException) as e:
        raise ShardError(f"metadata unreadable: {e}") from None
    if "docid" in t.column_names:
        t = t.sort_by("docid")
    if t.num_rows != n:
        raise ShardError(f"{t.num_rows} metadata rows for {n} documents")
    for c in ("collection_docid", "record_id"):
        if c in t.column_names and t.column(c).to_pylist() != cids:
            raise ShardError(f"the metadata's {c} column is not the CIFF's documents (another shard's file?)")
    cols = {"record_id": pa.array(cids, pa.string())}
    for name in DOC_FIELDS[1:] + ["id", "plain_text"]:
        if name in t.column_names:
            col = t.column(name)
            if name == "robots":  # the directives search and captures honour, as "nosnippet,noarchive"
                col = pa.array([",".join(v) if v else None for v in col.to_pylist()], pa.string())
            if name == "warc_date" and not pa.types.is_string(col.type):
                col = (
                    pc.strftime(col, format="%Y-%m-%dT%H:%M:%SZ")
                    if pa.types.is_timestamp(col.type)
                    else col.cast(pa.string())
                )
            cols[name] = col
        elif name not in ("plain_text",):
            cols[name] = pa.nulls(n, pa.int64() if name in ("warc_offset", "warc_length") else pa.string())
    return pa.table(cols)


def _id64(ids: pa.ChunkedArray | pa.Array, urls) -> np.ndarray:
    """First 64 bits of each URL id (hex sha256); pages without one hash their URL."""
    out = np.zeros(len(ids), np.uint64)
    for i, (x, u) in enumerate(zip(ids.to_pylist(), urls.to_pylist())):
        x = x or hashlib.sha256((u or "").encode()).hexdigest()
        out[i] = int(x[:16], 16)
    return out


def _load_shard(s: ShardFiles, tmp: str, lists: dict[str, StopList] | None = None) -> tuple:
    """(analyzer name, terms, lens, docids, tfs, dl, cids, metadata table) of a shard, checked
    against the day's manifest first; ShardError says why it cannot be served."""
    check_listed(s)
    assert s.ciff is not None  # check_listed refuses a shard without its CIFF
    exp = s.expected
    path = _local(s.ciff.uri, tmp)
    check_file(path, exp.ciff_sha256 if exp else None)
    meta_path = _local(s.metadata.uri, tmp) if s.metadata else None
    if meta_path:
        check_file(meta_path, exp.metadata_sha256 if exp else None, f"{layout.metadata_name(s.number)} ")
    name, terms, lens, docids, tfs, dl, cids = _read_ciff(path, lists)
    if exp and exp.docs is not None and exp.docs != len(cids):
        raise ShardError(f"{len(cids)} documents, the manifest says {exp.docs}")
    return name, terms, lens, docids, tfs, dl, cids, _metadata(meta_path, cids)


def _day_lists(root: str, base: str, notes: list[str]) -> dict[str, StopList]:
    """The shared stop-word lists the day (or the batch at ``base``) records in its ``_stats.json``; one that cannot be
    loaded is a note (its language's shards are then skipped, each naming the list)."""
    uri = storage.join(base, layout.STATS)
    try:
        built_with = json.loads(storage.read_bytes(uri)).get("built_with") if storage.exists(uri) else None
        lists, problems = stoplists.day_lists(built_with, root)
    except (ValueError, AttributeError, stoplists.StopListError) as e:
        notes.append(f"stop-word lists: {uri} unreadable ({e})")
        return {}
    notes.extend(f"stop-word list of {lang}: {why}" for lang, why in sorted(problems.items()))
    return lists


def _build(root: str, day: dt.date, files: list[storage.FileInfo], out: str, batch: int | None = None) -> None:
    base = slice_base(root, layout.INDEX, day, batch)
    shards, notes = plan_shards(base, files)
    lists = _day_lists(root, base, notes)
    tmp = tempfile.mkdtemp(dir=out)
    vocab_per_shard: list[tuple[list[str], np.ndarray, np.ndarray, np.ndarray]] = []
    meta_info: list[dict[str, object]] = []
    skipped: list[dict] = []
    texts = open(os.path.join(out, "texts.bin"), "wb")
    pos = 0
    need_text: set[str] = set()  # languages of shards without plain_text in their metadata
    rid_index: dict[str, list[tuple[int, int]]] = {}  # a record id may repeat (docs/serve.md)
    for s in shards:
        try:
            name, terms, lens, docids, tfs, dl, cids, meta = _load_shard(s, tmp, lists)
        except Exception as e:  # one shard never takes the day down: it is named instead
            skipped.append(s.skipped(str(e) if isinstance(e, ShardError) else f"{type(e).__name__}: {e}"))
            continue
        finally:
            for f in os.listdir(tmp):  # s3:// copies: one shard's at a time
                os.remove(os.path.join(tmp, f))
        i = len(meta_info)
        starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64) if len(lens) else np.zeros(0, np.int64)
        maxtf = np.maximum.reduceat(tfs, starts).astype(np.uint32) if len(lens) else np.zeros(0, np.uint32)
        mindl = np.minimum.reduceat(dl[docids], starts).astype(np.uint32) if len(lens) else np.zeros(0, np.uint32)
        docids.tofile(os.path.join(out, f"shard-{i}.docids.u32"))
        tfs.tofile(os.path.join(out, f"shard-{i}.tfs.u32"))
        dl.tofile(os.path.join(out, f"shard-{i}.dl.u32"))
        vocab_per_shard.append((terms, lens, maxtf, mindl))
        _id64(meta.column("id"), meta.column("url")).tofile(os.path.join(out, f"shard-{i}.ids.u64"))
        spans = np.zeros((len(cids), 2), np.int64)
        if "plain_text" in meta.column_names:
            for r, text in enumerate(meta.column("plain_text").to_pylist()):
                b = (text or "").encode()
                texts.write(b)
                spans[r] = (pos, len(b))
                pos += len(b)
            meta = meta.drop(["plain_text"])
        else:
            for r, cid in enumerate(cids):
                rid_index.setdefault(cid, []).append((i, r))
            need_text.add(s.lang)
        spans.tofile(os.path.join(out, f"shard-{i}.text.i64"))
        with ipc.new_file(os.path.join(out, f"shard-{i}.docs.arrow"), meta.schema) as w:
            w.write_table(meta)
        meta_info.append(
            {
                "tld": s.tld,
                "lang": s.lang,
                "shard": s.number,
                "analyzer": name,
                "docs": int(len(dl)),
                "length": int(dl.sum()),
                "postings": int(len(docids)),
                "source": s.rel,
            }
        )
    if rid_index:
        pos = _join_texts(root, day, need_text, rid_index, out, texts, pos, tmp, notes, batch)
    texts.close()
    _write_vocab(vocab_per_shard, out)
    shutil.rmtree(tmp, ignore_errors=True)
    json.dump(
        {
            "shards": meta_info,
            "skipped": skipped,
            "notes": notes,
            "texts_bytes": pos,
            "stoplists": {
                lang: {"version": sl.version, "sha256": sl.sha256, "words": sorted(sl.words)}
                for lang, sl in sorted(lists.items())
            },
        },
        open(os.path.join(out, "info.json"), "w"),
    )


def _join_texts(
    root: str,
    day: dt.date,
    langs: set[str],
    rid_index: dict,
    out: str,
    texts,
    pos: int,
    tmp: str,
    notes: list[str],
    batch: int | None = None,
) -> int:
    """Plain texts from the preprocessed day (or batch), by record_id, for shards whose metadata has
    none. A file that cannot be read leaves its pages without snippets and adds a note."""
    pre = slice_base(root, layout.PREPROCESSED, day, batch)
    spans: dict[int, np.ndarray] = {}
    for f in storage.list_files(pre, [".parquet"]):
        lang = next((layout.language_of(p) for p in f.uri.split("/") if layout.language_of(p)), None)
        if lang not in langs:
            continue
        try:
            pf = pq.ParquetFile(_local(f.uri, tmp))
            for rows in pf.iter_batches(columns=["record_id", "plain_text"], batch_size=4096):
                for rid, text in zip(rows.column(0).to_pylist(), rows.column(1).to_pylist()):
                    where = rid_index.get(rid)
                    if not where:
                        continue
                    b = (text or "").encode()
                    texts.write(b)
                    for i, r in where:  # every document of that record id, in any shard
                        if i not in spans:
                            spans[i] = np.fromfile(os.path.join(out, f"shard-{i}.text.i64"), np.int64).reshape(-1, 2)
                        spans[i][r] = (pos, len(b))
                    pos += len(b)
        except (OSError, pa.ArrowException) as e:
            notes.append(f"snippets: {rel_path(f.uri, pre)} of the preprocessed day unreadable ({e})")
    for i, s in spans.items():
        s.tofile(os.path.join(out, f"shard-{i}.text.i64"))
    return pos


def _write_vocab(per_shard: list, out: str) -> None:
    vocab = sorted(set().union(*(set(t) for t, *_ in per_shard))) if per_shard else []
    with open(os.path.join(out, "terms.txt"), "w", encoding="utf-8") as f:
        for t in vocab:
            f.write(t.replace("\n", " ") + "\n")
    V, S = len(vocab), len(per_shard)
    varr = np.array(vocab, dtype=object)
    offs = np.lib.format.open_memmap(os.path.join(out, "offsets.npy"), "w+", np.uint64, (max(S, 1), V + 1))
    maxtf = np.lib.format.open_memmap(os.path.join(out, "maxtf.npy"), "w+", np.uint32, (max(S, 1), max(V, 1)))
    mindl = np.lib.format.open_memmap(os.path.join(out, "mindl.npy"), "w+", np.uint32, (max(S, 1), max(V, 1)))
    for s, (terms, lens, mt, md) in enumerate(per_shard):
        idx = np.searchsorted(varr, np.array(terms, dtype=object)) if terms else np.zeros(0, np.int64)
        full = np.zeros(V, np.uint64)
        full[idx] = lens
        offs[s, 1:] = np.cumsum(full)
        maxtf[s, idx] = mt
        mindl[s, idx] = md
    offs.flush()
    maxtf.flush()
    mindl.flush()
    del offs, maxtf, mindl


@dataclass
class Shard:
    """One CIFF shard in the serving index, memory-mapped."""

    index: int
    tld: str
    lang: str
    number: int
    analyzer: Analyzer
    docs: int
    length: int
    docids: np.ndarray
    tfs: np.ndarray
    dl: np.ndarray
    ids: np.ndarray
    spans: np.ndarray
    table: pa.Table
    norms: dict = field(default_factory=dict)


class DayIndex:
    """A built serving index of one (data center, day), or of one batch of the day, memory-mapped."""

    def __init__(self, folder: str, dc: str, day: dt.date, batch: int | None = None):
        self.folder, self.dc, self.day, self.batch = folder, dc, day, batch
        info = json.loads(open(os.path.join(folder, "info.json")).read())
        self.info = info
        self.key = os.path.basename(folder)
        self.skipped: list[dict] = info.get("skipped", [])  # shards not served, with reasons
        self.notes: list[str] = info.get("notes", [])
        with open(os.path.join(folder, "terms.txt"), encoding="utf-8") as f:
            self.vocab = {t: i for i, t in enumerate(f.read().split("\n")[:-1])}
        self.offsets = np.load(os.path.join(folder, "offsets.npy"), mmap_mode="r")
        self.maxtf = np.load(os.path.join(folder, "maxtf.npy"), mmap_mode="r")
        self.mindl = np.load(os.path.join(folder, "mindl.npy"), mmap_mode="r")
        size = os.path.getsize(os.path.join(folder, "texts.bin"))
        self.texts = np.memmap(os.path.join(folder, "texts.bin"), np.uint8, "r") if size else np.zeros(0, np.uint8)
        self.shards: list[Shard] = []
        lists = {  # the day's own versions, kept in info.json at build time
            lang: StopList(lang, sl["version"], sl["sha256"], frozenset(sl["words"]))
            for lang, sl in info.get("stoplists", {}).items()
        }
        for i, s in enumerate(info["shards"]):
            p = lambda ext: os.path.join(folder, f"shard-{i}.{ext}")  # noqa: E731
            mm = lambda ext, t: np.memmap(p(ext), t, "r") if os.path.getsize(p(ext)) else np.zeros(0, t)  # noqa: E731
            table = ipc.open_file(pa.memory_map(p("docs.arrow"))).read_all()
            self.shards.append(
                Shard(
                    i,
                    s["tld"],
                    s["lang"],
                    s["shard"],
                    analyzer_from_description(s["analyzer"], lists),
                    s["docs"],
                    s["length"],
                    mm("docids.u32", np.uint32),
                    mm("tfs.u32", np.uint32),
                    mm("dl.u32", np.uint32),
                    mm("ids.u64", np.uint64),
                    mm("text.i64", np.int64).reshape(-1, 2),
                    table,
                )
            )

    def text(self, shard: Shard, row: int) -> str:
        off, n = shard.spans[row]
        return bytes(self.texts[off : off + n]).decode("utf-8", "replace")

    @property
    def terms(self) -> int:
        return len(self.vocab)
