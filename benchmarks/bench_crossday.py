"""CPU of the near-duplicate lookup across days (lib.neardup.crossday, docs/dedup.md "Across days")
for 1 and for N kept days, on the same day: does it grow with the day or with N? And the CPU of the
signature store's commits (their merges of key runs), per commit over the N days' commits.

The day is the shared corpus preprocessed here (real signatures; ``--extra M`` adds M pages of
random signatures, so the key files have a real day's size). Kept day 1 holds the day's own
representatives (every one is found again: the matches, the same for every N); kept days 2..N
hold the same pages with their signatures scrambled per day (the same sizes, nothing matches).
The lookup (every store partition), the day's store write and every commit (with its merge, in
process) run in this process; the share is of the preprocess tasks' CPU of the same day (the extra
pages counted at the real pages' CPU each).

    python -m benchmarks.bench_crossday [--extra M] [--days 1 8 30 60]
"""

import argparse
import datetime as dt
import json
import os
import pathlib
import shutil
import tempfile
import time

import numpy as np
import pyarrow as pa
from pyspark.sql import SparkSession

from benchmarks.bench_dedup_jobs import clusters_in_process
from benchmarks.common import load, write_result
from jobs import preprocess
from lib.index.invert import write_arrow
from lib.index.page_files import input_files
from lib.neardup import clusters, crossday, day_clusters, sigstore

PARTS = sigstore.DEFAULT_PARTS
TODAY = dt.date(2026, 3, 1)


def _clusters(work: str, files: list[str], st: day_clusters.Settings) -> str:
    """The within-day steps in this process; the dup_cluster mapping's path."""
    _, _, _, reps = clusters_in_process(work, files, st)
    moved = sorted((r, rep) for r, rep in reps.items() if r != rep)
    path = os.path.join(work, day_clusters.MAPPING)
    write_arrow(path, pa.table({"record_id": [m[0] for m in moved], "dup_cluster": [m[1] for m in moved]}))
    return path


def _add_sigs(work: str, t: int, sigs: np.ndarray, prefix: str) -> None:
    """A ``sigs`` file ``t`` of the given signatures and its band keys by store partition."""
    n = sigs.shape[0]
    tab = pa.table(
        [
            pa.array([f"{prefix}-{i}" for i in range(n)]),
            pa.array(["2026-03-01T00:00:00Z"] * n),
            pa.array([1000] * n, pa.int64()),
            pa.array([s.tobytes() for s in sigs], pa.binary()),
            pa.array([f"https://{prefix}.example/{i}" for i in range(n)]),
        ],
        schema=day_clusters.SIGS_SCHEMA,
    )
    write_arrow(day_clusters.sigs_path(work, t), tab)
    keys = clusters.band_matrix(sigs).ravel()
    day_clusters._write_parts(work, t, keys, np.repeat(np.arange(n, dtype=np.int32), 16), PARTS, "xkeys")


def _store(work: str, store: str, day: str, mapping: str, window: int, dup_of: str = "") -> tuple[float, float, int]:
    """The day's store write (both stages, every partition) and its commit: the CPU seconds of the
    write, of the commit (with its merge of runs) and the keys the merge rewrote."""
    c0 = time.process_time()
    folder = os.path.join(store, sigstore.day_folder(day, "0" * 12))
    os.makedirs(os.path.join(work, "remap"), exist_ok=True)
    moved, earlier = crossday.load_dup_clusters(mapping), crossday.load_dup_of(dup_of)
    for t in crossday._runs(work):
        crossday.store_run(work, folder, t, day, moved, earlier)
    keys = crossday.store_keys(work, folder, list(range(PARTS)))
    c1 = time.process_time()
    before = {r["name"] for r in sigstore.runs(sigstore.read_state(store))}
    with sigstore.lock(store, "bench", 60):
        state = sigstore.commit(store, day, folder, window, {"parts": PARTS, "bands": 16, "perms": 128}, keys)
    new = [r for r in state["runs"] if r["name"] not in before | {os.path.basename(folder)}]  # the merged run
    return c1 - c0, time.process_time() - c1, sum(sum(r["days"].values()) for r in new)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--extra", type=int, default=0, help="pages of random signatures added to the day")
    ap.add_argument("--days", type=int, nargs="+", default=[1, 8, 30, 60], help="kept days to measure with")
    args = ap.parse_args()
    started, load_before = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), load()
    results = {}
    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    tmp = pathlib.Path(tempfile.mkdtemp())
    warc = tmp / "warc"
    corpus = os.environ.get("DAILYSLICE_SHARED", os.path.join(os.path.dirname(__file__), "..", "..", "shared"))
    shutil.copytree(os.path.join(corpus, "corpus"), warc, ignore=shutil.ignore_patterns("*.md"))
    summ = tmp / "summary.json"
    preprocess.main(["--input", str(warc), "--output", str(tmp / "pre"), "--summary", str(summ)], spark=spark)
    spark.stop()
    s = json.loads(summ.read_text())
    task_cpu, pages = s["task_timing"]["task_cpu"], s["pages_kept"]
    st = day_clusters.Settings(store_parts=PARTS)
    base = str(tmp / "base")  # the real pages only: kept day 1
    mapping = _clusters(base, [f[0] for f in input_files(str(tmp / "pre"))], st)
    work = str(tmp / "day")  # the day looked up: the real pages and the extra ones
    shutil.copytree(base, work)
    rng = np.random.default_rng(1)
    if args.extra:
        _add_sigs(work, 1, rng.integers(0, 2**32, (args.extra, 128), dtype=np.uint32), "extra")
    judged = sum(sigstore.read_arrow(day_clusters.sigs_path(work, t)).num_rows for t in crossday._runs(work))
    night = task_cpu / pages * (pages + args.extra)  # the extra pages at the real pages' preprocess CPU each
    day_keys = sum(crossday._day_keys(work, q)["key"].size for q in range(PARTS))
    print(
        f"day: pages {pages} judged {judged} (extra {args.extra}) keys {day_keys}; "
        f"preprocess task_cpu {task_cpu:.2f} s (day: {night:.1f} s)"
    )
    window = max(args.days) + 1  # every kept day of the largest N stays while the day is looked up
    for n in args.days:
        store = str(tmp / f"store{n}")
        first = (TODAY - dt.timedelta(days=n)).isoformat()
        commits = [_store(base, store, first, mapping, window)]  # kept day 1: the day's real pages
        for k in range(1, n):  # kept days 2..n: the same sizes, scrambled
            other = str(tmp / f"other{n}-{k}")
            for t in crossday._runs(work):
                sig = sigstore.read_arrow(day_clusters.sigs_path(work, t)).column("sig").to_pylist()
                mat = np.frombuffer(b"".join(sig), "<u4").reshape(len(sig), -1)
                _add_sigs(other, t, mat ^ rng.integers(1, 2**32, 128, dtype=np.uint32), f"d{k}-t{t}")
            empty = os.path.join(other, "none.arrow")
            write_arrow(empty, day_clusters.MAPPING_SCHEMA.empty_table())
            commits.append(_store(other, store, (TODAY - dt.timedelta(days=n - k)).isoformat(), empty, window))
            shutil.rmtree(other)
        state = sigstore.read_state(store)
        allowed = {f for _, f in sigstore.window(state, TODAY.isoformat(), n)}
        runs = [r for r in sigstore.runs(state) if allowed.intersection(r["days"])]
        for f in ("xmatch", "remap"):
            shutil.rmtree(os.path.join(work, f), ignore_errors=True)
        c0, w0 = time.process_time(), time.perf_counter()
        r = crossday.lookup_partitions(work, 0, list(range(PARTS)), store, runs, allowed, st)
        found = sigstore.read_arrow(os.path.join(work, "xmatch", "0.arrow")).to_pydict()
        best = sigstore.earliest(found)
        lookup_cpu, lookup_wall = time.process_time() - c0, time.perf_counter() - w0
        dup_of = os.path.join(work, "dup_of.arrow")
        rids = sorted(best)
        write_arrow(
            dup_of,
            pa.table(
                {"record_id": rids, "dup_of_day": [best[x][0] for x in rids], "dup_of": [best[x][1] for x in rids]}
            ),
        )
        key_bytes = sum(
            os.path.getsize(os.path.join(store, x["name"], "keys", f))
            for x in runs
            for f in os.listdir(os.path.join(store, x["name"], "keys"))
        )
        write_cpu, commit_cpu, _ = today = _store(work, store, TODAY.isoformat(), mapping, window, dup_of)
        commits.append(today)
        mean_commit = sum(c[1] for c in commits) / len(commits)
        mean_rewritten = sum(c[2] for c in commits) / len(commits)
        print(
            f"N={n}: kept days {len(allowed)} in {len(runs)} runs ({key_bytes / 1e6:.1f} MB of keys), matches "
            f"{r['matches']}, with dup_of {len(best)}; lookup cpu {lookup_cpu:.3f} s (wall {lookup_wall:.3f}), "
            f"store write cpu {write_cpu:.3f} s, commit cpu {commit_cpu:.3f} s (mean over the {len(commits)} "
            f"commits {mean_commit:.3f} s, {mean_rewritten:.0f} keys rewritten per commit); share of the day's "
            f"preprocess CPU {100 * (lookup_cpu + write_cpu + mean_commit) / night:.2f}%"
        )
        results[n] = {
            "runs": len(runs),
            "key_mb": round(key_bytes / 1e6, 1),
            "matches": r["matches"],
            "lookup_cpu_s": round(lookup_cpu, 3),
            "lookup_wall_s": round(lookup_wall, 3),
            "store_write_cpu_s": round(write_cpu, 3),
            "commit_cpu_s": round(commit_cpu, 3),
            "commit_cpu_mean_s": round(mean_commit, 3),
            "rewritten_keys_per_commit": round(mean_rewritten),
            "share_of_preprocess_cpu_pct": round(100 * (lookup_cpu + write_cpu + mean_commit) / night, 2),
        }
        shutil.rmtree(store)
    shutil.rmtree(tmp, ignore_errors=True)
    write_result(
        "bench_crossday",
        {f"N={n} {k}": v for n, r in results.items() for k, v in r.items() if k != "matches"},
        what="the near-duplicate lookup across days (dup_of) through the store's merged key runs, the day's "
        "store write and the commits (merges of runs), for 1 and N kept days, on the same day: CPU against the "
        "day's preprocess task CPU",
        peer="the preprocess job's own task CPU on the same day (the share is of that)",
        ratio={f"N={n} share of preprocess CPU %": r["share_of_preprocess_cpu_pct"] for n, r in results.items()},
        shape={
            "pages": pages,
            "judged": judged,
            "extra_random_pages": args.extra,
            "day_keys": day_keys,
            "day_preprocess_cpu_s": round(night, 1),
        },
        details={"matches": {n: r["matches"] for n, r in results.items()}},
        started=started,
        load_before=load_before,
    )


if __name__ == "__main__":
    main()
