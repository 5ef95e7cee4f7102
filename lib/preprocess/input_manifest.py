"""The record of the input files a published day was made from, and its comparison with a listing.

A preprocessed day publishes ``_inputs.json`` (before its ``_SUCCESS``): every archive it read,
by name below the day's input folder (:func:`lib.store.locations.archive_name`, so the record does not
depend on where the bucket is mounted), with its size and version: the S3 ETag, or a local
file's modification time. Neither needs the file read again; a digest of a TiB day would. A
later listing of the same folder compared with it says whether the day is still complete
(:func:`compare`): files added late, removed, or rewritten (size or version changed).
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from lib.store import locations
from lib.store.storage import FileInfo


def entries(input_uri: str, files: Iterable[FileInfo]) -> dict[str, dict[str, Any]]:
    """name -> {size, version} of ``files`` listed below ``input_uri``."""
    return {locations.archive_name(f.uri, input_uri): {"size": f.size, "version": f.version} for f in files}


def input_record(input_uri: str, files: Iterable[FileInfo]) -> bytes:
    """``_inputs.json``: the day's input files, sorted by name."""
    files_ = entries(input_uri, files)
    body = {"files": [{"name": n, **files_[n]} for n in sorted(files_)], "count": len(files_),
            "bytes": sum(v["size"] for v in files_.values())}
    return (json.dumps(body, indent=1, sort_keys=True) + "\n").encode()


def compare(recorded: dict[str, Any], input_uri: str, files: Iterable[FileInfo]) -> dict[str, list[str]]:
    """What changed in the input folder since ``recorded`` (a parsed ``_inputs.json``):
    ``added``, ``removed`` and ``modified`` names (size, or a version both sides know, differs)."""
    now = entries(input_uri, files)
    then = {f["name"]: f for f in recorded.get("files", [])}
    modified = [n for n in sorted(set(now) & set(then))
                if now[n]["size"] != then[n]["size"]
                or (now[n]["version"] and then[n].get("version") and now[n]["version"] != then[n]["version"])]
    return {"added": sorted(set(now) - set(then)), "removed": sorted(set(then) - set(now)), "modified": modified}
