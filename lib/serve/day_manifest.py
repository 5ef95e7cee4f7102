"""Which shards a published index day holds, and which of them cannot be served (docs/serve.md,
"Empty and broken shards").

The day's ``_stats.json`` (written by the index job) lists every shard it published with its
documents, byte sizes and, since the files carry them, sha256 sums: it is the day's manifest.
:func:`plan_shards` puts it beside the files that are really there, so a shard whose file is
missing is named rather than silently left out; :func:`check_file` holds a file against its
manifest entry (size, sha256) before it is decoded. A day without a readable manifest (other
producers, older days) is served from its file listing alone.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from lib.errors import DailysliceError
from lib.store import layout, storage

_SHARD_RE = re.compile(r"^([^/]+)/([^/]+)/index-(\d+)\.ciff(\.gz)?$")


class ShardError(DailysliceError):
    """A shard that cannot be served; the message is the reason (without the shard's path)."""


@dataclass
class Expected:
    """A shard as the manifest lists it (any field may be missing in an older manifest)."""

    docs: int | None = None
    ciff_bytes: int | None = None
    metadata_bytes: int | None = None
    ciff_sha256: str | None = None
    metadata_sha256: str | None = None


@dataclass
class ShardFiles:
    """One shard of the day: its place, its files (None: not there) and its manifest entry."""

    tld: str
    lang: str
    number: int
    rel: str  # the CIFF's path below the day folder, as the manifest and the files API name it
    ciff: storage.FileInfo | None
    metadata: storage.FileInfo | None
    expected: Expected | None

    def skipped(self, reason: str) -> dict:
        """The record of this shard left out of the serving index (info.json ``skipped``)."""
        docs = self.expected.docs if self.expected else None
        return {
            "path": self.rel,
            "tld": self.tld,
            "lang": self.lang,
            "shard": self.number,
            "docs": docs,
            "reason": reason,
        }


def rel_path(uri: str, base: str) -> str:
    """``uri``'s path below ``base`` (list_files gives local paths as file:// URIs)."""
    base = storage.normalize(base).rstrip("/") + "/"
    if not uri.startswith(base):
        raise ValueError(f"{uri} is not below {base}")
    return uri[len(base) :]


def read_manifest(
    base: str, files: list[storage.FileInfo]
) -> tuple[dict[tuple[str, str, int], Expected] | None, str | None]:
    """(shards by (tld, lang, number), note): None and why when the day has no usable ``_stats.json``."""
    stats = next((f for f in files if rel_path(f.uri, base) == layout.STATS), None)
    if stats is None:
        return None, None
    try:
        doc = json.loads(storage.read_bytes(stats.uri))
        out = {}
        for s in doc["shards"]:
            key = (str(s["tld"]), str(s["lang"]), int(s["shard"]))
            out[key] = Expected(
                *(s.get(k) for k in ("docs", "ciff_bytes", "metadata_bytes", "ciff_sha256", "metadata_sha256"))
            )
        return out, None
    except Exception as e:  # any damage: serve from the listing, and say so
        return None, f"{layout.STATS} unreadable ({type(e).__name__}: {e}): shards are not checked against it"


def plan_shards(base: str, files: list[storage.FileInfo]) -> tuple[list[ShardFiles], list[str]]:
    """Every shard of the day in global order (TLD, language, number): those with a CIFF file and
    those only the manifest names; and the day's notes (a manifest that could not be read)."""
    manifest, note = read_manifest(base, files)
    by_rel = {rel_path(f.uri, base): f for f in files}
    shards: dict[tuple[str, str, int], ShardFiles] = {}
    for rel, f in by_rel.items():
        m = _SHARD_RE.match(rel)
        if m:
            key = (m[1], m[2], int(m[3]))
            meta = by_rel.get(f"{m[1]}/{m[2]}/{layout.metadata_name(m[3])}")
            shards[key] = ShardFiles(*key, rel, f, meta, (manifest or {}).get(key))
    for key, exp in (manifest or {}).items():
        if key not in shards:
            tld, lang, n = key
            rel = f"{tld}/{lang}/{layout.index_name(n)}"
            meta = by_rel.get(f"{tld}/{lang}/{layout.metadata_name(n)}")
            shards[key] = ShardFiles(tld, lang, n, rel, None, meta, exp)
    return [shards[k] for k in sorted(shards)], [note] if note else []


def check_listed(s: ShardFiles) -> None:
    """Raise ShardError when a file the shard needs is missing or has the wrong size (no read)."""
    exp = s.expected or Expected()
    if s.ciff is None:
        raise ShardError(f"missing: the manifest ({layout.STATS}) lists it but there is no such file")
    if exp.metadata_bytes is not None and s.metadata is None:
        raise ShardError(f"its {layout.metadata_name(s.number)} is missing")
    for what, info, want in (
        ("", s.ciff, exp.ciff_bytes),
        (layout.metadata_name(s.number) + " ", s.metadata, exp.metadata_bytes),
    ):
        if want is not None and info is not None and info.size != want:
            cut = " (truncated)" if info.size < want else ""
            raise ShardError(f"{what}size {info.size} bytes, the manifest says {want}{cut}")


def check_file(path: str, want_sha256: str | None, what: str = "") -> None:
    """Raise ShardError when the local file ``path`` does not have the manifest's sha256."""
    if not want_sha256:
        return
    with open(path, "rb") as f:
        got = hashlib.file_digest(f, "sha256").hexdigest()
    if got != want_sha256:
        raise ShardError(f"{what}sha256 {got[:16]}… differs from the manifest's {want_sha256[:16]}…")
