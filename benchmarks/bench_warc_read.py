"""Reading records with exact offsets: our reader vs FastWARC vs warcio, on the same files.

Each reader iterates every record of the preprocess benchmark's 512 MB (8 files; run
bench_preprocess.py first, or pass --files) and reads each record's whole content. Ours also
yields every gzip member's exact length; FastWARC yields the start offset only (lengths would
need the next record's offset, which is wrong after damage); warcio yields both. The script
checks that all three agree on every record's offset.

    python -m benchmarks.bench_warc_read [--files 'benchmarks/work/preprocess/day/*.warc.gz']
    python -m benchmarks.bench_warc_read --day real [--copies 10]

``--day real`` reads the real-shaped day of devtools/realday.py instead (every record type, many
producers), in both cuts (many small archives, few large ones), its shape printed beside each figure.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

from benchmarks import WORK as BENCH_WORK
from benchmarks.common import write_result
from lib.warc.records import Record, iter_records


def ours(path: str) -> list[int]:
    with open(path, "rb", buffering=1 << 20) as f:
        return [r.offset for r in iter_records(f, path) if isinstance(r, Record)]


def fastwarc(path: str) -> list[int]:
    from fastwarc.warc import ArchiveIterator

    out = []
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f, parse_http=False):
            rec.reader.read()
            out.append(rec.stream_pos)
    return out


def warcio(path: str) -> list[int]:
    from warcio.archiveiterator import ArchiveIterator

    out = []
    with open(path, "rb") as f:
        it = ArchiveIterator(f)
        for rec in it:
            rec.content_stream().read()
            out.append(it.get_record_offset())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", default=os.path.join(BENCH_WORK, "preprocess", "day", "*.warc.gz"))
    ap.add_argument("--day", choices=["files", "real"], default="files", help="real: the real-shaped day, both cuts")
    ap.add_argument("--copies", type=int, default=1, help="--day real: copies of the real-shaped day")
    ap.add_argument("--corpus", default=None, help="--day real: the real samples (default ../shared/corpus)")
    a = ap.parse_args()
    if a.day == "real":
        from devtools import realday

        rd = realday.cached_day(
            os.path.join(BENCH_WORK, "warc_read", f"real-{a.copies}x"), a.copies, a.corpus or realday.CORPUS
        )
        for cut in realday.CUTS:
            print(realday.cut_line(rd["shape"], cut), flush=True)
            record(read_all(rd["files"][cut]), {"day": f"real-{a.copies}x", "cut": cut}, "real-shaped day, " + cut)
        return
    files = sorted(glob.glob(a.files))
    if not files:
        sys.exit(f"no files match {a.files}: run benchmarks/bench_preprocess.py first")
    record(read_all(files), {"files": len(files), "first": files[0]}, "")


def record(rates: dict[str, float], shape: dict, variant: str) -> None:
    """Write the readers' MB/s as a result (ours the figure, FastWARC and warcio the peers)."""
    write_result(
        "bench_warc_read",
        {"ours_mb_per_cpu_s": rates["ours"], "mb": rates["mb"]},
        what="reading every record of a day, offsets recorded; all readers must agree on every offset",
        peer="FastWARC, warcio",
        peers={"fastwarc_mb_per_cpu_s": rates["fastwarc"], "warcio_mb_per_cpu_s": rates["warcio"]},
        ratio={f"ours / {n} (MB per CPU s)": round(rates["ours"] / rates[n], 3) for n in ("fastwarc", "warcio")},
        shape=shape,
        variant=variant,
    )


def read_all(files: list[str]) -> dict[str, float]:
    """Each reader over ``files`` in turn; the offsets they give must agree. MB per CPU second
    of each (and ``mb``, the files' size)."""
    total = sum(os.path.getsize(p) for p in files)
    offsets, rates = {}, {"mb": round(total / 1e6, 1)}
    for name, fn in (("ours", ours), ("fastwarc", fastwarc), ("warcio", warcio)):
        t0 = time.process_time()
        offsets[name] = [fn(p) for p in files]
        secs = time.process_time() - t0
        n = sum(map(len, offsets[name]))
        rates[name] = round(total / 1e6 / secs, 1)
        print(
            f"{name:9s} {n} records {total / 1e6:.0f} MB  {secs:.1f} s CPU  {total / 1e6 / secs:.1f} MB/s  "
            f"{n / secs:.0f} records/s",
            flush=True,
        )
    assert offsets["ours"] == offsets["fastwarc"] == offsets["warcio"], "readers disagree on offsets"
    print("all three readers agree on every record offset")
    return rates


if __name__ == "__main__":
    main()
