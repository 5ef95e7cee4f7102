"""Missing or empty input is never a success: a mistyped root or date is a usage error (exit 2)
before Spark starts, a day with nothing in it exits 4 and publishes nothing, unless
``--allow-empty`` asks for an empty output. The same for index and catalogue over an empty
preprocessed day, locally and on S3."""

from __future__ import annotations

import datetime as dt

import pytest

from jobs import catalogue, index, preprocess
from lib.store import s3, storage

DATE = dt.date(2026, 1, 15)


def _usage_error(main, argv: list[str]) -> int:
    with pytest.raises(SystemExit) as e:
        main(argv)
    return e.value.code


def test_missing_inputs_are_usage_errors(tmp_path, capsys) -> None:
    root = str(tmp_path / "bucket")
    day = ["--date", DATE.isoformat(), "--root", root]
    assert _usage_error(preprocess.main, day) == 2
    assert _usage_error(index.main, day) == 2
    assert _usage_error(catalogue.main, [*day, "--no-urldb"]) == 2
    err = capsys.readouterr().err
    assert err.count("does not exist (mistyped --root, --date or --input?)") == 3
    assert not (tmp_path / "bucket").exists()  # nothing created, let alone published


def test_empty_day_through_every_stage(tmp_path, spark) -> None:
    root = tmp_path / "bucket"
    (root / "warc" / "2026-01" / "15").mkdir(parents=True)
    day = ["--date", DATE.isoformat(), "--root", str(root)]
    pre = root / "preprocessed" / "2026-01" / "15"
    assert preprocess.main(day, spark=spark) == 4
    assert not pre.exists()
    assert preprocess.main([*day, "--allow-empty"], spark=spark) == 0
    assert (pre / "_SUCCESS").exists()

    idx = root / "index" / "2026-01" / "15"
    job = index.IndexJob()
    assert job.main(day, spark=spark) == 4
    assert not idx.exists() and "no preprocessed pages" in job.last_result.summary["error"]
    assert index.main([*day, "--allow-empty"], spark=spark) == 0
    assert (idx / "_SUCCESS").exists()

    cat = root / "catalogue" / "2026-01" / "15"
    job = catalogue.CatalogueJob()
    assert job.main(day, spark=spark) == 4
    assert not cat.exists() and not (root / "urldb").exists()  # the URL database untouched
    assert "no captures" in job.last_result.summary["error"]
    assert catalogue.main([*day, "--allow-empty"], spark=spark) == 0
    assert (cat / "_SUCCESS").exists() and (cat / "index.cdxj").read_text() == ""


def test_s3_missing_prefix_and_empty_day(s3_bucket, tmp_path, spark) -> None:
    root = f"s3://{s3_bucket}/crawl"
    day = ["--date", DATE.isoformat(), "--root", root, "--staging", str(tmp_path / "stage")]
    assert _usage_error(preprocess.main, day) == 2  # no such prefix: the date or root is mistyped
    s3.client().put_object(Bucket=s3_bucket, Key="crawl/warc/2026-01/15/manifest.txt", Body=b"not an archive")
    assert storage.folder_exists(f"{root}/warc/2026-01/15") and not storage.folder_exists(f"{root}/warc/2026-01/1")
    assert preprocess.main(day, spark=spark) == 4
    assert storage.list_files(f"{root}/preprocessed") == []
