"""How complete a page is in time (lib.catalogue.completeness), over the two real published days of
tests/fixtures_days.py (aut's example crawl on both days, ipwb's sample on the first, dolma's on the
second): each embedded resource's nearest capture, held to a scan of both days' captures (same SURT
key, nearest WARC-Date); over HTTP (``/capture/completeness/{record_id}``) and as the daily
report's section."""

from __future__ import annotations

import datetime as dt
import glob
import os
import statistics

import httpx
import pyarrow.parquet as pq
import pytest
from fastapi import FastAPI

from lib.catalogue import capindex, completeness, report
from lib.pages.weburls import surt_key_strict
from lib.serve.capture_api import capture_router, completeness_finder
from lib.serve.server import ServerThread
from tests.fixtures_days import D1, D2

CAPTURE_TYPES = ("response", "revisit", "resource")


def day_dir(root: str, day: dt.date) -> str:
    return os.path.join(root, "preprocessed", f"{day:%Y-%m}", f"{day:%d}")


def all_captures(root: str) -> dict[str, list[dt.datetime]]:
    """SURT key -> WARC-Dates of every capture of both days (a scan: the oracle)."""
    out: dict[str, list[dt.datetime]] = {}
    for day in (D1, D2):
        rows = pq.read_table(
            glob.glob(os.path.join(day_dir(root, day), "_captures", "*.parquet")),
            columns=["url", "warc_date", "record_type"],
        ).to_pylist()
        for r in rows:
            if r["record_type"] in CAPTURE_TYPES and r["url"]:
                try:
                    key = surt_key_strict(r["url"])
                except ValueError:
                    continue
                out.setdefault(key, []).append(r["warc_date"].replace(microsecond=0))
    return out


def expected(page: dict, caps: dict[str, list[dt.datetime]]) -> tuple[list[str], list[float]]:
    """(resources never captured, ages of the nearest captures) of a page row, by the scan."""
    when = page["warc_date"].replace(microsecond=0)
    never, ages = [], []
    for _, url in completeness.resources(page):
        try:
            times = caps.get(surt_key_strict(url), [])
        except ValueError:
            times = []
        if times:
            ages.append(min(abs((t - when).total_seconds()) for t in times))
        else:
            never.append(url)
    return never, ages


@pytest.fixture(scope="module")
def pages(corpus_days) -> list[dict]:
    rows = completeness.page_rows(day_dir(corpus_days, D1)) + completeness.page_rows(day_dir(corpus_days, D2))
    assert rows and all(r["embeds_known"] for r in rows)
    return rows


def test_each_resource_gets_its_nearest_capture_over_both_days(corpus_days, pages):
    caps = all_captures(corpus_days)
    reader = capindex.Reader(os.path.join(corpus_days, capindex.FOLDER))
    with_res = [p for p in pages if completeness.resources(p)]
    some_captured = 0
    for page in with_res:
        got = completeness.of_page(reader, page)
        never, ages = expected(page, caps)
        assert got["resources"] == len(completeness.resources(page))
        assert got["never_captured"] == never and got["captured"] == len(ages)
        assert [it["nearest"]["age_seconds"] for it in got["items"] if it["nearest"]] == pytest.approx(ages, abs=1)
        if ages:
            some_captured += 1
            assert got["age_seconds"]["min"] == pytest.approx(min(ages), abs=1)
            assert got["age_seconds"]["median"] == pytest.approx(statistics.median(ages), abs=1)
            assert got["age_seconds"]["max"] == pytest.approx(max(ages), abs=1)
    # the crawls hold pages whose images, scripts or styles were captured too, and pages that lack some
    assert some_captured >= 5 and any(completeness.of_page(reader, p)["never_captured"] for p in with_res)
    # a page without a WARC-Date (some archives have such records): captured or not, no ages
    page = max(with_res, key=lambda p: len(expected(p, caps)[1]))
    undated = completeness.of_page(reader, dict(page, warc_date=None))
    assert undated["captured"] == len(expected(page, caps)[1]) > 0 and undated["warc_date"] is None
    assert undated["never_captured"] == expected(page, caps)[0]
    assert undated["age_seconds"] == {"min": None, "median": None, "max": None}


def test_over_http_and_in_the_daily_report(corpus_days, pages):
    caps = all_captures(corpus_days)
    # the page with the most resources captured
    page = max(pages, key=lambda p: len(expected(p, caps)[1]))
    never, ages = expected(page, caps)
    app = FastAPI()
    app.include_router(capture_router(lambda rid: None, [], completeness=completeness_finder({"dc1": corpus_days})))
    with ServerThread(app) as srv:
        r = httpx.get(f"{srv.url}/capture/completeness/{page['record_id']}", timeout=60)
        assert r.status_code == 200, r.text
        got = r.json()
        assert got["url"] == page["url"] and got["dc"] == "dc1" and got["never_captured"] == never
        assert got["captured"] == len(ages) > 0 and got["age_seconds"]["max"] == pytest.approx(max(ages), abs=1)
        assert got["day"] in (D1.isoformat(), D2.isoformat())
        r = httpx.get(f"{srv.url}/capture/completeness/urn:uuid:no-such-page", timeout=30)
        assert r.status_code == 404 and "no published page" in r.json()["error"]
    # the report's section: the day's sample, its counts the pages' own
    block = completeness.day_summary(day_dir(corpus_days, D1), os.path.join(corpus_days, capindex.FOLDER))
    assert block is not None
    d1 = completeness.page_rows(day_dir(corpus_days, D1))
    with_res = [p for p in d1 if completeness.resources(p)]
    assert block["pages"] == len(d1) and block["pages_with_resources"] == len(with_res)
    assert block["sampled"] == min(len(with_res), completeness.SAMPLE)
    if block["sampled"] == len(with_res):  # every page with resources: the counts are the scan's
        assert block["resources"] == sum(len(completeness.resources(p)) for p in with_res)
        assert block["captured"] == sum(len(expected(p, caps)[1]) for p in with_res)
    page_html = report.render(
        {
            "day": D1.isoformat(),
            "by_language": [],
            "by_mime": [],
            "by_status": [],
            "top_hosts": [],
            "page_sizes": [],
            "completeness": block,
        },
        [],
    )
    assert 'id="completeness"' in page_html and f"{block['captured']} of {block['resources']} resources" in page_html
