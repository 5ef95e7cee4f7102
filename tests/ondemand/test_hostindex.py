"""The host index of a preprocessed day (lib/pages/hostindex.py) and the on-demand selection it
narrows: what it holds equals a recount of the page files; a selection read through it equals the
full scan, for every form of pattern it accepts; a day whose files changed is scanned; a purge
that rewrites page files writes it again. Plain pyarrow, no Spark."""

from __future__ import annotations

import datetime as dt
import pathlib
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lib.index import indexable
from lib.ondemand.patterns import host_test, parse_patterns
from lib.ondemand.select import select_file, source_files
from lib.pages import exclusions, hostindex
from lib.pages.exclude import filter_day
from lib.pages.schema import PAGE_SCHEMA
from tests.index.test_index_job import sample_pages
from tests.ondemand.test_ondemand_job import day2_pages

DAY = dt.date(2026, 1, 15)
FILE_SCHEMA = pa.schema([f for f in PAGE_SCHEMA if f.name != "language"])


def recount(day: pathlib.Path) -> Counter:
    """(host, language, file, row group) -> pages, read row by row (not the module's way)."""
    out: Counter = Counter()
    for f in sorted(day.glob("language=*/*.parquet")):
        pf = pq.ParquetFile(f)
        rel = f.relative_to(day).as_posix()
        for g in range(pf.num_row_groups):
            for h in pf.read_row_group(g, columns=["url_host"]).column(0).to_pylist():
                out[(h, f.parent.name.split("=")[1], rel, g)] += 1
    return out


def indexed(day: pathlib.Path) -> Counter:
    t = pq.read_table(day / hostindex.HOSTS)
    return Counter({(r["url_host"], r["language"], r["file"], r["row_group"]): r["rows"] for r in t.to_pylist()})


def all_pages() -> list[dict]:
    """Both test days' pages and one without url_host (a URL the parser could not split): a SURT
    prefix may still select it by its URL, so the index must send it to be read."""
    odd = dict(sample_pages()[1], url="https://site1.example.com/odd", url_host=None)
    return sample_pages() + day2_pages() + [odd]


@pytest.fixture
def day(tmp_path) -> pathlib.Path:
    """Both test days' pages in one day, shuffled over two files a language, row groups of 2
    pages: hosts spread over several files and row groups."""
    out = tmp_path / "preprocessed" / "2026-01" / "15"
    pages = all_pages()
    by_lang: dict[str, list[dict]] = {}
    for i, p in enumerate(pages):
        by_lang.setdefault(p["language"], []).append({k: v for k, v in p.items() if k != "language"})
    for lang, rows in by_lang.items():
        (out / f"language={lang}").mkdir(parents=True)
        for n in (0, 1):
            t = pa.Table.from_pylist(rows[n::2], schema=FILE_SCHEMA)
            pq.write_table(t, out / f"language={lang}" / f"part-{n:05d}.parquet", row_group_size=2)
    hostindex.write(str(out))
    return out


def test_the_index_holds_every_host_of_every_row_group(day):
    want = recount(day)
    assert indexed(day) == want and sum(want.values()) == len(all_pages())
    assert len({k[3] for k in want}) > 2  # several row groups a file: the test means something


def _select(day: pathlib.Path, text: str, langs: tuple[str, ...], tmp: pathlib.Path) -> tuple[list[str], int, dict]:
    """The URLs a request selects (in file order) and the pages it read."""
    patterns = tuple(parse_patterns(text))
    files, pruning = source_files([(DAY, str(day))], langs, patterns)
    urls, read = [], 0
    policy = indexable.Policy(False)
    for n, src in enumerate(files):
        r = select_file(src, str(tmp / f"raw{n}"), str(tmp / f"sel{n}"), patterns, None, policy)
        read += r["rows"]
        out = tmp / f"sel{n}" / src.target
        urls += pq.read_table(out, columns=["url"]).column(0).to_pylist() if out.exists() else []
    return urls, read, pruning


SCANNED = "https://site1*.example.com/page"  # a wildcard in the host: the day is scanned
CASES = [
    "example.com",  # host or registered domain
    "site3.example.com\nwww.beispiel1.de",
    "com,example,site1",  # SURT prefix, hosts below (and the page without url_host)
    "de,beispiel1)/neu",  # SURT prefix with a path
    "https://site7.example.com/*",  # glob with a literal host
    SCANNED,
    "nowhere.example.net",  # no host of the day
]


@pytest.mark.parametrize("text", CASES)
def test_a_selection_through_the_index_equals_the_full_scan(day, tmp_path, text):
    langs = ("eng", "deu", "fra")
    got, read, pruning = _select(day, text, langs, tmp_path / "by-index")
    (day / hostindex.HOSTS).rename(tmp_path / "hosts.parquet")  # the same day without its index
    want, scanned, fallback = _select(day, text, langs, tmp_path / "scan")
    why = "URL patterns not reducible to hosts" if text == SCANNED else "no host index"
    assert got == want and fallback["days_scanned"] == {why: 1}
    if text.startswith("com,example"):
        assert "https://site1.example.com/odd" in got  # no url_host, but its URL has the prefix
    total = sum(1 for p in all_pages() if p["language"] in langs)
    assert scanned == total
    if text == SCANNED:
        assert pruning["days_scanned"] == {why: 1} and read == total
    else:
        assert pruning["days_by_host_index"] == 1 and read < total  # fewer pages read than the scan
        assert pruning["pages_by_day"] == {DAY.isoformat(): total}


def test_host_tests_of_globs_and_surts():
    def test(text: str):
        (p,) = parse_patterns(text)
        return host_test([p])

    assert test("https://*.bund.de/presse/*") is None and test("*://bund.de/*") is None
    assert test("https://bund.de*") is None  # '*' may reach past the host
    t = test("https://user@WWW.Bund.de:8443/x/*")
    assert t("www.bund.de") and not t("bund.de") and not t("evil.com")
    s = test("de,bund,")
    assert s("www.service.bund.de") and not s("bund.de") and s("0x7f.%41") and s(None)  # odd hosts: always read
    assert host_test([]) is None


def test_a_day_whose_files_changed_is_scanned(day):
    langs = ("eng",)
    assert hostindex.plan(str(day), langs, lambda h: True).scan is None
    f = day / "language=eng" / "part-00001.parquet"
    t = pq.read_table(f)
    pq.write_table(t.slice(1), f, row_group_size=2)  # a page less: row groups shift
    assert hostindex.plan(str(day), langs, lambda h: True).scan.startswith("host index stale")
    assert hostindex.plan(str(day), ("deu",), lambda h: True).scan is None  # the other partitions are as indexed
    f.unlink()
    assert "gone" in hostindex.plan(str(day), langs, lambda h: True).scan
    (day / hostindex.HOSTS).unlink()
    assert hostindex.plan(str(day), langs, lambda h: True).scan == "no host index"


def test_a_purge_that_rewrites_page_files_writes_the_index_again(day, tmp_path):
    gone = exclusions.parse('{"url": "https://site3.example.com/page", "date": "2026-01-20", "reason": "r"}\n')
    out = tmp_path / "purged"
    r = filter_day(str(day), str(out), gone, how="link")
    assert r["pages"]["excluded"] == 2 and r["pages"]["files_changed"] >= 1  # site3 on both test days
    assert indexed(out) == recount(out) != recount(day)
    same = tmp_path / "same"
    filter_day(str(day), str(same), exclusions.parse(""), how="link")
    assert (same / hostindex.HOSTS).stat().st_ino == (day / hostindex.HOSTS).stat().st_ino  # linked as it was
