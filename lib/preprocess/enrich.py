"""Enrichment plugins: functions that add columns to each page (the OpenWebSearch.eu
pipeline's enrichment modules, Resilipipe's ``HTMLModule``).

A plugin is a function registered under the entry-point group ``dailyslice.enrichers`` and
marked with :func:`enricher`, which declares its columns and their Arrow types::

    @enricher(word_count=pa.int32())
    def words(page: PageInput) -> dict:
        return {"word_count": len(page.text.split())}

It gets a :class:`PageInput` per kept page (the URL, the decoded HTML, its parsed tree, the
main text, the HTTP and WARC headers) and returns a dict of (some of) its declared columns.
Plugins are opt-in: a run uses only those it names (``--enrich NAME[,NAME]``). A plugin that
raises, returns a column it did not declare, or a value its type cannot hold loses its columns
on that page (null) and is counted per reason; the page is kept. :class:`Enrichment` keeps
each plugin's counts and the seconds it spent, which the job's summary and ``_stats.json``
report (:func:`merge_reports`).
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Callable, Mapping, Protocol, Sequence, TypeGuard

import pyarrow as pa
from selectolax.lexbor import LexborHTMLParser

from lib.errors import UsageError

GROUP = "dailyslice.enrichers"
PLUGIN_KEY = "dailyslice.enricher"  # field metadata of a plugin's column (lib.index.owi.plugin_fields)
#: plugins of this project: found even where its entry points are not installed (a plain checkout)
BUILTIN = {"microdata": "lib.preprocess.microdata:microdata"}
MAX_SAMPLES = 5  # failures kept per plugin and file with their URL and message


class PageInput:
    """What a plugin sees of one page. ``tree`` (selectolax's lexbor parse of ``html``) is
    parsed on first use and shared by the plugins of the page."""

    __slots__ = ("url", "html", "text", "headers", "warc_headers", "_tree")

    def __init__(self, url: str, html: str, text: str, headers: Mapping[str, str], warc_headers: Mapping[str, str]):
        self.url, self.html, self.text = url, html, text
        self.headers, self.warc_headers = headers, warc_headers
        self._tree: LexborHTMLParser | None = None

    @property
    def tree(self) -> Any:
        if self._tree is None:
            self._tree = LexborHTMLParser(self.html)
        return self._tree


class Enricher(Protocol):
    """A plugin function as :func:`enricher` marks it: the columns it returns ride on it."""

    enrich_columns: dict[str, pa.DataType]

    def __call__(self, page: PageInput, /) -> Mapping[str, Any]: ...


def is_enricher(fn: object) -> TypeGuard[Enricher]:
    """Whether ``fn`` is a function marked by :func:`enricher` (with its columns)."""
    columns = getattr(fn, "enrich_columns", None)
    return callable(fn) and isinstance(columns, dict) and bool(columns)


def enricher(**columns: pa.DataType) -> Callable[[Callable[[PageInput], Mapping[str, Any]]], Enricher]:
    """Mark a function as a plugin that returns ``columns`` (name=Arrow type)."""
    if not columns or not all(isinstance(t, pa.DataType) for t in columns.values()):
        raise TypeError("enricher(...) takes the plugin's columns as name=pyarrow type")

    def mark(fn: Callable[[PageInput], Mapping[str, Any]]) -> Enricher:
        vars(fn)["enrich_columns"] = dict(columns)  # the mark is the function's own attribute: it pickles with it
        if not is_enricher(fn):
            raise TypeError(f"enricher(...) marks functions, not {type(fn).__name__}")
        return fn

    return mark


@dataclass(frozen=True)
class Plugin:
    name: str
    fn: Callable[[PageInput], Mapping[str, Any]]
    fields: tuple[pa.Field, ...]


def available() -> dict[str, str]:
    """Plugin name -> ``module:function`` of every installed plugin (the built-ins included)."""
    found = dict(BUILTIN)
    found.update({ep.name: ep.value for ep in entry_points(group=GROUP)})
    return found


def _load(name: str, target: str) -> Plugin:
    module, _, attr = target.partition(":")
    fn: Any = importlib.import_module(module)
    for part in attr.split("."):
        fn = getattr(fn, part)
    if not is_enricher(fn):
        raise UsageError(f"enrichment plugin {name!r} ({target}) declares no columns: mark it with @enricher(col=type)")
    return Plugin(name, fn, tuple(pa.field(c, t) for c, t in fn.enrich_columns.items()))


def load(names: list[str], reserved: Sequence[str] = ()) -> list[Plugin]:
    """The plugins named (in that order); UsageError for an unknown name, a plugin without
    declared columns, or a column another plugin or the page schema (``reserved``) has."""
    known = available()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(
            f"unknown enrichment plugin(s) {', '.join(unknown)}; installed: {', '.join(sorted(known)) or 'none'}"
        )
    plugins = [_load(n, known[n]) for n in dict.fromkeys(names)]
    taken = set(reserved)
    for p in plugins:
        for f in p.fields:
            if f.name in taken:
                raise UsageError(
                    f"enrichment plugin {p.name!r}: column {f.name!r} is already a page column or another plugin's"
                )
            taken.add(f.name)
    return plugins


def schema_with(schema: pa.Schema, plugins: list[Plugin]) -> pa.Schema:
    """``schema`` with the plugins' columns appended, each marked with its plugin's name (field
    metadata ``dailyslice.enricher``: how the index tells them from page columns)."""
    for p in plugins:
        for f in p.fields:
            schema = schema.append(f.with_metadata({PLUGIN_KEY: p.name}))
    return schema


@dataclass
class _Counts:
    pages: int = 0
    seconds: float = 0.0
    failed: dict[str, int] = field(default_factory=dict)
    samples: list[dict[str, str]] = field(default_factory=list)


class Enrichment:
    """The plugins of one run applied to the pages of one file, with their counters."""

    def __init__(self, plugins: list[Plugin]):
        self.plugins = plugins
        self.counts = {p.name: _Counts() for p in plugins}

    def __bool__(self) -> bool:
        return bool(self.plugins)

    def _failed(self, c: _Counts, reason: str, url: str, detail: str) -> None:
        c.failed[reason] = c.failed.get(reason, 0) + 1
        if len(c.samples) < MAX_SAMPLES:
            c.samples.append({"url": url, "reason": reason, "detail": detail[:300]})

    def run(self, page: PageInput) -> dict[str, Any]:
        """Every plugin's columns for ``page`` (null where a plugin failed)."""
        out: dict[str, Any] = {}
        for p in self.plugins:
            c = self.counts[p.name]
            c.pages += 1
            t = time.perf_counter()
            try:
                got = p.fn(page)
                bad = self._check(p, got)  # the check's cost is the plugin's: its values need it
            except Exception as e:  # a plugin's bug costs its columns on this page, never the page
                got, bad = None, (type(e).__name__, f"{type(e).__name__}: {e}")
            c.seconds += time.perf_counter() - t
            vals = {f.name: None for f in p.fields}
            if bad:
                self._failed(c, bad[0], page.url, bad[1])
            elif got:
                vals.update(got)
            out.update(vals)
        return out

    @staticmethod
    def _check(p: Plugin, got: Any) -> tuple[str, str] | None:
        """(reason, detail) when ``got`` does not fit the declared columns, else None (None: no values)."""
        if got is None:
            return None
        if not isinstance(got, Mapping):
            return "not_a_dict", f"returned {type(got).__name__}, not a dict of columns"
        declared = {f.name: f.type for f in p.fields}
        extra = [k for k in got if k not in declared]
        if extra:
            return "undeclared_column", f"returned undeclared column(s) {extra}"
        for k, v in got.items():
            try:
                pa.array([v], declared[k])
            except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
                return f"bad_value:{k}", f"{k}={v!r:.80} does not fit {declared[k]}: {e}"
        return None

    def report(self) -> dict[str, Any]:
        """Per plugin: pages, seconds, failed, failed_by_reason, samples."""
        return {
            n: {
                "pages": c.pages,
                "seconds": round(c.seconds, 6),
                "failed": sum(c.failed.values()),
                "failed_by_reason": dict(c.failed),
                "samples": list(c.samples),
            }
            for n, c in self.counts.items()
        }


def merge_reports(total: dict[str, Any], one: Mapping[str, Any]) -> dict[str, Any]:
    """Add one file's :meth:`Enrichment.report` to ``total`` (the day's); returns ``total``."""
    for name, r in one.items():
        t = total.setdefault(name, {"pages": 0, "seconds": 0.0, "failed": 0, "failed_by_reason": {}, "samples": []})
        t["pages"] += r["pages"]
        t["seconds"] = round(t["seconds"] + r["seconds"], 6)
        t["failed"] += r["failed"]
        for k, v in r["failed_by_reason"].items():
            t["failed_by_reason"][k] = t["failed_by_reason"].get(k, 0) + v
        t["samples"] = (t["samples"] + r["samples"])[:MAX_SAMPLES]
    return total
