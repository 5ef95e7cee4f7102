"""The input list: one record a line, ``url<TAB>archive_file<TAB>offset<TAB>length``.

``archive_file`` is relative to the archives root (``--archives``) or a full URI
(``s3://...``, ``file://...``, an absolute path). Every path is checked here, on the
driver, for lexical escapes (``..``, absolute paths or URIs outside the root); the check
that needs the file system (a symlink pointing out of the root) is
:func:`check_real_path`, run by the task that opens the file.
"""

from __future__ import annotations

import os
from array import array
from typing import Iterable, Iterator, NamedTuple

from lib.errors import DailysliceError
from lib.store import storage


class ExtractError(DailysliceError):
    """A line that cannot be extracted; ``kind`` is a short stable code for counting."""

    def __init__(self, kind: str, detail: str):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail

    @property
    def reason(self) -> str:
        return " ".join(f"{self.kind}: {self.detail}".split())  # one line, no tabs


#: ``Item.length`` of a record whose index gives no length: the task measures it (lib.extract.record_length)
UNKNOWN_LENGTH = 0
#: what planning counts for a record of unknown length (a typical compressed web page)
ESTIMATED_LENGTH = 32 << 10


class Item(NamedTuple):
    """One record to copy. ``uri`` is an absolute local path or ``s3://bucket/key``. The
    line's text stays on the driver (tasks report errors by line number). The archive's
    format is not decided here: the task that opens the file sniffs it from its first bytes.
    ``length`` is :data:`UNKNOWN_LENGTH` when the index gives none."""

    line_no: int
    url: str
    uri: str
    offset: int
    length: int

    @property
    def end(self) -> int:
        return self.offset + self.length

    @property
    def weight(self) -> int:
        """Bytes to plan with: the length, or an estimate while it is unknown."""
        return self.length or ESTIMATED_LENGTH


ErrorRow = tuple[int, str, str]  # (line number, line, reason)
TaskError = tuple[int, str]  # (line number, reason): a task's error, the driver adds the line


def _has_dotdot(path: str) -> bool:
    return ".." in path.replace("\\", "/").split("/")


class Resolver:
    """Turns ``archive_file`` fields into URIs inside the archives root(s) (or anywhere when
    none). With several roots a relative name resolves against the first root holding it
    (one existence check per distinct name), or the first root when none does (the task then
    reports it missing)."""

    def __init__(self, root: str | list[str] | tuple[str, ...] | None):
        # one string object per archive file: cheap to ship to tasks (pickle memoizes it)
        self._cache: dict[str, str | ExtractError] = {}
        self.roots: list[tuple[str, bool]] = []  # (root, is_s3)
        for r in [root] if isinstance(root, str) else (root or []):
            if storage.is_s3(r) or storage.httpread.is_http(r):  # remote: no local path, no symlinks
                self.roots.append((storage.normalize(r).rstrip("/"), True))
            else:
                self.roots.append((os.path.normpath(os.path.abspath(storage.local_path(r))), False))
        self.root: str | None = self.roots[0][0] if self.roots else None
        self.root_is_s3 = bool(self.roots) and self.roots[0][1]

    def real_roots(self) -> tuple[str, ...] | None:
        """The local roots with symlinks resolved (for :func:`check_real_path`); None when no
        root is local (S3 keys have no symlinks) or there is no root."""
        local = tuple(os.path.realpath(r) for r, is_s3 in self.roots if not is_s3)
        return local or None

    def _inside(self, uri: str, is_s3: bool) -> bool:
        return any(is_s3 == r_s3 and (uri == r or uri.startswith(r.rstrip("/") + "/")) for r, r_s3 in self.roots)

    def resolve(self, archive_file: str) -> str:
        return self.lookup(archive_file)

    def lookup(self, archive_file: str) -> str:
        """The URI of ``archive_file``, remembered per distinct name."""
        found = self._cache.get(archive_file)
        if found is None:
            try:
                found = self._resolve(archive_file)
            except ExtractError as e:
                found = e
            self._cache[archive_file] = found
        if isinstance(found, ExtractError):
            raise found
        return found

    def _join(self, root: str, is_s3: bool, name: str) -> str:
        return storage.join(root, name) if is_s3 else os.path.join(root, name)

    def _resolve(self, archive_file: str) -> str:
        if _has_dotdot(archive_file):
            raise ExtractError("escapes-root", f"{archive_file}: '..' in archive path")
        if storage.is_s3(archive_file) or storage.httpread.is_http(archive_file):
            uri, is_s3 = storage.normalize(archive_file), True
        elif archive_file.startswith("file://") or os.path.isabs(archive_file):
            uri, is_s3 = os.path.normpath(storage.local_path(archive_file)), False
        elif "://" in archive_file:
            raise ExtractError("bad-line", f"{archive_file}: unsupported URI scheme")
        elif not self.roots:
            raise ExtractError("bad-line", f"{archive_file}: relative archive path needs --archives")
        else:
            candidates = [self._join(r, r_s3, archive_file) for r, r_s3 in self.roots]
            if len(candidates) > 1:
                for c in candidates:
                    try:
                        if storage.exists(c):
                            return c
                    except Exception:  # an unreachable root: try the next, the task reports the first
                        continue
            return candidates[0]
        if self.roots and not self._inside(uri, is_s3):
            shown = " or ".join(r for r, _ in self.roots)
            raise ExtractError("escapes-root", f"{archive_file}: outside the archives root {shown}")
        return uri


def check_real_path(path: str, real_root: str | tuple[str, ...] | None) -> None:
    """Refuse a local file whose real path (symlinks resolved) leaves ``real_root`` (one root
    or several: the file must be inside one of them)."""
    if not real_root:
        return
    roots = (real_root,) if isinstance(real_root, str) else real_root
    real = os.path.realpath(path)
    if not any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in roots):
        raise ExtractError("escapes-root", f"{path} resolves to {real}, outside the archives root {' or '.join(roots)}")


def _int_field(name: str, text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ExtractError("bad-line", f"{name} is not an integer: {text!r}") from None
    if value < minimum:
        raise ExtractError("bad-line", f"{name} must be >= {minimum}, got {value}")
    return value


def make_item(line_no: int, fields: list, resolver: Resolver) -> Item:
    """An :class:`Item` from ``[url, archive_file, offset, length, ...]`` (extra fields
    ignored; url and archive_file are taken as they are, spaces included). A length of None
    (an index that gives none) is :data:`UNKNOWN_LENGTH`."""
    if len(fields) < 4:
        raise ExtractError("bad-line", f"expected 4 tab-separated fields, got {len(fields)}")
    url, archive_file, offset, length = fields[:4]
    if not url.strip():
        raise ExtractError("bad-line", "empty url")
    if not archive_file.strip():
        raise ExtractError("bad-line", "empty archive_file")
    off = _int_field("offset", offset, 0)
    n = UNKNOWN_LENGTH if length is None else _int_field("length", length, 1)
    return Item(line_no, url, resolver.lookup(archive_file), off, n)


def parse_lines(lines: Iterable[str], resolver: Resolver) -> tuple[list[Item], list[ErrorRow]]:
    """Parse TSV lines (numbered from 1; blank lines and ``#`` comments skipped)."""
    items: list[Item] = []
    errors: list[ErrorRow] = []
    lookup = resolver.lookup
    for no, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        f = line.split("\t")
        # fast path for well-formed lines (millions of them); anything odd goes the slow way
        if len(f) >= 4 and f[0] and f[1] and f[0][0] not in "# ":
            try:
                off, n = int(f[2]), int(f[3])
                if off >= 0 and n >= 1:
                    items.append(Item(no, f[0], lookup(f[1]), off, n))
                    continue
            except (ValueError, ExtractError):
                pass
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            items.append(make_item(no, f, resolver))
        except ExtractError as e:
            errors.append((no, line, e.reason))
    return items, errors


def iter_text_lines(uri: str) -> Iterator[str]:
    """Lines of a local or S3 text file, streamed; undecodable bytes survive round trips."""
    with storage.open_stream(uri) as f:
        for raw in f:
            yield raw.decode("utf-8", "surrogateescape")


def read_tsv(uri: str, resolver: Resolver) -> tuple[list[Item], list[ErrorRow]]:
    """Parse the TSV file at ``uri`` (local or S3)."""
    if not storage.exists(uri):
        raise FileNotFoundError(f"--tsv {uri}: no such file")
    return parse_lines(iter_text_lines(uri), resolver)


def lines_by_number(uri: str, numbers: set[int]) -> dict[int, str]:
    """The text of the given line numbers of the file at ``uri`` (read again, streamed)."""
    found: dict[int, str] = {}
    if numbers:
        last = max(numbers)
        for no, raw in enumerate(iter_text_lines(uri), 1):
            if no in numbers:
                found[no] = raw.rstrip("\r\n")
            if no >= last:
                break
    return found


def row_line(row: tuple) -> str:
    """The TSV form of a ``(url, warc_file, warc_offset, warc_length)`` row."""
    return "\t".join("" if v is None else str(v) for v in row[:4])


def items_from_rows(rows: Iterable[tuple], resolver: Resolver) -> tuple[list[Item], list[ErrorRow]]:
    """Items from ``(url, warc_file, warc_offset, warc_length)`` rows (e.g. Parquet), numbered
    from 1 in the given order; the "line" of a row is its TSV form."""
    items: list[Item] = []
    errors: list[ErrorRow] = []
    for no, row in enumerate(rows, 1):
        fields = [tsv_escape("" if v is None else str(v)) for v in row[:4]]
        try:
            items.append(make_item(no, fields, resolver))
        except ExtractError as e:
            errors.append((no, row_line(row), e.reason))
    return items, errors


def pack_items(items: list[Item]) -> tuple:
    """Items as columns (arrays and one string list): about 4x cheaper to pickle and ship
    to a task than the tuples themselves."""
    files: dict[str, int] = {}
    file_ix = array("i", (files.setdefault(it.uri, len(files)) for it in items))
    return (
        list(files),
        file_ix,
        array("q", (it.line_no for it in items)),
        [it.url for it in items],
        array("q", (it.offset for it in items)),
        array("q", (it.length for it in items)),
    )


def unpack_items(packed: tuple) -> list[Item]:
    """The inverse of :func:`pack_items`."""
    files, file_ix, line_nos, urls, offsets, lengths = packed
    return [Item(no, url, files[f], off, n) for f, no, url, off, n in zip(file_ix, line_nos, urls, offsets, lengths)]


def tsv_escape(text: str) -> str:
    """A field safe for one TSV cell (tabs/newlines would break the columns)."""
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")
