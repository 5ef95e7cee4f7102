"""``dailyslice download --swap http://ANY-SERVER/get/COLLECTION/ROOT``: published days straight
from a SWAP network, no service between.

    dailyslice download --swap http://node1:7070/get/dsl/root --day 2026-05-01 [--to 2026-05-07] \\
        [--kind index --kind catalogue] [--lang deu] [--tld at] [--part ciff] --dest DIR [--jobs 4]

Each day folder ``ROOT/KIND/YYYY-MM/DD`` is listed by any server (``GET /list/``: the union over
every slice, :mod:`lib.placement.net.listing`); a folder without ``_SUCCESS`` is not published and
is left out (a single ``--day`` with nothing published is refused). Without ``--lang``/``--tld``/
``--part`` the whole folder comes, and its ``_SUCCESS`` is fetched last, only once every other
file of the folder verified: a local day folder with ``_SUCCESS`` is a complete copy. With them,
only the matching files come (the service's filter, :func:`lib.serve.published.keep`) and no
``_SUCCESS`` is copied, since a filtered folder is not the day.

The transfers are the client's (:func:`lib.serve.client.fetch_one`): ``<path>.part``, resumed
with ``Range`` (``If-Range`` the listing's ETag) through the servers' redirects to each file's
holder, renamed into place only once verified. The sum checked is the sha256 of the index day's
``_stats.json`` for CIFF and metadata shards, otherwise the md5 the holder gives
(``GET /mgmt/attr/``). ``DEST/_manifest.json`` is the client's (with every file's sha256), written
last and only when everything verified. A listing that cannot be had (a holder down: the servers
answer 503) is refused before anything is written; a holder that stops mid-run fails the files it
holds, by name, and the marker is not written; a later run resumes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
import urllib.parse
from typing import Any

import httpx

from lib.errors import DailysliceError, UsageError
from lib.serve import transfer as dl
from lib.serve.errors import QueryError
from lib.serve.published import KINDS, MAX_DAYS, PARTS, classify, keep, parse_day, split_values
from lib.store import layout, storage
from lib.store.layout import SUCCESS, day_suffix

PAGE = 1000


class SwapDownloadError(DailysliceError):
    """A SWAP listing or a file's attributes that cannot be had (a server or a holder down)."""


def split_root(url: str) -> tuple[str, str, str]:
    """``http://SERVER/get/COLL/ROOT`` -> (``http://SERVER``, COLL, ROOT); UsageError for any other URL."""
    p = urllib.parse.urlsplit(url)
    bits = [b for b in p.path.split("/") if b]
    if p.scheme not in ("http", "https") or not p.netloc or len(bits) < 2 or bits[0] != "get":
        raise UsageError(f"--swap wants http://SERVER/get/COLLECTION[/ROOT], got {url!r}")
    return f"{p.scheme}://{p.netloc}", bits[1], "/".join(bits[2:])


def listing(h: httpx.Client, server: str, coll: str, prefix: str) -> list[dict[str, Any]]:
    """Every file of ``coll`` below ``prefix`` (paths relative to the collection), all pages."""
    out: list[dict[str, Any]] = []
    after = ""
    url = f"{server}/list/{urllib.parse.quote(coll)}/{urllib.parse.quote(prefix)}"
    while True:
        params = {"limit": str(PAGE), **({"after": after} if after else {})}
        try:
            r = h.get(url, params=params)
        except httpx.HTTPError as e:
            raise SwapDownloadError(f"{coll}/{prefix}: cannot be listed ({type(e).__name__}: {e})") from None
        if r.status_code == 404:
            raise UsageError(f"{coll}/{prefix}: {r.text[:200]}")
        if r.status_code != 200:
            raise SwapDownloadError(f"{coll}/{prefix}: cannot be listed: HTTP {r.status_code}: {r.text[:300]}")
        doc = r.json()
        out += doc["entries"]
        after = doc.get("next") or ""
        if not after:
            return out


def _stats_sums(h: httpx.Client, url: str) -> dict[str, str]:
    """sha256 by path in the day folder, from an index day's ``_stats.json`` (its shards' sums)."""
    r = h.get(url)
    if r.status_code != 200:
        raise SwapDownloadError(f"{url}: HTTP {r.status_code}: {r.text[:200]}")
    sums = {}
    for s in json.loads(r.content).get("shards", []):
        where = f"{s['tld']}/{s['lang']}/"
        for name, key in (
            (layout.index_name(int(s["shard"])), "ciff_sha256"),
            (layout.metadata_name(s["shard"]), "metadata_sha256"),
        ):
            if s.get(key):
                sums[where + name] = s[key]
    return sums


def plan(h: httpx.Client, args: argparse.Namespace) -> tuple[list[dict], list[dict], list[str]]:
    """(files, day markers to fetch after them, notes) for what ``args`` asks."""
    server, coll, root = split_root(args.swap)
    try:
        first = parse_day(args.day)
        last = parse_day(args.to, "to") if args.to else first
    except QueryError as e:
        raise UsageError(str(e)) from None
    if not 0 <= (last - first).days < MAX_DAYS:
        raise UsageError(f"--to must be on or after --day and at most {MAX_DAYS} days after it")
    kinds = split_values(args.kind) or list(KINDS)
    parts = split_values(args.part)
    langs, tlds = split_values(args.lang), split_values(args.tld)
    for k in kinds:
        if k not in KINDS:
            raise UsageError(f"unknown kind {k!r} (one of {', '.join(KINDS)})")
    for v in parts or ():
        if v not in PARTS:
            raise UsageError(f"unknown part {v!r} (one of {', '.join(PARTS)})")
    filtered = bool(parts or langs or tlds)
    files: list[dict] = []
    markers: list[dict] = []
    notes: list[str] = []
    day = first
    while day <= last:
        for kind in kinds:
            if parts and not set(parts) & set(KINDS[kind]):
                continue
            folder = f"{kind}/{day_suffix(day)}"
            base = f"{root}/{folder}" if root else folder
            found = {e["path"][len(base) + 1 :]: e for e in listing(h, server, coll, base)}
            if SUCCESS not in found:
                notes.append(f"{folder}: not published (no {SUCCESS})")
                continue
            sums = (
                _stats_sums(h, f"{server}/get/{coll}/{base}/{layout.STATS}")
                if kind == layout.INDEX and layout.STATS in found
                else {}
            )
            for rel, item in sorted(found.items()):  # a top-level _SUCCESS is never a filtered file (classify)
                what = classify(rel, kind)
                if filtered:
                    if what is None or (parts and what[0] not in parts):
                        continue
                    if not keep(*what, set(langs) if langs else None, set(tlds) if tlds else None, bool(parts)):
                        continue
                entry = {
                    "day": day.isoformat(),
                    "part": what[0] if what else kind,
                    **({"lang": what[1]} if what and what[1] else {}),
                    **({"tld": what[2]} if what and what[2] else {}),
                    "path": f"{folder}/{rel}",
                    "size": int(item["size"]),
                    "etag": item.get("etag") or None,
                    "url": f"{server}/get/{urllib.parse.quote(coll)}/{urllib.parse.quote(item['path'])}",
                    "attr": f"{server}/mgmt/attr/{urllib.parse.quote(coll)}/{urllib.parse.quote(item['path'])}",
                    **({"sha256": sums[rel]} if rel in sums else {}),
                }
                (markers if rel == SUCCESS else files).append(entry)
        day += dt.timedelta(days=1)
    if not files and not markers:
        raise UsageError(f"nothing published in {args.swap} for {args.day}" + (f"..{args.to}" if args.to else ""))
    return files, markers, notes


def _with_md5(h: httpx.Client):
    """A ``prepare`` hook: the holder's md5 for an entry the index's manifest gives no sha256 for."""

    def prepare(entry: dict) -> None:
        if "sha256" in entry or "md5" in entry:
            return
        try:
            r = h.get(entry["attr"])
        except httpx.HTTPError as e:
            raise SwapDownloadError(f"{entry['path']}: attributes unreachable ({type(e).__name__}: {e})") from None
        if r.status_code != 200:
            raise SwapDownloadError(f"{entry['path']}: attributes: HTTP {r.status_code}: {r.text[:200]}")
        entry["md5"] = r.json()["md5"]

    return prepare


def _folder(path: str) -> str:
    return "/".join(path.split("/")[:3])  # KIND/YYYY-MM/DD


def run(args: argparse.Namespace, out=sys.stdout) -> int:
    """Download the days ``args`` asks from the SWAP network; 0 when everything verified, 1 otherwise."""
    t0 = time.monotonic()
    with httpx.Client(timeout=httpx.Timeout(60.0, connect=10.0), follow_redirects=True) as h:
        files, markers, notes = plan(h, args)  # before anything is written: a refused listing leaves no trace
        for n in notes:
            print(n, file=out)
        size = sum(e["size"] for e in files + markers)
        print(f"{len(files) + len(markers)} files, {size:,} bytes to check into {args.dest}", file=out, flush=True)
        os.makedirs(args.dest, exist_ok=True)
        prepare = _with_md5(h)
        results = dl.fetch_all(h, files, args.dest, args.jobs, out, prepare)
        bad = {_folder(r.path) for r in results if r.status == "failed"}
        ready = [m for m in markers if _folder(m["path"]) not in bad]
        results += dl.fetch_all(h, ready, args.dest, args.jobs, out, prepare)  # the day's marker last
        for m in markers:
            if _folder(m["path"]) in bad:
                results.append(dl.Result(m["path"], "failed", 0, "not fetched: other files of its day failed"))
    done = files + markers
    for e in done:
        local = dl.local_target(args.dest, e["path"])
        if "sha256" not in e and os.path.isfile(local) and dl.verified(local, e):
            e["sha256"] = storage.file_sha256(local)  # the client's marker names every file's sha256
    request = {k: v for k, v in vars(args).items() if k in ("day", "to", "kind", "lang", "tld", "part") and v}
    return dl.finish(args.dest, {"server": args.swap, "request": request}, done, results, t0, out)
