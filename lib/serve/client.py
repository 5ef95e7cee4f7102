"""Download a filtered subset of published slices, or one on-demand sub-index, into a folder,
resuming and verifying.

    python -m lib.serve.client --server http://127.0.0.1:8000 --day 2026-05-01 [--to 2026-05-07] \\
        [--dc DC] [--lang deu] [--tld at] [--part ciff --part metadata] --dest DIR [--jobs 4]
    python -m lib.serve.client --server URL --list-public [--dc DC]
    python -m lib.serve.client --server URL --public ID [--dc DC] --dest DIR [--jobs 4]
    python -m lib.serve.client --swap http://ANY-SERVER/get/COLL/ROOT --day 2026-05-01 [--kind index] --dest DIR

Asks the server's ``/files`` for the manifest (for a sub-index: its entry in ``/public``, the
files and sha256 of its ``_manifest.json``), then fetches every file to ``DEST/<path>`` (the
published layout; a sub-index's files as under ``ROOT/public/<id>/``). A file is written to
``<path>.part`` and renamed into place only after its sha256 matched the manifest; an
interrupted ``.part`` is resumed with ``Range: bytes=<size>-`` (``If-Range`` the file's ETag, its
sha256, so a changed file comes whole). A checksum mismatch deletes the copy and fetches it once
more, then fails. Files already in place with the right size and sha256 are
skipped, so a re-run only does what is missing. ``DEST/_manifest.json`` (the request, the files,
the bytes fetched) is written last and only when every file verified; otherwise the client exits 1
and lists what is missing, and no marker claims a complete set. For a sub-index the marker also
holds its ``subindex`` entry: data center, id, the request and its counts. The transfers are
:mod:`lib.serve.transfer`'s; ``--swap`` reads days straight from a SWAP network instead of the
service (:mod:`lib.serve.swap_download`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Sequence

import httpx

from lib.errors import DailysliceError, UsageError
from lib.serve import swap_download
from lib.serve.transfer import (  # noqa: F401  (the client's names before the transfers moved out)
    MANIFEST,
    ChecksumError,
    Result,
    _sha256,
    fetch_all,
    fetch_one,
    finish,
    local_target,
    verified,
)


def manifest(client: httpx.Client, params: Sequence[tuple[str, str]]) -> dict:
    """The server's manifest for ``params`` (raises with the server's error message)."""
    r = client.get("/files", params=httpx.QueryParams(list(params)))
    if r.status_code != 200:
        try:
            msg = r.json().get("error", r.text)
        except ValueError:
            msg = r.text
        raise UsageError(f"server refused the request ({r.status_code}): {msg}")
    return r.json()


def subindex_manifest(client: httpx.Client, rid: str, dc: str | None = None) -> dict:
    """The files of the published sub-index ``rid`` as :func:`manifest` gives a day's (``path``,
    ``size``, ``sha256``, ``url``), with its ``subindex`` entry (data center, request, counts)."""
    items = [s for s in public_list(client) if dc is None or s["dc"] == dc]
    found = [s for s in items if s["id"] == rid]
    if not found:
        known = ", ".join(f"{s['dc']}/{s['id']}" for s in items) or "none"
        raise UsageError(f"no published sub-index {rid!r}" + (f" in {dc!r}" if dc else "") + f" (published: {known})")
    if len(found) > 1:
        raise UsageError(f"sub-index {rid!r} is published in {', '.join(s['dc'] for s in found)}: give --dc")
    (item,) = found
    files = [{"path": f["path"], "size": f["bytes"], "sha256": f["sha256"], "url": f["url"]} for f in item["files"]]
    about = {k: item[k] for k in ("dc", "id", "request", "counts")}
    return {"files": files, "total_bytes": sum(f["size"] for f in files), "subindex": about}


def public_list(client: httpx.Client) -> list[dict]:
    """The server's published sub-indices (``GET /public``)."""
    r = client.get("/public")
    if r.status_code != 200:
        raise UsageError(f"server refused /public ({r.status_code}): {r.text[:200]}")
    return r.json()["subindices"]


def build_params(args: argparse.Namespace) -> list[tuple[str, str]]:
    params = [("day", args.day)]
    if args.to:
        params.append(("to", args.to))
    if args.dc:
        params.append(("dc", args.dc))
    for name in ("lang", "tld", "part"):
        for v in getattr(args, name) or ():
            params.append((name, v))
    return params


def list_public(args: argparse.Namespace, out=sys.stdout) -> int:
    """Print the server's published sub-indices, one line each: where, id, days, languages, pages, files."""
    with httpx.Client(base_url=args.server, timeout=httpx.Timeout(60.0, connect=10.0), follow_redirects=True) as client:
        items = [s for s in public_list(client) if args.dc is None or s["dc"] == args.dc]
    for s in items:
        req, counts = s["request"], s["counts"]
        days = req.get("days") or []
        span = f"{days[0]}..{days[-1]}" if len(days) > 1 else "".join(days)
        size = sum(f["bytes"] for f in s["files"])
        print(
            f"{s['dc']}/{s['id']}  days {span}  languages {','.join(req.get('languages', []))}  "
            f"pages {counts.get('kept', 0)}  {len(s['files'])} files, {size:,} bytes  "
            f"requester {req.get('requester', '')!r}",
            file=out,
        )
    print(f"{len(items)} sub-indices", file=out)
    return 0


def run(args: argparse.Namespace, out=sys.stdout) -> int:
    """Download what ``args`` asks; 0 when everything verified, 1 otherwise."""
    if args.list_public:
        return list_public(args, out)
    if args.swap:
        return swap_download.run(args, out)  # the same transfers, straight from a SWAP network
    os.makedirs(args.dest, exist_ok=True)
    params = [("public", args.public)] + ([("dc", args.dc)] if args.dc else []) if args.public else build_params(args)
    t0 = time.monotonic()
    with httpx.Client(base_url=args.server, timeout=httpx.Timeout(60.0, connect=10.0), follow_redirects=True) as client:
        man = subindex_manifest(client, args.public, args.dc) if args.public else manifest(client, params)
        files = man["files"]
        print(f"{len(files)} files, {man['total_bytes']:,} bytes to check into {args.dest}", file=out, flush=True)
        results = fetch_all(client, files, args.dest, args.jobs, out)
    source: dict = {"server": args.server, "request": dict_of(params)}
    if "subindex" in man:
        source["subindex"] = man["subindex"]
    return finish(args.dest, source, files, results, t0, out)


def dict_of(params: list[tuple[str, str]]) -> dict[str, list[str] | str]:
    out: dict[str, list[str] | str] = {}
    for k, v in params:
        if k in ("lang", "tld", "part"):
            values = out.get(k)
            if isinstance(values, list):
                values.append(v)
            else:
                out[k] = [v]
        else:
            out[k] = v
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m lib.serve.client", description=__doc__.split("\n\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--server", help="base URL of the service, e.g. http://127.0.0.1:8000")
    src.add_argument(
        "--swap", metavar="URL", help="straight from a SWAP network: http://ANY-SERVER/get/COLLECTION/ROOT (days only)"
    )
    p.add_argument("--day", help="first day YYYY-MM-DD")
    p.add_argument("--to", help="last day YYYY-MM-DD (inclusive)")
    p.add_argument("--dc", help="data center")
    p.add_argument("--lang", action="append", help="language (repeatable or comma-separated)")
    p.add_argument("--tld", action="append", help="TLD group (repeatable or comma-separated)")
    p.add_argument("--part", action="append", help="ciff, metadata, graph, preprocessed, catalogue")
    p.add_argument(
        "--kind", action="append", help="with --swap: whole day folders of index, preprocessed, catalogue (default all)"
    )
    p.add_argument(
        "--public", metavar="ID", help="download the on-demand sub-index ID (ROOT/public/ID) instead of days"
    )
    p.add_argument("--list-public", action="store_true", help="list the published sub-indices and exit")
    p.add_argument("--dest", help="folder to download into (published layout)")
    p.add_argument("--jobs", type=int, default=4, help="parallel downloads (default 4)")
    args = p.parse_args(argv)
    if sum(map(bool, (args.day, args.public, args.list_public))) != 1:
        p.error("give one of --day (published days), --public ID (a sub-index) or --list-public")
    if not args.list_public and not args.dest:
        p.error("--dest is required to download")
    if not args.day and (args.to or args.lang or args.tld or args.part):
        p.error("--to, --lang, --tld and --part filter days: give --day")
    if args.swap and (args.public or args.list_public or args.dc):
        p.error("--swap reads one published root's days: --public, --list-public and --dc need --server")
    if args.kind and not args.swap:
        p.error("--kind is for --swap (the service takes --part)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except UsageError as e:  # the server refused the filter: the request is wrong
        print(f"download: {e}", file=sys.stderr)
        return 2
    except DailysliceError as e:  # a SWAP listing that cannot be had: nothing was written
        print(f"download: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
