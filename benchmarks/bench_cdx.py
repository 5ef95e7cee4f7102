"""The archive as a whole (issue 55, point 6): URL look-ups in the capture index and record-id
look-ups in the record store as days accumulate, beside pywb's CDX server, DuckDB and SQLite.

A real day (the captures of real archives of the shared corpus, read by the preprocess reader,
as the night reads them) is replicated with new dates, file names and record ids as day after
day is added the way the nightly catalogue adds it (``capindex.add_day``,
``recordstore.add_day``). At each checkpoint (30, 120, 365 days) it measures, in this process:

- **URL look-ups**, exact (a URL of the day: it has a capture every day) and prefix (the URL's
  host and first path segment), ``limit=10`` as a replay's look-up asks, the answer rendered as
  CDXJ lines: ours (``cdxquery`` over ``capindex.Reader``, as ``GET /cdx`` answers), pywb's CDX
  server (its aggregator over a ``FileIndexSource``: the sorted CDXJ of every day, pywb's own
  binary search; no ZipNum: pywb builds none itself) and DuckDB over the per-day Parquet (one
  file per day, sorted by key). p50, p99 and look-ups per second (one client).
- **Record-id look-ups**: ``recordstore.get`` against SQLite (Python's own) with the same keys
  as a ``WITHOUT ROWID`` primary key, p50 and p99.
- **The night's maintenance**: seconds to add each day to the capture index and the record
  store, around each checkpoint.
- **Registering** one archive of ``--register-mb`` (the corpus archives concatenated, gzip
  members as they are): seconds until its records are queryable (``register.register``).

    python -m benchmarks.bench_cdx [--days 30 120 365] [--lookups 2000] [--register-mb 1024]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
import uuid
from typing import Any, Callable

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from pywb.warcserver.index.aggregator import SimpleAggregator
from pywb.warcserver.index.indexsource import FileIndexSource

from benchmarks.common import load, machine_text, utc_now, write_result
from lib.catalogue import capindex, capruns, cdxj, cdxquery, recordstore, register
from lib.catalogue.cdxj import parse_line
from lib.preprocess.archive_pages import FileProcessor
from lib.serve.cdx_api import answer

CORPUS = os.environ.get("DAILYSLICE_SHARED", os.path.join(os.path.dirname(__file__), "..", "..", "shared"))
ARCHIVES = ["aut/example.warc.gz", "ipwb/sample-1.warc.gz", "dolma/sample-0000.warc.gz", "aut/example.arc.gz"]
START = dt.date(2025, 1, 1)
NS = uuid.UUID("6f1c0e55-0000-4000-8000-000000000055")


def base_day(corpus: str) -> list[dict[str, Any]]:
    """The captures of the corpus archives, as the night reads them."""
    caps = []
    for rel in ARCHIVES:
        path = os.path.join(corpus, rel)
        proc = FileProcessor(f"file://{os.path.abspath(path)}", captures_only=True)
        with open(path, "rb") as f:
            for _ in proc.pages(f):
                pass
        caps += [dict(c, name=rel.replace("/", "-")) for c in proc.captures if c["url"] and c["warc_date"]]
    return caps


def replicate(caps: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    """Day ``k``'s copy: the captures on date START+k (time of day kept), new file names and ids."""
    day = START + dt.timedelta(days=k)
    out = []
    for c in caps:
        d = c["warc_date"]
        out.append(
            dict(
                c,
                warc_date=dt.datetime.combine(day, d.time(), dt.timezone.utc),
                warc_file=f"{day:%Y-%m}/{day:%d}/{c['name']}",
                record_id="urn:uuid:" + str(uuid.uuid5(NS, f"{k}:{c['record_id']}")),
            )
        )
    return out


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def measure(fn: Callable[[str], Any], keys: list[str]) -> dict[str, float]:
    """p50 and p99 (ms) and look-ups per second of ``fn`` over ``keys``, one at a time."""
    fn(keys[0])  # opened, cached
    times = []
    t0 = time.perf_counter()
    for k in keys:
        t = time.perf_counter()
        fn(k)
        times.append(time.perf_counter() - t)
    total = time.perf_counter() - t0
    return {
        "p50_ms": round(pct(times, 0.5) * 1e3, 3),
        "p99_ms": round(pct(times, 0.99) * 1e3, 3),
        "per_s": round(len(keys) / total, 1),
    }


def prefix_of(url: str) -> str:
    """The URL's host and first path segment, as a prefix query gives it."""
    scheme, _, rest = url.partition("://")
    host, _, path = rest.partition("/")
    first = path.split("/")[0].split("?")[0]
    return f"{scheme}://{host}/{first}"


def checkpoint(work: str, n_days: int, urls: list[str], rids: list[str], rs_db: sqlite3.Connection) -> dict:
    """Every look-up of one checkpoint."""
    index = os.path.join(work, capindex.FOLDER)
    reader = capindex.Reader(index)
    every = sorted(line for r in capindex.read_state(index)["runs"] for line in _all(index, r))
    flat = os.path.join(work, "all.cdxj")
    with open(flat, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in every))
    pywb = SimpleAggregator({"c": FileIndexSource(flat)})
    files = sorted(os.path.join(work, "parquet", p) for p in os.listdir(os.path.join(work, "parquet")))
    con = duckdb.connect()

    def ours(url: str, match: str) -> str:
        q = cdxquery.parse_query({"url": [url], "matchType": [match], "limit": ["10"]})
        return "".join(answer(q, reader.lines(q.start, q.end)))

    def theirs(url: str, match: str) -> str:
        it, _ = pywb({"url": url, "matchType": match, "limit": "10"})
        return "".join(c.to_cdxj() for c in it)

    def duck(url: str, match: str) -> list:
        q = cdxquery.parse_query({"url": [url], "matchType": [match]})
        sql = "SELECT line FROM read_parquet(?) WHERE urlkey >= ? AND urlkey < ? ORDER BY line LIMIT 10"
        return con.execute(sql, [files, q.start, q.end]).fetchall()

    out: dict[str, Any] = {"days": n_days, "lines": len(every)}
    for match, keys in (("exact", urls), ("prefix", [prefix_of(u) for u in urls])):
        assert (
            ours(keys[0], match).split("\n")[0].split(" ")[:2] == theirs(keys[0], match).split("\n")[0].split(" ")[:2]
        )
        out[f"{match}_ours"] = measure(lambda u, m=match: ours(u, m), keys)
        out[f"{match}_pywb"] = measure(lambda u, m=match: theirs(u, m), keys)
        out[f"{match}_duckdb"] = measure(lambda u, m=match: duck(u, m), keys[: max(20, len(keys) // 20)])
    store = os.path.join(work, recordstore.FOLDER)
    out["record_ours"] = measure(lambda r: recordstore.get(store, r), rids)
    out["record_sqlite"] = measure(lambda r: rs_db.execute("SELECT v FROM r WHERE k = ?", (r,)).fetchone(), rids)
    os.remove(flat)
    return out


def _all(index: str, r: dict) -> list[str]:
    run = capruns.Run(os.path.join(index, r["name"]))
    try:
        live = set(capindex.read_state(index)["days"].values())
        srcs = sorted(r["days"])
        return [line for line, s in run.all() if srcs[s] in live]
    finally:
        run.close()


def registration(corpus: str, work: str, mb: int) -> dict[str, Any]:
    """Seconds until one archive of ``mb`` MB (corpus archives concatenated) is queryable."""
    root = os.path.join(work, "reg")
    day = os.path.join(root, "warc", "2026", "x")
    os.makedirs(day, exist_ok=True)
    path = os.path.join(day, "big.warc.gz")
    parts = []
    for rel in ARCHIVES:
        if rel.endswith(".warc.gz"):
            with open(os.path.join(corpus, rel), "rb") as src:
                parts.append(src.read())
    with open(path, "wb") as f:
        while f.tell() < mb << 20:
            for p in parts:
                f.write(p)
    size = os.path.getsize(path)
    t0 = time.perf_counter()
    out = register.register(root, path, [os.path.join(root, "warc")])
    seconds = time.perf_counter() - t0
    first = next(capindex.Reader(os.path.join(root, capindex.FOLDER)).lines("", "\uffff"))
    assert parse_line(first)[2]["filename"].endswith("big.warc.gz")
    return {
        "mb": round(size / 2**20),
        "records": out["records"],
        "seconds": round(seconds, 1),
        "mb_per_s": round(size / 2**20 / seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, nargs="+", default=[30, 120, 365], help="checkpoints (days added)")
    ap.add_argument("--lookups", type=int, default=2000, help="look-ups per kind and checkpoint")
    ap.add_argument("--register-mb", type=int, default=1024, help="size of the archive registered (0: none)")
    ap.add_argument("--corpus", default=os.path.join(CORPUS, "corpus"), help="the shared corpus")
    ap.add_argument("--work", default=os.environ.get("DAILYSLICE_BENCH_WORK"), help="scratch folder")
    a = ap.parse_args(argv)
    started, before = utc_now(), load()
    work = tempfile.mkdtemp(prefix="bench-cdx-", dir=a.work)
    rng = random.Random(55)
    try:
        caps = base_day(a.corpus)
        urls = sorted({c["url"] for c in caps if c["url"].startswith("http")})
        print(f"{machine_text()}\nbase day: {len(caps)} captures, {len(urls)} URLs, {len(ARCHIVES)} archives")
        os.makedirs(os.path.join(work, "parquet"))
        index, store = os.path.join(work, capindex.FOLDER), os.path.join(work, recordstore.FOLDER)
        db = sqlite3.connect(os.path.join(work, "records.sqlite"))
        db.execute("CREATE TABLE r (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID")
        rows: dict[str, Any] = {}
        nightly: list[dict[str, float]] = []
        all_rids: list[str] = []
        for k in range(max(a.days)):
            day = replicate(caps, k)
            lines = cdxj.iter_lines(day)
            path = os.path.join(work, "day.cdxj")
            with open(path, "w", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in lines))
            d = (START + dt.timedelta(days=k)).isoformat()
            t0 = time.perf_counter()
            capindex.add_day(index, d, path, "bench")
            t1 = time.perf_counter()
            recordstore.add_day(store, d, day, "bench")
            t2 = time.perf_counter()
            nightly.append({"capindex_s": t1 - t0, "recordstore_s": t2 - t1})
            keys = [ln.split(" ", 1)[0] for ln in lines]
            pq.write_table(pa.table({"urlkey": keys, "line": lines}), os.path.join(work, "parquet", f"{d}.parquet"))
            db.executemany(
                "INSERT OR REPLACE INTO r VALUES (?, ?)",
                [(c["record_id"], f"{d} {c['warc_file']} {c['warc_offset']} {c['warc_length']}") for c in day],
            )
            db.commit()
            all_rids += [c["record_id"] for c in day]
            if k + 1 in a.days:
                picked = [rng.choice(urls) for _ in range(a.lookups)]
                rids = [rng.choice(all_rids) for _ in range(a.lookups)]
                cp = checkpoint(work, k + 1, picked, rids, db)
                recent = nightly[-10:]
                cp["night_capindex_s"] = round(statistics.mean(n["capindex_s"] for n in recent), 3)
                cp["night_recordstore_s"] = round(statistics.mean(n["recordstore_s"] for n in recent), 3)
                cp["runs"] = len(capindex.read_state(index)["runs"])
                rows[str(k + 1)] = cp
                print(f"{k + 1} days: {cp}")
        reg = registration(a.corpus, work, a.register_mb) if a.register_mb else None
        print(f"registration: {reg}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    last = rows[str(max(a.days))]
    first = rows[str(min(a.days))]
    figures = (
        {f"exact_p50_ms_{n}d": r["exact_ours"]["p50_ms"] for n, r in rows.items()}
        | {f"prefix_p50_ms_{n}d": r["prefix_ours"]["p50_ms"] for n, r in rows.items()}
        | {
            f"exact_per_s_{max(a.days)}d": last["exact_ours"]["per_s"],
            f"record_p50_ms_{min(a.days)}d": first["record_ours"]["p50_ms"],
            f"record_p50_ms_{max(a.days)}d": last["record_ours"]["p50_ms"],
            "register_s": reg["seconds"] if reg else None,
        }
    )
    peers = {
        f"pywb_exact_per_s_{max(a.days)}d": last["exact_pywb"]["per_s"],
        f"duckdb_exact_per_s_{max(a.days)}d": last["exact_duckdb"]["per_s"],
        f"sqlite_record_p50_ms_{max(a.days)}d": last["record_sqlite"]["p50_ms"],
    }
    ratio = {
        f"exact_per_s_vs_pywb_{max(a.days)}d": round(last["exact_ours"]["per_s"] / last["exact_pywb"]["per_s"], 2),
        f"prefix_per_s_vs_pywb_{max(a.days)}d": round(last["prefix_ours"]["per_s"] / last["prefix_pywb"]["per_s"], 2),
    }
    shape = {
        "captures_a_day": len(caps),
        "urls": len(urls),
        "archives_a_day": len(ARCHIVES),
        "days": max(a.days),
        "captures": len(caps) * max(a.days),
    }
    path = write_result(
        "bench_cdx",
        figures,
        what="capture index URL look-ups (limit 10) and record-id look-ups as days accumulate; registering an archive",
        peer="pywb CDX server (FileIndexSource), DuckDB over per-day Parquet, SQLite",
        peers=peers,
        ratio=ratio,
        shape=shape,
        started=started,
        load_before=before,
        command="python -m benchmarks.bench_cdx " + " ".join(argv or []),
        details={"checkpoints": rows, "registration": reg},
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
