"""A key store on disk built with linear hashing (Litwin 1980), the design's Node doc store: any key
in one step (one bucket page, rarely its overflow pages), buckets split one at a time.

Files in the store's folder::

    buckets.dat    primary bucket pages, bucket b at offset b * PAGE (a split appends one)
    overflow.dat   overflow pages, chained from a full bucket page
    header         two slots of the table's state (level, split pointer, keys, pages, generation),
                   each with its CRC; the valid slot of the highest generation is the state
    journal        while a batch commits: the old images of the pages it changes (rollback)

Addressing: ``h`` = the first 8 bytes of SHA-1 of the key; with ``n = N0 * 2**level`` buckets at
the level's start, a key lives in bucket ``h % n``, or ``h % 2n`` when that is below the split
pointer. When the load factor (keys / (buckets * slots a page holds)) passes :data:`LOAD`, the
bucket at the split pointer is split into itself and bucket ``split + n``, and the pointer moves
on: one bucket at a time, as the design describes; at ``n`` the level goes up.

Crash safety: each page and header slot carries a CRC32, so a torn write is detected on read
(:class:`Corrupt`: the store is rebuilt from the published days). A batch is a transaction: the
old images of the pages it changes and the files' old sizes are written to ``journal`` and synced
first, then the pages, then the header in the other slot; the journal is removed last. Opening a
store whose journal names a generation the header has not reached rolls the pages back. A reader
that sees the generation change under it (or a journal) reads again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import struct
import zlib
from typing import Iterable, Iterator

from lib.errors import DailysliceError

PAGE = 4096
N0 = 4  # buckets of a new table
LOAD = 0.75  # split when keys pass this share of the primary pages' capacity
_PAGE_HEAD = struct.Struct("<IHIH")  # crc32 of the rest, entries, next overflow page + 1 (0: none), bytes used
_ENTRY = struct.Struct("<HH")  # key length, value length
_SLOT = 512
BUCKETS, OVERFLOW, HEADER, JOURNAL = "buckets.dat", "overflow.dat", "header", "journal"


class Corrupt(DailysliceError, RuntimeError):
    """A page or the header fails its checksum (a torn write): rebuild the store."""


def _hash(key: bytes) -> int:
    return int.from_bytes(hashlib.sha1(key).digest()[:8], "big")


def _pack(entries: list[tuple[bytes, bytes]], nxt: int) -> bytes:
    body = b"".join(_ENTRY.pack(len(k), len(v)) + k + v for k, v in entries)
    rest = struct.pack("<HIH", len(entries), nxt, len(body)) + body
    rest = rest.ljust(PAGE - 4, b"\0")
    return struct.pack("<I", zlib.crc32(rest)) + rest


def _unpack(page: bytes, where: str) -> tuple[list[tuple[bytes, bytes]], int]:
    if len(page) != PAGE:
        raise Corrupt(f"{where}: a page of {len(page)} bytes, {PAGE} expected (the file was cut)")
    crc, n, nxt, used = _PAGE_HEAD.unpack_from(page)
    if zlib.crc32(page[4:]) != crc:
        raise Corrupt(f"{where}: checksum mismatch (a torn write); rebuild the store")
    out, pos = [], _PAGE_HEAD.size
    for _ in range(n):
        kl, vl = _ENTRY.unpack_from(page, pos)
        pos += _ENTRY.size
        out.append((page[pos : pos + kl], page[pos + kl : pos + kl + vl]))
        pos += kl + vl
    return out, nxt


class LinearHash:
    """One store folder (module doc). ``get`` reads; ``put_many`` commits a batch (the caller holds
    the store's lease: one writer at a time)."""

    def __init__(self, folder: str, writer: bool = False) -> None:
        self.folder = folder
        if writer:  # a reader creates nothing and never rolls back: a writer may be committing
            os.makedirs(folder, exist_ok=True)
            for name in (BUCKETS, OVERFLOW):
                open(os.path.join(folder, name), "ab").close()
            self.recover()

    # ------------------------------------------------------------ header
    def _read_header(self) -> dict:
        path = os.path.join(self.folder, HEADER)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return {"generation": 0, "level": 0, "split": 0, "keys": 0, "buckets": N0, "overflow": 0, "meta": {}}
        best = None
        for slot in (data[:_SLOT], data[_SLOT : 2 * _SLOT]):
            if len(slot) < 8:
                continue
            crc, size = struct.unpack_from("<II", slot)
            body = slot[8 : 8 + size]
            if 0 < size <= _SLOT - 8 and zlib.crc32(body) == crc:
                state = json.loads(body)
                if best is None or state["generation"] > best["generation"]:
                    best = state
        if best is None:
            raise Corrupt(f"{path}: no header slot passes its checksum; rebuild the store")
        return best

    def _write_header(self, state: dict) -> None:
        body = json.dumps(state, sort_keys=True).encode()
        if len(body) > _SLOT - 8:
            raise ValueError("header state too large")
        slot = (struct.pack("<II", zlib.crc32(body), len(body)) + body).ljust(_SLOT, b"\0")
        path = os.path.join(self.folder, HEADER)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:  # the slot the current state is not in: a torn write leaves the other one whole
            os.pwrite(fd, slot, (state["generation"] % 2) * _SLOT)
            os.fsync(fd)
        finally:
            os.close(fd)

    def state(self) -> dict:
        """The committed state: generation, level, split pointer, keys, buckets, overflow pages, meta."""
        return self._read_header()

    # ------------------------------------------------------------ pages
    def _page(self, name: str, no: int) -> bytes:
        try:
            with open(os.path.join(self.folder, name), "rb") as f:
                f.seek(no * PAGE)
                data = f.read(PAGE)
        except FileNotFoundError:
            data = b""
        if not data and name == BUCKETS:  # a bucket of a table never committed: empty
            return _pack([], 0)
        return data

    @staticmethod
    def _bucket(h: int, st: dict) -> int:
        n = N0 << st["level"]
        b = h % n
        return h % (2 * n) if b < st["split"] else b

    def get(self, key: bytes) -> bytes | None:
        """The value of ``key`` (None: absent). Reads one bucket page and its overflow chain."""
        for _ in range(5):
            st = self._read_header()
            value = self._get(key, st)
            if self._read_header()["generation"] == st["generation"] and not os.path.exists(
                os.path.join(self.folder, JOURNAL)
            ):
                return value
        raise Corrupt(f"{self.folder}: the store kept changing during a look-up")

    def _get(self, key: bytes, st: dict) -> bytes | None:
        b = self._bucket(_hash(key), st)
        name, no = BUCKETS, b
        while True:
            entries, nxt = _unpack(self._page(name, no), f"{self.folder}/{name} page {no}")
            for k, v in entries:
                if k == key:
                    return v
            if not nxt:
                return None
            name, no = OVERFLOW, nxt - 1

    # ------------------------------------------------------------ writes
    def put_many(self, items: Iterable[tuple[bytes, bytes]], meta: dict | None = None) -> dict:
        # the caller opened the store as its writer, under the store's lease
        """Insert or replace ``items`` and set the header's ``meta`` (what the store holds), as one
        transaction; returns the new state. A value replaces an equal key's: a batch put twice
        changes nothing."""
        with self.batch(meta) as txn:
            for k, v in items:
                txn.set(k, v)
        return txn.st

    @contextlib.contextmanager
    def batch(self, meta: dict | None = None) -> Iterator[_Txn]:
        # the caller opened the store as its writer, under the store's lease
        """One transaction whose ``get`` sees its own ``set``s (a read-modify-write, as the digest
        store appends to a key's list); committed when the block ends, nothing of it on an error."""
        st = dict(self._read_header())
        txn = _Txn(self, st)
        yield txn
        st["meta"] = meta if meta is not None else st.get("meta", {})
        txn.commit()

    def recover(self) -> None:
        """Roll back a batch a crash interrupted (its journal names a generation never reached)."""
        path = os.path.join(self.folder, JOURNAL)
        if not os.path.exists(path):
            return
        with open(path, "rb") as f:
            data = f.read()
        body, trailer = data[:-8], data[-8:]
        if len(data) < 8 or trailer[:4] != b"END." or struct.unpack("<I", trailer[4:])[0] != zlib.crc32(body):
            os.remove(path)  # the journal was cut before its sync: no page was written yet
            return
        data = body
        head = json.loads(data[: data.index(b"\n")])
        if self._read_header()["generation"] >= head["generation"]:
            os.remove(path)  # the batch committed; the journal was all that was left
            return
        pos = data.index(b"\n") + 1
        with (
            open(os.path.join(self.folder, BUCKETS), "r+b") as fb,
            open(os.path.join(self.folder, OVERFLOW), "r+b") as fo,
        ):
            files = {BUCKETS: fb, OVERFLOW: fo}
            for name, no in head["pages"]:
                files[name].seek(no * PAGE)
                files[name].write(data[pos : pos + PAGE])
                pos += PAGE
            for name, size in head["sizes"].items():
                files[name].truncate(size)
                files[name].flush()
                os.fsync(files[name].fileno())
        os.remove(path)


class _Txn:
    """The pages one batch changes, in memory until :meth:`commit`."""

    def __init__(self, store: LinearHash, st: dict) -> None:
        self.store, self.st = store, st
        self.dirty: dict[tuple[str, int], tuple[list[tuple[bytes, bytes]], int]] = {}
        self.sizes = {n: os.path.getsize(os.path.join(store.folder, n)) for n in (BUCKETS, OVERFLOW)}
        self._slots = 0

    def slots(self) -> int:
        """Entries a page holds, from the first keys seen (keys and values here are of one shape)."""
        return self._slots or 32

    def _load(self, name: str, no: int) -> tuple[list[tuple[bytes, bytes]], int]:
        if (name, no) not in self.dirty:
            self.dirty[(name, no)] = _unpack(self.store._page(name, no), f"{self.store.folder}/{name} page {no}")
        return self.dirty[(name, no)]

    def _chain(self, b: int) -> list[tuple[bytes, bytes]]:
        out: list[tuple[bytes, bytes]] = []
        name, no = BUCKETS, b
        while True:
            entries, nxt = self._load(name, no)
            out += entries
            if not nxt:
                return out
            name, no = OVERFLOW, nxt - 1

    def _write_chain(self, b: int, entries: list[tuple[bytes, bytes]]) -> None:
        """Bucket ``b`` holding ``entries``: its pages reused in order, overflow pages added as needed
        (pages a shrunk chain no longer uses are unlinked and stay in the file, unused)."""
        name, no, pos = BUCKETS, b, 0
        room = PAGE - _PAGE_HEAD.size
        while True:
            _, nxt = self._load(name, no)
            page: list[tuple[bytes, bytes]] = []
            used = 0
            while pos < len(entries):
                size = _ENTRY.size + len(entries[pos][0]) + len(entries[pos][1])
                if used + size > room:
                    break
                page.append(entries[pos])
                used += size
                pos += 1
            if pos < len(entries) and not nxt:
                nxt = self.st["overflow"] + 1
                self.st["overflow"] += 1
                self.dirty[(OVERFLOW, nxt - 1)] = ([], 0)
            if pos == len(entries):  # the chain ends here: pages it no longer uses are left unlinked
                nxt = 0
            self.dirty[(name, no)] = (page, nxt)
            if not nxt:
                return
            name, no = OVERFLOW, nxt - 1

    def get(self, key: bytes) -> bytes | None:
        """The value of ``key`` as this transaction left it (None: absent)."""
        for k, v in self._chain(LinearHash._bucket(_hash(key), self.st)):
            if k == key:
                return v
        return None

    def set(self, key: bytes, value: bytes) -> None:
        """Insert or replace ``key``, splitting buckets while the load factor is passed."""
        if _ENTRY.size + len(key) + len(value) + _PAGE_HEAD.size > PAGE:
            raise ValueError(f"key and value of {len(key) + len(value)} bytes do not fit a {PAGE}-byte page")
        self.put(key, value)
        while self.st["keys"] > LOAD * self.st["buckets"] * self.slots():
            self.split()

    def put(self, key: bytes, value: bytes) -> None:
        b = LinearHash._bucket(_hash(key), self.st)
        entries = self._chain(b)
        for i, (k, _) in enumerate(entries):
            if k == key:
                entries[i] = (key, value)
                break
        else:
            entries.append((key, value))
            self.st["keys"] += 1
            if not self._slots:
                self._slots = max(1, (PAGE - _PAGE_HEAD.size) // (_ENTRY.size + len(key) + len(value)))
        self._write_chain(b, entries)

    def split(self) -> None:
        """Split the bucket at the split pointer into itself and ``split + n`` (one bucket)."""
        n = N0 << self.st["level"]
        s = self.st["split"]
        entries = self._chain(s)
        stay = [(k, v) for k, v in entries if _hash(k) % (2 * n) == s]
        move = [(k, v) for k, v in entries if _hash(k) % (2 * n) != s]
        new = s + n
        self.dirty.setdefault((BUCKETS, new), ([], 0))
        self.st["buckets"] = max(self.st["buckets"], new + 1)
        self._write_chain(s, stay)
        self._write_chain(new, move)
        self.st["split"] = s + 1
        if self.st["split"] == n:
            self.st["level"] += 1
            self.st["split"] = 0

    def commit(self) -> None:
        """Journal the old pages, write the new ones, then the header; remove the journal."""
        folder = self.store.folder
        for b in range(self.st["buckets"]):  # every primary bucket written once: no hole reads as a torn page
            if b * PAGE >= self.sizes[BUCKETS]:
                self.dirty.setdefault((BUCKETS, b), ([], 0))
        pages = sorted(self.dirty)
        old = [(name, no) for name, no in pages if no * PAGE < self.sizes[name]]
        jpath = os.path.join(folder, JOURNAL)
        head = {"generation": self.st["generation"] + 1, "pages": old, "sizes": self.sizes}
        with open(jpath, "wb") as j:
            j.write(json.dumps(head).encode() + b"\n")
            crc = zlib.crc32(json.dumps(head).encode() + b"\n")
            for name, no in old:
                page = self.store._page(name, no)
                crc = zlib.crc32(page, crc)
                j.write(page)
            j.write(b"END." + struct.pack("<I", crc))  # a journal without it is one cut before its sync
            j.flush()
            os.fsync(j.fileno())
        for name in (BUCKETS, OVERFLOW):
            with open(os.path.join(folder, name), "r+b") as f:
                for pname, no in pages:
                    if pname == name:
                        f.seek(no * PAGE)
                        entries, nxt = self.dirty[(pname, no)]
                        f.write(_pack(entries, nxt))
                f.flush()
                os.fsync(f.fileno())
        self.st["generation"] += 1
        self.store._write_header(self.st)
        os.remove(jpath)
