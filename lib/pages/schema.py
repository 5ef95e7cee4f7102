"""Schemas of the preprocessed day: pages (Parquet partitioned by ``language=``) and
captures (every response/revisit/resource record, for CDXJ and the URL database).

Column names follow OpenWebSearch.eu's published schema 0.1.0 where the meaning is the
same. Each column's documentation lives here and is rendered into docs/preprocess.md.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema

LINK = pa.struct([("url", pa.string()), ("anchor_text", pa.string()), ("rel", pa.string())])
#: an embedded resource as OpenWebSearch.eu's links module writes it (image_links, video_links, iframes)
MEDIA = pa.list_(pa.struct([("src", pa.string()), ("width", pa.string()), ("height", pa.string())]))

#: (name, arrow type, description) for every page column, in output order.
PAGE_COLUMNS: list[tuple[str, pa.DataType, str]] = [
    ("id", pa.string(), "sha256 (hex) of the normalized URL: same URL, same id, every day"),
    (
        "record_id",
        pa.string(),
        "WARC-Record-ID of the response record (ARC input: a urn:uuid of the archive's path below the day's "
        "folder and the offset, so the same wherever the day is read from)",
    ),
    ("url", pa.string(), "target URI of the capture, as crawled"),
    ("url_scheme", pa.string(), "scheme of url (http, https)"),
    ("url_host", pa.string(), "host name of url, lowercased"),
    ("url_path", pa.string(), "path of url"),
    ("url_query", pa.string(), "query string of url (without '?'), empty if none"),
    ("url_subdomain", pa.string(), "subdomain part of the host by the Public Suffix List (e.g. 'www')"),
    ("url_domain", pa.string(), "registered domain by the Public Suffix List (e.g. 'example.co.uk')"),
    ("url_suffix", pa.string(), "public suffix (e.g. 'co.uk', 'gov', 'de'); empty for IP hosts"),
    ("title", pa.string(), "<title> text, whitespace-collapsed"),
    ("description", pa.string(), "<meta name=description> (or og:description) content"),
    (
        "plain_text",
        pa.string(),
        "main text: the content root's text without boilerplate blocks, one block per line (docs/maintext.md)",
    ),
    ("language", pa.string(), "ISO 639-3 code from fastText lid.176 on title+text ('und' when there is no text)"),
    ("language_score", pa.float32(), "fastText probability of `language` (0..1)"),
    ("html_lang", pa.string(), "the page's own <html lang> attribute, as written"),
    ("canonical_url", pa.string(), "absolute URL of <link rel=canonical>, if any"),
    (
        "http_status",
        pa.int32(),
        "HTTP status code of the response (null for a `resource` record: an archived file, e.g. warcit's)",
    ),
    ("mime_type", pa.string(), "MIME type from the HTTP Content-Type header (lowercased, no parameters)"),
    ("charset", pa.string(), "character set used to decode the page (Python codec name)"),
    ("charset_source", pa.string(), "where the charset came from: http, meta, bom, utf-8, detected"),
    ("http_server", pa.string(), "HTTP Server header"),
    ("content_length", pa.int64(), "bytes of the HTTP body after transfer/content decoding"),
    ("payload_digest", pa.string(), "WARC-Payload-Digest as written (e.g. 'sha1:...'); identical payloads share it"),
    ("warc_date", pa.timestamp("us", tz="UTC"), "WARC-Date of the capture (UTC)"),
    ("warc_ip", pa.string(), "WARC-IP-Address of the server"),
    ("warc_file", pa.string(), "full URI of the archive file holding the record (file:// or s3://)"),
    (
        "warc_offset",
        pa.int64(),
        "byte offset of the record's gzip member in warc_file (uncompressed .warc: of the record)",
    ),
    (
        "warc_length",
        pa.int64(),
        "byte length of that gzip member (uncompressed .warc: of the record incl. trailing CRLFs); copying "
        "these bytes yields a valid one-record archive",
    ),
    (
        "outgoing_links",
        pa.list_(LINK),
        "outgoing <a href> links as absolute http(s) URLs with their anchor texts and rel: the link's nofollow, "
        "ugc and sponsored tokens, plus nofollow when the page says nofollow, null for a followed link "
        "(deduplicated by url+anchor, order kept; a link followed once on the page is followed)",
    ),
    (
        "image_links",
        MEDIA,
        "the page's <img src> as {src, width, height} (OpenWebSearch.eu's links module): src absolute as "
        "outgoing_links are (against <base href>, http(s), no fragment), width and height as the tag writes them; "
        "each src once, document order; null without any (lib/html/embeds.py)",
    ),
    ("video_links", MEDIA, "the same for <video src> and a <video>'s <source src> (the video's width, height)"),
    ("iframes", MEDIA, "the same for <iframe src>"),
    ("script_links", pa.list_(pa.string()), "the page's <script src>, absolute, each once; null without any"),
    (
        "stylesheet_links",
        pa.list_(pa.string()),
        "the page's <link rel=stylesheet href>, absolute, each once; null without any",
    ),
    ("valid", pa.bool_(), "false when the page decoded with replacement characters or had no text"),
    ("truncated", pa.bool_(), "true when the archive file ends inside the record: the page is what was there"),
    (
        "json_ld",
        pa.string(),
        "JSON-LD of the page as Resilipipe stores it: the items of its <script type=application/ld+json> blocks "
        "parsed, written as a Python list (str); null without any",
    ),
    (
        "content_type_other",
        pa.map_(pa.string(), pa.string()),
        "Content-Type parameters other than charset (e.g. boundary); null without any",
    ),
    (
        "ows_headers",
        pa.map_(pa.string(), pa.string()),
        "the record's OWS.* WARC headers (names lowercased), as the OpenWebSearch.eu crawler writes them; null "
        "without any",
    ),
    (
        "robots",
        pa.list_(pa.string()),
        "the robots directives in effect for the page (meta robots, metas of the --robots-agents, X-Robots-Tag): "
        "noindex, nofollow, nosnippet, noarchive, noai, noimageai, in that order; null without any "
        "(docs/robots.md)",
    ),
    ("ows_index", pa.bool_(), "false when the page says noindex (meta or X-Robots-Tag): left out of the index"),
    ("ows_index_details", pa.string(), "which source said noindex, e.g. 'noindex (meta robots)'; null otherwise"),
    (
        "ows_genai",
        pa.bool_(),
        "false when the page opts out of AI / text-and-data-mining use (robots noai or noimageai, TDMRep "
        "tdm-reservation: 1 as meta or header)",
    ),
    ("ows_genai_details", pa.string(), "the opt-out signal(s), e.g. 'noai (meta robots); tdm-reservation=1'"),
    (
        "minhash",
        pa.binary(),
        "MinHash signature of plain_text's word shingles (--minhash-shingle words each): --minhash-perms uint32 "
        "values, little-endian (512 bytes by default); null when the text has fewer than 46 shingles, too short "
        "to judge (docs/dedup.md)",
    ),
]

PAGE_SCHEMA = pa.schema([pa.field(n, t) for n, t, _ in PAGE_COLUMNS])

#: page columns a run adds only when asked (jobs/preprocess.py's option of the same name)
OPT_IN_PAGE_COLUMNS: list[tuple[str, pa.DataType, str]] = [
    (
        "main_html",
        pa.string(),
        "with --main-html only: the main content (the text of plain_text) as HTML with structural tags only: p, "
        "h1-h6, ul/ol/li, table/caption/tr/td/th, pre/code, blockquote, br, and a with its href resolved to an "
        "absolute http(s) URL; text and attribute values escaped, every element closed; empty when plain_text "
        "is (docs/maintext.md)",
    ),
]

#: One row per capture record (response, revisit, resource) of every input file.
CAPTURE_COLUMNS: list[tuple[str, pa.DataType, str]] = [
    ("url", pa.string(), "WARC-Target-URI"),
    ("warc_date", pa.timestamp("us", tz="UTC"), "WARC-Date (UTC)"),
    ("record_type", pa.string(), "response, revisit or resource"),
    ("record_id", pa.string(), "WARC-Record-ID"),
    ("http_status", pa.int32(), "HTTP status (null for resource records)"),
    (
        "mime_type",
        pa.string(),
        "HTTP Content-Type, no parameters (revisit: its HTTP head's, empty without one; resource: the record's "
        "Content-Type)",
    ),
    ("payload_digest", pa.string(), "WARC-Payload-Digest"),
    ("kept", pa.bool_(), "true when the record became a page row"),
    ("warc_file", pa.string(), "archive URI"),
    ("warc_offset", pa.int64(), "offset of the record's gzip member"),
    ("warc_length", pa.int64(), "length of the record's gzip member"),
    (
        "robots_txt",
        pa.binary(),
        "the payload of a /robots.txt response (at most 500 KiB; a 3xx: its Location header): the day's rules "
        "that the index applies (docs/robots.md); null for every other capture",
    ),
]
CAPTURE_SCHEMA = pa.schema([pa.field(n, t) for n, t, _ in CAPTURE_COLUMNS])


#: rows per Parquet row group of a page file (preprocess writes them, purge's filtered copies keep them)
ROW_GROUP_ROWS = 20_000


def spark_schema(arrow_schema: pa.Schema):
    """The Spark StructType equivalent of an Arrow schema."""
    return from_arrow_schema(arrow_schema)
