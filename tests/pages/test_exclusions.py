"""The exclusion list: its format, its errors, what each kind of rule matches, and the
vectorized mask agreeing with the one-by-one match."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.pages import exclusions
from lib.pages.exclusions import ExclusionError

LIST = "\n".join([
    "# take-downs",
    json.dumps({"url": "https://www.example.com/a?b=2&a=1", "date": "2026-11-20", "reason": "r1"}),
    "",
    json.dumps({"surt": "com,foo,", "date": "2026-11-21", "reason": "every subdomain of foo.com"}),
    json.dumps({"surt": "http://bar.org/private/", "date": "2026-11-21", "reason": "a folder, given as a URL"}),
    json.dumps({"host": "baz.net", "date": "2026-11-22", "reason": "one host"}),
])


@pytest.mark.parametrize("url,excluded", [
    ("http://example.com/a?a=1&b=2", True),  # scheme, www. and query order aside
    ("http://EXAMPLE.com/a?b=2&a=1#frag", True),
    ("http://example.com/a", False),
    ("http://example.com/a?a=1&b=2&c=3", False),
    ("http://x.foo.com/page", True),
    ("http://a.b.foo.com/", True),
    ("http://foo.com/", False),  # the prefix names subdomains only
    ("http://bar.org/private/x.html", True),
    ("http://bar.org/privately", False),
    ("https://www.baz.net:8443/q", True),
    ("http://sub.baz.net/", False),  # a host rule is one host
    (None, False),
    ("", False),
    ("not a url", False),
])
def test_each_kind_of_rule_matches_what_it_says(url, excluded):
    x = exclusions.parse(LIST, "list.jsonl")
    assert x.match(url) is excluded
    assert x.mask([url]).to_pylist() == [excluded]


def test_the_matching_rule_is_named_with_its_date_and_reason():
    x = exclusions.parse(LIST, "list.jsonl")
    r = x.rule_for("http://bar.org/private/1")
    assert (r.kind, r.key, r.date) == ("surt", "org,bar)/private/", "2026-11-21")
    assert len(x) == 4 and "4 exclusion rule(s) from list.jsonl" == x.describe()


def test_a_shorter_prefix_covers_a_longer_one():
    x = exclusions.parse("\n".join(json.dumps({"surt": s}) for s in ("com,a)/x/y", "com,a)/", "com,b)/z")))
    assert x.match("http://a.com/q") and x.match("http://a.com/x/y/z") and x.match("http://b.com/z1")
    assert not x.match("http://b.com/y")


@pytest.mark.parametrize("line,reason", [
    ('{"url": "example.com/x"}', "no scheme"),
    ('{"url": "http://a/", "host": "a"}', "exactly one of"),
    ('{"date": "2026-01-01"}', "exactly one of"),
    ('{"host": ""}', "non-empty"),
    ('[1, 2]', "JSON object"),
    ('{"url": ', "not JSON"),
])
def test_a_bad_line_is_an_error_naming_file_and_line(line, reason):
    with pytest.raises(ExclusionError) as e:
        exclusions.parse('{"host": "ok.org"}\n' + line, "s3://b/_exclusions.jsonl")
    assert str(e.value).startswith("s3://b/_exclusions.jsonl:2:") and reason in str(e.value)


def test_loading_follows_the_job_options(tmp_path):
    assert not exclusions.for_job(str(tmp_path), None)  # no file at the root: nothing excluded
    (tmp_path / "_exclusions.jsonl").write_text('{"host": "a.org"}\n')
    assert len(exclusions.for_job(str(tmp_path), None)) == 1
    assert not exclusions.for_job(str(tmp_path), "none")
    with pytest.raises(FileNotFoundError):
        exclusions.for_job(str(tmp_path), str(tmp_path / "missing.jsonl"))


HOSTS = ["example.com", "www.example.com", "x.foo.com", "foo.com", "bar.org", "baz.net", "sub.baz.net", "other.io"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.builds(
    lambda scheme, host, path: f"{scheme}://{host}/{path}",
    st.sampled_from(["http", "https", "HTTP"]), st.sampled_from(HOSTS),
    st.sampled_from(["", "a?b=2&a=1", "a", "private/x", "q", "p/q?z=1"]))), max_size=30))
def test_the_vectorized_mask_is_the_one_by_one_match(urls):
    x = exclusions.parse(LIST)
    assert x.mask(pa.array(urls, pa.string())).to_pylist() == [x.match(u) for u in urls]
