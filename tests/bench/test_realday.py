"""devtools/realday.py on the shared real samples: both cuts hold the same records, one gzip
member each; copies rename hosts consistently (each copy's pages link within the copy) and keep
the source's distinct link targets per link; the same arguments give the same bytes."""

from __future__ import annotations

import collections
import hashlib
import pathlib
import re
import zlib

import pytest

from devtools import realday
from devtools.realday_records import collect_domains
from lib.pages.weburls import _extractor

COPIES = 3


def _members(path: pathlib.Path) -> int:
    """gzip members of a file (each must end where the next begins)."""
    data, n = path.read_bytes(), 0
    while data:
        d = zlib.decompressobj(31)
        d.decompress(data)
        assert d.eof, f"{path}: truncated member"
        data, n = d.unused_data, n + 1
    return n


def _records(files: list[str]) -> collections.Counter:
    """(type, record id, sha1 of the block) of every record, read with warcio."""
    from warcio.archiveiterator import ArchiveIterator

    out: collections.Counter = collections.Counter()
    for p in files:
        with open(p, "rb") as f:
            for r in ArchiveIterator(f, no_record_parse=True):
                block = r.raw_stream.read()
                assert len(block) == int(r.rec_headers.get_header("Content-Length"))
                out[(r.rec_type, r.rec_headers.get_header("WARC-Record-ID"), hashlib.sha1(block).hexdigest())] += 1
    return out


@pytest.fixture(scope="module")
def day(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("realday")
    return realday.build_day(out, COPIES, [corpus], large_bytes=8 << 20, heavy=False, quiet=True)


def test_both_cuts_hold_the_same_records_one_member_each(day):
    small, large = day["files"]["small"], day["files"]["large"]
    assert len(small) > 3 * len(large) > 3, (len(small), len(large))
    for cut in ("small", "large"):
        assert all(re.search(r"/warc/\d{4}-\d{2}/\d{2}/[^/]+/\d{6}-\d+\.warc\.gz$", p) for p in day["files"][cut])
    a, b = _records(small), _records(large)
    assert a == b
    shape = day["shape"]
    assert sum(a.values()) == shape["records"] == sum(_members(pathlib.Path(p)) for p in small)
    assert sum(_members(pathlib.Path(p)) for p in large) == shape["records"]
    kinds = collections.Counter()
    for (kind, _, _), n in a.items():
        kinds[kind] += n
    assert dict(kinds) == shape["records_by_type"]
    assert {"response", "request", "metadata", "revisit", "warcinfo", "resource"} <= set(kinds)


def _copy_of(domains: set[str], host: str) -> int | None:
    """0 for a source domain, K for its copy K, None for a host the day does not rename."""
    e = _extractor()(host)
    name = f"{e.domain}.{e.suffix}"
    if name in domains:
        return 0
    m = re.fullmatch(r"(.+)-c(\d+)", e.domain)
    return int(m[2]) if m and f"{m[1]}.{e.suffix}" in domains else None


def test_copies_link_within_themselves_and_keep_link_diversity(day, corpus):
    from urllib.parse import urlsplit

    from lib.preprocess.archive_pages import FileProcessor

    records, _, _ = realday.load_sources([str(corpus)], heavy=False)
    domains = collect_domains(records)
    pages: collections.Counter = collections.Counter()
    links: collections.Counter = collections.Counter()
    targets: dict[int, set] = collections.defaultdict(set)
    crossing = []
    seen: set[str] = set()  # a repeated record id is one page of its copy (its second capture counted apart)
    total = 0
    for path in day["files"]["large"]:
        with open(path, "rb") as f:
            for row in FileProcessor(path).pages(f):
                total += 1
                if row["record_id"] in seen:
                    continue
                seen.add(row["record_id"])
                k = _copy_of(domains, urlsplit(row["url"]).hostname or "")
                assert k is not None, row["url"]
                pages[k] += 1
                for target, *_ in row["outgoing_links"]:
                    j = _copy_of(domains, urlsplit(target).hostname or "")
                    if j is not None and j != k:
                        crossing.append((row["url"], target))
                    links[k] += 1
                    targets[k].add(target)
    assert set(pages) == set(range(COPIES)) and len(set(pages.values())) == 1, pages
    assert len(set(links.values())) == 1, links
    assert not crossing, crossing[:5]
    source = len(targets[0]) / links[0]
    assert 0.2 < source < 0.8
    assert abs(day["shape"]["distinct_targets_per_link"] - source) <= 0.05
    assert day["shape"]["html_pages"] == total > sum(pages.values())


def test_revisits_point_at_their_copys_payloads(day, corpus):
    from urllib.parse import urlsplit

    from warcio.archiveiterator import ArchiveIterator

    records, _, _ = realday.load_sources([str(corpus)], heavy=False)
    domains = collect_domains(records)
    payloads: dict = collections.defaultdict(set)
    revisits = []
    for path in day["files"]["large"]:
        with open(path, "rb") as f:
            for r in ArchiveIterator(f, no_record_parse=True):
                uri = r.rec_headers.get_header("WARC-Target-URI") or ""
                k = _copy_of(domains, urlsplit(uri).hostname or "") if uri.startswith("http") else None
                digest = r.rec_headers.get_header("WARC-Payload-Digest")
                if r.rec_type in ("response", "resource"):
                    payloads[k].add(digest)
                elif r.rec_type == "revisit":
                    revisits.append((k, digest))
    found = collections.Counter(k for k, d in revisits if d in payloads[k])
    assert found[0] > 0 and all(found[k] == found[0] for k in range(COPIES)), found


def test_the_same_arguments_give_the_same_bytes(day, corpus, tmp_path):
    again = realday.build_day(tmp_path, COPIES, [corpus], large_bytes=8 << 20, heavy=False, shape=False, quiet=True)
    for cut in ("small", "large"):
        first, second = day["files"][cut], again["files"][cut]
        assert [pathlib.Path(p).relative_to(day[cut]) for p in first] == [
            pathlib.Path(p).relative_to(again[cut]) for p in second
        ]
        for p, q in zip(first, second):
            assert pathlib.Path(p).read_bytes() == pathlib.Path(q).read_bytes(), p


def test_a_copy_renames_the_registered_domain_wherever_it_stands_as_a_host():
    from devtools.realday_records import Renamer

    ren = Renamer({"bbc.co.uk", "example.com"}, 3)
    assert (
        ren.text("https://www.bbc.co.uk/news?u=http://Example.COM/x")
        == "https://www.bbc-c3.co.uk/news?u=http://Example-c3.COM/x"
    )
    # other domains, domains inside longer names and words that merely end alike stay
    assert (
        ren.bytes(b"notbbc.co.uk bbc.co.uk.org example.community mail@example.com")
        == b"notbbc.co.uk bbc.co.uk.org example.community mail@example-c3.com"
    )


def _ids_by_file(files: list[str]) -> dict[str, list[tuple[str, str]]]:
    """record id -> [(file, sha1 of the whole record's bytes)] of every record, read with warcio."""
    from warcio.archiveiterator import ArchiveIterator

    out: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    for p in files:
        with open(p, "rb") as f:
            it = ArchiveIterator(f, no_record_parse=True)
            for r in it:
                block = r.raw_stream.read()
                head = r.rec_headers.to_str()
                out[r.rec_headers.get_header("WARC-Record-ID")].append(
                    (p, hashlib.sha1(head.encode() + block).hexdigest())
                )
    return out


def test_repeated_record_ids_stand_in_another_archive_of_both_cuts(day):
    shape = day["shape"]
    assert shape["repeat_ids"] == realday.REPEAT_IDS
    want = round(realday.REPEAT_IDS * shape["records"] / (1 + realday.REPEAT_IDS))
    assert shape["repeated_record_ids"] == want > 5, shape["repeated_record_ids"]
    assert shape["records_with_repeated_ids"] == 2 * want
    assert shape["repeated_records_by_type"].get("response", 0) > 0, shape["repeated_records_by_type"]
    repeated = {}
    for cut in ("small", "large"):
        ids = _ids_by_file(day["files"][cut])
        twice = {rid: where for rid, where in ids.items() if len(where) > 1}
        assert len(twice) == want and all(len(w) == 2 for w in twice.values())
        for rid, ((f1, h1), (f2, h2)) in twice.items():
            assert f1 != f2 and h1 == h2, (cut, rid)  # the same record, byte for byte, in another archive
        repeated[cut] = set(twice)
    assert repeated["small"] == repeated["large"]


def test_preprocess_keeps_both_captures_of_a_repeated_page(day, spark, tmp_path):
    """A repeated id is two captures for preprocess: both rows kept, told apart by (warc_file,
    warc_offset); the day's pages are the shape's (which counts the repeats too)."""
    import pyarrow.dataset as ds

    from jobs import preprocess

    out = tmp_path / "pre"
    assert preprocess.main(["--input", day["small"], "--output", str(out)], spark=spark) == 0
    t = (
        ds.dataset(str(out), format="parquet", partitioning="hive")
        .to_table(columns=["record_id", "url", "warc_file", "warc_offset"])
        .to_pylist()
    )
    assert len(t) == day["shape"]["html_pages"]
    by_id = collections.defaultdict(list)
    for r in t:
        by_id[r["record_id"]].append(r)
    twice = {rid: rows for rid, rows in by_id.items() if len(rows) > 1}
    assert twice, "no repeated HTML page in the day"
    for rid, rows in twice.items():
        assert len(rows) == 2 and rows[0]["url"] == rows[1]["url"]
        assert rows[0]["warc_file"] != rows[1]["warc_file"], rid
    assert len({(r["warc_file"], r["warc_offset"]) for r in t}) == len(t)
