"""A real day's web graph without Spark: the shared corpus's archives through preprocess's task
function and the index's one-task graph (the very code the jobs run per task)."""

from __future__ import annotations

import pathlib

import pytest

from lib.index.graph_tasks import GraphDirs, whole_day
from lib.preprocess.tasks import TaskSettings, process_task


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
