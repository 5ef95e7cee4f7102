"""Content digests of an index day's shards: what must stay equal when the index job changes.

``python -m lib.index.shard_digests INDEX_DAY [--write FILE | --check FILE]``

Per shard, the sha256 of the decompressed CIFF (header, every postings list, every
DocRecord: the terms, docids and tfs exactly) and of the metadata table's content (Arrow
IPC of the whole table, one chunk: independent of Parquet row groups and compression).
A golden file written by one version of the code and checked by another holds the new
postings against the old, byte for byte.

``--canonical`` digests what does not depend on where the input lay or in which order its
files were numbered: per shard, the sorted (term, document, tf) triples with the header's
counts and the (document, doclength) pairs, a document named by its URL and WARC offset
(from the metadata beside the CIFF: ARC records' ids are derived from the archive's path),
and the metadata rows sorted by those without ``docid``, ``collection_docid`` and ``warc_file``. The same
preprocessed pages indexed
from another folder give the same canonical digests.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import pathlib
import sys

import pyarrow as pa
import pyarrow.parquet as pq

from lib.ciff.reader import CiffReader
from lib.store import layout


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical_ciff(path: pathlib.Path) -> str:
    r = CiffReader(str(path))
    h = r.header
    lists = [(pl.term, list(zip(pl.docids, pl.tfs))) for pl in r.postings()]
    meta_name = layout.metadata_for(path.name)
    if meta_name is None:
        raise ValueError(f"{path}: not an index file name (index-N.ciff[.gz])")
    meta = pq.read_table(path.parent / meta_name, columns=["docid", "url", "warc_offset"]).to_pylist()
    ids = {m["docid"]: f"{m['url']} {m['warc_offset']}" for m in meta}
    lines = [f"{h.num_postings_lists} {h.num_docs} {h.total_terms_in_collection} {h.description}"]
    lines += sorted(f"{t}\t{ids[d]}\t{tf}" for t, ps in lists for d, tf in ps)
    lines += sorted(f"{ids[d.docid]}\t{d.doclength}" for d in r.docs())
    return _sha("\n".join(lines).encode())


def _canonical_metadata(path: pathlib.Path) -> str:
    t = pq.read_table(path)
    # ids and paths that depend on where the day was read from (ARC record ids derive from the file)
    t = t.drop_columns([c for c in ("docid", "collection_docid", "record_id", "warc_file") if c in t.schema.names])
    t = t.sort_by([("url", "ascending"), ("warc_offset", "ascending")])
    return _sha(repr(t.to_pylist()).encode())


def shard_digests(day: str | pathlib.Path, canonical: bool = False) -> dict[str, str]:
    """``{relative path: sha256}`` of every ``index-*.ciff.gz`` (decompressed) and
    ``metadata-*.parquet`` (table content) under ``day`` (module doc; ``canonical``: the
    order-free digests, for small indexes)."""
    root = pathlib.Path(day)
    if canonical:
        return {
            str(p.relative_to(root)): (_canonical_ciff(p) if p.match(layout.INDEX_GLOB) else _canonical_metadata(p))
            for p in sorted([*root.rglob(layout.INDEX_GLOB), *root.rglob(layout.METADATA_GLOB)])
        }
    out: dict[str, str] = {}
    for p in sorted(root.rglob(layout.INDEX_GLOB)):
        h = hashlib.sha256()
        with gzip.open(p, "rb") as f:
            while chunk := f.read(1 << 22):
                h.update(chunk)
        out[str(p.relative_to(root))] = h.hexdigest()
    for p in sorted(root.rglob(layout.METADATA_GLOB)):
        t = pq.read_table(p).combine_chunks()
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, t.schema) as w:
            w.write_table(t)
        out[str(p.relative_to(root))] = _sha(sink.getvalue().to_pybytes())
    return out


def diff(got: dict[str, str], want: dict[str, str]) -> list[str]:
    """Human-readable differences (empty when equal)."""
    lines = [f"missing: {k}" for k in sorted(set(want) - set(got))]
    lines += [f"unexpected: {k}" for k in sorted(set(got) - set(want))]
    lines += [f"differs: {k}" for k in sorted(set(got) & set(want)) if got[k] != want[k]]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("day")
    ap.add_argument("--canonical", action="store_true", help="order-free digests (module doc)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", help="write the digests to this JSON file")
    g.add_argument("--check", help="compare with the digests in this JSON file (exit 1 when they differ)")
    a = ap.parse_args(argv)
    got = shard_digests(a.day, a.canonical)
    if a.write:
        pathlib.Path(a.write).write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    if a.check:
        bad = diff(got, json.loads(pathlib.Path(a.check).read_text()))
        for line in bad:
            print(line, file=sys.stderr)
        print(f"{len(got)} files, {'equal' if not bad else f'{len(bad)} differences'}", file=sys.stderr)
        return 1 if bad else 0
    if not a.write:
        print(json.dumps(got, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
