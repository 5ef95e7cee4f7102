"""The crawl's own robots.txt: which of a day's pages their host's robots.txt disallows.

A day's archives hold the robots.txt responses the crawler fetched. :func:`robots_record`
keeps what matters of one (origin, status, body capped at 500 KiB, date, redirect target);
:class:`RobotsRules` picks, per origin, the capture that applies for the day and answers
:meth:`RobotsRules.allowed` with protego, an RFC 9309 parser. ``docs/robots.md`` says what
is honoured and why; in short:

- no robots.txt for a page's origin that day: ``None`` (nothing assumed);
- 2xx: the rules decide, for every configured agent (disallowed if ANY agent is);
- 4xx other than 429 ("unavailable", RFC 9309 2.3.1.3): allowed;
- 5xx and 429 ("unreachable", 2.3.1.4): ``None`` by default: the crawler fetched the
  pages anyway and the publisher said nothing we can read (``unreachable="disallow"``
  takes the RFC's "complete disallow" instead);
- 3xx: followed up to 5 hops through the day's robots.txt captures (2.3.1.2); a target
  the day did not archive gives ``None``, more than 5 hops "unavailable" (allowed).

Plain Python: the preprocess and index jobs call it once per Parquet file.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Iterable, Sequence
from urllib.parse import urljoin, urlsplit

from protego import Protego

_quote_path: Callable[[str], str] | None
try:  # private: the reason names the rule only while protego keeps it (the verdict never depends on it)
    from protego._utils import _quote_path
except ImportError:  # pragma: no cover - a protego release without it
    _quote_path = None

__all__ = [
    "DEFAULT_AGENTS",
    "MAX_BYTES",
    "MAX_REDIRECTS",
    "RobotsRecord",
    "RobotsRules",
    "is_robots_url",
    "origin",
    "pick",
    "robots_record",
    "verdicts",
]

#: RFC 9309 2.5: a parser may stop reading after 500 KiB (it must read at least that much)
MAX_BYTES = 500 * 1024
#: RFC 9309 2.3.1.2: follow at least five consecutive redirects
MAX_REDIRECTS = 5
DEFAULT_AGENTS: tuple[str, ...] = ("*",)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNREACHABLE = ("unknown", "disallow")


def _split(url: str):
    try:
        p = urlsplit(url.strip())
        return p, p.port
    except ValueError:  # a port that is no number, a broken IPv6 literal
        return None, None


def origin(url: str) -> str | None:
    """``scheme://host[:port]`` of an http(s) URL: scheme and host lowercased, a default port
    dropped (RFC 9309 2.3: the rules apply to one protocol, host and port). None for another
    scheme or no host."""
    p, port = _split(url)
    if p is None or p.scheme.lower() not in _DEFAULT_PORTS:
        return None
    scheme = p.scheme.lower()
    host = (p.hostname or "").rstrip(".")
    if not host:
        return None
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            pass  # kept as written: still one key per host
    netloc = f"[{host}]" if ":" in host else host
    if port and _DEFAULT_PORTS[scheme] != port:
        netloc += f":{port}"
    return f"{scheme}://{netloc}"


@lru_cache(maxsize=1 << 16)
def _origin_of_head(head: str) -> str | None:
    return origin(head)


def _page_origin(url: str) -> str | None:
    """:func:`origin`, computed once per ``scheme://netloc`` head (a day's pages share few)."""
    cut = url.find("/", 8)  # the netloc ends at the first "/" after "scheme://"
    return _origin_of_head(url[:cut] if cut > 0 else url)


def is_robots_url(url: str) -> bool:
    """True for an http(s) URL whose path is exactly ``/robots.txt`` and that has no query.

    RFC 9309 2.3 puts the rules at ``/robots.txt`` of the origin (lowercase); a crawler fetches
    it without a query, and ``/robots.txt?x=1`` is another resource as far as the server is
    concerned, so it does not count. A fragment is never sent and is ignored."""
    p, _ = _split(url)
    return p is not None and origin(url) is not None and p.path == "/robots.txt" and not p.query


@dataclass(frozen=True)
class RobotsRecord:
    """What the day keeps of one robots.txt capture."""

    origin: str
    url: str
    status: int
    body: bytes  # at most MAX_BYTES, cut at a line end
    truncated: bool  # the response was longer than MAX_BYTES
    date: str  # WARC-Date as ``YYYY-MM-DDTHH:MM:SSZ`` ("" when unknown)
    location: str | None = None  # a 3xx's target, absolute


def _iso(when: dt.datetime | str | None) -> str:
    if when is None:
        return ""
    if isinstance(when, str):
        try:
            when = dt.datetime.fromisoformat(when.strip().replace("Z", "+00:00"))
        except ValueError:
            return ""
    if when.tzinfo is not None:
        when = when.astimezone(dt.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _cap(body: bytes) -> tuple[bytes, bool]:
    if len(body) <= MAX_BYTES:
        return body, False
    head = body[:MAX_BYTES]
    # a rule cut in the middle could say more than it does ("Disallow: /private" -> "Disallow: /")
    end = max(head.rfind(b"\n"), head.rfind(b"\r"))
    return head[: end + 1], True


def robots_record(
    url: str, status: int, body: bytes, warc_date: dt.datetime | str | None, location: str | None = None
) -> RobotsRecord | None:
    """The record to keep of a robots.txt capture, or None when ``url`` is not a robots.txt
    (:func:`is_robots_url`) or the status is no HTTP status (outside 200-599).

    The body is capped at :data:`MAX_BYTES` (RFC 9309 2.5 lets a parser stop there), at the
    last line end before the cap. ``location`` (a 3xx's header) is resolved against ``url``."""
    if not is_robots_url(url) or not 200 <= status <= 599:
        return None
    key = origin(url)
    assert key is not None  # is_robots_url checked it
    capped, truncated = _cap(body)
    target = urljoin(url, location.strip()) if location and 300 <= status <= 399 else None
    return RobotsRecord(key, url, status, capped, truncated, _iso(warc_date), target)


def _definitive(status: int) -> bool:
    """The server said what the file is: 2xx, 3xx or 4xx other than 429 (a 5xx or a 429 says
    only that it could not answer then)."""
    return 200 <= status <= 499 and status != 429


def pick(captures: Iterable[RobotsRecord]) -> RobotsRecord | None:
    """The capture of one origin that applies for the day.

    The latest definitive answer (2xx, 3xx, 4xx other than 429) wins: a later 404 means the
    file is gone, a later 200 that it changed. A 5xx or 429 applies only when the day has
    nothing else: RFC 9309 2.4 lets a crawler keep a cached copy while the file is
    unreachable. Ties in date go to a 2xx, then to the larger body, so the choice does not
    depend on the order the captures come in."""
    best: RobotsRecord | None = None
    best_key: tuple = ()
    for c in captures:
        key = (_definitive(c.status), c.date, 200 <= c.status <= 299, len(c.body), c.body, -c.status)
        if best is None or key > best_key:
            best, best_key = c, key
    return best


_AGENT_LINE = re.compile(r"([ \t]*user[ \t-]?agent[ \t]*:[ \t]*)([A-Za-z_-]+)[^#]*", re.I)
_FIELD = re.compile(r"[ \t]*([A-Za-z][A-Za-z \t-]*?)[ \t]*:")
# the records of RFC 9309 2.2, spelled as protego accepts them (it forgives some misspellings of disallow)
_PROTOCOL_FIELD = re.compile(r"user[ \t-]?agent|allow|dis+al+ow|diasllow|disallaw", re.I)


def _protocol_line(line: str) -> str | None:
    """``line`` as RFC 9309 reads it, or None for a record of another protocol.

    - A user-agent value is cut to its product token (2.2.1: letters, ``_`` and ``-``), as
      Google's parser does: ``User-agent: CCBot/2.0`` is the group of ``ccbot``. protego would
      keep the whole value, and a crawler naming itself by its token would miss its group.
    - Other records (``Crawl-delay``, ``Sitemap``, ``Host``, unknown ones) are dropped: 2.2.4
      says they must not interfere with the groups, but protego ends a run of user-agent lines
      at them, so ``User-agent: a`` / ``Crawl-delay: 5`` / ``User-agent: b`` / ``Disallow: /``
      would leave ``a`` without the rule that RFC 9309 and Google's parser give it."""
    m = _AGENT_LINE.match(line)
    if m:
        return m.group(1) + m.group(2) + line[m.end() :]
    field = _FIELD.match(line)
    if field and not _PROTOCOL_FIELD.fullmatch(field.group(1)):
        return None
    return line


def _text(body: bytes) -> str:
    """The robots.txt as protego reads it: UTF-8 (RFC 9309 2.3; a stray byte costs only the rule
    it is in), each line as :func:`_protocol_line` gives it."""
    text = body.decode("utf-8", "replace").removeprefix("\ufeff")
    return "\n".join(x for x in map(_protocol_line, text.splitlines()) if x is not None)


class _Origin:
    """One origin's verdict source: a parsed robots.txt, or a fixed verdict."""

    __slots__ = ("fixed", "reason", "record", "_parser")

    def __init__(self, fixed: bool | None, reason: str, record: RobotsRecord | None = None):
        self.fixed = fixed
        self.reason = reason
        self.record = record  # the 2xx whose rules apply (fixed is then unused)
        self._parser: Protego | None = None

    def parser(self) -> Protego:
        if self._parser is None:
            assert self.record is not None
            self._parser = Protego.parse(_text(self.record.body))
        return self._parser


def _matching_rule(parser: Protego, agent: str, url: str) -> str | None:
    """The pattern of the rule that disallows ``url`` for ``agent``, read from protego's rule
    set (private: None if a protego release changes it, and the reason says less)."""
    try:
        rule_set = parser._get_matching_rule_set(agent)
        if rule_set is None or _quote_path is None:  # no group for the agent, or an unknown protego
            return None
        path = _quote_path(url)
        for rule in rule_set._rules:  # sorted as protego matches: longest first, allow before disallow
            if rule.value.match(path):
                return rule.value._pattern if rule.field == "disallow" else None
    except (AttributeError, TypeError):
        return None
    return None


class RobotsRules:
    """A day's robots.txt verdicts, built from its :class:`RobotsRecord` (any origins, any order).

    ``agents``: the product tokens checked (default ``("*",)``: the rules for every crawler;
    the operator adds the crawler's own name); a page is disallowed if ANY of them is.
    ``unreachable``: what a 5xx or 429 robots.txt means, ``"unknown"`` (None, the default) or
    ``"disallow"`` (RFC 9309's complete disallow). Each origin's rules are parsed once, on
    first use."""

    def __init__(
        self, records: Iterable[RobotsRecord], agents: Sequence[str] = DEFAULT_AGENTS, unreachable: str = "unknown"
    ):
        if unreachable not in _UNREACHABLE:
            raise ValueError(f"unreachable must be one of {_UNREACHABLE}, not {unreachable!r}")
        self.agents = _agents(agents)
        self.unreachable = unreachable
        by_origin: dict[str, list[RobotsRecord]] = {}
        for r in records:
            by_origin.setdefault(r.origin, []).append(r)
        self._picked = {o: pick(rs) for o, rs in by_origin.items()}
        self._origins: dict[str, _Origin] = {o: self._resolve(o) for o in self._picked}

    def __len__(self) -> int:
        return len(self._origins)

    def record(self, origin_key: str) -> RobotsRecord | None:
        """The capture picked for an origin (before redirects are followed)."""
        return self._picked.get(origin_key)

    def _resolve(self, key: str) -> _Origin:
        rec = self._picked[key]
        assert rec is not None
        hops = 0
        while 300 <= rec.status <= 399:
            if hops == MAX_REDIRECTS:
                return _Origin(True, "")  # RFC 9309 2.3.1.2: may be taken as unavailable
            target = rec.location
            nxt = self._picked.get(origin(target) or "") if target and is_robots_url(target) else None
            if nxt is None:
                where = target or "nowhere (no Location)"
                return _Origin(None, f"robots.txt redirects to {where}, not archived that day: nothing assumed")
            rec, hops = nxt, hops + 1
        if 200 <= rec.status <= 299:
            return _Origin(None, "", rec)
        if _definitive(rec.status):
            return _Origin(True, "")  # 4xx: unavailable, no restriction
        if self.unreachable == "disallow":
            return _Origin(False, f"robots.txt {rec.status}: unreachable, complete disallow")
        return _Origin(None, f"robots.txt {rec.status}: unreachable, nothing assumed")

    def allowed(self, url: str, agents: Sequence[str] | None = None) -> tuple[bool | None, str]:
        """(verdict, reason) for one page URL.

        None when the day has no robots.txt for the page's origin (reason ``""``) or it cannot
        be read (reason says why); False with e.g. ``robots.txt disallow: /private`` when a
        rule disallows the page for any of the agents; True (reason ``""``) otherwise."""
        key = _page_origin(url)
        entry = self._origins.get(key) if key else None
        if entry is None:
            return None, ""
        if entry.record is None:
            return entry.fixed, entry.reason
        parser = entry.parser()
        for agent in self.agents if agents is None else _agents(agents):
            if not parser.can_fetch(url, agent):
                rule = _matching_rule(parser, agent, url)
                if rule is None:
                    return False, f"robots.txt: disallowed for {agent}"
                who = "" if agent == "*" else f" for {agent}"
                return False, f"robots.txt disallow{who}: {rule}"
        return True, ""


def _agents(agents: Sequence[str]) -> tuple[str, ...]:
    if isinstance(agents, str):
        agents = (agents,)
    out = tuple(a.strip() for a in agents if a and a.strip())
    if not out:
        raise ValueError("robots.txt agents: at least one product token (e.g. '*')")
    return out


def verdicts(urls: Any, rules: RobotsRules) -> list[tuple[bool | None, str]]:
    """:meth:`RobotsRules.allowed` for a column of URLs (a list, or a pyarrow Array or
    ChunkedArray); a null URL gets ``(None, "")``. Pages of an origin without a robots.txt
    that day cost one :func:`origin` each."""
    if hasattr(urls, "to_pylist"):
        urls = urls.to_pylist()
    return [rules.allowed(u) if u else (None, "") for u in urls]
