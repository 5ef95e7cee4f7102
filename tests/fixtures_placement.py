"""Helpers shared by the placement tests (tests/placement/test_placement*.py): build slice configs
and collections in temp folders, read a collection back, generate collision-free paths."""

from __future__ import annotations

import json
import os

from hypothesis import strategies as st

from lib.placement.swap import Collection, ancestors
from lib.placement.config import load

# few short names, so generated paths share folders and would collide often if not filtered
COMPONENT = st.sampled_from(["a", "b", "c", "dir", "é", "日本", "x y", "_SUCCESS", "part-0.parquet"])
PATH = st.lists(COMPONENT, min_size=1, max_size=4).map("/".join)


def collision_free(paths: list[str]) -> list[str]:
    """Keep paths in order, dropping any that would be a file and a directory at once."""
    files: set[str] = set()
    dirs: set[str] = set()
    for p in paths:
        anc = ancestors(p)
        if p in files or p in dirs or any(a in files for a in anc):
            continue
        files.add(p)
        dirs.update(anc)
    return sorted(files)


COLLECTION = st.lists(PATH, min_size=1, max_size=10).map(collision_free).flatmap(
    lambda ps: st.fixed_dictionaries({p: st.binary(min_size=0, max_size=64) for p in ps})
)


def make_config(folder: str, roots: int | list[str], slices: int, name: str = "slices.json") -> str:
    """Write a slices config in ``folder``; an int means that many local roots in the folder."""
    if isinstance(roots, int):
        roots = [os.path.join(folder, f"slice{i}") for i in range(roots)]
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    if name.endswith(".json"):
        text = json.dumps({"roots": roots, "slices": slices})
    else:
        text = "roots = [" + ", ".join(json.dumps(r) for r in roots) + f"]\nslices = {slices}\n"
    with open(path, "w") as f:
        f.write(text)
    return path


def fill(config_path: str, files: dict[str, bytes]) -> Collection:
    coll = Collection(load(config_path))
    for rel, data in files.items():
        coll.put_bytes(rel, data)
    return coll


def snapshot(coll: Collection) -> dict[str, bytes]:
    """Path -> bytes of the whole collection, read from the slices; each path exactly once."""
    listed = coll.ls()
    paths = [rel for rel, _, _ in listed]
    assert len(paths) == len(set(paths)), f"a file is on two slices: {listed}"
    return {rel: coll.roots[s].read_bytes(rel) for rel, _, s in listed}


def layout(coll: Collection) -> dict[str, int]:
    return {rel: s for rel, _, s in coll.ls()}
