"""robots.txt verdicts (lib.pages.robotstxt): RFC 9309's rules and examples, the choices for an
archive (which capture of a day applies, statuses, redirects, the 500 KiB cap), and the
verdicts held equal to a second parser's over every robots.txt of real archives
(tests/pages/test_robotstxt_real.py)."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest

from lib.pages import robotstxt
from lib.pages.robotstxt import (
    MAX_BYTES,
    RobotsRules,
    is_robots_url,
    origin,
    pick,
    robots_record,
    verdicts,
)

DAY = "2026-11-20T"


def rec(url: str, status: int = 200, body: bytes | str = b"", when: str = "10:00:00Z", location: str | None = None):
    body = body.encode() if isinstance(body, str) else body
    r = robots_record(url, status, body, DAY + when, location)
    assert r is not None
    return r


def rules_for(body: str, agents=("*",), **kw) -> RobotsRules:
    return RobotsRules([rec("https://example.com/robots.txt", 200, body)], agents=agents, **kw)


def ok(rules: RobotsRules, path: str, agents=None) -> bool | None:
    return rules.allowed("https://example.com" + path, agents)[0]


# -- which URL is a robots.txt, and whose -----------------------------------------------------


@pytest.mark.parametrize(
    "url,expected",
    [
        ("http://example.com/robots.txt", True),
        ("https://EXAMPLE.com:8443/robots.txt", True),
        ("https://example.com/robots.txt#top", True),  # a fragment is never sent
        ("https://example.com/robots.txt?x=1", False),  # another resource: crawlers fetch it without a query
        ("https://example.com/ROBOTS.TXT", False),  # RFC 9309 2.3: "/robots.txt", lowercase
        ("https://example.com/a/robots.txt", False),  # only the top-level path
        ("https://example.com/robots.txt/", False),
        ("ftp://example.com/robots.txt", False),
        ("dns:example.com", False),
        ("http://[::1/robots.txt", False),  # unparsable
    ],
)
def test_is_robots_url(url, expected):
    assert is_robots_url(url) is expected


@pytest.mark.parametrize(
    "url,expected",
    [
        ("HTTP://WWW.Example.COM/a?b", "http://www.example.com"),
        ("http://example.com:80/", "http://example.com"),
        ("https://example.com:443/", "https://example.com"),
        ("http://example.com:443/", "http://example.com:443"),  # a port is part of the origin
        ("https://example.com:8443/x", "https://example.com:8443"),
        ("https://user:pw@example.com./x", "https://example.com"),
        ("https://[2001:db8::1]:8080/", "https://[2001:db8::1]:8080"),
        ("https://bücher.de/", "https://xn--bcher-kva.de"),
        ("mailto:a@example.com", None),
        ("http:///nohost", None),
        ("http://example.com:99999/", None),
    ],
)
def test_origin(url, expected):
    assert origin(url) == expected


def test_rules_apply_per_scheme_host_and_port():
    rules = rules_for("User-agent: *\nDisallow: /\n")
    assert rules.allowed("https://example.com/a") == (False, "robots.txt disallow: /")
    assert rules.allowed("https://EXAMPLE.com:443/a")[0] is False
    for other in ("http://example.com/a", "https://example.com:8443/a", "https://www.example.com/a"):
        assert rules.allowed(other) == (None, ""), other  # no robots.txt for that origin: nothing assumed


def test_robots_record_of_other_urls_and_statuses_is_none():
    assert robots_record("https://example.com/index.html", 200, b"", None) is None
    assert robots_record("https://example.com/robots.txt", 0, b"", None) is None
    assert robots_record("https://example.com/robots.txt", 100, b"", None) is None


def test_record_date_and_redirect_target():
    r = robots_record("http://example.com/robots.txt", 301, b"", "2026-11-20T12:00:00+02:00", "/new/robots.txt")
    assert (r.origin, r.date, r.location) == (
        "http://example.com",
        "2026-11-20T10:00:00Z",
        "http://example.com/new/robots.txt",
    )
    assert robots_record("http://example.com/robots.txt", 200, b"", None, "/x").location is None  # not a redirect


# -- the 500 KiB cap ----------------------------------------------------------------------------


def test_body_is_capped_at_500_kib_on_a_line_end():
    line = b"Disallow: /private-directory-number-00\n"
    head = b"User-agent: *\n" + line * (MAX_BYTES // len(line))
    r = rec("https://example.com/robots.txt", 200, head + b"Disallow: /\n" * 1000)
    assert r.truncated and len(r.body) <= MAX_BYTES and r.body.endswith(b"\n")
    assert r.body == head[: r.body.__len__()]
    # the rule cut by the cap is dropped whole: "Disallow: /" of a cut line would disallow everything
    rules = RobotsRules([r])
    assert rules.allowed("https://example.com/public")[0] is True
    assert rules.allowed("https://example.com/private-directory-number-00/x")[0] is False
    small = rec("https://example.com/robots.txt", 200, b"User-agent: *\nDisallow: /x\n")
    assert not small.truncated


# -- RFC 9309 rules (protego) -------------------------------------------------------------------

RFC_EXAMPLE = """\
User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
"""


@pytest.mark.parametrize(
    "agent,path,expected",
    [
        # RFC 9309 5.1's example and what it says of it
        ("foobot", "/example/page.html", True),
        ("foobot", "/example/allowed.gif", True),
        ("foobot", "/", False),
        ("foobot", "/other.html", False),
        ("barbot", "/example/page.html", False),
        ("bazbot", "/example/page.html", False),
        ("barbot", "/example/other.html", True),  # barbot's group says nothing of it: the * group is not used
        ("quxbot", "/example/page.html", True),  # an empty group allows everything
        ("quxbot", "/a.gif", True),
        ("otherbot", "/example/page.html", False),  # no group of its own: the * group
        ("otherbot", "/a.gif", False),
        ("otherbot", "/a.gif?x", True),  # "$": the end of the path
        ("otherbot", "/publications/", True),
        ("FooBot", "/example/page.html", True),  # agent matching ignores case
        ("FOOBOT", "/other.html", False),
    ],
)
def test_rfc9309_example(agent, path, expected):
    assert ok(rules_for(RFC_EXAMPLE), path, [agent]) is expected


@pytest.mark.parametrize(
    "body,path,expected",
    [
        # longest match wins, whatever the order
        ("Allow: /example/page/\nDisallow: /example/page/disallowed.gif", "/example/page/disallowed.gif", False),
        ("Disallow: /example/page/disallowed.gif\nAllow: /example/page/", "/example/page/disallowed.gif", False),
        ("Allow: /example/page/\nDisallow: /example/page/disallowed.gif", "/example/page/other.gif", True),
        ("Disallow: /example\nAllow: /example/page", "/example/page2", True),
        # allow wins a tie (equally long rules)
        ("Disallow: /example/page/\nAllow: /example/page/", "/example/page/x", True),
        ("Allow: /example/page/\nDisallow: /example/page/", "/example/page/x", True),
        # "*": any sequence; "$": the end
        ("Disallow: /path/file-with-a-*.html", "/path/file-with-a-asterisk.html", False),
        ("Disallow: /path/file-with-a-*.html", "/path/file-with-a-.htm", True),
        ("Disallow: /path/foo-$", "/path/foo-", False),
        ("Disallow: /path/foo-$", "/path/foo-bar", True),
        ("Disallow: /*.php$\nAllow: /", "/a/b.php", False),
        ("Disallow: /*.php$\nAllow: /", "/a/b.php5", True),
        ("Disallow: /*/private/", "/a/b/private/c", False),
        ("Disallow: /a*", "/a", False),
        # paths are case-sensitive
        ("Disallow: /Private", "/private", True),
        ("Disallow: /Private", "/Private/x", False),
        # the query is part of what rules match
        ("Disallow: /search?q=", "/search?q=cats", False),
        ("Disallow: /search?q=", "/search", True),
        ("Disallow: /foo/bar?baz=quz", "/foo/bar?baz=quz", False),
        # percent-encoding (RFC 9309 2.2.2's table): UTF-8 in a rule matches its %-encoded form
        ("Disallow: /foo/bar/\u30c4", "/foo/bar/%E3%83%84", False),
        ("Disallow: /foo/bar/%E3%83%84", "/foo/bar/%E3%83%84", False),
        ("Disallow: /foo/bar/%E3%83%84", "/foo/bar/%e3%83%84", False),  # hex digits in any case
        ("Disallow: /foo/bar/%62%61%7A", "/foo/bar/baz", False),
        ("Disallow: /foo/bar/baz", "/foo/bar/%62%61%7A", False),
        # an empty Disallow disallows nothing; no rules, no restriction
        ("Disallow:", "/anything", True),
        ("", "/anything", True),
        # lines: any case of the keys, spaces, comments, CRLF
        ("disallow : /x # not /y\r\nDISALLOW:/z", "/x1", False),
        ("disallow : /x # not /y\r\nDISALLOW:/z", "/y", True),
        ("disallow : /x # not /y\r\nDISALLOW:/z", "/z", False),
    ],
)
def test_rfc9309_matching(body, path, expected):
    assert ok(rules_for("User-agent: *\n" + body + "\n"), path) is expected


def test_groups_of_one_agent_are_combined_and_a_group_needs_its_agent():
    body = "User-agent: a\nDisallow: /x\n\nUser-agent: b\nDisallow: /y\n\nUser-agent: a\nDisallow: /z\n"
    rules = rules_for(body)
    assert ok(rules, "/x", ["a"]) is False and ok(rules, "/z", ["a"]) is False and ok(rules, "/y", ["a"]) is True
    assert ok(rules, "/x") is True  # no * group: no rules for *
    assert ok(rules_for("Disallow: /x\n"), "/x") is True  # a rule before any user-agent line belongs to no group


@pytest.mark.parametrize(
    "body,agent,path,expected",
    [
        # a user-agent value is its product token (RFC 9309 2.2.1), as Google's parser reads it
        ("User-agent: CCBot/2.0\nDisallow: /\n", "ccbot", "/x", False),
        ("User-agent: Download Ninja\nDisallow: /\n", "download", "/x", False),
        ("User-agent: k2spider\nDisallow: /\n", "k", "/x", False),
        ("User-agent: Mediapartners-Google*\nDisallow: /\n", "mediapartners-google", "/x", False),
        ("User-agent: CCBot/2.0\nDisallow: /\n", "otherbot", "/x", True),
        # other records do not end a run of user-agent lines (RFC 9309 2.2.4: they must not
        # interfere): a and b share the rule, however Crawl-delay, Sitemap or unknown lines sit
        ("User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /\n", "a", "/x", False),
        ("User-agent: a\n\nCrawl-delay: 5\n\nUser-agent: b\nDisallow: /\n", "a", "/x", False),
        ("User-agent: a\nSitemap: https://e.com/s.xml\nUser-agent: b\nDisallow: /\n", "a", "/x", False),
        ("User-agent: a\nNoindex: /y\nUser-agent: b\nDisallow: /\n", "a", "/x", False),
        ("User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /\n", "c", "/x", True),
        # while a rule does end it
        ("User-agent: a\nAllow: /z\nUser-agent: b\nDisallow: /\n", "a", "/x", True),
        # a colon inside a rule's path is the path's
        ("User-agent: *\nDisallow: /a:b\n", "*", "/a:b/c", False),
        ("User-agent: *\nDissallow: /typo\n", "*", "/typo", False),  # protego's leniency stays
    ],
)
def test_user_agent_lines_and_other_records(body, agent, path, expected):
    assert ok(rules_for(body), path, [agent]) is expected


def test_utf8_bom_and_stray_bytes():
    body = b"\xef\xbb\xbfUser-agent: *\nDisallow: /caf\xe9\nDisallow: /x\n"  # a Latin-1 byte in one rule
    rules = RobotsRules([rec("https://example.com/robots.txt", 200, body)])
    assert ok(rules, "/x") is False  # the BOM does not hide the first line; the bad byte costs only its rule
    assert ok(rules, "/cafe") is True


# -- agents -------------------------------------------------------------------------------------


def test_a_page_is_disallowed_if_any_agent_is():
    body = "User-agent: *\nDisallow: /all\n\nUser-agent: ccbot\nDisallow: /\n\nUser-agent: mybot\nAllow: /\n"
    assert ok(rules_for(body), "/page") is True
    both = rules_for(body, agents=["*", "CCBot"])
    assert both.allowed("https://example.com/page") == (False, "robots.txt disallow for CCBot: /")
    assert both.allowed("https://example.com/all/x") == (False, "robots.txt disallow: /all")
    mine = rules_for(body, agents=["*", "mybot"])
    assert ok(mine, "/page") is True
    assert ok(mine, "/all/x") is False  # * says no: ANY agent disallowed is enough
    assert ok(mine, "/all/x", ["mybot"]) is True  # per call


def test_agents_must_name_something():
    with pytest.raises(ValueError, match="at least one"):
        rules_for("", agents=[" ", ""])
    with pytest.raises(ValueError, match="unreachable"):
        rules_for("", unreachable="maybe")
    assert rules_for("", agents="ccbot").agents == ("ccbot",)


def test_reason_names_the_rule_or_at_least_the_agent(monkeypatch):
    body = "User-agent: *\nDisallow: /a/*.pdf$\nDisallow: /b/\u30c4\n"
    rules = rules_for(body, agents=["*", "ccbot"])
    assert rules.allowed("https://example.com/a/x/y.pdf") == (False, "robots.txt disallow: /a/*.pdf$")
    assert rules.allowed("https://example.com/b/%E3%83%84") == (False, "robots.txt disallow: /b/%E3%83%84")
    # should a protego release hide its rules, the verdict stands and the reason says less
    monkeypatch.setattr(robotstxt, "_matching_rule", lambda *a: None)
    assert rules.allowed("https://example.com/b/%E3%83%84") == (False, "robots.txt: disallowed for *")


def test_robots_txt_itself_is_allowed():
    assert ok(rules_for("User-agent: *\nDisallow: /\n"), "/robots.txt") is True


# -- statuses -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "status,expected,reason",
    [
        (404, True, ""),
        (410, True, ""),
        (401, True, ""),  # RFC 9309 2.3.1.3: every 4xx is "unavailable", 401 and 403 too
        (403, True, ""),
        (429, None, "robots.txt 429: unreachable, nothing assumed"),
        (500, None, "robots.txt 500: unreachable, nothing assumed"),
        (503, None, "robots.txt 503: unreachable, nothing assumed"),
    ],
)
def test_status_without_rules(status, expected, reason):
    body = "User-agent: *\nDisallow: /\n"  # an error page's body is never read as rules
    rules = RobotsRules([rec("https://example.com/robots.txt", status, body)])
    assert rules.allowed("https://example.com/page") == (expected, reason)


def test_unreachable_can_mean_complete_disallow():
    rules = RobotsRules([rec("https://example.com/robots.txt", 503)], unreachable="disallow")
    assert rules.allowed("https://example.com/page") == (False, "robots.txt 503: unreachable, complete disallow")
    assert RobotsRules([rec("https://example.com/robots.txt", 404)], unreachable="disallow").allowed(
        "https://example.com/page"
    ) == (True, "")


# -- which capture of the day applies -----------------------------------------------------------


def test_pick_latest_definitive_capture():
    a = rec("https://example.com/robots.txt", 200, "User-agent: *\nDisallow: /a\n", "08:00:00Z")
    b = rec("https://example.com/robots.txt", 200, "User-agent: *\nDisallow: /b\n", "12:00:00Z")
    gone = rec("https://example.com/robots.txt", 404, "", "16:00:00Z")
    down = rec("https://example.com/robots.txt", 503, "", "20:00:00Z")
    assert pick([a, b]) is b and pick([b, a]) is b
    assert pick([a, b, gone]) is gone  # the file was removed later that day
    assert pick([a, down]) is a and pick([down, a]) is a  # an outage does not undo the rules (RFC 9309 2.4)
    assert pick([down]) is down
    assert pick([]) is None
    rules = RobotsRules([down, b, a])
    assert ok(rules, "/b") is False and ok(rules, "/a") is True
    assert rules.record("https://example.com") is b


def test_pick_ties_do_not_depend_on_order():
    x = rec("https://example.com/robots.txt", 200, "User-agent: *\nDisallow: /x\n")
    y = rec("https://example.com/robots.txt", 200, "User-agent: *\nDisallow: /yy\n")
    missing = rec("https://example.com/robots.txt", 404)
    assert pick([x, y]) is pick([y, x]) is y  # same time: the larger body
    assert pick([missing, x]) is pick([x, missing]) is x  # same time: the 2xx


# -- redirects ----------------------------------------------------------------------------------


def test_redirect_followed_through_the_days_captures():
    www = rec("http://www.example.com/robots.txt", 301, location="https://example.com/robots.txt")
    https = rec("https://example.com/robots.txt", 200, "User-agent: *\nDisallow: /p\n")
    rules = RobotsRules([www, https])
    assert rules.allowed("http://www.example.com/p/1") == (False, "robots.txt disallow: /p")
    assert ok(rules, "/p/1") is False


def test_redirect_to_a_capture_the_day_does_not_hold_assumes_nothing():
    to_home = rec("http://a.example/robots.txt", 302, location="/")
    away = rec("http://b.example/robots.txt", 302, location="https://cdn.example/robots.txt")
    nowhere = rec("http://c.example/robots.txt", 302)
    rules = RobotsRules([to_home, away, nowhere])
    assert rules.allowed("http://a.example/x") == (
        None,
        "robots.txt redirects to http://a.example/, not archived that day: nothing assumed",
    )
    assert rules.allowed("http://b.example/x")[0] is None
    assert rules.allowed("http://c.example/x") == (
        None,
        "robots.txt redirects to nowhere (no Location), not archived that day: nothing assumed",
    )


def test_redirect_chains_end_after_five_hops():
    def chain(n: int) -> list:
        hops = [
            rec(f"http://h{i}.example/robots.txt", 301, location=f"http://h{i + 1}.example/robots.txt")
            for i in range(n)
        ]
        return hops + [rec(f"http://h{n}.example/robots.txt", 200, "User-agent: *\nDisallow: /\n")]

    assert RobotsRules(chain(5)).allowed("http://h0.example/x")[0] is False  # five redirects are followed
    assert RobotsRules(chain(6)).allowed("http://h0.example/x") == (True, "")  # more: "unavailable"
    loop = [
        rec("http://a.example/robots.txt", 301, location="http://b.example/robots.txt"),
        rec("http://b.example/robots.txt", 301, location="http://a.example/robots.txt"),
    ]
    assert RobotsRules(loop).allowed("http://a.example/x") == (True, "")


# -- batches ------------------------------------------------------------------------------------


def test_verdicts_of_a_column():
    rules = RobotsRules(
        [
            rec("https://example.com/robots.txt", 200, "User-agent: *\nDisallow: /private\n"),
            rec("https://down.example/robots.txt", 500),
        ]
    )
    urls = [
        "https://example.com/",
        "https://example.com/private/a",
        None,
        "https://other.example/",
        "https://down.example/x",
    ]
    expected = [
        (True, ""),
        (False, "robots.txt disallow: /private"),
        (None, ""),
        (None, ""),
        (None, "robots.txt 500: unreachable, nothing assumed"),
    ]
    assert verdicts(urls, rules) == expected
    assert verdicts(pa.array(urls), rules) == expected
    assert verdicts(pa.chunked_array([urls[:2], urls[2:]]), rules) == expected
    assert len(rules) == 2
    # shipped to Spark's workers (pickled), parsed rules and all, it answers the same
    again = pickle.loads(pickle.dumps(rules))
    assert verdicts(urls, again) == expected and again.agents == rules.agents
