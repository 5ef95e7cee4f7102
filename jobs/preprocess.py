"""Preprocess a day's crawl: WARC/ARC files -> cleaned, language-tagged Parquet.

    spark-submit jobs/preprocess.py --date 2026-01-15 --root s3://bucket
    python jobs/preprocess.py --input DIR --output DIR          # local[*]

Reads ROOT/warc/YYYY-MM/DD/** (``lib.warc.records.ARCHIVE_SUFFIXES``, any case) and writes
ROOT/preprocessed/YYYY-MM/DD/: ``language=xxx/part-*.parquet`` (pages), ``_captures/``,
``_hosts.parquet`` (the host index), ``_stats.json``, ``_errors.jsonl`` and ``_SUCCESS`` last.
See docs/preprocess.md for the columns.

Exit codes: 0 the day is published and healthy; 1 the run failed (nothing published);
2 usage (an input folder or prefix that does not exist included: nothing published);
3 the day is published but unhealthy (:mod:`lib.preprocess.health`: too many failed records,
too few HTML pages kept, too many unreadable files; the summary and ``_stats.json`` carry the
``health`` block); 4 the input day exists but holds no archives: nothing published, unless
``--allow-empty`` asks for an empty day (then 0).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
from dataclasses import dataclass
from typing import Any

from lib.errors import UsageError
from lib.neardup import page_column
from lib.pages import directives, exclusions, hostindex
from lib.pages.schema import PAGE_SCHEMA
from lib.preprocess import batches, enrich, gate, health, langid, plan, tasktime
from lib.preprocess.file_counters import RunSummary
from lib.preprocess.input_manifest import input_record
from lib.preprocess.tasks import FILE_BYTES, RESULT_SCHEMA, TaskSettings, make_mapper, merge_results, remove_strays
from lib.runtime.maptasks import map_tasks
from lib.runtime.options import DayJobOptions, byte_text, opt
from lib.runtime.result import EXIT_UNHEALTHY, JobResult, empty_input
from lib.runtime.sparkjob import SparkJob, resolved
from lib.store import layout, storage
from lib.store.locations import archive_name
from lib.store.storage import FileInfo
from lib.warc.records import ARCHIVE_SUFFIXES

log = logging.getLogger("dailyslice.preprocess")
DEFAULTS = health.Thresholds()


def share(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a share between 0 and 1, got {text!r}")
    return v


def s3_connections_default() -> int:
    """``--s3-max-connections``'s default: ``$DAILYSLICE_S3_MAX_CONNECTIONS_PER_JOB``, else 0."""
    return int(os.environ.get("DAILYSLICE_S3_MAX_CONNECTIONS_PER_JOB", "0") or 0)


@dataclass(frozen=True)
class PreprocessOptions(DayJobOptions):
    """The preprocess job's options (the command line's, same names and defaults)."""

    max_page_bytes: int = opt(10 << 20, "skip (and report) pages whose HTTP body is larger", render=byte_text, type=int)
    task_bytes: int = opt(
        plan.TASK_BYTES,
        "archives are grouped into tasks of at most this many bytes, a file counting its size plus "
        "--open-cost-bytes (a bigger file is a task alone; a small day is cut finer to fill every core), as "
        "Spark's spark.sql.files.maxPartitionBytes",
        render=byte_text,
        type=int,
        metavar="BYTES",
    )
    open_cost_bytes: int = opt(
        plan.OPEN_COST_BYTES,
        "what opening one archive costs, in bytes, when tasks are planned, as Spark's "
        "spark.sql.files.openCostInBytes (Spark's own is 4 MiB)",
        render=byte_text,
        type=int,
        metavar="BYTES",
    )
    split_bytes: int = opt(
        0,
        "a multi-member .warc.gz larger than this is read by several tasks, in equal ranges of at most this size "
        "(their count rounded up to a multiple of the slots while a range stays at least half of it) that start "
        "at a gzip member beginning a record, as Spark splits files by maxSplitBytes (0: the limit a task's "
        "bytes are packed to; ARC, plain, zstd and LZ4 archives are read whole)",
        type=int,
        metavar="BYTES",
    )
    file_bytes: int = opt(
        FILE_BYTES,
        "a task starts a new Parquet file of a language when the current one reaches this size",
        render=byte_text,
        type=int,
        metavar="BYTES",
    )
    batch_rows: int = opt(500, "pages per Arrow batch handed to Spark", type=int)
    max_failed_share: float = opt(
        DEFAULTS.max_failed_share, "unhealthy above this share of failed records among records read", type=share
    )
    min_kept_share: float = opt(
        DEFAULTS.min_kept_share,
        "unhealthy below this share of kept pages among parsed 2xx HTML responses",
        type=share,
    )
    max_unreadable_share: float = opt(
        DEFAULTS.max_unreadable_share, "unhealthy above this share of unreadable input files", type=share
    )
    max_empty_text_share: float = opt(
        DEFAULTS.max_empty_text_share,
        "warn above this share of kept pages whose main text is empty although their body has text",
        type=share,
    )
    s3_max_connections: int = opt(
        default_factory=s3_connections_default,
        help="at most N archives read from S3 at once by the whole job (one connection each)",
        shown="$DAILYSLICE_S3_MAX_CONNECTIONS_PER_JOB, 0: one per task slot",
        type=int,
        metavar="N",
    )
    enrich: tuple[str, ...] = opt(
        (),
        "run these enrichment plugins (entry-point group dailyslice.enrichers, e.g. microdata); their columns "
        "are added to the pages (docs/enrich.md)",
        action="append",
        metavar="NAME[,NAME]",
    )
    allow_unevaluated_plugins: bool = opt(
        False,
        "run --enrich plugins without a passing evaluation of their exact version (development only; "
        "_stats.json says so); without it a plugin runs only after `dailyslice plugin evaluate` approved it",
        action="store_true",
    )
    fail_on: str = opt(
        "health",
        "exit 3 (published, unhealthy) when: a health threshold is breached (health); that or any unreadable "
        "file (unreadable); that or any failed record (any); never (health is still reported)",
        choices=("health", "unreadable", "any", "never"),
    )
    main_html: bool = opt(
        False,
        "add the main_html column: the main content with structural tags only (p, h1-h6, lists, tables, "
        "pre/code, blockquote, links), written in the walk that writes plain_text",
        action="store_true",
    )
    robots_agents: tuple[str, ...] = opt(
        (),
        "crawler names (e.g. googlebot, ccbot) whose <meta name=NAME> and 'X-Robots-Tag: NAME: ...' directives "
        "apply besides <meta name=robots> and X-Robots-Tag lines without an agent (docs/robots.md)",
        action="append",
        metavar="NAME[,NAME]",
    )
    minhash_shingle: int = opt(
        5, "words per shingle of the minhash column's signatures (docs/dedup.md)", type=int, metavar="WORDS"
    )
    only: str | None = opt(
        None,
        "read only these archives of --input: a JSON list of their names below it, or @FILE holding one (a batch "
        "of the day, lib/preprocess/batches.py); the output's _inputs.json names them",
        metavar="JSON|@FILE",
    )
    minhash_perms: int = opt(
        128,
        "permutations of a minhash signature, 4*N bytes a page (the index's 16 bands x 8 rows; 0: no "
        "signatures, the column is null and the index clusters nothing)",
        type=int,
        metavar="N",
    )


def plugins_root(options: PreprocessOptions) -> str | None:
    """Where the plugins' evaluations are: ``--root``, else the root of a ``--output`` day folder."""
    if options.root:
        return options.root
    out = options.output or ""
    return layout.root_of(out) if layout.day_of(out) else None


def add_to_stats(out_dir: str, results: list[dict[str, Any]], built_with: dict[str, Any]) -> None:
    """Add to the day's ``_stats.json`` what built it (``built_with``: model, filters, plugins
    with versions and sha256) and its per-file logs (``file_logs``: each page file's log)."""
    path = os.path.join(storage.local_path(out_dir), layout.STATS)
    with open(path) as f:
        doc = json.load(f)
    base = os.path.abspath(storage.local_path(out_dir))
    logs = []
    for r in results:
        for o in r["outputs"]:
            p = os.path.abspath(storage.local_path(o))
            if p.endswith(".parquet") and os.path.basename(os.path.dirname(p)).startswith(layout.LANG_PREFIX):
                rel = os.path.relpath(p, base)
                logs.append({"pages": rel, "log": layout.file_log_name(rel)})
    doc["built_with"] = built_with
    doc["file_logs"] = sorted(logs, key=lambda e: e["pages"])
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)


def robots_agents(given: tuple[str, ...]) -> tuple[str, ...]:
    """``robots`` and the crawler names of ``--robots-agents`` (each "NAME" or "NAME,NAME"), lowercased."""
    names = [n.strip().lower() for a in given for n in a.split(",") if n.strip()]
    return tuple(dict.fromkeys([*directives.DEFAULT_AGENTS, *names]))


def thresholds(options: PreprocessOptions) -> health.Thresholds:
    """The health thresholds, tightened by ``--fail-on``: ``unreadable`` allows no unreadable
    file, ``any`` no failed record (and no unreadable file, which is a failed record too)."""
    t = health.Thresholds(
        options.max_failed_share, options.min_kept_share, options.max_unreadable_share, options.max_empty_text_share
    )
    if options.fail_on in ("unreadable", "any"):
        t = dataclasses.replace(t, max_unreadable_share=0.0)
    if options.fail_on == "any":
        t = dataclasses.replace(t, max_failed_share=0.0)
    return t


def only_archives(listed: list[FileInfo], source: str, only: str | None) -> list[FileInfo]:
    """The archives ``--only`` names among those listed (all without it); a :class:`UsageError` naming
    the ones it names that are not under ``source``, or a value that is not a list of names."""
    try:
        names = batches.read_only(only)
    except (OSError, ValueError) as e:
        raise UsageError(f"preprocess: --only: {e}") from None
    if names is None:
        return listed
    kept = [f for f in listed if archive_name(f.uri, source) in names]
    missing = names - {archive_name(f.uri, source) for f in kept}
    if missing:
        raise UsageError(
            f"preprocess: --only names {len(missing)} archive(s) not under {source}: {sorted(missing)[:5]}"
        )
    return kept


class PreprocessJob(SparkJob):
    name = "preprocess"
    description = "WARC/ARC files of a day -> cleaned, language-tagged Parquet with record offsets"
    input_kind = layout.WARC
    output_kind = layout.PREPROCESSED
    light_driver = True  # the JVM schedules Python tasks; the work is in Python
    context_only = True  # run() needs the SparkContext alone: no SQL session to build first
    checks_input = True  # a missing input folder: exit 2; a day without archives: exit 4
    options_class = PreprocessOptions

    def run(self, spark: Any, options: PreprocessOptions) -> JobResult:
        # shared data first, each checked (a checksum mismatch refuses the run before anything is written)
        model = langid.model_item(options.root)
        built_with = {
            "models": {langid.ITEM: model.record()},
            "filters": {exclusions.TAKEDOWN: exclusions.identity(options.root, options.exclusions)},
        }
        excluded = exclusions.for_job(options.root, options.exclusions)
        plugins = enrich.load([n.strip() for a in options.enrich for n in a.split(",") if n.strip()], PAGE_SCHEMA.names)
        if plugins and options.allow_unevaluated_plugins:
            built_with["plugins"] = {p.name: {"unevaluated": "--allow-unevaluated-plugins"} for p in plugins}
        elif plugins:  # the plugin gate: only a plugin approved for its exact version and sha256 runs
            built_with["plugins"] = gate.require(plugins_root(options), plugins)
        source = resolved(options.input, "input")
        listed = only_archives(storage.list_files(source, ARCHIVE_SUFFIXES), source, options.only)
        files = sorted((f.uri, f.size) for f in listed)  # _stats.json and _errors.jsonl list them in name order
        if not files and (empty := empty_input(self.name, options, "no archives")) is not None:
            return empty
        with self.work_dir(spark, options) as work:
            tmp = work.path
            with self.steps("map"):  # tasks by bytes, biggest first; one small result row per archive or range
                pieces, tasks = plan.plan(
                    files,
                    options.task_bytes,
                    options.open_cost_bytes,
                    spark.sparkContext.defaultParallelism,
                    options.split_bytes,
                )
                settings = TaskSettings(
                    tmp,
                    options.max_page_bytes,
                    options.batch_rows,
                    options.input,
                    excluded,
                    options.file_bytes,
                    tuple(plugins),
                    options.main_html,
                    robots_agents(options.robots_agents),
                    page_column.hasher(options.minhash_shingle, options.minhash_perms),
                    model.path,
                )
                mapper = make_mapper(pieces, tasks, settings)
                results = map_tasks(
                    spark,
                    len(tasks),
                    mapper,
                    RESULT_SCHEMA,
                    options.partitions,
                    max_concurrent=options.s3_max_connections if storage.is_s3(source) else 0,
                )
            with self.steps("write"):
                os.makedirs(os.path.join(tmp, layout.CAPTURES), exist_ok=True)
                remove_strays(tmp, results)
                stats, reported = merge_results(tmp, files, results, thresholds(options))
                add_to_stats(tmp, results, built_with)
                t = stats.totals
                assert t.read == t.kept + t.skipped + t.failed, "counters do not add up"
                storage.write_bytes(os.path.join(tmp, layout.INPUTS), input_record(source, listed))
                hostindex.write(storage.local_path(tmp))  # published with the pages, before _SUCCESS
                work.publish({"job": self.name, "files": len(files), "pages": t.kept, "healthy": stats.ok})

        (log.info if stats.ok else log.error)("%s: %s", options.output, health.describe(stats.health))
        for w in stats.health.get("warnings", []):
            log.warning("%s: %s", options.output, w)
        for name, r in (t.enrich or {}).items():
            if r["failed"]:
                log.warning(
                    "%s: enrichment plugin %s failed on %d of %d pages (%s); those pages are kept without its columns",
                    options.output,
                    name,
                    r["failed"],
                    r["pages"],
                    r["failed_by_reason"],
                )
        summary = RunSummary.of(
            stats,
            input=options.input,
            output=options.output,
            tasks=len(tasks),
            ranges=len(pieces),
            exclusion_rules=len(excluded),
            robots_agents=list(robots_agents(options.robots_agents)),
            error_report_lines=reported,
            steps=self.steps.seconds,
            task_timing=tasktime.summarize(r.get("timing") for r in results),  # docs/preprocess.md
        )
        return JobResult(
            ok=stats.ok or options.fail_on == "never",
            summary=summary.to_dict(),
            output=options.output,
            code=EXIT_UNHEALTHY,
        )


def run(spark: Any, options: PreprocessOptions) -> JobResult:
    """The preprocess job as a function: ``options`` resolved, checked and run in ``spark``
    (None: a session of its own), as ``main`` does with a command line (:meth:`SparkJob.call`)."""
    return PreprocessJob().call(options, spark)


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    return PreprocessJob().main(argv, spark)


if __name__ == "__main__":
    sys.exit(main())
