"""A real day's web graph without Spark: the shared corpus's archives through preprocess's task
function and the index's one-task graph (the very code the jobs run per task)."""

from __future__ import annotations

import datetime as dt
import pathlib
import re
import zlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lib.index.graph_tasks import GraphDirs, whole_day
from lib.links import entries, linkdb
from lib.pages.weburls import normalize_url
from lib.preprocess.tasks import TaskSettings, process_task

D0 = dt.date(2026, 1, 10)


def _day_edges(real: pa.Table, i: int) -> pa.Table:
    """Day ``i``'s edges: the real rows, every third source page missing on odd days, the anchors of
    every fifth source changed on day 2 and later, every seventh source's links nofollow on day 3."""
    src = real.column("src_url").to_pylist()
    h = [zlib.crc32(s.encode()) // 8 for s in src]
    keep = [not (i % 2 and x % 3 == 0) for x in h]
    t = real.filter(pa.array(keep))
    hh = [x for x, k in zip(h, keep) if k]
    if i >= 2:
        a = t.column("anchor_text").to_pylist()
        t = t.set_column(2, "anchor_text", pa.array([f"{v} day{i}" if x % 5 == 0 else v for v, x in zip(a, hh)]))
    if i == 3:
        rel = t.column("rel").to_pylist()
        t = t.set_column(5, "rel", pa.array(["nofollow" if x % 7 == 0 else r for r, x in zip(rel, hh)]))
    return t


_NORM: dict[str, str] = {}


def norm(u: str) -> str:
    if u not in _NORM:
        _NORM[u] = normalize_url(u)
    return _NORM[u]


_DAYS: dict[int, dict] = {}
#: (target, source) -> (source host, target host), as the edges have them
HOSTS: dict[tuple[str, str], tuple[str, str]] = {}


def _per_day(t: pa.Table) -> dict[tuple[str, str], dict]:
    """A day's edge rows per (normalised target, normalised source): followed or not, rels, anchor counts."""
    if id(t) not in _DAYS:
        links: dict[tuple[str, str], dict] = {}
        for r in t.to_pylist():
            k = (norm(r["dst_url"]), norm(r["src_url"]))
            e = links.setdefault(k, {"followed": False, "rels": set(), "a": {}})
            HOSTS.setdefault(k, (r["src_host"].lower(), r["dst_host"].lower()))
            if not r["rel"]:
                e["followed"] = True
            else:
                e["rels"].add(r["rel"])
            a = re.sub(r"[ \t\n\x0B\f\r]+", " ", r["anchor_text"] or "").strip(" ")
            if a:
                e["a"][a] = e["a"].get(a, 0) + 1
        _DAYS[id(t)] = links
    return _DAYS[id(t)]


def fold(days: dict[str, pa.Table], first: str | None, last: str) -> dict[tuple[str, str], dict]:
    """The expected links of the window: per (normalised target, normalised source), the days it was
    seen, and the rel and anchors of its latest day (as lib.links.entries defines them)."""
    per_day: dict[tuple[str, str], dict[str, dict]] = {}
    for day, t in days.items():
        if (first and day < first) or day > last:
            continue
        for k, e in _per_day(t).items():
            per_day.setdefault(k, {})[day] = e
    out = {}
    for k, ds in per_day.items():
        latest = ds[max(ds)]
        out[k] = {
            "first_seen": min(ds),
            "last_seen": max(ds),
            "days_seen": len(ds),
            "rel": None if latest["followed"] else min(latest["rels"]),
            "anchors": [a for a, _ in sorted(latest["a"].items(), key=lambda x: (-x[1], x[0]))][: entries.MAX_ANCHORS],
        }
    return out


@pytest.fixture(scope="session")
def real_edges(corpus, tmp_path_factory) -> pathlib.Path:
    """``graph/edges/part-00000.parquet`` of one day made of every archive of the shared corpus."""
    out = tmp_path_factory.mktemp("links-day")
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".gz", ".warc") and p.is_file())
    pages = out / "pages"
    results = process_task(
        [(str(p), p.stat().st_size) for p in files],
        TaskSettings(out_dir=str(pages), max_page_bytes=10 << 20, batch_rows=500, minhash=None),
    )
    paths = [o for r in results for o in (r.get("outputs") or []) if "_captures" not in o]
    dirs = GraphDirs.under(str(out / "graph"))
    for d in dirs[:3]:
        pathlib.Path(d).mkdir(parents=True)
    n, _, _, _ = whole_day(paths, dirs)
    assert n > 10_000  # a real day's link diversity
    return pathlib.Path(dirs.edges) / "part-00000.parquet"


@pytest.fixture(scope="session")
def days(real_edges, tmp_path_factory):
    """Five real-shaped days as edge files: date -> (table, path); from two fifths of the real
    day's source pages (its link diversity, at less test time)."""
    real = pq.read_table(real_edges)
    real = real.filter(pa.array([zlib.crc32(u.encode()) % 5 < 2 for u in real.column("src_url").to_pylist()]))
    folder = tmp_path_factory.mktemp("link-days")
    out = {}
    for i in range(5):
        day = (D0 + dt.timedelta(days=i)).isoformat()
        t = _day_edges(real, i)
        pq.write_table(t, folder / f"{day}.parquet")
        out[day] = (t, str(folder / f"{day}.parquet"))
    return out


def merge_day(db: str, day: str, path: str, urldb: str) -> dict:
    """One night's merge of the day's edge file, under the URL database's lease, as the catalogue job does it."""
    with linkdb.lock(urldb, "test", 30):
        return linkdb.merge_day(db, dt.date.fromisoformat(day), [path], parts=4)


@pytest.fixture(scope="session")
def merged(days, tmp_path_factory):
    """The five days merged night by night: the database folder and the last night's summary."""
    folder = tmp_path_factory.mktemp("linkdb")
    db, urldb = str(folder / "linkdb"), str(folder / "urldb")
    for day, (_, path) in days.items():
        s = merge_day(db, day, path, urldb)
    return {"root": str(folder), "db": db, "summary": s}
