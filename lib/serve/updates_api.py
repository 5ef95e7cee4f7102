"""HTTP routes of the index updates under ``ROOT/public/_updates/`` (docs/mirror.md).

    GET /updates[?after=SEQ][&dc=DC]              the published updates, in order, with their files
    GET /updates/{dc}/{id}/files/{path}           one file of an update (its manifest or a listed file)

Only updates with ``_SUCCESS`` are listed or served. Each file entry has ``path``, ``size``,
``sha256`` and ``url``, as a day's ``/files`` manifest has them, and a file answers ``Range``
requests with its sha256 as ETag, so ``dailyslice mirror`` fetches updates with the download
client's resume and checksums (:func:`lib.serve.client.fetch_one`). The first entry of ``files``
is the update's ``_manifest.json`` (its sha256 computed here), then the files it lists.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from lib.index.mirror_updates import MANIFEST, complete, read_manifest, updates_dir
from lib.serve.errors import NotFound
from lib.store import storage


def _local_roots(roots: dict[str, str]) -> dict[str, str]:
    # updates are built on the cluster filesystem (lib.index.mirror_updates): local roots only
    return {dc: storage.local_path(r) for dc, r in roots.items() if not storage.is_s3(r)}


def list_updates(roots: dict[str, str], after: int = 0, dc: str | None = None) -> list[dict[str, Any]]:
    """Every published update after ``after`` per data center (of ``dc`` only when given)."""
    out = []
    for name, root in sorted(_local_roots(roots).items()):
        if dc is not None and name != dc:
            continue
        for seq, folder in complete(updates_dir(root)):
            if seq <= after:
                continue
            man = read_manifest(folder)
            raw = open(os.path.join(folder, MANIFEST), "rb").read()
            base = f"/updates/{name}/{man['id']}/files"
            files = [{"path": MANIFEST, "size": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}]
            files += [{"path": p, "size": f["bytes"], "sha256": f["sha256"]} for p, f in man["files"].items()]
            for f in files:
                f["url"] = f"{base}/{f['path']}"
            keep = ("id", "seq", "previous", "target", "created", "counts")
            out.append({"dc": name, **{k: man.get(k) for k in keep}, "files": files})
    return out


def updates_router(roots: dict[str, str]) -> APIRouter:
    """The update routes over the service's roots (data center -> published root)."""
    router = APIRouter(tags=["updates"])

    @router.get("/updates", summary="The published index updates, in order")
    def updates(
        after: int = Query(0, description="only updates with a greater sequence number"),
        dc: str | None = Query(None, description="data center"),
    ) -> dict:
        items = list_updates(roots, after, dc)
        return {"updates": items, "count": len(items)}

    @router.get("/updates/{dc}/{uid}/files/{path:path}", summary="One file of an index update")
    def update_file(dc: str, uid: str, path: str) -> FileResponse:
        root = _local_roots(roots).get(dc)
        folder = os.path.join(updates_dir(root), uid) if root is not None and uid.isdigit() else None
        if folder is None or not os.path.exists(os.path.join(folder, "_SUCCESS")):
            raise NotFound(f"no published update {uid!r} in data center {dc!r}")
        man = read_manifest(folder)
        if path != MANIFEST and path not in man["files"]:
            raise NotFound(f"{path!r} is not a file of update {uid!r}")
        full = os.path.join(folder, *path.split("/"))
        sha = man["files"][path]["sha256"] if path != MANIFEST else hashlib.sha256(open(full, "rb").read()).hexdigest()
        # the ETag is the sha256, as a day's files have it: the client resumes with If-Range on it
        headers = {"ETag": f'"{sha}"', "X-Sha256": sha}
        return FileResponse(full, media_type="application/octet-stream", headers=headers)

    return router
