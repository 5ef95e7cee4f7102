"""The pages' ``minhash`` column (lib/neardup/page_column.py): written by the preprocess task,
per batch, on real crawl files; equal to the library's signature of each page's main text; null
exactly for the pages too short to judge; its options change it as they say."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from lib.errors import UsageError
from lib.neardup import page_column
from lib.neardup.minhash import MIN_SHINGLES, MinHasher, tokens
from lib.preprocess.tasks import TaskSettings, process_task

FILES = ("dolma/sample-0000.warc.gz", "resiliparse/warcfile.warc.gz")


def _pages(corpus, out, batch_rows: int, **settings) -> list[dict]:
    files = [(str(corpus / f), (corpus / f).stat().st_size) for f in FILES]
    rows = process_task(files, TaskSettings(str(out), 10 << 20, batch_rows, input_root=str(corpus), **settings))
    parts = [p for p in rows[0]["outputs"] if "language=" in p]
    return [
        r for p in sorted(parts) for r in pq.read_table(p, columns=["record_id", "plain_text", "minhash"]).to_pylist()
    ]


def test_every_page_gets_its_texts_signature_or_null_when_too_short(corpus, tmp_path):
    pages = _pages(corpus, tmp_path / "a", 7)  # batches of 7 pages: signatures per batch, not per task
    ref = MinHasher()
    judged = [p for p in pages if len(tokens(p["plain_text"] or "")) - 4 >= MIN_SHINGLES]
    short = [p for p in pages if p not in judged]
    # the real files hold both kinds: 35 judged and 3 too short since listings keep their items' titles
    # (lib/html/link_listings.py; one short listing page became long enough to judge)
    assert len(judged) > 20 and len(short) >= 3
    assert all(p["minhash"] is None for p in short)
    assert [p["minhash"] for p in judged] == [ref.signature(p["plain_text"]) for p in judged]
    assert {len(p["minhash"]) for p in judged} == {512}
    # the same pages in batches of one page: the same column (a batch changes nothing)
    assert [p["minhash"] for p in _pages(corpus, tmp_path / "b", 1)] == [p["minhash"] for p in pages]


def test_the_options_change_the_signatures_as_they_say(corpus, tmp_path):
    pages = _pages(corpus, tmp_path / "a", 50, minhash=page_column.hasher(3, 64))
    judged = [p for p in pages if p["minhash"] is not None]
    assert judged and {len(p["minhash"]) for p in judged} == {256}
    ref = MinHasher(shingle=3, perms=64)
    assert [p["minhash"] for p in judged] == [ref.signature(p["plain_text"]) for p in judged]
    first = np.frombuffer(judged[0]["minhash"], "<u4")
    assert not np.array_equal(first, np.frombuffer(MinHasher().signature(judged[0]["plain_text"])[:256], "<u4"))
    none = _pages(corpus, tmp_path / "b", 50, minhash=page_column.hasher(5, 0))
    assert len(none) == len(pages) and all(p["minhash"] is None for p in none)
    with pytest.raises(UsageError, match="--minhash-perms"):
        page_column.hasher(5, -1)
