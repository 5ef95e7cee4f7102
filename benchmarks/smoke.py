"""Smoke pass: every benchmark of docs/benchmarks.md with small arguments, one after another.

Proves each script runs to the end (its peer included) on this install, not its figures. Each runs
as ``python -m benchmarks.bench_xxx`` in a process group of its own, with a timeout, its output in
WORK/logs/NAME.log; all of them build into WORK (``--work``, default benchmarks/work/smoke, emptied
first, passed on as $DAILYSLICE_BENCH_WORK), so no full-size run reuses what these small runs built;
their results go to WORK/results ($DAILYSLICE_BENCH_RESULTS), not benchmarks/results.
Anserini's jar is fetched into benchmarks/work/index/tools on first use, as by bench_index.

    python -m benchmarks.smoke [--only bench_index ...] [--timeout 600]

``--only`` runs the named scripts and those whose output they read (bench_warc_read reads
bench_preprocess's day, bench_overlap bench_index's, bench_serve_load bench_search's root).
Exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: (script, arguments, scripts it needs run before, a line its output must hold)
RUNS: list[tuple[str, list[str], list[str], str | None]] = [
    ("bench_preprocess", ["--total-mb", "8", "--files", "2", "--skip-memory"], [], None),
    ("bench_warc_read", [], ["bench_preprocess"], "all three readers agree"),
    ("bench_preprocess_peers", ["--records", "200", "--files", "2", "--repeat", "1"], [], None),
    ("bench_parser_ab", ["--baseline", "c5ded4b", "--rounds", "2", "--repeat", "1"], [], "this/baseline"),
    (
        "bench_index",
        [
            "--set",
            "synthetic",
            "--set",
            "realday",
            "--docs",
            "2000",
            "--words",
            "200",
            "--docs-per-shard",
            "1000",
            "--repeat",
            "1",
            "--copies",
            "2",
            "--driver-memory",
            "2g",
        ],
        [],
        "| Anserini anserini-",
    ),  # Anserini's failure is not an exit code (synthetic); the realday set's is
    (
        "bench_overlap",
        ["--day", "real", "--day", "synthetic", "--copies", "1", "--docs", "2000", "--words", "200", "--queries", "20"],
        ["bench_index"],
        "The two cuts' shards give the same top 10",
    ),
    ("bench_graph", ["--records", "400", "--scale", "2", "--repeat", "1"], [], None),
    ("bench_ranks", ["--edges", "20000", "--sample", "300"], [], "agreement: pagerank max diff"),
    (
        "bench_linkdb",
        ["--days", "6", "--checkpoints", "3", "6", "--window", "2", "--lookups", "10"],
        [],
        "inlinks p99 ms",
    ),
    ("bench_cuts", ["--scale", "1", "--rows-per-file", "20"], [], "graph adds / DuckDB"),
    ("bench_exchange", ["--day", "real", "--copies", "1", "--repeat", "1"], [], "tables differ in 0 rows"),
    (
        "bench_ciff_encode",
        ["--day", "real", "--day", "synthetic", "--copies", "1", "--docs", "500"],
        [],
        "The two cuts give the same collection size",
    ),
    (
        "bench_search",
        [
            "--day",
            "real",
            "--day",
            "synthetic",
            "--copies",
            "1",
            "--docs",
            "2000",
            "--queries",
            "20",
            "--search-queries",
            "10",
        ],
        [],
        "The two cuts' indexes give the same top-10",
    ),
    ("bench_serve_load", ["--clients", "2", "--seconds", "5"], ["bench_search"], None),
    ("bench_serve_files", ["--mb", "4", "--files", "20", "--rounds", "1", "--ranges", "10"], [], "Ratio ours/peer"),
    ("bench_enrich", ["--repeat", "1"], [], "x the run without"),
    ("bench_catalogue", ["--captures", "2000", "--urls", "800", "--days", "2"], [], "| HTTP /captures"),
    ("bench_extract", ["--copies", "4", "--files", "2"], [], "(b) warcio"),
    ("bench_storage", ["--day", "real", "--copies", "1", "--ranges", "50", "--repeat", "1"], [], "| S3 | ranges"),
    ("bench_placement", ["--keys", "2000", "--nodes", "4", "--files", "50"], [], None),
    ("bench_swap", ["--files", "200", "--big-mb", "8", "--seconds", "2"], [], "| files_per_s |"),
    ("bench_extraction_quality", ["--limit", "20"], [], "| trafilatura |"),
    ("bench_minhash", ["--repeat", "1", "--variants", "10"], [], "| rensa |"),
    ("bench_dedup_jobs", [], [], "share signatures"),
    ("bench_crossday", ["--days", "1", "3"], [], "N=3: kept days 3"),
    ("bench_maintext_downstream", ["--baseline", "a5072c7"], [], "own title as a query"),
    ("bench_orchestration", ["--files", "2", "--pages-per-file", "10"], [], '"state": "COMPLETED"'),
    ("bench_ondemand", ["--days", "2"], [], "| on-demand | 2 |"),
    ("bench_night_apps", ["--files", "1", "--pages-per-file", "10", "--repeat", "1"], [], "ratio one/three"),
    ("bench_cdx", ["--days", "3", "6", "--lookups", "50", "--register-mb", "2"], [], "registration:"),
    ("bench_embeds", ["--rounds", "1"], [], "query_us_per_page"),
    ("bench_batches", ["--archives", "2", "--windows", "720"], [], "ratio every 720 min / nightly"),
]


def selected(only: list[str]) -> list[tuple[str, list[str], list[str], str | None]]:
    """The runs named in ``only`` (all when empty) and those they need, in the order of RUNS."""
    names = {n if n.startswith("bench_") else f"bench_{n}" for n in only}
    unknown = names - {r[0] for r in RUNS}
    if unknown:
        raise SystemExit(f"no such benchmark: {', '.join(sorted(unknown))}")
    for name, _, needs, _ in reversed(RUNS):
        if name in names:
            names.update(needs)
    return [r for r in RUNS if not only or r[0] in names]


def run_one(
    name: str, args: list[str], must: str | None, log: pathlib.Path, env: dict[str, str], timeout: float
) -> tuple[int, float]:
    """Run one script; (exit code, seconds). 124 on timeout, 1 when ``must`` is missing from its output."""
    t0 = time.monotonic()
    with open(log, "wb") as out:
        p = subprocess.Popen(
            [sys.executable, "-m", f"benchmarks.{name}", *args],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            rc = p.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGINT)  # its finally blocks stop what it started (Slurm, servers)
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)  # the script's own group: its Spark JVMs too
                p.wait()
            rc = 124
    if rc == 0 and must and must not in log.read_text(errors="replace"):
        with open(log, "a") as f:
            f.write(f"\n[smoke] {must!r} is not in the output\n")
        rc = 1
    return rc, time.monotonic() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", action="extend", default=[], metavar="NAME", help="bench_xxx or xxx")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per script (default 600)")
    ap.add_argument("--work", default=str(ROOT / "benchmarks" / "work" / "smoke"))
    a = ap.parse_args(argv)
    runs = selected(a.only)
    work = pathlib.Path(a.work).resolve()
    if work.exists() and any(work.iterdir()) and not (work / ".smoke").exists():
        raise SystemExit(f"{work} is not empty and not a smoke folder: pass another --work")
    shutil.rmtree(work, ignore_errors=True)
    (work / "logs").mkdir(parents=True)
    (work / ".smoke").touch()
    # the small runs' results go beside their work, never among the committed ones
    env = {**os.environ, "DAILYSLICE_BENCH_WORK": str(work), "PYTHONUNBUFFERED": "1"}
    env["DAILYSLICE_BENCH_RESULTS"] = str(work / "results")
    results = []
    print(f"smoke: {len(runs)} benchmarks, work folder {work}", flush=True)
    unlisted = sorted({p.stem for p in (ROOT / "benchmarks").glob("bench_*.py")} - {r[0] for r in RUNS})
    if unlisted:
        print(f"smoke: not in its list (add them to RUNS): {', '.join(unlisted)}", flush=True)
    for name, args, _, must in runs:
        log = work / "logs" / f"{name}.log"
        rc, secs = run_one(name, args, must, log, env, a.timeout)
        results.append((name, rc, secs))
        print(f"{name:24s} rc={rc:<4d} {secs:7.1f} s", flush=True)
        if rc != 0:
            tail = log.read_text(errors="replace").splitlines()[-20:]
            print("\n".join(f"    | {ln}" for ln in tail) + f"\n    (whole output: {log})", flush=True)
    failed = [n for n, rc, _ in results if rc != 0]
    total = sum(s for _, _, s in results)
    print(
        f"smoke: {len(results) - len(failed)} passed, {len(failed)} failed in {total:.0f} s"
        + (f": {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
