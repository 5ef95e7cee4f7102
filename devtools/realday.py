"""Benchmark days with the shape of real crawl days, built from real archives.

    python -m devtools.realday --out DIR --copies N [--source PATH ...] [--large-bytes B] [--seed S]
                                 [--repeat-ids SHARE]

Sources: every archive under ../shared/corpus (beside the checkout, as the other benchmarks find
it) and the 138 real pages of tests/data/heavy_pages as response records (as
bench_preprocess_peers builds them), plus each ``--source`` (a file or a folder searched for
archives). Every record is kept as it is (responses, requests, metadata, revisits, resources,
warcinfo; ARC read as WARC); a source warcio cannot read is skipped and named in the shape.

Copies: copy 0 is the sources as they are; copy K >= 1 renames each registered domain the sources
were fetched from or link to (``www.bbc.co.uk`` -> ``www.bbc-cK.co.uk``) wherever it stands as a
host (target URIs, HTTP heads, request and metadata blocks, HTML bodies), so each copy links within
itself and the share of distinct link targets per link stays the source's. Record ids become
uuid5(id, K), so ids repeated in the sources repeat within each copy; lengths and digests are
recomputed where bytes changed (devtools/realday_records.py).

Two cuts of the same records, one gzip member per record, laid out as a day of the project
(``CUT/warc/YYYY-MM/DD/CRAWLER/HHMMSS-N.warc.gz``, as crawlers write them):

* ``small``: many small archives, rolled at sizes drawn (log-uniform, seeded) from 10 KB to 2 MB,
  as a web-archive collection rotated by size;
* ``large``: few large ones, rolled at ``--large-bytes`` (default 1 GiB).

Repeated record ids: ``--repeat-ids SHARE`` (default 0.005) of the day's records, drawn seeded,
are written a second time, byte for byte under the same WARC-Record-ID, into archives of their
own after the day's others (in both cuts alike), as a re-uploaded or re-archived part of a
collection holds them; ``shape.json`` counts them (``repeated_record_ids``).

The day's shape (``shape.json`` beside the cuts) is measured by reading the large cut with the
preprocess loop (lib.preprocess.archive_pages.FileProcessor): pages are its rows, links its
``outgoing_links`` (resolved, one per distinct (target, anchor) of a page: what the graph's edges
count), pages without text those with an empty ``plain_text``. The same arguments give
byte-identical files.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import gzip
import json
import math
import os
import pathlib
import random
import shutil
import sys
import time

from devtools.heavypages import heavy_pages, warc_member
from devtools.jobcmd import WORK, job_cmd
from devtools.realday_records import Rec, Renamer, collect_domains, read_archive

ROOT = pathlib.Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
DAY = dt.date(2026, 1, 15)
CRAWLER = {"small": "collection", "large": "crawler-1"}
ARCHIVE_SUFFIXES = (".warc.gz", ".warc", ".arc.gz", ".arc")
SMALL_MIN, SMALL_MAX = 10_000, 2_000_000
REPEAT_IDS = 0.005  # share of records written twice under the same id (re-uploaded captures)


def find_archives(path: str | os.PathLike) -> list[str]:
    """``path`` itself, or the archives under it (sorted, so the order never depends on the disk)."""
    p = pathlib.Path(path)
    if p.is_file():
        return [str(p)]
    return sorted(str(f) for f in p.rglob("*") if f.is_file() and f.name.lower().endswith(ARCHIVE_SUFFIXES))


def heavy_records() -> list[Rec]:
    """The committed heavy pages as response records (bench_preprocess_peers.build_heavy's first round)."""
    data = b"".join(warc_member(url, body, i) for i, (url, body) in enumerate(heavy_pages()))
    return read_archive("heavy_pages", "heavy_pages", data=data)


def load_sources(sources: list[str], heavy: bool = True) -> tuple[list[Rec], list[dict], list[dict]]:
    """(records in order, sources read, sources skipped with the reason)."""
    records: list[Rec] = []
    used, skipped = [], []
    for src in sources:
        files = find_archives(src)
        if not files:
            raise SystemExit(f"no archives in {src}")
        for path in files:
            label = os.path.relpath(path, src) if os.path.isdir(src) else os.path.basename(path)
            label = f"{os.path.basename(os.path.normpath(src))}/{label}" if os.path.isdir(src) else label
            try:
                recs = read_archive(path, label)
            except Exception as e:  # a deliberately broken sample (one gzip stream, ...): said, not fatal
                skipped.append({"source": label, "reason": f"{type(e).__name__}: {str(e).strip().splitlines()[0]}"})
                continue
            records.extend(recs)
            used.append({"source": label, "records": len(recs)})
    if heavy:
        recs = heavy_records()
        records.extend(recs)
        used.append({"source": "tests/data/heavy_pages", "records": len(recs)})
    return records, used, skipped


def copy_records(records: list[Rec], domains: set[str], copy: int) -> list[Rec]:
    """Copy ``copy`` of ``records`` in their order (copy 0: themselves). Revisits are made after
    every other record so that they find the renamed payload digests of what they revisit."""
    if copy == 0:
        return records
    ren = Renamer(domains, copy)
    out: list[Rec | None] = [None if r.type == "revisit" else ren.record(r) for r in records]
    return [o if o is not None else ren.record(r) for o, r in zip(out, records)]


class Roller:
    """Gzip members into ``folder/HHMMSS-N.warc.gz`` files, each closed once it reaches the size
    ``next_size()`` gives; names follow a deterministic clock (one file a minute from 00:00)."""

    def __init__(self, folder: pathlib.Path, next_size):
        self.folder, self.next_size = folder, next_size
        self.files: list[str] = []
        self.f = None
        self.limit = self.size = 0

    def write(self, member: bytes) -> None:
        if self.f is None:
            n = len(self.files)
            name = f"{n // 60 % 24:02d}{n % 60:02d}00-{n}.warc.gz"
            self.files.append(str(self.folder / name))
            self.f = open(self.files[-1], "wb")
            self.limit, self.size = self.next_size(), 0
        self.f.write(member)
        self.size += len(member)
        if self.size >= self.limit:
            self.close()

    def close(self) -> None:
        if self.f is not None:
            self.f.close()
            self.f = None


def cut_folder(out: pathlib.Path, cut: str, day: dt.date = DAY) -> pathlib.Path:
    """The folder of one cut that the preprocess job takes as ``--input`` (``CUT/warc/YYYY-MM/DD``)."""
    return out / cut / "warc" / f"{day:%Y-%m}" / f"{day:%d}"


def measure(files: list[str]) -> dict:
    """Pages, links and languages of the day, read with the preprocess loop."""
    from lib.preprocess.archive_pages import FileProcessor

    pages = links = no_text = 0
    targets: set[str] = set()
    langs: collections.Counter = collections.Counter()
    for path in files:
        proc = FileProcessor(path)
        with open(path, "rb") as f:
            for row in proc.pages(f):
                pages += 1
                out = row.get("outgoing_links") or []
                links += len(out)
                targets.update(link[0] for link in out)
                if not (row.get("plain_text") or "").strip():
                    no_text += 1
                langs[row.get("language") or "und"] += 1
    return {
        "html_pages": pages,
        "links": links,
        "distinct_link_targets": len(targets),
        "distinct_targets_per_link": round(len(targets) / links, 4) if links else None,
        "pages_without_text": no_text,
        "languages": len(langs),
        "pages_by_language": dict(langs.most_common()),
    }


def build_day(
    out: str | os.PathLike,
    copies: int,
    sources: list[str] | None = None,
    large_bytes: int = 1 << 30,
    seed: int = 0,
    heavy: bool = True,
    shape: bool = True,
    day: dt.date = DAY,
    quiet: bool = False,
    repeat_ids: float = REPEAT_IDS,
) -> dict:
    """Write the day of ``copies`` copies of the sources into ``out`` in both cuts; return
    ``{"small": input folder, "large": input folder, "files": {cut: [paths]}, "shape": {...}}``.
    ``sources`` default to ../shared/corpus (each archive under it); the heavy pages come too
    unless ``heavy`` is false. ``shape=False`` skips reading the day back (links, languages).
    ``repeat_ids`` of the records are written again, same id and bytes, in archives after the others."""
    if copies < 1:
        raise ValueError("copies must be >= 1")
    t0 = time.perf_counter()
    out = pathlib.Path(out)
    srcs = [str(s) for s in (sources if sources is not None else [CORPUS])]
    records, used, skipped = load_sources(srcs, heavy)
    if not records:
        raise SystemExit("no records in the sources")
    domains = collect_domains(records)
    for cut in ("small", "large"):
        shutil.rmtree(out / cut, ignore_errors=True)
    (out / "shape.json").unlink(missing_ok=True)  # a half-built day must not look finished
    rng = random.Random(seed)
    lo, hi = math.log(SMALL_MIN), math.log(SMALL_MAX)
    rollers = {}
    for cut, size in (("small", lambda: int(math.exp(rng.uniform(lo, hi)))), ("large", lambda: large_bytes)):
        folder = cut_folder(out, cut, day) / CRAWLER[cut]
        folder.mkdir(parents=True)
        rollers[cut] = Roller(folder, size)
    kinds: collections.Counter = collections.Counter()
    ids: collections.Counter = collections.Counter()
    nbytes = 0
    # drawn apart from the small cut's sizes, so that the day before its repeats is the same bytes
    again = set(
        random.Random(f"repeat-ids:{seed}").sample(
            range(len(records) * copies), round(repeat_ids * len(records) * copies)
        )
    )
    repeats: list[tuple[str, str | None, bytes]] = []

    def write(kind: str, rid: str | None, member: bytes) -> None:
        nonlocal nbytes
        nbytes += len(member)
        for r in rollers.values():
            r.write(member)
        kinds[kind] += 1
        if rid:
            ids[rid] += 1

    for k in range(copies):
        for i, rec in enumerate(copy_records(records, domains, k)):
            member = gzip.compress(rec.to_bytes(), 6, mtime=0)
            write(rec.type, rec.get("WARC-Record-ID"), member)
            if k * len(records) + i in again:
                repeats.append((rec.type, rec.get("WARC-Record-ID"), member))
    for r in rollers.values():
        r.close()  # the repeats go to archives of their own, in both cuts
    for kind, rid, member in repeats:
        write(kind, rid, member)
    for r in rollers.values():
        r.close()
    result = {
        "small": str(cut_folder(out, "small", day)),
        "large": str(cut_folder(out, "large", day)),
        "files": {c: r.files for c, r in rollers.items()},
    }
    info = {
        "copies": copies,
        "seed": seed,
        "large_bytes": large_bytes,
        "repeat_ids": repeat_ids,
        "day": day.isoformat(),
        "sources": used,
        "sources_skipped": skipped,
        "renamed_domains": len(domains),
        "records": sum(kinds.values()),
        "records_by_type": dict(sorted(kinds.items())),
        "repeated_record_ids": sum(1 for n in ids.values() if n > 1),
        "records_with_repeated_ids": sum(n for n in ids.values() if n > 1),
        "repeated_records_by_type": dict(sorted(collections.Counter(kd for kd, _, _ in repeats).items())),
        "compressed_bytes": nbytes,
        "files": {c: len(r.files) for c, r in rollers.items()},
        "file_bytes": {c: _spread([os.path.getsize(p) for p in r.files]) for c, r in rollers.items()},
        "inputs": {c: os.path.relpath(result[c], out) for c in ("small", "large")},
    }
    if shape:
        info.update(measure(result["files"]["large"]))
        info["links_counted_by"] = (
            "lib.preprocess.archive_pages.FileProcessor outgoing_links (resolved, per page distinct (url, anchor))"
        )
    with open(out / "shape.json", "w") as f:
        json.dump(info, f, indent=1)
    result["shape"] = info
    if not quiet:
        print(f"{describe(info)}; built in {time.perf_counter() - t0:.1f} s", flush=True)
    return result


def _spread(sizes: list[int]) -> dict:
    s = sorted(sizes)
    return {"min": s[0], "median": s[len(s) // 2], "max": s[-1]} if s else {}


def describe(shape: dict) -> str:
    """One line of the day's shape, to print beside a figure."""
    parts = [f"{shape.get('copies')} copies", f"{shape.get('records'):,} records"]
    if "html_pages" in shape:
        parts += [
            f"{shape['html_pages']:,} HTML pages",
            f"{shape['pages_without_text']:,} without text",
            f"{shape['languages']} languages",
            f"{shape['links']:,} links",
            f"{shape['distinct_link_targets']:,} distinct targets ({shape['distinct_targets_per_link']} per link)",
        ]
    parts += [
        f"files small {shape['files']['small']} / large {shape['files']['large']}",
        f"{shape['compressed_bytes'] / 1e6:.1f} MB",
        f"{shape['repeated_record_ids']} repeated record ids",
    ]
    return "day shape: " + ", ".join(parts)


CUTS = ("small", "large")


def cached_day(out: str | os.PathLike, copies: int, corpus: str | os.PathLike = CORPUS, **kw) -> dict:
    """:func:`build_day` into ``out`` unless the day there was built with the same arguments
    (its shape.json says so and its files are there): what the benchmarks call."""
    out = pathlib.Path(out)
    shape_file = out / "shape.json"
    if shape_file.exists():
        shape = json.loads(shape_file.read_text())
        same = (
            shape.get("copies") == copies
            and shape.get("large_bytes") == kw.get("large_bytes", 1 << 30)
            and shape.get("seed") == kw.get("seed", 0)
            and "html_pages" in shape
            and shape.get("repeat_ids", 0) == kw.get("repeat_ids", REPEAT_IDS)
        )
        files = {c: sorted(str(p) for p in cut_folder(out, c).rglob("*.warc.gz")) for c in CUTS}
        if same and all(len(files[c]) == shape["files"][c] for c in CUTS):
            return {**{c: str(cut_folder(out, c)) for c in CUTS}, "files": files, "shape": shape}
    if not pathlib.Path(corpus).is_dir():
        raise SystemExit(f"the real-shaped day needs the real samples: {corpus} is absent (--corpus)")
    return build_day(out, copies, [str(corpus)], **kw)


def shared_day(copies: int, corpus: str | os.PathLike = CORPUS) -> dict:
    """:func:`cached_day` in ``WORK/realday/real-Nx`` (benchmarks/work unless $DAILYSLICE_BENCH_WORK):
    the day that bench_search, bench_overlap, bench_ciff_encode, bench_storage and bench_exchange share."""
    return cached_day(WORK / "realday" / f"real-{copies}x", copies, corpus)


def _run_once(job: str, inp: object, out: pathlib.Path, cores: int, stamp: str, *args: str) -> pathlib.Path:
    """``jobs/{job}.py --input INP --output OUT ARGS`` unless OUT is complete and its ``.from``
    holds ``stamp`` (what it was built from); the stamp is written once the job has succeeded."""
    import subprocess

    if (out / "_SUCCESS").exists() and (out / ".from").exists() and (out / ".from").read_text() == stamp:
        return out
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [*job_cmd(job, inp, out, cores), "--conf", "spark.ui.enabled=false", *args],
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    (out / ".from").write_text(stamp)
    return out


def preprocessed(day: dict, cut: str, cores: int, out: str | os.PathLike | None = None) -> pathlib.Path:
    """The Parquet day of one cut (``jobs/preprocess.py --input CUT``), built once beside the cut."""
    src = pathlib.Path(day[cut])  # CUT/warc/YYYY-MM/DD: the Parquet day goes to CUT/preprocessed/YYYY-MM/DD
    dest = pathlib.Path(out) if out else src.parents[2] / "preprocessed" / src.parent.name / src.name
    return _run_once("preprocess", day[cut], dest, cores, day[cut])


def indexed(pre: str | os.PathLike, out: str | os.PathLike, cores: int, *args: str) -> pathlib.Path:
    """``jobs/index.py --input PRE --output OUT ARGS`` once (rerun when PRE or ARGS change)."""
    return _run_once("index", pre, pathlib.Path(out), cores, json.dumps([str(pre), list(args)]), *args)


def day_index(day: dict, cut: str, cores: int) -> pathlib.Path:
    """The index of one cut (``jobs/index.py --no-graph``, 25k documents a shard) in
    ``CUT/index/YYYY-MM/DD``, beside ``CUT/warc`` and ``CUT/preprocessed``: ``CUT`` is then a
    published root for the search engine. Built once (bench_search, bench_ciff_encode)."""
    pre = preprocessed(day, cut, cores)
    return indexed(
        pre, pre.parents[2] / "index" / pre.parent.name / pre.name, cores, "--docs-per-shard", "25000", "--no-graph"
    )


def cut_line(shape: dict, cut: str) -> str:
    """The shape of one cut, to print beside its figure."""
    spread, n = shape["file_bytes"][cut], shape["files"][cut]
    sizes = (
        f"{spread['max'] / 1e6:.1f} MB"
        if n == 1
        else f"{spread['min'] / 1e3:.0f} KB to {spread['max'] / 1e6:.1f} MB, median {spread['median'] / 1e3:.0f} KB"
    )
    return f"{cut} cut, {n} file{'s' if n > 1 else ''} ({sizes}); " + describe(shape).removeprefix("day shape: ")


def add_day_options(ap, default: str) -> None:
    """``--day``, ``--copies`` and ``--corpus``: the real-shaped day (devtools/realday.py) or the script's own."""
    ap.add_argument(
        "--day",
        choices=["real", "own"],
        default=default,
        help=f"real: the real-shaped day in both cuts; own: this script's own day (default {default})",
    )
    if not any(
        "--copies" in act.option_strings for act in ap._actions
    ):  # bench_index has its own (also for --day real)
        ap.add_argument("--copies", type=int, default=1, help="--day real: copies of the real-shaped day")
    ap.add_argument("--corpus", default=str(CORPUS), help="--day real: the real samples (default ../shared/corpus)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder of the day: small/, large/ and shape.json go there")
    ap.add_argument("--copies", type=int, default=1, help="copies of the sources (1: the sources as they are)")
    ap.add_argument("--source", action="append", default=[], help="more real archives (file or folder; repeatable)")
    ap.add_argument("--corpus", default=str(CORPUS), help="the default sources (default ../shared/corpus)")
    ap.add_argument("--no-corpus", action="store_true", help="only --source (and the heavy pages)")
    ap.add_argument("--no-heavy", action="store_true", help="without tests/data/heavy_pages")
    ap.add_argument("--large-bytes", type=int, default=1 << 30, help="roll size of the large cut (default 1 GiB)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the small cut's file sizes")
    ap.add_argument("--no-shape", action="store_true", help="skip reading the day back for links and languages")
    ap.add_argument(
        "--repeat-ids",
        type=float,
        default=REPEAT_IDS,
        metavar="SHARE",
        help=f"share of records written again under the same record id (default {REPEAT_IDS})",
    )
    a = ap.parse_args(argv)
    sources = ([] if a.no_corpus else [a.corpus]) + a.source
    if not a.no_corpus and not os.path.isdir(a.corpus):
        sys.exit(f"{a.corpus} is absent: pass --corpus, or --no-corpus with --source")
    r = build_day(
        a.out,
        a.copies,
        sources,
        a.large_bytes,
        a.seed,
        heavy=not a.no_heavy,
        shape=not a.no_shape,
        repeat_ids=a.repeat_ids,
    )
    print(
        f"small cut (--input): {r['small']}\nlarge cut (--input): {r['large']}\nshape: "
        f"{pathlib.Path(a.out) / 'shape.json'}"
    )


if __name__ == "__main__":
    main()
