"""The index's metadata store in OpenWebSearch.eu's published schema 0.1.0, plus our own columns (no Spark imports).

Schema 0.1.0 is Resilipipe's ``conf/config.py``: 34 base columns (names, Arrow types and
nullability exactly as there), the columns of its ``links``, ``curlielabels`` and
``geoparsing`` modules, and ``schema_metadata`` carrying the version. A tool that reads the
published metadata (MOSAIC, owilix, DuckDB notebooks) finds every column it expects here.
Our own columns stay beside those under names that do not clash (docs/index.md):
``collection_docid``/``docid``/``doclength`` (the CIFF document), ``warc_offset``/``warc_length``
(byte-copy extraction), ``outgoing_link_anchors`` (anchor text of each ``outgoing_links``
entry, same position), ``url_host``, ``language_score`` and the rest of the page columns.

:func:`metadata_batch` turns a batch of preprocessed pages (lib.pages.schema ``PAGE_SCHEMA``)
into these columns; the index's map step calls it, the reduce step adds ``docid``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lib.pages import weburls

SCHEMA_VERSION = "0.1.0"
SCHEMA_METADATA = [("schema_version", SCHEMA_VERSION)]

_S = pa.string()
STRMAP = pa.map_(pa.string(), pa.string())

#: schema 0.1.0's base columns, in its order: strings unless _BASE_TYPES says otherwise, nullable
#: but for the two ids
_BASE_NAMES = """
    id record_id title plain_text json-ld microdata warc_date warc_ip url url_scheme url_path url_params
    url_query url_fragment url_subdomain url_domain url_suffix url_is_private mime_type charset
    content_type_other http_server language valid warc_file ows_canonical ows_resource_type ows_curlielabel
    ows_index ows_genai ows_genai_details ows_fetch_response_time ows_fetch_num_errors schema_metadata
""".split()
_BASE_TYPES = {
    **dict.fromkeys(("url_is_private", "valid", "ows_index", "ows_genai"), pa.bool_()),
    **dict.fromkeys(("content_type_other", "schema_metadata"), STRMAP),
    "ows_fetch_response_time": pa.int32(),
}
BASE_FIELDS = [pa.field(n, _BASE_TYPES.get(n, _S), n not in ("id", "record_id")) for n in _BASE_NAMES]
MEDIA = pa.list_(pa.struct([("src", _S), ("width", _S), ("height", _S)]))
ADDRESS = pa.list_(
    pa.struct(
        [
            (
                "loc",
                pa.struct([("streetAddress", _S), ("postalCode", _S), ("addressLocality", _S), ("addressCountry", _S)]),
            ),
            ("geo", pa.struct([("latitude", pa.float64()), ("longitude", pa.float64())])),
        ]
    )
)
#: schema 0.1.0's module columns (links, curlielabels, geoparsing)
MODULE_FIELDS = [
    pa.field("outgoing_links", pa.list_(_S)),
    pa.field("image_links", MEDIA),
    pa.field("video_links", MEDIA),
    pa.field("iframes", MEDIA),
    pa.field("curlielabels", pa.list_(_S)),
    pa.field("curlielabels_en", pa.list_(_S)),
    pa.field("address", ADDRESS),
]
#: ours, beside those (module doc)
OUR_FIELDS = [
    pa.field("collection_docid", _S, False),
    pa.field("docid", pa.int32(), False),
    pa.field("doclength", pa.int32()),
    pa.field("warc_offset", pa.int64()),
    pa.field("warc_length", pa.int64()),
    pa.field("outgoing_link_anchors", pa.list_(_S)),
    pa.field("url_host", _S),
    pa.field("language_score", pa.float32()),
    pa.field("description", _S),
    pa.field("html_lang", _S),
    pa.field("canonical_url", _S),
    pa.field("http_status", pa.int32()),
    pa.field("charset_source", _S),
    pa.field("content_length", pa.int64()),
    pa.field("payload_digest", _S),
    pa.field("truncated", pa.bool_()),
    pa.field("robots", pa.list_(_S)),
    pa.field("ows_index_details", _S),
    pa.field("dup_cluster", _S),
    pa.field("dup_of", _S),
    pa.field("dup_of_day", pa.date32()),
]
METADATA_SCHEMA = pa.schema(BASE_FIELDS + MODULE_FIELDS + OUR_FIELDS, metadata={"schema_version": SCHEMA_VERSION})
#: what the map step spills per page: everything but ``docid`` (the reducer numbers the pages)
DOCS_SCHEMA = pa.schema([f for f in METADATA_SCHEMA if f.name != "docid"], metadata=METADATA_SCHEMA.metadata)

#: columns we cannot fill honestly: null unless an enrichment plugin (lib.preprocess.enrich) wrote
#: the page column of that name, e.g. ``microdata`` (docs/index.md says why)
NULL_COLUMNS = ("microdata", "curlielabels", "curlielabels_en", "address")
#: the links module's embedded resources, from the page columns of the same name and type (preprocess
#: writes them, lib/html/embeds.py); null for pages written before they existed
MEDIA_COLUMNS = ("image_links", "video_links", "iframes")
#: preprocessed page columns copied under the same name and type
SAME = (
    "id",
    "title",
    "plain_text",
    "warc_ip",
    "url",
    "mime_type",
    "charset",
    "http_server",
    "valid",
    "warc_file",
    "warc_offset",
    "warc_length",
    "url_host",
    "language_score",
    "description",
    "html_lang",
    "canonical_url",
    "http_status",
    "charset_source",
    "content_length",
    "payload_digest",
    "truncated",
    "robots",
)
#: the page's own signals (lib.pages.directives), combined with the crawler's OWS.* headers
SIGNAL_COLUMNS = ("ows_index", "ows_index_details", "ows_genai", "ows_genai_details")
#: page columns metadata_batch needs
PAGE_INPUT = sorted(
    {"id", "record_id", "url", "title", "warc_file", "warc_offset", "warc_length", "warc_date", "url_host"}
)
#: page columns it reads when the file has them, else null (pages written before they existed,
#: or by other tools)
OPTIONAL_PAGE_COLUMNS = tuple(
    sorted(
        {*SAME, "outgoing_links", "json_ld", "content_type_other", "ows_headers", *SIGNAL_COLUMNS, *MEDIA_COLUMNS}
        - set(PAGE_INPUT)
    )
)
_PAGE_TYPES = {
    **dict.fromkeys(MEDIA_COLUMNS, MEDIA),
    "outgoing_links": pa.list_(pa.struct([("url", _S), ("anchor_text", _S)])),
    "json_ld": _S,
    "content_type_other": STRMAP,
    "ows_headers": STRMAP,
    "robots": pa.list_(_S),
    "ows_index": pa.bool_(),
    "ows_genai": pa.bool_(),
    "ows_index_details": _S,
    "ows_genai_details": _S,
}

#: OWS.* WARC headers (lowercased, as our reader keeps them) -> column and kind
OWS_HEADERS = {
    "ows.canonical": ("ows_canonical", "str"),
    "ows.resource-type": ("ows_resource_type", "str"),
    "ows.curlielabel": ("ows_curlielabel", "label"),
    "ows.index": ("ows_index", "bool"),
    "ows.genai": ("ows_genai", "bool"),
    "ows.genai-details": ("ows_genai_details", "str"),
    "ows.fetch.response-time": ("ows_fetch_response_time", "int"),
    "ows.fetch.num-errors": ("ows_fetch_num_errors", "str"),
}
_TRUE = {"true", "1", "yes", "y", "t"}


def _ows_value(kind: str, v: str):
    v = v.strip()
    if kind == "bool":
        return v.lower() in _TRUE
    if kind == "int":
        try:
            n = int(v)
        except ValueError:
            return None
        return n if -(1 << 31) <= n < (1 << 31) else None
    if kind == "label":
        return v.capitalize()
    return v


def ows_columns(headers: list) -> dict[str, list]:
    """The ``ows_*`` columns from each page's OWS.* WARC headers (a list of key/value pairs or None)."""
    out = {col: [None] * len(headers) for col, _ in OWS_HEADERS.values()}
    for i, h in enumerate(headers):
        for k, v in h or ():
            spec = OWS_HEADERS.get(k.lower())
            if spec is not None and v is not None:
                out[spec[0]][i] = _ows_value(spec[1], v)
    return out


def _combine_signals(ows: dict[str, list], page: dict[str, list]) -> None:
    """Fill ``ows`` (from the crawler's OWS.* headers) with the page's own signals: a flag is
    false when either says false, else the page's value (the header's for pages written before
    the page columns existed); the details of both are kept."""
    ows["ows_index_details"] = page["ows_index_details"]
    for flag, details in (("ows_index", None), ("ows_genai", "ows_genai_details")):
        for i, mine in enumerate(page[flag]):
            theirs = ows[flag][i]
            ows[flag][i] = theirs if mine is None else mine and theirs is not False
            if details is not None and page[details][i]:
                ows[details][i] = "; ".join(d for d in (ows[details][i], page[details][i]) if d)


def owi_date(ts: pa.Array) -> pa.Array:
    """A UTC timestamp column as schema 0.1.0's ``warc_date`` string, ``YYYY-MM-DDTHH:MM:SSZ``."""
    if pa.types.is_string(ts.type):
        return ts
    # whole seconds (the pattern has no fraction): truncated, as the WARC-Date mostly is already
    return pc.strftime(ts.cast(pa.timestamp("s", tz="UTC"), safe=False), format="%Y-%m-%dT%H:%M:%SZ")


PLUGIN_KEY = b"dailyslice.enricher"


def plugin_fields(page_schema: pa.Schema) -> list[pa.Field]:
    """The columns enrichment plugins added to a preprocessed page file (their fields carry the
    plugin's name in the metadata key ``dailyslice.enricher``, lib.preprocess.enrich). One named
    like a schema 0.1.0 column fills it; the others are appended to the store."""
    return [f for f in page_schema if f.metadata and PLUGIN_KEY in f.metadata]


def docs_schema(extra: list[pa.Field]) -> pa.Schema:
    """:data:`DOCS_SCHEMA` with the plugin columns ``extra`` that it does not already have."""
    names = set(DOCS_SCHEMA.names)
    return pa.schema(list(DOCS_SCHEMA) + [f for f in extra if f.name not in names], metadata=DOCS_SCHEMA.metadata)


def metadata_schema(docs: pa.Schema) -> pa.Schema:
    """:data:`METADATA_SCHEMA` plus the plugin columns a spilled docs table carries."""
    names = set(METADATA_SCHEMA.names)
    return pa.schema(
        list(METADATA_SCHEMA) + [f for f in docs if f.name not in names], metadata=METADATA_SCHEMA.metadata
    )


def _links(col: pa.Array) -> tuple[pa.Array, pa.Array]:
    """``list<struct<url, anchor_text>>`` -> (``list<string>`` urls, ``list<string>`` anchors); an
    empty list becomes null, as Resilipipe writes it."""
    col = col.cast(pa.list_(pa.struct([("url", _S), ("anchor_text", _S)])))
    empty = pc.or_kleene(pc.is_null(col), pc.equal(pc.list_value_length(col), 0))
    flat = col.flatten()
    offsets = col.offsets
    mask = empty.to_numpy(zero_copy_only=False)
    urls_ = pa.ListArray.from_arrays(offsets, flat.field("url"), mask=pa.array(mask))
    anchors = pa.ListArray.from_arrays(offsets, flat.field("anchor_text"), mask=pa.array(mask))
    return urls_, anchors


def metadata_batch(
    b: pa.RecordBatch,
    language: str,
    doclength: np.ndarray,
    dup_cluster: dict[str, str] | None = None,
    dup_of: dict[str, tuple[str, str]] | None = None,
) -> pa.RecordBatch:
    """The :data:`DOCS_SCHEMA` rows of a batch of preprocessed pages of one ``language`` folder,
    plus the columns of enrichment plugins the batch carries (:func:`plugin_fields`).
    ``dup_cluster``: record id -> its near-duplicate cluster's representative, for the pages
    whose representative is another page (lib.neardup.day_clusters); every other page names itself.
    ``dup_of``: record id -> (day, record id) of the earlier day's page it copies
    (lib.neardup.crossday); every other page has nulls."""
    n = b.num_rows
    names = set(b.schema.names)

    def col(c: str) -> pa.Array:
        if c in names:
            return b.column(c)
        return pa.nulls(n, _PAGE_TYPES.get(c) or METADATA_SCHEMA.field(c).type)

    cols: dict[str, pa.Array] = {c: col(c) for c in SAME}
    record_id = pc.fill_null(b.column("record_id").cast(_S), "")
    cols["record_id"] = cols["collection_docid"] = record_id
    dups = dup_cluster or {}
    cols["dup_cluster"] = pa.array([dups.get(r, r) for r in record_id.to_pylist()], _S) if dups else record_id
    earlier = [(dup_of or {}).get(r, (None, None)) for r in record_id.to_pylist()]
    cols["dup_of"] = pa.array([e[1] for e in earlier], _S)
    cols["dup_of_day"] = pa.array([e[0] for e in earlier], _S).cast(pa.date32())
    cols["id"] = pc.fill_null(cols["id"].cast(_S), "")
    cols["warc_date"] = owi_date(b.column("warc_date"))
    cols["language"] = pa.array([language] * n, _S)
    cols["doclength"] = pa.array(doclength.astype(np.int32))
    parts = [
        weburls.owi_url_parts(u) if u else dict.fromkeys(weburls.OWI_URL_KEYS) for u in b.column("url").to_pylist()
    ]
    for k in weburls.OWI_URL_KEYS:
        cols[k] = pa.array([p[k] for p in parts], pa.bool_() if k == "url_is_private" else _S)
    cols["outgoing_links"], cols["outgoing_link_anchors"] = _links(col("outgoing_links"))
    cols["json-ld"] = col("json_ld")
    cols["content_type_other"] = col("content_type_other")
    headers = col("ows_headers").to_pylist() if "ows_headers" in names else [None] * n
    ows = ows_columns(headers)
    _combine_signals(ows, {c: col(c).to_pylist() for c in SIGNAL_COLUMNS})
    for c, vals in ows.items():
        cols[c] = pa.array(vals, METADATA_SCHEMA.field(c).type)
    cols["schema_metadata"] = pa.array([SCHEMA_METADATA] * n, STRMAP)
    for c in NULL_COLUMNS:
        cols[c] = pa.nulls(n, METADATA_SCHEMA.field(c).type)
    for c in MEDIA_COLUMNS:
        cols[c] = col(c)
    extra = plugin_fields(b.schema)
    for f in extra:
        cols[f.name] = b.column(f.name)
    schema = docs_schema(extra) if extra else DOCS_SCHEMA
    return pa.RecordBatch.from_arrays([cols[f.name].cast(f.type) for f in schema], schema=schema)
