"""The plugin gate: a candidate enrichment plugin runs on benchmark pages before the nightly run may use it.

The design's Preprocessing Plugins Evaluation Tier: "candidate plugins will perform their
enrichment task on benchmarking data". :func:`evaluate` runs a plugin over every page of the
benchmark archives (the conformance archives committed under ``tests/data/conformance`` and the
shared corpus beside the checkout, ``../shared/corpus``, when present) through the preprocess
page loop itself (:class:`lib.preprocess.archive_pages.FileProcessor`, as a task runs it) and measures:

- crashes: pages on which the plugin raised or returned what its columns cannot hold (any is a refusal);
- throughput: pages per second of the plugin's own time on one core;
- the share of pages it annotates (a value in any of its columns);
- precision and recall against the expected outputs the plugin ships (``enrich_expected`` on
  the plugin function: a gzipped JSON Lines file beside its module, one line per benchmark page:
  ``{"archive", "record_id", "url", "values": {column: value}}``), where it ships them.

A plugin is approved when every measure meets the thresholds (:class:`Thresholds`; a root's
``shared/auxiliary/plugins/thresholds.json`` sets them). The evaluation is written to
``ROOT/shared/auxiliary/plugins/<name>/<version>/evaluation.json``, bound to the plugin's version
and the sha256 of its module's source (:func:`identity`); :func:`require` is the nightly run's
check: no evaluation for that exact version and sha256, or one that refused it, and the run
stops before it starts, saying which and why.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import fnmatch
import gzip
import hashlib
import importlib.util
import json
import os
import pathlib
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, entry_points, version
from typing import Any, Callable, Iterator, Sequence

from lib.errors import ConfigError, UsageError
from lib.preprocess import enrich
from lib.preprocess.archive_pages import FileProcessor
from lib.store import atomic, layout, storage, update_log

EXPECTED_ATTR = "enrich_expected"  # a plugin function's attribute: its expected outputs' file name
EVALUATION = "evaluation.json"
THRESHOLDS = "thresholds.json"  # ROOT/shared/auxiliary/plugins/thresholds.json
CHECKOUT = pathlib.Path(__file__).resolve().parents[2]
NOT_ARCHIVES = ("*.md", "LICENSE", "*.cdx", "*.cdxj", "*.json", "*.txt")


@dataclass(frozen=True)
class Thresholds:
    """What a plugin must meet to be approved."""

    max_failed_pages: int = 0  # crash-free: a plugin that fails on a benchmark page is refused
    min_pages: int = 50  # a benchmark smaller than this proves nothing
    min_pages_per_second: float = 20.0  # per core, the plugin's own time
    min_annotated_share: float = 0.0
    min_precision: float = 0.95  # against the plugin's expected outputs, where it ships them
    min_recall: float = 0.95

    @classmethod
    def for_root(cls, root: str | None) -> Thresholds:
        """The defaults, overridden by ROOT's ``plugins/thresholds.json`` (a ConfigError names a bad key)."""
        uri = layout.auxiliary_path(root, layout.PLUGINS, THRESHOLDS) if root else None
        if not uri or not storage.exists(uri):
            return cls()
        try:
            given = json.loads(storage.read_bytes(uri))
            return cls(**{k: type(getattr(cls(), k))(v) for k, v in given.items()})
        except (ValueError, TypeError, AttributeError) as e:
            known = ", ".join(f.name for f in dataclasses.fields(cls))
            raise ConfigError(f"{uri}: not plugin thresholds ({e}); keys: {known}") from None


def _target(name: str) -> str:
    known = enrich.available()
    if name not in known:
        raise UsageError(f"unknown enrichment plugin {name!r}; installed: {', '.join(sorted(known)) or 'none'}")
    return known[name]


def identity(name: str) -> dict[str, str]:
    """The plugin's exact identity: entry-point target, version (its distribution's; the project's
    for a built-in) and the sha256 of its module's source file."""
    target = _target(name)
    module = target.partition(":")[0]
    ver = None
    for ep in entry_points(group=enrich.GROUP):
        if ep.name == name and ep.value == target and ep.dist is not None:
            ver = ep.dist.version
    if ver is None:
        try:
            ver = version("daily-index-slice")
        except PackageNotFoundError:  # a plain checkout: the version pyproject.toml names
            ver = "0+checkout"
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        raise UsageError(f"enrichment plugin {name!r}: no source file for module {module}")
    with open(spec.origin, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    return {"plugin": name, "target": target, "version": ver, "sha256": sha, "source": spec.origin}


def evaluation_path(root: str, name: str, ver: str) -> str:
    """``ROOT/shared/auxiliary/plugins/<name>/<version>/evaluation.json``."""
    return layout.auxiliary_path(root, layout.PLUGINS, name, ver, EVALUATION)


def benchmark_archives(extra: Sequence[str] = (), shared: str | None = None) -> list[tuple[str, str]]:
    """(corpus, path) of every benchmark archive: the committed conformance archives, the shared
    corpus (``shared``, else ``$DAILYSLICE_SHARED/corpus``, else ``../shared/corpus`` beside the
    checkout) when it exists, and the folders in ``extra``."""
    base = os.environ.get("DAILYSLICE_SHARED")
    corpora = [("conformance", str(CHECKOUT / "tests" / "data" / "conformance"))]
    beside = os.path.join(base, "corpus") if base else str(CHECKOUT.parent / "shared" / "corpus")
    corpora.append(("shared", shared or beside))
    corpora += [(os.path.basename(e.rstrip("/")), e) for e in extra]
    out = []
    for corpus, folder in corpora:
        for dirpath, _, names in sorted(os.walk(folder)):
            for n in sorted(names):
                if not any(fnmatch.fnmatch(n, p) for p in NOT_ARCHIVES):
                    out.append((corpus, os.path.join(dirpath, n)))
    return out


def benchmark_pages(
    archives: Sequence[tuple[str, str]], plugins: list[enrich.Plugin], with_html: bool = False
) -> Iterator[tuple[str, str, dict[str, Any], str | None, enrich.Enrichment]]:
    """(corpus, archive, page row, its HTML when asked, the archive's Enrichment) of each kept
    page, as a preprocess task reads it."""
    for corpus, path in archives:
        htmls: list[str] = []

        def keep_html(page: enrich.PageInput, htmls: list[str] = htmls) -> dict[str, Any]:
            htmls.append(page.html)  # a plugin without columns: it sees each kept page, in row order
            return {}

        record = enrich.Plugin("_html", keep_html, ())
        e = enrich.Enrichment([*plugins, record] if with_html else list(plugins))
        # named by its file name: an ARC record's id (made of the archive's name and offset) must not
        # depend on where the checkout or the shared folder lies, or the expected outputs' keys would
        proc = FileProcessor(path, enrich=e, name=os.path.basename(path))
        try:
            with open(path, "rb") as f:
                rows = list(proc.pages(f))
        except Exception:  # an archive our reader refuses whole has no page for any plugin
            continue
        for i, row in enumerate(rows):
            yield corpus, path, row, htmls[i] if with_html else None, e


def _key(archive: str, row: dict[str, Any]) -> str:
    return f"{os.path.basename(archive)}#{row.get('record_id') or row.get('url')}"


def expected_outputs(plugin: enrich.Plugin) -> dict[str, dict[str, Any]] | None:
    """The plugin's expected outputs by page key, None when it ships none."""
    name = getattr(plugin.fn, EXPECTED_ATTR, None)
    if not name:
        return None
    module = importlib.util.find_spec(plugin.fn.__module__)
    path = os.path.join(os.path.dirname(module.origin or ""), name) if module else name
    out = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            out[_key(d["archive"], d)] = d["values"]
    return out


def write_expected(name: str, reference: Callable[[str], dict[str, Any]], dest: str) -> int:
    """Write plugin ``name``'s expected outputs file: ``reference(html)`` (an independent
    implementation of what the plugin should return) on every benchmark page; returns the pages."""
    enrich.load([name])  # an unknown name fails before the benchmark runs
    lines = []
    for _, archive, row, html, _ in benchmark_pages(benchmark_archives(), [], with_html=True):
        lines.append(
            json.dumps(
                {
                    "archive": os.path.basename(archive),
                    "record_id": row.get("record_id"),
                    "url": row.get("url"),
                    "values": reference(html or ""),
                },
                sort_keys=True,
            )
            + "\n"
        )
    with atomic.atomic_file(dest, "wb") as f:
        f.write(gzip.compress("".join(lines).encode(), mtime=0))
    return len(lines)


def _measure(plugin: enrich.Plugin, archives: Sequence[tuple[str, str]]) -> dict[str, Any]:
    expected = expected_outputs(plugin)
    cols = [f.name for f in plugin.fields]
    pages = annotated = compared = tp = predicted = positives = 0
    per_corpus: dict[str, int] = {}
    report: dict[str, Any] = {}
    seen: set[int] = set()
    for corpus, archive, row, _, e in benchmark_pages(archives, [plugin]):
        pages += 1
        per_corpus[corpus] = per_corpus.get(corpus, 0) + 1
        got = {c: row.get(c) for c in cols}
        hit = any(v is not None for v in got.values())
        annotated += hit
        if id(e) not in seen:  # each archive's Enrichment once
            seen.add(id(e))
            enrich.merge_reports(report, e.report())
        want = expected.get(_key(archive, row)) if expected is not None else None
        if want is not None:
            compared += 1
            wanted = any(want.get(c) is not None for c in cols)
            positives += wanted
            predicted += hit
            tp += hit and wanted and all(got[c] == want.get(c) for c in cols)
    r = report.get(plugin.name, {"pages": 0, "seconds": 0.0, "failed": 0, "failed_by_reason": {}, "samples": []})
    out: dict[str, Any] = {
        "pages": pages,
        "pages_by_corpus": per_corpus,
        "failed": r["failed"],
        "failed_by_reason": r["failed_by_reason"],
        "samples": r["samples"],
        "plugin_seconds": r["seconds"],
        "pages_per_second_per_core": round(pages / r["seconds"], 1) if r["seconds"] > 0 else None,
        "annotated": annotated,
        "annotated_share": round(annotated / pages, 4) if pages else 0.0,
        "expected_outputs": expected is not None,
    }
    if expected is not None:
        out |= {
            "compared": compared,
            "precision": round(tp / predicted, 4) if predicted else (1.0 if not positives else 0.0),
            "recall": round(tp / positives, 4) if positives else 1.0,
        }
    return out


def verdict(m: dict[str, Any], t: Thresholds) -> list[str]:
    """Why the measures ``m`` fall short of ``t`` (empty: approved)."""
    why = []
    if m["failed"] > t.max_failed_pages:
        why.append(f"failed on {m['failed']} benchmark pages ({m['failed_by_reason']}), at most {t.max_failed_pages}")
    if m["pages"] < t.min_pages:
        why.append(f"{m['pages']} benchmark pages, fewer than {t.min_pages}")
    pps = m["pages_per_second_per_core"]
    if pps is not None and pps < t.min_pages_per_second:
        why.append(f"{pps} pages/s per core, below {t.min_pages_per_second}")
    if m["annotated_share"] < t.min_annotated_share:
        why.append(f"annotated {m['annotated_share']:.1%} of pages, below {t.min_annotated_share:.1%}")
    for k, least in (("precision", t.min_precision), ("recall", t.min_recall)):
        if k in m and m[k] < least:
            why.append(f"{k} {m[k]} against its expected outputs, below {least}")
    return why


def evaluate(root: str, name: str, extra: Sequence[str] = (), thresholds: Thresholds | None = None) -> dict[str, Any]:
    """Run plugin ``name`` over the benchmark, write its evaluation (approved or not) under ROOT
    and log it in ``logs.csv``; returns the evaluation."""
    ident = identity(name)
    plugin = enrich.load([name])[0]
    t = thresholds or Thresholds.for_root(root)
    archives = benchmark_archives(extra)
    m = _measure(plugin, archives)
    why = verdict(m, t)
    doc = ident | {
        "evaluated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "benchmark": [f"{corpus}:{os.path.basename(p)}" for corpus, p in archives],
        "measures": m,
        "thresholds": dataclasses.asdict(t),
        "approved": not why,
        "reasons": why,
    }
    dest = evaluation_path(root, name, ident["version"])
    storage.write_bytes(dest, json.dumps(doc, indent=1, sort_keys=True).encode(), fsync=True)
    state = "approved" if not why else "refused: " + "; ".join(why)
    update_log.record(root, "plugin", name, ident["version"], f"sha256={ident['sha256']} {state}")
    return doc


def require(root: str | None, plugins: Sequence[enrich.Plugin]) -> dict[str, dict[str, str]]:
    """The nightly run's check: each plugin has an approving evaluation under ROOT for its exact
    version and sha256, else UsageError saying why; returns what ``_stats.json`` keeps of each."""
    out = {}
    for p in plugins:
        ident = identity(p.name)
        how = f"run `dailyslice plugin evaluate {p.name} --root {root}`"
        if not root:
            raise UsageError(f"enrichment plugin {p.name!r}: give --root, where its evaluation is kept")
        path = evaluation_path(root, p.name, ident["version"])
        if not storage.exists(path):
            raise UsageError(
                f"enrichment plugin {p.name!r} version {ident['version']} has no evaluation ({path} missing): {how}"
            )
        doc = json.loads(storage.read_bytes(path))
        if doc.get("sha256") != ident["sha256"]:
            raise UsageError(
                f"enrichment plugin {p.name!r}: {path} evaluated sha256 {doc.get('sha256')}, the installed "
                f"{ident['source']} is {ident['sha256']} (changed since): {how}"
            )
        if not doc.get("approved"):
            raise UsageError(f"enrichment plugin {p.name!r} was refused by its evaluation {path}: {doc.get('reasons')}")
        out[p.name] = {"version": ident["version"], "sha256": ident["sha256"], "evaluation": path}
    return out
