"""What an on-demand run writes besides the shards: the edges among the selected pages, the
manifest (sha256 of every published file) and the request's ``status.json`` (docs/ondemand.md)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lib.store import storage

MANIFEST = "_manifest.json"
EDGES = "edges.parquet"
EDGE_SCHEMA = pa.schema(
    [("src_url", pa.string()), ("dst_url", pa.string()), ("anchor_text", pa.string()), ("rel", pa.string())]
)
STATES = ("queued", "running", "done", "failed")


def write_edges(selection: str, out: str) -> int:
    """The links among the selected pages (``selection``: the folder of selected page files):
    every outgoing link whose URL, as written, is the URL of a selected page; sorted, so a
    re-run writes the same bytes. Returns the number of edges."""
    files = sorted(os.path.join(d, n) for d, _, names in os.walk(selection) for n in names if n.endswith(".parquet"))
    pages = [pq.read_table(f, columns=["url", "outgoing_links"]) for f in files]
    urls = {u for t in pages for u in t.column("url").to_pylist()}
    edges = set()
    for t in pages:
        for src, links in zip(t.column("url").to_pylist(), t.column("outgoing_links").to_pylist()):
            for link in links or ():
                if link.get("url") in urls:
                    edges.add((src, link["url"], link.get("anchor_text"), link.get("rel")))
    rows = sorted(edges, key=lambda e: tuple("" if v is None else v for v in e))
    table = pa.Table.from_pylist([dict(zip(EDGE_SCHEMA.names, e)) for e in rows], schema=EDGE_SCHEMA)
    pq.write_table(table, out, compression="zstd")
    return len(rows)


def write_manifest(folder: str, record: dict[str, Any]) -> dict[str, Any]:
    """``folder/_manifest.json``: ``record`` (the request and its counts) and the size and
    sha256 of every file in ``folder`` (sorted; no timings, so a re-run writes the same bytes)."""
    files = {}
    for d, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, folder).replace(os.sep, "/")
            if rel != MANIFEST:
                with open(p, "rb") as f:
                    files[rel] = {"bytes": os.path.getsize(p), "sha256": hashlib.file_digest(f, "sha256").hexdigest()}
    manifest = dict(record, files=dict(sorted(files.items())))
    with open(os.path.join(folder, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return manifest


def write_status(request_folder: str, state: str, **details: Any) -> dict[str, Any]:
    """Replace ``request_folder/status.json`` (atomically) with ``state`` and ``details``
    (reason, counts, output, seconds); returns what was written."""
    if state not in STATES:
        raise ValueError(f"status {state!r}: one of {', '.join(STATES)}")
    status = {"state": state, "updated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), **details}
    storage.write_bytes(
        storage.join(request_folder, "status.json"), json.dumps(status, indent=1, sort_keys=True, default=str).encode()
    )
    return status


def read_status(request_folder: str) -> dict[str, Any] | None:
    """The request's ``status.json`` (None when it has none: a new request)."""
    uri = storage.join(request_folder, "status.json")
    return json.loads(storage.read_bytes(uri)) if storage.exists(uri) else None
