"""Benchmark an on-demand sub-index: one host over many published days, against the way without it.

    python -m benchmarks.bench_ondemand [--days 30] [--cores 2]

1. Real pages: the shared crawl samples (../shared/corpus) go through jobs/preprocess.py once;
   that preprocessed day is published ``--days`` times (hard links, one date each), so every
   day holds the same real pages and the request's pages are ``--days`` captures of each.
2. The host with the most pages is the request: ``url_patterns.txt`` holds it, every language
   partition of the days is asked for. The days carry the host index preprocess writes
   (``_hosts.parquet``), so the request opens only the files holding the host.
3. Timed, in one Spark session (``local[CORES]``, warmed up by an untimed run; the JVM start is
   not in any figure): the request over 1 day and over ``--days`` days; a request for a small
   host (the fewest pages, at least 3) over ``--days`` days; a request for every page of
   ``--days`` days (no pattern: the selection is the days' total); and the way without the
   job: the extract job copies the host's records of the ``--days`` days out of the archives,
   jobs/preprocess.py parses them again, jobs/index.py indexes them.
4. The sub-index's documents are checked equal (canonical digests) to that index's.

Prints a Markdown section and writes the result to benchmarks/results/bench_ondemand/.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pathlib
import platform
import shutil
import sys
import time
from collections import Counter

import pyarrow.parquet as pq

from benchmarks import ROOT
from benchmarks import WORK as BENCH_WORK
from benchmarks.common import write_result

WORK = BENCH_WORK / "ondemand"
FIRST = dt.date(2026, 1, 1)
SECTION = "## On-demand sub-indices"


def _tree_bytes(folder: pathlib.Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.parquet") if p.is_file())


def _documents(folder: pathlib.Path) -> set[tuple[str, tuple[tuple[str, int], ...]]]:
    """Every document under ``folder`` as (URL, its sorted (term, tf) pairs): what two indexes of the
    same pages share whatever ids and offsets their records got (ARC record ids derive from the
    archive's path and offset, which copying changes)."""
    from lib.ciff.reader import CiffReader

    out = set()
    for p in sorted(folder.rglob("index-*.ciff.gz")):
        meta = pq.read_table(p.parent / p.name.replace("index-", "metadata-").replace(".ciff.gz", ".parquet"))
        urls = dict(zip(meta.column("docid").to_pylist(), meta.column("url").to_pylist()))
        docs: dict[int, list[tuple[str, int]]] = {}
        for pl in CiffReader(str(p)).postings():
            for d, tf in zip(pl.docids, pl.tfs):
                docs.setdefault(d, []).append((pl.term, int(tf)))
        out |= {(urls[d], tuple(sorted(v))) for d, v in docs.items()}
    return out


def publish_days(base_day: pathlib.Path, root: pathlib.Path, days: int) -> list[dt.date]:
    """The base day published ``days`` times under ``root/preprocessed`` (hard links)."""
    out = []
    for n in range(days):
        day = FIRST + dt.timedelta(days=n)
        dest = root / "preprocessed" / f"{day:%Y-%m}" / f"{day:%d}"
        if not dest.exists():
            shutil.copytree(base_day, dest, copy_function=os.link)
        elif not (dest / "_hosts.parquet").exists():  # published by a run from before the host index
            os.link(base_day / "_hosts.parquet", dest / "_hosts.parquet")
        out.append(day)
    return out


def request(root: pathlib.Path, rid: str, days: list[dt.date], langs: list[str], patterns: str) -> pathlib.Path:
    folder = root / "on_demand" / rid
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(root / "public" / rid, ignore_errors=True)
    folder.mkdir(parents=True)
    config = {
        "days": {"from": days[0].isoformat(), "to": days[-1].isoformat()},
        "languages": langs,
        "requester": "bench",
        "purpose": "benchmark",
    }
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "url_patterns.txt").write_text(patterns)
    return folder


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--cores", type=int, default=2)
    args = ap.parse_args(argv)

    from pyspark.sql import SparkSession

    from jobs import extract, index, ondemand, preprocess
    from lib.runtime.session import use_this_python

    use_this_python()
    spark = (
        SparkSession.builder.master(f"local[{args.cores}]")
        .appName("bench-ondemand")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    shared = pathlib.Path(os.environ.get("DAILYSLICE_SHARED") or ROOT.parent / "shared")
    WORK.mkdir(parents=True, exist_ok=True)
    warc, base_day = WORK / "warc", WORK / "base-day"
    if not (base_day / "_SUCCESS").exists():
        shutil.rmtree(warc, ignore_errors=True)
        shutil.copytree(shared / "corpus", warc, ignore=shutil.ignore_patterns("*.md"))
        shutil.rmtree(base_day, ignore_errors=True)
        assert preprocess.main(["--input", str(warc), "--output", str(base_day)], spark=spark) == 0
    if not (base_day / "_hosts.parquet").exists():  # a base day kept from before preprocess wrote it
        from lib.pages import hostindex

        hostindex.write(str(base_day))
    root = WORK / "root"
    days = publish_days(base_day, root, args.days)
    langs = sorted(p.name.split("=", 1)[1] for p in base_day.glob("language=*"))
    hosts = Counter(
        h
        for f in base_day.glob("language=*/*.parquet")
        for h in pq.read_table(f, columns=["url_host"]).column(0).to_pylist()
    )
    host, per_day = hosts.most_common(1)[0]
    small_n, small = min((n, h) for h, n in hosts.items() if n >= 3)
    day_bytes = _tree_bytes(base_day)

    def run(rid: str, ndays: int, patterns: str) -> tuple[float, dict]:
        folder = request(root, rid, days[:ndays], langs, patterns)
        t = time.perf_counter()
        assert ondemand.main(["--request", str(folder)], spark=spark) == 0
        secs = time.perf_counter() - t
        return secs, json.loads((folder / "status.json").read_text())["counts"]

    run("warm", 1, f"{host}\n")  # Python workers and modules loaded, not measured
    rows = []
    runs = [("host-1", 1, f"{host}\n"), ("host-n", args.days, f"{host}\n"), ("small-n", args.days, f"{small}\n")]
    for rid, ndays, pat in [*runs, ("all-n", args.days, "")]:
        secs, counts = run(rid, ndays, pat)
        rows.append((rid, ndays, pat.strip() or "(all pages)", counts["files"], counts["rows"], counts["kept"], secs))

    # the way without the job: copy the host's records out, preprocess them again, index them
    sel = [
        r
        for f in sorted(base_day.glob("language=*/*.parquet"))
        for r in pq.read_table(f, columns=["url", "url_host", "warc_file", "warc_offset", "warc_length"]).to_pylist()
        if r["url_host"] == host and r["warc_offset"] is not None  # a page of a damaged archive has none
    ]
    manual = WORK / "manual"
    shutil.rmtree(manual, ignore_errors=True)
    manual.mkdir()
    tsv = manual / "list.tsv"
    tsv.write_text(
        "".join(f"{r['url']}\t{r['warc_file']}\t{r['warc_offset']}\t{r['warc_length']}\n" for r in sel) * args.days
    )
    t = time.perf_counter()
    res = extract.run(spark, extract.ExtractOptions(tsv=str(tsv), output=str(manual / "warc")))
    t_extract = time.perf_counter() - t
    assert res.ok, res.summary
    for name in ("manifest.tsv", "errors.tsv", "_stats.json", "_SUCCESS"):
        (manual / "warc" / name).unlink(missing_ok=True)
    t = time.perf_counter()
    assert preprocess.main(["--input", str(manual / "warc"), "--output", str(manual / "pre")], spark=spark) == 0
    t_pre = time.perf_counter() - t
    t = time.perf_counter()
    argv = ["--input", str(manual / "pre"), "--output", str(manual / "index"), "--no-graph"]
    assert index.main([*argv, "--min-group-docs", str(10**9)], spark=spark) == 0
    t_index = time.perf_counter() - t
    ours, theirs = _documents(root / "public" / "host-n"), _documents(manual / "index")
    # pages of a damaged archive have no offset: nothing to copy, so only the sub-index has them
    no_offset = sum(
        1
        for f in sorted(base_day.glob("language=*/*.parquet"))
        for r in pq.read_table(f, columns=["url_host", "warc_offset"]).to_pylist()
        if r["url_host"] == host and r["warc_offset"] is None
    )
    same = theirs <= ours and len(ours - theirs) <= no_offset
    spark.stop()

    load = round(os.getloadavg()[0], 2)
    lines = [
        SECTION,
        "",
        f"`python -m benchmarks.bench_ondemand --days {args.days} --cores {args.cores}` "
        f"({dt.date.today()}, {platform.machine()}, {os.cpu_count()} cores, load {load:.1f}; one Spark session "
        f"`local[{args.cores}]`, warmed up, JVM start not counted). The shared samples preprocessed once "
        f"({day_bytes / 1e6:.2f} MB of page Parquet) and published as {args.days} days; the request: "
        f"host `{host}` ({per_day} pages a day), every language; the small host `{small}` ({small_n} a day).",
        "",
        "| run | days | pattern | page files read | pages read | pages selected | seconds |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    lines += [f"| on-demand | {n} | `{p}` | {f} | {r} | {k} | {s:.1f} |" for _, n, p, f, r, k, s in rows]
    total = t_extract + t_pre + t_index
    lines.append(
        f"| extract + preprocess + index | {args.days} | `{host}` | - | - | {len(sel) * args.days} | "
        f"{total:.1f} ({t_extract:.1f} + {t_pre:.1f} + {t_index:.1f}) |"
    )
    host_n = rows[1][-1]
    lines += [
        "",
        f"The {args.days}-day request for one host took {host_n:.1f} s against {total:.1f} s the way without "
        f"the job ({total / host_n:.1f}x); over 1 day {rows[0][-1]:.1f} s, for the small host {rows[2][-1]:.1f} s, "
        f"over every page of the {args.days} days {rows[3][-1]:.1f} s. "
        "The same documents with the same postings as that index: "
        f"{'yes' if same else 'NO'} ({len(theirs)} distinct documents, compared as URL and postings, all in the "
        f"sub-index; it holds {len(ours - theirs)} more: the {no_offset} page(s) a day of a damaged archive, with no "
        "offset to copy).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    write_result(
        "bench_ondemand",
        {f"{p} over {n} days s": round(s, 1) for _, n, p, _f, _r, _k, s in rows},
        what=f"a {args.days}-day on-demand request for one host in one warmed local[{args.cores}] session",
        peer="extract + preprocess + index of the same pages from their WARC/ARC records",
        peers={"extract_s": round(t_extract, 1), "preprocess_s": round(t_pre, 1), "index_s": round(t_index, 1)},
        details={"runs": [dict(zip(("days", "pattern", "files", "pages_read", "selected", "s"), r[1:])) for r in rows]},
        ratio={"ours / peer (time)": round(host_n / total, 3), "same documents and postings": same},
        shape={"host": host, "pages_a_day": per_day, "days": args.days, "page_parquet_mb": round(day_bytes / 1e6, 2)},
        load_before=[load],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
