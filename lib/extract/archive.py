"""Output archives: header records, rolling at a size limit, names from task id + counter.

Every output file starts with its own header: a ``warcinfo`` record for WARC, an ARC v1
``filedesc://`` record for ARC, compressed as the records are (its own gzip member, zstd
or LZ4 frame). A WARC-zstd file with a dictionary starts with the source's dictionary
frame, copied as it is, and its header frame is compressed with that dictionary.
Files are opened lazily when a record arrives and deleted on close when no record made it
in, so a task without good records writes nothing (no header-only files).
"""

from __future__ import annotations

import datetime as dt
import errno
import itertools
import os
import struct
import uuid
import zlib
from typing import Callable, NamedTuple

import lz4.frame
import zstandard

from lib.extract.formats import ArchiveFormat
from lib.store import atomic

SOFTWARE = "dailyslice-extract"
#: Heritrix marks ARC gzip members with an ``LX`` extra subfield; we do the same on the header.
HERITRIX_EXTRA = b"LX" + struct.pack("<H", 4) + b"\0\0\0\0"
_COPY_CHUNK = 1 << 30
_BUFFER = 4 << 20  # output is written in blocks of this size: few syscalls for small records


def gzip_member(data: bytes, extra: bytes | None = None) -> bytes:
    """``data`` as one complete gzip member (RFC 1952), optionally with an FEXTRA field."""
    flags = 0x04 if extra else 0x00
    head = b"\x1f\x8b\x08" + bytes([flags]) + b"\0\0\0\0" + b"\x00\x03"  # mtime 0, OS unix
    if extra:
        head += struct.pack("<H", len(extra)) + extra
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    return head + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def warcinfo_record(filename: str, when: dt.datetime) -> bytes:
    """An uncompressed WARC/1.0 ``warcinfo`` record naming ``filename``."""
    body = (
        f"software: {SOFTWARE}\r\n"
        "format: WARC File Format 1.0\r\n"
        "description: records copied byte for byte by offset and length; see manifest.tsv\r\n"
    ).encode()
    stamp = when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    # Deterministic id: a re-run of the same job at the same time writes the same bytes.
    rid = uuid.uuid5(uuid.NAMESPACE_URL, f"{SOFTWARE}:{filename}:{stamp}")
    head = (
        "WARC/1.0\r\n"
        "WARC-Type: warcinfo\r\n"
        f"WARC-Date: {stamp}\r\n"
        f"WARC-Filename: {filename}\r\n"
        f"WARC-Record-ID: <urn:uuid:{rid}>\r\n"
        "Content-Type: application/warc-fields\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    return head + body + b"\r\n\r\n"


def arc_filedesc_record(filename: str, when: dt.datetime) -> bytes:
    """An uncompressed ARC v1 ``filedesc://`` header record; its length field counts the
    bytes after the first line, excluding the record's trailing newline."""
    body = f"1 0 {SOFTWARE}\nURL IP-address Archive-date Content-type Archive-length\n".encode()
    stamp = when.astimezone(dt.timezone.utc).strftime("%Y%m%d%H%M%S")
    name = filename.rsplit(".arc", 1)[0] + ".arc" if ".arc" in filename else filename
    return f"filedesc://{name} 0.0.0.0 {stamp} text/plain {len(body)}\n".encode() + body + b"\n"


def compress_record(fmt: ArchiveFormat, record: bytes) -> bytes:
    """``record`` as one compressed unit of ``fmt`` (gzip member, zstd or LZ4 frame)."""
    if fmt.codec == "gzip":
        return gzip_member(record, extra=HERITRIX_EXTRA if fmt.kind == "arc" else None)
    if fmt.codec == "zstd":
        d = fmt.dictionary
        zd = zstandard.ZstdCompressionDict(d) if d is not None else None
        return zstandard.ZstdCompressor(level=3, dict_data=zd).compress(record)
    if fmt.codec == "lz4":
        return lz4.frame.compress(record)
    return record


def header_bytes(fmt: ArchiveFormat, filename: str, when: dt.datetime) -> bytes:
    """The first bytes of a new output file of format ``fmt``."""
    if fmt.kind == "warc":
        record = warcinfo_record(filename, when)
    else:
        record = arc_filedesc_record(filename, when)
    return fmt.dict_frame + compress_record(fmt, record)


def task_namer(task_id: int, prefix: str = "extract") -> Callable[[str], str]:
    """File names ``PREFIX-TTTTT-CCCCC.FMT``: task id + a counter shared by all formats."""
    counter = itertools.count()
    return lambda fmt: f"{prefix}-{task_id:05d}-{next(counter):05d}.{fmt}"


class OutputFile(NamedTuple):
    name: str
    size: int
    records: int


_copy_file_range_ok = hasattr(os, "copy_file_range")


def copy_fd_range(src_fd: int, offset: int, n: int, dst_fd: int) -> int:
    """Copy ``n`` bytes at ``offset`` of ``src_fd`` to the current position of ``dst_fd``.

    Uses ``copy_file_range`` (the kernel copies, nothing passes through Python) and falls
    back to ``pread``/``write`` where the file systems do not support it. Returns the bytes
    copied: fewer than ``n`` only when the source ends first.
    """
    global _copy_file_range_ok
    done = 0
    if _copy_file_range_ok:
        try:
            while done < n:
                k = os.copy_file_range(src_fd, dst_fd, min(n - done, _COPY_CHUNK), offset + done)
                if k == 0:
                    return done
                done += k
            return done
        except OSError as e:
            if e.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF):
                raise
            _copy_file_range_ok = False
    while done < n:
        data = os.pread(src_fd, min(n - done, 1 << 20), offset + done)
        if not data:
            break
        write_all(dst_fd, data)
        done += len(data)
    return done


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    view = memoryview(data)
    while view:
        k = os.write(fd, view)
        view = view[k:]


class ArchiveWriter:
    """Appends records of one format to ``out_dir``, rolling to a new file when the next
    record would push a non-empty file past ``max_bytes`` (a bigger record gets its own file).

    Protocol per record: ``begin(length)`` (returns the record's offset), then ``write``/
    ``copy`` its bytes, then ``commit()``, or ``abort(offset)`` to cut it off again.
    ``write`` is buffered; ``size`` counts the buffered bytes too.
    """

    def __init__(
        self, out_dir: str, fmt: ArchiveFormat, max_bytes: int, namer: Callable[[str], str], when: dt.datetime
    ):
        self.out_dir, self.fmt, self.max_bytes, self.namer, self.when = out_dir, fmt, max_bytes, namer, when
        self.fd: int | None = None
        self.name = ""
        # Written under a temp name unique to this task attempt (lib.store.atomic), renamed when
        # complete: a retried or speculative attempt never writes into a file another one writes.
        self.tmp = ""
        self.size = 0
        self.flushed = 0  # bytes already in the file (the rest is in buf)
        self.buf = bytearray()
        self.records = 0
        self.files: list[OutputFile] = []

    def begin(self, length: int) -> int:
        if self.fd is not None and self.records and self.size + length > self.max_bytes:
            self.close()
        if self.fd is None:
            self.name = self.namer(self.fmt.suffix)
            self.tmp = atomic.temp_path(os.path.join(self.out_dir, self.name))
            self.fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            self.size = self.flushed = self.records = 0
            self.write(header_bytes(self.fmt, self.name, self.when))
        return self.size

    def write(self, data: bytes | memoryview) -> None:
        self.buf += data
        self.size += len(data)
        if len(self.buf) >= _BUFFER:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            assert self.fd is not None
            write_all(self.fd, self.buf)
            self.flushed += len(self.buf)
            self.buf.clear()

    def copy(self, src_fd: int, offset: int, n: int) -> int:
        """Let the kernel copy ``n`` bytes of ``src_fd`` (big records)."""
        assert self.fd is not None
        self.flush()
        k = copy_fd_range(src_fd, offset, n, self.fd)
        self.size += k
        self.flushed += k
        return k

    def commit(self, count: int = 1) -> None:
        self.records += count

    def abort(self, offset: int) -> None:
        assert self.fd is not None
        if offset >= self.flushed:
            del self.buf[offset - self.flushed :]
        else:
            self.buf.clear()
            os.ftruncate(self.fd, offset)
            os.lseek(self.fd, offset, os.SEEK_SET)
            self.flushed = offset
        self.size = offset

    def close(self) -> None:
        if self.fd is None:
            return
        if self.records:
            self.flush()
        self.buf.clear()
        os.close(self.fd)
        self.fd = None
        path = os.path.join(self.out_dir, self.name)
        if self.records == 0:
            atomic.discard(self.tmp)  # header only: nothing was extracted into it
        else:
            atomic.replace(self.tmp, path)
            self.files.append(OutputFile(self.name, self.size, self.records))
