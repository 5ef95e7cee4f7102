"""A crawl corpus cut two ways, and the pages of a preprocessed day compared across cuts: many small
archives (``small/warc``) against the same records in few large ones (``large/warc``). The preprocess
benchmark (``benchmarks/bench_preprocess.py --cuts``) and the suite's packing test
(``tests/preprocess/test_task_packing.py``) share it."""

from __future__ import annotations

import glob
import io
import os
import shutil
import sys

from lib.warc.streams import GzipMembers


def gzip_members(path: str) -> list[bytes]:
    """The gzip members of a file, as they are (a member is a record in a .warc.gz)."""
    with open(path, "rb") as f:
        data = f.read()
    out = []
    for m in GzipMembers(io.BufferedReader(io.BytesIO(data))):
        m.drain()
        out.append(data[m.offset : m.offset + m.length])
    return out


def cut_corpus(corpus: str, dest: str, per_file: int) -> tuple[str, str]:
    """Both cuts of ``corpus`` below ``dest`` (``small/warc``, ``large/warc``); returns them. The
    records are the same bytes in both: members are copied, never re-compressed."""
    small, large = os.path.join(dest, "small", "warc"), os.path.join(dest, "large", "warc")
    if not os.path.isdir(corpus):
        sys.exit(f"no crawl samples at {corpus} (--corpus)")
    if os.path.isdir(small) and os.path.isdir(large):
        return small, large
    shutil.rmtree(dest, ignore_errors=True)
    for d in (small, large):
        os.makedirs(d)
    with open(os.path.join(large, "all.warc.gz"), "wb") as joined:
        for path in sorted(glob.glob(os.path.join(corpus, "*", "*"))):
            rel = os.path.relpath(path, corpus).replace(os.sep, "-")
            if path.endswith(".md"):
                continue
            if not path.endswith(".warc.gz"):  # ARC files need their own first record; plain files stay whole
                for d in (small, large):
                    shutil.copyfile(path, os.path.join(d, rel))
                continue
            members = gzip_members(path)
            for i in range(0, len(members), per_file):
                with open(os.path.join(small, f"{rel[:-8]}-{i // per_file:05d}.warc.gz"), "wb") as f:
                    f.write(b"".join(members[i : i + per_file]))
            joined.write(b"".join(members))
    return small, large


def day_shape(warc: str) -> dict:
    files = [p for p in glob.glob(os.path.join(warc, "**", "*"), recursive=True) if os.path.isfile(p)]
    sizes = sorted(os.path.getsize(p) for p in files)
    return {"files": len(files), "mb": round(sum(sizes) / 1e6, 1), "median_kb": round(sizes[len(sizes) // 2] / 1e3, 1)}


def documents(out: str) -> list[tuple]:
    """The pages of a preprocessed day without what depends on the cut (file, offset, ARC ids)."""
    import pyarrow.dataset as pads

    cols = ["url", "warc_date", "title", "plain_text", "language", "payload_digest"]
    t = pads.dataset(out, format="parquet", partitioning="hive", ignore_prefixes=["_", "."]).to_table()
    return sorted((tuple(repr(r[c]) for c in cols if c in t.schema.names) for r in t.to_pylist()))


def page_files(out: str) -> dict[str, bytes]:
    """relative path -> bytes of a preprocessed day's page files."""
    found = glob.glob(os.path.join(out, "language=*", "*.parquet"))
    return {os.path.relpath(p, out): open(p, "rb").read() for p in found}
