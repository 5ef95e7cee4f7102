"""CIFF encoding throughput: lib.ciff's encoders vs the protobuf runtime, on a real-shaped day's postings.

    python -m benchmarks.bench_ciff_encode [--day real] [--copies 10] [--corpus DIR]
    python -m benchmarks.bench_ciff_encode --day synthetic [--docs 20000]

The collection (``--day``, repeatable; default ``real``):

* ``real``: the postings of the real-shaped day of devtools/realday.py (``--copies`` copies of
  the shared samples), each cut (many small archives, few large ones) through jobs/preprocess.py
  and jobs/index.py (realday.day_index), the day's shards read back and joined into one
  collection (documents numbered shard after shard, each term's lists concatenated), the day's
  shape printed beside the figures. Every language's analyzer, pages without text and repeated
  record ids are in it, as the index job writes them.
* ``synthetic``: shaped like text: documents of 50..600 tokens drawn from a Zipf(1.2)
  distribution over term ranks, so a few lists hold most postings and most terms occur in one or
  two documents; tf = occurrences in the document (an extra row).

Measured in one process, one thread:
  - batch encoder:    lib.ciff.batch.encode_lists on columnar batches (prepared untimed), the
                      path CiffWriter takes for lists of up to 256 postings;
  - per-list encoder: encode_postings_list + length prefix for every list;
  - protobuf:         PostingsList/Posting objects of the protobuf runtime + SerializeToString
                      (what ciff-toolkit-style exporters do), on the same lists;
  - CiffWriter:       the whole writer (checks, per-document length sums, doc records,
                      buffering), fed list by list (add_postings) or in columns
                      (add_postings_batch), to a plain file and to .gz.
Per-core rates use the process's CPU time, because the machine is shared; MB = 10^6 bytes of
uncompressed CIFF output.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import pathlib
import sys
import tempfile

import numpy as np

from benchmarks.common import load, machine_text, timed, utc_now, write_result
from lib.ciff.batch import encode_lists
from lib.ciff.messages import delimited, encode_postings_list
from lib.ciff.writer import CiffWriter


def zipf_collection(n_docs: int, seed: int = 1):
    """Postings lists [(term, docids, tfs)] in term order."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(50, 600, n_docs)
    tokens = rng.zipf(1.2, size=int(lengths.sum()))
    keep = tokens < 50_000_000
    docs = np.repeat(np.arange(n_docs), lengths)[keep]
    keys, tfs = np.unique(tokens[keep].astype(np.int64) * n_docs + docs, return_counts=True)
    terms, docids = keys // n_docs, keys % n_docs
    starts = np.flatnonzero(np.r_[True, terms[1:] != terms[:-1]])
    ends = np.r_[starts[1:], len(keys)]
    lists = [(f"t{terms[s]:08x}", docids[s:e], tfs[s:e].astype(np.int64)) for s, e in zip(starts, ends)]
    lists.sort(key=lambda x: x[0])
    return lists


def index_collection(index) -> tuple[list, int]:
    """(postings lists [(term, docids, tfs)] in term order, documents) of an index job's shards,
    joined: documents numbered shard after shard, each term's lists concatenated in that order."""
    from lib.ciff.reader import CiffReader

    by_term: dict[str, list] = {}
    base = 0
    for path in sorted(pathlib.Path(index).rglob("index-*.ciff.gz")):
        r = CiffReader(str(path))
        for raw, docids in r.raw_postings():
            by_term.setdefault(raw.term, []).append((docids.astype(np.int64) + base, raw.tfs.astype(np.int64)))
        base += r.header.num_docs
    lists = [
        (t, np.concatenate([d for d, _ in parts]), np.concatenate([f for _, f in parts]))
        for t, parts in sorted(by_term.items())
    ]
    return lists, base


def columnar(lists, batch_postings: int = 1 << 16):
    """The lists as the writer's queue holds them: batches of (term bytes, counts, docids, tfs)."""
    batches, i = [], 0
    while i < len(lists):
        j, n = i, 0
        while j < len(lists) and n < batch_postings:
            n += len(lists[j][1])
            j += 1
        part = lists[i:j]
        batches.append(
            (
                [t.encode() for t, _, _ in part],
                np.array([len(d) for _, d, _ in part]),
                np.concatenate([d for _, d, _ in part]),
                np.concatenate([f for _, _, f in part]),
            )
        )
        i = j
    return batches


def encode_batched(batches) -> int:
    return sum(len(encode_lists(*b)[0]) for b in batches)


def encode_per_list(lists) -> int:
    return sum(len(delimited(encode_postings_list(term, docids, tfs))) for term, docids, tfs in lists)


def encode_protobuf(lists) -> int:
    from ciff_toolkit.ciff_pb2 import Posting, PostingsList

    size = 0
    for term, docids, tfs in lists:
        d = docids.tolist()
        gaps = [d[0]] + [b - a for a, b in zip(d, d[1:])]
        t = tfs.tolist()
        pl = PostingsList(term=term, df=len(d), cf=sum(t), postings=[Posting(docid=g, tf=f) for g, f in zip(gaps, t)])
        size += len(delimited(pl.SerializeToString()))
    return size


def writer_inputs(lists, n_docs: int) -> dict:
    """Everything the writer is fed, prepared untimed: per-document lengths, ids, columnar lists."""
    lengths = np.zeros(n_docs, np.int64)
    for _, docids, tfs in lists:
        lengths[docids] += tfs
    return dict(
        lists=lists,
        lengths=lengths.tolist(),
        ids=[f"<urn:uuid:{i:032x}>" for i in range(n_docs)],
        cols=(
            [t for t, _, _ in lists],
            [len(d) for _, d, _ in lists],
            np.concatenate([d for _, d, _ in lists]),
            np.concatenate([f for _, _, f in lists]),
        ),
    )


def write_file(inp: dict, suffix: str, batch: bool = False, level: int = 6) -> int:
    lists, lengths, ids = inp["lists"], inp["lengths"], inp["ids"]
    total = sum(lengths)
    with tempfile.TemporaryDirectory() as tmp:
        w = CiffWriter(
            os.path.join(tmp, "index-0.ciff" + suffix),
            num_postings_lists=len(lists),
            num_docs=len(lengths),
            total_postings_lists=len(lists),
            total_docs=len(lengths),
            total_terms_in_collection=total,
            average_doclength=total / len(lengths),
            description="bench",
            compresslevel=level,
        )
        if batch:
            w.add_postings_batch(*inp["cols"])
        else:
            for term, docids, tfs in lists:
                w.add_postings(term, docids, tfs)
        if batch:
            w.add_docs(np.arange(len(lengths)), ids, lengths)
        else:
            for i, n in enumerate(lengths):
                w.add_doc(i, ids[i], n)
        w.close()
        return w.bytes_uncompressed


def versions() -> str:
    """numpy's and protobuf's versions and protobuf's implementation (the peer's speed depends on it)."""
    import google.protobuf
    from google.protobuf.internal import api_implementation

    return f"numpy {np.__version__}, protobuf {google.protobuf.__version__} ({api_implementation.Type()})"


def measure(lists, n_docs: int) -> list[tuple[str, float, float, int]]:
    """(what, wall s, CPU s, bytes) of each encoder and writer on the collection."""
    batches = columnar(lists)  # input preparation, not timed
    inp = writer_inputs(lists, n_docs)
    rows = []
    for name, fn in (
        ("batch encoder (encode_lists, on columnar batches of 64k postings)", lambda: encode_batched(batches)),
        ("per-list encoder (encode_postings_list)", lambda: encode_per_list(lists)),
        ("protobuf runtime (message objects + SerializeToString)", lambda: encode_protobuf(lists)),
        ("CiffWriter: add_postings per list + add_doc, plain file", lambda: write_file(inp, "")),
        ("CiffWriter: add_postings_batch + add_docs, plain file", lambda: write_file(inp, "", True)),
        (
            "CiffWriter: add_postings_batch + add_docs, .gz (zlib 2, the index job's default)",
            lambda: write_file(inp, ".gz", True, 2),
        ),
        ("CiffWriter: add_postings_batch + add_docs, .gz (zlib 6)", lambda: write_file(inp, ".gz", True)),
    ):
        wall, cpu, size = timed(fn)
        rows.append((name, wall, cpu, size))
        print(f"{name}: wall {wall:.2f} s, cpu {cpu:.2f} s, {size / cpu / 1e6:.1f} MB/s per core", flush=True)
    return rows


def collections(args) -> list[tuple[str, list, int, str]]:
    """(name, lists, documents, description) of each collection asked for."""
    out = []
    for day in args.day or ["real"]:
        if day == "synthetic":
            out.append(
                (
                    f"synthetic, {args.docs} documents",
                    zipf_collection(args.docs),
                    args.docs,
                    f"Synthetic collection: {args.docs} documents of 50..600 tokens drawn from Zipf(1.2) over term"
                    " ranks (an extra row: not a real day's postings).",
                )
            )
            continue
        from devtools import realday

        rd = realday.shared_day(args.copies, args.corpus)
        for cut in realday.CUTS:
            lists, n_docs = index_collection(realday.day_index(rd, cut, args.cores))
            out.append(
                (
                    f"real-{args.copies}x, {cut} cut",
                    lists,
                    n_docs,
                    f"Day: {realday.cut_line(rd['shape'], cut)}; the index job's {n_docs:,} documents (each"
                    " page once: a repeated record id is indexed once), its shards joined into one collection.",
                )
            )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--day", action="append", choices=["real", "synthetic"], help="real (default) and/or synthetic")
    ap.add_argument("--copies", type=int, default=10, help="copies of the real samples (--day real)")
    ap.add_argument("--corpus", default=None, help="the real samples (default ../shared/corpus)")
    ap.add_argument("--cores", type=int, default=2, help="for building the real day's index (the encoders run on one)")
    ap.add_argument("--docs", type=int, default=20_000, help="documents of the synthetic collection")
    args = ap.parse_args(argv)
    if args.corpus is None:
        from devtools import realday

        args.corpus = str(realday.CORPUS)
    found = collections(args)
    info = f"{machine_text()}, {versions()}; load {load()[0]:.1f} at start"
    started, load0 = utc_now(), load()
    how = " ".join(f"--day {d}" for d in args.day or ["real"])
    lines = [
        "",
        "## CIFF encoding",
        "",
        f"`python -m benchmarks.bench_ciff_encode {how} --copies {args.copies} --docs {args.docs}`, "
        f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC. Machine: {info}. One process, one thread."
        " Per-core rates divide by the process's CPU time (the machine is shared, so wall time includes"
        " waiting for a core); MB = 10^6 bytes of uncompressed CIFF.",
    ]
    sizes = {}
    for name, lists, n_docs, desc in found:
        n_post = sum(len(d) for _, d, _ in lists)
        short = sum(1 for _, d, _ in lists if len(d) <= 256)
        sizes[name] = (len(lists), n_post, n_docs)
        print(desc, file=sys.stderr, flush=True)
        rows = measure(lists, n_docs)
        base = rows[2][2]
        lines += [
            "",
            f"### {name}",
            "",
            f"{desc} {len(lists):,} postings lists ({short / len(lists):.1%} of them with"
            f" <= 256 postings), {n_post:,} postings.",
            "",
            "| what | wall s | CPU s | MB/s per core | M postings/s per core | vs protobuf (CPU) |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        write_result(
            "bench_ciff_encode",
            {f"{what} MB/s per core": round(size / cpu / 1e6, 1) for what, wall, cpu, size in rows},
            what="CIFF encoding of a day's postings, MB/s per core (one process, CPU time)",
            peer="the protobuf runtime",
            ratio={f"{what} / protobuf (CPU)": round(base / cpu, 2) for what, wall, cpu, size in rows},
            shape={"collection": name, "lists": len(lists), "postings": n_post, "docs": n_docs, "about": desc},
            variant="" if name.startswith("real") else "synthetic Zipf",
            started=started,
            load_before=load0,
            notes=versions(),
        )
        for what, wall, cpu, size in rows:
            lines.append(
                f"| {what} | {wall:.2f} | {cpu:.2f} | {size / cpu / 1e6:.1f} | {n_post / cpu / 1e6:.2f} |"
                f" {base / cpu:.1f}x |"
            )
    real = [n for n in sizes if n.startswith("real")]
    if len(real) == 2:  # the cut changes the files, not the pages: the same postings
        same = sizes[real[0]] == sizes[real[1]]
        lines += [
            "",
            f"The two cuts give the same collection size (lists, postings, documents: {sizes[real[0]]}):"
            f" {'yes' if same else 'NO: ' + str(sizes[real[1]])}.",
        ]
        if not same:
            print("\n".join(lines))
            raise SystemExit("the cuts' indexes hold different postings")
    lines.append("")
    text = "\n".join(lines)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
