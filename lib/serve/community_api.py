"""HTTP routes of the community spaces, ``ROOT/community/<party>/`` (docs/community.md, "Serving").

    GET /community                                  the parties of every root: counts of published and refused uploads
    GET /community/{dc}/{party}                     a party: quota and use, published uploads and files, refused
                                                    uploads with their reasons, pending ones (JSON)
    GET /community/{dc}/{party}/page                the same as a plain HTML page
    GET /community/{dc}/{party}/{upload}/files/{path}  one file of a validated upload

Only validated uploads are served: a folder under ``published/`` with ``_SUCCESS`` (written last by
:mod:`lib.community.accept`), and only the files its manifest lists, so no other path can be asked
for; the manifest's sha256 is the ETag.
"""

from __future__ import annotations

from html import escape
from typing import Any

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse, Response

from lib.community.accept import load_parties, party_state, published_uploads
from lib.community.access import COMMUNITY, PUBLISHED, check_party
from lib.errors import UsageError
from lib.serve.browse_pages import CSS, table
from lib.serve.errors import NotFound
from lib.store import storage


def _party(roots: dict[str, str], dc: str, party: str) -> str:
    root = roots.get(dc)
    try:
        check_party(party)
    except UsageError:
        root = None
    if root is None:
        raise NotFound(f"no party {party!r} in data center {dc!r}")
    return root


def list_parties(roots: dict[str, str]) -> list[dict[str, Any]]:
    """Every registered party of every root, with its counts."""
    out = []
    for dc, root in sorted(roots.items()):
        for party in sorted(load_parties(root)):
            s = party_state(root, party)
            out.append(
                {
                    "dc": dc,
                    "party": party,
                    "published": len(s["published"]),
                    "refused": len(s["refused"]),
                    "pending": len(s["pending"]),
                    "used_bytes": s["used_bytes"],
                    "quota_bytes": s["quota_bytes"],
                    "url": f"/community/{dc}/{party}",
                }
            )
    return out


def state_page(dc: str, state: dict[str, Any]) -> str:
    """A party's state as a page: published files (linked), refused uploads and why."""
    party = state["party"]
    quota = "no quota" if state["quota_bytes"] is None else f"quota {state['quota_bytes']:,} bytes"
    files = [
        (
            escape(p["upload"]),
            f'<a href="/community/{escape(dc)}/{escape(party)}/{escape(p["upload"])}/files/{escape(rel)}">'
            f"{escape(rel)}</a>",
            escape(e["kind"]),
            f"{e['bytes']:,}",
            f"<code>{escape(e['sha256'][:16])}…</code>",
        )
        for p in state["published"]
        for rel, e in sorted(p["files"].items())
    ]
    refused = [
        (
            escape(r["upload"]),
            escape(r["checked_at"]),
            "<ul>" + "".join(f"<li>{escape(x)}</li>" for x in r["reasons"]) + "</ul>",
        )
        for r in state["refused"]
    ]
    body = (
        f'<p class="meta">{state["used_bytes"]:,} bytes published, {quota}; pending: '
        f"{escape(', '.join(state['pending']) or 'none')}</p>"
        f"<h2>Published</h2>{table(['upload', 'file', 'kind', 'bytes', 'sha256'], files) if files else '<p>none</p>'}"
        f"<h2>Refused</h2>{table(['upload', 'checked', 'why'], refused) if refused else '<p>none</p>'}"
    )
    title = f"Community space {party} ({dc})"
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f'<style>{CSS}</style></head><body><nav><a href="/community">All parties</a></nav>'
        f"<h1>{escape(title)}</h1>{body}</body></html>"
    )


def community_router(roots: dict[str, str]) -> APIRouter:
    """The community routes over the service's roots (data center -> root, local or ``s3://``)."""
    router = APIRouter(tags=["community"])

    @router.get("/community", summary="The community parties and their uploads' counts")
    def parties() -> dict:
        items = list_parties(roots)
        return {"parties": items, "count": len(items)}

    @router.get("/community/{dc}/{party}", summary="A party's published, refused and pending uploads")
    def party(dc: str, party: str) -> dict:
        return party_state(_party(roots, dc, party), party)

    @router.get("/community/{dc}/{party}/page", response_class=HTMLResponse, summary="Page: a party's uploads")
    def party_page(dc: str, party: str) -> HTMLResponse:
        return HTMLResponse(state_page(dc, party_state(_party(roots, dc, party), party)))

    @router.get("/community/{dc}/{party}/{upload}/files/{path:path}", summary="One file of a validated upload")
    def party_file(dc: str, party: str, upload: str, path: str) -> Response:
        root = _party(roots, dc, party)
        manifest = published_uploads(root, party).get(upload)
        if manifest is None or path not in manifest["files"]:
            raise NotFound(f"{path!r} is not a file of a validated upload {upload!r} of party {party!r}")
        sha = manifest["files"][path]["sha256"]
        headers = {"ETag": f'"{sha}"', "X-Sha256": sha}
        uri = storage.join(root, COMMUNITY, party, PUBLISHED, upload, path)
        if storage.is_s3(uri):
            return Response(storage.read_bytes(uri), media_type="application/octet-stream", headers=headers)
        return FileResponse(storage.local_path(uri), media_type="application/octet-stream", headers=headers)

    return router
