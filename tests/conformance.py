"""Differential conformance: our archive reader against warcio (and FastWARC), record by record.

Plain functions, no Spark. For every archive under ``tests/data/conformance/`` (and the shared
real-crawl samples beside the project, when present) :func:`compare_file` builds three views of
the file's records and lists every disagreement between ours and the reference:

- warcio: ``ArchiveIterator(f, arc2warc=True)``, ``get_record_offset()``,
  ``content_stream().read()`` (chunked and gzip/deflate/br undone);
- FastWARC (WARC only): ``ArchiveIterator(f, parse_http=True, auto_decode="all")``; it is the
  reference for records warcio does not yield (e.g. after warcio gave up, or .lz4/.zst files);
- ours: ``iter_records`` + ``parse_response`` per record, and ``FileProcessor`` for the outcome
  (kept / skipped / failed).

Records are matched by offset (gzip member or plain record), then WARC-Record-ID, then in order
by (type, URI). Every disagreement gets a kind; :data:`KNOWN_DIFFERENCES` lists the reviewed
ones where the reference is wrong or the comparison is not meaningful.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import io
import pathlib
from collections import Counter
from dataclasses import dataclass, field

from lib.preprocess.archive_pages import HTML_TYPES, FileProcessor, _is_binary, _looks_html
from lib.warc.http import HttpError, parse_response
from lib.warc.records import BadRecord, iter_records

HERE = pathlib.Path(__file__).resolve().parent
CORPORA = {
    "conformance": HERE / "data" / "conformance",
    "shared": HERE.parent.parent / "shared" / "corpus",  # real crawl samples beside the project
}
NOT_ARCHIVES = ("*.md", "*/LICENSE", "LICENSE", "*.cdx")
MAX_PAGE_BYTES = 10 << 20

# (file glob, offset or None for any, kind, why we are right / why the comparison is meaningless).
# Only genuine reference bugs or non-comparable cases belong here, never a bug of ours.
WARCIO_MISREADS = (
    "after a record whose length is missing or wrong, warcio reads lines of its block as new "
    "(ARC-style) records with header lines for URLs; FastWARC stops there, we count the damage"
)
KNOWN_DIFFERENCES: list[tuple[str, int | None, str, str]] = [
    ("conformance/ipwb/broken.warc", 3331, "record_missing", WARCIO_MISREADS),
    ("conformance/ipwb/broken.warc", 3384, "record_missing", WARCIO_MISREADS),
    ("conformance/jwat/invalid-warcfile-fields-empty.warc", 198, "record_missing", WARCIO_MISREADS),
    ("conformance/jwat/invalid-warcfile-fields-invalidformat.warc", 276, "record_missing", WARCIO_MISREADS),
    (
        "conformance/jwat/invalid-warcfile-record-then-garbage.warc",
        1135,
        "record_missing",
        "trailing garbage ('The monkeys are ...') that warcio reads as an ARC record; we count it failed",
    ),
    (
        "conformance/jwat/invalid-warcfile-fields-*.warc",
        0,
        "record_missing",
        "empty/non-numeric Content-Length: the record cannot be delimited (ISO 28500 makes it mandatory); "
        "warcio takes it as 0 and yields a record without type or URI, we count it failed",
    ),
    (
        "conformance/jwat/invalid-warcfile-lonely-monkeys.warc",
        0,
        "record_missing",
        "a record without Content-Length (type 'monkeys'): warcio yields it, we count it failed",
    ),
    (
        "conformance/webarchive-discovery/IAH-20080430204825-00000-blackbook-truncated.arc",
        None,
        "extra_in_ours",
        "warcio misreads this plain ARC after its ARC v1.1 filedesc and stops; we read the same 8 records "
        "that warcio reads from the .arc.gz of the same crawl",
    ),
    (
        "conformance/webarchive-discovery/IAH-20080430204825-00000-blackbook-truncated.arc",
        None,
        "damage_unreported",
        "no damage: warcio's misreading (see extra_in_ours above), the .arc.gz twin reads cleanly",
    ),
    # -- HTTP blocks without a status code: there is no page to keep, we count the damage
    (
        "conformance/ipwb/broken.warc",
        3058,
        "lost_by_us",
        "status line 'HTTP/1.' has no code: warcio keeps status None (never a page either); we count http_malformed",
    ),
    (
        "conformance/warcprocessor/en0000-test.warc",
        585,
        "lost_by_us",
        "an application/http response whose block is plain text ('Hola mundo ...'): no HTTP head at all; "
        "warcio's status is None (never a page); we count http_malformed",
    ),
    (
        "conformance/webarchive-commons/link-extraction-test.warc",
        10562,
        "lost_by_us",
        "a response record with neither WARC-Target-URI nor WARC-Record-ID: a page without a URL can be neither "
        "indexed nor replayed; we count missing_target_uri as a failure",
    ),
    # -- broken chunking: the rule is 'de-chunk only when the chunk structure holds'
    (
        "conformance/warcat/bad_http_chunked_content.warc",
        0,
        "body_differs",
        "chunk of 3 declared, 2 bytes and a line end present, no last chunk: the structure does not hold, so we keep "
        "the body as stored (with a chunked_not_chunked warning); warcio cuts 3 bytes including the CR",
    ),
    (
        "conformance/warcio/example-wrong-chunks.warc.gz",
        0,
        "body_differs",
        "Transfer-Encoding: chunked on a body that is not chunked (warcio's own test of wrong chunks): warcio in its "
        "default mode returns nothing, we keep the 1270-byte page as stored with a chunked_not_chunked warning",
    ),
    # -- headers so broken that warcio invents records; we count the damage and resynchronise
    (
        "conformance/jwat/test-arc-1.0-invalid-fields.arc",
        0,
        "record_missing",
        "filedesc header with junk fields (IP 'a.b.c.d', date 'blue_monday', length 'one'): warcio yields a warcinfo "
        "of length 0; we count malformed_arc_header and read the response after it",
    ),
    (
        "conformance/warcio/bad.arc",
        None,
        "record_missing",
        "every ARC header declares length -1: warcio takes it as 0 and yields empty records; we count "
        "malformed_arc_header (no HTTP in any of them: nothing that could be a page)",
    ),
    (
        "conformance/warcio/bad.arc",
        202,
        "lost_by_us",
        "a line of the -1-length 'record' above that warcio reads as an ARC record with an empty HTTP head",
    ),
    (
        "conformance/webarchive-go/invalid-warcheaderversion-22.warc",
        0,
        "record_missing",
        "the 29-byte file ends inside the WARC header: warcio yields a resource without length; we count "
        "truncated_record",
    ),
    (
        "conformance/webarchive-go/invalid-warcrecord-1.warc",
        0,
        "offset_differs",
        "the first record has no Content-Length: we count it failed at 0 and resynchronise on the next 'WARC/' line "
        "(194), which carries the same record id",
    ),
    (
        "conformance/webarchive-go/invalid-warcrecord-[13].warc",
        None,
        "extra_in_ours",
        "after a record without Content-Length warcio stops; we resynchronise on the next 'WARC/' line and read "
        "the valid records that follow",
    ),
    (
        "shared/aut/badexample.arc.gz",
        0,
        "record_missing",
        "the whole ARC is one gzip stream (not a member per record): warcio refuses such files; we read the records "
        "in it (without byte ranges, multi_record_member) and count the damage where a length overruns",
    ),
    (
        "shared/aut/badexample.arc.gz",
        None,
        "extra_in_ours",
        "the records in the single gzip stream (see record_missing above), read without byte ranges",
    ),
]

# Deliberately broken test files (invalid-*, bad*, broken*, truncated, clipped, corrupted, ...): their
# agreement is reported apart, because what a reader does with garbage is arbitrary; there the
# suite checks that we keep every good record and count the damage.
DAMAGED = (
    "*invalid*",
    "*bad*",
    "*broken*",
    "*trunc*",
    "*clipped*",
    "*corrupt*",
    "*garbage*",
    "*wrong*",
    "*missing*",
    "*Evil*",
    "*monkeys*",
)


@dataclass
class View:
    """One record as one reader sees it."""

    offset: int | None
    record_id: str
    rec_type: str
    uri: str
    http: bool = False  # an HTTP response/revisit header block was parsed
    status: int | None = None
    mime: str | None = None  # lowercased, no parameters
    body: bytes | None = None  # decoded HTTP body (response records only)
    error: str | None = None  # why this reader failed the record
    outcome: str | None = None  # ours: kept / skipped / failed
    reader: str = ""


@dataclass
class FileViews:
    records: list[View] = field(default_factory=list)
    stop: str | None = None  # where/why the reader gave up on the file
    #: Content-Encodings the file's responses use that the reference reader has no decoder for
    undecodable: set[str] = field(default_factory=set)


class ReferenceCannotDecode(AssertionError):
    """The reference reader lacks a decoder the archive needs: a broken environment, not a finding."""


@dataclass
class Difference:
    file: str
    offset: int | None
    kind: str
    ours: object
    ref: object
    note: str = ""

    def __str__(self) -> str:
        note = f" [{self.note}]" if self.note else ""
        return f"{self.file} @{self.offset} {self.kind}: ours={_short(self.ours)} ref={_short(self.ref)}{note}"


def _short(v: object, n: int = 90) -> str:
    s = repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def _mime(value: str | None) -> str | None:
    return value.split(";", 1)[0].strip().lower() if value is not None else None


def _uri(value: str | None) -> str:
    return (value or "").strip().strip("<>").strip()


def _same_uri(a: str, b: str) -> bool:
    """warcio percent-encodes spaces in target URIs ("Replacing spaces in invalid WARC-Target-URI"),
    and its arc2warc turns an ARC's ``filedesc://`` header into a warcinfo record without a target
    URI: the same record, a different rendering."""
    if a.startswith("filedesc://") and not b:
        return True
    return a.replace("%20", " ").strip() == b.replace("%20", " ").strip()


def _type(value: str | None) -> str:
    return (value or "").strip().lower()


def _rid(value: str | None) -> str:
    return (value or "").strip().strip("<>")


# ------------------------------------------------------------------------------------ readers
#: the HTTP content codings our reader undoes; the reference must undo them too, or every body differs
DECODED_ENCODINGS = {"gzip": "gzip", "x-gzip": "gzip", "deflate": "deflate", "br": "br"}


def reference_cannot_decode(path: pathlib.Path, undecodable: set[str]) -> str:
    """The message when warcio, installed without a decoder, would pass encoded bodies through raw."""
    import warcio

    hint = " (warcio decodes br only through brotlicffi>=1.2.1.0 since 1.8.2)" if "br" in undecodable else ""
    return (
        f"{path.name}: the reference reader warcio {getattr(warcio, '__version__', '?')} cannot decode "
        f"Content-Encoding {', '.join(sorted(undecodable))} that this file's responses use{hint}; its decoder "
        "is missing from the environment: install the test extra as requirements/lock.txt pins it (make setup)"
    )


def warcio_view(path: pathlib.Path) -> FileViews:
    from warcio.archiveiterator import ArchiveIterator
    from warcio.bufferedreaders import BufferedReader

    supported = set(BufferedReader.get_supported_decompressors())
    out = FileViews()
    with open(path, "rb") as f, contextlib.redirect_stderr(io.StringIO()):  # its per-record warnings
        it = ArchiveIterator(f, arc2warc=True)
        try:
            for rec in it:
                h = rec.rec_headers
                # get_record_offset() reads the record to its end: take the body first
                v = View(
                    None,
                    _rid(h.get_header("WARC-Record-ID")),
                    _type(rec.rec_type),
                    _uri(h.get_header("WARC-Target-URI")),
                    reader="warcio",
                )
                if v.rec_type in ("response", "revisit") and rec.http_headers is not None:
                    v.http = True
                    try:
                        v.status = int(rec.http_headers.get_statuscode())
                    except (TypeError, ValueError):
                        v.status = None
                    v.mime = _mime(rec.http_headers.get_header("Content-Type"))
                    coding = (rec.http_headers.get_header("Content-Encoding") or "").strip().lower()
                    if coding in DECODED_ENCODINGS and DECODED_ENCODINGS[coding] not in supported:
                        out.undecodable.add(coding)
                if v.rec_type == "response" and v.http or v.rec_type == "resource":
                    try:
                        v.body = rec.content_stream().read()
                    except Exception as e:  # the reference's own failure is data
                        v.error = f"{type(e).__name__}: {e}"[:200]
                    if v.rec_type == "resource":
                        v.mime = _mime(h.get_header("Content-Type"))
                v.offset = it.get_record_offset()
                out.records.append(v)
        except Exception as e:  # a crash of our reader is a finding, not the suite's end
            last = out.records[-1].offset if out.records else None
            out.stop = f"{type(e).__name__} after the record at {last}: {e}"[:300]
    return out


def fastwarc_view(path: pathlib.Path) -> FileViews:
    from fastwarc.warc import ArchiveIterator

    out = FileViews()
    try:
        with open(path, "rb") as f:
            for rec in ArchiveIterator(f, parse_http=True, auto_decode="all"):
                rtype = _type(str(rec.record_type).rsplit(".", 1)[-1])
                v = View(
                    rec.stream_pos,
                    _rid(rec.record_id),
                    rtype,
                    _uri(rec.headers.get("WARC-Target-URI")),
                    reader="fastwarc",
                )
                if rtype in ("response", "revisit") and rec.is_http:
                    v.http = True
                    v.status = rec.http_headers.status_code
                    v.mime = _mime(rec.http_headers.get("Content-Type"))
                    try:
                        body = rec.reader.read()
                        v.body = body if rtype == "response" else None
                    except Exception as e:
                        v.error = f"{type(e).__name__}: {e}"[:200]
                out.records.append(v)
    except Exception as e:
        out.stop = f"{type(e).__name__}: {e}"[:300]
    return out


def our_view(path: pathlib.Path, name: str) -> tuple[FileViews, FileProcessor]:
    proc = FileProcessor(name, MAX_PAGE_BYTES)
    with open(path, "rb") as f:
        for _ in proc.pages(io.BufferedReader(f)):
            pass
    kept = {(c["record_id"], c["warc_offset"]) for c in proc.captures if c["kept"]}  # ids repeat in test files
    failed_at = {e["offset"]: e["reason"] for e in proc.errors if e["kind"] == "failed"}
    out = FileViews()
    with open(path, "rb") as f:
        for item in iter_records(io.BufferedReader(f), name, max_content=MAX_PAGE_BYTES + (64 << 10)):
            if isinstance(item, BadRecord):
                out.records.append(
                    View(
                        item.offset,
                        "",
                        "",
                        "",
                        error=f"{item.reason}: {item.detail}"[:200],
                        outcome="failed",
                        reader="ours",
                    )
                )
                continue
            v = View(item.offset, _rid(item.record_id), _type(item.rec_type), _uri(item.url), reader="ours")
            is_http = item.rec_type == "revisit" or FileProcessor._is_http(item)
            if item.rec_type in ("response", "revisit") and is_http and not item.oversized:
                block = item.content if item.rec_type == "response" else item.content + b"\r\n\r\n"
                try:
                    resp = parse_response(block)
                    v.http, v.status, v.mime = True, resp.status, _mime(resp.mime_type)
                    if item.rec_type == "response":
                        v.body = resp.body
                except HttpError as e:
                    v.error = f"{e.reason}: {e.detail}"[:200]
            if (v.record_id, item.offset) in kept:
                v.outcome = "kept"
            elif item.rec_type == "response" and (v.error or item.offset in failed_at):
                v.outcome, v.error = "failed", v.error or failed_at[item.offset]
            else:
                v.outcome = "skipped"
            out.records.append(v)
    return out, proc


def expected_outcome(v: View) -> str:
    """What our pipeline should do with a record the reference read as ``v`` (the README's rule:
    2xx responses, and ``resource`` records with a web URL, whose Content-Type or body says HTML)."""
    if v.rec_type == "resource":
        if v.body is None or not v.uri.lower().startswith(("http://", "https://")):
            return "skipped"
    elif v.rec_type != "response" or not v.http or v.body is None or v.status is None:
        return "skipped"
    html = v.mime in HTML_TYPES or _looks_html(v.body)
    ok = html and (v.status is None or 200 <= v.status < 300) and v.body.strip() and len(v.body) <= MAX_PAGE_BYTES
    return "kept" if ok and not _is_binary(v.body) else "skipped"


# ------------------------------------------------------------------------------------ matching
def match(ref: list[View], ours: list[View]) -> tuple[list[tuple[View, View]], list[View], list[View]]:
    """Pair records: unique offset, then record id, then in order by (type, URI)."""
    pairs: list[tuple[View, View]] = []
    left, right = list(ref), [o for o in ours if o.rec_type or o.error is None]
    bad = [o for o in ours if not o.rec_type and o.error is not None]  # BadRecords: matched by offset only

    def take(key):
        nonlocal left, right
        rk, ok = Counter(key(r) for r in left), Counter(key(o) for o in right)
        index = {key(o): o for o in right if key(o) is not None and ok[key(o)] == 1}
        used = set()
        keep = []
        for r in left:
            k = key(r)
            if k is not None and rk[k] == 1 and k in index:
                pairs.append((r, index[k]))
                used.add(id(index[k]))
            else:
                keep.append(r)
        left, right = keep, [o for o in right if id(o) not in used]

    take(lambda v: v.offset)
    take(lambda v: v.record_id or None)
    keep = []
    for r in left:
        o = next((o for o in right if (o.rec_type, o.uri) == (r.rec_type, r.uri)), None)
        if o is None:
            keep.append(r)
        else:
            pairs.append((r, o))
            right.remove(o)
    left = keep
    # a reference record we lost may sit where we report damage
    bad_at = {b.offset: b for b in bad}
    for r in list(left):
        if r.offset in bad_at:
            pairs.append((r, bad_at.pop(r.offset)))
            left.remove(r)
    return pairs, left, right + list(bad_at.values())


# ------------------------------------------------------------------------------------ comparing
def _compare_pair(file: str, r: View, o: View, fw: dict) -> list[Difference]:
    off = r.offset if r.offset is not None else o.offset

    def diff(kind, ours, ref):
        other = fw.get(r.offset) or fw.get(r.record_id)
        note = ""
        if other is not None and r.reader == "warcio":
            theirs = {
                "status_differs": other.status,
                "mime_differs": other.mime,
                "body_differs": other.body,
                "uri_differs": other.uri,
                "type_differs": other.rec_type,
            }.get(kind, "n/a")
            if theirs != "n/a":
                note = (
                    "fastwarc agrees with ours"
                    if theirs == ours
                    else "fastwarc agrees with warcio"
                    if theirs == ref
                    else ""
                )
        return Difference(file, off, kind, ours, ref, note)

    if not o.rec_type:  # we report damage where the reference read a record
        kind = "lost_by_us" if r.http and r.rec_type == "response" else "record_missing"
        return [diff(kind, o.error, f"{r.rec_type} {r.uri} status={r.status}")]
    out = []
    if None not in (o.offset, r.offset) and o.offset != r.offset:
        out.append(diff("offset_differs", o.offset, r.offset))
    if o.rec_type != r.rec_type:
        out.append(diff("type_differs", o.rec_type, r.rec_type))
    if not _same_uri(o.uri, r.uri):
        out.append(diff("uri_differs", o.uri, r.uri))
    if (
        r.http
        and r.rec_type == "response"
        and (not o.http or o.outcome == "failed" and expected_outcome(r) != "failed")
    ):
        return out + [diff("lost_by_us", o.error or "not read as HTTP", f"status={r.status} mime={r.mime}")]
    if r.http and o.http:
        if o.status != r.status:
            out.append(diff("status_differs", o.status, r.status))
        if (o.mime or None) != (r.mime or None):
            out.append(diff("mime_differs", o.mime, r.mime))
        if r.body is not None and o.body is not None and o.body != r.body:
            out.append(
                diff("body_differs", f"{len(o.body)} bytes {o.body[:40]!r}", f"{len(r.body)} bytes {r.body[:40]!r}")
            )
    if r.reader == "warcio" and r.error is None or r.reader == "fastwarc" and r.error is None:
        exp = expected_outcome(r)
        if o.outcome != exp and not out:
            out.append(diff("outcome_differs", o.outcome, exp))
    return out


def compare_views(file: str, wio: FileViews, fwv: FileViews, ours: FileViews) -> tuple[list[Difference], int]:
    """All differences of one file and the number of reference records compared."""
    ref = list(wio.records)
    seen_off = {r.offset for r in ref}
    seen_id = {r.record_id for r in ref if r.record_id}
    # FastWARC is the reference for records warcio never yielded
    ref += [r for r in fwv.records if r.offset not in seen_off and not (r.record_id and r.record_id in seen_id)]
    fw_index: dict = {}
    for r in fwv.records:
        fw_index.setdefault(r.offset, r)
        if r.record_id:
            fw_index.setdefault(r.record_id, r)
    pairs, lost, extra = match(ref, ours.records)
    diffs: list[Difference] = []
    for r, o in pairs:
        diffs += _compare_pair(file, r, o, fw_index)
    for r in lost:
        kind = "lost_by_us" if r.http and r.rec_type == "response" else "record_missing"
        diffs.append(Difference(file, r.offset, kind, None, f"{r.rec_type} {r.uri} status={r.status}"))
    for o in extra:
        if o.rec_type:
            diffs.append(Difference(file, o.offset, "extra_in_ours", f"{o.rec_type} {o.uri} status={o.status}", None))
        elif not (wio.stop or fwv.stop or any(r.error for r in ref)):
            diffs.append(Difference(file, o.offset, "failed_only_in_ours", o.error, "read cleanly"))
    ref_damaged = (wio.stop is not None and (fwv.stop is not None or not fwv.records)) or any(r.error for r in ref)
    if ref_damaged and not any(o.outcome == "failed" for o in ours.records):
        diffs.append(Difference(file, None, "damage_unreported", "no failure counted", wio.stop or fwv.stop))
    return diffs, len(ref)


def known_reason(d: Difference) -> str | None:
    for pattern, offset, kind, reason in KNOWN_DIFFERENCES:
        if kind == d.kind and (offset is None or offset == d.offset) and fnmatch.fnmatch(d.file, pattern):
            return reason
    return None


def archive_files() -> list[tuple[str, pathlib.Path]]:
    """(name, path) of every archive in the corpora that exist, name = 'corpus/relative/path'."""
    out = []
    for corpus, root in CORPORA.items():
        if not root.is_dir():
            continue
        for p in sorted(root.rglob("*")):
            rel = p.relative_to(root).as_posix()
            if p.is_file() and not any(fnmatch.fnmatch(rel, g) for g in NOT_ARCHIVES):
                out.append((f"{corpus}/{rel}", p))
    return out


@dataclass
class FileResult:
    name: str
    compared: int
    differences: list[Difference]
    stats: dict

    @property
    def unexpected(self) -> list[Difference]:
        return [d for d in self.differences if known_reason(d) is None]


@functools.lru_cache(maxsize=None)
def compare_file(name: str, path: pathlib.Path) -> FileResult:
    wio, fwv = warcio_view(path), fastwarc_view(path)
    if wio.undecodable:
        raise ReferenceCannotDecode(reference_cannot_decode(path, wio.undecodable))
    try:
        ours, proc = our_view(path, path.name)
    except Exception as e:
        crash = Difference(name, None, "ours_crashed", f"{type(e).__name__}: {e}"[:200], wio.stop or "read cleanly")
        return FileResult(name, len(wio.records), [crash], {})
    diffs, n = compare_views(name, wio, fwv, ours)
    return FileResult(name, n, diffs, proc.stats.as_dict())


def is_damaged(name: str) -> bool:
    return any(fnmatch.fnmatch(name.rsplit("/", 1)[-1], g) for g in DAMAGED)


def _line(label: str, results: list[FileResult]) -> str:
    compared = sum(r.compared for r in results)
    per_record = ("damage_unreported", "extra_in_ours", "failed_only_in_ours")
    bad_records = sum(len({d.offset for d in r.differences if d.kind not in per_record}) for r in results)
    kinds = Counter(d.kind for r in results for d in r.differences)
    known = sum(1 for r in results for d in r.differences if known_reason(d))
    agree = 100.0 * max(0, compared - bad_records) / compared if compared else 100.0
    by_kind = ", ".join(f"{k}={n}" for k, n in kinds.most_common()) or "none"
    return (
        f"{label}: {len(results)} files, {compared} reference records, {agree:.2f}% agreement; "
        f"{sum(kinds.values())} differences ({known} known): {by_kind}"
    )


def figure(results: list[FileResult]) -> str:
    """The headline: files, records compared, agreement, differences by kind (all files, then the
    producers' real archives and the deliberately broken test files apart)."""
    real = [r for r in results if not is_damaged(r.name)]
    damaged = [r for r in results if is_damaged(r.name)]
    return "; ".join([_line("conformance", results), _line("real archives", real), _line("broken test files", damaged)])
