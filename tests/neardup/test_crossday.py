"""Near-duplicates across days (lib/neardup/crossday.py, lib/neardup/sigstore.py, docs/dedup.md): real
main texts (the committed heavy pages through our extractor) indexed on two days with a signature
store; a day-2 page that repeats a day-1 page with another date line, under another URL, names
day 1's representative in ``dup_of``; a page alone names nothing; re-running a day replaces its
entries; days past the window are dropped and not matched; a chain names the earliest root;
two runs of different days that commit at once both keep their day."""

from __future__ import annotations

import datetime as dt
import json
import os
import threading

import pyarrow.parquet as pq
import pytest

from lib.index.pipeline import plan_day
from lib.neardup import crossday, day_clusters, sigstore
from lib.neardup.minhash import MinHasher
from tests.index.test_index_job import _page, run_index, write_day
from tests.neardup.test_day_clusters import _texts
from tests.neardup.test_minhash import made_near_duplicates

UTC = dt.timezone.utc
D1, D2, D3 = dt.date(2026, 1, 15), dt.date(2026, 1, 16), dt.date(2026, 1, 18)


def _day(spec: list[tuple[int, str, str]], day: dt.date) -> list[dict]:
    """Pages (record number, url, text) captured on ``day``, hour = position."""
    sigs = MinHasher().signatures([t for _, _, t in spec])
    pages = []
    for hour, ((i, url, text), sig) in enumerate(zip(spec, sigs)):
        p = _page(i, url, "com", "eng", f"Page {i}", text)
        p.update(warc_date=dt.datetime(day.year, day.month, day.day, hour, tzinfo=UTC), minhash=sig, ows_index=True)
        pages.append(p)
    return pages


@pytest.fixture(scope="module")
def texts():
    a, b, c, _ = _texts()
    return {"a": a, "b": b, "c": c, "a_date": made_near_duplicates(a, b)["date"]}


def _rid(i: int) -> str:
    return f"<urn:uuid:00000000-0000-0000-0000-{i:012d}>"


def _metadata(out) -> dict[str, dict]:
    return {r["record_id"]: r for m in sorted(out.rglob("metadata-*.parquet")) for r in pq.read_table(m).to_pylist()}


def test_a_copy_of_an_earlier_day_names_that_day_s_representative(spark, tmp_path, texts):
    store = tmp_path / "signatures"
    d1 = _day([(1, "https://a.example.com/", texts["a"]), (2, "https://b.example.com/", texts["b"]),
               (3, "https://mirror.example.com/a", texts["a_date"])], D1)  # fmt: skip
    again = "Updated 16 January 2026, 08:05. " + texts["a"]  # the same article, another date line
    d2 = _day([(11, "https://other.example.org/news/a", again), (12, "https://c.example.com/", texts["c"])], D2)
    outs = {}
    for day, pages in ((D1, d1), (D2, d2)):
        inp = write_day(tmp_path / str(day), pages)
        outs[day] = tmp_path / str(day) / "index"
        args = ("--date", day.isoformat(), "--min-group-docs", "1", "--no-graph", "--dup-store", str(store))
        assert run_index(spark, inp, outs[day], *args) == 0
    first, second = _metadata(outs[D1]), _metadata(outs[D2])
    assert {r: (m["dup_cluster"], m["dup_of"], m["dup_of_day"]) for r, m in first.items()} == {
        _rid(1): (_rid(1), None, None),
        _rid(2): (_rid(2), None, None),
        _rid(3): (_rid(1), None, None),  # a copy within day 1: its cluster, no earlier day
    }
    assert {r: (m["dup_of"], m["dup_of_day"]) for r, m in second.items()} == {
        _rid(11): (_rid(1), D1),  # day 1's representative, not its later copy 3
        _rid(12): (None, None),
    }
    stats = json.loads((outs[D2] / "_stats.json").read_text())["dedup"]["across_days"]
    assert (stats["kept_days"], stats["pages_with_earlier_copy"], stats["stored"]) == (
        [D1.isoformat(), D2.isoformat()],
        1,
        2,
    )
    state = sigstore.read_state(str(store))
    assert sorted(state["days"]) == [D1.isoformat(), D2.isoformat()] and state["parts"] == sigstore.DEFAULT_PARTS
    assert sorted(os.listdir(store)) == sorted(["_state", "_state.json", *state["days"].values()])


def _cross(spark, root, pages, day: dt.date, store: crossday.Store) -> dict[str, tuple]:
    """The index's dedup steps for one day, without the rest of the index: dup_of by record id."""
    inp = write_day(root, pages)
    work = str(root / "work")
    s = day_clusters.Settings(store_parts=crossday.store_parts(store))
    clusters = day_clusters.day_clusters(spark, plan_day(str(inp), 1000, 1).files, work, s)
    found = crossday.lookup_day(spark, work, store, day.isoformat(), s)
    mapping = found.pop("mapping")
    crossday.store_day(spark, work, store, day.isoformat(), s, clusters["mapping"], mapping)
    t = sigstore.read_arrow(mapping).to_pylist()
    return {r["record_id"]: (r["dup_of_day"], r["dup_of"]) for r in t}


def test_re_runs_replace_a_day_and_days_past_the_window_go(spark, tmp_path, texts):
    store = crossday.Store(str(tmp_path / "sigs"), days=2, parts=4)
    d1 = _day([(1, "https://a.example.com/", texts["a"]), (2, "https://b.example.com/", texts["b"])], D1)
    d2 = _day([(11, "https://x.example.org/a", "Updated 16 January 2026. " + texts["a"])], D2)
    assert _cross(spark, tmp_path / "1", d1, D1, store) == {}
    assert _cross(spark, tmp_path / "2", d2, D2, store) == {_rid(11): (D1.isoformat(), _rid(1))}
    before = sigstore.read_state(store.path)
    assert _cross(spark, tmp_path / "2b", d2, D2, store) == {_rid(11): (D1.isoformat(), _rid(1))}  # a re-run
    after = sigstore.read_state(store.path)
    assert (
        sorted(after["days"]) == sorted(before["days"])
        and after["days"][D2.isoformat()] != before["days"][D2.isoformat()]
    )
    assert not os.path.exists(os.path.join(store.path, before["days"][D2.isoformat()]))  # the replaced copy swept
    # day 3 (two days later, --dup-days 2): day 1 is past the window, day 2 is in it; a copy of A
    # matches day 2's page, whose root is day 1's A; a copy of B (day 1 only) matches nothing
    d3 = _day([(21, "https://y.example.net/a", texts["a"]), (22, "https://z.example.net/b", texts["b"])], D3)
    assert _cross(spark, tmp_path / "3", d3, D3, store) == {_rid(21): (D1.isoformat(), _rid(1))}
    assert sorted(sigstore.read_state(store.path)["days"]) == [D3.isoformat()]  # 15 and 16 are 2+ days before 18
    assert sorted(n for n in os.listdir(store.path) if n.startswith("day=")) == [
        sigstore.read_state(store.path)["days"][D3.isoformat()]
    ]
    # a backfill of day 2 now: past the window of the newest day, matched but not kept
    assert _cross(spark, tmp_path / "2c", d2, D2, store) == {}
    state = sigstore.read_state(store.path)
    assert sorted(state["days"]) == [D3.isoformat()]
    assert [n for n in os.listdir(store.path) if n.startswith("day=")] == [state["days"][D3.isoformat()]]


def test_two_runs_that_commit_at_once_both_keep_their_day(tmp_path):
    store = str(tmp_path / "sigs")
    shape = {"parts": 4, "bands": 16, "perms": 128}
    folders = {
        d: os.path.join(store, sigstore.day_folder(d, f"{i:012x}")) for i, d in enumerate(("2026-01-15", "2026-01-16"))
    }
    for f in folders.values():
        os.makedirs(f)
    errors = []

    def commit(day: str) -> None:
        try:
            with sigstore.lock(store, f"test {day}", 60):
                sigstore.commit(store, day, folders[day], 30, shape)
        except Exception as e:  # the test fails below, naming it
            errors.append(e)

    threads = [threading.Thread(target=commit, args=(d,)) for d in folders]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    state = sigstore.read_state(store)
    assert state["days"] == {d: os.path.basename(f) for d, f in folders.items()} and state["version"] == 2
