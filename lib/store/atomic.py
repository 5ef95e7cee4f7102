"""Write a local file so that it appears whole under its final name, or not at all.

One scheme for every writer in lib: the bytes go to a hidden sibling ``.NAME.tmp-<pid>-<rand>``
(:func:`temp_path`) in the final file's folder: the same filesystem, so the rename is atomic;
hidden, so readers and listings that skip dot files never see it; recognisable, so a job's
cleanup of killed attempts finds it (:func:`is_temp`). When complete it is renamed over the
final name (:func:`replace`), on error it is removed (:func:`discard`). :func:`atomic_file`
(a file object) and :func:`atomic_path` (a path, for pyarrow) do all three around a ``with``
block; writers that stream through a class of their own (CIFF output, index metadata,
extract archives, preprocess pages) call the three functions themselves.

Two writers keep a temp name of their own because their cleanup reads it: slice roots pass
``tmp=`` (a fixed ``.NAME.swaptmp`` that a re-run overwrites, :mod:`lib.placement.backends`)
and the JVM class archive hands :func:`replace` the ``NAME.<pid>.tmp`` the JVM wrote
(:mod:`lib.runtime.jvm_cache`). Whole folders are swapped by :func:`lib.store.storage.commit_dir`;
S3 has no rename, its objects appear whole when their upload completes
(:func:`lib.store.storage.upload_tree` uploads the marker last). Files written straight into a
job's private work folder need none of this: the folder is published whole; task outputs in
it still use a temp name, as retried and speculative attempts write the same names.

fsync: a rename is atomic for other processes and survives a killed process, but after a
power loss the new name can be there before the data reached the disk. ``fsync=True`` (the
file's data before the rename, the folder entry after it) is what we choose where such a
file would look complete on its own: markers (``_SUCCESS``) and the URL database's state
file, copies published one by one to a long-term home (slice roots, staging folders) and
the index shards (CIFF and metadata). Files assembled inside a job's work folder (page and
capture parts, spill segments, manifest parts, reports) are not synced one by one: syncing
thousands of part files would cost more than re-running the day a power loss interrupted.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from typing import IO, Any, Iterator

_TEMP = re.compile(r"\..+\.tmp-\d+-[0-9a-f]{8}")


def temp_path(final: str) -> str:
    """The temporary name to write ``final`` under: ``.NAME.tmp-<pid>-<8 hex digits>`` beside
    it (unique per process and call, so concurrent attempts never share one)."""
    folder, name = os.path.split(final)
    return os.path.join(folder, f".{name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")


def is_temp(name: str) -> bool:
    """Whether the file name (or path) is a :func:`temp_path` name: an unfinished write."""
    return _TEMP.fullmatch(os.path.basename(name)) is not None


def _fsync_dir(folder: str) -> None:
    try:
        fd = os.open(folder or ".", os.O_RDONLY)
    except OSError:  # some filesystems cannot open a folder for syncing: the rename stands anyway
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def replace(tmp: str, final: str, fsync: bool = False) -> None:
    """Rename the finished ``tmp`` over ``final``; with ``fsync`` its data reaches the disk
    before the rename and the folder entry after it (module doc)."""
    if fsync:
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    os.replace(tmp, final)
    if fsync:
        _fsync_dir(os.path.dirname(final))


def discard(tmp: str | None) -> None:
    """Remove an unfinished temporary file (missing or None is fine)."""
    if tmp:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)


@contextlib.contextmanager
def atomic_path(final: str, fsync: bool = False, tmp: str | None = None) -> Iterator[str]:
    """The temporary path to write ``final`` under, for writers that open files by name
    (pyarrow): on leaving the block without error it is renamed to ``final``, on an error
    removed and ``final`` left as it was. Creates the folder. ``tmp``: a temp name of the
    caller's (module doc)."""
    os.makedirs(os.path.dirname(os.path.abspath(final)), exist_ok=True)
    tmp = tmp or temp_path(final)
    try:
        yield tmp
        replace(tmp, final, fsync=fsync)
    except BaseException:
        discard(tmp)
        raise


@contextlib.contextmanager
def atomic_file(final: str, mode: str = "wb", fsync: bool = False, tmp: str | None = None,
                **open_args: Any) -> Iterator[IO[Any]]:
    """:func:`atomic_path`, opened: the file object to write ``final`` with (``open_args``
    go to ``open``); closed, then renamed when the block ends without error."""
    with atomic_path(final, fsync, tmp) as path, open(path, mode, **open_args) as f:
        yield f


def write_bytes(final: str, data: bytes, fsync: bool = False) -> None:
    """Write a whole (small) file atomically."""
    with atomic_file(final, "wb", fsync=fsync) as f:
        f.write(data)
