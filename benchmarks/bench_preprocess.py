"""Preprocess throughput and memory, in one run.

1. Builds >= 500 MB of compressed WARC from the real crawl samples (their gzip members,
   copied as-is, repeated) split into 8 files, plus one 100 MB and one 1 GB file.
2. Bare loop: one Python process reads, parses, extracts text and identifies the language
   of every record of the 8 files (lib.preprocess.pages, no Spark) -> docs/s, MB/s.
3. The job: jobs/preprocess.py on local[2] over the same 8 files -> docs/s, MB/s, ratio.
4. Memory: the job over the 100 MB file and over the 1 GB file, each in a fresh
   ``spark-submit``-like process with 1 GB of driver/executor memory; peak RSS of the whole
   process tree (JVM + Python workers) sampled from /proc.

    python -m benchmarks.bench_preprocess [--work benchmarks/work] [--skip-memory]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

from benchmarks import WORK as BENCH_WORK  # noqa: E402
from lib.warc.streams import GzipMembers  # noqa: E402


def real_members(corpus: str) -> list[bytes]:
    """Every gzip member holding a response record of the real .warc.gz samples."""
    out = []
    for path in sorted(glob.glob(os.path.join(corpus, "*", "*.warc.gz"))):
        with open(path, "rb") as f:
            data = f.read()
        import io

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


def run_measured(cmd: list[str], env: dict | None = None) -> tuple[float, int, int]:
    """(seconds, peak tree RSS, exit code) of a command."""
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
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
    from lib.preprocess.pages import FileProcessor

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
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
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
    result: dict = {"machine": f"{platform.node()} {os.cpu_count()} cores, {platform.processor() or platform.machine()}",
                    "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "input_mb": round(total / 1e6, 1),
                    "files": len(files)}
    with open("/proc/loadavg") as f:
        result["loadavg_before"] = f.read().split()[:3]

    secs, docs = bare_loop(files)
    result["bare"] = {"seconds": round(secs, 1), "docs": docs, "docs_per_s": round(docs / secs, 1),
                      "mb_per_s": round(total / 1e6 / secs, 2)}
    print("bare loop", result["bare"], flush=True)

    out = os.path.join(a.work, "out")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "jobs/preprocess.py", "--input", day, "--output", out, "--master", "local[2]",
           "--conf", "spark.driver.memory=2g", "--summary", os.path.join(a.work, "summary.json")]
    secs, peak, rc = run_measured(cmd)
    with open(os.path.join(a.work, "summary.json")) as f:
        s = json.load(f)
    assert rc == 0 and s["pages_kept"] == docs, (rc, s.get("pages_kept"), docs)
    result["job"] = {"seconds": round(secs, 1), "docs": s["pages_kept"], "docs_per_s": round(docs / secs, 1),
                     "mb_per_s": round(total / 1e6 / secs, 2), "peak_rss_mb": peak >> 20,
                     "speedup_vs_bare": round(result["bare"]["seconds"] / secs, 2)}
    print("job local[2]", result["job"], flush=True)

    if not a.skip_memory:
        result["memory"] = {}
        for label, size in (("100MB", 100_000_000), ("1GB", 1_000_000_000)):
            d = os.path.join(a.work, f"mem-{label}")
            os.makedirs(d, exist_ok=True)
            build(os.path.join(d, "one.warc.gz"), members, size)
            o = os.path.join(a.work, f"out-{label}")
            shutil.rmtree(o, ignore_errors=True)
            cmd = [sys.executable, "jobs/preprocess.py", "--input", d, "--output", o, "--master", "local[1]",
                   "--conf", "spark.driver.memory=1g", "--conf", "spark.python.worker.memory=256m"]
            secs, peak, rc = run_measured(cmd)
            result["memory"][label] = {"file_mb": round(size / 1e6), "seconds": round(secs, 1), "peak_rss_mb": peak >> 20, "exit": rc}
            print("memory", label, result["memory"][label], flush=True)
    with open("/proc/loadavg") as f:
        result["loadavg_after"] = f.read().split()[:3]
    print(json.dumps(result, indent=1))
    with open(os.path.join(a.work, "result.json"), "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
