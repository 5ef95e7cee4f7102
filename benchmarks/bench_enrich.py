"""What an enrichment plugin costs: the preprocess bare loop (lib.preprocess.archive_pages, one
process, no Spark) over real archives without plugins and with ``--enrich`` plugins, side by
side in one run (alternating, best of ``--repeat``), and each plugin's own seconds as the
job's summary reports them.

    python -m benchmarks.bench_enrich [--input DIR] [--enrich microdata] [--repeat 3]

``--input``: a folder of archives (searched recursively; default ../shared/corpus beside the
checkout or under $DAILYSLICE_SHARED, every .warc.gz but aut's, which are mostly not HTML). Prints the input's shape and
a Markdown table.
"""

from __future__ import annotations

import argparse
import glob
import os
import platform
import sys
import time

from benchmarks.common import write_result
from lib.preprocess import enrich
from lib.preprocess.archive_pages import FileProcessor

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_INPUT = os.path.join(
    os.environ.get("DAILYSLICE_SHARED") or os.path.join(os.path.dirname(os.path.dirname(HERE)), "shared"), "corpus"
)


def archives(folder: str) -> list[str]:
    files = sorted(glob.glob(os.path.join(folder, "**", "*.warc.gz"), recursive=True))
    if os.path.abspath(folder) == os.path.abspath(DEFAULT_INPUT):
        files = [f for f in files if os.sep + "aut" + os.sep not in f]
    return files


def run(files: list[str], names: list[str]) -> tuple[float, list[dict], dict]:
    """(seconds, page rows, the plugins' merged report) of the bare loop over ``files``."""
    plugins = enrich.load(names)
    rows: list[dict] = []
    report: dict = {}
    t = time.perf_counter()
    for path in files:
        e = enrich.Enrichment(plugins)
        proc = FileProcessor(path, enrich=e)
        with open(path, "rb") as f:
            rows += list(proc.pages(f))
        enrich.merge_reports(report, e.report())
    return time.perf_counter() - t, rows, report


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--input", default=DEFAULT_INPUT)
    ap.add_argument("--enrich", default="microdata", help="plugins to measure, comma-separated")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not os.path.isdir(args.input):
        print(f"bench_enrich: no archives at {args.input} (give --input DIR)", file=sys.stderr)
        return 2
    files = archives(args.input)
    names = [n for n in args.enrich.split(",") if n]
    run(files[:1], names)  # imports (extruct, lxml) and the language model, outside the timing
    base, plug, report = [], [], {}
    for _ in range(args.repeat):
        s, rows, _ = run(files, [])
        base.append(s)
        s, erows, report = run(files, names)
        plug.append(s)
    links = [link[0] for r in rows for link in r["outgoing_links"]]
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    print(
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
        f"{len(files)} files, {mb:.1f} MB, {len(rows):,} pages, {len(links):,} links, "
        f"{len(set(links)) / max(1, len(links)):.3f} distinct targets per link\n"
    )
    print("| run | seconds | pages/s | notes |\n|---|---:|---:|---|")
    b, p = min(base), min(plug)
    print(f"| no plugins | {b:.2f} | {len(rows) / b:,.0f} | best of {args.repeat} |")
    notes = "; ".join(
        f"{n}: {r['seconds']:.2f} s of its own ({r['seconds'] / max(1, r['pages']) * 1000:.2f} ms/page), "
        f"{r['failed']} failed"
        for n, r in report.items()
    )
    filled = {
        pl.name: sum(1 for r in erows if any(r.get(f.name) is not None for f in pl.fields)) for pl in enrich.load(names)
    }
    print(
        f"| --enrich {args.enrich} | {p:.2f} | {len(erows) / p:,.0f} | {p / b:.2f}x the run without; {notes}; "
        f"pages with a value: {filled} |"
    )
    write_result(
        "bench_enrich",
        {"without_s": round(b, 2), "with_s": round(p, 2), "plugins": {n: r["seconds"] for n, r in report.items()}},
        what=f"the preprocess bare loop over a day without and with --enrich {args.enrich} (best of {args.repeat})",
        peer="the same loop without the plugin",
        ratio={"with / without (time)": round(p / b, 3)},
        shape={"files": len(files), "mb": round(mb, 1), "pages": len(rows), "links": len(links)}
        | {"distinct_targets_per_link": round(len(set(links)) / max(1, len(links)), 3)},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
