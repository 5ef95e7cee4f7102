"""The host index of a preprocessed day, ``_hosts.parquet``: which page files and row groups hold
each host's pages, so that a reader asking for a few hosts opens only those (docs/preprocess.md).

One row per (``url_host``, ``language``, ``file``, ``row_group``) with the pages of that host in
that row group (``rows``); ``file`` is relative to the day (``language=deu/part-….parquet``).
The schema's metadata lists every page file the index was built from with its size and rows:
a reader trusts the index only when the day's page files are exactly those (:func:`plan`), so a
day whose files changed after the index was written (an older writer, a hand edit) is scanned,
never read wrong. The preprocess job writes it before ``_SUCCESS``; the purge rebuilds it when it
rewrites a page file (:func:`lib.pages.exclude.filter_day`). Plain pyarrow, no Spark.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lib.store import atomic, layout

HOSTS = layout.HOSTS
SCHEMA = pa.schema(
    [
        ("url_host", pa.string()),
        ("language", pa.string()),
        ("file", pa.string()),  # relative to the day
        ("row_group", pa.int32()),
        ("rows", pa.int64()),  # the host's pages in that row group
    ]
)
_FILES_KEY = b"dailyslice.files"  # {file: [bytes, rows]} of every page file indexed
_VERSION_KEY = b"dailyslice.hosts_version"
VERSION = b"1"


def page_files(day_dir: str, languages: tuple[str, ...] | None = None) -> list[str]:
    """The page files of a local day, relative to it, sorted (only ``languages``' partitions
    when given; hidden and ``_`` files left out, as every reader leaves them out)."""
    out = []
    for d in sorted(os.listdir(day_dir)):
        lang = layout.language_of(d)
        if lang is None or (languages is not None and lang not in languages):
            continue
        names = os.listdir(os.path.join(day_dir, d))
        out += [f"{d}/{n}" for n in sorted(names) if n.endswith(".parquet") and not n.startswith((".", "_"))]
    return out


def build(day_dir: str) -> pa.Table:
    """The host index of the local day ``day_dir`` (reads the ``url_host`` column only)."""
    parts, files = [], {}
    for rel in page_files(day_dir):
        path = os.path.join(day_dir, rel)
        pf = pq.ParquetFile(path)
        files[rel] = [os.path.getsize(path), pf.metadata.num_rows]
        lang = layout.language_of(rel.split("/", 1)[0])
        for g in range(pf.num_row_groups):
            counts = pc.value_counts(pf.read_row_group(g, columns=["url_host"]).column(0))
            n = len(counts)
            parts.append(
                pa.table(
                    [
                        counts.field("values"),
                        pa.array([lang] * n, pa.string()),
                        pa.array([rel] * n, pa.string()),
                        pa.array([g] * n, pa.int32()),
                        counts.field("counts"),
                    ],
                    schema=SCHEMA,
                )
            )
    table = pa.concat_tables(parts) if parts else SCHEMA.empty_table()
    order = [("url_host", "ascending"), ("language", "ascending"), ("file", "ascending"), ("row_group", "ascending")]
    table = table.sort_by(order)
    meta = {_FILES_KEY: json.dumps(files, sort_keys=True).encode(), _VERSION_KEY: VERSION}
    return table.replace_schema_metadata(meta)


def write(day_dir: str) -> int:
    """Write ``day_dir/_hosts.parquet`` (atomically: a reader never sees half of it); returns its rows."""
    table = build(day_dir)
    final = os.path.join(day_dir, HOSTS)
    tmp = atomic.temp_path(final)
    pq.write_table(table, tmp, compression="zstd")
    atomic.replace(tmp, final)
    return table.num_rows


@dataclass
class Plan:
    """What a host-index read of one day found: the row groups to read per file (``groups``,
    only files with a candidate host), or why the day must be scanned (``scan``)."""

    groups: dict[str, list[int]] = field(default_factory=dict)
    scan: str | None = None  # the reason the index cannot be used
    rows: int = 0  # pages of the requested languages (known only from an index)
    files: int = 0  # page files of the requested languages


def plan(day_dir: str, languages: tuple[str, ...], candidate: Callable[[str | None], bool]) -> Plan:
    """The row groups of the day's ``languages`` that hold a host ``candidate`` accepts, from its
    host index; ``scan`` says why not (no index, or the page files are not those indexed)."""
    path = os.path.join(day_dir, HOSTS)
    current = page_files(day_dir, languages)
    if not os.path.exists(path):
        return Plan(scan="no host index", files=len(current))
    schema = pq.read_schema(path)
    meta = schema.metadata or {}
    if meta.get(_VERSION_KEY) != VERSION or _FILES_KEY not in meta:
        return Plan(scan="host index of another version", files=len(current))
    indexed = json.loads(meta[_FILES_KEY])
    wanted = {f: v for f, v in indexed.items() if layout.language_of(f.split("/", 1)[0]) in languages}
    for rel in current:
        if rel not in wanted or os.path.getsize(os.path.join(day_dir, rel)) != wanted[rel][0]:
            return Plan(scan=f"host index stale ({rel} is not as indexed)", files=len(current))
    if len(current) != len(wanted):
        return Plan(scan="host index stale (an indexed page file is gone)", files=len(current))
    table = pq.read_table(path, filters=[("language", "in", list(languages))] if languages else None)
    hosts = table.column("url_host")
    keep = [h for h in pc.unique(hosts).to_pylist() if candidate(h)]  # each host tested once
    hit = table.filter(pc.is_in(hosts, value_set=pa.array(keep, pa.string())))
    groups: dict[str, set[int]] = {}
    for f, g in zip(hit.column("file").to_pylist(), hit.column("row_group").to_pylist()):
        groups.setdefault(f, set()).add(g)
    return Plan(
        groups={f: sorted(g) for f, g in sorted(groups.items())},
        rows=sum(v[1] for v in wanted.values()),
        files=len(current),
    )
