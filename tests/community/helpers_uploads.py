"""A party's upload built for the tests: a real CIFF, metadata in the store's schema, graph edges, a manifest."""

from __future__ import annotations

import hashlib
import json
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq

from lib.ciff.writer import CiffWriter
from lib.index.owi import METADATA_SCHEMA


def write_ciff(path: pathlib.Path) -> None:
    """Two documents, three terms: a valid CIFF."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with CiffWriter(
        str(path),
        num_postings_lists=3,
        num_docs=2,
        total_postings_lists=3,
        total_docs=2,
        total_terms_in_collection=5,
        average_doclength=2.5,
    ) as w:
        w.add_postings("apple", [0, 1], [1, 1])
        w.add_postings("banana", [0], [2])
        w.add_postings("cherry", [1], [1])
        w.add_doc(0, "party-doc-0", 3)
        w.add_doc(1, "party-doc-1", 2)


def write_metadata(path: pathlib.Path, extra: dict[str, list] | None = None) -> None:
    """Two rows of metadata in the store's columns (``extra``: columns to add, e.g. an unknown one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = {
        "id": pa.array(["a1", "b2"], METADATA_SCHEMA.field("id").type),
        "record_id": pa.array(["<urn:uuid:1>", "<urn:uuid:2>"], METADATA_SCHEMA.field("record_id").type),
        "url": pa.array(["https://example.org/a", "https://example.org/b"], METADATA_SCHEMA.field("url").type),
        "title": pa.array(["A", "B"], METADATA_SCHEMA.field("title").type),
    }
    for k, v in (extra or {}).items():
        cols[k] = pa.array(v)
    pq.write_table(pa.table(cols), path)


def write_graph(path: pathlib.Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        pa.table({"src_url": ["https://example.org/a"], "dst_url": ["https://example.org/b"], "anchor_text": ["b"]}),
        path,
    )


KIND_OF = {"ciff": "ciff", "metadata": "metadata", "graph": "graph"}


def write_manifest(folder: pathlib.Path, kinds: dict[str, str] | None = None) -> dict:
    """``_manifest.json`` listing every file of ``folder`` (kind from its top folder's name)."""
    files = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and rel != "_manifest.json":
            data = p.read_bytes()
            kind = (kinds or {}).get(rel) or KIND_OF[rel.split("/", 1)[0]]
            files[rel] = {"kind": kind, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    doc = {"files": files}
    (folder / "_manifest.json").write_text(json.dumps(doc))
    return doc


def make_upload(folder: pathlib.Path, unknown_column: bool = False) -> dict:
    """A complete upload in ``folder``: one CIFF, its metadata, graph edges and the manifest."""
    write_ciff(folder / "ciff" / "index-0.ciff.gz")
    write_metadata(folder / "metadata" / "metadata-0.parquet", {"sentiment": [0.5, 0.1]} if unknown_column else None)
    write_graph(folder / "graph" / "edges.parquet")
    return write_manifest(folder)


def register(root: pathlib.Path, parties: dict[str, int | None]) -> None:
    """``ROOT/community/_parties.json`` with these parties' quotas."""
    (root / "community").mkdir(parents=True, exist_ok=True)
    doc = {"parties": {p: {"quota_bytes": q} for p, q in parties.items()}}
    (root / "community" / "_parties.json").write_text(json.dumps(doc))
