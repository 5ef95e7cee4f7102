"""SWAP slices: a collection spread over n roots with no file catalog (Smorul and JaJa, "a high
performance architecture for managing and storing web-harvested collections").

``locate(path, n) = MD5(path) mod n`` where ``path`` is the file's collection-relative
path (UTF-8, ``/`` separators) and MD5 is read as a big-endian integer. Copying every
slice into one folder rebuilds the collection, which is why a put refuses a path whose
components would be a file on one slice and a directory on another.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable

from lib.pages.keyspace import md5_int
from lib.placement.backends import DIR, FILE, TMP_SUFFIX, Root, is_temp, open_root
from lib.placement.config import SliceConfig, from_roots, load
from lib.placement.errors import NamespaceError, PlacementError
from lib.placement.rebalance_plan import read_plan_header


def locate(rel: str, n: int) -> int:
    """The slice (0..n-1) that holds collection-relative path ``rel``."""
    if n < 1:
        raise ValueError(f"number of slices must be >= 1, got {n}")
    return md5_int(rel) % n


def check_path(rel: str) -> str:
    """Return ``rel`` if it is a valid collection path, else raise ValueError saying why.

    Paths are relative, use ``/``, and have no empty, ``.`` or ``..`` components: any other
    spelling would hash to a different slice than the file it names.
    """
    if not rel:
        raise ValueError("empty path")
    if rel.startswith("/"):
        raise ValueError(f"{rel!r}: collection paths are relative (no leading '/')")
    if "\\" in rel or "\0" in rel:
        raise ValueError(f"{rel!r}: paths use '/' separators and no NUL or '\\'")
    for part in rel.split("/"):
        if part in ("", ".", ".."):
            raise ValueError(f"{rel!r}: empty, '.' or '..' path component")
        if is_temp(part):
            raise ValueError(f"{rel!r}: '.*{TMP_SUFFIX}' names are reserved for unfinished writes")
    return rel


def ancestors(rel: str) -> list[str]:
    """Proper directory prefixes: ``a/b/c`` -> ``["a", "a/b"]``."""
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


@dataclass
class VerifyReport:
    files: int = 0
    bytes: int = 0
    misplaced: list[tuple[str, int, int]] = field(default_factory=list)  # (path, on slice, belongs on)
    duplicates: dict[str, list[int]] = field(default_factory=dict)  # path -> slices holding it
    collisions: list[str] = field(default_factory=list)  # paths that are a file and a directory
    leftovers: list[tuple[int, str]] = field(default_factory=list)  # unfinished local writes

    @property
    def ok(self) -> bool:
        return not (self.misplaced or self.duplicates or self.collisions)

    def problems(self) -> list[str]:
        out = [f"misplaced: {p} is on slice {s}, belongs on slice {t}" for p, s, t in self.misplaced]
        out += [f"duplicate: {p} is on slices {', '.join(map(str, s))}" for p, s in sorted(self.duplicates.items())]
        out += [f"collision: {p} is a file on one slice and a directory on another" for p in self.collisions]
        return out


class Collection:
    """A collection of slices described by a :class:`SliceConfig`."""

    def __init__(self, cfg: SliceConfig | list[str]):
        self.cfg = from_roots(cfg) if isinstance(cfg, list) else cfg
        self.roots: list[Root] = [open_root(u) for u in self.cfg.roots]
        # directory -> name -> {slice: kind}, merged over the slices; filled on first use
        self._dirs: dict[str, dict[str, dict[int, str]]] = {}
        #: per-slice directory listings made by the collision check (the cache keeps this low)
        self.listings = 0

    @property
    def n(self) -> int:
        return self.cfg.slices

    def locate(self, rel: str) -> int:
        return locate(rel, self.n)

    def uri(self, rel: str) -> str:
        """Where ``rel`` is stored (or would be)."""
        return self.roots[self.locate(rel)].uri_of(rel)

    # -- namespace check ---------------------------------------------------------------
    def _children(self, d: str) -> dict[str, dict[int, str]]:
        kids = self._dirs.get(d)
        if kids is None:
            kids = {}
            for i, root in enumerate(self.roots):
                self.listings += 1
                for name, kind in root.children(d).items():
                    kids.setdefault(name, {})[i] = kind
            self._dirs[d] = kids
        return kids

    def check_put(self, rel: str) -> int:
        """Raise NamespaceError if ``rel`` cannot be stored; return its slice."""
        check_path(rel)
        target = self.locate(rel)
        parts = rel.split("/")
        d = ""
        for i, name in enumerate(parts):
            here = self._children(d).get(name, {})
            path = f"{d}/{name}" if d else name
            if i < len(parts) - 1:
                files = sorted(s for s, k in here.items() if k == FILE)
                if files:
                    raise NamespaceError(f"cannot put {rel!r}: {path!r} is a file on slice {files[0]}")
                if not here:
                    # nothing below here exists on any slice: deeper components are new too
                    for a in ancestors(rel)[i:]:
                        self._dirs.setdefault(a, {})
                    break
            else:
                dirs = sorted(s for s, k in here.items() if k == DIR)
                if dirs:
                    raise NamespaceError(f"cannot put {rel!r}: it is a directory on slice {dirs[0]}")
                elsewhere = sorted(s for s, k in here.items() if k == FILE and s != target)
                if elsewhere:
                    raise PlacementError(
                        f"cannot put {rel!r}: a copy is on slice {elsewhere[0]}, not its slice {target} (run verify)"
                    )
            d = path
        return target

    def _record(self, rel: str, slice_: int) -> None:
        d = ""
        for a in ancestors(rel):
            self._dirs.setdefault(d, {}).setdefault(a.rsplit("/", 1)[-1], {})[slice_] = DIR
            d = a
        self._dirs.setdefault(d, {}).setdefault(rel.rsplit("/", 1)[-1], {})[slice_] = FILE

    def forget(self) -> None:
        """Drop the namespace cache (after other writers changed the slices)."""
        self._dirs.clear()

    # -- put / get / delete --------------------------------------------------------------
    def _writable(self) -> None:
        if self.cfg.rebalancing():
            raise PlacementError(f"a rebalance is in progress ({self.cfg.plan_path}): finish it before writing")

    def put_stream(self, rel: str, src: BinaryIO) -> str:
        """Store ``rel`` on its slice from a stream; returns the stored URI."""
        self._writable()
        s = self.check_put(rel)
        self.roots[s].write_stream(rel, src)
        self._record(rel, s)
        return self.roots[s].uri_of(rel)

    def put_bytes(self, rel: str, data: bytes) -> str:
        return self.put_stream(rel, io.BytesIO(data))

    def put_file(self, local_file: str, rel: str) -> str:
        with open(local_file, "rb") as f:
            return self.put_stream(rel, f)

    def delete(self, rel: str) -> None:
        """Remove ``rel`` from its slice."""
        self._writable()
        check_path(rel)
        self.roots[self.locate(rel)].delete(rel)
        for d in ["", *ancestors(rel)]:
            self._dirs.pop(d, None)

    def candidates(self, rel: str) -> list[int]:
        """Slices that may hold ``rel``: its slice, plus its old one during a rebalance."""
        out = [self.locate(rel)]
        plan = self.cfg.plan_path
        if plan is not None and self.cfg.rebalancing():
            hdr = read_plan_header(plan)
            for n in (hdr["to"], hdr["from"]):
                s = locate(rel, n)
                if s not in out:
                    out.append(s)
        return out

    def open(self, rel: str) -> BinaryIO:
        """Open ``rel`` for reading; FileNotFoundError names where it was looked for."""
        check_path(rel)
        tried = []
        for s in self.candidates(rel):
            if self.roots[s].kind(rel) == FILE:
                return self.roots[s].open(rel)
            tried.append(f"slice {s} ({self.roots[s].uri_of(rel)})")
        raise FileNotFoundError(f"{rel!r} not found on {', '.join(tried)}")

    def get_bytes(self, rel: str) -> bytes:
        with self.open(rel) as f:
            return f.read()

    # -- listing, verify, recover -------------------------------------------------------
    def ls(self, prefix: str = "") -> list[tuple[str, int, int]]:
        """``(path, size, slice)`` of every file below ``prefix`` on any root, sorted by path."""
        if prefix:
            check_path(prefix.rstrip("/"))
        out = [(rel, size, i) for i, root in enumerate(self.roots) for rel, size in root.walk(prefix.rstrip("/"))]
        return sorted(out)

    def verify(self) -> VerifyReport:
        """Check that every file is on the slice ``locate`` says, once, with no collisions."""
        rep = VerifyReport()
        where: dict[str, list[int]] = {}
        for rel, size, s in self.ls():
            rep.files += 1
            rep.bytes += size
            where.setdefault(rel, []).append(s)
            want = self.locate(rel)
            if s != want:
                rep.misplaced.append((rel, s, want))
        rep.duplicates = {r: s for r, s in where.items() if len(s) > 1}
        dirs = {a for rel in where for a in ancestors(rel)}
        rep.collisions = sorted(dirs & where.keys())
        for i, root in enumerate(self.roots):
            rep.leftovers += [(i, p) for p in root.leftovers()]
        return rep

    def recover(self, out_uri: str) -> dict:
        """Copy every slice into one (empty) folder and check it equals the collection."""
        rep = self.verify()
        if rep.duplicates or rep.collisions:
            raise PlacementError("cannot recover: " + "; ".join(rep.problems()[:5]))
        out = open_root(out_uri)
        if next(iter(out.walk()), None) is not None:
            raise PlacementError(f"recover target {out.uri} is not empty")
        files = self.ls()
        for rel, _, s in files:
            out.copy_from(self.roots[s], rel)
        got = {rel: size for rel, size in out.walk()}
        want = {rel: size for rel, size, _ in files}
        if got != want:
            missing, extra = sorted(want.keys() - got.keys()), sorted(got.keys() - want.keys())
            raise PlacementError(f"recovered folder differs: missing {missing[:5]}, extra {extra[:5]}")
        for rel, _, s in files:
            if out.digest(rel) != self.roots[s].digest(rel):
                raise PlacementError(f"recovered {rel!r} differs from slice {s}")
        return {"out": out.uri, "files": len(files), "bytes": sum(want.values())}


def collection_of(config: str | SliceConfig | Iterable[str]) -> Collection:
    """A Collection from a config file path, a SliceConfig or a list of roots."""
    if isinstance(config, str):
        return Collection(load(config))
    if isinstance(config, SliceConfig):
        return Collection(config)
    return Collection(list(config))
