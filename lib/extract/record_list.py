"""List the records of archives as extract input lines (url, file, offset, length).

    python -m lib.extract.record_list [--types response,resource] [--root DIR] FILE... > list.tsv

Walks each file once with the project's own reader (``lib.warc.records``: compression and
WARC/ARC sniffed from the bytes, as preprocess does), so the offsets are exactly those
preprocess records: compressed members (gzip member, zstd or LZ4 frame), or the records of
an uncompressed file including their trailing line ends. Records that share a compressed
member with others have no byte range of their own and are left out. Meant for building
test and benchmark lists and for extracting whole files' worth of chosen record types.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Iterator, NamedTuple

from lib.store import storage
from lib.warc.records import Record, iter_records


class RecordRange(NamedTuple):
    rec_type: str
    url: str
    offset: int
    length: int


def record_ranges(uri: str) -> Iterator[RecordRange]:
    """Every addressable record of the archive at ``uri`` with its offset and length (an
    ARC file header has type ``arc_header``; records without a URL get ``""``)."""
    with storage.open_stream(uri) as f:
        for rec in iter_records(f, uri, max_content=0):
            if not isinstance(rec, Record) or rec.offset is None or rec.length is None:
                continue
            rec_type = "arc_header" if rec.fmt == "arc" and rec.url.startswith("filedesc:") else rec.rec_type
            yield RecordRange(rec_type, rec.url, rec.offset, rec.length)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lib.extract.record_list", description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--types", default="response,resource,revisit", help="record types to list (comma-separated)")
    p.add_argument("--root", help="write archive paths relative to this folder")
    args = p.parse_args(argv)
    types = set(args.types.split(","))
    out = sys.stdout
    for uri in args.files:
        name = os.path.relpath(uri, args.root) if args.root else uri
        for r in record_ranges(uri):
            if r.rec_type in types and r.url:
                out.write(f"{r.url}\t{name}\t{r.offset}\t{r.length}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
