"""What collecting a page's embedded resources (lib/html/embeds.py) adds to preprocess's per-page CPU.

    python -m benchmarks.bench_embeds [--rounds 5]

The real-shaped day's pages (devtools/realday.py's copy 0: every archive of the shared corpus and
the 138 heavy pages), each an archive record read by the preprocess loop itself
(lib.preprocess.archive_pages.FileProcessor: WARC reading, decoding, the walk, links, text, language). The
loop runs over all of them with the embeds query (this checkout) and without it (``embeds`` replaced
by a function that returns nothing: the code before it), alternating, ``--rounds`` times each; the
process CPU time (``time.process_time``) of each pass is kept and the best of each side compared.
The query alone is also timed over the same parsed pages. The load is recorded: CPU time is what
other processes disturb least.
"""

from __future__ import annotations

import argparse
import io
import time

from benchmarks.common import load, utc_now, write_result
from devtools.realday import CORPUS, heavy_records, load_sources
from devtools.realday_records import Rec
from lib.html import content
from lib.html.embeds import COLUMNS
from lib.preprocess.archive_pages import FileProcessor


def archive(records: list[Rec]) -> bytes:
    """The records as one uncompressed WARC (the loop reads it as a crawler's file)."""
    return b"".join(r.to_bytes() for r in records)


def one_pass(data: bytes) -> tuple[float, int, int]:
    """(process CPU seconds, pages, embedded resources) of the preprocess loop over ``data``."""
    proc = FileProcessor("file:///bench/day.warc", 10 << 20)
    t0 = time.process_time()
    rows = list(proc.pages(io.BytesIO(data)))
    cpu = time.process_time() - t0
    n = sum(len(r.get(c) or ()) for r in rows for c in COLUMNS)
    return cpu, len(rows), n


class Inside:
    """``embeds`` with the process CPU time spent in it summed (the query's own cost, in the loop)."""

    def __init__(self, fn):
        self.fn, self.cpu, self.calls = fn, 0.0, 0

    def __call__(self, tree, resolve):
        t0 = time.process_time()
        try:
            return self.fn(tree, resolve)
        finally:
            self.cpu += time.process_time() - t0
            self.calls += 1


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    started, load_before = utc_now(), load()
    records, used, skipped = load_sources([str(CORPUS)], heavy=False)
    records += heavy_records()
    data = archive(records)
    real = content.embeds
    on, off, inside = [], [], []
    pages = resources = 0
    one_pass(data)  # warm: the language model and the parsers loaded, not counted
    for _ in range(args.rounds):
        content.embeds = probe = Inside(real)
        cpu, pages, resources = one_pass(data)
        on.append(cpu)
        inside.append(probe.cpu)
        content.embeds = lambda tree, resolve: {}  # the loop as it was before the query
        off.append(one_pass(data)[0])
    content.embeds = real
    best_on, best_off = min(on), min(off)
    query = min(inside)
    figures = {
        "pages": pages,
        "resources_found": resources,
        "query_us_per_page": round(query / pages * 1e6, 1),
        "query_share_of_loop": round(query / best_on, 4),
        "loop_cpu_s_with": round(best_on, 3),
        "loop_cpu_s_without": round(best_off, 3),
        "loop_difference_us_per_page": round((best_on - best_off) / pages * 1e6, 1),
    }
    print(figures)
    write_result(
        "bench_embeds",
        figures,
        what="preprocess loop CPU over the real-shaped day's pages, with the embedded-resources query and without",
        peer="the same loop without the query",
        ratio={"with_over_without_cpu": round(best_on / best_off, 4)},
        shape={"records": len(records), "bytes": len(data), "sources": len(used), "skipped": len(skipped)},
        started=started,
        load_before=load_before,
        command="python -m benchmarks.bench_embeds --rounds " + str(args.rounds),
        details={"cpu_s_with": on, "cpu_s_without": off, "query_cpu_s": inside},
    )


if __name__ == "__main__":
    main()
