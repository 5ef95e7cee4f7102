"""HTTP routes of the on-demand sub-indices under ``ROOT/public/<id>/`` (docs/ondemand.md, "Serving").

    GET /public                                   every published sub-index: request, counts, files
    GET /public/{dc}/{id}/files/{path}            one file of a sub-index (listed in its manifest)
    GET /public/{dc}/{id}/search?q=..[&lang=][&k=]  BM25 over the sub-index's CIFF shards

Only folders with ``_SUCCESS`` are served; a file is served only when the manifest lists it, so
no path outside the sub-index can be asked for. Files answer ``Range`` requests, with the
manifest's sha256 as ETag (``If-Range``), as a day's files do (``dailyslice download --public``).
Search runs Anserini's BM25 on each shard (:mod:`lib.ciff.search`) and merges the hits by
score: the scores are exact BM25 over a language's pages when its sub-index is one shard (up to
``docs_per_shard`` pages, 100000 by default), per shard otherwise.
"""

from __future__ import annotations

import json
import os
from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from lib.ciff.search import attach_urls, metadata_beside, search
from lib.serve.errors import NotFound, QueryError
from lib.store import layout, storage

PUBLIC = "public"
MANIFEST = "_manifest.json"
MAX_K = 100


def _local_roots(roots: dict[str, str]) -> dict[str, str]:
    # sub-indices are built on the cluster filesystem (jobs/ondemand.py): local roots only
    return {dc: storage.local_path(r) for dc, r in roots.items() if not storage.is_s3(r)}


def list_subindices(roots: dict[str, str]) -> list[dict[str, Any]]:
    """Every published sub-index of the roots, by data center then id: its request, counts and files."""
    out = []
    for dc, root in sorted(_local_roots(roots).items()):
        base = os.path.join(root, PUBLIC)
        for rid in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            folder = os.path.join(base, rid)
            if not os.path.exists(os.path.join(folder, layout.SUCCESS)) or not os.path.isfile(
                os.path.join(folder, MANIFEST)
            ):
                continue  # being built, or not a sub-index
            m = json.loads(open(os.path.join(folder, MANIFEST)).read())
            files = [
                {"path": p, "bytes": f["bytes"], "sha256": f["sha256"], "url": f"/public/{dc}/{rid}/files/{p}"}
                for p, f in m["files"].items()
            ]
            out.append({"dc": dc, "id": rid, "request": m["request"], "counts": m["counts"], "files": files})
    return out


def _subindex(roots: dict[str, str], dc: str, rid: str) -> tuple[str, dict[str, Any]]:
    root = _local_roots(roots).get(dc)
    folder = os.path.join(root, PUBLIC, rid) if root is not None and "/" not in rid and rid not in ("..", ".") else None
    if folder is None or not os.path.exists(os.path.join(folder, layout.SUCCESS)):
        raise NotFound(f"no published sub-index {rid!r} in data center {dc!r}")
    return folder, json.loads(open(os.path.join(folder, MANIFEST)).read())


def search_subindex(
    roots: dict[str, str], dc: str, rid: str, q: str, langs: list[str] | None = None, k: int = 10
) -> list[dict[str, Any]]:
    """The top ``k`` pages of a sub-index for ``q`` (``langs``: only those languages' shards)."""
    if not q.strip():
        raise QueryError("q is empty")
    if not 1 <= k <= MAX_K:
        raise QueryError(f"k must be 1..{MAX_K}")
    folder, manifest = _subindex(roots, dc, rid)
    hits = []
    for rel in sorted(p for p in manifest["files"] if p.endswith(".ciff.gz") and "/index-" in f"/{p}"):
        lang = rel.split("/", 1)[0]
        if langs and lang not in langs:
            continue
        path = os.path.join(folder, rel)
        found = search(path, q, k)
        meta = metadata_beside(path)
        for h in attach_urls(found, meta) if meta else found:
            hits.append({"score": h.score, "url": h.url, "record_id": h.collection_docid, "lang": lang, "shard": rel})
    hits.sort(key=lambda h: (-h["score"], h["record_id"]))
    return hits[:k]


def subindex_router(roots: dict[str, str]) -> APIRouter:
    """The sub-index routes over the service's roots (data center -> published root)."""
    router = APIRouter(tags=["sub-indices"])

    @router.get("/public", summary="The published on-demand sub-indices and their files")
    def public() -> dict:
        items = list_subindices(roots)
        return {"subindices": items, "count": len(items)}

    @router.get("/public/{dc}/{rid}/files/{path:path}", summary="One file of a sub-index")
    def public_file(dc: str, rid: str, path: str) -> FileResponse:
        folder, manifest = _subindex(roots, dc, rid)
        if path not in manifest["files"] and path != MANIFEST:
            raise NotFound(f"{path!r} is not a file of sub-index {rid!r}")
        # the ETag is the manifest's sha256, as a day's files have it: a client resumes with
        # If-Range on it (lib/serve/client.py); Starlette answers ranges itself
        sha = manifest["files"].get(path, {}).get("sha256")
        headers = {"ETag": f'"{sha}"', "X-Sha256": sha} if sha else None
        return FileResponse(os.path.join(folder, path), media_type="application/octet-stream", headers=headers)

    @router.get("/public/{dc}/{rid}/search", summary="Search one sub-index (BM25)")
    def public_search(
        dc: str,
        rid: str,
        q: str = Query(..., description="query text"),
        lang: list[str] | None = Query(None, description="ISO 639-3 languages (repeat or comma-separate)"),
        k: int = Query(10, description=f"hits, 1..{MAX_K}"),
    ) -> dict:
        langs = [v for item in lang or [] for v in item.split(",") if v]
        return {"id": rid, "dc": dc, "query": q, "hits": search_subindex(roots, dc, rid, q, langs, k)}

    return router
