"""Benchmark the extract job against plain byte-range reads and a warcio rewrite.

    python -m benchmarks.bench_extract [--copies 440] [--files 5] [--master local[2]]
    python -m benchmarks.bench_extract --day real [--real-copies 10]

``--day real`` lists the response records of the real-shaped day of devtools/realday.py instead
and runs the same measures on each of its two cuts (many small archives, few large ones), the
day's shape printed beside each table.

Builds large ``.warc.gz`` files under benchmarks/work/extract/ by concatenating the gzip
members of the shared sample aut/example.warc.gz (its warcinfo member first, then all other
members again and again), lists every response record in a TSV (sorted by file and offset)
and measures, in one run, on the same list:

  job        jobs/extract.py on a local Spark session (session start not counted)
  job+verify the same with --verify
  (a) plain  one Python process: open each file once, seek + read each range, write all into one file
  (b) warcio one Python process: parse each record with warcio and write it with WARCWriter (gzip)

Prints a Markdown table (records/s, MB/s of record bytes, ratio to (a), pages/s per core).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import pathlib
import platform
import shutil
import sys
import time

from benchmarks import WORK as BENCH_WORK
from benchmarks.common import timed, write_result
from lib.extract.record_list import record_ranges

ROOT = pathlib.Path(__file__).resolve().parent.parent


SAMPLE = ROOT.parent / "shared" / "corpus" / "aut" / "example.warc.gz"
WORK = BENCH_WORK / "extract"
TARGET_PER_NODE = 5_000_000 / (50 * 60) / 40  # the design target: 5M pages in under 50 min on 40 nodes


def build(copies: int, files: int) -> tuple[pathlib.Path, int, int]:
    """Write ``files`` archives holding ``copies`` repetitions of the sample's members in all;
    return the TSV path, the number of listed records and the archives' total size."""
    arch = WORK / "archives"
    tsv = WORK / f"list-{copies}-{files}.tsv"
    ranges = list(record_ranges(str(SAMPLE)))
    data = SAMPLE.read_bytes()
    head_len = ranges[0].length  # the warcinfo member
    body = data[head_len:]
    responses = [(r.url, r.offset - head_len, r.length) for r in ranges if r.rec_type == "response"]
    per_file = [copies // files + (1 if i < copies % files else 0) for i in range(files)]
    expected = sum(head_len + n * len(body) for n in per_file)
    existing = sum(p.stat().st_size for p in arch.glob("big-*.warc.gz")) if arch.is_dir() else 0
    if tsv.exists() and existing == expected:
        return tsv, sum(1 for _ in open(tsv)), expected
    shutil.rmtree(arch, ignore_errors=True)
    arch.mkdir(parents=True)
    n_records = 0
    with open(tsv, "w") as out:
        for i, n in enumerate(per_file):
            name = f"big-{i:02d}.warc.gz"
            with open(arch / name, "wb") as f:
                f.write(data[:head_len])
                for c in range(n):
                    base = head_len + c * len(body)
                    f.write(body)
                    for url, off, length in responses:
                        out.write(f"{url}\t{name}\t{base + off}\t{length}\n")
                        n_records += 1
    return tsv, n_records, expected


def real_list(files: list[str], archives: str, tsv: pathlib.Path) -> tuple[pathlib.Path, int, int]:
    """The response records of a real-shaped cut's ``files`` as a TSV (names relative to ``archives``)."""
    n = 0
    with open(tsv, "w") as out:
        for path in files:
            name = os.path.relpath(path, archives)
            for r in record_ranges(path):
                if r.rec_type == "response":
                    out.write(f"{r.url}\t{name}\t{r.offset}\t{r.length}\n")
                    n += 1
    return tsv, n, sum(os.path.getsize(p) for p in files)


def read_list(tsv: pathlib.Path, archives: pathlib.Path | None = None) -> list[tuple[str, str, int, int]]:
    rows = []
    with open(tsv) as f:
        for line in f:
            url, name, off, n = line.rstrip("\n").split("\t")
            rows.append((url, str((archives or WORK / "archives") / name), int(off), int(n)))
    return rows


def open_at(rows):
    """Yield (open file positioned at the range, length) for each row, one open per file."""
    current, f = None, None
    try:
        for _, path, off, n in rows:
            if path != current:
                if f:
                    f.close()
                f, current = open(path, "rb"), path
            f.seek(off)
            yield f, n
    finally:
        if f:
            f.close()


def plain_reads(rows, out_path) -> int:
    """(a): the same ranges with plain file reads, one open per file, into one output file."""
    total = 0
    with open(out_path, "wb") as out:
        for f, n in open_at(rows):
            data = f.read(n)
            out.write(data)
            total += len(data)
    return total


def warcio_rewrite(rows, out_path) -> int:
    """(b): decompress, parse and re-compress each record with warcio (how the copy was first written)."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.warcwriter import WARCWriter

    count = 0
    with open(out_path, "wb") as out:
        w = WARCWriter(out, gzip=True)
        for f, _ in open_at(rows):
            w.write_record(next(iter(ArchiveIterator(f))))
            count += 1
    return count


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--copies", type=int, default=440, help="repetitions of the sample (440 = 1.1 GB, 131k responses)")
    p.add_argument("--files", type=int, default=5)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--keep", action="store_true", help="keep the outputs")
    p.add_argument("--day", choices=["own", "real"], default="own", help="real: the real-shaped day, both cuts")
    p.add_argument("--real-copies", type=int, default=1, help="--day real: copies of the real-shaped day")
    p.add_argument("--corpus", default=None, help="--day real: the real samples (default ../shared/corpus)")
    args = p.parse_args(argv)
    if args.day == "real":
        from devtools import realday

        rd = realday.cached_day(WORK / f"real-{args.real_copies}x", args.real_copies, args.corpus or realday.CORPUS)
        for cut in realday.CUTS:
            tsv, n_records, arch_bytes = real_list(
                rd["files"][cut], rd[cut], WORK / f"real-{args.real_copies}x-{cut}.tsv"
            )
            shape = realday.cut_line(rd["shape"], cut)
            print(f"\nDay: {shape}.")
            args.files = rd["shape"]["files"][cut]
            measure(args, tsv, pathlib.Path(rd[cut]), n_records, arch_bytes)
        return 0
    if not SAMPLE.exists():
        print(f"sample not found: {SAMPLE}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    tsv, n_records, arch_bytes = build(args.copies, args.files)
    print(
        f"archives: {args.files} files, {arch_bytes / 1e9:.2f} GB; list: {n_records} response records "
        f"({time.perf_counter() - t0:.1f}s to build or reuse)",
        file=sys.stderr,
    )
    return measure(args, tsv, WORK / "archives", n_records, arch_bytes)


def measure(args, tsv: pathlib.Path, archives: pathlib.Path, n_records: int, arch_bytes: int) -> int:
    """The job, (a) and (b) on the records listed in ``tsv``; prints the table."""
    load = os.getloadavg()[0]
    rows = read_list(tsv, archives)
    rec_bytes = sum(r[3] for r in rows)

    from pyspark.sql import SparkSession

    from jobs import extract
    from lib.runtime.session import use_this_python

    use_this_python()  # the workers need the venv's packages (lz4, zstandard: lib/warc)
    spark = (
        SparkSession.builder.master(args.master)
        .appName("bench-extract")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    cores = spark.sparkContext.defaultParallelism
    results = []
    # warm-up: start the Python workers and load the job's modules (not measured)
    warm = WORK / "warm.tsv"
    warm.write_text("".join(open(tsv).readlines()[:200]))
    extract.run(spark, extract.ExtractOptions(tsv=str(warm), archives=(str(archives),), output=str(WORK / "warm-out")))
    shutil.rmtree(WORK / "warm-out")

    def record(name, seconds, n, nbytes, note=""):
        results.append((name, seconds, n, nbytes, note))
        print(f"{name}: {seconds:.2f}s, {n / seconds:,.0f} rec/s, {nbytes / seconds / 1e6:,.1f} MB/s", file=sys.stderr)

    out_a = WORK / "plain.out"
    secs, _, nbytes = timed(lambda: plain_reads(rows, out_a))
    assert nbytes == rec_bytes
    record("(a) plain Python reads, 1 process", secs, len(rows), nbytes)
    out_a.unlink()

    for name, verify in (("extract job", False), ("extract job --verify", True)):
        out = WORK / "job-out"
        options = extract.ExtractOptions(tsv=str(tsv), archives=(str(archives),), output=str(out), verify=verify)
        secs, _, result = timed(lambda: extract.run(spark, options))
        s = result.summary
        assert result.ok and s["extracted"] == len(rows) and s["bytes"] == rec_bytes, s
        phases = ", ".join(f"{k} {v}" for k, v in s["seconds_by_phase"].items())
        record(
            f"{name}, {args.master}",
            secs,
            s["extracted"],
            s["bytes"],
            f"{s['files']} files, {s['tasks']} tasks; phases (s): {phases}",
        )
        if not args.keep:
            shutil.rmtree(out)
    spark.stop()

    out_b = WORK / "warcio.out.warc.gz"
    secs, _, n = timed(lambda: warcio_rewrite(rows, out_b))
    assert n == len(rows)
    record("(b) warcio decompress + rewrite, 1 process", secs, n, rec_bytes)
    out_b.unlink()

    plain_rate = results[0][3] / results[0][1]
    print()
    print(
        f"{dt.date.today()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, Linux {platform.release()}. "
        f"{len(rows):,} response records ({rec_bytes / 1e6:,.0f} MB of gzip members) out of "
        f"{args.files} archives of {arch_bytes / 1e9:.2f} GB in all; load average before the run "
        f"{load:.1f}."
    )
    print()
    print("| variant | seconds | records/s | MB/s | vs (a) | pages/s per core | note |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, secs, n, nbytes, note in results:
        procs = cores if name.startswith("extract") else 1
        print(
            f"| {name} | {secs:.2f} | {n / secs:,.0f} | {nbytes / secs / 1e6:,.1f} | "
            f"{nbytes / secs / plain_rate:.0%} | {n / secs / procs:,.0f} | {note} |"
        )
    print(f"\nDesign target: ~{TARGET_PER_NODE:.0f} pages/s per node (5M pages, < 50 min, 40 Hadoop nodes).")
    plain = results[0][1]
    write_result(
        "bench_extract",
        {f"{name} s": round(secs, 2) for name, secs, n, nbytes, note in results[1:-1]},
        what="the extract job's byte-range copy of response records",
        peer="(a) plain Python reads of the same ranges, (b) warcio decompress + rewrite",
        peers={"(a) s": round(plain, 2), "(b) s": round(results[-1][1], 2)},
        ratio={f"(a) / {name} (time)": round(plain / secs, 3) for name, secs, n, nbytes, note in results[1:]},
        shape={"records": len(rows), "member_mb": round(rec_bytes / 1e6), "archives": args.files},
        load_before=[load],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
