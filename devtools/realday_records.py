"""Records of real archives and their host-renamed copies, for devtools/realday.py.

A record is read once (warcio, ARC as WARC, the HTTP block left unparsed) into a
:class:`Rec`: the WARC version line, the header list and the block bytes. :class:`Renamer` makes
copy K of a record: every registered domain the source links to or was fetched from gets
``-cK`` after its name (``www.bbc.co.uk`` -> ``www.bbc-cK.co.uk``) wherever it occurs as a host
token in the target URI, the HTTP headers, request/metadata blocks and HTML bodies (chunked and
gzip/deflate bodies decoded, rewritten and encoded again), record ids are derived from (id, K),
and lengths and digests are recomputed for what changed.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import re
import uuid
import zlib
from dataclasses import dataclass

#: uuid5 namespace of copied record ids (any fixed uuid: the ids only need to be stable)
ID_NAMESPACE = uuid.UUID("6a1d5f0e-3c2b-5d7a-9e41-0b8f2c7d4e19")

#: a host-like token: dot-separated labels (maximal, so subdomains come with it)
_TOKEN = re.compile(rb"(?<![A-Za-z0-9-])[A-Za-z0-9-]++(?:\.[A-Za-z0-9-]++)+")
#: hosts of absolute and protocol-relative URLs in a body (where the domains to rename come from)
_URL_HOST = re.compile(
    rb"""(?i)(?:https?:|["'=(\s])//([a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+)"""
)
_ID_HEADERS = ("WARC-Record-ID", "WARC-Concurrent-To", "WARC-Refers-To", "WARC-Warcinfo-ID")
_URI_HEADERS = ("WARC-Target-URI", "WARC-Refers-To-Target-URI")
_HTML_SNIFF = re.compile(rb"(?i)<(?:!doctype\s+html|html|head|body)[\s>]")


@dataclass
class Rec:
    """One record as read: version line (``WARC/1.0``), headers in order, block bytes."""

    version: str
    headers: list[tuple[str, str]]
    block: bytes
    source: str

    def get(self, name: str) -> str | None:
        low = name.lower()
        for k, v in self.headers:
            if k.lower() == low:
                return v
        return None

    @property
    def type(self) -> str:
        return (self.get("WARC-Type") or "").lower()

    def to_bytes(self) -> bytes:
        """The record as written: headers with Content-Length set to the block's length."""
        lines = [self.version]
        for k, v in self.headers:
            lines.append(f"{k}: {len(self.block) if k.lower() == 'content-length' else v}")
        if self.get("Content-Length") is None:
            lines.append(f"Content-Length: {len(self.block)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape")
        return head + self.block + b"\r\n\r\n"


def read_archive(path: str, label: str | None = None, data: bytes | None = None) -> list[Rec]:
    """Every record of one archive (``data`` instead of the file when given). ARC records come
    as WARC (warcio's arc2warc) with a record id derived from (file name, offset), since ARC has
    none and warcio would draw a random one. Raises warcio's ArchiveLoadFailed on a broken file."""
    from warcio.archiveiterator import ArchiveIterator

    label = label or os.path.basename(path)
    out = []
    with io.BytesIO(data) if data is not None else open(path, "rb") as f:
        arc = _starts_arc(f)
        it = ArchiveIterator(f, arc2warc=True, no_record_parse=True)
        for r in it:
            block = r.raw_stream.read()
            headers = list(r.rec_headers.headers)
            if arc:
                rid = f"<urn:uuid:{uuid.uuid5(ID_NAMESPACE, f'{label}:{it.get_record_offset()}')}>"
                headers = [(k, rid if k.lower() == "warc-record-id" else v) for k, v in headers]
            out.append(Rec(r.rec_headers.protocol or "WARC/1.0", headers, block, label))
    return out


def _starts_arc(f) -> bool:
    """Whether the stream holds ARC (its first record is ``filedesc://``); rewinds it."""
    head = f.read(64 << 10)
    f.seek(0)
    if head[:2] == b"\x1f\x8b":
        try:
            head = zlib.decompressobj(31).decompress(head, 64)
        except zlib.error:
            return False
    return head.lstrip().startswith(b"filedesc://")


# ------------------------------------------------------------------ HTTP blocks
def split_http(block: bytes) -> tuple[bytes, bytes] | None:
    """(head with its blank line, body) of an HTTP message, None without a header end."""
    i = block.find(b"\r\n\r\n")
    if i < 0:
        i = block.find(b"\n\n")
        return None if i < 0 else (block[: i + 2], block[i + 2 :])
    return block[: i + 4], block[i + 4 :]


def _header(head: bytes, name: bytes) -> bytes | None:
    m = re.search(rb"(?im)^" + name + rb"[ \t]*:[ \t]*([^\r\n]*)", head)
    return m.group(1).strip().lower() if m else None


def dechunk(body: bytes) -> bytes | None:
    """The body of a chunked transfer, None when it does not parse as one."""
    out, pos = [], 0
    while True:
        eol = body.find(b"\r\n", pos)
        if eol < 0:
            return None
        try:
            size = int(body[pos:eol].split(b";")[0].strip() or b"x", 16)
        except ValueError:
            return None
        if size == 0:
            return b"".join(out)
        out.append(body[eol + 2 : eol + 2 + size])
        pos = eol + 2 + size + 2


def _decode(head: bytes, body: bytes):
    """(plain body, function encoding a plain body back as the message carries it), or None
    when the body cannot be decoded (brotli, a broken gzip): then it is left as it is."""
    chunked = (_header(head, b"Transfer-Encoding") or b"").startswith(b"chunked")
    if chunked:
        plain = dechunk(body)
        if plain is None:
            chunked = False  # the header says chunked, the bytes are not (the writer dechunked them)
        else:
            body = plain
    ce = _header(head, b"Content-Encoding") or b"identity"
    enc = None
    try:
        if ce in (b"gzip", b"x-gzip"):
            body, enc = gzip.decompress(body), (lambda b: gzip.compress(b, 6, mtime=0))
        elif ce == b"deflate":
            try:
                body, enc = zlib.decompress(body), zlib.compress
            except zlib.error:
                body, enc = zlib.decompress(body, -15), (lambda b: _raw_deflate(b))
        elif ce not in (b"identity", b""):
            return None
    except (OSError, EOFError, zlib.error):
        pass  # the header says encoded, the bytes are not (crawlers that store decoded bodies): plain

    def encode(plain: bytes) -> bytes:
        b = enc(plain) if enc else plain
        return (b"%x\r\n" % len(b) + b + b"\r\n0\r\n\r\n") if chunked and b else (b"0\r\n\r\n" if chunked else b)

    return body, encode, chunked


def _raw_deflate(b: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(b) + c.flush()


def is_html(head: bytes, body: bytes) -> bool:
    ctype = _header(head, b"Content-Type") or b""
    return b"html" in ctype or (not ctype and bool(_HTML_SNIFF.search(body[:2048])))


def html_payloads(rec: Rec):
    """(head, plain body) of an HTML response or resource record, else None."""
    if rec.type == "response":
        parts = split_http(rec.block)
        if parts is None:
            return None
        head, body = parts
    elif rec.type == "resource":
        head, body = f"Content-Type: {rec.get('Content-Type') or ''}\r\n\r\n".encode(), rec.block
    else:
        return None
    dec = _decode(head, body)
    if dec is None or not is_html(head, dec[0]):
        return None
    return head, dec[0]


# ------------------------------------------------------------------ renaming
def collect_domains(records: list[Rec]) -> set[str]:
    """Registered domains (``name.suffix``, lowercase) of every target URI and of every
    absolute link host in the HTML bodies: what the copies rename."""
    from lib.pages.weburls import _extractor

    hosts: set[str] = set()
    for rec in records:
        for h in _URI_HEADERS:
            v = rec.get(h)
            if v:
                m = re.match(r"(?i)[a-z][a-z0-9+.-]*://(?:[^@/?#]*@)?([^:/?#]+)", v.strip("<>"))
                if m:
                    hosts.add(m.group(1).lower())
        got = html_payloads(rec)
        if got is not None:
            hosts.update(h.decode("ascii").lower() for h in _URL_HOST.findall(got[1]))
    ext = _extractor()
    out = set()
    for h in hosts:
        e = ext(h)
        if e.domain and e.suffix and not h.replace(".", "").isdigit():
            out.add(f"{e.domain}.{e.suffix}")
    return out


def new_id(rid: str, copy: int) -> str:
    """Copy ``copy``'s id of record id ``rid`` (the same source id gives the same copy id)."""
    return f"<urn:uuid:{uuid.uuid5(ID_NAMESPACE, f'{rid.strip()}|{copy}')}>"


def _digest_like(old: str, data: bytes) -> str:
    """A digest of ``data`` in the algorithm and encoding of ``old`` (``sha1:BASE32`` mostly)."""
    algo, _, val = old.partition(":")
    name = algo.lower().replace("-", "")
    h = hashlib.new(name if name in hashlib.algorithms_available else "sha1", data).digest()
    hexed = all(c in "0123456789abcdefABCDEF" for c in val) and len(val) == 2 * len(h)
    return f"{algo}:{h.hex() if hexed else base64.b32encode(h).decode()}"


class Renamer:
    """Copy ``copy`` (>= 1) of records: hosts of ``domains`` renamed, ids derived, digests redone."""

    def __init__(self, domains: set[str], copy: int):
        self.copy = copy
        self.tag = f"-c{copy}".encode()
        self.domains = {d.encode() for d in domains}
        self.payload_digests: dict[str, str] = {}  # source payload digest -> this copy's, for revisits

    def _token(self, m: re.Match) -> bytes:
        tok = m.group(0)
        low = tok.lower()
        start = 0
        while True:  # the longest tail of labels that is a renamed domain
            if low[start:] in self.domains:
                name_end = low.index(b".", start)
                return tok[:name_end] + self.tag + tok[name_end:]
            dot = low.find(b".", start)
            if dot < 0 or low.find(b".", dot + 1) < 0:
                return tok
            start = dot + 1

    def bytes(self, data: bytes) -> bytes:
        """``data`` with every host token of a renamed domain renamed."""
        return _TOKEN.sub(self._token, data)

    def text(self, s: str) -> str:
        return self.bytes(s.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")

    def _http(self, block: bytes, body_too: bool) -> tuple[bytes, bytes | None, bytes | None]:
        """(block, old payload, new payload) of an HTTP message with renamed head (and HTML body)."""
        parts = split_http(block)
        if parts is None:
            return block, None, None
        head, body = parts
        new_body, chunked = body, True
        if body_too:
            dec = _decode(head, body)
            if dec is not None and is_html(head, dec[0]):
                plain, encode, chunked = dec
                renamed = self.bytes(plain)
                if renamed != plain:
                    new_body = encode(renamed)
        new_head = self.bytes(head)
        if new_body is not body and not chunked:
            new_head = re.sub(
                rb"(?im)^(Content-Length[ \t]*:[ \t]*)\d+",
                lambda m: m.group(1) + b"%d" % len(new_body),
                new_head,
                count=1,
            )
        return new_head + new_body, body, new_body

    def record(self, rec: Rec) -> Rec:
        """Copy ``self.copy`` of ``rec``; revisits after the responses they refer to get the
        new payload digest of those (``payload_digests``)."""
        kind = rec.type
        block, old_payload, new_payload = rec.block, None, None
        if kind in ("response", "revisit"):
            block, old_payload, new_payload = self._http(rec.block, body_too=kind == "response")
        elif kind in ("request", "metadata"):
            block = self.bytes(rec.block)
        elif kind == "resource" and html_payloads(rec) is not None:
            block = self.bytes(rec.block)
            old_payload, new_payload = rec.block, block
        headers = []
        for k, v in rec.headers:
            low = k.lower()
            if low in (h.lower() for h in _ID_HEADERS):
                v = new_id(v, self.copy)
            elif low in (h.lower() for h in _URI_HEADERS):
                v = self.text(v)
            elif low == "warc-block-digest" and block != rec.block:
                v = _digest_like(v, block)
            elif low == "warc-payload-digest":
                if kind == "revisit":
                    v = self.payload_digests.get(v, v)
                elif new_payload is not None and new_payload != old_payload:
                    nv = _digest_like(v, new_payload)
                    self.payload_digests[v] = nv
                    v = nv
            headers.append((k, v))
        return Rec(rec.version, headers, block, rec.source)
