"""One archive file -> page rows, capture rows, counters and an error report.

Plain Python, no Spark: the preprocess job calls :func:`process_file` inside executors,
the benchmark's bare loop calls the same function in one process.

Counting rule (checked by the tests): every record read is exactly one of kept, skipped
(a sound record we do not index: not a response, not HTML, not 2xx, binary, too large,
its URL on the exclusion list)
or failed (damage: gzip, WARC/ARC header, no HTTP status, content coding, parser crash).
A skip reason says exactly what was seen (``empty_body``: the stored payload is empty;
``not_html``: neither the Content-Type nor the body says HTML); a record lost to a bug
is a failure (``processing_error``), never a skip. Warnings (quirks read past: junk
header lines, a ``chunked`` body stored de-chunked, a file cut off inside the record,
invalid bytes in the declared charset, several records in one gzip member) are counted
separately; the record itself is kept.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterator

from lib.html.charset import decode_html
from lib.html.content import extract
from lib.pages import directives, robotstxt, weburls
from lib.pages.exclusions import NONE as NO_EXCLUSIONS
from lib.pages.exclusions import Exclusions
from lib.preprocess import langid
from lib.preprocess.enrich import Enrichment, PageInput
from lib.warc.http import HttpError, HttpResponse, parse_response
from lib.warc.records import BadRecord, Record, iter_records, sha1_digest

HTML_TYPES = ("text/html", "application/xhtml+xml")
MAX_REPORTED_PER_FILE = 1000


@dataclass
class FileStats:
    file: str
    bytes: int = 0
    seconds: float = 0.0
    read: int = 0
    kept: int = 0
    skipped: Counter = field(default_factory=Counter)
    failed: Counter = field(default_factory=Counter)
    warnings: Counter = field(default_factory=Counter)
    unreported: int = 0
    html_seen: int = 0  # parsed 2xx HTML responses with a non-empty payload: what a day should keep
    empty_text: int = 0  # kept pages whose main text is empty although their <body> has text
    directives: Counter = field(default_factory=Counter)  # kept pages by robots directive / AI opt-out

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "read": self.read,
            "kept": self.kept,
            "html_seen": self.html_seen,
            "empty_text": self.empty_text,
            "skipped": sum(self.skipped.values()),
            "failed": sum(self.failed.values()),
            "skipped_by_reason": dict(self.skipped),
            "failed_by_reason": dict(self.failed),
            "warnings_by_reason": dict(self.warnings),
            "pages_by_directive": dict(self.directives),
            "errors_not_reported": self.unreported,
        }


def _is_binary(body: bytes) -> bool:
    head = body[:2048]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False  # UTF-16 text has NULs
    if b"\x00" in head:
        return True
    ctrl = len(head) - len(head.translate(None, _CONTROL_BYTES))  # counted in C
    return len(head) > 0 and ctrl / len(head) > 0.05


_CONTROL_BYTES = bytes(b for b in range(32) if b < 9 or 13 < b < 32 and b != 27)


_HTML_START = re.compile(
    rb"\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|title|meta)[\s>/]", re.I | re.S
)


def _looks_html(body: bytes) -> bool:
    """Whether a body starts like an HTML document (BOM, XML declaration and comments allowed)."""
    head = body[:1024]
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    return _HTML_START.match(head) is not None


def _mime(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def content_type_other(content_type: str | None) -> list[tuple[str, str]] | None:
    """The Content-Type parameters besides charset, as (name lowercased, value unquoted) pairs,
    None without any (Resilipipe's ``content_type_other``)."""
    if not content_type or ";" not in content_type:
        return None
    out = []
    for part in content_type.split(";")[1:]:
        name, eq, value = part.partition("=")
        name = name.strip().lower()
        if not eq or not name or name == "charset":
            continue
        out.append((name, value.strip().strip('"').strip("'")))
    return out or None


def _is_web_url(url: str) -> bool:
    return url[:8].lower().startswith(("http://", "https://"))


class FileProcessor:
    """Processes one archive stream; iterate :meth:`pages`, then read ``stats``,
    ``captures`` and ``errors``."""

    def __init__(
        self,
        file: str,
        max_page_bytes: int = 10 << 20,
        name: str | None = None,
        exclusions: Exclusions = NO_EXCLUSIONS,
        enrich: Enrichment | None = None,
        main_html: bool = False,
        robots_agents: tuple[str, ...] = directives.DEFAULT_AGENTS,
        captures_only: bool = False,
    ):
        self.file = file
        # the captures alone (a file registered between nights, lib.catalogue.register): the same
        # capture rows as a full run, without the cost of building page rows
        self.captures_only = captures_only
        # the crawler names whose metas and X-Robots-Tag lines apply (lib.pages.directives)
        self.robots_agents = tuple(a.lower() for a in robots_agents)
        self.meta_names = frozenset((*self.robots_agents, *directives.DEFAULT_AGENTS, *directives.TDM_META))
        self.enrich = enrich  # the run's enrichment plugins (lib.preprocess.enrich), if any
        self.main_html = main_html  # the opt-in main_html column, written in the walk that writes the text
        self.exclusions = exclusions  # records of excluded URLs are skipped ('excluded'), captures included
        self.name = name  # what the archive is wherever it is read from (ARC ids); default file
        self.max_page_bytes = max_page_bytes
        self.stats = FileStats(file)
        self.captures: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []

    # ---------------------------------------------------------------- reporting
    def _report(self, kind: str, offset: int | None, reason: str, detail: str) -> None:
        if len(self.errors) < MAX_REPORTED_PER_FILE:
            self.errors.append(
                {"file": self.file, "offset": offset, "kind": kind, "reason": reason, "detail": detail[:500]}
            )
        else:
            self.stats.unreported += 1

    def _skip(self, reason: str, rec: Record | None = None, detail: str | None = None) -> None:
        self.stats.skipped[reason] += 1
        if detail is not None and rec is not None:
            self._report("skipped", rec.offset, reason, detail)

    def _fail(self, offset: int | None, reason: str, detail: str) -> None:
        self.stats.failed[reason] += 1
        self._report("failed", offset, reason, detail)

    def _warn(self, offset: int | None, reason: str, detail: str) -> None:
        self.stats.warnings[reason] += 1
        self._report("warning", offset, reason, detail)

    # ---------------------------------------------------------------- main loop
    def pages(self, stream: BinaryIO, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        """The page rows of the archive ``stream``, or of its byte range from ``start`` (a gzip
        member that begins a record; ``stream`` positioned there) to ``stop``
        (:func:`lib.warc.records.iter_records`)."""
        t0 = time.perf_counter()
        cap = self.max_page_bytes + (64 << 10)
        try:
            for item in iter_records(stream, self.file, max_content=cap, name=self.name, start=start, stop=stop):
                self.stats.read += 1
                if isinstance(item, BadRecord):
                    self._fail(item.offset, item.reason, item.detail)
                    continue
                if self.exclusions and self.exclusions.match(item.url):
                    self._skip("excluded")  # counted, never reported: the report would republish the URL
                    continue
                try:
                    row = self._record(item)
                except Exception as e:  # a parser crash on one page must not lose the file
                    self._fail(item.offset, "processing_error", f"{type(e).__name__}: {e}")
                    continue
                if row is not None:
                    self.stats.kept += 1
                    yield row
        except OSError as e:
            self.stats.read += 1
            self._fail(None, "read_error", f"{type(e).__name__}: {e}")
        finally:
            self.stats.seconds = time.perf_counter() - t0

    def _digest(self, rec: Record, resp=None) -> str | None:
        """WARC-Payload-Digest, or for archives without one (ARC) the same digest computed here."""
        d = rec.headers.get("warc-payload-digest")
        if d or resp is None or rec.oversized:
            return d
        return sha1_digest(rec.content[resp.payload_start :])

    def _capture(self, rec: Record, status: int | None, mime: str, kept: bool, resp=None) -> None:
        robots = None
        if resp is not None and rec.url.endswith("robots.txt") and robotstxt.is_robots_url(rec.url):
            # the index reads the day's rules from these; a redirect's target in place of its body
            location = resp.headers.get("location") if status is not None and 300 <= status < 400 else None
            robots = location.encode() if location else resp.body[: robotstxt.MAX_BYTES]
        self.captures.append(
            {
                "url": rec.url,
                "warc_date": rec.date,
                "record_type": rec.rec_type,
                "record_id": rec.record_id.strip("<>"),
                "http_status": status,
                "mime_type": mime,
                "payload_digest": self._digest(rec, resp),
                "kept": kept,
                "warc_file": self.file,
                "warc_offset": rec.offset,
                "warc_length": rec.length,
                "robots_txt": robots,
            }
        )

    def _record(self, rec: Record) -> dict[str, Any] | None:
        for reason, detail in rec.warnings:
            self._warn(rec.offset, reason, detail)
        if rec.rec_type == "resource":
            return self._resource(rec)
        if rec.rec_type != "response":
            if rec.rec_type == "revisit":  # the HTTP head of the revisited response, when it has one
                status, mime = None, ""
                try:
                    head = parse_response(rec.content + b"\r\n\r\n")
                    status, mime = head.status, head.mime_type
                except HttpError:
                    pass
                self._capture(rec, status, mime, False)
            self._skip(f"not_response:{rec.rec_type or 'unknown'}")
            return None
        if not rec.url:
            self._fail(rec.offset, "missing_target_uri", "response record without WARC-Target-URI")
            return None
        if not self._is_http(rec):
            self._capture(rec, None, _mime(rec.headers.get("content-type", "")), False)
            self._skip("not_http")
            return None
        if rec.oversized:
            self._capture(rec, None, "", False)
            self._skip("too_large", rec, f"record block of {rec.content_length} bytes exceeds {self.max_page_bytes}")
            return None
        try:
            resp = parse_response(rec.content)
        except HttpError as e:
            self._fail(rec.offset, e.reason, e.detail)
            return None
        for reason, detail in resp.warnings:
            self._warn(rec.offset, reason, detail)
        mime = _mime(resp.mime_type or (rec.headers.get("content-type", "") if rec.fmt == "arc" else ""))
        return self._candidate(rec, resp, mime, resp.status, len(rec.content) > resp.payload_start)

    @staticmethod
    def _is_http(rec: Record) -> bool:
        """Whether a response record holds an HTTP response (status line, headers, body)."""
        if rec.fmt == "arc":  # ARC: dns:, filedesc, ... hold no HTTP head
            return rec.content[:5].upper() == b"HTTP/"
        if not _is_web_url(rec.url):  # dns:, whois:, ftp: responses
            return False
        ctype = rec.headers.get("content-type", "").lower()
        return ctype.startswith("application/http") or rec.content[:64].lstrip()[:5].upper() == b"HTTP/"

    def _resource(self, rec: Record) -> dict[str, Any] | None:
        """A ``resource`` record of HTML with a web URL (e.g. warcit's archive of a site's
        files) is a page; other resources (screenshots, ``urn:`` texts) are captures only."""
        mime = _mime(rec.headers.get("content-type", ""))
        if not _is_web_url(rec.url):
            self._capture(rec, None, mime, False)
            self._skip("not_response:resource")
            return None
        if rec.oversized:
            self._capture(rec, None, mime, False)
            self._skip("too_large", rec, f"record block of {rec.content_length} bytes exceeds {self.max_page_bytes}")
            return None
        resp = HttpResponse(0, {"content-type": rec.headers.get("content-type", "")}, rec.content)
        return self._candidate(rec, resp, mime, None, bool(rec.content))

    def _candidate(
        self, rec: Record, resp: HttpResponse, mime: str, status: int | None, stored: bool
    ) -> dict[str, Any] | None:
        """Keep or skip a readable response/resource; ``stored``: its payload has bytes."""
        html = mime in HTML_TYPES or _looks_html(resp.body)
        ok_status = status is None or 200 <= status < 300
        if html and ok_status and resp.body.strip():
            self.stats.html_seen += 1
        skip = self._skip_reason(resp.body, status, html, stored)
        self._capture(rec, status, mime, skip is None, resp)
        if skip is None and self.captures_only:
            return None
        if skip is not None:
            reason, detail = skip
            self._skip(reason, rec, detail)
            return None
        return self._page(rec, resp, mime, status)

    def _skip_reason(self, body: bytes, status: int | None, html: bool, stored: bool) -> tuple[str, str | None] | None:
        """(reason, report detail or None) why a readable response is not a page; None to keep it."""
        if not html:
            return "not_html", None
        if status is not None and not 200 <= status < 300:
            return f"http_status_{status // 100}xx", None
        if not stored:
            return "empty_body", None
        if not body:
            return "empty_after_decoding", "the payload decodes to nothing"
        if not body.strip():
            return "blank_body", None
        if len(body) > self.max_page_bytes:
            return "too_large", f"body of {len(body)} bytes exceeds {self.max_page_bytes}"
        if _is_binary(body):
            return "binary_payload", f"HTML body with binary bytes: {body[:16]!r}"
        return None

    def _page(self, rec: Record, resp: HttpResponse, mime: str, status: int | None) -> dict[str, Any]:
        dec = decode_html(resp.body, resp.charset)
        if dec.replaced:
            self._warn(
                rec.offset, "invalid_bytes_in_charset", f"invalid bytes for {dec.charset} ({dec.source}): replaced"
            )
        utf8 = resp.body if dec.charset == "utf-8" and dec.source != "bom" and not dec.replaced else None
        # the body as it is, if it is dec.text in UTF-8
        page = extract(dec.text, rec.url, utf8, self.main_html, self.meta_names)
        signals = directives.page_signals(page.metas, resp.headers, self.robots_agents)
        if signals.robots:
            for d in signals.robots:
                self.stats.directives[d] += 1
            if "nofollow" in signals.robots:  # the page's own nofollow: every link carries it
                page.links = [(u, a, directives.link_rel(r, True)) for u, a, r in page.links]
        if not signals.ows_genai:
            self.stats.directives["genai_opt_out"] += 1
        if not page.text and page.body_chars:
            self.stats.empty_text += 1
        lang, score = langid.identify(f"{page.title}\n{page.text}")
        row: dict[str, Any] = {
            "id": weburls.url_id(rec.url),
            "record_id": rec.record_id.strip("<>"),
            "url": rec.url,
            **weburls.url_parts(rec.url),
            "title": page.title,
            "description": page.description,
            "plain_text": page.text,
            "language": lang,
            "language_score": score,
            "html_lang": page.html_lang,
            "canonical_url": page.canonical_url,
            "http_status": status,
            "mime_type": mime,
            "charset": dec.charset,
            "charset_source": dec.source,
            "http_server": resp.headers.get("server"),
            "content_length": len(resp.body),
            "payload_digest": self._digest(rec, resp),
            "warc_date": rec.date,
            "warc_ip": rec.headers.get("warc-ip-address"),
            "warc_file": self.file,
            "warc_offset": rec.offset,
            "warc_length": rec.length,
            "outgoing_links": page.links,  # (url, anchor_text, rel): Arrow takes a tuple for a struct
            **page.embeds,  # image_links, video_links, iframes, script_links, stylesheet_links
            "valid": not dec.replaced and bool(page.text),
            "truncated": rec.truncated,
            "json_ld": page.json_ld,
            "content_type_other": content_type_other(resp.headers.get("content-type")),
            "ows_headers": [(k, v) for k, v in rec.headers.items() if k.startswith("ows.")] or None,
            **signals.row(),
        }
        if self.main_html:
            row["main_html"] = page.main_html
        if self.enrich:
            row.update(self.enrich.run(PageInput(rec.url, dec.text, page.text, resp.headers, rec.headers)))
        return row


def process_file(stream: BinaryIO, file: str, size: int = 0, max_page_bytes: int = 10 << 20):
    """Convenience: all pages of one file as a list, plus the processor (stats, captures, errors)."""
    proc = FileProcessor(file, max_page_bytes)
    rows = list(proc.pages(stream))
    proc.stats.bytes = size
    return rows, proc
