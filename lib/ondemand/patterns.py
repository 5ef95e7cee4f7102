"""``url_patterns.txt`` of an on-demand request: which URLs a sub-index takes (docs/ondemand.md).

One pattern a line; blank lines and lines starting with ``#`` are skipped. Three forms:

* **SURT prefix**: a line holding ``,`` or ``)`` and no ``.`` or ``/`` before the ``)``
  (``de,bund,``  ``de,bund)/presse``): matches a URL whose SURT key (pywb's, as the CDXJ
  writes it: ``www.`` dropped, lowercased) starts with it;
* **host or registered domain**: a bare name (``bund.de``, ``www.bund.de``): matches that
  host and every host below it (the page's ``url_host``, a leading ``www.`` ignored on both);
* **glob**: a line with ``*``, ``?`` or ``[`` (``https://*.bund.de/presse/*``): matches the
  whole URL as written, case-sensitive (:func:`fnmatch.fnmatchcase`).

Any other line (whitespace inside, a URL without a wildcard, characters no host has) is an
error naming the file, the line number and why. No pattern at all: every URL matches.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

from lib.errors import ConfigError
from lib.pages.weburls import surt_key

_HOST = re.compile(
    r"(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*"
)
_SURT_HOST = re.compile(r"[a-z0-9_-]+(,[a-z0-9_-]+)*,?")


class PatternError(ConfigError):
    """A line of ``url_patterns.txt`` that is none of the accepted forms."""


@dataclass(frozen=True)
class Pattern:
    """One parsed pattern: its ``kind`` (``surt``, ``host`` or ``glob``) and its normalized text."""

    kind: str
    text: str
    line: int

    def matches(self, url: str, host: str, surt: str) -> bool:
        """Whether the page (its URL, ``url_host`` and SURT key) is selected by this pattern."""
        if self.kind == "surt":
            return surt.startswith(self.text)
        if self.kind == "host":
            h = _strip_www(host.lower())
            return h == self.text or h.endswith("." + self.text)
        return fnmatch.fnmatchcase(url, self.text)

    def host_test(self) -> Callable[[str | None], bool] | None:
        """A test on ``url_host`` true for every host of a page this pattern can select (maybe
        more), or None when the pattern says nothing of the host (a glob whose scheme or host
        holds a wildcard: ``*`` also matches ``/``)."""
        if self.kind == "host":
            return lambda h: bool(h and self.matches("", h, ""))
        if self.kind == "surt":
            head = self.text.split(")", 1)[0]
            return lambda h: not _PLAIN_HOST.fullmatch(h or "") or _surt_host(h or "").startswith(head)
        scheme, sep, rest = self.text.partition("://")
        literal = rest.split("/", 1)[0]
        if not sep or "/" not in rest or any(c in scheme + literal for c in "*?["):
            return None
        try:  # the host every URL starting with this literal prefix has, as url_host is parsed
            host = (urlsplit(f"{scheme}://{literal}/").hostname or "").lower()
        except ValueError:
            return None
        return lambda h: h == host


#: hosts whose SURT form is their labels reversed (anything else, e.g. an IP written oddly or a
#: percent-encoded name, which the SURT canonicalizer may rewrite, is always read)
_PLAIN_HOST = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")


def _surt_host(host: str) -> str:
    return surt_key(f"http://{host}/").split(")", 1)[0]


def host_test(patterns: list[Pattern] | tuple[Pattern, ...]) -> Callable[[str | None], bool] | None:
    """A test on ``url_host`` that every page the patterns select passes, or None when they
    cannot be reduced to hosts (no pattern at all, or one :meth:`Pattern.host_test` cannot reduce)."""
    tests = [t for p in patterns if (t := p.host_test()) is not None]
    if not tests or len(tests) < len(patterns):
        return None
    return lambda h: any(t(h) for t in tests)


def _strip_www(host: str) -> str:
    return host[4:] if host.startswith("www.") else host


def parse_line(text: str, where: str = "url_patterns.txt", line: int = 1) -> Pattern | None:
    """The pattern of one line (None for a blank or comment line); :class:`PatternError`
    naming ``where:line`` and the reason otherwise."""
    s = text.strip()
    if not s or s.startswith("#"):
        return None

    def bad(reason: str) -> PatternError:
        return PatternError(f"{where}:{line}: {s!r}: {reason}")

    if any(c.isspace() for c in s):
        raise bad("whitespace inside a pattern (one pattern a line)")
    if any(c in s for c in "*?["):
        if s.count("[") != s.count("]"):
            raise bad("unbalanced [ ] in a glob")
        return Pattern("glob", s, line)
    head = s.split(")", 1)[0]
    if ("," in s or ")" in s) and "." not in head and "/" not in head:
        if not _SURT_HOST.fullmatch(head.lower()):
            raise bad("a SURT prefix's host part holds only letters, digits, '-' and ',' (e.g. de,bund,)")
        if ")" in s and not s.split(")", 1)[1].startswith("/"):
            raise bad("a SURT prefix's path starts with '/' after ')' (e.g. de,bund)/presse)")
        return Pattern("surt", s.lower(), line)
    if "://" in s or "/" in s:
        raise bad("a URL without a wildcard is no pattern: add '*' (a glob) or give its host or SURT prefix")
    host = s.lower().rstrip(".")
    try:
        host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        raise bad("not a host name (IDNA encoding fails)") from None
    if not _HOST.fullmatch(host):
        raise bad("not a host or registered domain (letters, digits, '-', '_' and dots)")
    return Pattern("host", _strip_www(host), line)


def parse_patterns(text: str, where: str = "url_patterns.txt") -> list[Pattern]:
    """Every pattern of the file's ``text`` (an empty list: no URL filter)."""
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        p = parse_line(raw, where, n)
        if p is not None:
            out.append(p)
    return out


def selects(patterns: list[Pattern], url: str, host: str | None) -> bool:
    """Whether any pattern selects the URL (no patterns: every URL)."""
    if not patterns:
        return True
    key = surt_key(url) if any(p.kind == "surt" for p in patterns) else ""
    return any(p.matches(url, host or "", key) for p in patterns)
