"""Hold this checkout's outputs against an earlier commit's, on the same inputs.

    python scripts/compare_outputs.py --base COMMIT [--work DIR] [--shared ../shared/corpus]

Both trees run preprocess, index and catalogue (with the URL database) on the same inputs,
read from the same paths (so archive URIs in the outputs agree): the demo's sample crawl
(``lib.warc.sample``, 2026-01-15) and a day holding every archive of the shared corpus. The
outputs are then compared file by file, byte for byte; Spark-written folders whose file names
carry a random id (the URL database) are compared by their rows, and the random run id in the
name of a URL database version (``v000001-<run id>``) is left out of paths and state files. Run
statistics (``_stats.json``, markers, the HTML report, the per-file logs), which hold times, are left out. Exit 0
when everything is the same.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pyarrow.dataset as ds

HERE = pathlib.Path(__file__).resolve().parents[1]
DAY = dt.date(2026, 1, 15)
# per-file logs (_part-*.log.gz beside each page file) hold the time they were written, as _stats.json does
SKIP = re.compile(
    r"(^|/)(_stats\.json|_SUCCESS|report\.html|_inputs\.json|_errors\.jsonl|\.lease.*|[^/]*\.crc|_part-[^/]*\.log\.gz)$"
)
RANDOM_NAMES = re.compile(r"part-\d+-[0-9a-f]{8}-")
RUN_ID_TEXT = re.compile(rb'"(v\d{6})-[0-9a-f]{12}"')  # the same, named in the URL database's state files
RUN_IDS = re.compile(r"(?<![^/])(v\d{6})-[0-9a-f]{12}(?=/|$)")  # a URL database version's folder: v000001-<run id>
# a capture index source's folder, day=<date>-<random id> (lib.catalogue.capindex.add_source), and its name in the state
SOURCE_IDS = re.compile(r"(?<![^/])(day=\d{4}-\d\d-\d\d)-[0-9a-f]{12}(?=/|$)")
SOURCE_ID_TEXT = re.compile(rb'"(day=\d{4}-\d\d-\d\d)-[0-9a-f]{12}"')
ARCHIVES = (".warc.gz", ".warc", ".arc.gz", ".arc", ".warc.zst", ".warc.lz4")


def run_pipeline(tree: pathlib.Path, inp: pathlib.Path, out: pathlib.Path) -> None:
    """The three jobs of one day, the code of ``tree``, local[2]."""
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(tree))
    day = ["--date", DAY.isoformat(), "--master", "local[2]"]
    warc = inp / "warc" / f"{DAY:%Y-%m}" / f"{DAY:%d}"
    pre, idx, cat = out / "preprocessed", out / "index", out / "catalogue"
    steps = [
        ["jobs.preprocess", "--input", str(warc), "--output", str(pre)],
        ["jobs.index", "--input", str(pre), "--output", str(idx), "--min-group-docs", "1"],
        [
            "jobs.catalogue",
            "--input",
            str(pre),
            "--output",
            str(cat),
            "--index",
            str(idx),
            "--urldb",
            str(out / "urldb"),
            "--warc-prefix",
            str(inp / "warc"),
        ],
    ]
    for module, *args in steps:
        r = subprocess.run(
            [sys.executable, "-m", module, *args, *day],
            cwd=tree,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if r.returncode not in (0, 3):
            sys.exit(f"{tree}: {module} exited {r.returncode}:\n{r.stderr[-3000:]}")


def files(root: pathlib.Path) -> dict[str, pathlib.Path]:
    """The output files by path, the random ids of a URL database version and of a capture index
    source left out of it."""
    return {
        SOURCE_IDS.sub(r"\1-ID", RUN_IDS.sub(r"\1-RUN", str(p.relative_to(root)))): p
        for p in sorted(root.rglob("*"))
        if p.is_file() and not SKIP.search(str(p.relative_to(root)))
    }


def rows(folder: pathlib.Path) -> list[tuple]:
    t = ds.dataset(str(folder), format="parquet", partitioning="hive", ignore_prefixes=["_", "."]).to_table()
    return sorted(tuple(str(v) for v in r.values()) for r in t.to_pylist())


def _masked(data: bytes) -> bytes:
    """A file's bytes with the random ids of URL database versions and capture index sources masked."""
    return SOURCE_ID_TEXT.sub(rb'"\1-ID"', RUN_ID_TEXT.sub(rb'"\1-RUN"', data))


def compare(a: pathlib.Path, b: pathlib.Path) -> list[str]:
    """What differs between two output trees ('' for nothing)."""
    fa, fb = files(a), files(b)
    by_rows = {str(pathlib.Path(k).parent) for k in (*fa, *fb) if RANDOM_NAMES.search(k)}
    diffs = []
    for folder in sorted(by_rows):
        where = [
            next((p.parent for k, p in f.items() if str(pathlib.Path(k).parent) == folder), None) for f in (fa, fb)
        ]
        if None in where:
            diffs.append(f"{folder}/: only in {'base' if where[0] else 'this checkout'}")
        elif rows(where[0]) != rows(where[1]):
            diffs.append(f"{folder}/: rows differ")
    plain = lambda f: {k: v for k, v in f.items() if str(pathlib.Path(k).parent) not in by_rows}  # noqa: E731
    pa_, pb_ = plain(fa), plain(fb)
    for k in sorted(set(pa_) ^ set(pb_)):
        diffs.append(f"{k}: only in {'base' if k in pa_ else 'this checkout'}")
    for k in sorted(set(pa_) & set(pb_)):
        if _masked(pa_[k].read_bytes()) != _masked(pb_[k].read_bytes()):
            diffs.append(f"{k}: bytes differ")
    return diffs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base", required=True, help="the commit to compare with")
    p.add_argument("--work", default=str(HERE / "benchmarks" / "work" / "compare"))
    p.add_argument("--shared", default=str(HERE.parent / "shared" / "corpus"))
    a = p.parse_args()
    work = pathlib.Path(a.work).resolve()
    base = work / "base-tree"
    if base.exists():
        subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=HERE, check=False)
    work.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), a.base], cwd=HERE, check=True)
    try:
        sys.path.insert(0, str(HERE))
        from lib.warc.sample import write_sample_crawl

        inputs = {"demo": work / "in" / "demo", "shared": work / "in" / "shared"}
        shutil.rmtree(work / "in", ignore_errors=True)
        write_sample_crawl(str(inputs["demo"]), DAY)
        day = inputs["shared"] / "warc" / f"{DAY:%Y-%m}" / f"{DAY:%d}"
        day.mkdir(parents=True)
        for f in sorted(pathlib.Path(a.shared).rglob("*")):
            if f.is_file() and f.name.lower().endswith(ARCHIVES):
                shutil.copy(f, day / f"{f.parent.name}-{f.name}")
        failed = 0
        for name, inp in inputs.items():
            for label, tree in (("base", base), ("head", HERE)):
                print(f"{name}: running the {label} tree ({tree})", file=sys.stderr, flush=True)
                run_pipeline(tree, inp, work / "out" / label / name)
            diffs = compare(work / "out" / "base" / name, work / "out" / "head" / name)
            n = len(files(work / "out" / "head" / name))
            print(f"{name}: {n} output files compared, {len(diffs)} differ" + "".join(f"\n  {d}" for d in diffs))
            failed += bool(diffs)
        return 1 if failed else 0
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=HERE, check=False)


if __name__ == "__main__":
    sys.exit(main())
