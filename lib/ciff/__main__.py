"""Command line: ``python -m lib.ciff validate FILE...``, ``dump FILE``, ``search FILE QUERY``."""

from __future__ import annotations

import argparse
import sys
from itertools import islice

from lib.ciff.errors import CiffError
from lib.ciff.reader import CiffReader
from lib.ciff.search import PlainAnalyzer, attach_urls, metadata_beside, search
from lib.ciff.validate import validate_file


def _validate(args: argparse.Namespace) -> int:
    bad = 0
    for path in args.files:
        report = validate_file(path)
        print(report.summary(), flush=True)
        bad += not report.ok
    return 1 if bad else 0


def _dump(args: argparse.Namespace) -> int:
    r = CiffReader(args.file)
    h = r.header
    for name in h.__dataclass_fields__:
        print(f"{name}: {getattr(h, name)!r}")
    limit = args.limit
    print(f"\n# postings lists (first {limit} of {h.num_postings_lists}): term df cf docid:tf ...")
    for pl in islice(r.postings(), limit):
        shown = " ".join(f"{d}:{t}" for d, t in islice(zip(pl.docids, pl.tfs), args.postings))
        more = " ..." if pl.df > args.postings else ""
        print(f"{pl.term}\t{pl.df}\t{pl.cf}\t{shown}{more}")
    print(f"\n# doc records (first {limit} of {h.num_docs}): docid collection_docid doclength")
    for doc in islice(r.docs(), limit):
        print(f"{doc.docid}\t{doc.collection_docid}\t{doc.doclength}")
    return 0


def _search(args: argparse.Namespace) -> int:
    hits = search(args.file, args.query, args.k, analyzer=PlainAnalyzer() if args.plain else None)
    metadata = args.metadata or metadata_beside(args.file)
    if metadata:
        hits = attach_urls(hits, metadata)
    for h in hits:
        print(f"{h.collection_docid}\t{h.url or '-'}\t{h.score:.4f}")
    if not hits:
        print("no matching documents", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lib.ciff", description="CIFF tools: validate, dump, search")
    sub = p.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate", help="check files against the CIFF rules; exit 1 if any is invalid")
    v.add_argument("files", nargs="+", metavar="FILE")
    v.set_defaults(func=_validate)
    d = sub.add_parser("dump", help="print the header, the first postings lists and doc records")
    d.add_argument("file", metavar="FILE")
    d.add_argument("--limit", type=int, default=20, help="postings lists / doc records to show (default 20)")
    d.add_argument("--postings", type=int, default=10, help="postings shown per list (default 10)")
    d.set_defaults(func=_dump)
    s = sub.add_parser("search", help="BM25 (k1=0.9, b=0.4) over one shard with the analyzer named in its header")
    s.add_argument("file", metavar="FILE")
    s.add_argument("query")
    s.add_argument("-k", type=int, default=10, help="number of results (default 10)")
    s.add_argument("--metadata", help="metadata Parquet (default: metadata-{n}.parquet beside index-{n}.ciff[.gz])")
    s.add_argument("--plain", action="store_true", help="lowercased words, no stemming (files from other tools)")
    s.set_defaults(func=_search)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CiffError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
