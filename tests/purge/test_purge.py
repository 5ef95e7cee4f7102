"""Take-down end to end on a real crawl (aut/example.warc.gz, archive.org's crawl of one site):
the day is published, a page with in-links is put on the exclusion list, the purge command
removes it from every published folder and the staged copy, and the purged day is held
byte for byte against the same day built with the list in force from the start."""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import shutil

import pyarrow.parquet as pq
import pytest

from jobs import catalogue, index, preprocess, purge
from lib.ciff.search import search
from lib.ciff.validate import validate_file
from lib.purge import rebuild as purge_day
from lib.runtime.result import JobResult
from lib.store import layout, update_log
from tests.ondemand.test_hostindex import indexed, recount

DAY = dt.date(2026, 3, 2)
pytestmark = pytest.mark.timeout(900)


def _files(folder: pathlib.Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


def _urls(folder: pathlib.Path, pattern: str, column: str) -> set[str]:
    out: set[str] = set()
    for p in folder.rglob(pattern):
        if p.name.startswith("_"):  # a side file (the host index): no URL column
            continue
        out.update(u for u in pq.read_table(p, columns=[column]).column(column).to_pylist() if u)
    return out


@pytest.fixture(scope="module")
def published(spark, corpus, tmp_path_factory):
    """ROOT with the real day published (preprocess, index, catalogue + URL database) and staged
    to a filesystem target, and the page chosen for take-down: the most linked-to page."""
    base = tmp_path_factory.mktemp("purge")
    root = base / "root"
    warc = root / layout.WARC / f"{DAY:%Y-%m}" / f"{DAY:%d}"
    warc.mkdir(parents=True)
    shutil.copy(corpus / "aut" / "example.warc.gz", warc / "example.warc.gz")
    d = ["--date", DAY.isoformat(), "--root", str(root)]
    assert preprocess.main(d, spark=spark) == 0
    assert index.main(d + ["--min-group-docs", "1", "--docs-per-shard", "40"], spark=spark) == 0
    assert catalogue.main(d, spark=spark) == 0
    idx = pathlib.Path(layout.day_path(str(root), layout.INDEX, DAY))
    inl = pq.read_table(idx / "graph" / "inlinks").to_pylist()
    pages = _urls(idx, "metadata-*.parquet", "url")
    target = max((r for r in inl if r["dst_url"] in pages), key=lambda r: (r["source_pages"], r["dst_url"]))["dst_url"]
    cfg = base / "datacenters.yaml"
    cfg.write_text(
        json.dumps(
            {
                "datacenters": {
                    "dc1": {
                        "s3": {"bucket": "unused"},
                        "output_root": str(root),
                        "staging": {"type": "filesystem", "path": str(base / "archive")},
                    }
                }
            }
        )
    )
    from lib.orchestration.datacenters import load_config
    from lib.orchestration.stage_outputs import stage_outputs

    spec = load_config(str(cfg))["dc1"]["staging"]
    stage_outputs(
        {k: layout.day_path(str(root), k, DAY) for k in (layout.PREPROCESSED, layout.INDEX, layout.CATALOGUE)},
        spec,
        DAY,
    )
    return {"root": root, "base": base, "target": target, "cfg": cfg, "idx": idx}


def test_the_purge_leaves_the_day_a_day_built_without_the_page(spark, published):
    root, base, target, idx = published["root"], published["base"], published["target"], published["idx"]
    cat = pathlib.Path(layout.day_path(str(root), layout.CATALOGUE, DAY))
    pre = pathlib.Path(layout.day_path(str(root), layout.PREPROCESSED, DAY))
    before_docs = json.loads((idx / layout.STATS).read_text())["totals"]["docs"]
    assert target in _urls(idx, "metadata-*.parquet", "url")
    # the list: the page by URL (written differently from how it was crawled: www. and scheme aside)
    rules = root / layout.EXCLUSIONS
    rules.write_text(
        "# take-downs\n"
        + json.dumps({"url": target.replace("http://", "https://"), "date": "2026-03-05", "reason": "test request 1"})
        + "\n"
    )
    staged_before = _files(base / "archive" / layout.INDEX / f"{DAY:%Y-%m}" / f"{DAY:%d}")
    removed_record = [r for r in pq.read_table(pre / layout.CAPTURES).to_pylist() if r["url"] == target]
    assert removed_record

    rc = purge.main(["--root", str(root), "--stage-config", str(published["cfg"]), "--data-center", "dc1"], spark=spark)
    assert rc == 0
    purged = [u for u in update_log.read(str(root)) if u.kind == "purge"]  # one line of logs.csv per purged day
    assert [u.name for u in purged] == [DAY.isoformat()] and '"pages"' in purged[0].detail

    # the expected day: the same archive preprocessed and indexed with the list in force
    exp = base / "expected"
    assert (
        preprocess.main(
            [
                "--input",
                str(root / layout.WARC / f"{DAY:%Y-%m}" / f"{DAY:%d}"),
                "--output",
                str(exp / "pre"),
                "--date",
                DAY.isoformat(),
                "--exclusions",
                str(rules),
            ],
            spark=spark,
        )
        == 0
    )
    stats = json.loads((exp / "pre" / layout.STATS).read_text())["totals"]
    assert stats["skipped_by_reason"]["excluded"] >= 1  # the response at least (its request too)
    assert stats["read"] == stats["kept"] + stats["skipped"] + stats["failed"]
    assert (
        index.main(
            [
                "--input",
                str(exp / "pre"),
                "--output",
                str(exp / "idx"),
                "--date",
                DAY.isoformat(),
                "--exclusions",
                str(rules),
                "--min-group-docs",
                "1",
                "--docs-per-shard",
                "40",
            ],
            spark=spark,
        )
        == 0
    )
    got, want = _files(idx), _files(exp / "idx")
    ciff = [k for k in want if k.endswith(".ciff.gz")]
    meta = [k for k in want if k.rsplit("/", 1)[-1].startswith("metadata-")]
    assert ciff and meta and any("anchors-" in k for k in ciff)
    assert sorted(k for k in got if k.endswith(".ciff.gz") or "metadata-" in k) == sorted(ciff + meta)
    for k in ciff + meta:
        assert got[k] == want[k], f"{k} differs from the day built without the page"
    for part in ("edges", "inlinks", "hosts"):
        assert (
            pq.read_table(idx / "graph" / part).to_pylist() == pq.read_table(exp / "idx" / "graph" / part).to_pylist()
        )

    # gone from every published folder, in both directions of the graph
    assert target not in _urls(idx, "metadata-*.parquet", "url")
    assert target not in _urls(idx / "graph" / "edges", "*.parquet", "src_url")
    assert target not in _urls(idx / "graph" / "edges", "*.parquet", "dst_url")
    assert target not in _urls(idx / "graph" / "inlinks", "*.parquet", "dst_url")
    assert target not in _urls(pre, "*.parquet", "url")
    assert indexed(pre) == recount(pre)  # the host index written again over the purged page files
    cdxj = (cat / "index.cdxj").read_text()
    assert all(r["record_id"] not in cdxj for r in removed_record)
    assert (cat / layout.SUCCESS).exists() and (idx / layout.SUCCESS).exists() and (pre / layout.SUCCESS).exists()
    db = root / layout.URLDB
    assert target not in _urls(db, "*.parquet", "url") and _urls(db, "*.parquet", "url")
    after = json.loads((idx / layout.STATS).read_text())["totals"]["docs"]
    assert after == before_docs - 1
    pstats = json.loads((pre / layout.STATS).read_text())["totals"]
    assert pstats["read"] == pstats["kept"] + pstats["skipped"] + pstats["failed"]

    # validates, and searches as if the page had never been crawled
    for k in ciff:
        assert validate_file(str(idx / k)).ok
    index_files = [idx / k for k in ciff if "/index-" in "/" + k]
    query = " ".join(target.rstrip("/").rsplit("/", 1)[-1].replace(".", " ").replace("-", " ").split()[:3]) or "home"
    for f in index_files:
        hits = search(str(f), query, 50)
        assert hits == search(str(exp / "idx" / f.relative_to(idx)), query, 50)

    # the staged copy followed, stale files deleted, marker last
    staged = _files(base / "archive" / layout.INDEX / f"{DAY:%Y-%m}" / f"{DAY:%d}")
    assert staged != staged_before
    assert {k: v for k, v in staged.items()} == {k: v for k, v in got.items()}

    # the audit: what, where, when
    audit = [json.loads(x) for x in (root / layout.PURGE / "audit.jsonl").read_text().splitlines()]
    day_entry = next(e for e in audit if e.get("day") == DAY.isoformat() and "removed" in e)
    assert day_entry["rules"][0]["reason"] == "test request 1"
    assert day_entry["removed"]["pages"] == 1 and day_entry["removed"]["index_docs"] == 1
    assert day_entry["removed"]["graph_inlinks"] >= 1
    assert {r["url"] for r in day_entry["records"]} == {target}
    assert str(idx) in day_entry["folders"]
    assert any(e.get("staged") for e in audit)
    assert any(e.get("urldb") and target in e["urls"] for e in audit)
    assert not os.listdir(root / layout.PURGE / "pending")

    # idempotent: a second run finds the day clean and changes nothing
    snapshot = _files(idx)
    assert purge.main(["--root", str(root)], spark=spark) == 0
    assert _files(idx) == snapshot
    assert len((root / layout.PURGE / "audit.jsonl").read_text().splitlines()) == len(audit)


def test_a_purge_that_crashes_in_the_swap_is_finished_by_the_next_run(spark, published, monkeypatch):
    root = published["root"]
    rules = root / layout.EXCLUSIONS
    # a second take-down
    pre = pathlib.Path(layout.day_path(str(root), layout.PREPROCESSED, DAY))
    urls = sorted(_urls(pre, "language=*/*.parquet", "url"))
    victim = urls[len(urls) // 2]
    with rules.open("a") as f:
        f.write(json.dumps({"url": victim, "date": "2026-03-06", "reason": "test request 2"}) + "\n")
    real = purge_day.swap
    calls = []

    def crash_after_first(new: str, final: str) -> None:
        calls.append(final)
        if len(calls) == 2:
            raise OSError("simulated crash between two swaps")
        real(new, final)

    monkeypatch.setattr(purge_day, "swap", crash_after_first)
    assert purge.main(["--root", str(root), "--no-urldb"], spark=spark) == 1
    journal = pathlib.Path(purge_day.journal_path(str(root), DAY))
    assert json.loads(journal.read_text())["phase"] == "swap"
    idx = published["idx"]
    assert victim in _urls(idx, "metadata-*.parquet", "url")  # not swapped yet
    assert victim not in _urls(pre, "language=*/*.parquet", "url")  # swapped
    monkeypatch.setattr(purge_day, "swap", real)
    assert purge.main(["--root", str(root), "--no-urldb"], spark=spark) == 0
    assert not journal.exists()
    assert victim not in _urls(idx, "metadata-*.parquet", "url")
    assert not list(idx.parent.glob("*.purge-new"))
    audit = [json.loads(x) for x in (root / layout.PURGE / "audit.jsonl").read_text().splitlines()]
    assert any(e.get("resumed") and victim in {r["url"] for r in e["records"]} for e in audit)
    for f in idx.rglob("index-*.ciff.gz"):
        assert validate_file(str(f)).ok


def test_the_rebuild_runs_each_job_with_the_options_its_day_recorded(tmp_path, monkeypatch):
    """The recorded ``args`` (index: ``_stats.json``, catalogue: ``_SUCCESS``) come back as the jobs'
    options objects, the purged day's paths and list over them; no argument list in between."""
    stats, marker, old = tmp_path / "_stats.json", tmp_path / "_SUCCESS", tmp_path / "old_SUCCESS"
    index_args = {"docs_per_shard": 40, "min_group_docs": 1, "gzip_level": 6, "graph": True, "anchors": False}
    stats.write_text(json.dumps({"totals": {}, "args": index_args}))
    marker.write_text(json.dumps({"job": "catalogue", "args": {"warc_prefix": "s3://in/warc", "no_report": False}}))
    old.write_text("")  # a catalogue day published before the marker recorded its options
    assert purge_day.recorded_options(str(tmp_path / "absent.json")) == {} == purge_day.recorded_options(str(old))
    (tmp_path / "bad").write_text("{not json")
    with pytest.raises(purge_day.PurgeError, match="not the JSON"):
        purge_day.recorded_options(str(tmp_path / "bad"))
    calls = []

    def fake(kind):
        def run(spark, options, *pinned):
            calls.append((kind, spark, options, *pinned))
            return JobResult(ok=kind == "index", code=4)

        return run

    monkeypatch.setattr(purge.index_job, "run", fake("index"))
    monkeypatch.setattr(purge.catalogue_job, "run", fake("catalogue"))
    rebuild = purge.JobRebuild("SESSION", "/pub")
    assert (
        rebuild.index(DAY, "/pre.new", "/idx.new", "/pub/_exclusions.jsonl", purge_day.recorded_options(str(stats)))
        == 0
    )
    assert (
        rebuild.catalogue(
            DAY, "/pre.new", "/cat.new", "/idx.new", "/pub/_exclusions.jsonl", purge_day.recorded_options(str(marker))
        )
        == 4
    )
    assert rebuild.catalogue(DAY, "/pre.new", "/cat.new", "/idx", "/x", purge_day.recorded_options(str(old))) == 4
    # both jobs: the purged day's new pages, its date and exclusion list, an empty day allowed
    day = {"input": "/pre.new", "date": DAY, "exclusions": "/pub/_exclusions.jsonl", "allow_empty": True}
    # the index's kept signatures of the day are replaced too (docs/dedup.md, "Across days")
    index_opts = index.IndexOptions(**day, output="/idx.new", dup_store="/pub/signatures", **index_args)
    # and its stop-word lists are the day's (none recorded here: the packaged ones), never the root's current ones
    assert calls[0] == ("index", "SESSION", index_opts, ())
    assert calls[1] == (
        "catalogue",
        "SESSION",
        catalogue.CatalogueOptions(
            **day, output="/cat.new", root="/pub", no_urldb=True, index="/idx.new", warc_prefix="s3://in/warc"
        ),
    )
    assert calls[2][2].warc_prefix is None and calls[2][2].index == "/idx"  # nothing recorded: the defaults
