"""lib.store.layout: the bucket layout's paths and names, built and parsed back."""

from __future__ import annotations

import datetime as dt

import pytest

from lib.store import layout

DAY = dt.date(2026, 1, 5)


def test_day_paths_and_day_of_round_trip():
    assert layout.day_suffix(DAY) == "2026-01/05"
    for root in ("/data", "/data/", "file:///data", "s3://bucket/prefix/"):
        path = layout.day_path(root, layout.PREPROCESSED, DAY)
        assert path == f"{root.rstrip('/')}/preprocessed/2026-01/05"
        assert layout.day_of(path) == DAY


@pytest.mark.parametrize("path, day", [
    ("/data/index/2026-01/15", dt.date(2026, 1, 15)),
    ("/data/index/2026-01/15/", dt.date(2026, 1, 15)),
    ("C:\\data\\warc\\2024-02\\29", dt.date(2024, 2, 29)),
    ("s3://b/catalogue/2026-12/31", dt.date(2026, 12, 31)),
    ("2026-03/01", dt.date(2026, 3, 1)),
    ("/data/index/2026-13/01", None),  # no month 13
    ("/data/index/2025-02/29", None),  # not a leap year
    ("/data/index/2026-01/15/com", None),  # below a day folder, not one
    ("/data/index/2026-01/150", None),
    ("/data/index/202601/15", None),
    ("", None),
])
def test_day_of(path, day):
    assert layout.day_of(path) == day


@pytest.mark.parametrize("name, lang", [
    ("language=eng", "eng"),
    ("/day/language=deu", "deu"),
    ("/day/language=und/", "und"),
    ("day/language=zho/part-x.zstd.parquet", None),  # the file, not its folder
    ("eng", None),
    ("_captures", None),
    ("xlanguage=eng", None),
])
def test_language_of(name, lang):
    assert layout.language_of(name) == lang


def test_language_dir_round_trip_and_unknown_code():
    assert layout.language_dir("eng") == "language=eng"
    assert layout.language_of(layout.language_dir(layout.UNKNOWN_LANG)) == "und"


def test_index_names():
    assert layout.index_name(3) == "index-3.ciff.gz" and layout.metadata_name(3) == "metadata-3.parquet"
    assert layout.metadata_for(layout.index_name(12)) == layout.metadata_name(12)
    assert layout.metadata_for("/day/com/eng/index-7.ciff") == "metadata-7.parquet"
    assert layout.metadata_for("metadata-7.parquet") is None and layout.metadata_for("index-7.ciff.gz.tmp") is None


def test_root_of_a_dated_folder():
    assert layout.root_of("/data/bucket/preprocessed/2026-01/15") == "/data/bucket"
    assert layout.root_of("s3://crawl/dc1/index/2026-01/15/") == "s3://crawl/dc1"
    assert layout.root_of(layout.day_path("file:///x/y", layout.INDEX, dt.date(2026, 1, 15))) == "file:///x/y"
