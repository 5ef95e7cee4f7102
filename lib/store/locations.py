"""Storage URIs as strings: local paths, ``file://`` and ``s3://bucket/prefix`` (no I/O).

Kept apart from :mod:`lib.store.storage` so that code which only handles local files (the CIFF
package and its CLI, the index tasks) does not import boto3, about a third of a Python
worker's start-up."""

from __future__ import annotations

import os
from urllib.parse import unquote, urlparse

from lib.store import layout


def is_s3(uri: str) -> bool:
    return uri.startswith("s3://") or uri.startswith("s3a://")


def split_s3(uri: str) -> tuple[str, str]:
    """``s3://bucket/a/b`` -> ``("bucket", "a/b")``."""
    p = urlparse(uri)
    if p.scheme not in ("s3", "s3a") or not p.netloc:
        raise ValueError(f"not an s3 URI: {uri!r}")
    return p.netloc, p.path.lstrip("/")


def local_path(uri: str) -> str:
    """Local filesystem path of a local URI (plain path or ``file://``)."""
    if uri.startswith("file://"):
        return unquote(urlparse(uri).path)
    if "://" in uri:
        raise ValueError(f"not a local path: {uri!r}")
    return uri


def normalize(uri: str) -> str:
    """Canonical form used in output columns: absolute ``file://`` URIs or ``s3://``."""
    if is_s3(uri):
        b, k = split_s3(uri)
        return f"s3://{b}/{k}"
    if uri.startswith(("http://", "https://")):  # a SWAP server's /get/ URL: kept as given
        return uri
    return "file://" + os.path.abspath(local_path(uri))


def join(uri: str, *parts: str) -> str:
    out = uri.rstrip("/")
    for p in parts:
        out = out + "/" + p.strip("/")
    return out


def archive_name(uri: str, input_root: str) -> str:
    """What an archive file is, independent of where it is read from: its path below the
    day's input folder, prefixed with the day (``YYYY-MM/DD/``) when that folder ends in one.

    The same crawl read from a local folder, from S3 or from a copy under another root gets
    the same name, so ids derived from it (ARC record ids, output file names) do not change
    when a bucket moves or a day is staged elsewhere. ``uri`` is a :func:`normalize`-d URI
    below (or equal to) ``input_root``; anything else keeps its full URI."""
    base = normalize(input_root).rstrip("/")
    if uri == base:  # the input is the file itself
        rel = uri.rsplit("/", 1)[-1]
    elif uri.startswith(base + "/"):
        rel = uri[len(base) + 1 :]
    else:
        return uri
    day = layout.day_of(base)
    return f"{layout.day_suffix(day)}/{rel}" if day else rel
