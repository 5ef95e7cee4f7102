"""A real day's web graph without Spark: the shared corpus's archives through preprocess's task
function and the index's one-task graph (the very code the jobs run per task)."""

from __future__ import annotations

import datetime as dt
import pathlib
import zlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lib.index.graph_tasks import GraphDirs, whole_day
from lib.links import store
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
    with store.lock(urldb, "test", 30):
        return store.merge_day(db, dt.date.fromisoformat(day), [path], parts=4)


@pytest.fixture(scope="session")
def merged(days, tmp_path_factory):
    """The five days merged night by night: the database folder and the last night's summary."""
    folder = tmp_path_factory.mktemp("linkdb")
    db, urldb = str(folder / "linkdb"), str(folder / "urldb")
    for day, (_, path) in days.items():
        s = merge_day(db, day, path, urldb)
    return {"root": str(folder), "db": db, "summary": s}
