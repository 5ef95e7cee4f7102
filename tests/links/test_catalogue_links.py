"""The catalogue job's link database step (``--links``: jobs/catalogue.py ``merge_links``) on a
real index day's graph edges: merged under the URL database's lease, skipped with the reason for a
day indexed without a graph, refused (nothing merged) while another run holds the lease."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest

from jobs.catalogue import CatalogueOptions, merge_links
from lib.links import inlinks, linkdb
from lib.store import lease


def _index_day(root, day: str, edges=None):
    folder = root / "index" / day[:7] / day[8:]
    if edges is not None:
        (folder / "graph" / "edges").mkdir(parents=True)
        shutil.copy(edges, folder / "graph" / "edges" / "part-00000.parquet")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "_SUCCESS").write_text("")
    return str(folder)


def test_merge_links_step(days, tmp_path):
    root = tmp_path / "bucket"
    first = sorted(days)[0]
    urldb = str(root / "urldb")
    opts = CatalogueOptions(root=str(root), links=True, urldb_wait=0)
    got = merge_links(opts, urldb, dt.date.fromisoformat(first), _index_day(root, first, days[first][1]))
    assert got["links"] > 5_000 and got["waited_seconds"] == 0
    assert linkdb.merged_days(linkdb.read_state(str(root / "linkdb"))) == [first]
    url = days[first][0].column("dst_url")[0].as_py()
    assert inlinks.request(str(root), url, "all", None)["totals"]["links"] >= 1
    # a day indexed with --no-graph: skipped, and the summary says why
    second = sorted(days)[1]
    got = merge_links(opts, urldb, dt.date.fromisoformat(second), _index_day(root, second))
    assert "no complete graph/edges" in got["skipped"]
    assert linkdb.merged_days(linkdb.read_state(str(root / "linkdb"))) == [first]
    # another run holds the URL database's lease: refused at once (--urldb-wait 0), nothing merged
    (root / "index" / second[:7] / second[8:] / "graph" / "edges").mkdir(parents=True)
    shutil.copy(days[second][1], root / "index" / second[:7] / second[8:] / "graph" / "edges" / "p.parquet")
    with linkdb.lock(urldb, "another catalogue", 0):
        with pytest.raises(lease.Busy, match="held by another catalogue"):
            merge_links(opts, urldb, dt.date.fromisoformat(second), str(root / "index" / second[:7] / second[8:]))
    assert linkdb.merged_days(linkdb.read_state(str(root / "linkdb"))) == [first]
