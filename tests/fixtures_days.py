"""Two days built from real archives of the shared corpus by the preprocess and catalogue jobs,
once per test run: the digest look-ups (tests/catalogue/test_digest.py) and the CDX server
(tests/serve/test_cdx_api.py) read the same published root and never change it."""

from __future__ import annotations

import datetime as dt
import os
import shutil

import pytest

from jobs import preprocess
from jobs.catalogue import main as build

D1, D2 = dt.date(2026, 4, 1), dt.date(2026, 4, 2)
#: the day's archives (paths in the shared corpus); aut/example.warc.gz is crawled on both days
CORPUS_DAYS = {
    D1: ["aut/example.warc.gz", "ipwb/sample-1.warc.gz"],
    D2: ["aut/example.warc.gz", "dolma/sample-0000.warc.gz"],
}


@pytest.fixture(scope="session")
def corpus_days(spark, corpus, tmp_path_factory) -> str:
    """ROOT with both days preprocessed and catalogued (URL database, capture index); read only."""
    root = str(tmp_path_factory.mktemp("corpus-days"))
    for day, files in CORPUS_DAYS.items():
        folder = os.path.join(root, "warc", f"{day:%Y-%m}", f"{day:%d}")
        os.makedirs(folder)
        for rel in files:
            shutil.copyfile(corpus / rel, os.path.join(folder, rel.replace("/", "-")))
        assert preprocess.main(["--date", day.isoformat(), "--root", root, "--fail-on", "never"], spark=spark) == 0
        assert (
            build(["--date", day.isoformat(), "--root", root, "--url-partitions", "2", "--no-report"], spark=spark) == 0
        )
    return root
