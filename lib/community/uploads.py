"""One upload checked: its manifest, its files against the manifest's sha256, each file by its kind, the quota.

An upload is ``community/<party>/incoming/<upload>/``: the files and ``_manifest.json``, which the
party writes last and which lists every file::

    {"files": {"index/index-0.ciff.gz": {"kind": "ciff", "bytes": 1234, "sha256": "…"},
               "metadata/metadata-0.parquet": {"kind": "metadata", "bytes": 99, "sha256": "…"},
               "graph/edges.parquet": {"kind": "graph", "bytes": 42, "sha256": "…"}}}

Kinds: ``ciff`` (the whole-file CIFF validator, :mod:`lib.ciff.validate`), ``metadata`` (Parquet whose
columns are all columns of the metadata store, :data:`lib.index.owi.METADATA_SCHEMA`, with its
types), ``graph`` (Parquet edges: ``src_url`` and ``dst_url`` and any of the day graph's other
columns, all strings). Every reason names the file and what is wrong; all of them are collected,
so one verdict says everything the party has to fix.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lib.ciff.validate import validate_file
from lib.index.graph_tasks import EDGE_COLUMNS
from lib.index.owi import METADATA_SCHEMA, SCHEMA_VERSION
from lib.store import storage

MANIFEST = "_manifest.json"
KINDS = ("ciff", "metadata", "graph")
GRAPH_COLUMNS = tuple(EDGE_COLUMNS.split(", "))
GRAPH_REQUIRED = ("src_url", "dst_url")
_SHA_RE = re.compile(r"^[0-9a-f]{64}$")


@dataclass
class Check:
    """What the validator found in one upload: ``reasons`` empty means accepted."""

    manifest: dict[str, Any] | None = None
    manifest_sha256: str | None = None
    reasons: list[str] = field(default_factory=list)
    bytes: int = 0

    @property
    def ok(self) -> bool:
        return not self.reasons


def safe_path(rel: str) -> bool:
    """A manifest path that stays inside the upload: relative, ``/``-separated, no ``.``/``..``
    part, no empty part, not a side file (``_*``) at the top."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\\" in rel or rel.startswith("_"):
        return False
    return all(p not in ("", ".", "..") for p in rel.split("/"))


def read_manifest(raw: bytes | None) -> Check:
    """The manifest parsed and checked entry by entry (no file is read yet)."""
    check = Check()
    if raw is None:
        check.reasons.append(f"{MANIFEST}: missing (write it last, listing every file)")
        return check
    check.manifest_sha256 = hashlib.sha256(raw).hexdigest()
    try:
        doc = json.loads(raw)
    except ValueError as e:
        check.reasons.append(f"{MANIFEST}: not JSON ({e})")
        return check
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, dict) or not files:
        check.reasons.append(f"{MANIFEST}: needs a non-empty 'files' mapping of path -> {{kind, bytes, sha256}}")
        return check
    for rel, entry in sorted(files.items()):
        if not safe_path(rel):
            check.reasons.append(f"{rel!r}: not a safe relative path inside the upload")
            continue
        if not isinstance(entry, dict):
            check.reasons.append(f"{rel}: manifest entry must be an object with kind, bytes, sha256")
            continue
        if entry.get("kind") not in KINDS:
            check.reasons.append(f"{rel}: unknown kind {entry.get('kind')!r} (one of {', '.join(KINDS)})")
        if not isinstance(entry.get("sha256"), str) or not _SHA_RE.match(entry["sha256"]):
            check.reasons.append(f"{rel}: sha256 must be 64 lowercase hex digits, got {entry.get('sha256')!r}")
        b = entry.get("bytes")
        if not isinstance(b, int) or isinstance(b, bool) or b < 0:
            check.reasons.append(f"{rel}: bytes must be a non-negative integer, got {b!r}")
        else:
            check.bytes += b
    check.manifest = doc
    return check


def _fetch(uri: str, dest: str) -> str:
    """Copy ``uri`` to the local file ``dest``; returns its sha256."""
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    h = hashlib.sha256()
    with storage.open_stream(uri) as src, open(dest, "wb") as out:
        while chunk := src.read(1 << 20):
            h.update(chunk)
            out.write(chunk)
    return h.hexdigest()


def check_metadata(path: str, rel: str) -> list[str]:
    """Reasons a metadata Parquet file is refused: unreadable, a column the metadata store does
    not have (named), or a known column with another type."""
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as e:
        return [f"{rel}: not a readable Parquet file ({e})"]
    known = {f.name: f.type for f in METADATA_SCHEMA}
    out = []
    unknown = [n for n in table.schema.names if n not in known]
    if unknown:
        out.append(f"{rel}: unknown column(s) {', '.join(unknown)} (not in the metadata schema {SCHEMA_VERSION})")
    for f in table.schema:
        if f.name in known and f.type != known[f.name]:
            out.append(f"{rel}: column {f.name} is {f.type}, the metadata schema says {known[f.name]}")
    return out


def check_graph(path: str, rel: str) -> list[str]:
    """Reasons a graph (edges) Parquet file is refused: unreadable, a required column missing, an
    unknown column, or a column that is not a string."""
    try:
        schema = pq.read_table(path).schema
    except (pa.ArrowException, OSError) as e:
        return [f"{rel}: not a readable Parquet file ({e})"]
    out = [f"{rel}: missing column {c}" for c in GRAPH_REQUIRED if c not in schema.names]
    unknown = [n for n in schema.names if n not in GRAPH_COLUMNS]
    if unknown:
        out.append(f"{rel}: unknown column(s) {', '.join(unknown)} (edges have {', '.join(GRAPH_COLUMNS)})")
    out += [
        f"{rel}: column {f.name} is {f.type}, edges hold strings"
        for f in schema
        if f.name in GRAPH_COLUMNS and f.type != pa.string()
    ]
    return out


def check_ciff(path: str, rel: str) -> list[str]:
    """The CIFF validator's first violation (with its position), if any."""
    report = validate_file(path)
    return [] if report.ok else [f"{rel}: malformed CIFF: {report.error}"]


CHECKS = {"ciff": check_ciff, "metadata": check_metadata, "graph": check_graph}


def check_upload(folder: str, work: str, used: int, quota: int | None) -> Check:
    """Check the upload at ``folder`` (local or ``s3://``), copying its files into the local folder
    ``work`` (what is published is exactly what was checked). ``used``: bytes the party has
    published already; ``quota``: its limit (None: none)."""
    man_uri = storage.join(folder, MANIFEST)
    check = read_manifest(storage.read_bytes(man_uri) if storage.exists(man_uri) else None)
    if check.manifest is None:
        return check
    files: dict[str, Any] = check.manifest["files"]
    base = storage.normalize(folder).rstrip("/") + "/"
    present = {f.uri[len(base) :]: f.size for f in storage.list_files(folder)}
    present.pop(MANIFEST, None)
    check.reasons += [f"{rel}: listed in the manifest, not uploaded" for rel in sorted(set(files) - set(present))]
    check.reasons += [f"{rel}: uploaded, not in the manifest" for rel in sorted(set(present) - set(files))]
    if quota is not None and used + check.bytes > quota:
        check.reasons.append(
            f"quota exceeded: {used:,} bytes published + {check.bytes:,} bytes in this upload > quota {quota:,} bytes"
        )
    if not check.ok:
        return check  # nothing is read of an upload that cannot be accepted anyway
    for rel, entry in sorted(files.items()):
        if present[rel] != entry["bytes"]:
            check.reasons.append(f"{rel}: {present[rel]:,} bytes uploaded, the manifest says {entry['bytes']:,}")
            continue
        local = os.path.join(work, *rel.split("/"))
        digest = _fetch(storage.join(folder, rel), local)
        if digest != entry["sha256"]:
            check.reasons.append(f"{rel}: sha256 {digest} differs from the manifest's {entry['sha256']}")
            continue
        check.reasons += CHECKS[entry["kind"]](local, rel)
    if check.reasons:  # no half-checked copy is left for anyone to publish
        shutil.rmtree(work, ignore_errors=True)
    return check
