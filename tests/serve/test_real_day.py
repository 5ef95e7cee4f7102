"""Search over a day made from real archives, with every kind of shard a real day has, and
with one shard damaged (docs/serve.md, "Empty and broken shards").

The day: the shared real crawl samples (../shared/corpus, skipped when absent) go through
jobs/preprocess.py and jobs/index.py in the shared Spark session, one archive published twice
under two names (repeated record ids), small ``--docs-per-shard``/``--min-group-docs`` so that
there are one-document shards and ``other`` groups. The samples hold a few real pages without
main text (3 since the main text keeps what a boilerplate rule would have taken from a page: 60-odd
before), but every one of them has a title, so none lands in ``und``; the withheld day of
issue 33 had 7 with neither (frames, script-only pages). Those real pages are given that
shape in the preprocessed Parquet (title and description removed, language ``und``: what
preprocess writes for such a page), which makes ``und`` shards of documents without postings,
one of them in ``other/und``.

Served by the real service over HTTP (uvicorn on 127.0.0.1); answers are held against the
brute-force global BM25 of tests/serve/test_engine.py over the shards that are served.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import pathlib
import random
import re
import shutil
import urllib.parse
import xml.etree.ElementTree as ET

import httpx
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from lib.serve import prewarm, serving_index
from lib.serve.app import create_app
from lib.serve.engine import Engine
from lib.serve.server import ServerThread
from tests.serve.test_engine import brute_force

DAY = dt.date(2026, 1, 15)
DAY_DIR = ("index", "2026-01", "15")
INDEX_OPTS = ["--docs-per-shard", "8", "--min-group-docs", "16", "--no-graph"]
TWICE = ("resiliparse", "warcfile.warc.gz")  # published again as warcfile-again.warc.gz
K = 50


def pages_without_text_to_und(pre: pathlib.Path) -> int:
    """Give the day's real pages without main text no title and no description, and language
    ``und`` (module doc); returns how many pages."""
    moved = 0
    for folder in sorted(pre.glob("language=*")):
        for f in sorted(folder.glob("*.parquet")):
            t = pq.read_table(f)
            empty = pc.equal(pc.utf8_trim_whitespace(pc.fill_null(t.column("plain_text"), "")), "")
            if not pc.any(empty).as_py():
                continue
            gone = t.filter(empty)
            for c in ("title", "description"):
                gone = gone.set_column(gone.schema.get_field_index(c), c, pa.nulls(gone.num_rows, pa.string()))
            (pre / "language=und").mkdir(exist_ok=True)
            pq.write_table(gone, pre / "language=und" / f"{folder.name[len('language=') :]}-{f.name}")
            moved += gone.num_rows
            keep = t.filter(pc.invert(empty))
            if keep.num_rows:
                pq.write_table(keep, f)
            else:
                f.unlink()
    return moved


@pytest.fixture(scope="module")
def real_day(spark, corpus, tmp_path_factory) -> pathlib.Path:
    """ROOT with the day preprocessed and indexed (module doc)."""
    from jobs import index, preprocess

    root = tmp_path_factory.mktemp("real-day") / "root"
    warc, pre, out = root / "warc", root / "preprocessed" / "2026-01" / "15", root.joinpath(*DAY_DIR)
    shutil.copytree(corpus, warc, ignore=shutil.ignore_patterns("*.md"))
    shutil.copy(warc.joinpath(*TWICE), warc / TWICE[0] / "warcfile-again.warc.gz")
    assert preprocess.main(["--input", str(warc), "--output", str(pre)], spark=spark) == 0
    assert pages_without_text_to_und(pre) >= 3
    assert index.main(["--input", str(pre), "--output", str(out), *INDEX_OPTS], spark=spark) == 0
    return root


@pytest.fixture(scope="module")
def queries(real_day) -> list[str]:
    pre = real_day / "preprocessed" / "2026-01" / "15"
    titles = [
        t
        for p in sorted(pre.glob("language=*/*.parquet"))
        for t in pq.read_table(p, columns=["title"]).column(0).to_pylist()
        if t
    ]
    return ["archive web", "internet archive collection", "the", "Москва", "数据", "media radio"] + titles[
        :: max(1, len(titles) // 10)
    ][:10]


def _stats(day: pathlib.Path) -> dict:
    return json.loads((day / "_stats.json").read_text())


def _served(root: pathlib.Path, cache: pathlib.Path, **engine_kw) -> ServerThread:
    eng = Engine({"dc1": str(root)}, cache_dir=str(cache), **engine_kw)
    return ServerThread(create_app({"dc1": str(root)}, cache_dir=str(cache), engine=eng))


def _search(url: str, q: str, **params) -> dict:
    # unfolded: the exact BM25 ranking the brute force computes (folded: tests/neardup/test_day_clusters.py)
    params = {"q": q, "day": DAY.isoformat(), "k": K, "collapse": "false", **params}
    r = httpx.get(f"{url}/search", params=params, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def _same_as_brute_force(body: dict, want: list[tuple[float, str]]) -> None:
    assert [h["record_id"] for h in body["results"]] == [rid for _, rid in want]
    assert all(abs(h["score"] - s) <= 1e-5 for h, (s, _) in zip(body["results"], want))


def _atom_ids(url: str, q: str) -> list[str]:
    params = {"q": q, "day": DAY.isoformat(), "k": K, "collapse": "false"}  # as _search
    r = httpx.get(f"{url}/searchxml", params=params, timeout=60)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/atom+xml")
    ns = {"a": "http://www.w3.org/2005/Atom"}
    return [e.find("a:id", ns).text for e in ET.fromstring(r.content).findall("a:entry", ns)]


def test_the_day_has_every_kind_of_shard(real_day):
    day = real_day.joinpath(*DAY_DIR)
    stats = _stats(day)
    shards = stats["shards"]
    no_postings = [s for s in shards if s["terms"] == 0]
    assert no_postings and all(s["lang"] == "und" and s["docs"] > 0 and s["postings"] == 0 for s in no_postings)
    assert any(s["tld"] == "other" for s in no_postings)
    assert any(s["docs"] == 1 and s["terms"] > 0 for s in shards)
    assert len({s["lang"] for s in shards if s["tld"] == "other"}) >= 3
    assert stats["totals"]["duplicates"] > 0  # the archive published twice
    for s in shards:  # the manifest's sums are the files'
        for kind, name in (("ciff", f"index-{s['shard']}.ciff.gz"), ("metadata", f"metadata-{s['shard']}.parquet")):
            f = day / s["tld"] / s["lang"] / name
            assert hashlib.sha256(f.read_bytes()).hexdigest() == s[f"{kind}_sha256"]


def test_search_equals_brute_force_over_every_shard(real_day, queries, tmp_path):
    day = real_day.joinpath(*DAY_DIR)
    stats = _stats(day)
    with _served(real_day, tmp_path / "cache") as srv:
        compared = 0
        for q in queries:
            body = _search(srv.url, q)
            assert body["meta"]["warnings"] == [] and body["meta"]["shards"] == len(stats["shards"])
            want = brute_force([day], q, K)
            _same_as_brute_force(body, want)
            ids = [h["record_id"] for h in body["results"]]
            assert len(set(ids)) == len(ids)
            compared += len(want)
        assert compared > 200
        assert _atom_ids(srv.url, queries[0]) == [h["record_id"] for h in _search(srv.url, queries[0])["results"]]
        # the pages without text: a language of the day, searched without error, found by nothing
        und = _search(srv.url, "archive", lang="und")
        assert und["results"] == [] and und["meta"]["shards"] == sum(s["lang"] == "und" for s in stats["shards"])
        info = httpx.get(f"{srv.url}/index-info").json()
        assert info["skipped_shards"] == [] and info["warnings"] == []
        assert (info["shards"], info["docs"]) == (len(stats["shards"]), stats["totals"]["docs"]) and "und" in info[
            "languages"
        ]
        # a page without text and a page of the archive published twice: their captures by record id
        und_meta = next(day.glob("other/und/metadata-*.parquet"))
        # (found in the metadata store, not by a query: which of its pages a word ranks first
        # follows the main text)
        twice = [
            rid
            for m in day.glob("*/*/metadata-*.parquet")
            for rid, f in zip(*pq.read_table(m, columns=["record_id", "warc_file"]).to_pydict().values())
            if f.endswith(("warcfile.warc.gz", "warcfile-again.warc.gz"))
        ]
        assert twice
        for rid in [pq.read_table(und_meta).column("record_id")[0].as_py(), twice[0]]:
            r = httpx.get(f"{srv.url}/capture/{urllib.parse.quote(rid, safe='')}", params={"contentonly": "true"})
            assert r.status_code == 200 and b"<" in r.content
    assert prewarm.main(["--root", str(real_day), "--date", DAY.isoformat(), "--cache", str(tmp_path / "cli")]) == 0


def test_a_real_page_that_says_noindex_is_never_found(real_day, tmp_path):
    """The day's real pages that say noindex (meta robots: one page of the samples) stay in the
    preprocessed pages, marked, and out of the index: no search over HTTP returns them and no
    capture is handed out by their record id; every other page is marked indexable."""
    pre = real_day / "preprocessed" / "2026-01" / "15"
    rows = [
        r
        for p in sorted(pre.glob("language=*/*.parquet"))
        for r in pq.read_table(
            p,
            columns=[
                "record_id",
                "url",
                "title",
                "plain_text",
                "robots",
                "ows_index",
                "ows_index_details",
                "ows_genai",
            ],
        ).to_pylist()
    ]
    assert all(r["ows_index"] is not None and r["ows_genai"] is not None for r in rows)  # filled on every row
    noindex = [r for r in rows if not r["ows_index"]]
    assert noindex and {r["url"] for r in noindex} == {"http://035.psb556.com/24/i/u_1090813/article.html"}
    assert all("noindex" in r["robots"] and r["ows_index_details"] == "noindex (meta robots)" for r in noindex)
    day = real_day.joinpath(*DAY_DIR)
    left = pq.read_table(day / "_left_out.parquet").to_pylist()
    assert {r["record_id"] for r in noindex} <= {r["record_id"] for r in left}
    stats = _stats(day)
    assert stats["signals"]["noindex"] == len(noindex) and stats["signals"]["robots_txt_origins"] > 0
    published = {
        rid
        for m in day.glob("*/*/metadata-*.parquet")
        for rid in pq.read_table(m, columns=["record_id"])[0].to_pylist()
    }
    assert published.isdisjoint(r["record_id"] for r in noindex) and len(published) == stats["totals"]["docs"]
    with _served(real_day, tmp_path / "cache") as srv:
        for r in noindex:
            words = [r["title"], " ".join((r["plain_text"] or "").split()[:8]), r["url"].split("/")[2]]
            for q in filter(None, words):
                got = {h["record_id"] for h in _search(srv.url, q)["results"]}
                assert r["record_id"] not in got, q
            c = httpx.get(f"{srv.url}/capture/{urllib.parse.quote(r['record_id'], safe='')}")
            assert c.status_code == 404


def _truncate(p: pathlib.Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _garbage(p: pathlib.Path) -> None:
    p.write_bytes(random.Random(5).randbytes(p.stat().st_size))


def _gzipped_garbage(p: pathlib.Path) -> None:
    p.write_bytes(gzip.compress(random.Random(6).randbytes(p.stat().st_size)))


def _wrong_sum(day: pathlib.Path, target: str) -> None:
    stats = _stats(day)
    for s in stats["shards"]:
        if f"{s['tld']}/{s['lang']}/index-{s['shard']}.ciff.gz" == target:
            s["ciff_sha256"] = hashlib.sha256(b"another file").hexdigest()
    (day / "_stats.json").write_text(json.dumps(stats))


def _bare_manifest(day: pathlib.Path) -> None:
    """An older manifest (or another producer's): shards and documents, no sizes, no sums."""
    stats = _stats(day)
    for s in stats["shards"]:
        for k in ("ciff_bytes", "metadata_bytes", "ciff_sha256", "metadata_sha256"):
            s.pop(k)
    (day / "_stats.json").write_text(json.dumps(stats))


#: (how the shard is damaged, whether the manifest keeps sizes and sums, what the reason must say)
DAMAGE = [
    ("truncated", True, r"size \d+ bytes, the manifest says \d+ \(truncated\)"),
    ("garbage", True, r"sha256 .* differs from the manifest"),
    ("deleted", True, r"missing"),
    ("wrong sum in the manifest", True, r"sha256 .* differs from the manifest"),
    ("truncated", False, r"unreadable: .*(ended|end-of-stream)"),
    ("garbage", False, r"unreadable: Not a gzipped file"),
    ("gzipped garbage", False, r"bad CIFF header|postings list|header announces|doc record"),
]


@pytest.mark.parametrize(
    "damage,checked,reason", DAMAGE, ids=[f"{d}-{'manifest' if c else 'bare'}" for d, c, _ in DAMAGE]
)
def test_a_broken_shard_is_named_and_the_rest_of_the_day_served(
    real_day, queries, tmp_path, monkeypatch, damage, checked, reason
):
    good = real_day.joinpath(*DAY_DIR)
    stats = _stats(good)
    # the broken shard: the English shard with the most documents, so that the answers change
    big = max((s for s in stats["shards"] if s["lang"] == "eng"), key=lambda s: s["docs"])
    target = f"{big['tld']}/{big['lang']}/index-{big['shard']}.ciff.gz"
    root = tmp_path / "root"
    day = root.joinpath(*DAY_DIR)
    shutil.copytree(good, day)
    if not checked:
        _bare_manifest(day)
    {
        "truncated": _truncate,
        "garbage": _garbage,
        "gzipped garbage": _gzipped_garbage,
        "deleted": pathlib.Path.unlink,
    }.get(damage, lambda p: _wrong_sum(day, target))(day / target)

    loads: dict[str, int] = {}
    real_load = serving_index._load_shard

    def counting(s, tmp, *rest):
        loads[s.rel] = loads.get(s.rel, 0) + 1
        return real_load(s, tmp, *rest)

    monkeypatch.setattr(serving_index, "_load_shard", counting)
    with _served(root, tmp_path / "cache", recheck_seconds=0) as srv:
        changed = 0
        for q in queries[:8]:
            body = _search(srv.url, q)
            [w] = body["meta"]["warnings"]
            assert target in w and "BM25 statistics" in w and f"{big['docs']} documents" in w
            assert body["meta"]["shards"] == len(stats["shards"]) - 1
            _same_as_brute_force(body, brute_force([good], q, K, exclude={target}))
            changed += [h["record_id"] for h in body["results"]] != [rid for _, rid in brute_force([good], q, K)]
            assert _atom_ids(srv.url, q) == [h["record_id"] for h in body["results"]]
        assert changed >= 2  # the statistics (and some hits) are those of the served shards
        assert _search(srv.url, "数据", lang="zho")["meta"]["warnings"] == []  # not that shard's language
        assert len(_search(srv.url, "archive", lang="eng")["meta"]["warnings"]) == 1
        info = httpx.get(f"{srv.url}/index-info").json()
        [sk] = info["skipped_shards"]
        assert (sk["dc"], sk["day"], sk["path"], sk["docs"]) == ("dc1", DAY.isoformat(), target, big["docs"])
        assert re.search(reason, sk["reason"]), sk["reason"]
        assert len(info["warnings"]) == 1 and target in info["warnings"][0]
        # read once and remembered: no query built the day again
        assert set(loads.values()) == {1} and len(loads) == len(stats["shards"])
        # the file (or manifest) fixed by hand is picked up by the next query
        if damage == "wrong sum in the manifest":
            shutil.copy(good / "_stats.json", day / "_stats.json")
        else:  # a new copy of the file: new size or mtime
            shutil.copy(good / target, day / target)
        body = _search(srv.url, queries[0])
        assert body["meta"]["warnings"] == [] and body["meta"]["shards"] == len(stats["shards"])
        _same_as_brute_force(body, brute_force([good], queries[0], K))
        assert httpx.get(f"{srv.url}/index-info").json()["skipped_shards"] == []
        assert loads[target] == 2


def test_the_build_command_names_a_broken_shard(real_day, tmp_path, capsys):
    root = tmp_path / "root"
    day = root.joinpath(*DAY_DIR)
    shutil.copytree(real_day.joinpath(*DAY_DIR), day)
    target = next(p for p in sorted(day.glob("*/und/index-*.ciff.gz")))
    _truncate(target)
    assert prewarm.main(["--root", str(root), "--date", DAY.isoformat(), "--cache", str(tmp_path / "cache")]) == 1
    out = capsys.readouterr()
    [line] = out.out.splitlines()
    [sk] = json.loads(line)["skipped"]
    assert sk["path"] == target.relative_to(day).as_posix() and "truncated" in sk["reason"]
    assert sk["path"] in out.err
