"""What collecting a page's embedded resources (lib/html/embeds.py) adds to preprocess's per-page CPU.

    python -m benchmarks.bench_embeds [--rounds 5]

The real-shaped day's pages (devtools/realday.py's copy 0: every archive of the shared corpus and
the 138 heavy pages), each an archive record read by the preprocess loop itself
(lib.preprocess.archive_pages.FileProcessor: WARC reading, decoding, the walk, links, text, language). The
loop runs over all of them three ways, alternating, ``--rounds`` times each: ``walk``, this checkout
(the compiled links walk collects the embeds, lexwalk.c's ``embed_of``); ``query``, the way before
it (the links walk without them, then lib.html.embeds' CSS query: the pure-Python path's); ``none``,
without embeds (the query replaced by a function that returns nothing: the loop before the columns).
The process CPU time (``time.process_time``) of each pass is kept and the best of each side compared;
the query alone is also timed in its passes. The load is recorded: CPU time is what other
processes disturb least.
"""

from __future__ import annotations

import argparse
import io
import time

from benchmarks.common import load, utc_now, write_result
from devtools.realday import CORPUS, heavy_records, load_sources
from devtools.realday_records import Rec
from lib.html import content, walk
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


class LinksOnly:
    """The compiled walker, its links walk asked without the embeds: content falls back to the query."""

    def __init__(self, walker):
        self.walker = walker

    def __getattr__(self, name):
        return getattr(self.walker, name)

    def links(self, *args):
        if len(args) <= 3:
            return self.walker.links(*args)
        found, strays = self.walker.links(*args[:2], args[2])
        return found, strays, None


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    started, load_before = utc_now(), load()
    records, used, skipped = load_sources([str(CORPUS)], heavy=False)
    records += heavy_records()
    data = archive(records)
    real, native = content.embeds, walk.WALK
    if native is None:
        raise SystemExit(f"the compiled walker is not in use: {walk.status()}")
    cpu: dict[str, list[float]] = {"walk": [], "query": [], "none": []}
    inside = []
    pages = resources = 0
    one_pass(data)  # warm: the language model and the parsers loaded, not counted
    try:
        for _ in range(args.rounds):
            c, pages, resources = one_pass(data)
            cpu["walk"].append(c)
            walk.WALK = LinksOnly(native)
            content.embeds = probe = Inside(real)
            c, _, found = one_pass(data)
            assert found == resources, (found, resources)  # the two ways find the same resources
            cpu["query"].append(c)
            inside.append(probe.cpu)
            content.embeds = lambda tree, resolve: {}  # the loop as it was before the columns
            cpu["none"].append(one_pass(data)[0])
            walk.WALK, content.embeds = native, real
    finally:
        walk.WALK, content.embeds = native, real
    best = {k: min(v) for k, v in cpu.items()}
    query = min(inside)
    figures = {
        "pages": pages,
        "resources_found": resources,
        "query_us_per_page": round(query / pages * 1e6, 1),
        "loop_cpu_s": best,
        "walk_cost_us_per_page": round((best["walk"] - best["none"]) / pages * 1e6, 1),
        "query_cost_us_per_page": round((best["query"] - best["none"]) / pages * 1e6, 1),
        "saved_us_per_page": round((best["query"] - best["walk"]) / pages * 1e6, 1),
    }
    print(figures)
    write_result(
        "bench_embeds",
        figures,
        what="preprocess loop CPU over the real-shaped day's pages: embeds by the compiled walk, the CSS query, none",
        peer="the same loop with the CSS query (the way before), and without embeds",
        ratio={
            "query_over_walk_cpu": round(best["query"] / best["walk"], 4),
            "walk_over_none_cpu": round(best["walk"] / best["none"], 4),
        },
        shape={"records": len(records), "bytes": len(data), "sources": len(used), "skipped": len(skipped)},
        started=started,
        load_before=load_before,
        command="python -m benchmarks.bench_embeds --rounds " + str(args.rounds),
        details={"cpu_s": cpu, "query_cpu_s": inside, "load_after": load()},
    )


if __name__ == "__main__":
    main()
