"""Fixtures of the service's tests: one published demo day (sample crawl -> preprocess -> index ->
catalogue, in the shared Spark session) and the service on it over real HTTP on loopback."""

from __future__ import annotations

import datetime as dt
import pathlib

import pytest

from jobs.catalogue import CatalogueJob
from jobs.index import IndexJob
from jobs.preprocess import PreprocessJob
from lib.serve.app import create_app
from lib.serve.server import ServerThread
from lib.warc.sample import write_sample_crawl

DEMO_DAY = dt.date(2026, 1, 15)


@pytest.fixture(scope="session")
def published_root(spark, tmp_path_factory) -> pathlib.Path:
    """A demo day in the published layout ROOT/{warc,preprocessed,index,catalogue}/2026-01/15."""
    root = tmp_path_factory.mktemp("serve-http") / "root"
    write_sample_crawl(str(root), DEMO_DAY, 3, 60)
    common = ["--date", DEMO_DAY.isoformat(), "--root", str(root)]
    assert PreprocessJob().main(common, spark=spark) == 0
    assert IndexJob().main(common + ["--docs-per-shard", "20", "--min-group-docs", "5"], spark=spark) == 0
    assert CatalogueJob().main(common, spark=spark) == 0
    return root


@pytest.fixture(scope="session")
def service(published_root, tmp_path_factory):
    """The service on the demo day (data center ``dc1``), in a thread on 127.0.0.1:<free port>; yields its URL."""
    app = create_app({"dc1": str(published_root)}, cache_dir=str(tmp_path_factory.mktemp("serve-cache")), warm=True)
    with ServerThread(app) as srv:
        yield srv.url
