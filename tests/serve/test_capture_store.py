"""/capture/{record_id} finds its day in the record store (lib.catalogue.recordstore, linear
hashing) and then reads only that day: the same pages as the scan of every served day."""

from __future__ import annotations

import glob
import os

import httpx
import pyarrow.parquet as pq

from lib.catalogue import recordstore
from lib.serve.capture_api import record_finder
from lib.serve.engine import Engine
from tests.serve.fixtures_http import DEMO_DAY


def test_record_ids_are_found_through_the_record_store(published_root, service, tmp_path):
    root = str(published_root)
    eng = Engine({"dc1": root}, cache_dir=str(tmp_path / "cache"))
    store = os.path.join(root, recordstore.FOLDER)
    served = {d.isoformat() for d in eng.days()}
    assert recordstore.days(store, [*served, "2020-01-01"]) == served == {DEMO_DAY.isoformat()}
    find = record_finder({"dc1": root}, lambda: eng)
    day = os.path.join(root, "preprocessed", f"{DEMO_DAY:%Y-%m}", f"{DEMO_DAY:%d}")
    pages = pq.read_table(glob.glob(os.path.join(day, "language=*", "*.parquet")), columns=["record_id"])
    rids = pages.column("record_id").to_pylist()
    captures = pq.read_table(os.path.join(day, "_captures"), columns=["record_id"]).column("record_id").to_pylist()
    others = sorted(set(captures) - set(rids))  # in the store, but no published page
    assert len(rids) > 20 and others
    for rid in rids[:: max(1, len(rids) // 25)]:
        got = find(rid)
        assert got is not None and got == eng.find_record(rid) and got["day"] == DEMO_DAY.isoformat()
        assert recordstore.get(store, rid)["warc_offset"] == got["warc_offset"]
    for rid in others[:5] + ["<urn:uuid:no-such-record>"]:
        assert find(rid) is None and eng.find_record(rid) is None
    # over HTTP: the payload of a page by its record id, and 404 for a record that is no page
    r = httpx.get(f"{service}/capture/{rids[0]}", params={"contentonly": "true"}, timeout=30)
    assert r.status_code == 200 and r.headers["x-day"] == DEMO_DAY.isoformat() and r.content
    assert httpx.get(f"{service}/capture/{others[0]}", timeout=30).status_code == 404
