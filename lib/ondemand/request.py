"""An on-demand request folder ``ROOT/on_demand/<id>/``: ``config.json`` and ``url_patterns.txt``
read and checked before anything runs (docs/ondemand.md has the format and an example).

Every problem is a :class:`RequestError` naming the file (and the line, for a pattern) and the
reason; :func:`check_days` lists every requested day that is not published, by name.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pycountry

from lib.errors import ConfigError
from lib.ondemand.patterns import Pattern, PatternError, parse_patterns
from lib.pages.schema import PAGE_SCHEMA
from lib.store import layout, storage

CONFIG = "config.json"
PATTERNS = "url_patterns.txt"
STATUS = "status.json"
ON_DEMAND = "on_demand"
PUBLIC = "public"
#: what a request may ask for besides the CIFF shards and their metadata (always written)
OUTPUTS = ("ciff", "edges", "warc")
MAX_DAYS = 366
_KEYS = {"days", "languages", "where", "outputs", "requester", "purpose", "docs_per_shard"}
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class RequestError(ConfigError):
    """A request that cannot run: the text names the file and the reason."""


@dataclass(frozen=True)
class Request:
    """A checked request."""

    id: str
    root: str  # ROOT of ROOT/on_demand/<id>
    days: tuple[dt.date, ...]
    languages: tuple[str, ...]
    where: str | None
    outputs: tuple[str, ...]
    requester: str
    purpose: str
    patterns: tuple[Pattern, ...] = field(default=())
    docs_per_shard: int = 100_000

    @property
    def folder(self) -> str:
        return storage.join(self.root, ON_DEMAND, self.id)

    @property
    def public(self) -> str:
        """Where the sub-index is published: ``ROOT/public/<id>``."""
        return storage.join(self.root, PUBLIC, self.id)

    def record(self) -> dict[str, Any]:
        """The request as the published manifest records it (no timings: a re-run writes the same bytes)."""
        return {
            "id": self.id,
            "days": [d.isoformat() for d in self.days],
            "languages": list(self.languages),
            "where": self.where,
            "outputs": list(self.outputs),
            "patterns": [f"{p.kind} {p.text}" for p in self.patterns],
            "requester": self.requester,
            "purpose": self.purpose,
            "docs_per_shard": self.docs_per_shard,
        }


def split_folder(folder: str) -> tuple[str, str]:
    """(ROOT, id) of ``ROOT/on_demand/<id>``."""
    parts = folder.rstrip("/").rsplit("/", 2)
    if len(parts) != 3 or parts[1] != ON_DEMAND or not _ID.fullmatch(parts[2]):
        raise RequestError(f"{folder}: a request folder is ROOT/{ON_DEMAND}/<id> (id: letters, digits, . _ -)")
    return parts[0] or "/", parts[2]


def _date(value: Any, where: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except (TypeError, ValueError):
        raise RequestError(f"{where}: {value!r} is not a date YYYY-MM-DD") from None


def parse_days(value: Any, where: str = CONFIG) -> tuple[dt.date, ...]:
    """``days``: a list of dates or ``{"from": D, "to": D}`` (both included); sorted, no repeats."""
    if isinstance(value, dict):
        if set(value) != {"from", "to"}:
            raise RequestError(f'{where}: days as a range is {{"from": "YYYY-MM-DD", "to": "YYYY-MM-DD"}}')
        a, b = _date(value["from"], f"{where}: days.from"), _date(value["to"], f"{where}: days.to")
        if b < a:
            raise RequestError(f"{where}: days.to {b} is before days.from {a}")
        days = [a + dt.timedelta(n) for n in range((b - a).days + 1)]
    elif isinstance(value, list) and value:
        days = [_date(v, f"{where}: days[{i}]") for i, v in enumerate(value)]
    else:
        raise RequestError(f"{where}: days must be a non-empty list of dates or a from/to range")
    if len(set(days)) > MAX_DAYS:
        raise RequestError(f"{where}: {len(set(days))} days asked, at most {MAX_DAYS}")
    return tuple(sorted(set(days)))


def known_language(code: str) -> bool:
    """An ISO 639-3 code (as the preprocessed pages' ``language`` partitions name them) or ``und``."""
    return code == layout.UNKNOWN_LANG or (
        re.fullmatch(r"[a-z]{3}", code) is not None and pycountry.languages.get(alpha_3=code) is not None
    )


def parse_languages(value: Any, where: str = CONFIG) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise RequestError(f'{where}: languages must be a non-empty list of ISO 639-3 codes (e.g. ["deu"])')
    unknown = [v for v in value if not known_language(v)]
    if unknown:
        raise RequestError(f"{where}: unknown language(s) {', '.join(map(repr, unknown))} (ISO 639-3, e.g. deu)")
    return tuple(sorted(set(value)))


def check_where(where: str, source: str = CONFIG) -> None:
    """Run ``where`` on an empty table of the page columns (DuckDB, as ``extract --where``
    runs it): a syntax error or an unknown column fails here, before any day is read."""
    con = duckdb.connect(config={"threads": 1})
    con.register("pages", PAGE_SCHEMA.empty_table())
    try:
        con.sql(f"SELECT count(*) FROM pages WHERE {where}").fetchall()
    except duckdb.Error as e:
        raise RequestError(f"{source}: where {where!r}: {str(e).splitlines()[0]}") from None
    finally:
        con.close()


def parse_config(text: str, where: str = CONFIG) -> dict[str, Any]:
    """The checked fields of ``config.json``'s text (:class:`RequestError` on any problem)."""
    try:
        cfg = json.loads(text)
    except json.JSONDecodeError as e:
        raise RequestError(f"{where}: line {e.lineno} column {e.colno}: not JSON: {e.msg}") from None
    if not isinstance(cfg, dict):
        raise RequestError(f"{where}: must be a JSON object")
    if extra := sorted(set(cfg) - _KEYS):
        raise RequestError(f"{where}: unknown key(s) {', '.join(extra)} (known: {', '.join(sorted(_KEYS))})")
    for key in ("days", "languages", "requester", "purpose"):
        if key not in cfg:
            raise RequestError(f"{where}: {key} is missing")
    for key in ("requester", "purpose"):
        if not isinstance(cfg[key], str) or not cfg[key].strip():
            raise RequestError(f"{where}: {key} must be a non-empty string")
    outputs = cfg.get("outputs", ["ciff"])
    if not isinstance(outputs, list) or not set(outputs) <= set(OUTPUTS) or "ciff" not in outputs:
        raise RequestError(f"{where}: outputs is a list of {', '.join(OUTPUTS)} holding ciff, got {outputs!r}")
    w = cfg.get("where")
    if w is not None and (not isinstance(w, str) or not w.strip()):
        raise RequestError(f"{where}: where must be a non-empty SQL condition or absent")
    if w is not None:
        check_where(w, where)
    dps = cfg.get("docs_per_shard", 100_000)
    if type(dps) is not int or dps < 1:
        raise RequestError(f"{where}: docs_per_shard must be a positive integer")
    return {
        "days": parse_days(cfg["days"], where),
        "languages": parse_languages(cfg["languages"], where),
        "where": w,
        "outputs": tuple(o for o in OUTPUTS if o in outputs),
        "requester": cfg["requester"].strip(),
        "purpose": cfg["purpose"].strip(),
        "docs_per_shard": dps,
    }


def read_request(folder: str) -> Request:
    """The checked request of ``ROOT/on_demand/<id>`` (local or S3); :class:`RequestError`
    names the file and the reason. ``url_patterns.txt`` may be missing or empty: no URL filter."""
    root, rid = split_folder(folder)
    cfg_uri = storage.join(folder, CONFIG)
    if not storage.exists(cfg_uri):
        raise RequestError(f"{cfg_uri}: missing (every request has a {CONFIG})")
    try:
        text = storage.read_bytes(cfg_uri).decode("utf-8")
    except UnicodeDecodeError as e:
        raise RequestError(f"{cfg_uri}: not UTF-8 ({e.reason} at byte {e.start})") from None
    fields = parse_config(text, cfg_uri)
    pat_uri = storage.join(folder, PATTERNS)
    patterns: list[Pattern] = []
    if storage.exists(pat_uri):
        try:
            patterns = parse_patterns(storage.read_bytes(pat_uri).decode("utf-8"), pat_uri)
        except UnicodeDecodeError as e:
            raise RequestError(f"{pat_uri}: not UTF-8 ({e.reason} at byte {e.start})") from None
        except PatternError as e:
            raise RequestError(str(e)) from None
    return Request(id=rid, root=root, patterns=tuple(patterns), **fields)


def check_days(req: Request) -> list[str]:
    """The preprocessed day folders the request reads; :class:`RequestError` listing every
    requested day that is not published (no ``_SUCCESS``) by name."""
    folders = [layout.day_path(req.root, layout.PREPROCESSED, d) for d in req.days]
    missing = [d.isoformat() for d, f in zip(req.days, folders) if not storage.exists(storage.join(f, layout.SUCCESS))]
    if missing:
        raise RequestError(
            f"{storage.join(req.folder, CONFIG)}: {len(missing)} of {len(req.days)} day(s) not published "
            f"(no {layout.PREPROCESSED}/…/{layout.SUCCESS}): {', '.join(missing)}"
        )
    return folders
