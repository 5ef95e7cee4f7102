"""The digest store (lib.catalogue.digeststore): payload digest -> captures in the linear-hashing
key store, over the captures of real archives of the shared corpus (read by the preprocess's own
reader, no Spark) spread over many days: every digest's captures found, in chunks that fit a page,
nothing added twice."""

from __future__ import annotations

import datetime as dt
import json

from lib.catalogue import digeststore
from lib.catalogue.linhash import LinearHash
from lib.catalogue.payload_table import digest_key
from lib.preprocess.archive_pages import FileProcessor

FILES = ("ipwb/sample-1.warc.gz", "aut/example.warc.gz", "aut/example.arc.gz")
DAYS = [(dt.date(2026, 1, 1) + dt.timedelta(days=k)).isoformat() for k in range(12)]


def _captures(corpus) -> list[dict]:
    out = []
    for name in FILES:
        proc = FileProcessor(f"file://{corpus / name}", captures_only=True)
        with open(corpus / name, "rb") as f:
            for _ in proc.pages(f):
                pass
        out += proc.captures
    return out


def test_every_digest_of_twelve_days_is_found_once(corpus, tmp_path):
    caps = _captures(corpus)
    store = str(tmp_path / "digeststore")
    want: dict[str, list[tuple]] = {}
    for day in DAYS:  # each day the same archives: a digest gets a capture a day
        out = digeststore.add_day(store, day, caps)
        assert out["added"] == sum(1 for c in caps if c["payload_digest"] and c["url"])
        for c in caps:
            if c["payload_digest"] and c["url"]:
                want.setdefault(digest_key(c["payload_digest"]), []).append((day, c["warc_file"], c["warc_offset"]))
    assert digeststore.days(store, [*DAYS, "2026-03-01"]) == set(DAYS)
    st = LinearHash(store).state()
    assert st["buckets"] == 4 * 2 ** st["level"] + st["split"] and st["buckets"] > 4  # split as it grew
    biggest = max(want, key=lambda k: len(want[k]))
    assert len(want[biggest]) >= 24 and len(json.dumps(want[biggest])) > digeststore.CHUNK_BYTES  # several chunks
    for key, pointers in want.items():
        got = digeststore.lookup(store, key)
        assert sorted((e["day"], e["warc_file"], e["warc_offset"]) for e in got) == sorted(pointers), key
    # a re-run of a day adds nothing; a capture of a new day is added after the rest
    assert digeststore.add_day(store, DAYS[3], caps)["added"] == 0
    assert LinearHash(store).state()["keys"] == st["keys"]
    one = next(c for c in caps if digest_key(c["payload_digest"]) == biggest)
    assert digeststore.add(store, [one], "2026-03-01")["added"] == 1
    got = digeststore.lookup(store, biggest)
    assert len(got) == len(want[biggest]) + 1 and got[-1]["day"] == "2026-03-01"
    # the look-up by any spelling of the digest; the rows as the digest table has them
    rows = digeststore.captures(str(tmp_path), [biggest])
    assert [r["day"] for r in rows] == sorted(r["day"] for r in rows) and rows[0]["digest"] == biggest
    assert rows[0]["warc_date"].tzinfo is not None and isinstance(rows[0]["day"], dt.date)
