"""List the records of archives as extract input lines (url, file, offset, length).

    python -m lib.extract.listing [--types response,resource] [--root DIR] FILE... > list.tsv

Uses warcio to walk each file once; offsets/lengths are those of the gzip members (or of
the records of an uncompressed .warc). Meant for building test and benchmark lists and
for extracting whole files' worth of chosen record types.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Iterator, NamedTuple

from warcio.archiveiterator import ArchiveIterator

from lib.core import storage


class RecordRange(NamedTuple):
    rec_type: str
    url: str
    offset: int
    length: int


def record_ranges(uri: str) -> Iterator[RecordRange]:
    """Every record of the archive at ``uri`` with its member offset and length (ARC
    header records have type ``arc_header``; records without a URL get ``""``)."""
    gz = uri.lower().endswith(".gz")
    prev: RecordRange | None = None
    with storage.open_stream(uri) as f:
        it = ArchiveIterator(f, arc2warc=False)
        for rec in it:
            it.read_to_end(rec)
            h = rec.rec_headers
            url = h.get_header("WARC-Target-URI") or h.get_header("uri") or ""
            cur = RecordRange(rec.rec_type, url, it.get_record_offset(), it.get_record_length())
            if gz:
                yield cur
                continue
            # warcio's length leaves out the CRLFs that end a record in an uncompressed
            # file; a copyable range must include them: it runs to the next record.
            if prev is not None:
                yield prev._replace(length=cur.offset - prev.offset)
            prev = cur
    if prev is not None:
        yield prev._replace(length=storage.size(uri) - prev.offset)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lib.extract.listing", description=__doc__.split("\n")[0])
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
