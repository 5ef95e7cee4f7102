"""Register an archive file over HTTP (WarcManager's "Register new ARC/WARC files"), as a
FastAPI router:

    POST /catalogue/files?collection=C     body {"file": PATH or s3://URI}   (Authorization: Bearer TOKEN)

The file must lie below an archives root: the collection's ``ROOT/warc/`` or one of the
service's ``--archives`` roots. Its records are indexed in the request (lib.catalogue.register)
and answer the CDX server, the record store and the digest store when it returns. The token is
the CDX server's (lib.serve.cdx_api.check_token): none configured, no write. A file that is not an
archive, is truncated or damaged answers 400 naming the offset and reason, one outside the roots
403, a missing one 404; nothing of it is registered. A registration waits up to 30 s for the
index's or a store's lease, then answers 503.
"""

from __future__ import annotations

import json

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool

from lib.catalogue import register
from lib.serve.cdx_api import Busy, Collections, Forbidden, check_token
from lib.serve.errors import NotFound, QueryError
from lib.store import layout, lease, storage

WAIT = 30.0  # seconds a registration waits for a lease (a nightly merge), then 503
MAX_BODY = 64 << 10


def register_router(roots: dict[str, str], archive_roots: list[str], write_token: str | None) -> APIRouter:
    """``POST /catalogue/files`` over the collections ``roots``; ``archive_roots`` are the
    further folders or ``s3://`` prefixes files may be registered from."""
    router = APIRouter(tags=["catalogue"])
    colls = Collections(roots)
    default = next(iter(roots))

    @router.post("/catalogue/files", summary="Register an archive file: its records are queryable at once")
    async def post(request: Request, collection: str = Query(default)) -> dict:
        check_token(request.headers.get("authorization"), write_token)
        colls.index(collection)  # 404 for an unknown collection or one on S3
        body = await request.body()
        if len(body) > MAX_BODY:
            raise QueryError(f'a body of {len(body)} bytes: give one file as {{"file": URI}}')
        try:
            doc = json.loads(body or b"null")
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise QueryError(f'the body is not JSON ({e}): give {{"file": PATH or s3://URI}}') from None
        if not isinstance(doc, dict) or not isinstance(doc.get("file"), str) or not doc["file"]:
            raise QueryError('the body must be {"file": PATH or s3://URI}')
        root = storage.local_path(colls.root(collection))
        allowed = [storage.join(root, layout.WARC), *archive_roots]
        try:
            return await _run(root, doc["file"], allowed)
        except register.RegisterError as e:
            err = {403: Forbidden, 404: NotFound}.get(e.status, QueryError)
            raise err(str(e)) from None
        except lease.Busy as e:
            raise Busy(f"{e}; nothing registered, try again") from None

    return router


async def _run(root: str, uri: str, allowed: list[str]) -> dict:
    # the file is read and indexed in a worker thread: the event loop keeps answering queries
    return await run_in_threadpool(register.register, root, uri, allowed, "register", WAIT)
