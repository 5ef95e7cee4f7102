"""Which published files match a filter, where they are, their sha256, and ranged reads of them.

A store maps data-center names to published roots (local paths, ``file://``, ``s3://`` or a SWAP
collection's ``http://SERVER/get/COLLECTION/PREFIX``, :mod:`lib.serve.swap_root`) in the
bucket layout ``ROOT/{index,preprocessed,catalogue}/YYYY-MM/DD`` (:mod:`lib.store.layout`). Only
complete days count: a day folder of a kind is served once its ``_SUCCESS`` exists.

Parts and the dimensions they carry (a file's path says which)::

    ciff          index/DAY/{TLD}/{LANG}/index-{n}.ciff.gz        lang, tld
    anchors       index/DAY/{TLD}/{LANG}/anchors-{n}.ciff.gz      lang, tld
    metadata      index/DAY/{TLD}/{LANG}/metadata-{n}.parquet     lang, tld
    graph         index/DAY/graph/**                              -
    preprocessed  preprocessed/DAY/language={LANG}/**             lang
                  preprocessed/DAY/_captures/**                   (lang unknown: every language)
    catalogue     catalogue/DAY/*                                 -

Filter rule: a ``lang``/``tld`` filter keeps a file whose value is in the filter. A file whose part
does not carry that dimension at all (graph and catalogue: neither; preprocessed: no TLD) is kept
only when its part was asked for by name (``parts``); then the filter does not apply to it. The
captures table mixes languages, so a language filter leaves it out.

Side files (``_SUCCESS``, ``_stats.json``, ``_errors.jsonl`` at the day's top) are not in a manifest:
a filtered download is not the day, and a copied ``_SUCCESS`` would say it is. They can still be
downloaded by path.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Iterable, Iterator

from botocore.exceptions import ClientError

from lib.serve import swap_root
from lib.serve.errors import NotFound, QueryError
from lib.store import atomic, s3, storage
from lib.store.layout import CATALOGUE, INDEX, LANG_PREFIX, PREPROCESSED, SUCCESS, day_suffix
from lib.store.locations import is_s3, local_path, split_s3
from lib.store.storage import S3Stream

PARTS = ("ciff", "anchors", "metadata", "graph", "preprocessed", "catalogue")
#: the dimensions each part carries
DIMENSIONS = {
    "ciff": {"lang", "tld"},
    "anchors": {"lang", "tld"},
    "metadata": {"lang", "tld"},
    "graph": set(),
    "preprocessed": {"lang"},
    "catalogue": set(),
}
KINDS = {INDEX: ("ciff", "anchors", "metadata", "graph"), PREPROCESSED: ("preprocessed",), CATALOGUE: ("catalogue",)}
MAX_DAYS = 31
CHUNK = 256 * 1024
HASH_THREADS = 4  # hashing reads files: threads overlap I/O (hashlib releases the GIL)

_LANG_RE = re.compile(r"^[a-z]{2,3}$")  # ISO 639-1/-3 codes, 'und'
_TLD_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")  # a DNS label: 'de', 'xn--p1ai', 'other'
_DC_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_SAFE_PATH_RE = re.compile(r"^[A-Za-z0-9._=+-]+(?:/[A-Za-z0-9._=+-]+)*$")
_REL_RE = re.compile(r"^(index|preprocessed|catalogue)/(\d{4})-(\d{2})/(\d{2})/(.+)$")


@dataclass(frozen=True)
class FileEntry:
    """One published file: where it is (``path`` relative to the data center's root, ``/``-separated)
    and what it holds."""

    dc: str
    day: str
    part: str
    lang: str | None
    tld: str | None
    path: str
    size: int
    sha256: str
    url: str

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class _Found:
    rel: str  # path within the root
    uri: str
    size: int
    version: str  # mtime_ns (local) or ETag (S3): with uri and size, the key of the sha256 cache


def parse_day(value: str, name: str = "day") -> dt.date:
    """``YYYY-MM-DD`` or QueryError."""
    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value or ""):
            raise ValueError
        return dt.date.fromisoformat(value)
    except ValueError:
        raise QueryError(f"{name} must be a date YYYY-MM-DD, got {value!r}") from None


def split_values(values: Iterable[str] | str | None) -> list[str] | None:
    """Repeatable or comma-separated query values -> a list (None when none given)."""
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    out = [v.strip() for x in values for v in x.split(",") if v.strip()]
    return out or None


def classify(rel_in_day: str, kind: str) -> tuple[str, str | None, str | None] | None:
    """(part, lang, tld) of a file at ``rel_in_day`` inside a day folder of ``kind``; None for side
    files (underscore-prefixed names at the day's top) and files that are no part."""
    bits = rel_in_day.split("/")
    if len(bits) == 1 and bits[0].startswith("_"):
        return None
    if kind == CATALOGUE:
        return "catalogue", None, None
    if kind == PREPROCESSED:
        if bits[0].startswith(LANG_PREFIX) and len(bits) >= 2:
            return "preprocessed", bits[0][len(LANG_PREFIX) :], None
        if bits[0] == "_captures" and len(bits) >= 2:
            return "preprocessed", None, None
        return None
    if bits[0] == "graph" and len(bits) >= 2:
        return "graph", None, None
    if len(bits) == 3:
        if re.fullmatch(r"index-[^/]+\.ciff(\.gz)?", bits[2]):
            return "ciff", bits[1], bits[0]
        if re.fullmatch(r"anchors-[^/]+\.ciff(\.gz)?", bits[2]):
            return "anchors", bits[1], bits[0]
        if re.fullmatch(r"metadata-[^/]+\.parquet", bits[2]):
            return "metadata", bits[1], bits[0]
    return None


def keep(
    part: str, lang: str | None, tld: str | None, langs: set[str] | None, tlds: set[str] | None, named: bool
) -> bool:
    """The filter rule of the module docstring."""
    for dim, value, wanted in (("lang", lang, langs), ("tld", tld, tlds)):
        if wanted is None:
            continue
        if dim in DIMENSIONS[part]:
            if value not in wanted:
                return False
        elif not named:
            return False
    return True


class SliceStore:
    """Published roots by data-center name; lists, hashes, resolves and reads their files.

    ``cache_dir`` (optional) keeps computed sha256 sums across restarts (``sha256.json``); they are
    also kept in memory. Published days are immutable, and the key includes size and mtime/ETag, so
    a re-published file is hashed again.
    """

    def __init__(self, roots: dict[str, str], cache_dir: str | None = None, max_days: int = MAX_DAYS):
        if not roots:
            raise ValueError("a slice store needs at least one root")
        for dc in roots:
            if not _DC_RE.match(dc):
                raise ValueError(f"bad data-center name {dc!r}")
        self.roots = {dc: r.rstrip("/") if _remote(r) else os.path.realpath(local_path(r)) for dc, r in roots.items()}
        self.max_days = max_days
        self.cache_dir = cache_dir
        self._lock = threading.Lock()
        self._sha: dict[str, str] = {}
        self._dirty = False
        self._cache_file = os.path.join(cache_dir, "sha256.json") if cache_dir else None
        if self._cache_file and os.path.exists(self._cache_file):
            with open(self._cache_file, encoding="utf-8") as f:
                self._sha = json.load(f)

    # ---- listing ----------------------------------------------------------------------------
    def days(self, dc: str | None = None) -> list[str]:
        """Complete days (any kind) of one data center or of all, ascending ISO dates."""
        found = set()
        for name in self._dcs(dc):
            root = self.roots[name]
            for kind in KINDS:
                for month in self._children(root, kind):
                    for dd in self._children(root, f"{kind}/{month}"):
                        try:
                            day = dt.date(int(month[:4]), int(month[5:7]), int(dd))
                        except ValueError:
                            continue
                        if (
                            re.fullmatch(r"\d{4}-\d{2}", month)
                            and re.fullmatch(r"\d{2}", dd)
                            and self._complete(root, kind, day)
                        ):
                            found.add(day.isoformat())
        return sorted(found)

    def list_files(
        self,
        day_from: str | dt.date,
        day_to: str | dt.date | None = None,
        dc: str | None = None,
        langs: Iterable[str] | None = None,
        tlds: Iterable[str] | None = None,
        parts: Iterable[str] | None = None,
    ) -> list[FileEntry]:
        """The published files of complete days in ``[day_from, day_to]`` matching the filters (module
        docstring), sorted by data center and path, with size and sha256.

        Raises QueryError for a malformed filter or range, NotFound when no day of the range is
        complete in the chosen data centers or a language/TLD is on no file of the range's parts (a
        known value that only the combination filters out gives an empty list)."""
        first, last = self.day_range(day_from, day_to)
        langs_s, tlds_s, parts_l, named = self.validate(langs, tlds, parts)
        todo: list[tuple[str, dt.date, tuple, _Found]] = []
        seen: set[tuple[str, str | None]] = set()
        any_day = False
        for name in self._dcs(dc):
            root = self.roots[name]
            for i in range((last - first).days + 1):
                day = first + dt.timedelta(days=i)
                for kind, kind_parts in KINDS.items():
                    if not set(kind_parts) & set(parts_l) or not self._complete(root, kind, day):
                        continue
                    any_day = True
                    prefix = f"{kind}/{day_suffix(day)}"
                    for f in self._walk(root, prefix):
                        c = classify(f.rel[len(prefix) + 1 :], kind)
                        if c is None or c[0] not in parts_l:
                            continue
                        seen.update({("lang", c[1]), ("tld", c[2])})
                        if not keep(*c, langs_s, tlds_s, c[0] in named):
                            continue
                        todo.append((name, day, c, f))
        span = first.isoformat() if first == last else f"{first.isoformat()}..{last.isoformat()}"
        if not any_day:
            raise NotFound(f"no complete published day in {span}" + (f" in data center {dc!r}" if dc else ""))
        for dim, wanted in (("lang", langs_s), ("tld", tlds_s)):
            unknown = sorted(v for v in wanted or () if (dim, v) not in seen)
            if unknown:  # a value no file of these days and parts has: unknown, not merely filtered out
                raise NotFound(f"unknown {dim} {', '.join(unknown)}: no published file of {span} has it")
        with ThreadPoolExecutor(HASH_THREADS) as pool:  # first manifest of a day: hash files in parallel
            sums = list(pool.map(lambda t: self.sha256(t[3]), todo))
        out = [
            FileEntry(name, day.isoformat(), c[0], c[1], c[2], f.rel, f.size, digest, f"/download/{name}/{f.rel}")
            for (name, day, c, f), digest in zip(todo, sums)
        ]
        self._save_cache()
        return sorted(out, key=lambda e: (e.dc, e.path))

    def day_range(self, day_from: str | dt.date, day_to: str | dt.date | None) -> tuple[dt.date, dt.date]:
        """Parsed and checked ``[day_from, day_to]`` (QueryError when reversed or wider than max_days)."""
        first = day_from if isinstance(day_from, dt.date) else parse_day(day_from, "day")
        last = first if day_to in (None, "") else day_to if isinstance(day_to, dt.date) else parse_day(day_to, "to")
        if last < first:
            raise QueryError(f"to ({last}) is before day ({first})")
        if (last - first).days + 1 > self.max_days:
            raise QueryError(f"range of {(last - first).days + 1} days is wider than the maximum of {self.max_days}")
        return first, last

    def validate(self, langs, tlds, parts) -> tuple[set[str] | None, set[str] | None, list[str], set[str]]:
        """Checked filters: (langs, tlds, parts to list, parts asked for by name)."""
        langs_l, tlds_l, parts_l = split_values(langs), split_values(tlds), split_values(parts)
        for v in langs_l or ():
            if not _LANG_RE.match(v):
                raise QueryError(f"lang must be an ISO 639 code (2-3 lowercase letters), got {v!r}")
        for v in tlds_l or ():
            if not _TLD_RE.match(v):
                raise QueryError(f"tld must be a lowercase DNS label (IDNA form, e.g. 'de', 'xn--p1ai'), got {v!r}")
        for v in parts_l or ():
            if v not in PARTS:
                raise QueryError(f"unknown part {v!r} (one of {', '.join(PARTS)})")
        return (
            set(langs_l) if langs_l else None,
            set(tlds_l) if tlds_l else None,
            list(parts_l or PARTS),
            set(parts_l or ()),
        )

    def _dcs(self, dc: str | None) -> list[str]:
        if dc in (None, ""):
            return sorted(self.roots)
        if dc not in self.roots:
            raise QueryError(f"unknown data center {dc!r} (one of {', '.join(sorted(self.roots))})")
        return [dc]

    def _complete(self, root: str, kind: str, day: dt.date) -> bool:
        rel = f"{kind}/{day_suffix(day)}/{SUCCESS}"
        if is_s3(root):
            return storage.exists(f"{root}/{rel}")
        if swap_root.is_swap(root):
            return swap_root.exists(f"{root}/{rel}")
        p = os.path.join(root, rel)
        return os.path.isfile(p) and not os.path.islink(p) and self._inside(root, p)

    def _children(self, root: str, rel: str) -> list[str]:
        if is_s3(root):
            b, k = split_s3(root)
            prefix = f"{k}/{rel}/".lstrip("/")
            pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket=b, Prefix=prefix, Delimiter="/")
            return [p["Prefix"][len(prefix) :].rstrip("/") for page in pages for p in page.get("CommonPrefixes", [])]
        if swap_root.is_swap(root):
            return swap_root.children(root, rel)
        p = os.path.join(root, rel)
        return sorted(os.listdir(p)) if os.path.isdir(p) and not os.path.islink(p) else []

    def _walk(self, root: str, prefix: str) -> Iterator[_Found]:
        """Files below ``root/prefix``; locally no symlink is followed or listed that leaves the root."""
        if is_s3(root):
            b, k = split_s3(root)
            base = f"{k}/".lstrip("/") if k else ""
            pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket=b, Prefix=f"{base}{prefix}/")
            for page in pages:
                for obj in page.get("Contents", []):
                    rel = obj["Key"][len(base) :]
                    if _SAFE_PATH_RE.match(rel):
                        yield _Found(rel, f"s3://{b}/{obj['Key']}", int(obj["Size"]), obj.get("ETag", "").strip('"'))
            return
        if swap_root.is_swap(root):
            for x in swap_root.listed(f"{root}/{prefix}"):
                rel = x.uri[len(root) + 1 :]
                if _SAFE_PATH_RE.match(rel):
                    yield _Found(rel, x.uri, x.size, x.etag.strip('"'))
            return
        top = os.path.join(root, prefix)
        for dirpath, dirnames, names in os.walk(top):
            dirnames.sort()
            for name in sorted(names):
                p = os.path.join(dirpath, name)
                rel = os.path.relpath(p, root).replace(os.sep, "/")
                if not _SAFE_PATH_RE.match(rel) or not self._inside(root, p) or not os.path.isfile(p):
                    continue
                st = os.stat(p)
                yield _Found(rel, p, st.st_size, str(st.st_mtime_ns))

    @staticmethod
    def _inside(root: str, path: str) -> bool:
        real = os.path.realpath(path)
        return real == root or real.startswith(root.rstrip(os.sep) + os.sep)

    # ---- sha256 -----------------------------------------------------------------------------
    def sha256(self, f: _Found) -> str:
        """sha256 of a file, computed once per (uri, size, version)."""
        key = f"{f.uri}|{f.size}|{f.version}"
        with self._lock:
            got = self._sha.get(key)
        if got:
            return got
        h = hashlib.sha256()
        for chunk in read_range(f.uri, 0, f.size):
            h.update(chunk)
        digest = h.hexdigest()
        with self._lock:
            self._sha[key] = digest
            self._dirty = True
        return digest

    def _save_cache(self) -> None:
        if not self._cache_file or not self._dirty:
            return
        with self._lock:
            data = json.dumps(self._sha, sort_keys=True).encode()
            self._dirty = False
        os.makedirs(os.path.dirname(self._cache_file), exist_ok=True)
        atomic.write_bytes(self._cache_file, data)

    # ---- safe resolution and reads ----------------------------------------------------------
    def resolve(self, dc: str, path: str) -> FileEntry:
        """The file at ``path`` (relative, ``/``-separated, in the published layout) of data center
        ``dc``, or an error. Refused (QueryError): absolute paths, ``..``/``.`` segments, backslashes,
        ``%`` (encoded traversal that survived decoding), empty segments, any character a published
        name never has. NotFound: an unknown data center, a path outside a complete published day, a
        missing file, a symlink that leaves the root."""
        if dc not in self.roots:
            raise NotFound(f"unknown data center {dc!r}")
        if not path or path.startswith("/") or "\\" in path or "%" in path or "\x00" in path:
            raise QueryError(f"refused path {path!r}: absolute, encoded or with backslashes")
        segs = path.split("/")
        if any(s in ("", ".", "..") for s in segs) or not _SAFE_PATH_RE.match(path):
            raise QueryError(f"refused path {path!r}: only plain relative names of the published layout")
        m = _REL_RE.match(path)
        if not m:
            raise NotFound(f"{path!r} is not inside a published day folder (KIND/YYYY-MM/DD/...)")
        try:
            day = dt.date(int(m[2]), int(m[3]), int(m[4]))
        except ValueError:
            raise NotFound(f"{path!r}: no such day") from None
        root = self.roots[dc]
        if not self._complete(root, m[1], day):
            raise NotFound(f"day {day} of {m[1]} is not published (complete) in data center {dc!r}")
        c = classify(m[5], m[1])
        part, lang, tld = c if c else ("side", None, None)
        if is_s3(root):
            b, k = split_s3(root)
            key = f"{k}/{path}".lstrip("/")
            try:
                head = s3.client().head_object(Bucket=b, Key=key)
            except ClientError as e:
                if e.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                    raise NotFound(f"no file {path!r} in data center {dc!r}") from None
                raise
            f = _Found(path, f"s3://{b}/{key}", int(head["ContentLength"]), head.get("ETag", "").strip('"'))
        elif swap_root.is_swap(root):
            got = swap_root.head(f"{root}/{path}")
            if got is None:
                raise NotFound(f"no file {path!r} in data center {dc!r}")
            f = _Found(path, f"{root}/{path}", got[0], got[1].strip('"'))
        else:
            p = os.path.join(root, *segs)
            if not self._inside(root, p) or not os.path.isfile(p):
                raise NotFound(f"no file {path!r} in data center {dc!r}")
            st = os.stat(p)
            f = _Found(path, p, st.st_size, str(st.st_mtime_ns))
        entry = FileEntry(dc, day.isoformat(), part, lang, tld, path, f.size, self.sha256(f), f"/download/{dc}/{path}")
        self._save_cache()
        return entry

    def uri(self, entry: FileEntry) -> str:
        """Where ``entry`` is stored (a resolved entry only: never a path from a request)."""
        root = self.roots[entry.dc]
        return f"{root}/{entry.path}" if _remote(root) else os.path.join(root, *entry.path.split("/"))

    def read(self, entry: FileEntry, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """Bytes ``[start, end)`` of a resolved file, in chunks (never the whole file at once)."""
        end = entry.size if end is None else min(end, entry.size)
        if swap_root.is_swap(self.uri(entry)) and start < end:  # asked now: an unreachable holder is a 503
            return swap_root.read_range(self.uri(entry), start, end)
        return read_range(self.uri(entry), start, end)


def _remote(root: str) -> bool:
    """An ``s3://`` or SWAP (``http(s)://``) root: kept as given, not resolved as a local path."""
    return is_s3(root) or swap_root.is_swap(root)


def read_range(uri: str, start: int, end: int) -> Iterator[bytes]:
    """Bytes ``[start, end)`` of a local file or S3 object, in chunks of CHUNK (never the whole file)."""
    if start >= end:
        return
    if swap_root.is_swap(uri):
        yield from swap_root.read_range(uri, start, end)
        return
    if is_s3(uri):
        stream = S3Stream(uri, start, end)
        try:
            while True:
                b = stream.read(CHUNK)
                if not b:
                    return
                yield b
        finally:
            stream.close()
    with open(uri, "rb") as fh:
        fh.seek(start)
        left = end - start
        while left > 0:
            b = fh.read(min(CHUNK, left))
            if not b:
                return
            left -= len(b)
            yield b
