"""Record id -> capture pointer in the linear-hashing key store (lib.catalogue.linhash,
lib.catalogue.recordstore): real record ids of the shared corpus, splits one bucket at a time,
torn pages detected, a crashed commit rolled back, and the store of two real days (built by the
catalogue job) against their captures, rebuilt from the published days."""

from __future__ import annotations

import os
import shutil

import pyarrow.parquet as pq
import pytest
from warcio.archiveiterator import ArchiveIterator

from lib.catalogue import linhash, recordstore
from lib.catalogue.linhash import N0, LinearHash
from lib.store import layout
from tests.fixtures_days import CORPUS_DAYS

ARCHIVES = [
    "aut/example.warc.gz",
    "ipwb/sample-1.warc.gz",
    "dolma/sample-0000.warc.gz",
    "dolma/sample-0001.warc.gz",
    "aut/example.pdf.warc.gz",
]


@pytest.fixture(scope="module")
def record_ids(corpus) -> list[bytes]:
    """Every WARC-Record-ID of five real archives."""
    out = []
    for rel in ARCHIVES:
        with open(corpus / rel, "rb") as f:
            out += [r.rec_headers.get_header("WARC-Record-ID").encode() for r in ArchiveIterator(f)]
    assert len(set(out)) == len(out) > 1200
    return out


def test_every_key_is_found_and_buckets_split_one_at_a_time(record_ids, tmp_path):
    store = LinearHash(str(tmp_path / "lh"), writer=True)
    want: dict[bytes, bytes] = {}
    for n in range(0, len(record_ids), 300):  # batches: the table grows through several levels
        batch = [(k, b"pointer of " + k[::-1]) for k in record_ids[n : n + 300]]
        before = store.state()
        st = store.put_many(batch, meta={"batches": n // 300 + 1})
        want.update(batch)
        # linear hashing's shape: N0 * 2**level buckets plus the ones split at this level
        assert st["buckets"] == (N0 << st["level"]) + st["split"] and st["keys"] == len(want)
        assert st["buckets"] >= before["buckets"] and st["generation"] == before["generation"] + 1
    reader = LinearHash(str(tmp_path / "lh"))
    assert reader.state()["level"] >= 3 and reader.state()["meta"] == {"batches": -(-len(record_ids) // 300)}
    assert all(reader.get(k) == v for k, v in want.items())
    assert reader.get(b"<urn:uuid:not-there>") is None
    # the same batch again changes no key count; a new value replaces the old one
    st = store.put_many([(record_ids[0], b"new")] + [(k, want[k]) for k in record_ids[1:50]])
    assert st["keys"] == len(want) and reader.get(record_ids[0]) == b"new"


def test_a_torn_page_is_detected_and_a_crashed_commit_rolled_back(record_ids, tmp_path, monkeypatch):
    folder = str(tmp_path / "lh")
    store = LinearHash(folder, writer=True)
    first = [(k, b"v1") for k in record_ids[:800]]
    store.put_many(first)
    state = store.state()
    # a commit that dies after writing its pages, before its header: the journal rolls it back
    monkeypatch.setattr(LinearHash, "_write_header", lambda self, st: (_ for _ in ()).throw(OSError("power cut")))
    with pytest.raises(OSError, match="power cut"):
        store.put_many([(k, b"v2") for k in record_ids[:1200]])
    monkeypatch.undo()
    assert os.path.exists(os.path.join(folder, linhash.JOURNAL))
    with pytest.raises(linhash.Corrupt):  # a reader does not trust a store with a commit in flight
        LinearHash(folder).get(record_ids[0])
    again = LinearHash(folder, writer=True)  # the next writer rolls back
    assert not os.path.exists(os.path.join(folder, linhash.JOURNAL)) and again.state() == state
    assert all(again.get(k) == b"v1" for k, _ in first) and again.get(record_ids[1100]) is None
    # a torn write: half a page overwritten; its bucket's keys raise Corrupt, never a wrong answer
    with open(os.path.join(folder, linhash.BUCKETS), "r+b") as f:
        f.seek(2 * linhash.PAGE + 1000)
        f.write(os.urandom(2000))
    hits = 0
    for k, _ in first:
        try:
            assert again.get(k) == b"v1"
        except linhash.Corrupt as e:
            hits += 1
            assert "checksum mismatch" in str(e)
    assert hits > 0


def test_the_stores_of_two_real_days_hold_every_capture(corpus_days, tmp_path):
    store = os.path.join(corpus_days, recordstore.FOLDER)
    assert recordstore.days(store, ["2026-01-01", *(d.isoformat() for d in CORPUS_DAYS)]) == {
        d.isoformat() for d in CORPUS_DAYS
    }
    want: dict[str, dict] = {}
    for day in CORPUS_DAYS:  # in date order: a record id seen on both days (aut's WARC) points to the later
        caps = os.path.join(layout.day_path(corpus_days, layout.PREPROCESSED, day), layout.CAPTURES)
        for row in pq.read_table(caps).to_pylist():
            want[row["record_id"]] = recordstore.pointer(day.isoformat(), row)
    assert len(want) > 350 and LinearHash(store).state()["keys"] == len(want) + len(CORPUS_DAYS)  # and the day keys
    assert sum(v["day"] == "2026-04-02" for v in want.values()) < len(want)
    for rid, pointer in want.items():
        assert recordstore.get(store, rid) == pointer
    # a rebuild from the published days gives the same store
    copy = str(tmp_path / "rebuilt")
    out = recordstore.rebuild(corpus_days, copy)
    assert out["days"] == [d.isoformat() for d in CORPUS_DAYS] and out["keys"] == len(want) + len(CORPUS_DAYS)
    assert all(recordstore.get(copy, rid) == pointer for rid, pointer in want.items())
    shutil.rmtree(copy)
