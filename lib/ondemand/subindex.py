"""A request's sub-index built in a work folder: selection, the index pipeline over it, the
optional edges and WARC records, the manifest (docs/ondemand.md). ``jobs/ondemand.py`` runs it
and publishes the folder."""

from __future__ import annotations

import os
import shutil
from typing import Any, Callable

import pyarrow.parquet as pq

from lib.errors import DailysliceError
from lib.extract.driver import ERRORS, MANIFEST
from lib.index import indexable
from lib.index import shards as index_shards
from lib.index.pipeline import build_index, plan_day
from lib.ondemand import side_outputs
from lib.ondemand.request import Request
from lib.ondemand.select import RESULT, select_pages, source_files
from lib.pages.exclusions import NONE as NO_EXCLUSIONS
from lib.pages.exclusions import Exclusions
from lib.runtime.steps import Steps
from lib.store import layout

#: every (TLD, language) group goes to other/LANG: one group per language, as a sub-index wants
ONE_GROUP_PER_LANGUAGE = 1 << 62
COUNT_KEYS = [n for n in RESULT.names if n not in ("day", "language")]


class NothingSelected(DailysliceError, RuntimeError):
    """The request's patterns and ``where`` select no indexable page of its days."""


def count(rows: list[dict[str, Any]], pruning: dict[str, Any] | None = None) -> dict[str, Any]:
    """The selection's totals and its pages per day and language; with the host index's
    ``pruning`` (:func:`source_files`), how much it spared (``host_index``)."""
    out: dict[str, Any] = {k: sum(r[k] for r in rows) for k in COUNT_KEYS}
    out["files"] = len(rows)
    if pruning is not None:
        by_day = pruning["pages_by_day"]
        read = sum(r["rows"] for r in rows if r["day"] in by_day)
        out["host_index"] = {k: v for k, v in pruning.items() if k != "pages_by_day"}
        out["host_index"]["pages_skipped"] = sum(by_day.values()) - read
    per: dict[str, dict[str, int]] = {}
    for r in rows:
        per.setdefault(r["day"], {}).setdefault(r["language"], 0)
        per[r["day"]][r["language"]] += r["kept"]
    out["kept_by_day"] = per
    return out


def build(
    spark: Any,
    req: Request,
    day_dirs: list[tuple[Any, str]],
    work: str,
    steps: Steps,
    *,
    allow_empty: bool = False,
    policy: indexable.Policy = indexable.Policy(),
    gzip_level: int = 2,
    copy_records: Callable[[Any, str, str], Any] | None = None,
    excl: Exclusions = NO_EXCLUSIONS,
) -> dict[str, Any]:
    """Write the sub-index of ``req`` into ``work`` (``LANG/index-{n}.ciff.gz`` + metadata,
    ``edges.parquet``, ``warc/``, ``_manifest.json``); returns the counts. Raises
    :class:`NothingSelected` when no page is selected, unless ``allow_empty``.
    ``copy_records(spark, tsv, folder)``: the extract job (``outputs`` with ``warc``), which
    lib does not import."""
    selection = work + ".select"
    built = work + ".index"
    try:
        with steps("select"):
            files, pruning = source_files(day_dirs, req.languages, req.patterns)
            counts = count(select_pages(spark, files, selection, req.patterns, req.where, policy, excl), pruning)
        if not counts["kept"] and not allow_empty:
            skipped = counts["host_index"]["pages_skipped"]
            raise NothingSelected(
                f"the request selects no page: {counts['rows']} pages read in {counts['files']} files of "
                f"{len(day_dirs)} day(s) ({skipped} more skipped by the host index, whose hosts no pattern names), "
                f"{counts['selected']} matched, {counts['kept']} indexable"
            )
        with steps("plan"):
            day = plan_day(selection, req.docs_per_shard, ONE_GROUP_PER_LANGUAGE)
        totals = build_index(spark, day, built, steps, gzip_level=gzip_level, with_graph=False).totals
        other = os.path.join(built, index_shards.OTHER)
        for lang in sorted(os.listdir(other)) if os.path.isdir(other) else []:
            shutil.move(os.path.join(other, lang), os.path.join(work, lang))
        counts["index"] = {
            "docs": totals.docs,
            "duplicates": totals.duplicates,
            "shards": totals.shards,
            "terms": totals.terms,
            "postings": totals.postings,
        }
        if "edges" in req.outputs:
            with steps("edges"):
                counts["edges"] = side_outputs.write_edges(selection, os.path.join(work, side_outputs.EDGES))
        if "warc" in req.outputs:
            if copy_records is None:
                raise ValueError("the request asks for WARC records: give copy_records (the extract job)")
            with steps("warc"):
                counts["warc"] = _warc(spark, selection, os.path.join(work, "warc"), copy_records)
    finally:
        shutil.rmtree(selection, ignore_errors=True)
        shutil.rmtree(built, ignore_errors=True)
    side_outputs.write_manifest(work, {"request": req.record(), "counts": counts})
    return counts


def _warc(spark: Any, selection: str, out: str, copy_records: Callable[[Any, str, str], Any]) -> dict[str, int]:
    """The selected pages' records copied byte for byte by the extract job (a TSV of url, file,
    offset, length in the sub-index's page order); its run statistics (timings) are dropped,
    the archives, ``manifest.tsv`` and ``errors.tsv`` stay."""
    tsv = out + ".tsv"
    lines, missing = [], 0
    for d in sorted(os.listdir(selection)):
        for n in sorted(os.listdir(os.path.join(selection, d))):
            t = pq.read_table(os.path.join(selection, d, n), columns=["url", "warc_file", "warc_offset", "warc_length"])
            for url, f, off, length in zip(*(c.to_pylist() for c in t.columns)):
                if off is None or length is None:  # a page read from a damaged archive: no record to copy
                    missing += 1
                else:
                    lines.append(f"{url}\t{f}\t{off}\t{length}\n")
    with open(tsv, "w") as fh:
        fh.writelines(lines)
    try:
        res = copy_records(spark, tsv, out)
    finally:
        os.remove(tsv)
    if not res.ok:
        errors = os.path.join(out, ERRORS)
        first = open(errors).read().splitlines()[:2] if os.path.exists(errors) else []
        raise RuntimeError(
            f"{res.summary.get('failed', '?')} of {len(lines)} WARC records could not be copied"
            + (f" ({ERRORS}: {' | '.join(first)})" if first else f": {res.summary.get('error')}")
        )
    for name in (layout.STATS, layout.SUCCESS):
        if os.path.exists(os.path.join(out, name)):
            os.remove(os.path.join(out, name))
    archives = [n for n in os.listdir(out) if n not in (MANIFEST, ERRORS)]
    return {"records": int(res.summary["extracted"]), "archives": len(archives), "pages_without_offsets": missing}
