"""One extraction task: copy a list of ranges into new archives, no Spark needed.

:func:`extract_items` is what each Spark task runs (and what tests call directly). It
writes its archives and one manifest part into ``out_dir`` and returns a small result:
counts, the files it wrote and the error rows for the driver's single errors.tsv.
"""

from __future__ import annotations

import datetime as dt
import io
import itertools
import os
from typing import Any

from lib.extract.arc2warc import arc_to_warc
from lib.extract.archive import ArchiveWriter, gzip_member, task_namer
from lib.extract.formats import ArchiveFormat, FormatError, sniff_format
from lib.extract.lines import ExtractError, Item, TaskError, tsv_escape
from lib.extract.record_length import measure_items
from lib.extract.sources import S3_MAX_GAP, LocalSource, open_source, plan_runs
from lib.extract.terminator import HEAD_SCAN, missing_terminator
from lib.extract.verify import HEAD_BYTES, RecordCheck, check_magic, magic_error
from lib.store import atomic, storage
from lib.warc.records import Record, iter_records

CHUNK = 1 << 20
READ_MAX = 8 << 20  # local: adjacent ranges up to this many bytes are read with one pread
BIG = 1 << 20  # local: ranges bigger than this are copied by the kernel
PARTS_DIR = "_parts"
OUTPUT_FORMATS = ("same", "warc")
MAX_CONVERT = 1 << 30  # an ARC record converted to WARC is held in memory: its block at most this
_WARC_GZ = ArchiveFormat("gzip", "warc")

ManifestRow = tuple[str, str, int, int, int, str, int]


class _Task:
    def __init__(
        self, task_id: int, out_dir: str, max_bytes: int, verify: bool, when: dt.datetime, output_format: str = "same"
    ):
        if output_format not in OUTPUT_FORMATS:
            raise ValueError(f"output format {output_format!r} is not one of {OUTPUT_FORMATS}")
        self.verify = verify
        self.to_warc = output_format == "warc"
        self.out_dir, self.max_bytes, self.when = out_dir, max_bytes, when
        self.namer = task_namer(task_id)
        self.writers: dict[str, ArchiveWriter] = {}  # by ArchiveFormat.key, opened lazily
        self.manifest: list[ManifestRow] = []
        self.errors: list[TaskError] = []
        self.bytes = 0
        self.terminators = 0  # plain records whose range left out their closing line ends
        self.src = ""  # the current source as a URI, for the manifest

    def writer(self, fmt: ArchiveFormat) -> ArchiveWriter:
        w = self.writers.get(fmt.key)
        if w is None:
            w = self.writers[fmt.key] = ArchiveWriter(self.out_dir, fmt, self.max_bytes, self.namer, self.when)
        return w

    def terminate(self, fmt: ArchiveFormat, w: ArchiveWriter, head: bytes | memoryview, length: int) -> bytes:
        """Append the closing bytes a plain record's range left out (lib.extract.terminator)."""
        if fmt.codec is not None:
            return b""
        term = missing_terminator(fmt.kind, bytes(head[:HEAD_SCAN]), length)
        if term:
            w.write(term)
            self.terminators += 1
        return term

    def fail(self, it: Item, err: ExtractError) -> None:
        self.errors.append((it.line_no, err.reason))

    def done(self, it: Item, w: ArchiveWriter, offset: int, length: int | None = None) -> None:
        n = it.length if length is None else length
        self.manifest.append((it.url, w.name, offset, n, it.line_no, self.src, it.offset))
        self.bytes += n

    # ---------------------------------------------------------------- ARC -> WARC
    def convert(self, src: Any, fmt: ArchiveFormat, items: list[Item]) -> None:
        """--output-format warc on ARC input: each record read (one ranged read), decoded,
        written as a WARC record in its own gzip member (lib.extract.arc2warc)."""
        for it in items:
            try:
                data = src.head(it.offset, it.length)
            except Exception as e:
                self.fail(it, ExtractError("read-error", f"{src.uri}: {type(e).__name__}: {e}"))
                continue
            try:
                if len(data) < it.length:
                    raise ExtractError(
                        "read-error", f"short read at {it.offset + len(data)}: file changed while reading"
                    )
                check_magic(fmt, data[:HEAD_BYTES])
                if self.verify:
                    check = RecordCheck(fmt, it.url)
                    check.feed(data)
                    check.finish()
                rec = self._arc_record(src.uri, fmt, data)
            except ExtractError as e:
                self.fail(it, e)
                continue
            member = gzip_member(arc_to_warc(rec, src.uri, it.offset))
            w = self.writer(_WARC_GZ)
            base = w.begin(len(member))
            w.write(member)
            w.commit()
            self.done(it, w, base, len(member))

    @staticmethod
    def _arc_record(uri: str, fmt: ArchiveFormat, data: bytes) -> Record:
        stream = io.BufferedReader(io.BytesIO(fmt.dict_frame + data))
        first = next(iter_records(stream, uri, max_content=MAX_CONVERT), None)
        if not isinstance(first, Record) or first.fmt != "arc":
            why = (
                f"{first.reason}: {first.detail}"
                if first is not None and not isinstance(first, Record)
                else "no ARC record"
            )
            raise ExtractError("not-member", f"range holds no ARC record to convert ({why})")
        if first.truncated or first.oversized:
            raise ExtractError(
                "not-member", f"ARC record {'cut off' if first.truncated else 'over the conversion limit'}"
            )
        return first

    # ---------------------------------------------------------------- fast path
    def copy_local(self, src: LocalSource, fmt: ArchiveFormat, items: list[Item]) -> None:
        """No --verify, local file: each stretch of adjacent ranges (up to READ_MAX bytes) is
        read with one ``pread`` and appended to the buffered output; a range over BIG bytes
        is copied by the kernel (``copy_file_range``) without passing through Python."""
        for run in plan_runs(items):
            k = 0
            while k < len(run):
                first = run[k]
                if first.length > BIG:
                    self._copy_big(src, fmt, first)
                    k += 1
                    continue
                j, span = k + 1, first.length
                while j < len(run) and run[j].length <= BIG and span + run[j].length <= READ_MAX:
                    span += run[j].length
                    j += 1
                data = src.head(first.offset, span)
                view = memoryview(data)
                for it in run[k:j]:
                    rel = it.offset - first.offset
                    if rel + it.length > len(data):  # the file shrank since we took its size
                        self.fail(
                            it,
                            ExtractError(
                                "read-error", f"short read at {first.offset + len(data)}: file changed while reading"
                            ),
                        )
                    elif not fmt.starts_record_at(data, rel, rel + it.length):
                        self.fail(it, magic_error(fmt, data[rel : rel + 8]))
                    else:
                        w = self.writer(fmt)
                        base = w.begin(it.length)
                        w.write(view[rel : rel + it.length])
                        term = self.terminate(fmt, w, view[rel : rel + min(it.length, HEAD_SCAN)], it.length)
                        w.commit()
                        self.done(it, w, base, it.length + len(term))
                view.release()
                k = j

    def _copy_big(self, src: LocalSource, fmt: ArchiveFormat, it: Item) -> None:
        head = src.head(it.offset, HEAD_SCAN if fmt.codec is None else HEAD_BYTES)
        if not fmt.starts_record(head):
            self.fail(it, magic_error(fmt, head))
            return
        w = self.writer(fmt)
        base = w.begin(it.length)
        copied = w.copy(src.fd, it.offset, it.length)
        if copied != it.length:
            w.abort(base)
            self.fail(it, ExtractError("read-error", f"short read at {it.offset + copied}: file changed while reading"))
            return
        term = self.terminate(fmt, w, head, it.length)
        w.commit()
        self.done(it, w, base, it.length + len(term))

    # ---------------------------------------------------------------- streaming path
    def copy_stream(self, src: Any, fmt: ArchiveFormat, items: list[Item]) -> None:
        """S3 input or --verify: read each run with one request, copy (and check) chunk by chunk."""
        for run in plan_runs(items, 0 if src.is_local else S3_MAX_GAP):
            reader = src.open_run(run[0].offset, run[-1].end)
            pos = run[0].offset
            try:
                for n, it in enumerate(run):
                    try:
                        pos = self._copy_one(reader, pos, fmt, it)
                    except Exception as e:  # a broken connection after retries: the rest of the run is lost
                        err = ExtractError("read-error", f"{src.uri}: {type(e).__name__}: {e}")
                        for rest in run[n:]:
                            self.fail(rest, err)
                        break
            finally:
                reader.close()

    def _copy_one(self, reader: Any, pos: int, fmt: ArchiveFormat, it: Item) -> int:
        """Copy one range from ``reader`` (at ``pos``); returns the reader's new position,
        which is past the range even when the range failed."""
        while pos < it.offset:  # a small gap inside an S3 run: read past it
            skipped = reader.read(min(CHUNK, it.offset - pos))
            if not skipped:
                self.fail(it, ExtractError("read-error", f"short read at {pos}: file ended early"))
                return pos
            pos += len(skipped)
        w = self.writer(fmt)
        check = RecordCheck(fmt, it.url) if self.verify else None
        remaining, base, err, head = it.length, None, None, b""
        try:
            while remaining:
                chunk = reader.read(min(CHUNK, remaining))
                if not chunk:
                    err = err or ExtractError("read-error", f"short read at {pos}: file ended early")
                    break
                if base is None and err is None:
                    try:
                        check_magic(fmt, chunk)
                    except ExtractError as e:
                        err = e  # keep reading: the stream must end up after this range
                pos += len(chunk)
                remaining -= len(chunk)
                if err is not None:
                    continue
                if base is None:
                    base = w.begin(it.length)
                if check is not None:
                    check.feed(chunk)
                if len(head) < HEAD_SCAN and fmt.codec is None:
                    head += chunk[: HEAD_SCAN - len(head)]
                w.write(chunk)
        except Exception:
            if base is not None:  # no partial record may stay in the output
                w.abort(base)
            raise
        term = b""
        if err is None and base is not None:
            term = self.terminate(fmt, w, head, it.length)
        if err is None and check is not None:
            try:
                check.feed(term)
                check.finish()
            except ExtractError as e:
                err = e
        if err is not None:
            if base is not None:
                w.abort(base)
                self.terminators -= bool(term)
            self.fail(it, err)
            return pos
        assert base is not None  # a range has at least one byte: an error-free read began a record
        w.commit()
        self.done(it, w, base, it.length + len(term))
        return pos

    def run(self, items: list[Item], real_root: str | tuple[str, ...] | None) -> None:
        items = sorted(items, key=lambda it: (it.uri, it.offset, it.line_no))
        for uri, same_file in itertools.groupby(items, key=lambda it: it.uri):
            group = list(same_file)
            self.src = tsv_escape(storage.normalize(uri))
            try:
                src = open_source(uri, real_root)
            except ExtractError as e:
                for it in group:
                    self.fail(it, e)
                continue
            try:
                try:
                    fmt = sniff_format(src.head, uri)
                except FormatError as e:
                    for it in group:
                        self.fail(it, ExtractError("bad-format", e.detail))
                    continue
                group, unmeasured = measure_items(src, fmt, group)  # lengths a CDX without S left out
                for it, err in unmeasured:
                    self.fail(it, err)
                inside = []
                for it in group:
                    if it.end > src.size:
                        self.fail(
                            it,
                            ExtractError(
                                "past-eof",
                                f"range {it.offset}+{it.length} ends past the end of {uri} ({src.size} bytes): "
                                "truncated file?",
                            ),
                        )
                    else:
                        inside.append(it)
                if self.to_warc and fmt.kind == "arc":
                    self.convert(src, fmt, inside)
                elif isinstance(src, LocalSource) and not self.verify:
                    self.copy_local(src, fmt, inside)
                else:
                    self.copy_stream(src, fmt, inside)
            finally:
                src.close()
        for w in self.writers.values():
            w.close()


def write_manifest_part(out_dir: str, task_id: int, rows: list[ManifestRow]) -> str:
    """The task's manifest rows as ``_parts/manifest-TTTTT.tsv`` (renamed into place)."""
    path = os.path.join(out_dir, PARTS_DIR, f"manifest-{task_id:05d}.tsv")
    with atomic.atomic_file(path, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        for url, name, off, n, line_no, src, src_off in rows:
            f.write(f"{url}\t{name}\t{off}\t{n}\t{line_no}\t{src}\t{src_off}\n")
    return path


def extract_items(
    task_id: int,
    items: list[Item],
    out_dir: str,
    *,
    max_bytes: int,
    verify: bool = False,
    real_root: str | tuple[str, ...] | None = None,
    when: dt.datetime | None = None,
    output_format: str = "same",
) -> dict[str, Any]:
    """Copy ``items`` into archives in ``out_dir`` named after ``task_id``.

    ``real_root``: the archives root with symlinks resolved (local roots only); files whose
    real path leaves it are refused. ``output_format="warc"`` writes ARC records as WARC
    (gzip members); "same" copies every record as it is. Returns ``{task, records, bytes, files, errors, manifest}``.
    """
    t = _Task(task_id, out_dir, max_bytes, verify, when or dt.datetime.now(dt.timezone.utc), output_format)
    t.run(items, real_root)
    files = [f for w in t.writers.values() for f in w.files]
    return {
        "task": task_id,
        "records": len(t.manifest),
        "bytes": t.bytes,
        "terminators_added": t.terminators,
        "files": [tuple(f) for f in files],
        "errors": t.errors,
        "manifest": write_manifest_part(out_dir, task_id, t.manifest) if t.manifest else None,
    }
