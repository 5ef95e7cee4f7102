"""URL helpers: normalisation, ids and parts (no Spark)."""

from __future__ import annotations

from lib.pages import weburls


def test_url_normalisation_and_parts():
    assert weburls.normalize_url("HTTP://Example.COM:80/a?b=1#frag") == "http://example.com/a?b=1"
    assert weburls.url_id("http://example.com") == weburls.url_id("HTTP://EXAMPLE.com:80/")
    p = weburls.url_parts("https://news.bbc.co.uk/x/y?q=1")
    assert (p["url_subdomain"], p["url_domain"], p["url_suffix"], p["url_query"]) == ("news", "bbc.co.uk", "co.uk", "q=1")


def test_ipv6_hosts_keep_their_brackets():
    assert weburls.normalize_url("http://[::1]:8080/x#y") == "http://[::1]:8080/x"
    assert weburls.normalize_url("https://[2001:db8::1]:443/") == "https://[2001:db8::1]/"
