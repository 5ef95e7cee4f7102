"""Slices on real S3 prefixes (the loopback S3 server), alone and mixed with local roots."""

from __future__ import annotations

import os
import tomllib

import pytest

from lib.placement.config import load
from lib.placement.rebalance import rebalance
from lib.placement.slice_publish import publish_tree
from lib.placement.swap import Collection, NamespaceError, locate
from lib.store import s3
from tests.fixtures_placement import make_config, snapshot

FILES = {f"crawl/{d}/{i}.warc.gz": b"W%d-%s" % (i, d.encode()) * (i + 1) for d in ("x", "y") for i in range(10)}


def _keys(bucket: str) -> set[str]:
    resp = s3.client().list_objects_v2(Bucket=bucket)
    return {o["Key"] for o in resp.get("Contents", [])}


def test_s3_slices_put_get_ls_collisions(s3_bucket, tmp_path):
    roots = [f"s3://{s3_bucket}/coll/slice{i}" for i in range(3)]
    cfg = make_config(str(tmp_path), roots, 3)
    coll = Collection(load(cfg))
    for rel, data in FILES.items():
        coll.put_bytes(rel, data)
    assert _keys(s3_bucket) == {f"coll/slice{locate(r, 3)}/{r}" for r in FILES}
    assert snapshot(coll) == FILES
    assert coll.get_bytes("crawl/x/3.warc.gz") == FILES["crawl/x/3.warc.gz"]
    coll.put_bytes("x y/日本.txt", "ü".encode())  # keys are the UTF-8 paths, spaces and all
    assert f"coll/slice{locate('x y/日本.txt', 3)}/x y/日本.txt" in _keys(s3_bucket)
    assert Collection(load(cfg)).get_bytes("x y/日本.txt") == "ü".encode()
    # S3 itself would accept both keys; the check must not
    fresh = Collection(load(cfg))
    with pytest.raises(NamespaceError):
        fresh.put_bytes("crawl/x/3.warc.gz/inner", b"no")
    with pytest.raises(NamespaceError):
        fresh.put_bytes("crawl", b"no")
    rep = coll.verify()
    assert rep.ok and rep.files == len(FILES) + 1


def test_s3_rebalance_double_and_halve_with_crash(s3_bucket, tmp_path):
    roots = [f"s3://{s3_bucket}/c/{i}" for i in range(4)]
    cfg = make_config(str(tmp_path), roots, 2)
    coll = Collection(load(cfg))
    for rel, data in FILES.items():
        coll.put_bytes(rel, data)
    before = {rel: s for rel, _, s in coll.ls()}

    def crash(step: str, k: int) -> None:
        if step == "verify" and k == 2:
            raise RuntimeError("injected")

    with pytest.raises(RuntimeError):
        rebalance(cfg, 4, hook=crash, workers=4)
    rebalance(cfg, 4, workers=4)
    coll = Collection(load(cfg))
    assert snapshot(coll) == FILES
    assert all(s in (before[r], before[r] + 2) and s == locate(r, 4) for r, _, s in coll.ls())
    rebalance(cfg, 2)
    coll = Collection(load(cfg))
    assert {rel: s for rel, _, s in coll.ls()} == before
    assert snapshot(coll) == FILES


def test_mixed_local_and_s3_slices_recover_and_publish(s3_bucket, tmp_path):
    roots = [str(tmp_path / "disk0"), f"s3://{s3_bucket}/s1", str(tmp_path / "disk2"), f"s3://{s3_bucket}/s3"]
    cfg = make_config(str(tmp_path), roots, 2, name="slices.toml")
    day = tmp_path / "day"
    for rel, data in FILES.items():
        (day / rel).parent.mkdir(parents=True, exist_ok=True)
        (day / rel).write_bytes(data)
    (day / "_SUCCESS").write_bytes(b"")
    res = publish_tree(str(day), cfg, "index/2026-01/15")
    assert res["files"] == len(FILES) + 1 and set(res["per_slice"]) == {0, 1}
    want = {f"index/2026-01/15/{r}": d for r, d in FILES.items()} | {"index/2026-01/15/_SUCCESS": b""}
    assert snapshot(Collection(load(cfg))) == want
    rebalance(cfg, 4)  # local -> S3 and S3 -> local moves
    coll = Collection(load(cfg))
    assert {s for _, _, s in coll.ls()} == {0, 1, 2, 3}
    assert snapshot(coll) == want
    # recover into a local folder and into an S3 prefix
    for out in (str(tmp_path / "recovered"), f"s3://{s3_bucket}/recovered"):
        got = coll.recover(out)
        assert got["files"] == len(want)
        assert snapshot(Collection([out])) == want
    assert tomllib.loads(open(cfg).read()) == {"roots": roots, "slices": 4}  # config rewritten, still TOML
    assert os.path.isdir(tmp_path / "disk2" / "index")
