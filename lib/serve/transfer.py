"""The transfers of the download clients (:mod:`lib.serve.client` from the service,
:mod:`lib.serve.swap_download` straight from a SWAP network): a file fetched to ``<path>.part``,
resumed with ``Range``/``If-Range``, renamed into place only once its sum (sha256, or md5 where a
SWAP server gives only that) matched, one re-fetch on a bad sum; the run's summary and
``DEST/_manifest.json``, written last and only when every file verified.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import httpx

from lib.errors import DailysliceError
from lib.store import atomic, storage

MANIFEST = "_manifest.json"


class ChecksumError(DailysliceError):
    """A downloaded file whose sha256 (or md5, from a SWAP server) is not the manifest's."""


@dataclass
class Result:
    path: str
    status: str  # "skipped", "fetched", "resumed", "failed"
    fetched: int = 0  # bytes transferred in this run
    error: str = ""


_sha256 = storage.file_sha256  # the same sum the index updates' manifests hold (lib/index/mirror_updates.py)


def _md5(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "md5").hexdigest()


def verified(path: str, entry: dict) -> bool:
    """``path`` has the entry's size and sum: its sha256, or its md5 where the source gives only that
    (a SWAP server's ``/mgmt/attr``)."""
    if os.path.getsize(path) != entry["size"]:
        return False
    if "sha256" in entry:
        return bool(_sha256(path) == entry["sha256"])
    return bool(_md5(path) == entry["md5"])


def local_target(dest: str, rel: str) -> str:
    """``DEST/rel`` for a manifest path, refusing one that would leave DEST (a hostile server)."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or "\\" in rel or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"refused manifest path {rel!r}")
    return os.path.join(dest, *parts)


def _transfer(client: httpx.Client, entry: dict, part: str, progress) -> tuple[int, bool]:
    """Append the rest of ``entry`` to ``part``; returns (bytes fetched, resumed)."""
    have = os.path.getsize(part) if os.path.exists(part) else 0
    if have > entry["size"]:
        os.remove(part)
        have = 0
    headers = {}
    if have:
        # If-Range: the service's ETag is the sha256, a SWAP holder's the one its listing gave
        headers = {"Range": f"bytes={have}-", "If-Range": entry.get("etag") or f'"{entry["sha256"]}"'}
    if have == entry["size"]:
        if not os.path.exists(part):  # an empty file (a nested _SUCCESS): nothing to ask for
            open(part, "wb").close()
            return 0, False
        return 0, True
    got = 0
    with client.stream("GET", entry["url"], headers=headers) as r:
        if r.status_code == 200 and have:
            have = 0  # the server sent it whole (changed file or no range support)
        elif r.status_code not in (200, 206):
            r.read()
            raise OSError(f"HTTP {r.status_code} for {entry['path']}: {r.text[:200]}")
        with open(part, "ab" if have else "wb") as out:
            for chunk in r.iter_bytes():
                out.write(chunk)
                out.flush()  # a killed run keeps what arrived: the next run resumes from it
                got += len(chunk)
                progress(len(chunk))
    return got, bool(have)


def fetch_one(client: httpx.Client, entry: dict, dest: str, progress=lambda n: None) -> Result:
    """Make ``DEST/path`` a verified copy of ``entry`` (skip, resume or fetch; one retry on a bad sum)."""
    final = local_target(dest, entry["path"])
    if os.path.exists(final) and verified(final, entry):
        return Result(entry["path"], "skipped")
    os.makedirs(os.path.dirname(final), exist_ok=True)
    part = final + ".part"
    fetched, resumed = 0, False
    try:
        for attempt in (1, 2):
            n, res = _transfer(client, entry, part, progress)
            fetched += n
            resumed = resumed or res
            if verified(part, entry):
                os.replace(part, final)
                return Result(entry["path"], "resumed" if resumed else "fetched", fetched)
            os.remove(part)
            if attempt == 2:
                what = "sha256" if "sha256" in entry else "md5"
                raise ChecksumError(f"{what} of {entry['path']} differs from the manifest after a re-fetch")
    except (OSError, httpx.HTTPError, ChecksumError) as e:
        return Result(entry["path"], "failed", fetched, f"{type(e).__name__}: {e}")
    raise AssertionError("unreachable")


def fetch_all(
    client: httpx.Client,
    files: list[dict],
    dest: str,
    jobs: int,
    out=sys.stdout,
    prepare: Callable[[dict], None] | None = None,
) -> list[Result]:
    """:func:`fetch_one` for every entry, ``jobs`` at a time, a line printed per file. ``prepare``
    completes an entry first (a SWAP file's md5); its failure fails that file alone."""
    lock = threading.Lock()

    def one(entry: dict) -> Result:
        try:
            if prepare is not None:
                prepare(entry)
            r = fetch_one(client, entry, dest)
        except (OSError, httpx.HTTPError, DailysliceError) as e:
            r = Result(entry["path"], "failed", 0, f"{type(e).__name__}: {e}")
        with lock:
            extra = f" ({r.fetched:,} bytes)" if r.fetched else ""
            print(f"{r.status:8} {entry['path']}{extra}" + (f": {r.error}" if r.error else ""), file=out, flush=True)
        return r

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, files))


def finish(dest: str, source: dict, files: list[dict], results: list[Result], t0: float, out=sys.stdout) -> int:
    """Print the summary; write ``DEST/_manifest.json`` (``source``: where from and what was asked,
    then the files) when every file verified and return 0, else remove an older marker and return 1."""
    failed = [r for r in results if r.status == "failed"]
    fetched = sum(r.fetched for r in results)
    counts = {s: sum(r.status == s for r in results) for s in ("fetched", "resumed", "skipped", "failed")}
    print(
        f"done in {time.monotonic() - t0:.1f} s: "
        + ", ".join(f"{v} {k}" for k, v in counts.items())
        + f"; {fetched:,} bytes transferred",
        file=out,
        flush=True,
    )
    marker = os.path.join(dest, MANIFEST)
    if failed:
        if os.path.exists(marker):
            os.remove(marker)  # an older marker must not vouch for this incomplete set
        print(f"INCOMPLETE: {len(failed)} of {len(files)} files missing or unverified:", file=out)
        for r in failed:
            print(f"  {r.path}: {r.error}", file=out)
        return 1
    keys = ("dc", "day", "part", "lang", "tld", "path", "size", "sha256", "md5")
    record = {
        **{k: v for k, v in source.items() if k != "subindex"},
        "fetched_at": dt.datetime.now(dt.timezone.utc).isoformat(),
        "count": len(files),
        "total_bytes": sum(e["size"] for e in files),
        "bytes_transferred": fetched,
        "files": [{k: e[k] for k in keys if k in e} for e in files],
    }
    if "subindex" in source:  # what the sub-index was asked for and holds, as its own manifest says
        record["subindex"] = source["subindex"]
    atomic.write_bytes(marker, json.dumps(record, indent=1).encode())
    print(f"all {len(files)} files verified; wrote {marker}", file=out)
    return 0
