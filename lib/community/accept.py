"""Pending uploads turned into verdicts; accepted ones published as checked; a party's state for the service.

Per party (``ROOT/community/_parties.json``: ``{"parties": {"<party>": {"quota_bytes": N}}}``, a
party's quota null or absent: no limit):

- an upload is pending when its ``incoming/<upload>/_manifest.json`` exists and no verdict names
  that manifest's sha256 (a re-uploaded manifest is checked again; an unchanged one never is);
- accepted: the checked local copies and the manifest go to ``published/<upload>/`` with
  ``_SUCCESS`` last (:func:`lib.store.storage.upload_tree`), then the verdict, then the incoming
  copy is removed (it would count twice against the quota). A crash anywhere leaves either no
  ``_SUCCESS`` (never served, redone by the next run) or a published folder whose verdict the
  next run writes;
- refused: only the verdict (``verdicts/<upload>.json``, its reasons) is written; nothing is
  published. A published upload id is never replaced: a changed manifest under it is refused.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
from typing import Any, Callable

from lib.community.access import COMMUNITY, INCOMING, PARTIES_FILE, PUBLISHED, VERDICTS, check_party
from lib.community.uploads import MANIFEST, check_upload, safe_path
from lib.errors import ConfigError, UsageError
from lib.store import layout, s3, storage


def community_root(root: str) -> str:
    return storage.join(root, COMMUNITY)


def load_parties(root: str) -> dict[str, dict[str, Any]]:
    """``{party: {"quota_bytes": int | None}}`` from ``ROOT/community/_parties.json`` (absent: no
    party); a bad name or quota is a :class:`ConfigError` naming it."""
    uri = storage.join(community_root(root), PARTIES_FILE)
    if not storage.exists(uri):
        return {}
    try:
        doc = json.loads(storage.read_bytes(uri))
    except ValueError as e:
        raise ConfigError(f"{uri}: not JSON ({e})") from e
    parties = doc.get("parties") if isinstance(doc, dict) else None
    if not isinstance(parties, dict):
        raise ConfigError(f"{uri}: needs a 'parties' mapping of name -> {{quota_bytes}}")
    out = {}
    for name, spec in parties.items():
        try:
            check_party(name)
        except Exception as e:
            raise ConfigError(f"{uri}: {e}") from e
        quota = (spec or {}).get("quota_bytes")
        if quota is not None and (not isinstance(quota, int) or isinstance(quota, bool) or quota < 0):
            raise ConfigError(f"{uri}: party {name}: quota_bytes must be a non-negative integer or null, got {quota!r}")
        out[name] = {"quota_bytes": quota}
    return out


def _folder(root: str, party: str, *parts: str) -> str:
    return storage.join(community_root(root), check_party(party), *parts)


def _subfolders(uri: str) -> list[str]:
    """Names of the folders directly below ``uri`` that hold a file."""
    base = storage.normalize(uri).rstrip("/") + "/"
    return sorted({f.uri[len(base) :].split("/", 1)[0] for f in storage.list_files(uri) if "/" in f.uri[len(base) :]})


def _read_json(uri: str) -> Any:
    return json.loads(storage.read_bytes(uri)) if storage.exists(uri) else None


def _delete_tree(uri: str) -> None:
    for f in storage.list_files(uri):
        if storage.is_s3(f.uri):
            bucket, key = storage.split_s3(f.uri)
            s3.client().delete_object(Bucket=bucket, Key=key)
        else:
            os.remove(storage.local_path(f.uri))
    if not storage.is_s3(uri):  # the emptied folders too: the upload is gone, not a skeleton of it
        shutil.rmtree(storage.local_path(uri), ignore_errors=True)


def published_uploads(root: str, party: str) -> dict[str, dict[str, Any]]:
    """``{upload: manifest}`` of the party's published uploads (those with ``_SUCCESS``)."""
    base = _folder(root, party, PUBLISHED)
    out = {}
    for upload in _subfolders(base):
        if storage.exists(storage.join(base, upload, layout.SUCCESS)):
            out[upload] = _read_json(storage.join(base, upload, MANIFEST))
    return out


def used_bytes(published: dict[str, dict[str, Any]]) -> int:
    return sum(e["bytes"] for m in published.values() for e in m["files"].values())


def verdicts(root: str, party: str) -> dict[str, dict[str, Any]]:
    base = _folder(root, party, VERDICTS)
    out = {}
    for f in storage.list_files(base, [".json"]):
        out[f.uri.rsplit("/", 1)[-1][: -len(".json")]] = json.loads(storage.read_bytes(f.uri))
    return out


#: called with an accepted upload's checked local folder (``_SUCCESS`` in it), its party and id, after
#: it is published and before its verdict: the copies replication asks for (``dailyslice community
#: validate --datacenters``); if it fails, no verdict is written and the next run does it all again
Replicate = Callable[[str, str, str], Any]


def process_upload(
    root: str, party: str, upload: str, quota: int | None, replicate: Replicate | None = None
) -> dict[str, Any]:
    """Check one upload and publish it or refuse it (module doc); returns the verdict written."""
    if not _upload_id(upload):
        raise UsageError(f"upload id {upload!r}: one path part, not starting with '_' or '.'")
    incoming = _folder(root, party, INCOMING, upload)
    published = published_uploads(root, party)
    with tempfile.TemporaryDirectory(prefix=f"community-{party}-") as tmp:
        work = os.path.join(tmp, upload)
        check = check_upload(incoming, work, used_bytes({k: v for k, v in published.items() if k != upload}), quota)
        if upload in published and check.manifest != published[upload]:
            check.reasons.append(f"upload {upload} is published already and cannot change: upload under a new id")
        verdict: dict[str, Any] = {
            "party": party,
            "upload": upload,
            "status": "accepted" if check.ok else "refused",
            "reasons": check.reasons,
            "manifest_sha256": check.manifest_sha256,
            "bytes": check.bytes,
            "quota_bytes": quota,
            "checked_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        if check.ok:
            with open(os.path.join(work, MANIFEST), "w") as f:
                json.dump(check.manifest, f, indent=1, sort_keys=True)
            with open(os.path.join(work, layout.SUCCESS), "w") as f:
                f.write(verdict["checked_at"] + "\n")
            storage.upload_tree(work, _folder(root, party, PUBLISHED, upload))
            if replicate is not None:
                verdict["staged"] = replicate(work, party, upload)
    storage.write_bytes(_folder(root, party, VERDICTS, f"{upload}.json"), json.dumps(verdict, indent=1).encode())
    if check.ok:
        _delete_tree(incoming)
    return verdict


def _upload_id(name: str) -> bool:
    return safe_path(name) and "/" not in name and not name.startswith(".")


def pending(root: str, party: str, quota: int | None = None) -> list[str]:
    """The party's uploads to check: a manifest no verdict names by its sha256, or one refused under
    another quota than ``quota`` (raised or lowered since). A folder named ``_…`` or ``.…`` is not an
    upload; one without its manifest is still being written."""
    base = _folder(root, party, INCOMING)
    done = verdicts(root, party)
    out = []
    for upload in _subfolders(base):
        uri = storage.join(base, upload, MANIFEST)
        if not _upload_id(upload) or not storage.exists(uri):
            continue
        v = done.get(upload) or {}
        if v.get("manifest_sha256") != hashlib.sha256(storage.read_bytes(uri)).hexdigest() or (
            v["status"] == "refused" and v.get("quota_bytes") != quota
        ):
            out.append(upload)
    return out


def process_all(root: str, only: str | None = None, replicate: Replicate | None = None) -> list[dict[str, Any]]:
    """Every pending upload of every registered party (``only``: one party); the verdicts written."""
    parties = load_parties(root)
    if only is not None and only not in parties:
        raise ConfigError(f"party {only!r} is not registered in {community_root(root)}/{PARTIES_FILE}")
    return [
        process_upload(root, party, upload, spec["quota_bytes"], replicate)
        for party, spec in sorted(parties.items())
        if only in (None, party)
        for upload in pending(root, party, spec["quota_bytes"])
    ]


def party_state(root: str, party: str) -> dict[str, Any]:
    """What the service shows of a party: quota and use, published uploads with their files, refused
    uploads with their reasons, pending ones."""
    parties = load_parties(root)
    published = published_uploads(root, party)
    refused = {u: v for u, v in verdicts(root, party).items() if v["status"] == "refused"}
    return {
        "party": party,
        "registered": party in parties,
        "quota_bytes": (parties.get(party) or {}).get("quota_bytes"),
        "used_bytes": used_bytes(published),
        "published": [{"upload": u, "files": m["files"]} for u, m in sorted(published.items())],
        "refused": [
            {"upload": u, "checked_at": v["checked_at"], "reasons": v["reasons"]} for u, v in sorted(refused.items())
        ],
        "pending": pending(root, party, (parties.get(party) or {}).get("quota_bytes")),
    }
