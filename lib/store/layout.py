"""Every path and file name the stages share: one place to read the bucket layout from.

The layout of the OpenWebSearch.eu daily index slices: ``ROOT/KIND/YYYY-MM/DD`` for each kind of output (``warc`` input,
``preprocessed``, ``index``, ``catalogue``), ``language=xxx`` folders inside a preprocessed
day, underscore-prefixed side files (stats, errors, captures) and ``_SUCCESS`` written last.
Paths are joined with ``/`` (as :func:`lib.store.storage.join` joins them), so ROOT may be a
local path, a ``file://`` or an ``s3://`` URI. This module imports nothing from lib: every other
module, storage included, may import it.
"""

from __future__ import annotations

import datetime as dt
import re

# kinds of dated folders under ROOT
WARC = "warc"
PREPROCESSED = "preprocessed"
INDEX = "index"
CATALOGUE = "catalogue"
URLDB = "urldb"  # the URL database under ROOT: one folder across days, not dated

# markers and side files
SUCCESS = "_SUCCESS"  # written last into a finished folder
STATS = "_stats.json"  # counters of a run (preprocess, extract)
INPUTS = "_inputs.json"  # the input files a published preprocessed day was made from (name, size, version)
ERRORS = "_errors.jsonl"  # one line per bad record (preprocess)
HOSTS = "_hosts.parquet"  # which page files and row groups hold each host (lib.pages.hostindex)
CAPTURES = "_captures"  # every capture of a preprocessed day (CDXJ, URL database)
EXCLUSIONS = "_exclusions.jsonl"  # ROOT/_exclusions.jsonl: the take-down list (lib.pages.exclusions)
PURGE = "_purge"  # ROOT/_purge/: the purge command's audit log and its pending swaps
RUNS = "_runs"  # ROOT/_runs/DC/DATE.json: the nightly run's marker (and its summary) per data center

# ROOT/shared/auxiliary/: what every node of a data center shares (docs/layout.md, "Shared folders")
AUXILIARY = "shared/auxiliary"
MODELS = "models"  # language-identification model, analyzers' data: lib.store.auxiliary
FILTERS = "filters"  # the take-down list and blocklists: lib.store.auxiliary
PLUGINS = "plugins"  # plugins/<name>/<version>/evaluation.json: lib.preprocess.gate
AUX_MANIFEST = "manifest.json"  # models/manifest.json, filters/manifest.json: name -> file, version, sha256
LOGS_CSV = "logs.csv"  # one line per update (lib.store.update_log), served as GET /feed
FILE_LOG_SUFFIX = ".log.gz"  # the per-file log beside each page file (file_log_name)

# languages
UNKNOWN_LANG = "und"  # ISO 639-3 'undetermined': pages without text
LANG_PREFIX = "language="

# index shards (index_name, metadata_name) as glob patterns
INDEX_GLOB = "index-*.ciff.gz"
METADATA_GLOB = "metadata-*.parquet"

_DAY_RE = re.compile(r"(\d{4})-(\d{2})/(\d{2})/?$")
_INDEX_RE = re.compile(r"index-([^/]+?)\.ciff(\.gz)?$")


def day_suffix(day: dt.date) -> str:
    """``YYYY-MM/DD``: the dated part of every day folder."""
    return f"{day:%Y-%m}/{day:%d}"


def day_path(root: str, kind: str, day: dt.date) -> str:
    """``ROOT/KIND/YYYY-MM/DD`` (the daily slices' bucket layout)."""
    return f"{root.rstrip('/')}/{kind}/{day_suffix(day)}"


def root_of(day_folder: str) -> str:
    """ROOT of a ``ROOT/KIND/YYYY-MM/DD`` folder (a path or URI)."""
    return day_folder.rstrip("/").rsplit("/", 3)[0]


def day_of(path: str) -> dt.date | None:
    """The day of a ``.../YYYY-MM/DD`` folder path, or None when it does not end like one."""
    m = _DAY_RE.search(path.replace("\\", "/"))
    if not m:
        return None
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def language_dir(lang: str) -> str:
    """``language=xxx``: the folder of one language's pages in a preprocessed day."""
    return f"{LANG_PREFIX}{lang}"


def language_of(name: str) -> str | None:
    """``xxx`` of a ``language=xxx`` folder name (its last path part), else None."""
    base = name.rstrip("/").rsplit("/", 1)[-1]
    return base[len(LANG_PREFIX) :] if base.startswith(LANG_PREFIX) else None


def pages_part(name: str) -> str:
    """The pages file of one input file within its language folder."""
    return f"part-{name}.zstd.parquet"


def auxiliary_path(root: str, *parts: str) -> str:
    """``ROOT/shared/auxiliary[/PART...]``."""
    return "/".join([root.rstrip("/"), AUXILIARY, *parts])


def file_log_name(pages_file: str) -> str:
    """The per-file log beside a page file (a name or a path): ``part-X.zstd.parquet`` ->
    ``_part-X.log.gz``. The design's ``Date-{class}-{split}.log.gz`` beside its
    ``Date-{class}-{split}.parquet``; underscore-prefixed so that Parquet readers (Spark, pyarrow
    datasets), which skip ``_`` and ``.`` names, never take it for a page file."""
    folder, _, name = pages_file.replace("\\", "/").rpartition("/")
    stem = name.removesuffix(".parquet").removesuffix(".zstd")
    return (folder + "/" if folder else "") + f"_{stem}{FILE_LOG_SUFFIX}"


def captures_part(name: str) -> str:
    """The captures file of one input file within ``_captures/``."""
    return f"part-{name}.parquet"


def index_name(shard: int) -> str:
    """The CIFF file of index shard ``shard`` within its language folder."""
    return f"index-{shard}.ciff.gz"


def metadata_name(shard: int | str) -> str:
    """The metadata (docid -> page) file beside ``index_name(shard)``."""
    return f"metadata-{shard}.parquet"


def metadata_for(index_file: str) -> str | None:
    """The name of the metadata file beside index file ``...index-{n}.ciff[.gz]`` (a name or a
    path), None for a name that does not end like one."""
    m = _INDEX_RE.search(index_file.replace("\\", "/").rsplit("/", 1)[-1])
    return metadata_name(m[1]) if m else None
