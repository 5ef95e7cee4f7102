"""The request format without Spark: url_patterns.txt forms and errors, config.json checks."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from lib.ondemand.patterns import PatternError, parse_patterns, selects
from lib.ondemand.request import RequestError, check_days, parse_config, read_request, split_folder
from lib.pages.weburls import surt_key

PATTERNS = """# federal sites
de,bund,
de,bmi)/presse
example.org
https://*.example.com/docs/*

"""


@pytest.mark.parametrize(
    "url,want",
    [
        ("https://service.bund.de/a", True),  # SURT de,bund, (a host below bund.de)
        ("https://bund.de/a", False),  # de,bund)/a: not below de,bund,
        ("https://www.bmi.de/presse/x", True),  # www. dropped by the SURT key
        ("https://bmi.de/kontakt", False),
        ("https://example.org/", True),  # a domain: itself
        ("https://a.b.example.org/x", True),  # and every host below it
        ("https://notexample.org/", False),  # not a suffix match on the string
        ("https://docs.example.com/docs/api", True),  # the glob
        ("https://docs.example.com/blog/api", False),
    ],
)
def test_each_pattern_form_matches_as_documented(url, want):
    ps = parse_patterns(PATTERNS)
    assert [p.kind for p in ps] == ["surt", "surt", "host", "glob"] and [p.line for p in ps] == [2, 3, 4, 5]
    host = url.split("/")[2]
    assert selects(ps, url, host) is want
    if ps[0].kind == "surt" and want and "bund" in url:
        assert surt_key(url).startswith("de,bund,")


def test_no_pattern_selects_every_url():
    assert parse_patterns("# nothing\n\n") == []
    assert selects([], "https://anything.example/", "anything.example")


@pytest.mark.parametrize(
    "line,reason",
    [
        ("https://example.com/page", "a URL without a wildcard"),
        ("exa mple.com", "whitespace inside"),
        ("https://example.com/[ab", "unbalanced"),
        ("de,bund)presse", "path starts with '/'"),
        ("de;bund,", "SURT prefix's host part"),
        ("-bad-.example", "not a host"),
    ],
)
def test_a_bad_pattern_names_the_file_line_and_reason(line, reason):
    with pytest.raises(PatternError) as e:
        parse_patterns(f"example.org\n# comment\n{line}\n", "req/url_patterns.txt")
    assert str(e.value).startswith(f"req/url_patterns.txt:3: {line!r}: ") and reason in str(e.value)


GOOD = {"days": ["2026-01-16", "2026-01-15", "2026-01-16"], "languages": ["eng"], "requester": "r", "purpose": "p"}


def test_config_defaults_and_day_forms():
    c = parse_config(json.dumps(GOOD))
    assert c["days"] == (dt.date(2026, 1, 15), dt.date(2026, 1, 16)) and c["outputs"] == ("ciff",)
    rng = parse_config(json.dumps(dict(GOOD, days={"from": "2026-01-30", "to": "2026-02-02"})))
    assert [d.isoformat() for d in rng["days"]] == ["2026-01-30", "2026-01-31", "2026-02-01", "2026-02-02"]


@pytest.mark.parametrize(
    "change,reason",
    [
        ({"days": {"from": "2026-01-03", "to": "2026-01-01"}}, "days.to 2026-01-01 is before days.from"),
        ({"days": ["2026-02-30"]}, "days[0]: '2026-02-30' is not a date"),
        ({"days": []}, "days must be a non-empty list"),
        ({"languages": ["en"]}, "unknown language(s) 'en'"),
        ({"outputs": ["edges"]}, "holding ciff"),
        ({"langauges": ["eng"]}, "unknown key(s) langauges"),
        ({"requester": " "}, "requester must be a non-empty string"),
        ({"where": "url LIKE"}, "where 'url LIKE'"),
        ({"docs_per_shard": 0}, "docs_per_shard must be a positive integer"),
    ],
)
def test_a_bad_config_names_the_file_and_reason(change, reason):
    with pytest.raises(RequestError) as e:
        parse_config(json.dumps(dict(GOOD, **change)), "x/config.json")
    assert str(e.value).startswith("x/config.json: ") and reason in str(e.value)


def test_missing_config_bad_folder_and_unpublished_days(tmp_path):
    with pytest.raises(RequestError, match="ROOT/on_demand/<id>"):
        split_folder(str(tmp_path / "requests" / "a"))
    folder = tmp_path / "on_demand" / "a"
    folder.mkdir(parents=True)
    with pytest.raises(RequestError, match="config.json: missing"):
        read_request(str(folder))
    (folder / "config.json").write_text(json.dumps(GOOD))
    req = read_request(str(folder))
    assert (req.root, req.id, req.patterns) == (str(tmp_path), "a", ())
    day = tmp_path / "preprocessed" / "2026-01" / "15"
    day.mkdir(parents=True)
    (day / "_SUCCESS").write_bytes(b"")
    (tmp_path / "preprocessed" / "2026-01" / "16").mkdir()  # not complete: no _SUCCESS
    with pytest.raises(RequestError, match=r"1 of 2 day\(s\) not published .*: 2026-01-16$"):
        check_days(req)
