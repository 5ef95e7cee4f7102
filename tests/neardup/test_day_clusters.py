"""Near-duplicate clusters in the index (lib/neardup/day_clusters.py, docs/dedup.md): real main texts (the
committed heavy pages through our extractor) and copies made of them on purpose (a date line, the
boilerplate reordered, a paragraph added), in two languages' files; every metadata row names its
cluster's representative (earliest capture); a noindex copy is no one's copy; the Spark stages give
what the in-memory library gives; _stats.json counts them; search over HTTP folds a cluster into
its representative unless collapse=false."""

from __future__ import annotations

import datetime as dt
import itertools
import json

import httpx
import pyarrow.parquet as pq
import pytest

from devtools.heavypages import heavy_pages
from lib.html.content import extract
from lib.neardup import clusters
from lib.neardup.minhash import MinHasher
from lib.serve.app import create_app
from lib.serve.server import ServerThread
from tests.index.test_index_job import DAY, _page, run_index, write_day
from tests.neardup.test_minhash import made_near_duplicates

UTC = dt.timezone.utc


def _texts() -> list[str]:
    out = {extract(html.decode("utf-8", "replace"), url).text for url, html in itertools.islice(heavy_pages(), 16)}
    return sorted(t for t in out if len(t.split()) >= 200)[:4]


def dedup_pages() -> list[dict]:
    """Pages 0-2: text A and two copies (page 1 captured first); 3: B alone; 4: C, and 5 its copy
    that says noindex; 6: too short; 7 (eng) and 8 (deu, another file): D and D reordered."""
    a, b, c, d = _texts()
    made = made_near_duplicates(a, b)
    spec = [
        (a, 10, "eng"),
        (made["date"], 9, "eng"),
        (made["para"], 11, "eng"),
        (b, 10, "eng"),
        (c, 10, "eng"),
        (c, 8, "eng"),
        ("Short page, too short to judge.", 10, "eng"),
        (d, 12, "eng"),
        (made_near_duplicates(d, a)["order"], 13, "deu"),
    ]
    sigs = MinHasher().signatures([t for t, _, _ in spec])
    pages = []
    for i, ((text, hour, lang), sig) in enumerate(zip(spec, sigs)):
        p = _page(i, f"https://copy{i}.example.com/a", "com", lang, f"Page {i}", text)
        p.update(warc_date=dt.datetime(2026, 1, 15, hour, tzinfo=UTC), minhash=sig, ows_index=True)
        pages.append(p)
    pages[5].update(ows_index=False, ows_index_details="noindex (meta robots)", robots=["noindex"])
    return pages


@pytest.fixture(scope="module")
def dedup_day(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("dedup")
    pages = dedup_pages()
    inp = write_day(root, pages)
    out = root / "served" / "index" / "2026-01" / "15"
    assert run_index(spark, inp, out, "--date", DAY.isoformat(), "--min-group-docs", "1") == 0
    return root, out, pages


def test_every_metadata_row_names_its_cluster_s_representative(dedup_day):
    root, out, pages = dedup_day
    rows = {r["record_id"]: r for m in sorted(out.rglob("metadata-*.parquet")) for r in pq.read_table(m).to_pylist()}
    rid = [p["record_id"] for p in pages]
    assert set(rows) == set(rid) - {rid[5]}  # the noindex page is not indexed
    got = {r: rows[r]["dup_cluster"] for r in rows}
    expected = {r: r for r in rows} | {rid[0]: rid[1], rid[2]: rid[1], rid[8]: rid[7]}
    assert got == expected  # C's noindex copy is left out: C stands alone
    # the stages give what the library gives in memory over the indexed pages
    judged = [
        clusters.Page(p["record_id"], p["warc_date"].isoformat(), len(p["plain_text"]), p["minhash"])
        for i, p in enumerate(pages)
        if i != 5
    ]
    assert clusters.day_clusters(judged) == got
    stats = json.loads((out / "_stats.json").read_text())["dedup"]
    assert {k: stats[k] for k in ("pages", "judged", "clusters", "pages_in_clusters", "copies")} == {
        "pages": 8,
        "judged": 7,
        "clusters": 2,
        "pages_in_clusters": 5,
        "copies": 3,
    }
    assert stats["edges"] >= 3 and stats["bands"] == 16


def test_a_day_without_signatures_points_every_page_to_itself(spark, tmp_path):
    pages = dedup_pages()[:3]
    for p in pages:
        p["minhash"] = None
    inp = write_day(tmp_path, pages)
    out = tmp_path / "index"
    assert run_index(spark, inp, out, "--min-group-docs", "1") == 0
    rows = [r for m in sorted(out.rglob("metadata-*.parquet")) for r in pq.read_table(m).to_pylist()]
    assert sorted((r["record_id"], r["dup_cluster"]) for r in rows) == sorted((p["record_id"],) * 2 for p in pages)
    assert json.loads((out / "_stats.json").read_text())["dedup"]["judged"] == 0


def test_search_over_http_collapses_a_cluster_into_its_representative(dedup_day, tmp_path):
    root, out, pages = dedup_day
    rid = [p["record_id"] for p in pages]
    app = create_app({"dc1": str(root / "served")}, cache_dir=str(tmp_path / "cache"))
    with ServerThread(app) as srv:

        def search(**params) -> dict:
            r = httpx.get(f"{srv.url}/search", params={"q": "page", "day": DAY.isoformat(), **params}, timeout=60)
            assert r.status_code == 200, r.text
            return r.json()

        every = search(k=20, collapse="false")
        folded = search(k=20)
        two = search(k=2)
    # every indexed page's title says "Page": all 8 match, whatever the folding
    assert sorted(h["record_id"] for h in every["results"]) == sorted(set(rid) - {rid[5]})
    assert every["meta"]["total_results"] == folded["meta"]["total_results"] == 8
    assert all(h["copies"] == 0 for h in every["results"])
    copies = {h["record_id"]: h["copies"] for h in folded["results"]}
    assert copies == {rid[1]: 2, rid[7]: 1, rid[3]: 0, rid[4]: 0, rid[6]: 0}
    # a folded hit keeps its cluster's best rank and score: the unfolded ranking, copies left out
    best = {}
    for h in every["results"]:
        key = {rid[0]: rid[1], rid[2]: rid[1], rid[8]: rid[7]}.get(h["record_id"], h["record_id"])
        best.setdefault(key, h["score"])
    assert [(h["record_id"], h["score"]) for h in folded["results"]] == list(best.items())
    assert [h["record_id"] for h in two["results"]] == list(best)[:2]  # k hits after folding
