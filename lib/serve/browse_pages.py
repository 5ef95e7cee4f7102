"""The browse views (lib.serve.browse_api) as plain HTML pages: no script, every value escaped,
each page linking to the next (collection -> file -> record, URL -> versions -> capture)."""

from __future__ import annotations

from html import escape
from typing import Any, Iterable
from urllib.parse import urlencode

CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left}
th{background:#f3f3f3}nav a{margin-right:1em}.dup{color:#999}.num{text-align:right}
form{margin:.5em 0}input[type=text]{width:28em}.meta{color:#555}"""


def link(c: str, view: str, text: str, cls: str = "", **params: Any) -> str:
    """An ``<a>`` to ``/browse/{c}/{view}?params`` (``None`` values left out)."""
    q = urlencode({k: v for k, v in params.items() if v is not None})
    attr = f' class="{cls}"' if cls else ""
    return f'<a{attr} href="/browse/{escape(c)}/{view}{"?" + escape(q) if q else ""}">{escape(str(text))}</a>'


def page(c: str, title: str, body: str) -> str:
    """A whole page: title, the collection's navigation and the search form, then ``body``."""
    nav = (
        f"<nav>{link(c, 'files', 'Files')}"
        f'<form style="display:inline" action="/browse/{escape(c)}/search">'
        f'<input type="text" name="q" placeholder="words of a URL"> <button>Search URLs</button></form></nav>'
    )
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<style>{CSS}</style></head><body>{nav}<h1>{escape(title)}</h1>{body}</body></html>"
    )


def table(head: Iterable[str], rows: Iterable[Iterable[str]], cls: str = "") -> str:
    """A table of already-escaped cells; ``cls`` names the body rows' class."""
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    trs = "".join(f'<tr class="{cls}">' + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"


def files_page(c: str, ans: dict[str, Any]) -> str:
    rows = [
        (
            link(c, "file", f["filename"], "file", name=f["filename"], day=f["day"]),
            escape(f["day"]),
            f'<span class="num">{f["records"]}</span>',
            "registered" if f["registered"] else "published",
        )
        for f in ans["files"]
    ]
    pager = []
    if ans["page"] > 0:
        pager.append(link(c, "files", "previous", "prev", page=ans["page"] - 1, size=ans["size"]))
    if ans["page"] + 1 < ans["pages"]:
        pager.append(link(c, "files", "next", "next", page=ans["page"] + 1, size=ans["size"]))
    meta = f'<p class="meta">{ans["total"]} files, page {ans["page"] + 1} of {max(ans["pages"], 1)}</p>'
    body = meta + table(("file", "day", "records", "source"), rows, "filerow") + " ".join(pager)
    return page(c, f"Files of {c}", body)


def file_page(c: str, ans: dict[str, Any]) -> str:
    name = ans["filename"]
    rows = [
        (
            link(
                c, "record", r["warc_offset"], "record", filename=name, offset=r["warc_offset"], length=r["warc_length"]
            ),
            escape(str(r["record_type"])),
            link(c, "url", r["url"], "url", url=r["url"]) if r["url"] else "",
            escape(str(r["payload_digest"] or "")),
        )
        for r in ans["records"]
    ]
    meta = f'<p class="meta">day {escape(ans["day"])}, {len(rows)} records</p>'
    return page(c, f"File {name}", meta + table(("offset", "type", "URL", "digest"), rows, "recordrow"))


def url_page(c: str, ans: dict[str, Any]) -> str:
    rows = []
    for cap in ans["captures"]:
        dup = f"duplicate of {escape(cap['duplicate_of'])}" if cap["duplicate"] else "new version"
        rows.append(
            (
                link(
                    c,
                    "record",
                    cap["timestamp"],
                    "capture",
                    filename=cap["filename"],
                    offset=cap["offset"],
                    length=cap["length"],
                ),  # fmt: skip
                escape(str(cap["status"] or "-")),
                escape(str(cap["mime"] or "")),
                escape(str(cap["digest"] or "")),
                f'<span class="{"dup" if cap["duplicate"] else "new"}">{dup}</span>',
                link(c, "file", cap["filename"], "file", name=cap["filename"]),
            )
        )
    meta = (
        f'<p class="meta">{len(rows)} captures, {ans["versions"]} versions (distinct digests); '
        f"key {escape(ans['key'])}</p>"
    )
    head = ("capture", "status", "MIME", "digest", "duplicates", "file")
    return page(c, f"Versions of {ans['url']}", meta + table(head, rows, "caprow"))


def search_page(c: str, ans: dict[str, Any]) -> str:
    rows = [
        (link(c, "url", h["url"], "hit", url=h["url"]), f"{h['score']:.3f}", escape(" ".join(h["matched"])))
        for h in ans["hits"]
    ]
    meta = f'<p class="meta">{ans["total"]} of {ans["urls"]} URLs match</p>'
    return page(c, f"URLs for {ans['query']}", meta + table(("URL", "score", "words"), rows, "hitrow"))


def record_page(c: str, ans: dict[str, Any]) -> str:
    head = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in ans["warc_headers"].items())
    http = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in ans["http_headers"].items())
    where = dict(filename=ans["filename"], offset=ans["offset"], length=ans["length"])
    links = (
        f"<p>{link(c, 'payload', 'the page as crawled', 'payload', **where)} · "
        + (f"{link(c, 'url', 'every version of this URL', 'versions', url=ans['url'])} · " if ans["url"] else "")
        + f"{link(c, 'file', 'the archive file', 'file', name=ans['filename'])}</p>"
    )
    status = f'<p class="meta">{escape(ans["record_type"])} record, HTTP status {ans["status"]}</p>'
    body = (
        status
        + links
        + "<h2>WARC headers</h2><table>"
        + head
        + "</table><h2>HTTP headers</h2><table>"
        + http
        + "</table>"
    )
    return page(c, f"Capture of {ans['url'] or ans['filename']}", body)
