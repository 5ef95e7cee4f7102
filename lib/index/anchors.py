"""Anchor texts for search: one extra CIFF per shard, ``anchors-{n}.ciff.gz``.

For shard ``n`` of a group, the anchor CIFF has the same documents as ``index-{n}.ciff.gz``
(same docids, same ``collection_docid``, from ``metadata-{n}.parquet``); a document's text is
the ``anchor_texts`` of its URL's row in ``graph/inlinks`` (up to 10 distinct anchor texts,
each counted once), each anchor analyzed on its own with the shard's analyzer (named in the
header description, like the shard's, with the day's shared stop-word lists when it has
them: lib.text.stoplists). Documents without in-link anchors are empty
(doclength 0, in no postings list). An engine scores anchor text as a second field: the
same docid in both files is the same page (ClueWeb-style anchor fields).
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter, defaultdict
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from lib.ciff.writer import CiffWriter
from lib.runtime.maptasks import map_tasks
from lib.store import layout, storage
from lib.store.s3 import client as s3_client
from lib.text import stoplists
from lib.text.analysis import Analyzer, analyzer_from_description
from lib.text.stoplists import Ref

GZIP_LEVEL = 6


def anchors_name(shard: int | str) -> str:
    """The anchor-text CIFF beside ``index-{shard}.ciff.gz``."""
    return f"anchors-{shard}.ciff.gz"


def anchor_terms(analyzer: Analyzer, anchors: list[str]) -> Counter:
    """Term counts of one document's anchor texts (each analyzed on its own)."""
    c: Counter = Counter()
    for a in anchors:
        c.update(analyzer.tokens(a))
    return c


def write_shard(
    path: str,
    docids: list[int],
    collection_docids: list[str],
    anchors: list[list[str]],
    analyzer: Analyzer,
    description: str,
    compresslevel: int = GZIP_LEVEL,
) -> dict[str, int]:
    """Write one anchor CIFF: docids are 0..n-1 in order, ``anchors[i]`` the texts of doc ``i``."""
    if docids != list(range(len(docids))):
        raise ValueError(f"{path}: metadata docids are not 0..{len(docids) - 1} in order")
    postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
    lengths = []
    for d, texts in zip(docids, anchors):
        c = anchor_terms(analyzer, texts)
        lengths.append(sum(c.values()))
        for t, tf in c.items():
            postings[t].append((d, tf))
    terms = sorted(postings, key=lambda t: t.encode("utf-8"))
    total = sum(lengths)
    n = len(docids)
    with CiffWriter(
        path,
        num_postings_lists=len(terms),
        num_docs=n,
        total_postings_lists=len(terms),
        total_docs=n,
        total_terms_in_collection=total,
        average_doclength=total / n if n else 0.0,
        description=description,
        compresslevel=compresslevel,
    ) as w:
        for t in terms:
            w.add_postings(t, [d for d, _ in postings[t]], [tf for _, tf in postings[t]])
        w.add_docs(docids, collection_docids, lengths)
    return {"docs": n, "docs_with_anchors": sum(1 for x in lengths if x), "terms": len(terms), "total_terms": total}


def _anchors_by_url(inlinks_dir: str, urls: list[str]) -> dict[str, list[str]]:
    if not urls:
        return {}
    t = ds.dataset(inlinks_dir, format="parquet", ignore_prefixes=["_", "."]).to_table(
        columns=["dst_url", "anchor_texts"], filter=ds.field("dst_url").isin(sorted(set(urls)))
    )
    return dict(zip(t.column("dst_url").to_pylist(), t.column("anchor_texts").to_pylist()))


def write_anchors(day_uri: str, inlinks_dir: str, work: str, stats: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``anchors-{n}.ciff.gz`` beside every shard of a day (local or S3), from the in-links
    table in the local folder ``inlinks_dir``; per-shard counts by file. ``stats``: the day's
    ``_stats.json`` content (read from the day when not given); the shards' analyzers take the
    stop-word lists it records (found under the day's root)."""
    if stats is None:
        stats = json.loads(storage.read_bytes(storage.join(day_uri, layout.STATS)))
    analyzers = {(g["tld"], g["lang"]): g["analyzer"] for g in stats.get("groups", [])}
    refs = stoplists.refs_of_day(stats.get("built_with"), layout.root_of(day_uri))
    out: dict[str, Any] = {}
    for s in stats.get("shards", []):
        out.update(write_shard_anchors(day_uri, s, analyzers[(s["tld"], s["lang"])], inlinks_dir, work, refs))
    return out


def write_day_anchors(
    spark: Any, day_dir: str, inlinks_dir: str, stats: dict[str, Any], refs: tuple[Ref, ...] = ()
) -> dict[str, Any]:
    """:func:`write_anchors` for a local day folder every executor sees, one Spark task per shard;
    ``refs``: the shared stop-word lists the day is built with."""
    shards = stats.get("shards", [])
    analyzers = {(g["tld"], g["lang"]): g["analyzer"] for g in stats.get("groups", [])}
    jobs: list[tuple[dict[str, Any], str]] = [(s, analyzers[(s["tld"], s["lang"])]) for s in shards]
    work = day_dir.rstrip("/") + ".anchors"

    def run(batches: Any) -> Any:
        for b in batches:
            rows = [
                write_shard_anchors(day_dir, jobs[i][0], jobs[i][1], inlinks_dir, os.path.join(work, str(i)), refs)
                for i in b.column(0).to_pylist()
            ]
            yield pa.record_batch([pa.array([json.dumps(r) for r in rows], pa.string())], schema=_TASK_SCHEMA)

    try:
        rows = map_tasks(spark, len(jobs), run, _TASK_SCHEMA)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out: dict[str, Any] = {}
    for r in rows:
        out.update(json.loads(r["files"]))
    return out


_TASK_SCHEMA = pa.schema([("files", pa.string())])


def write_shard_anchors(
    day_uri: str, s: dict[str, Any], name: str, inlinks_dir: str, work: str, refs: tuple[Ref, ...] = ()
) -> dict[str, Any]:
    """The anchor CIFF of shard ``s`` (a ``_stats.json`` shard entry) with analyzer ``name``
    (``refs``: the shared stop-word lists it may name)."""
    os.makedirs(work, exist_ok=True)
    rel = f"{s['tld']}/{s['lang']}"
    analyzer = analyzer_from_description(name, stoplists.load(refs))
    meta_uri = storage.join(day_uri, rel, layout.metadata_name(s["shard"]))
    if not storage.is_s3(meta_uri):
        local_meta = storage.local_path(meta_uri)
    else:
        local_meta = os.path.join(work, f"{s['tld']}.{s['lang']}.{layout.metadata_name(s['shard'])}")
        b, k = storage.split_s3(meta_uri)
        s3_client().download_file(b, k, local_meta)
    meta = pq.read_table(local_meta, columns=["docid", "collection_docid", "url"])
    urls = meta.column("url").to_pylist()
    by_url = _anchors_by_url(inlinks_dir, [u for u in urls if u])
    target = storage.join(day_uri, rel, anchors_name(s["shard"]))
    local = storage.local_path(target) if not storage.is_s3(target) else os.path.join(work, anchors_name(s["shard"]))
    desc = f"{name}; dailyslice anchor texts {rel} shard {s['shard']} of {s['k']}"
    counts = write_shard(
        local,
        meta.column("docid").to_pylist(),
        meta.column("collection_docid").to_pylist(),
        [by_url.get(u) or [] for u in urls],
        analyzer,
        desc,
    )
    if storage.is_s3(target):
        b, k = storage.split_s3(target)
        s3_client().upload_file(local, b, k)
    return {f"{rel}/{anchors_name(s['shard'])}": counts}
