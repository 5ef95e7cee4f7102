"""The exclusion list: URLs, SURT prefixes and hosts that the published slices must not hold.

Take-down requests end up here. The list is a JSON Lines file at the bucket root,
``ROOT/_exclusions.jsonl`` (:data:`lib.store.layout.EXCLUSIONS`; a job's ``--exclusions URI``
points elsewhere), one rule a line::

    {"url": "https://example.com/private/page.html", "date": "2026-11-20", "reason": "DMCA 1234"}
    {"surt": "com,example)/private/", "date": "2026-11-21", "reason": "court order"}
    {"host": "bad.example.org", "date": "2026-11-22", "reason": "owner request"}

Each rule has exactly one of ``url``, ``surt`` or ``host``, and a ``date`` and ``reason``
(kept for the audit, never used to match). Matching is on the pywb SURT key of a record's
URL (:func:`lib.pages.weburls.surt_key`: scheme and ``www.`` dropped, lowercased, query
sorted, fragment removed), so ``http://www.example.com/a`` and ``https://example.com/a`` are
the same URL:

* ``url``: the record's SURT key equals the rule URL's;
* ``surt``: the record's SURT key starts with the prefix (``com,example)/private/`` is a
  folder of one host; ``com,example,`` is every subdomain of example.com); a prefix given
  as a URL (``http://...``) is turned into its SURT key;
* ``host``: the record's host, ``www.`` and port aside, is the rule's host (no subdomains:
  use a ``surt`` rule for those).

Lines starting with ``#`` and blank lines are skipped; anything else that is not a valid
rule is an error naming the file and line, because a take-down silently ignored is worse
than a job that stops.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.compute as pc

from lib.errors import ConfigError
from lib.pages.weburls import surt_key
from lib.store import auxiliary, layout, storage

KINDS = ("url", "surt", "host")
# scheme://[userinfo@]host[:port]: the host, for the cheap vectorized pre-filter
_HOST_RE = r"^[A-Za-z][A-Za-z0-9+.\-]*://(?:[^@/?#]*@)?(?P<host>\[[^\]]*\]|[^:/?#]*)"


class ExclusionError(ConfigError):
    """A line of the exclusion list that is not a rule (file, line and reason in the text)."""


def _host_key(key: str) -> str:
    """The host part of a SURT key, port dropped: ``com,example:8080)/x`` -> ``com,example``."""
    host = key.split(")", 1)[0]
    return host.split(":", 1)[0]


@dataclass(frozen=True)
class Rule:
    kind: str  # url | surt | host
    value: str  # as given
    key: str  # what is compared: a SURT key, a SURT prefix, or a SURT host
    date: str = ""
    reason: str = ""

    def as_dict(self) -> dict[str, str]:
        return {self.kind: self.value, "date": self.date, "reason": self.reason}


def parse_rule(obj: Any, where: str = "rule") -> Rule:
    """One rule from its JSON object; :class:`ExclusionError` naming ``where`` when invalid."""
    if not isinstance(obj, dict):
        raise ExclusionError(f"{where}: a rule is a JSON object, got {type(obj).__name__}")
    kinds = [k for k in KINDS if k in obj]
    if len(kinds) != 1:
        raise ExclusionError(f"{where}: a rule has exactly one of {', '.join(KINDS)} (has {kinds or 'none'})")
    kind = kinds[0]
    value = obj[kind]
    if not isinstance(value, str) or not value.strip():
        raise ExclusionError(f"{where}: {kind} must be a non-empty string")
    value = value.strip()
    if kind == "url":
        if "://" not in value:
            raise ExclusionError(f"{where}: url {value!r} has no scheme (http://, https://)")
        key = surt_key(value)
    elif kind == "surt":
        key = surt_key(value) if "://" in value else value.lower()
        if "://" in value and value.endswith("/") and not key.endswith("/"):
            key += "/"  # surt drops a path's trailing slash: a folder prefix keeps it
    else:
        host = value.lower().split("://", 1)[-1].split("/", 1)[0]
        key = _host_key(surt_key(f"http://{host}/"))
    return Rule(kind, value, key, str(obj.get("date", "")), str(obj.get("reason", "")))


@dataclass
class Exclusions:
    """A compiled exclusion list: :meth:`match` one URL, :meth:`mask` an Arrow column."""

    rules: list[Rule] = field(default_factory=list)
    source: str = ""

    def __post_init__(self) -> None:
        self._urls: dict[str, Rule] = {}
        self._hosts: dict[str, Rule] = {}
        prefixes: dict[str, Rule] = {}
        for r in self.rules:
            {"url": self._urls, "host": self._hosts, "surt": prefixes}[r.kind].setdefault(r.key, r)
        # prefix-free: a prefix covered by a shorter one adds nothing, and in a prefix-free
        # sorted list the only candidate prefix of a key is the greatest entry <= the key
        keep: list[str] = []
        for p in sorted(prefixes):
            if not keep or not p.startswith(keep[-1]):
                keep.append(p)
        self._prefixes = keep
        self._prefix_rule = {p: prefixes[p] for p in keep}
        # hosts any rule can match, for the pre-filter; a prefix that ends inside the host
        # part (no ')') can match many hosts: those lists are checked host by host
        self._exact_hosts = set(self._hosts) | {_host_key(k) for k in self._urls}
        self._exact_hosts |= {_host_key(p) for p in keep if ")" in p}
        self._open_prefixes = [p for p in keep if ")" not in p]

    def __bool__(self) -> bool:
        return bool(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def rule_for(self, url: str | None) -> Rule | None:
        """The rule that excludes ``url``, or None."""
        if not url or not self.rules:
            return None
        key = surt_key(url)
        r = self._urls.get(key) or self._hosts.get(_host_key(key))
        if r is not None:
            return r
        i = bisect.bisect_right(self._prefixes, key)
        if i and key.startswith(self._prefixes[i - 1]):
            return self._prefix_rule[self._prefixes[i - 1]]
        return None

    def match(self, url: str | None) -> bool:
        """Whether ``url`` is excluded."""
        return self.rule_for(url) is not None

    def _host_may_match(self, host: str) -> bool:
        hk = _host_key(surt_key(f"http://{host}/"))
        return hk in self._exact_hosts or any(hk.startswith(p) for p in self._open_prefixes)

    def mask(self, urls: pa.Array | pa.ChunkedArray | Iterable[str | None]) -> pa.BooleanArray:
        """True where a URL is excluded. Vectorized: hosts are extracted by Arrow and only the
        distinct hosts a rule can match send their URLs through :meth:`match`."""
        arr = urls if isinstance(urls, (pa.Array, pa.ChunkedArray)) else pa.array(list(urls), pa.string())
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks() if arr.num_chunks else pa.array([], pa.string())
        arr = arr.cast(pa.string())
        if not self.rules or len(arr) == 0:
            return pa.array([False] * len(arr), pa.bool_())
        hosts = pc.utf8_lower(pc.struct_field(pc.extract_regex(arr, _HOST_RE), [0]))
        distinct = [h for h in pc.unique(hosts).to_pylist() if h is not None]
        maybe = [h for h in distinct if self._host_may_match(h)]
        out = [False] * len(arr)
        if maybe:
            cand = pc.fill_null(pc.is_in(hosts, pa.array(maybe, pa.string())), False)
            idx = pc.indices_nonzero(cand).to_pylist()
            values = arr.to_pylist()
            for i in idx:
                out[i] = self.match(values[i])
        return pa.array(out, pa.bool_())

    def describe(self) -> str:
        return f"{len(self.rules)} exclusion rule(s) from {self.source or 'memory'}"


NONE = Exclusions()


def parse(text: str, source: str = "exclusions") -> Exclusions:
    """The rules of a JSON Lines text (module doc); errors name ``source`` and the line."""
    rules = []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        try:
            obj = json.loads(s)
        except json.JSONDecodeError as e:
            raise ExclusionError(f"{source}:{n}: not JSON ({e.msg})") from None
        rules.append(parse_rule(obj, f"{source}:{n}"))
    return Exclusions(rules, source)


TAKEDOWN = "takedown"  # the list's name in ROOT/shared/auxiliary/filters/manifest.json


def shared_item(root: str | None) -> auxiliary.Item | None:
    """The take-down list of ROOT/shared/auxiliary/filters when its manifest lists one (its
    sha256 checked: :class:`lib.store.auxiliary.ChecksumMismatch` when it differs), else None."""
    return auxiliary.resolve(root, layout.FILTERS, TAKEDOWN, None) if root else None


def default_uri(root: str | None) -> str | None:
    """The root's take-down list: ``filters/``'s ``takedown`` when shared, else ``ROOT/_exclusions.jsonl``;
    None without a root."""
    if not root:
        return None
    item = shared_item(root)
    return item.path if item else storage.join(root, layout.EXCLUSIONS)


def identity(root: str | None, given: str | None) -> dict[str, str]:
    """Which take-down list a job applies, for its ``_stats.json``: version and sha256 of the
    shared one, or the file's sha256 (``source`` ``given``, ``root`` or ``none``)."""
    if not given and (item := shared_item(root)) is not None:
        return item.record()
    uri = given if given and given != "none" else (None if given else default_uri(root))
    if not uri or not storage.exists(uri):
        return {"source": "none"}
    sha = hashlib.sha256(storage.read_bytes(uri)).hexdigest()
    return {"source": "given" if given else "root", "file": uri, "version": "unversioned", "sha256": sha}


def load(uri: str | None, required: bool = False) -> Exclusions:
    """The list at ``uri`` (local or S3). A missing file is an empty list, unless
    ``required`` (a path the user gave must exist)."""
    if not uri or uri == "none":
        return NONE
    if not storage.exists(uri):
        if required:
            raise FileNotFoundError(f"exclusion list not found: {uri}")
        return Exclusions(source=uri)
    return parse(storage.read_bytes(uri).decode("utf-8"), uri)


def for_job(root: str | None, given: str | None) -> Exclusions:
    """What a job applies: ``--exclusions URI`` (must exist; ``none`` turns it off), else
    ``ROOT/_exclusions.jsonl`` when it exists."""
    if given:
        return load(given, required=given != "none")
    return load(default_uri(root))
