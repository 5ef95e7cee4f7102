"""Storage URIs as strings: local paths, ``file://`` and ``s3://bucket/prefix`` (no I/O).

Kept apart from :mod:`lib.core.storage` so that code which only handles local files (the CIFF
package and its CLI, the index tasks) does not import boto3, about a third of a Python
worker's start-up."""

from __future__ import annotations

import os
from urllib.parse import unquote, urlparse


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
    return "file://" + os.path.abspath(local_path(uri))


def join(uri: str, *parts: str) -> str:
    out = uri.rstrip("/")
    for p in parts:
        out = out + "/" + p.strip("/")
    return out
