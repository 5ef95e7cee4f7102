"""Staging to filesystem, S3 (loopback server) and iRODS (a recording fake of
python-irodsclient's session interface; a live test when IRODS_ENVIRONMENT_FILE is set)."""

from __future__ import annotations

import os
import pathlib
import uuid

import pytest

from lib.staging import StagingError, checksum_file, make_target, stage_tree
from lib.staging.irods import IrodsTarget, open_session
from lib.staging.targets import S3_META_KEY, FilesystemTarget, S3Target
from lib.store import s3, storage
from tests.staging.fake_irods import FakeIrods
from tests.staging.fake_irods import sha2 as _sha2


def _tree(root, files: dict[str, bytes]) -> str:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return str(root)


DAY = {
    "language=eng/part-0.parquet": b"english rows " * 50,
    "language=deu/part-0.parquet": b"deutsche zeilen " * 40,
    "_stats.json": b'{"pages": 3}',
    "_SUCCESS": b"",
}


def test_checksum_format_matches_irods(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"hello\n")
    # iRODS: sha2: + base64(sha256); `echo hello | sha256sum` = 5891b5b5...
    assert checksum_file(str(p)) == "sha2:WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM="


def _read_tree(root: str) -> dict[str, bytes]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            full = os.path.join(dirpath, n)
            out[os.path.relpath(full, root)] = open(full, "rb").read()
    return out


def test_filesystem_stage_copies_then_is_a_noop_then_mirrors_changes(tmp_path):
    src = _tree(tmp_path / "src", DAY)
    dest = str(tmp_path / "archive" / "preprocessed" / "2026-01" / "15")
    first = stage_tree(src, FilesystemTarget(dest))
    assert sorted(first.copied) == sorted(DAY) and first.copied[-1] == "_SUCCESS"
    assert first.bytes_copied == sum(len(v) for v in DAY.values())
    assert _read_tree(dest) == DAY

    mtimes = {r: os.stat(os.path.join(dest, r)).st_mtime_ns for r in DAY}
    second = stage_tree(src, FilesystemTarget(dest))
    assert second.copied == [] and sorted(second.skipped) == sorted(DAY)
    assert {r: os.stat(os.path.join(dest, r)).st_mtime_ns for r in DAY} == mtimes

    # a recomputed day: one file changed, one renamed; stale files go, _SUCCESS last again
    os.remove(os.path.join(src, "language=deu/part-0.parquet"))
    _tree(tmp_path / "src", {"language=deu/part-1.parquet": b"neu", "_stats.json": b'{"pages": 4}'})
    third = stage_tree(src, FilesystemTarget(dest))
    assert sorted(third.copied) == ["_SUCCESS", "_stats.json", "language=deu/part-1.parquet"]
    assert third.copied[-1] == "_SUCCESS"
    assert third.deleted == ["language=deu/part-0.parquet"]
    assert _read_tree(dest) == _read_tree(src)


def test_unfinished_output_is_refused(tmp_path):
    src = _tree(tmp_path / "src", {"part-0.parquet": b"x"})
    with pytest.raises(StagingError, match="_SUCCESS"):
        stage_tree(src, FilesystemTarget(str(tmp_path / "dest")))
    with pytest.raises(StagingError, match="empty or missing"):
        stage_tree(str(tmp_path / "nothing"), FilesystemTarget(str(tmp_path / "dest")))
    assert not (tmp_path / "dest").exists()


def test_s3_stage_is_idempotent_and_verifiable(tmp_path, s3_bucket):
    src = _tree(tmp_path / "src", DAY)
    target = make_target({"type": "s3", "uri": f"s3://{s3_bucket}/staged"}, "index/2026-01/15")
    assert isinstance(target, S3Target)
    first = stage_tree(src, target)
    assert len(first.copied) == len(DAY)
    for rel, data in DAY.items():
        uri = f"s3://{s3_bucket}/staged/index/2026-01/15/{rel}"
        assert storage.read_bytes(uri) == data
        head = s3.client().head_object(Bucket=s3_bucket, Key=f"staged/index/2026-01/15/{rel}")
        assert head["Metadata"][S3_META_KEY] == _sha2(data)
    second = stage_tree(src, target)
    assert second.copied == [] and len(second.skipped) == len(DAY)
    # an object whose content differs (metadata from someone else's upload) is replaced
    s3.client().put_object(Bucket=s3_bucket, Key="staged/index/2026-01/15/_stats.json", Body=b"other")
    third = stage_tree(src, target)
    assert sorted(third.copied) == ["_SUCCESS", "_stats.json"]
    assert storage.read_bytes(f"s3://{s3_bucket}/staged/index/2026-01/15/_stats.json") == DAY["_stats.json"]


def test_irods_stage_registers_and_verifies_checksums_and_skips_on_rerun(tmp_path):
    from irods.keywords import REG_CHKSUM_KW, VERIFY_CHKSUM_KW

    src = _tree(tmp_path / "src", DAY)
    fake = FakeIrods()
    coll = "/zone/home/ows/dc1/index/2026-01/15"
    first = stage_tree(src, IrodsTarget(fake, coll))
    assert len(first.copied) == len(DAY)
    assert {p: o["data"] for p, o in fake.objects.items()} == {f"{coll}/{r}": d for r, d in DAY.items()}
    puts = [c for c in fake.calls if c[0] == "put"]
    assert [c[1] for c in puts][-1] == f"{coll}/_SUCCESS"
    assert all(REG_CHKSUM_KW in c[2] for c in puts)
    verified = {c[1] for c in fake.calls if c[0] == "chksum" and VERIFY_CHKSUM_KW in c[2]}
    assert verified == {f"{coll}/{r}" for r in DAY}
    assert ("mkcoll", f"{coll}/language=eng") in fake.calls

    fake.calls.clear()
    second = stage_tree(src, IrodsTarget(fake, coll))
    assert second.copied == [] and sorted(second.skipped) == sorted(DAY)
    assert [c for c in fake.calls if c[0] in ("put", "unlink")] == []

    # an object uploaded without a registered checksum gets one computed, then compared
    fake.objects[f"{coll}/_stats.json"]["checksum"] = None
    fake.calls.clear()
    third = stage_tree(src, IrodsTarget(fake, coll))
    assert third.copied == []
    assert ("chksum", f"{coll}/_stats.json", {}) in fake.calls


def test_irods_stage_replaces_changed_objects_and_removes_stale(tmp_path):
    src = _tree(tmp_path / "src", DAY)
    fake = FakeIrods()
    coll = "/zone/dc1/day"
    stage_tree(src, IrodsTarget(fake, coll))
    (tmp_path / "src" / "_stats.json").write_bytes(b'{"pages": 9}')
    os.remove(tmp_path / "src" / "language=deu" / "part-0.parquet")
    fake.calls.clear()
    report = stage_tree(src, IrodsTarget(fake, coll))
    assert sorted(report.copied) == ["_SUCCESS", "_stats.json"]
    assert report.deleted == ["language=deu/part-0.parquet"]
    ops = [(c[0], c[1].rsplit("/", 1)[-1]) for c in fake.calls if c[0] in ("put", "unlink")]
    assert ops[0] == ("unlink", "_SUCCESS") and ops[-1] == ("put", "_SUCCESS")
    assert fake.objects[f"{coll}/_stats.json"]["data"] == b'{"pages": 9}'
    assert f"{coll}/language=deu/part-0.parquet" not in fake.objects


def test_irods_corrupted_transfer_is_an_error(tmp_path):
    src = _tree(tmp_path / "src", DAY)
    fake = FakeIrods(corrupt_puts=True)
    with pytest.raises(StagingError, match="registered checksum .* != local"):
        stage_tree(src, IrodsTarget(fake, "/zone/x"))
    assert "/zone/x/_SUCCESS" not in fake.objects


def test_irods_server_with_md5_checksums_is_a_clear_error(tmp_path):
    src = _tree(tmp_path / "src", {"a": b"abc", "_SUCCESS": b""})
    with pytest.raises(StagingError, match="default_hash_scheme to SHA256"):
        stage_tree(src, IrodsTarget(FakeIrods(hash_scheme="md5"), "/zone/m"))


def test_irods_bit_rot_fails_server_verification(tmp_path):
    src = _tree(tmp_path / "src", {"a": b"abc", "_SUCCESS": b""})
    fake = FakeIrods()
    target = IrodsTarget(fake, "/zone/y")
    real_put = fake.data_objects.put

    def put_then_rot(local, path, **kw):
        real_put(local, path, **kw)
        fake.objects[path]["data"] += b"!"

    fake.data_objects.put = put_then_rot
    with pytest.raises(StagingError, match="verification failed"):
        stage_tree(src, target)


@pytest.mark.live
@pytest.mark.skipif(
    not os.environ.get("IRODS_ENVIRONMENT_FILE"), reason="IRODS_ENVIRONMENT_FILE not set: no iRODS server"
)
def test_irods_live_server(tmp_path):
    from irods.helpers import home_collection

    src = _tree(tmp_path / "src", DAY)
    session = open_session(os.environ["IRODS_ENVIRONMENT_FILE"])
    coll = f"{home_collection(session)}/dailyslice-test-{uuid.uuid4().hex[:8]}"
    try:
        first = stage_tree(src, IrodsTarget(session, coll))
        assert len(first.copied) == len(DAY)
        for rel, data in DAY.items():
            obj = session.data_objects.get(f"{coll}/{rel}")
            assert obj.checksum == _sha2(data)
            with obj.open("r") as f:
                assert f.read() == data
        second = stage_tree(src, IrodsTarget(session, coll))
        assert second.copied == []
    finally:
        if session.collections.exists(coll):
            session.collections.remove(coll, recurse=True, force=True)
        session.cleanup()


def test_stage_outputs_of_a_day_to_filesystem_and_to_placement_slices(tmp_path):
    import datetime as dt

    from lib.orchestration.stage_outputs import stage_outputs
    from lib.placement.swap import collection_of

    outputs = {
        "preprocessed": _tree(tmp_path / "out" / "pre", DAY),
        "index": _tree(tmp_path / "out" / "idx", {"com/eng/index-0.ciff.gz": b"ciff", "_SUCCESS": b""}),
    }
    day = dt.date(2026, 1, 15)
    fs = stage_outputs(outputs, {"type": "filesystem", "path": str(tmp_path / "archive")}, day)
    assert fs["index"]["copied"] == 2 and fs["preprocessed"]["copied"] == len(DAY)
    assert _read_tree(str(tmp_path / "archive" / "preprocessed" / "2026-01" / "15")) == DAY
    assert (
        tmp_path / "archive" / "index" / "2026-01" / "15" / "com" / "eng" / "index-0.ciff.gz"
    ).read_bytes() == b"ciff"

    roots = [str(tmp_path / f"slice{i}") for i in range(3)]
    sl = stage_outputs(outputs, {"type": "slices", "config": roots}, day)
    assert sl["preprocessed"]["files"] == len(DAY) and sl["index"]["files"] == 2
    # every file is found again through the slices, with its content
    merged = {}
    for r in roots:
        merged.update(_read_tree(r))
    assert {k: v for k, v in merged.items() if k.startswith("preprocessed/")} == {
        f"preprocessed/2026-01/15/{rel}": data for rel, data in DAY.items()
    }
    coll = collection_of(roots)
    for rel, data in DAY.items():  # each file sits on the slice that locate() names
        path = f"preprocessed/2026-01/15/{rel}"
        assert pathlib.Path(roots[coll.locate(path)], path).read_bytes() == data
