"""Differential test: our robots.txt verdicts (protego) against robotspy's over every robots.txt
response of real archives: ../shared/corpus and tests/data/conformance.

robotspy fetches each capture over loopback HTTP, so its own status handling runs too. Each capture
is checked for ``*`` and every agent its file names, on the paths of its rules (as written, with a
suffix, with a sub-path, one character short; ``*`` as ``x``, ``$`` dropped), on ``/`` and on the
URLs of its host that the same archive holds. Redirects are served as redirects to the capture our
rules follow.

Every difference must be one explained below (EXPLAINED), exactly; a new one fails the test.
"""

from __future__ import annotations

import os
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from robots import RobotsParser

from lib.pages.robotstxt import RobotsRecord, RobotsRules, is_robots_url, origin, robots_record
from lib.warc.http import HttpError, parse_response
from lib.warc.records import ARCHIVE_SUFFIXES, Record, iter_records
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data"
_RULE = re.compile(r"[ \t]*(?:allow|disallow)[ \t]*:[ \t]*([^#\s]*)", re.I)
_AGENT = re.compile(r"[ \t]*user-agent[ \t]*:[ \t]*([A-Za-z_-]+)", re.I)

_AGENT_REST = re.compile(r"^([ \t]*user-agent[ \t]*:[ \t]*[A-Za-z_-]+)[^\r\n#]*", re.I | re.M)


def robotspy_agent_line(r: RobotsRecord, agent: str, path: str, verdict: bool) -> bool:
    """robotspy reads a user-agent line with RE_AGENT = "user-agent : TOKEN [^]s]* ...": the class
    "[^]s]" (meant as "[^\\s]") makes a line whose rest after the token holds an "s" or a "]" no
    user-agent line at all, and its group is lost (the rules join the group before). RFC 9309
    2.2.1 and Google's parser take the token ("k" of "k2spider", "sitecheck" of
    "sitecheck.internetseer.com", "node" of "Node/wc-simplecrawler 1.1.13") and keep the group,
    as we do. Explained if robotspy, given the file with its user-agent lines cut to their token,
    says what we say."""
    text = _AGENT_REST.sub(r"\1", r.body.decode("utf-8", "replace"))
    return RobotsParser.from_string(text).can_fetch(agent, r.origin + path) is verdict


def robotspy_decodes_escapes(r: RobotsRecord, agent: str, path: str, verdict: bool) -> bool:
    """robotspy decodes a URL's percent-escapes before matching (``normalize_url`` unquotes it);
    RFC 9309 2.2.2 and Google's parser, as protego, compare the encoded forms. So eBay's
    ``Disallow: /itm/*/%`` (an escape after an item path) disallows ``/itm/x/%7B`` for us and not
    for robotspy, which sees ``/itm/x/{``. Explained if robotspy, given the path with its ``%``
    escaped (so that its decoding gives back the path we match), says what we say."""
    parser = RobotsParser.from_string(r.body.decode("utf-8", "replace"))
    return parser.can_fetch(agent, r.origin + path.replace("%", "%25")) is verdict


# every difference from robotspy: (robots.txt URL, agent) -> its explanation
EXPLAINED = {
    ("http://en.wikipedia.org/robots.txt", "k"): robotspy_agent_line,
    ("http://en.wikipedia.org/robots.txt", "sitecheck"): robotspy_agent_line,
    ("http://wikimediafoundation.org/robots.txt", "k"): robotspy_agent_line,
    ("http://wikimediafoundation.org/robots.txt", "sitecheck"): robotspy_agent_line,
    ("https://aviation-safety.net.invalid/robots.txt", "http"): robotspy_agent_line,
    ("https://aviation-safety.net.invalid/robots.txt", "node"): robotspy_agent_line,
    ("https://ebay.invalid/robots.txt", "*"): robotspy_decodes_escapes,
    ("https://ebay.invalid/robots.txt", "bingbot"): robotspy_decodes_escapes,
}


@dataclass
class Archive:
    label: str
    captures: list[RobotsRecord] = field(default_factory=list)
    pages: dict[str, set[str]] = field(default_factory=dict)


def archive_paths(root: Path):
    """The archives below ``root``, in path order."""
    for dirpath, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            if name.lower().endswith(ARCHIVE_SUFFIXES):
                yield Path(dirpath) / name


def from_archive_record(rec: Any) -> RobotsRecord | None:
    """:func:`robots_record` of a response record read by :func:`lib.warc.records.iter_records`
    (None for any other record, and for a response with no readable HTTP status)."""
    if rec.rec_type != "response" or not is_robots_url(rec.url):
        return None
    try:
        resp = parse_response(rec.content)
    except HttpError:
        return None
    return robots_record(rec.url, resp.status, resp.body, rec.date, resp.headers.get("location"))


def read_archive(path: Path, label: str) -> Archive:
    """The robots.txt captures of one archive, and the URLs of its other responses by origin."""
    a = Archive(label)
    with open(path, "rb") as fh:
        for rec in iter_records(fh, str(path)):
            if not isinstance(rec, Record) or rec.rec_type != "response":
                continue
            r = from_archive_record(rec)
            if r is not None:
                a.captures.append(r)
            elif origin(rec.url):
                a.pages.setdefault(origin(rec.url), set()).add(rec.url)
    return a


def _read_archives(root: Path) -> list[Archive]:
    archives = (read_archive(p, str(p.relative_to(root.parent))) for p in archive_paths(root))
    return [a for a in archives if a.captures]


class _Server:
    """Each capture at /<n>/robots.txt with its status and body; a redirect to the capture our
    rules follow (or, when the archive has none, to a 404 robotspy reads as "allow all" and we
    do not compare)."""

    def __init__(self):
        self.routes: list[tuple[int, bytes, str | None]] = []
        routes = self.routes

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                status, body, location = routes[int(self.path.split("/")[1])]
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def add(self, status: int, body: bytes, location: str | None = None) -> str:
        self.routes.append((status, body, location))
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{len(self.routes) - 1}/robots.txt"


def _variants(value: str) -> set[str]:
    if not value:
        return set()
    p = value.rstrip("$").replace("*", "x")
    p = p if p.startswith("/") else "/" + p
    short = re.sub(r"%[0-9A-Fa-f]?$", "", p[:-1]) or "/"  # one character short (not inside a %-escape)
    return {p, p + "x", p + "/y", short}


def _paths_by_agent(text: str, pages: set[str]) -> dict[str, set[str]]:
    """The paths to check for each agent: ``*`` all the file's rules' paths, a named agent those of
    its own groups; both ``/`` and the host's pages. (Only picks paths: the verdicts come from the
    parsers.)"""
    common = {"/"}
    for u in pages:
        s = urlsplit(u)
        common.add((s.path or "/") + (f"?{s.query}" if s.query else ""))
    out: dict[str, set[str]] = {"*": set(common)}
    group: list[str] = []
    in_rules = False
    for line in text.splitlines():
        agent = _AGENT.match(line)
        if agent:
            group = [] if in_rules else group
            group.append(agent.group(1).lower())
            in_rules = False
            out.setdefault(group[-1], set(common))
            continue
        rule = _RULE.match(line)
        if rule:
            in_rules = True
            paths = _variants(rule.group(1))
            out["*"] |= paths
            for a in group:
                out[a] |= paths
    return out


def _target(rules: RobotsRules, r: RobotsRecord) -> RobotsRecord | None:
    """The 2xx/4xx capture the day's rules follow ``r``'s redirects to, if any."""
    seen = 0
    while r is not None and 300 <= r.status <= 399 and seen <= 5:
        r = rules.record(origin(r.location)) if r.location else None
        seen += 1
    return r if r is not None and not 300 <= r.status <= 399 else None


def _differences(archives: list[Archive]) -> tuple[Counter, list[tuple]]:
    server = _Server()
    tally: Counter = Counter()
    diffs = []
    try:
        for a in archives:
            day = RobotsRules(a.captures)
            for r in a.captures:
                tally["captures"] += 1
                if 300 <= r.status <= 399:
                    target = _target(day, r)
                    if target is None:  # the day holds no capture to follow: nothing assumed, no peer to ask
                        assert day.allowed(r.origin + "/")[0] is None, r.url
                        tally["redirects not followed"] += 1
                        continue
                    tally["redirects followed"] += 1
                    url = server.add(302, b"", server.add(target.status, target.body))
                    ours, body = day, target.body
                else:
                    url, ours, body = server.add(r.status, r.body), RobotsRules([r]), r.body
                theirs = RobotsParser.from_uri(url)
                text = body.decode("utf-8", "replace")
                for agent, paths in sorted(_paths_by_agent(text, a.pages.get(r.origin, set())).items()):
                    for path in sorted(paths):
                        verdict, _ = ours.allowed(r.origin + path, [agent])
                        tally[f"checks {verdict}"] += 1  # None: a 5xx or 429, robotspy's "disallow all" not compared
                        if verdict is not None and verdict is not theirs.can_fetch(agent, r.origin + path):
                            diffs.append((a.label, r, agent, path, verdict))
    finally:
        server.httpd.shutdown()
    return tally, diffs


def _check(archives: list[Archive], explained: dict) -> Counter:
    tally, diffs = _differences(archives)
    assert {(r.url, agent) for _, r, agent, _, _ in diffs} == set(explained)
    for label, r, agent, path, verdict in diffs:
        assert explained[r.url, agent](r, agent, path, verdict), (label, r.url, agent, path, verdict)
    tally["differences"] = len(diffs)
    return tally


def test_verdicts_equal_robotspy_on_archives_in_the_repository():
    archives = _read_archives(DATA / "conformance")
    urls = {r.url for a in archives for r in a.captures}
    # the divergences of robotspy known from other public archives, where these archives show them
    tally = _check(archives, {k: v for k, v in EXPLAINED.items() if k[0] in urls})
    assert tally["captures"] == sum(len(a.captures) for a in archives) >= 30
    # the checks mean something: many pages disallowed, many allowed, redirects of both kinds
    assert tally["checks False"] > 500 and tally["checks True"] > 500
    assert tally["redirects followed"] >= 1 and tally["redirects not followed"] >= 1


def test_verdicts_equal_robotspy_on_the_shared_corpus(corpus):
    archives = _read_archives(corpus)
    tally = _check(archives, {})
    assert tally["captures"] == sum(len(a.captures) for a in archives) >= 70
    assert tally["checks False"] > 100 and tally["checks True"] > 100
