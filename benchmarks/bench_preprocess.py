"""Preprocess throughput and memory, in one run.

1. Builds >= 500 MB of compressed WARC from the real crawl samples (their gzip members,
   copied as-is, repeated) split into 8 files, plus one 100 MB and one 1 GB file.
2. Bare loop: one Python process reads, parses, extracts text and identifies the language
   of every record of the 8 files (lib.preprocess.archive_pages, no Spark) -> docs/s, MB/s.
3. The job: jobs/preprocess.py on local[2] over the same 8 files -> docs/s, MB/s, ratio.
4. Memory: the job over the 100 MB file and over the 1 GB file, each in a fresh
   ``spark-submit``-like process with 1 GB of driver/executor memory; peak RSS of the whole
   process tree (JVM + Python workers) sampled from /proc.

    python -m benchmarks.bench_preprocess [--work benchmarks/work] [--skip-memory]

``--cuts DAY`` measures instead what a day's cut costs: the job on ``DAY/small/warc`` (many small
archives) and on ``DAY/large/warc`` (the same records in few large ones), taking turns
``--repeat`` times, and prints the time ratio, the Parquet files written and whether both cuts
kept the same documents. ``--cuts corpus`` cuts ``--corpus`` itself: each ``.warc.gz`` split
into archives of ``--records-per-file`` gzip members (small), and all of them joined into one
(large); other archives go to both as they are. ``--job-root`` runs another checkout's job on
the same cuts (the figure before a change).
"""

from __future__ import annotations

import argparse
import glob
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time

from benchmarks import WORK as BENCH_WORK
from benchmarks import job_cmd
from benchmarks.common import write_result
from devtools.corpus_cuts import cut_corpus, day_shape, documents, page_files
from lib.warc.streams import GzipMembers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def real_members(corpus: str) -> list[bytes]:
    """Every gzip member holding a response record of the real .warc.gz samples."""
    out = []
    for path in sorted(glob.glob(os.path.join(corpus, "*", "*.warc.gz"))):
        with open(path, "rb") as f:
            data = f.read()
        for m in GzipMembers(io.BufferedReader(io.BytesIO(data))):
            head = m.read(2048)
            m.drain()
            if m.complete and b"WARC-Type: response" in head and b"text/html" in head.lower():
                out.append(data[m.offset : m.offset + m.length])
    return out


def build(path: str, members: list[bytes], size: int) -> None:
    if os.path.exists(path) and os.path.getsize(path) >= size:
        return
    with open(path + ".tmp", "wb") as f:
        n = 0
        while n < size:
            for m in members:
                f.write(m)
                n += len(m)
                if n >= size:
                    break
    os.replace(path + ".tmp", path)


def run_cuts(a: argparse.Namespace) -> None:
    if a.cuts == "corpus":
        small, large = cut_corpus(a.corpus, os.path.join(a.work, "cuts"), a.records_per_file)
    else:
        small, large = os.path.join(a.cuts, "small", "warc"), os.path.join(a.cuts, "large", "warc")
    job_root = os.path.abspath(a.job_root)
    env = dict(os.environ, PYTHONPATH=job_root)
    result: dict = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "job_root": job_root,
        "job_args": a.job_arg,
        "day": a.cuts,
        "shape": {"small": day_shape(small), "large": day_shape(large)},
        "seconds": {"small": [], "large": []},
    }
    with open("/proc/loadavg") as f:
        result["loadavg_before"] = f.read().split()[:3]
    outs = {}
    for _ in range(a.repeat):
        for cut, inp in (("small", small), ("large", large)):
            out = outs[cut] = os.path.join(a.work, f"cut-{cut}")
            shutil.rmtree(out, ignore_errors=True)
            cmd = [
                *job_cmd("preprocess", inp, out, 2, root=job_root),
                "--conf",
                "spark.driver.memory=2g",
                "--summary",
                os.path.join(a.work, f"summary-{cut}.json"),
                *a.job_arg,
            ]
            secs, _, rc = run_measured(cmd, env, job_root)
            assert rc in (0, 3), (cut, rc)  # 3: published, unhealthy (a day of damaged samples may be)
            result["seconds"][cut].append(round(secs, 1))
            print(cut, round(secs, 1), flush=True)
    with open("/proc/loadavg") as f:
        result["loadavg_after"] = f.read().split()[:3]
    best = {c: min(v) for c, v in result["seconds"].items()}
    files = {c: page_files(outs[c]) for c in outs}
    docs = {c: documents(outs[c]) for c in outs}
    same = sorted(set(files["small"]) & set(files["large"]))
    result.update(
        ratio=round(best["small"] / best["large"], 2),
        pages={c: len(d) for c, d in docs.items()},
        same_documents=docs["small"] == docs["large"],
        parquet_files={c: len(f) for c, f in files.items()},
        byte_identical_files=[p for p in same if files["small"][p] == files["large"][p]],
    )
    print(json.dumps(result, indent=1))
    write_result(
        "bench_preprocess",
        result,
        what="the job on one day in a many-small and a few-large cut of the same records",
        peer="the same job on the large cut",
        ratio={"small / large (time)": result["ratio"]},
        variant="cuts",
    )
    with open(os.path.join(a.work, "cuts.json"), "w") as f:
        json.dump(result, f, indent=1)


def tree_rss(pid: int) -> int:
    """RSS in bytes of ``pid`` and all its descendants."""
    children: dict[int, list[int]] = {}
    rss = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                parts = f.read().rsplit(")", 1)[1].split()
            ppid = int(parts[1])
            rss[int(d)] = int(parts[21]) * os.sysconf("SC_PAGE_SIZE")
            children.setdefault(ppid, []).append(int(d))
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack.extend(children.get(p, []))
    return total


def run_measured(cmd: list[str], env: dict | None = None, cwd: str = ROOT) -> tuple[float, int, int]:
    """(seconds, peak tree RSS, exit code) of a command (Spark's Python workers import from ``cwd`` first)."""
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    peak = 0
    stop = threading.Event()

    def sample():
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, tree_rss(proc.pid))
            time.sleep(0.5)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    _, err = proc.communicate()
    stop.set()
    th.join()
    if proc.returncode != 0:
        sys.stderr.write(err.decode(errors="replace")[-3000:])
    return time.time() - t0, peak, proc.returncode


def bare_loop(files: list[str]) -> tuple[float, int]:
    from lib.preprocess.archive_pages import FileProcessor

    t0 = time.time()
    docs = 0
    for path in files:
        proc = FileProcessor(path)
        with open(path, "rb") as f:
            for _ in proc.pages(f):
                docs += 1
    return time.time() - t0, docs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=os.path.join(BENCH_WORK, "preprocess"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    ap.add_argument("--total-mb", type=int, default=512)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--cuts", metavar="DAY", help="time the job on DAY's small and large cuts ('corpus': cut --corpus)")
    ap.add_argument("--records-per-file", type=int, default=3, help="--cuts corpus: gzip members per small archive")
    ap.add_argument("--repeat", type=int, default=2, help="--cuts: runs of each cut, taking turns (best counts)")
    ap.add_argument("--job-arg", action="append", default=[], help="--cuts: one more argument for the job")
    ap.add_argument("--job-root", default=ROOT, help="--cuts: the checkout whose jobs/preprocess.py runs")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    if a.cuts:
        return run_cuts(a)
    members = real_members(a.corpus)
    print(f"{len(members)} real response members, {sum(map(len, members)) / 1e6:.1f} MB", flush=True)
    day = os.path.join(a.work, "day")
    os.makedirs(day, exist_ok=True)
    per = a.total_mb * 1_000_000 // a.files
    files = []
    for i in range(a.files):
        p = os.path.join(day, f"part-{i}.warc.gz")
        build(p, members[i:] + members[:i], per)
        files.append(p)
    total = sum(os.path.getsize(p) for p in files)
    result: dict = {
        "machine": f"{platform.node()} {os.cpu_count()} cores, {platform.processor() or platform.machine()}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "input_mb": round(total / 1e6, 1),
        "files": len(files),
    }
    with open("/proc/loadavg") as f:
        result["loadavg_before"] = f.read().split()[:3]

    secs, docs = bare_loop(files)
    result["bare"] = {
        "seconds": round(secs, 1),
        "docs": docs,
        "docs_per_s": round(docs / secs, 1),
        "mb_per_s": round(total / 1e6 / secs, 2),
    }
    print("bare loop", result["bare"], flush=True)

    out = os.path.join(a.work, "out")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        *job_cmd("preprocess", day, out, 2),
        "--conf",
        "spark.driver.memory=2g",
        "--summary",
        os.path.join(a.work, "summary.json"),
    ]
    secs, peak, rc = run_measured(cmd)
    with open(os.path.join(a.work, "summary.json")) as f:
        s = json.load(f)
    assert rc == 0 and s["pages_kept"] == docs, (rc, s.get("pages_kept"), docs)
    result["job"] = {
        "seconds": round(secs, 1),
        "docs": s["pages_kept"],
        "docs_per_s": round(docs / secs, 1),
        "mb_per_s": round(total / 1e6 / secs, 2),
        "peak_rss_mb": peak >> 20,
        "speedup_vs_bare": round(result["bare"]["seconds"] / secs, 2),
    }
    print("job local[2]", result["job"], flush=True)

    if not a.skip_memory:
        result["memory"] = {}
        for label, size in (("100MB", 100_000_000), ("1GB", 1_000_000_000)):
            d = os.path.join(a.work, f"mem-{label}")
            os.makedirs(d, exist_ok=True)
            build(os.path.join(d, "one.warc.gz"), members, size)
            o = os.path.join(a.work, f"out-{label}")
            shutil.rmtree(o, ignore_errors=True)
            cmd = [
                *job_cmd("preprocess", d, o, 1),
                "--conf",
                "spark.driver.memory=1g",
                "--conf",
                "spark.python.worker.memory=256m",
            ]
            secs, peak, rc = run_measured(cmd)
            result["memory"][label] = {
                "file_mb": round(size / 1e6),
                "seconds": round(secs, 1),
                "peak_rss_mb": peak >> 20,
                "exit": rc,
            }
            print("memory", label, result["memory"][label], flush=True)
    with open("/proc/loadavg") as f:
        result["loadavg_after"] = f.read().split()[:3]
    print(json.dumps(result, indent=1))
    write_result(
        "bench_preprocess",
        result,
        what="jobs/preprocess.py against one bare loop process on the same WARC files; peak RSS",
        peer="our own bare loop (lib.preprocess.archive_pages, one process)",
    )
    with open(os.path.join(a.work, "result.json"), "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
