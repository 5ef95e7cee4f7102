"""The CDX Server API's query semantics over sorted CDXJ lines: what pywb's CDX server does with
``url``, ``matchType``, ``from``, ``to``, ``filter``, ``fl``, ``output``, ``closest``, ``sort``
and ``limit`` (pywb.warcserver.index: query.py, cdxops.py, cdxobject.py), reimplemented as plain
functions so the service needs no pywb, and held equal to it by tests/serve/test_cdx_api.py.

What differs from pywb, on purpose: bad input is a :class:`CdxQueryError` (HTTP 400) naming the
parameter instead of a partial answer; ``output=cdx`` without ``fl`` writes the 11-column CDX of
the day's ``index.cdx`` (pywb's ``output=text`` echoes the stored CDXJ line); ``page`` and
``pageSize`` page any answer (pywb pages ZipNum clusters only).
"""

from __future__ import annotations

import bisect
import calendar
import json
import re
import re._parser as sre_parse  # the regex syntax tree: a filter's cost is bounded before it runs
from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import quote

from warcio.timeutils import PAD_14_DOWN, PAD_14_UP, pad_timestamp, timestamp_to_datetime

from lib.catalogue import cdx
from lib.errors import UsageError
from lib.pages.weburls import surt_key_strict

MATCH_TYPES = ("exact", "prefix", "host", "domain")
OUTPUTS = {"cdxj": "text/x-cdxj", "json": "text/x-ndjson", "cdx": "text/plain"}
MAX_LIMIT = 100_000  # pywb's default limit; more is refused, not truncated
MAX_FILTERS = 16
MAX_REGEX_CHARS = 256
DEFAULT_PAGE_SIZE = 1000
#: the fields of output=cdx without fl, as pywb names them: the 11-column legend of the day's index.cdx
CDX11 = "urlkey,timestamp,url,mime,status,digest,redirect,robotflags,length,offset,filename".split(",")
#: pywb's short and old field names (CDXObject.CDX_ALT_FIELDS; its "s" is length, as in pywb)
ALT_FIELDS = {
    "u": "url",
    "original": "url",
    "statuscode": "status",
    "mimetype": "mime",
    "m": "mime",
    "l": "length",
    "s": "length",
    "o": "offset",
    "d": "digest",
    "t": "timestamp",
    "k": "urlkey",
    "f": "filename",
}
_TS = re.compile(r"\d{1,14}")
_FIELD = re.compile(r"[A-Za-z_.]{1,32}")
_REPEATS = {sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, getattr(sre_parse, "POSSESSIVE_REPEAT", None)} - {None}


class CdxQueryError(UsageError):  # a ValueError too: HTTP 400
    """A CDX query the server refuses; the message names the parameter and why."""


def search_range(url: str, match_type: str) -> tuple[str, str]:
    """The line range [start, end) a query of ``url`` covers (pywb's ``calc_search_range``)."""
    if match_type not in MATCH_TYPES:
        raise CdxQueryError(f"matchType={match_type!r} is not one of {', '.join(MATCH_TYPES)}")
    try:
        start = surt_key_strict(url)
    except ValueError as e:
        raise CdxQueryError(f"url: {e}") from None
    if match_type == "exact":
        return start, start + "!"
    if match_type == "prefix":
        if url.endswith("/") and not start.endswith("/"):
            start += "/"
        if url.endswith("?") and not start.endswith("?"):
            start += "?"
        return start, start[:-1] + chr(ord(start[-1]) + 1)
    host = start.split(")/")[0]
    if match_type == "host":
        return host + ")/", host + "*"
    return (host + "," if "," not in host else host + ")/"), host + "-"


def record(line: str) -> OrderedDict[str, str]:
    """A CDXJ line as pywb's CDXObject reads it: ``urlkey``, ``timestamp``, then the JSON fields
    in their order (a non-ASCII URL percent-encoded, a numeric status as a string)."""
    key, ts, body = line.split(" ", 2)
    rec: OrderedDict[str, Any] = OrderedDict(urlkey=key, timestamp=ts)
    for name, value in json.loads(body, object_pairs_hook=OrderedDict).items():
        name = ALT_FIELDS.get(name, name)
        if name == "url" and isinstance(value, str) and not value.isascii():
            value = quote(value.encode("utf-8"), safe=":/")
        if name == "status" and isinstance(value, int):
            value = str(value)
        rec[name] = value
    return rec


def _check_regex(text: str, where: str) -> re.Pattern[str]:
    """The compiled regex of a filter, refused when it can take more than polynomial time: longer
    than MAX_REGEX_CHARS, a back-reference, a repeat inside a repeat (``(a+)+``: Python's
    backtracking matcher takes exponential time on it) or an alternation inside one (``(a|a)*``)."""
    if len(text) > MAX_REGEX_CHARS:
        raise CdxQueryError(f"{where}: regex longer than {MAX_REGEX_CHARS} characters")
    try:
        tree = sre_parse.parse(text)
    except re.error as e:
        raise CdxQueryError(f"{where}: bad regex: {e}") from None

    def walk(items: Any, depth: int) -> None:
        for op, av in items:
            if op in (sre_parse.GROUPREF, sre_parse.GROUPREF_EXISTS):
                raise CdxQueryError(f"{where}: back-references are not allowed in a filter regex")
            if op in _REPEATS:
                lo, hi, sub = av
                if hi > 1 and depth:
                    raise CdxQueryError(
                        f"{where}: a repeat inside a repeat can take exponential time; not allowed in a filter regex"
                    )
                walk(sub, depth + (hi > 1))
            elif op == sre_parse.SUBPATTERN:
                walk(av[-1], depth)
            elif op == sre_parse.BRANCH:
                if depth:  # (a|a)* backtracks through 2^n ways of matching n characters
                    raise CdxQueryError(f"{where}: an alternation inside a repeat is not allowed in a filter regex")
                for b in av[1]:
                    walk(b, depth)
            elif op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
                walk(av[1], depth)
            elif op == getattr(sre_parse, "ATOMIC_GROUP", None):
                walk(av, depth)

    walk(tree, 0)
    return re.compile(text)


def make_filter(spec: str) -> Callable[[OrderedDict[str, str], str], bool]:
    """One ``filter=``, as pywb reads it: ``[!][=|~][field:]value``; ``=`` exact, ``~`` regex
    (matched at the start, re.match), neither: contains; no field: the whole stored line."""
    where = f"filter={spec!r}"
    invert = spec.startswith("!")
    s = spec[1:] if invert else spec
    mode = s[0] if s[:1] in ("=", "~") else ""
    s = s[1:] if mode else s
    name, sep, value = s.partition(":")
    if not sep:
        name, value = "", s
    elif not _FIELD.fullmatch(name):
        raise CdxQueryError(f"{where}: field name {name!r} is not a CDX field")
    name = ALT_FIELDS.get(name, name)
    if mode == "~":
        rx = _check_regex(value, where)

        def test(v: str) -> bool:
            return rx.match(v) is not None
    elif mode == "=":

        def test(v: str) -> bool:
            return v == value
    else:

        def test(v: str) -> bool:
            return value in v

    def keep(rec: OrderedDict[str, str], line: str) -> bool:
        return test(str(rec.get(name, "")) if name else line) ^ invert

    return keep


def _seconds(ts: str) -> int:
    return calendar.timegm(timestamp_to_datetime(ts).utctimetuple())


@dataclass
class CdxQuery:
    """A parsed, checked CDX query (:func:`parse_query`)."""

    url: str
    match_type: str
    start: str
    end: str
    output: str = "cdxj"
    fields: list[str] | None = None
    filters: list[Callable[[OrderedDict[str, str], str], bool]] = field(default_factory=list)
    from_ts: str | None = None
    to_ts: str | None = None
    closest: str | None = None
    reverse: bool = False
    limit: int = MAX_LIMIT
    page: int | None = None
    page_size: int = DEFAULT_PAGE_SIZE
    show_num_pages: bool = False


def _one(params: dict[str, list[str]], name: str) -> str | None:
    values = [v for v in params.get(name, []) if v != ""]
    if len(values) > 1 and len(set(values)) > 1:
        raise CdxQueryError(f"{name} given {len(values)} times with different values")
    return values[0] if values else None


def _int(params: dict[str, list[str]], name: str, lo: int, hi: int) -> int | None:
    v = _one(params, name)
    if v is None:
        return None
    if not v.isdigit() or not lo <= int(v) <= hi:
        raise CdxQueryError(f"{name}={v!r}: expected a whole number from {lo} to {hi}")
    return int(v)


def _ts(params: dict[str, list[str]], name: str) -> str | None:
    v = _one(params, name)
    if v is not None and not _TS.fullmatch(v):
        raise CdxQueryError(f"{name}={v!r}: expected a timestamp of 1 to 14 digits (YYYYMMDDhhmmss)")
    return v


def parse_query(params: dict[str, list[str]]) -> CdxQuery:
    """A CDX query from its parameters (name -> values, as given); CdxQueryError naming the
    first bad one. ``url`` with ``*.`` or a trailing ``*`` sets matchType as pywb does."""
    url = _one(params, "url")
    if not url:
        raise CdxQueryError("url: the url parameter is required")
    match_type = _one(params, "matchType")
    if match_type is None:
        if url.startswith("*."):
            url, match_type = url[2:], "domain"
        elif url.endswith("*"):
            url, match_type = url[:-1], "prefix"
        else:
            match_type = "exact"
    start, end = search_range(url, match_type)
    output = _one(params, "output") or "cdxj"
    if output not in OUTPUTS:
        raise CdxQueryError(f"output={output!r} is not one of {', '.join(OUTPUTS)}")
    fl = _one(params, "fl") or _one(params, "fields")
    fields = fl.split(",") if fl else None
    for f in fields or []:
        if not _FIELD.fullmatch(f):
            raise CdxQueryError(f"fl: {f!r} is not a CDX field name")
    specs = params.get("filter", [])
    if len(specs) > MAX_FILTERS:
        raise CdxQueryError(f"filter given {len(specs)} times; at most {MAX_FILTERS}")
    sort = _one(params, "sort")
    if sort not in (None, "closest", "reverse"):
        raise CdxQueryError(f"sort={sort!r} is not one of closest, reverse")
    closest = _ts(params, "closest")
    if sort == "closest" and closest is None:
        raise CdxQueryError("sort=closest needs closest=TIMESTAMP")
    limit = _int(params, "limit", 1, MAX_LIMIT)
    return CdxQuery(
        url=url,
        match_type=match_type,
        start=start,
        end=end,
        output=output,
        fields=fields,
        filters=[make_filter(s) for s in specs],
        from_ts=_ts(params, "from"),
        to_ts=_ts(params, "to"),
        closest=closest,
        reverse=sort == "reverse" or (_one(params, "reverse") or "").lower() in ("1", "true", "t", "on"),
        limit=MAX_LIMIT if limit is None else limit,
        page=_int(params, "page", 0, 1 << 30),
        page_size=_int(params, "pageSize", 1, MAX_LIMIT) or DEFAULT_PAGE_SIZE,
        show_num_pages=(_one(params, "showNumPages") or "").lower() in ("1", "true", "t", "on"),
    )


def select(q: CdxQuery, lines: Iterable[str]) -> Iterator[tuple[str, OrderedDict[str, str]]]:
    """The (line, record) answers of ``lines`` (the index's lines in [q.start, q.end), in order):
    filters, then from/to, then closest, reverse or limit, as pywb's process_cdx orders them."""
    lo = pad_timestamp(q.from_ts, PAD_14_DOWN) if q.from_ts else None
    hi = pad_timestamp(q.to_ts, PAD_14_UP) if q.to_ts else None

    def kept() -> Iterator[tuple[str, OrderedDict[str, str]]]:
        for line in lines:
            rec = record(line)
            if not all(f(rec, line) for f in q.filters):
                continue
            ts = rec["timestamp"]
            if (lo and ts < lo) or (hi and ts > hi):
                continue
            yield line, rec

    if q.closest:
        target = _seconds(q.closest)
        best: list[tuple[int, int, tuple[str, OrderedDict[str, str]]]] = []
        for n, item in enumerate(kept()):  # stable: equal distances keep index order, as pywb's bisect_right
            bisect.insort(best, (abs(target - _seconds(item[1]["timestamp"])), n, item))
            del best[q.limit :]
        return (item for _, _, item in best)
    if q.reverse:
        tail: list[tuple[str, OrderedDict[str, str]]] = []
        for item in kept():
            tail.append(item)
            if len(tail) > 2 * q.limit:
                del tail[: -q.limit]
        return reversed(tail[-q.limit :])
    return islice(kept(), q.limit)


def render(q: CdxQuery, rec: OrderedDict[str, str], line: str) -> str:
    """One answer line (with its newline) in ``q.output``, as pywb writes it."""
    if q.output == "json":
        pairs = [(k, rec[k]) for k in (q.fields or rec) if k in rec and (q.fields or not k.startswith("_"))]
        return json.dumps(OrderedDict(pairs)) + "\n"
    if q.output == "cdxj":
        rest = OrderedDict(list(rec.items())[2:])
        pairs = [(k, rest[k]) for k in (q.fields or rest) if k in rest and (q.fields or not k.startswith("_"))]
        return f"{rec['urlkey']} {rec['timestamp']} {json.dumps(OrderedDict(pairs))}\n"
    if q.fields:
        return " ".join(str(rec.get(k, "-")) for k in q.fields) + "\n"
    key, ts, body = line.split(" ", 2)
    return cdx.cdx_line(key, ts, json.loads(body)) + "\n"  # the line of the day's index.cdx
