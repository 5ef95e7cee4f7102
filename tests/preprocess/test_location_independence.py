"""The same crawl gives the same outputs wherever it is read from.

One real day (an ARC file, whose records carry no ids, and WARC files) is run through
preprocess -> index -> catalogue three times: from a local folder, from a copy of it under
another root, and from the loopback S3 server. Page rows, record ids, output file names,
the CIFF shards (decompressed, byte for byte: docids and collection ids included) and the
CDXJ must be identical; only ``warc_file``, which names the location on purpose, differs.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import os
import pathlib
import shutil

import pyarrow.parquet as pq

from jobs import catalogue, index, preprocess
from lib.store import layout, s3, storage
from lib.store.locations import archive_name

DATE = dt.date(2026, 1, 15)
DAY = "2026-01/15"
FILES = ("aut/example.arc.gz", "resiliparse/warcfile.warc.gz", "dolma/sample-0000.warc.gz")


def test_archive_name_is_the_path_below_the_day() -> None:
    assert archive_name("file:///a/warc/2026-01/15/x/f.arc.gz", "/a/warc/2026-01/15") == "2026-01/15/x/f.arc.gz"
    assert archive_name("s3://b/c/warc/2026-01/15/x/f.arc.gz", "s3://b/c/warc/2026-01/15/") == "2026-01/15/x/f.arc.gz"
    assert archive_name("file:///in/sub/f.arc", "file:///in") == "sub/f.arc"  # no day in the path: below the folder
    assert archive_name("file:///in/f.arc", "/in/f.arc") == "f.arc"  # the input is the file itself
    assert archive_name("s3://b/other/f.arc", "s3://b/in") == "s3://b/other/f.arc"  # not below: the full URI


def _download(prefix: str, dest: pathlib.Path) -> pathlib.Path:
    for f in storage.list_files(prefix):
        rel = f.uri[len(prefix.rstrip("/")) + 1 :]
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_bytes(storage.read_bytes(f.uri))
    return dest


def _run_day(root: str, spark, staging: pathlib.Path) -> None:
    common = ["--date", DATE.isoformat(), "--root", root, "--staging", str(staging)]
    assert preprocess.main([*common, "--fail-on", "never"], spark=spark) == 0
    assert index.main([*common, "--no-graph", "--min-group-docs", "1"], spark=spark) == 0
    assert catalogue.main([*common, "--no-urldb", "--no-report"], spark=spark) == 0


def _fingerprint(root: pathlib.Path) -> dict[str, object]:
    """Everything of a finished day that must not depend on where the crawl was read from."""
    out: dict[str, object] = {}
    pre = root / layout.PREPROCESSED / DAY
    # the host index (_hosts.parquet) names page files by their path in the day: compared whole
    out["pre/_hosts"] = pq.read_table(pre / layout.HOSTS).to_pylist()
    for p in sorted(q for q in pre.rglob("*.parquet") if not q.name.startswith("_")):
        t = pq.read_table(p)
        assert all(u.startswith(("file://", "s3://")) for u in t.column("warc_file").to_pylist())
        out[f"pre/{p.relative_to(pre)}"] = t.drop_columns(["warc_file"]).to_pylist()
    idx = root / layout.INDEX / DAY
    for p in sorted(idx.rglob(layout.INDEX_GLOB)):
        with gzip.open(p, "rb") as f:
            out[f"index/{p.relative_to(idx)}"] = hashlib.sha256(f.read()).hexdigest()
    for p in sorted(idx.rglob(layout.METADATA_GLOB)):
        out[f"index/{p.relative_to(idx)}"] = pq.read_table(p).drop_columns(["warc_file"]).to_pylist()
    out["cdxj"] = (root / layout.CATALOGUE / DAY / "index.cdxj").read_text()
    return out


def test_local_copy_and_s3_give_identical_outputs(corpus, tmp_path, spark, s3_bucket) -> None:
    local = tmp_path / "a" / "bucket"
    for rel in FILES:
        dest = local / layout.WARC / DAY / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus / rel, dest)
    moved = tmp_path / "elsewhere" / "mirror"
    shutil.copytree(local, moved)
    for rel in FILES:
        s3.client().upload_file(str(local / layout.WARC / DAY / rel), s3_bucket, f"crawl/{layout.WARC}/{DAY}/{rel}")

    _run_day(str(local), spark, tmp_path / "stage-a")
    _run_day(str(moved), spark, tmp_path / "stage-b")
    s3_root = f"s3://{s3_bucket}/crawl"
    _run_day(s3_root, spark, tmp_path / "stage-s3")
    from_s3 = tmp_path / "from-s3"
    for kind in (layout.PREPROCESSED, layout.INDEX, layout.CATALOGUE):
        _download(layout.day_path(s3_root, kind, DATE), from_s3 / kind / DAY)

    a, b, c = _fingerprint(local), _fingerprint(moved), _fingerprint(from_s3)
    assert any(k.endswith(".ciff.gz") for k in a) and len(a["cdxj"].splitlines()) > 300
    arc_ids = sorted(
        r["record_id"]
        for k, rows in a.items()
        if k.startswith("pre/language=")
        for r in rows
        if r["url"] and "archive.org" in r["url"]
    )
    assert len(arc_ids) > 50 and len(set(arc_ids)) == len(arc_ids)  # ARC pages: derived ids, all distinct
    for other in (b, c):
        assert sorted(other) == sorted(a)  # the same output files (names derive from the archive's path)
        for k in a:
            assert other[k] == a[k], f"{k} differs with the day read from elsewhere"
    # the location column still names where each run read its archives
    rows_s3 = pq.read_table(next((from_s3 / layout.PREPROCESSED / DAY).rglob("part-*.parquet"))).to_pylist()
    assert all(r["warc_file"].startswith(f"s3://{s3_bucket}/crawl/warc/{DAY}/") for r in rows_s3)
    assert os.path.isdir(local)
