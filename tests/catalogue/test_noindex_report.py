"""A page published on an earlier day that now says noindex is listed in the daily report, not
purged by itself (docs/robots.md, "Take-downs and signals")."""

from __future__ import annotations

import datetime as dt

from lib.catalogue import noindex, report
from tests.index.test_index_job import _page, run_index, write_day


def test_the_report_lists_pages_published_before_that_now_say_noindex(spark, tmp_path):
    urls = [f"https://site{i}.example.com/page" for i in range(4)]
    before = [_page(i, u, "com", "eng", f"Page {i}", f"river number {i} flows", []) for i, u in enumerate(urls)]
    root = tmp_path / "root"
    # the earlier day, published: its pages moved to 2026-01-14
    inp = write_day(root / "d14", before)
    assert run_index(spark, inp, root / "index" / "2026-01" / "14") == 0
    # the day: pages 1 and 3 now say noindex, page 2 is gone, a new page came
    now = [dict(p, ows_index=True) for p in before[:2]] + [
        _page(9, "https://new.example.com/x", "com", "eng", "New", "a new page here", [])
    ]
    now[1].update(ows_index=False, robots=["noindex"])
    now.append(dict(_page(10, urls[3], "com", "eng", "P3", "text", []), ows_index=False))
    day = write_day(root, now)
    block = noindex.report(str(root), dt.date(2026, 1, 15), str(day))
    assert block["noindex_pages"] == 2 and block["published_earlier"] == 2
    assert block["urls"] == [{"url": urls[1], "day": "2026-01-14"}, {"url": urls[3], "day": "2026-01-14"}]
    page = report._noindex_section(block)
    assert urls[1] in page and "2026-01-14" in page and "dailyslice purge" in page
    # a day without such pages, or beyond the look-back: none listed
    assert noindex.report(str(root), dt.date(2026, 3, 1), str(day))["published_earlier"] == 0
