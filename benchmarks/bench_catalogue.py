"""Benchmark the catalogue: the Spark job (CDXJ sort, URL database merge, report) on
synthetic capture days, then DuckDB query latency, look-ups by payload digest and the HTTP API.

    python -m benchmarks.bench_catalogue [--captures 200000] [--urls 80000] [--days 2] [--master local[2]]
    python -m benchmarks.bench_catalogue --root ROOT   # only the digest look-ups, on days already built
    python -m benchmarks.bench_catalogue --small-day 400 [--repeat 3]   # a small day's job process

``--small-day N``: the catalogue job as the nightly and the tests start it (``python jobs/catalogue.py``, its
own driver JVM) on one synthetic day of N captures, in turn with the small day's light JVM (C1 only, the
serial collector: lib.catalogue.day_captures.is_small_day) and with the JVM's defaults (``DAILYSLICE_LIGHT_DRIVER=off``,
the job before the change), ``--repeat`` pairs; prints the median walls and their ratio.

The digest rows time ``query.digest`` (DuckDB over the side table sorted by digest: one row
group read per day file) for one digest and for a batch of many digests, against its peer: DuckDB scanning
every day's ``_captures`` for the same digests (the only way
without the side table), and print the ratio.

Writes ``--days`` preprocess-shaped days (``_captures`` Parquet per lib.pages.schema, no pages)
under benchmarks/work/catalogue/, with ``--captures`` records per day over ``--urls``
distinct URLs (each day re-captures most URLs; ~30% of them change digest), runs the job
per day on one local Spark session (session start not counted), then times the queries.
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import hashlib
import json
import os
import pathlib
import platform
import random
import shutil
import time

import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks import WORK as BENCH_WORK
from benchmarks.common import timed, write_result
from lib.pages.schema import CAPTURE_SCHEMA

WORK = BENCH_WORK / "catalogue"
DAY0 = dt.date(2026, 3, 1)


def _sha1(text: str) -> str:
    """A real-shaped payload digest (sha1: + base32, as WARC writers spell it)."""
    return "sha1:" + base64.b32encode(hashlib.sha1(text.encode()).digest()).decode()


def digest_rows(root: str, batch: int, reps: int = 5) -> list[tuple[str, str, str]]:
    """Look-ups by digest on the built days under ``root`` against DuckDB scanning the captures."""
    import glob

    import pyarrow.compute as pc

    from lib.catalogue import payload_table, query, urldb

    db = os.path.join(root, "urldb")
    days = urldb.read_state(db)["days"]
    files = payload_table.day_files(db, days)
    keys = pc.unique(pq.read_table(files, columns=["digest"]).column("digest")).to_pylist()
    caps = [
        f
        for d in days
        for f in sorted(
            glob.glob(os.path.join(query.day_dir(root, dt.date.fromisoformat(d)), "_captures", "*.parquet"))
        )
    ]
    n_caps = sum(pq.read_metadata(f).num_rows for f in caps)
    rng = random.Random(7)
    singles = rng.sample(keys, min(reps, len(keys)))
    many = rng.sample(keys, min(batch, len(keys)))
    con = query.connect()

    def best(fn, args_list) -> tuple[float, int]:
        times, n = [], 0
        for a in args_list:
            t = time.perf_counter()
            n = len(fn(a))
            times.append(time.perf_counter() - t)
        return min(times), n

    def duck(ks):  # the same fields as query.digest, as Python rows
        return con.execute(
            "SELECT payload_digest, url, warc_date, record_type, http_status, mime_type, warc_file, "
            "warc_offset, warc_length FROM read_parquet(?) WHERE payload_digest IN (SELECT unnest(?))",
            [caps, ks],
        ).fetchall()

    def duck_arrow(ks):
        return con.sql(
            "SELECT payload_digest, url, warc_date, record_type, http_status, mime_type, warc_file, "
            "warc_offset, warc_length FROM read_parquet(?) WHERE payload_digest IN (SELECT unnest(?))",
            params=[caps, ks],
        ).to_arrow_table()

    def ours_arrow(ks):
        return payload_table.lookup(files, ks, con)

    t_one, n1 = best(lambda k: query.digest(root, k), singles)
    t_duck1, d1 = best(lambda k: duck([k]), singles)
    t_batch, nb = best(lambda ks: query.digest(root, ks), [many, many])
    t_duckb, db_ = best(duck, [many, many])
    assert nb == db_, (nb, db_)  # the same captures both ways
    t_arrow, _ = best(lambda ks: ours_arrow(ks).num_rows * [0], [many, many])
    t_duck_arrow, _ = best(lambda ks: duck_arrow(ks).num_rows * [0], [many, many])
    shape = f"{len(days)} days, {n_caps:,} captures, {len(keys):,} distinct digests, {len(files)} side-table files"
    return [
        (
            "digest, one",
            f"{t_one * 1000:.1f} ms",
            f"{n1} rows; {shape}; DuckDB scan of the captures {t_duck1 * 1000:.0f} ms ({t_duck1 / t_one:.0f}x)",
        ),
        (
            f"digest, batch of {len(many):,}",
            f"{t_batch * 1000:.0f} ms",
            f"{t_batch / len(many) * 1e6:.0f} us per digest, {nb:,} rows as dicts; DuckDB scan {t_duckb * 1000:.0f} ms "
            f"as tuples ({t_duckb / t_batch:.1f}x)",
        ),
        (
            f"digest, batch of {len(many):,}, Arrow",
            f"{t_arrow * 1000:.0f} ms",
            f"payload_table.lookup; DuckDB scan to Arrow {t_duck_arrow * 1000:.0f} ms ({t_duck_arrow / t_arrow:.1f}x)",
        ),
    ]


def replicate(root: str, copies: int) -> int:
    """Make the built days ``copies`` times as many, as later dates: each copy is the job's own
    captures and side-table files under a new date, added to the URL database's days (its
    table is not rebuilt: only the digest look-ups and the captures scan read these). Returns
    the days now in the database."""
    from lib.catalogue import payload_table, query, urldb

    db = os.path.join(root, "urldb")
    state = urldb.read_state(db)
    days = [dt.date.fromisoformat(d) for d in state["days"]]
    new = []
    for k in range(1, copies):
        for d in days:
            nd = d + dt.timedelta(days=len(days) * k)
            shutil.copytree(query.day_dir(root, d), query.day_dir(root, nd), dirs_exist_ok=True)
            shutil.copytree(
                payload_table.day_dir(db, d.isoformat()), payload_table.day_dir(db, nd.isoformat()), dirs_exist_ok=True
            )
            new.append(nd.isoformat())
    state["days"] = sorted(set(state["days"]) | set(new))
    urldb.write_state(db, state)
    return len(state["days"])


def write_day(root: pathlib.Path, day: dt.date, n: int, urls: int, seed: int) -> None:
    rng = random.Random(seed)
    out = root / "preprocessed" / f"{day:%Y-%m}" / f"{day:%d}"
    (out / "_captures").mkdir(parents=True)
    t0 = dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc)
    rows = {k: [] for k in CAPTURE_SCHEMA.names}
    for i in range(n):
        u = rng.randrange(urls)
        host = f"host{u % 997}.example.{('com', 'org', 'de', 'fr')[u % 4]}"
        rows["url"].append(f"https://{host}/page/{u}?q={u % 7}")
        rows["warc_date"].append(t0 + dt.timedelta(seconds=rng.randrange(86400)))
        rows["record_type"].append("revisit" if i % 20 == 0 else "response")
        rows["record_id"].append(f"<urn:uuid:{seed}-{i}>")
        rows["http_status"].append(200 if i % 50 else 404)
        rows["mime_type"].append("text/html")
        changed = (u % 10 < 3) and seed  # 30% of URLs change from day to day
        rows["payload_digest"].append(_sha1(f"{u}-{seed if changed else 0}"))
        rows["kept"].append(i % 20 != 0)
        rows["warc_file"].append(f"file://{root}/warc/{day:%Y-%m}/{day:%d}/c1/{i // 5000:05d}.warc.gz")
        rows["warc_offset"].append((i % 5000) * 4000)
        rows["warc_length"].append(3000 + i % 1000)
        rows["robots_txt"].append(None)
    pq.write_table(pa.table(rows, schema=CAPTURE_SCHEMA), out / "_captures" / "part-00000.parquet")
    (out / "_SUCCESS").touch()


def small_day(n: int, repeat: int) -> None:
    """The catalogue job process on a day of ``n`` captures: light JVM against the JVM's defaults, paired."""
    import statistics
    import subprocess
    import sys

    root = WORK / "small"
    shutil.rmtree(root, ignore_errors=True)
    write_day(root, DAY0, n, max(1, n * 2 // 5), 0)
    (root / "preprocessed" / f"{DAY0:%Y-%m}" / f"{DAY0:%d}" / "_SUCCESS").write_bytes(b"")
    repo = pathlib.Path(__file__).resolve().parents[1]
    walls: dict[str, list[float]] = {"light": [], "defaults": []}
    load0 = os.getloadavg()[0]
    for i in range(repeat):
        for mode in walls:
            out = root / f"run-{mode}-{i}"
            env = dict(os.environ, PYTHONPATH=str(repo), PYSPARK_PYTHON=sys.executable)
            env["DAILYSLICE_LIGHT_DRIVER"] = "on" if mode == "light" else "off"
            cmd = [sys.executable, str(repo / "jobs" / "catalogue.py"), "--date", DAY0.isoformat(), "--root", str(root)]
            cmd += [
                "--output",
                str(out / "catalogue"),
                "--urldb",
                str(out / "urldb"),
                "--no-report",
                "--master",
                "local[2]",
            ]
            t = time.time()
            subprocess.run(cmd, env=env, check=True, capture_output=True)
            walls[mode].append(time.time() - t)
    med = {m: statistics.median(w) for m, w in walls.items()}
    ratio = med["light"] / med["defaults"]
    print(
        f"{dt.date.today()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, load "
        f"{load0:.1f} -> {os.getloadavg()[0]:.1f}; one day of {n:,} captures, {repeat} pairs\n"
    )
    print("| JVM | wall (median) | walls |\n|---|---:|---|")
    for m, w in walls.items():
        print(f"| {m} | {med[m]:.1f} s | {', '.join(f'{x:.1f}' for x in w)} |")
    print(f"\nlight / defaults: {ratio:.2f}x")
    write_result(
        "bench_catalogue",
        {"light_wall_s": round(med["light"], 1)},
        what="the catalogue job process on a small day: light driver JVM against the JVM's defaults",
        peer="the same job with the JVM's defaults (DAILYSLICE_LIGHT_DRIVER=off)",
        peers={"defaults_wall_s": round(med["defaults"], 1)},
        ratio={"light/defaults": round(ratio, 2)},
        shape={"captures": n, "urls": max(1, n * 2 // 5), "pairs": repeat},
        variant="small day",
        details={"walls": walls},
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--captures", type=int, default=200_000)
    ap.add_argument("--urls", type=int, default=80_000)
    ap.add_argument("--days", type=int, default=2)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--batch", type=int, default=10_000, help="digests per batch look-up (default %(default)s)")
    ap.add_argument("--root", help="only time the digest look-ups on this ROOT's built days (catalogue run)")
    ap.add_argument(
        "--replicate",
        type=int,
        default=1,
        metavar="N",
        help="with --root: first copy the built days N times under later dates (a longer history)",
    )
    ap.add_argument("--small-day", type=int, metavar="N", help="only the job process on a day of N captures")
    ap.add_argument("--repeat", type=int, default=3, help="with --small-day: pairs of runs (default %(default)s)")
    args = ap.parse_args()
    if args.small_day:
        small_day(args.small_day, args.repeat)
        return
    if args.root:
        if args.replicate > 1:
            print(f"{replicate(args.root, args.replicate)} days in the URL database")
        print(f"load {os.getloadavg()[0]:.1f}\n\n| step | time | notes |\n|---|---:|---|")
        drows = digest_rows(args.root, args.batch)
        for r in drows:
            print(f"| {r[0]} | {r[1]} | {r[2]} |")
        write_result(
            "bench_catalogue",
            {r[0]: f"{r[1]} ({r[2]})" if r[2] else r[1] for r in drows},
            what="look-ups by payload digest over a built URL database",
            peer="DuckDB scanning every day's captures",
            shape={"root": args.root, "replicate": args.replicate},
            variant="digest",
        )
        return
    shutil.rmtree(WORK, ignore_errors=True)
    days = [DAY0 + dt.timedelta(days=i) for i in range(args.days)]
    for i, d in enumerate(days):
        write_day(WORK, d, args.captures, args.urls, i)

    from pyspark.sql import SparkSession

    from jobs import catalogue
    from lib.catalogue import query
    from lib.runtime.session import use_this_python
    from lib.serve.app import create_app
    from lib.serve.server import ServerThread

    use_this_python()  # the workers need the venv's packages (pandas, pyarrow) when it is not activated
    spark = (
        SparkSession.builder.master(args.master)
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    rows = []
    for d in days:
        t = time.time()
        result = catalogue.run(spark, catalogue.CatalogueOptions(date=d, root=str(WORK), url_partitions=16))
        assert result.ok, result.summary
        s = result.summary
        total = time.time() - t
        rows.append(
            (
                f"job day {d}",
                f"{total:.1f} s",
                f"CDXJ {s['cdxj_seconds']:.1f} s "
                f"({args.captures / s['cdxj_seconds']:,.0f} lines/s), URL DB merge {s['urldb_seconds']:.1f} s "
                f"({s['urldb']['urls']:,} URLs), report+rest {total - s['cdxj_seconds'] - s['urldb_seconds']:.1f} s",
            )
        )
    spark.stop()
    last = WORK / "preprocessed" / f"{days[-1]:%Y-%m}" / f"{days[-1]:%d}" / "_captures" / "part-00000.parquet"
    url = pq.read_table(last, columns=["url"]).column("url")[0].as_py()  # a URL captured on several days

    def step(name, fn, reps=3):
        t = timed(fn, reps)
        n = len(t.result) if isinstance(t.result, list) else 1
        rows.append((name, f"{t.wall * 1000:.0f} ms", f"{n} rows"))

    step("captures URL (all days)", lambda: query.captures(str(WORK), url))
    step("search --prefix", lambda: query.search(str(WORK), prefix="https://host1.example.org/", limit=100))
    step("search --contains", lambda: query.search(str(WORK), contains="/page/4242?", limit=100))
    step("files DAY", lambda: query.files(str(WORK), days[-1]))
    step("stats DAY", lambda: query.stats(str(WORK), days[-1]))
    rows += digest_rows(str(WORK), args.batch)
    import urllib.request

    srv = ServerThread(create_app({"default": str(WORK)}))
    base = srv.url + "/catalogue"
    from urllib.parse import quote

    step(
        "HTTP /captures",
        lambda: json.loads(urllib.request.urlopen(f"{base}/captures?url={quote(url, safe='')}").read()),
    )
    srv.stop()
    cdxj = WORK / "catalogue" / f"{days[-1]:%Y-%m}" / f"{days[-1]:%d}" / "index.cdxj"
    print(
        f"{dt.date.today()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}; {args.days} days x "
        f"{args.captures:,} captures over {args.urls:,} URLs; CDXJ {cdxj.stat().st_size / 1e6:.1f} MB/day\n"
    )
    print("| step | time | notes |\n|---|---:|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")
    write_result(
        "bench_catalogue",
        {r[0]: f"{r[1]} ({r[2]})" if r[2] else r[1] for r in rows},
        what="the catalogue job per day and its queries over synthetic days; look-ups by payload digest",
        peer="digest: DuckDB scanning every day's captures",
        shape={"days": args.days, "captures_a_day": args.captures, "urls": args.urls}
        | {"cdxj_mb_a_day": round(cdxj.stat().st_size / 1e6, 1)},
    )


if __name__ == "__main__":
    main()
