"""Benchmark ``lib.store.storage`` against ``pyarrow.fs`` on real WARC bytes, local and on S3.

    python -m benchmarks.bench_storage [--mb 256] [--files 400] [--ranges 2000] [--repeat 3] [--no-s3]
    python -m benchmarks.bench_storage --day real [--copies 10] [--corpus DIR] [--ranges 2000] ...

Builds under benchmarks/work/storage/: one ``--mb`` MB file of the shared corpus' archives
repeated, and ``--files`` copies of those archives in 20 folders. With ``--day real``, the input
is the real-shaped day of devtools/realday.py instead (hard-linked, not copied): its small cut
(hundreds of archives of 11 KB to 2 MB at ``--copies 10``: a real day's input folder, as a
collection rotated by size writes it) is the folder listed, streamed and published, and its
large cut's archive (the same records in one file) the big file; the day's shape is printed.
Then, per operation, the
median wall and CPU time (all threads of this process) of three ways of doing it:

- **ours**: the ``storage`` function the jobs call;
- **before**: for what ``storage`` moved onto ``pyarrow.fs`` (the local publish), the
  standard-library code it ran before (``shutil.copytree``), so a slower ``ours`` shows here;
- **arrow**: ``pyarrow.fs`` itself (``LocalFileSystem``; ``S3FileSystem`` on the same server).

Operations: list the small files; stream each small file and the big file in 1 MiB reads; ``--ranges`` reads of
16 KiB at random offsets of the big file (``storage.read_range`` opens per read, as the extract
job's record copy does; Arrow's handle is opened once, its best case); publish the small files'
folder (``upload_tree``; Arrow: ``copy_files``). The S3 part starts SeaweedFS on loopback
(``devtools.seaweed``, the test extra) unless ``--no-s3``. Prints a Markdown table and the ratios.
"""

from __future__ import annotations

import argparse
import glob
import os
import pathlib
import platform
import random
import shutil
from typing import Callable

import pyarrow.fs as pafs

from benchmarks import WORK as BENCH_WORK
from benchmarks.common import load, timed, write_result
from lib.store import s3, storage

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORK = BENCH_WORK / "storage"
CORPUS = ROOT.parent / "shared" / "corpus"
CHUNK = 1 << 20
RANGE = 16 << 10


def build(mb: int, files: int) -> tuple[pathlib.Path, pathlib.Path]:
    """The big file and the folder of small files, from the shared corpus' archives."""
    shutil.rmtree(WORK, ignore_errors=True)
    archives = sorted(
        p
        for p in glob.glob(str(CORPUS / "**" / "*"), recursive=True)
        if os.path.isfile(p) and (".warc" in p or p.endswith((".arc.gz", ".arc")))
    )
    if not archives:
        raise SystemExit(f"no archives under {CORPUS}: the shared corpus must sit beside the checkout")
    blobs = [pathlib.Path(p).read_bytes() for p in archives]
    big = WORK / "big.warc.gz"
    small = WORK / "small"
    big.parent.mkdir(parents=True)
    with open(big, "wb") as f:
        i = 0
        while f.tell() < mb << 20:
            f.write(blobs[i % len(blobs)])
            i += 1
    for i in range(files):
        d = small / f"f{i % 20:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"part-{i:05d}.warc.gz").write_bytes(blobs[i % len(blobs)])
    (small / "_SUCCESS").write_bytes(b"")
    return big, small


def build_real(copies: int, corpus: str) -> tuple[pathlib.Path, pathlib.Path, str]:
    """(big file, folder of small files, shape line) from the real-shaped day: the small cut's
    archives and the large cut's biggest archive, hard-linked under WORK."""
    from devtools import realday

    rd = realday.shared_day(copies, corpus)
    shutil.rmtree(WORK, ignore_errors=True)
    small = WORK / "small"
    for p in rd["files"]["small"]:
        dest = small / os.path.relpath(p, rd["small"])
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.link(p, dest)
    (small / "_SUCCESS").write_bytes(b"")
    big = WORK / "big.warc.gz"
    os.link(max(rd["files"]["large"], key=os.path.getsize), big)
    return big, small, realday.cut_line(rd["shape"], "small")


def drain(f) -> int:
    n = 0
    while True:
        b = f.read(CHUNK)
        if not b:
            return n
        n += len(b)


Cases = dict[str, dict[str, Callable]]


def local_cases(big: pathlib.Path, small: pathlib.Path, offsets: list[int]) -> tuple[Cases, dict[str, str]]:
    """The local operations, and where each way publishes to."""
    fs = pafs.LocalFileSystem()
    dest = WORK / "published"

    def arrow_ranges() -> None:
        with fs.open_input_file(str(big)) as f:
            for o in offsets:
                f.read_at(RANGE, o)

    def before_publish() -> None:
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(small, dest, ignore=shutil.ignore_patterns("_SUCCESS"))

    def arrow_publish() -> None:
        shutil.rmtree(dest, ignore_errors=True)
        pafs.copy_files(str(small), str(dest), source_filesystem=fs, destination_filesystem=fs, use_threads=True)

    def arrow_list() -> None:
        fs.get_file_info(pafs.FileSelector(str(small), recursive=True))

    paths = sorted(str(p) for p in small.rglob("*.warc.gz"))
    return {
        "list": {"ours": lambda: storage.list_files(str(small)), "arrow": arrow_list},
        "exists": {"ours": lambda: [storage.exists(p) for p in paths], "arrow": lambda: fs.get_file_info(paths)},
        "stream small": {
            "ours": lambda: [drain(storage.open_stream(p)) for p in paths],
            "arrow": lambda: [drain(fs.open_input_stream(p, compression=None, buffer_size=CHUNK)) for p in paths],
        },
        "stream": {
            "ours": lambda: drain(storage.open_stream(str(big))),
            "arrow": lambda: drain(fs.open_input_stream(str(big), compression=None, buffer_size=CHUNK)),
        },
        "ranges": {"ours": lambda: [storage.read_range(str(big), o, RANGE) for o in offsets], "arrow": arrow_ranges},
        "publish": {
            "ours": lambda: storage.upload_tree(str(small), str(dest)),
            "before": before_publish,
            "arrow": arrow_publish,
        },
    }, {"ours": str(dest), "before": str(dest), "arrow": str(dest)}


def s3_cases(big: pathlib.Path, small: pathlib.Path, offsets: list[int], bucket: str) -> tuple[Cases, dict[str, str]]:
    """The S3 operations on SeaweedFS, and where each way publishes to."""
    endpoint = os.environ["AWS_ENDPOINT_URL"]
    scheme, host = endpoint.split("://", 1)
    fs = pafs.S3FileSystem(
        endpoint_override=host,
        scheme=scheme,
        region=os.environ["AWS_DEFAULT_REGION"],
        access_key=os.environ["AWS_ACCESS_KEY_ID"],
        secret_key=os.environ["AWS_SECRET_ACCESS_KEY"],
    )
    storage.upload_tree(str(big.parent / "bigdir"), f"s3://{bucket}/big")
    key = f"{bucket}/big/{big.name}"
    rels = sorted(str(p.relative_to(small)) for p in small.rglob("*.warc.gz"))

    def arrow_ranges() -> None:
        with fs.open_input_file(key) as f:
            for o in offsets:
                f.read_at(RANGE, o)

    def arrow_publish() -> None:
        pafs.copy_files(
            str(small),
            f"{bucket}/arrow",
            source_filesystem=pafs.LocalFileSystem(),
            destination_filesystem=fs,
            use_threads=True,
        )

    return {
        "list": {
            "ours": lambda: storage.list_files(f"s3://{bucket}/small"),
            "arrow": lambda: fs.get_file_info(pafs.FileSelector(f"{bucket}/small", recursive=True)),
        },
        "stream small": {
            "ours": lambda: [drain(storage.open_stream(f"s3://{bucket}/small/{r}")) for r in rels],
            "arrow": lambda: [
                drain(fs.open_input_stream(f"{bucket}/small/{r}", compression=None, buffer_size=CHUNK)) for r in rels
            ],
        },
        "stream": {
            "ours": lambda: drain(storage.open_stream(f"s3://{key}")),
            "arrow": lambda: drain(fs.open_input_stream(key, compression=None, buffer_size=CHUNK)),
        },
        "ranges": {
            "ours": lambda: [storage.read_range(f"s3://{key}", o, RANGE) for o in offsets],
            "arrow": arrow_ranges,
        },
        "publish": {"ours": lambda: storage.upload_tree(str(small), f"s3://{bucket}/small"), "arrow": arrow_publish},
    }, {"ours": f"s3://{bucket}/small", "arrow": f"s3://{bucket}/arrow"}


def missing(want: dict[str, int], dest: str) -> int:
    """Files of ``want`` (path below the folder: size) absent from ``dest`` or of another size there."""
    got = {f.uri.split(dest.rstrip("/").split("://")[-1] + "/", 1)[-1]: f.size for f in storage.list_files(dest)}
    return sum(1 for rel, size in want.items() if got.get(rel) != size)


def run(side: str, cases: Cases, published: dict[str, str], want: dict[str, int], repeat: int) -> dict:
    """Time every way of every operation and print one Markdown row per operation; the median wall
    seconds by "side op" and way, and the files each way's publish lost."""
    out = {}
    for op, ways in cases.items():
        got, lost = {}, {}
        for way, fn in ways.items():
            got[way] = timed(fn, repeat)[:2]
            if op == "publish":  # a copy that drops files without an error is not a faster copy
                lost[way] = missing(want, published[way])
        if lost.get("ours"):
            raise SystemExit(f"{side} {op}: our publish lost {lost['ours']} files")
        ours = got["ours"]
        cells = [
            (
                f"{got[w][0]:.3f} s ({got[w][1]:.3f} CPU)"
                + (f", **{lost[w]} of {len(want)} files missing, no error raised**" if lost.get(w) else "")
            )
            if w in got
            else "-"
            for w in ("ours", "before", "arrow")
        ]
        ratios = [f"{ours[0] / got[w][0]:.2f}" if w in got else "-" for w in ("before", "arrow")]
        print(f"| {side} | {op} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |", flush=True)
        out[f"{side} {op}"] = {w: round(got[w][0], 3) for w in got} | {
            f"{w} lost files": n for w, n in lost.items() if n
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=256, help="size of the big file (MB)")
    ap.add_argument("--files", type=int, default=400, help="number of small files")
    ap.add_argument("--ranges", type=int, default=2000, help="ranged reads per round")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-s3", action="store_true", help="local side only (no SeaweedFS)")
    ap.add_argument(
        "--day",
        choices=["synthetic", "real"],
        default="synthetic",
        help="real: the real-shaped day's small cut and large archive instead of --mb/--files",
    )
    ap.add_argument("--copies", type=int, default=10, help="copies of the real samples (--day real)")
    ap.add_argument("--corpus", default=str(CORPUS), help="the real samples (default ../shared/corpus)")
    a = ap.parse_args(argv)
    shape = ""
    if a.day == "real":
        big, small, shape = build_real(a.copies, a.corpus)
    else:
        big, small = build(a.mb, a.files)
    nsmall = sum(1 for _ in small.rglob("*.warc.gz"))
    rng = random.Random(7)
    offsets = [rng.randrange(0, big.stat().st_size - RANGE) for _ in range(a.ranges)]
    print(
        f"{platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}, load "
        f"{os.getloadavg()[0]:.2f} at start; {big.stat().st_size / 1e6:.1f} MB big file, {nsmall} small files, "
        f"{a.ranges} ranges of {RANGE >> 10} KiB, median of {a.repeat}"
    )
    if shape:
        print(f"Day (the small files): {shape}; the big file: the large cut's archive, the same records")
    print(
        "| side | operation | ours | before (stdlib) | pyarrow.fs | ours / before | ours / pyarrow.fs |\n"
        "|---|---|---|---|---|---|---|"
    )
    want = {str(p.relative_to(small)): p.stat().st_size for p in small.rglob("*.warc.gz")}
    load0, figures = load(), run("local", *local_cases(big, small, offsets), want, a.repeat)
    if not a.no_s3:
        from devtools.seaweed import SeaweedS3  # the test extra's server

        (big.parent / "bigdir").mkdir()
        os.link(big, big.parent / "bigdir" / big.name)
        server = SeaweedS3(str(WORK / "seaweed")).start()
        try:
            os.environ.update(server.env())
            s3.reset()
            server.client().create_bucket(Bucket="bench")
            cases, published = s3_cases(big, small, offsets, "bench")
            order = ["publish", "list", "stream small", "stream", "ranges"]  # list and read what was published
            figures |= run("S3", {k: cases[k] for k in order}, published, want, a.repeat)
            print(f"S3 counters (ours): {s3.counters()}")
        finally:
            server.stop()
    print(f"load {os.getloadavg()[0]:.2f} at end")
    write_result(
        "bench_storage",
        {k: v["ours"] for k, v in figures.items()},
        what="lib.store.storage on real WARC bytes: list, stream, ranged reads, publish a folder; local and S3",
        peer="pyarrow.fs (LocalFileSystem, S3FileSystem); the code before",
        peers={k: {w: s for w, s in v.items() if w != "ours"} for k, v in figures.items()},
        ratio={
            f"{k} ours / {w}": round(v["ours"] / v[w], 3)
            for k, v in figures.items()
            for w in ("before", "arrow")
            if v.get(w)
        },
        shape={"big_file_mb": round(big.stat().st_size / 1e6, 1), "small_files": nsmall, "ranges": a.ranges}
        | ({"day": shape} if shape else {}),
        variant="real-shaped day" if a.day == "real" else "",
        load_before=load0,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
