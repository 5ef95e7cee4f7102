"""An in-memory stand-in for python-irodsclient's ``iRODSSession`` (the calls the stagers make),
recording them; shared by the staging tests."""

from __future__ import annotations

import base64
import hashlib
import posixpath


def sha2(data: bytes) -> str:
    """iRODS's SHA-256 checksum format: ``sha2:`` + base64 of the digest."""
    return "sha2:" + base64.b64encode(hashlib.sha256(data).digest()).decode()


class FakeIrods:
    """In-memory stand-in for ``iRODSSession`` with the calls the stager makes; records them.

    Like a server, it computes the checksum of what it stored when asked to register one,
    and ``chksum(..., verifyChksum=...)`` fails when the stored bytes no longer match."""

    def __init__(self, corrupt_puts: bool = False, hash_scheme: str = "sha2"):
        self.hash_scheme = hash_scheme
        self.objects: dict[str, dict] = {}
        self.colls: set[str] = {"/"}
        self.calls: list[tuple] = []
        self.corrupt_puts = corrupt_puts
        self.collections = _Colls(self)
        self.data_objects = _Objs(self)
        self.cleanups = 0

    def cleanup(self) -> None:
        self.cleanups += 1


class _Obj:
    def __init__(self, fake: FakeIrods, path: str):
        self.path, self.name = path, posixpath.basename(path)
        self.checksum = fake.objects[path]["checksum"]


class _Coll:
    def __init__(self, fake: FakeIrods, path: str):
        self.fake, self.path = fake, path

    def walk(self):
        subs = sorted(c for c in self.fake.colls if posixpath.dirname(c) == self.path and c != self.path)
        objs = [_Obj(self.fake, p) for p in sorted(self.fake.objects) if posixpath.dirname(p) == self.path]
        yield self, [_Coll(self.fake, s) for s in subs], objs
        for s in subs:
            yield from _Coll(self.fake, s).walk()


class _Colls:
    def __init__(self, fake):
        self.fake = fake

    def exists(self, path):
        return path in self.fake.colls

    def get(self, path):
        assert path in self.fake.colls
        return _Coll(self.fake, path)

    def create(self, path, recurse=True):
        self.fake.calls.append(("mkcoll", path))
        while path not in self.fake.colls:
            self.fake.colls.add(path)
            path = posixpath.dirname(path)


class _Objs:
    def __init__(self, fake):
        self.fake = fake

    def exists(self, path):
        return path in self.fake.objects

    def get(self, path):
        return _Obj(self.fake, path)

    def put(self, local, path, **kw):
        from irods.keywords import FORCE_FLAG_KW, REG_CHKSUM_KW

        self.fake.calls.append(("put", path, dict(kw)))
        if path in self.fake.objects and FORCE_FLAG_KW not in kw:
            raise RuntimeError("OVERWRITE_WITHOUT_FORCE_FLAG")
        assert posixpath.dirname(path) in self.fake.colls, f"no collection for {path}"
        data = open(local, "rb").read()
        if self.fake.corrupt_puts and data:
            data = bytes([data[0] ^ 1]) + data[1:]
        registered = sha2(data) if self.fake.hash_scheme == "sha2" else hashlib.md5(data).hexdigest()
        self.fake.objects[path] = {"data": data, "checksum": registered if REG_CHKSUM_KW in kw else None}

    def chksum(self, path, **kw):
        from irods.keywords import VERIFY_CHKSUM_KW

        self.fake.calls.append(("chksum", path, dict(kw)))
        o = self.fake.objects[path]
        actual = sha2(o["data"]) if self.fake.hash_scheme == "sha2" else hashlib.md5(o["data"]).hexdigest()
        if VERIFY_CHKSUM_KW in kw:
            if o["checksum"] != actual:
                raise RuntimeError("USER_CHKSUM_MISMATCH")
            return ""
        o["checksum"] = actual
        return actual

    def unlink(self, path, force=False):
        self.fake.calls.append(("unlink", path, force))
        del self.fake.objects[path]
