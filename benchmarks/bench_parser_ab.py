"""Per-record preprocess cost, before and after a change, in one invocation.

Runs the bare loop (``lib.preprocess.archive_pages.FileProcessor`` over every record, no Spark) with this
checkout's code and with a baseline commit's code (checked out to a temporary git worktree),
alternating the two ``--rounds`` times in fresh processes on the same files, and prints each
rate, the medians and the ratio. Rates are per CPU second of the loop's process (one core), so
that other work on a shared machine disturbs them less than wall time; wall time is printed too. The input is
the real crawl samples (``../shared/corpus``),
where old and new code keep the same pages, so the ratio is the cost of the same work; with
``--inputs all`` the conformance corpus too (where the new code keeps more). Each file is read
``--repeat`` times.

    python -m benchmarks.bench_parser_ab --baseline c5ded4b [--rounds 5] [--repeat 20] [--inputs all]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks.common import write_result

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

LOOP = r"""
import importlib, json, os, sys, time
# lib/pages.py became lib/preprocess/pages.py in 17f3a20, then lib/preprocess/archive_pages.py; pick this
# checkout's own (the installed editable finder would otherwise resolve a missing module to the current checkout)
_names = [
    ("lib/preprocess/archive_pages.py", "lib.preprocess.archive_pages"),
    ("lib/preprocess/pages.py", "lib.preprocess.pages"),
]
mod = importlib.import_module(next((m for f, m in _names if os.path.exists(f)), "lib.pages"))
assert os.path.realpath(mod.__file__).startswith(os.path.realpath(os.getcwd()) + os.sep), mod.__file__
FileProcessor = mod.FileProcessor
files, repeat = json.loads(sys.argv[1]), int(sys.argv[2])
t0, c0 = time.perf_counter(), time.process_time()
records = pages = 0
for _ in range(repeat):
    for path in files:
        proc = FileProcessor(path)
        with open(path, "rb") as f:
            pages += sum(1 for _ in proc.pages(f))
        records += proc.stats.read
print(json.dumps({"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                  "records": records, "pages": pages}))
"""


def input_files(which: str) -> list[str]:
    out = []
    bases = [os.path.join(os.path.dirname(ROOT), "shared", "corpus")]
    if which == "all":
        bases.append(os.path.join(ROOT, "tests", "data", "conformance"))
    for base in bases:
        for d, _, names in os.walk(base):
            out += [os.path.join(d, n) for n in names if ".warc" in n.lower() or ".arc" in n.lower()]
    return sorted(out)


def run(code_root: str, files: list[str], repeat: int) -> dict:
    env = dict(os.environ, PYTHONPATH=code_root)
    out = subprocess.run(
        [sys.executable, "-c", LOOP, json.dumps(files), str(repeat)],
        cwd=code_root,
        env=env,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"the loop failed in {code_root} ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--baseline", required=True, help="git commit to compare with (e.g. the one before a change)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=20, help="times each file is read per run")
    p.add_argument("--inputs", choices=("shared", "all"), default="shared")
    args = p.parse_args()
    files = input_files(args.inputs)
    base = tempfile.mkdtemp(prefix="bench-ab-")
    wt = os.path.join(base, "baseline")
    subprocess.run(["git", "worktree", "add", "--detach", "-q", wt, args.baseline], cwd=ROOT, check=True)
    try:
        print(
            f"{platform.node()} {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
            f"load {os.getloadavg()[0]:.2f}; {len(files)} files x {args.repeat}",
            flush=True,
        )
        rates: dict[str, list[float]] = {"baseline": [], "this": []}
        for i in range(args.rounds):
            for label, root in (("baseline", wt), ("this", ROOT)) if i % 2 == 0 else (("this", ROOT), ("baseline", wt)):
                r = run(root, files, args.repeat)
                rate = r["records"] / r["cpu"]
                rates[label].append(rate)
                print(
                    f"round {i + 1} {label:8s}: {r['records']} records, {r['pages']} pages in {r['cpu']:.2f} CPU s "
                    f"({r['seconds']:.2f} s wall) = {rate:,.0f} records/CPU s ({r['pages'] / r['cpu']:,.0f} "
                    "pages/CPU s)",
                    flush=True,
                )
        mb, mt = statistics.median(rates["baseline"]), statistics.median(rates["this"])
        print(
            f"median records/CPU s: baseline {mb:,.0f}, this {mt:,.0f}; this/baseline = {mt / mb:.3f} "
            f"(pairs: {', '.join(f'{t / b:.3f}' for t, b in zip(rates['this'], rates['baseline']))}); "
            f"load {os.getloadavg()[0]:.2f}"
        )
        write_result(
            "bench_parser_ab",
            {
                "this_records_per_cpu_s": round(mt),
                "pairs": [round(t / b, 3) for t, b in zip(rates["this"], rates["baseline"])],
            },
            what="the bare preprocess loop with this tree's WARC parser against an earlier commit's",
            peer=f"the tree of {args.baseline}",
            peers={"baseline_records_per_cpu_s": round(mb)},
            ratio={"this / baseline (records per CPU s, medians)": round(mt / mb, 3)},
            shape={"files": len(files), "inputs": args.inputs, "repeat": args.repeat, "rounds": args.rounds},
        )
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", wt], cwd=ROOT, check=False)
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
