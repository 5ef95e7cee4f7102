"""Daily report: one self-contained HTML page with inline SVG plots (matplotlib, the ``report`` extra).

Plots: records by language, MIME type, HTTP status, top hosts, duplicate share, page
sizes and index shard sizes; tables: headline counts and the run's errors. Every plot is
an ``<svg>`` whose first child is a ``<title>`` naming it, inside a ``<figure>``.
"""

from __future__ import annotations

import datetime as dt
import html
import io
import json
import re
from typing import Any, Sequence

from lib.catalogue import query
from lib.preprocess import health
from lib.store import layout, storage

plt: Any  # matplotlib.pyplot, or None without the report extra
try:
    import matplotlib

    matplotlib.use("Agg", force=False)  # before pyplot: no GUI backend, the plots go into HTML
    import matplotlib.pyplot as _pyplot

    plt = _pyplot
except ImportError:  # the report extra is not installed: each plot's data is written as a table
    plt = None


REPORT = "report.html"


def _fig_svg(fig: Any, title: str, slug: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML prolog and doctype: inline SVG needs neither
    head_end = svg.index(">") + 1
    opening = svg[:head_end].replace("<svg", f'<svg role="img" data-plot="{slug}" aria-label="{html.escape(title)}"', 1)
    return opening + f"<title>{html.escape(title)}</title>" + svg[head_end:]


def _new_fig(height: float = 3.2):
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "catalogue", "font.size": 9})
    return plt.subplots(figsize=(6.4, height))


#: what stands in a plot's place where matplotlib is missing
NO_PLOTS = "plots need the report extra: pip install 'daily-index-slice[report]'"


def bar_plot(title: str, slug: str, labels: list[str], values: Sequence[float], xlabel: str = "records") -> str:
    """Horizontal bar chart as an inline SVG string (an empty one says 'no data'); without matplotlib
    (the report extra), the same data as a table, so the report loses no figure."""
    if plt is None:
        rows = [[str(label), f"{v:,.0f}"] for label, v in zip(labels, values)] or [["no data", ""]]
        return f'<figcaption data-plot="{slug}">{html.escape(title)} ({html.escape(NO_PLOTS)})</figcaption>' + _table(
            ["", xlabel], rows
        )
    fig, ax = _new_fig(max(1.8, 0.28 * len(labels) + 0.9))
    ax.set_title(title)
    if labels:
        y = list(range(len(labels)))[::-1]
        ax.barh(y, values, color="#3b6ea5")
        ax.set_yticks(y, [str(x)[:48] for x in labels])
        ax.set_xlabel(xlabel)
        for yi, v in zip(y, values):
            ax.annotate(f"{v:,.0f}", (v, yi), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
    else:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
    return _fig_svg(fig, title, slug)


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def size_buckets(rows: list[dict[str, int]]) -> tuple[list[str], list[int]]:
    """Labels/counts for log2 size buckets (bucket -1 = empty body)."""
    labels, counts = [], []
    for r in sorted(rows, key=lambda r: r["bucket"]):
        b = r["bucket"]
        labels.append("0 B" if b < 0 else f"{_human(2**b)}–{_human(2 ** (b + 1))}")
        counts.append(r["count"])
    return labels, counts


def shard_sizes(index_day: str | None) -> list[tuple[str, int]]:
    """(TLD/LANG/file, bytes) of every CIFF shard of the day's index output."""
    if not index_day:
        return []
    files = [
        f
        for f in storage.list_files(index_day, suffixes=(".ciff.gz", ".ciff"))
        if f.uri.rsplit("/", 1)[-1].startswith("index-")
    ]  # not the anchor-text CIFFs beside them
    base = storage.normalize(index_day).rstrip("/") + "/"
    return [(f.uri[len(base) :] if f.uri.startswith(base) else f.uri, f.size) for f in files]


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _flat(d: dict[str, Any], prefix: str = "") -> list[list[Any]]:
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            out += _flat(v, f"{prefix}{k}.")
        elif not isinstance(v, list):
            out.append([prefix + k, v])
    return out


def health_banner(day_health: dict[str, Any] | None) -> str:
    """The report's first line: a red alert when the day is unhealthy (shares, breached
    thresholds, top reasons, sample offsets), a plain green line when it is healthy, a
    neutral one when ``_stats.json`` has no health block."""
    if not day_health:
        return '<p id="health" class="health none">No health assessment in _stats.json.</p>'
    lines = [html.escape(x) for x in health.describe(day_health).splitlines()]
    if day_health.get("ok"):
        return f'<p id="health" class="health ok">Healthy day: {lines[1]}</p>'
    rest = "".join(f"<li>{x}</li>" for x in lines[1:])
    return (
        f'<div id="health" class="health bad" role="alert"><strong>Unhealthy day</strong>: '
        f"{lines[0]}<ul>{rest}</ul></div>"
    )


def _noindex_section(block: dict[str, Any] | None) -> str:
    """The pages that say noindex today and were published on an earlier day (not purged by
    themselves: the operator decides, docs/robots.md)."""
    if block is None:
        return ""
    rows = [[html.escape(r["url"]), r["day"]] for r in block["urls"]]
    listed = _table(["URL", "last published"], rows) if rows else "<p>None.</p>"
    more = block["published_earlier"] - len(rows)
    return f"""<section id="noindex"><h2>Pages that now say noindex</h2>
<p>{block["noindex_pages"]} pages of the day say noindex and are left out of its index;
{block["published_earlier"]} of them were published on one of the {block["lookback_days"]} days before.
Those days keep them until they are purged: add the URLs to the exclusion list and run
<code>dailyslice purge</code>.</p>{listed}{f"<p>and {more} more</p>" if more > 0 else ""}</section>"""


def index_dedup(index_day: str | None) -> dict[str, Any]:
    """The index day's near-duplicate counts (``_stats.json`` ``dedup``; {} without them)."""
    try:
        raw = storage.read_bytes(storage.join(index_day, "_stats.json")) if index_day else b"{}"
    except (OSError, FileNotFoundError):
        return {}
    return json.loads(raw).get("dedup") or {}


def _age(seconds: float | None) -> str:
    """An age in seconds as a person reads it: ``0 s``, ``3.5 h``, ``2.0 d``."""
    if seconds is None:
        return "n/a"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


def _completeness_section(block: dict[str, Any] | None) -> str:
    """How complete the day's pages are in time: their embedded resources' nearest captures over
    every day (lib.catalogue.completeness.day_summary), for a sample of the pages."""
    if block is None:
        return ""
    n, got = block["resources"], block["captured"]
    ages = block["age_seconds"]
    kinds = _table(
        ["kind", "resources", "captured on some day"],
        [[k, v["resources"], v["captured"]] for k, v in block["by_kind"].items()],
    )
    least = _table(
        ["page", "resources", "captured", "median age"],
        [
            [html.escape(p["url"] or ""), p["resources"], p["captured"], _age(p["age_seconds"]["median"])]
            for p in block["least_complete"]
        ],
    )
    share = f"{100 * got / n:.1f}%" if n else "n/a"
    return f"""<section id="completeness"><h2>How complete the pages are in time</h2>
<p>{block["pages_with_resources"]} of {block["pages"]} pages embed resources (images, videos, iframes, scripts,
stylesheets); for {block["sampled"]} of them (a seeded sample), {got} of {n} resources ({share}) have a capture on
some day of the capture index, {block["same_day"]} within a day of the page's. Ages of the nearest captures:
min {_age(ages["min"])}, median {_age(ages["median"])}, max {_age(ages["max"])}.
<code>GET /capture/completeness/RECORD_ID</code> answers for one page.</p>{kinds}
<h3>Least complete pages of the sample</h3>{least}</section>"""


def render(stats: dict[str, Any], shards: list[tuple[str, int]]) -> str:
    """The report page for one day's ``query.stats`` and index shard sizes (with ``delta``, the
    URL database's changes of the day, and ``dedup``, the index's near-duplicate counts, when
    ``stats`` has them)."""

    def kv(rows: list[dict[str, Any]]) -> tuple[list[str], list[float]]:
        return [r["key"] for r in rows], [r["count"] for r in rows]

    dup = stats.get("duplicates") or {}
    dup_labels = [k for k in ("unique", "unchanged", "duplicate", "revisit") if k in dup]
    plots = [
        bar_plot("Pages by language", "language", *kv(stats["by_language"]), xlabel="pages"),
        bar_plot("Captures by MIME type", "mime", *kv(stats["by_mime"])),
        bar_plot("Captures by HTTP status", "status", *kv(stats["by_status"])),
        bar_plot("Top hosts", "hosts", *kv(stats["top_hosts"])),
        bar_plot(
            "Duplicate share (same URL and payload digest as earlier that day or the day before)",
            "duplicates",
            dup_labels,
            [dup[k] for k in dup_labels],
        ),
        bar_plot("Page sizes (decoded HTTP body)", "page-sizes", *size_buckets(stats["page_sizes"]), xlabel="pages"),
        bar_plot("Index shard sizes", "shards", [s[0] for s in shards], [s[1] / 1024 for s in shards], xlabel="KiB"),
    ]
    errors = stats.get("errors", {})
    total_dup = sum(dup.get(k, 0) for k in ("unchanged", "duplicate", "revisit"))
    share = f"{100 * total_dup / stats['captures']:.1f}%" if stats.get("captures") else "n/a"
    head = _table(
        ["measure", "value"],
        [
            ["captures (response/revisit/resource records)", stats.get("captures", 0)],
            ["distinct URLs", stats.get("urls", 0)],
            ["pages (Parquet rows)", stats.get("pages", 0)],
            ["duplicate share", share],
            ["index shards", f"{len(shards)} ({_human(sum(s[1] for s in shards))})"],
            ["error report lines (_errors.jsonl)", errors.get("total", 0)],
            *_changes(stats),
        ],
    )
    err = (
        _table(["reason", "records"], [[k, v] for k, v in errors.get("by_reason", {}).items()])
        if errors.get("by_reason")
        else "<p>None reported.</p>"
    )
    run = _table(["counter", "value"], _flat(stats.get("run") or {})) if stats.get("run") else "<p>No _stats.json.</p>"
    signals = _noindex_section(stats.get("now_noindex")) + _completeness_section(stats.get("completeness"))
    figs = "\n".join(f"<figure>{p}</figure>" for p in plots)
    day = html.escape(stats["day"])
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Daily report {day}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; color: #222; }}
figure {{ display: inline-block; margin: 0.5em; vertical-align: top; }}
figure svg {{ max-width: 640px; height: auto; }}
table {{ border-collapse: collapse; margin: 0.5em 0; }} td, th {{ border: 1px solid #ccc; padding: 2px 8px;
text-align: left; }}
.health {{ padding: 0.6em 1em; margin: 0 0 1em 0; border-radius: 4px; }}
.health.bad {{ background: #c62828; color: #fff; }} .health.ok {{ background: #e8f5e9; color: #1b5e20; }}
.health.none {{ background: #f2f2f2; color: #444; }}
</style></head>
<body>
{health_banner(stats.get("health"))}
<h1>Daily report {day}</h1>
<p>Generated {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC from the preprocess output, captures
and index shards of the day.</p>
<section id="summary"><h2>Summary</h2>{head}</section>
<section id="plots"><h2>Plots</h2>
{figs}
</section>
<section id="errors"><h2>Errors and warnings (_errors.jsonl, by reason)</h2>{err}
<h3>Run counters (_stats.json)</h3>{run}</section>
{signals}
</body></html>
"""


def _changes(stats: dict[str, Any]) -> list[list[Any]]:
    """Summary rows of the day's delta (delta/) and near-duplicate clusters (docs/dedup.md)."""
    rows: list[list[Any]] = []
    d = stats.get("delta")
    if d:
        rows += [
            ["URLs first seen (delta/)", d.get("new", 0)],
            ["URLs changed (new digest and another text)", d.get("changed", 0)],
            ["URLs with a new digest, same text (not listed)", d.get("same_text", 0)],
            ["URLs gone (404/410, or purged since the delta before)", d.get("gone", 0)],
        ]
    n = stats.get("dedup")
    if n:
        rows += [
            ["pages judged for near-duplicates (indexed)", f"{n.get('judged', 0)} of {n.get('pages', 0)}"],
            ["near-duplicate clusters (2+ pages)", f"{n.get('clusters', 0)} ({n.get('pages_in_clusters', 0)} pages)"],
        ]
        if n.get("across_days"):  # the index ran with a signature store (docs/dedup.md, "Across days")
            x = n["across_days"]
            rows.append(
                [
                    "pages repeating an earlier day (dup_of)",
                    f"{x.get('pages_with_earlier_copy', 0)} (against {x.get('matched_days', 0)} kept days)",
                ]
            )
    return rows


def build_report(
    root: str,
    day: dt.date,
    index_day: str | None = None,
    day_path: str | None = None,
    now_noindex: dict[str, Any] | None = None,
    delta: dict[str, int] | None = None,
    completeness: dict[str, Any] | None = None,
) -> str:
    """HTML of the report for ``day`` from its preprocess folder (default
    ROOT/preprocessed/YYYY-MM/DD) and index shards (default ROOT/index/YYYY-MM/DD);
    ``now_noindex``: :func:`lib.catalogue.noindex.report`'s block, listed when given;
    ``completeness``: :func:`lib.catalogue.completeness.day_summary`'s block, a section when given."""
    if index_day is None:
        index_day = layout.day_path(root, layout.INDEX, day)
    if day_path:
        stats = query.day_stats(day_path, day, prev_path=query.previous_day_path(root, day))
    else:
        stats = query.stats(root, day)
    if now_noindex is not None:
        stats["now_noindex"] = now_noindex
    stats = dict(stats, delta=delta, dedup=index_dedup(index_day), completeness=completeness)
    return render(stats, shard_sizes(index_day))


def count_plots(page: str) -> list[str]:
    """Titles of the plots in a report page (each ``<svg ...><title>T</title>``)."""
    return [html.unescape(t) for t in re.findall(r"<svg[^>]*>\s*<title>([^<]*)</title>", page)]


def write_report(
    root: str,
    day: dt.date,
    dest: str,
    index_day: str | None = None,
    day_path: str | None = None,
    now_noindex: dict[str, Any] | None = None,
    delta: dict[str, int] | None = None,
    completeness: dict[str, Any] | None = None,
) -> str:
    """Render and write the report atomically to ``dest`` (a file URI/path); returns dest."""
    page = build_report(root, day, index_day, day_path, now_noindex, delta, completeness)
    storage.write_bytes(dest, page.encode("utf-8"))
    return dest
