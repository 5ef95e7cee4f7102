"""Staging of the URL database and of a run's logs (lib/staging/urldb_and_logs.py) to iRODS (the recording
fake; a live server when IRODS_ENVIRONMENT_FILE is set) and a filesystem: checksums registered
and verified, the state file committed after the files it names, stale versions removed after
it, and a re-stage that transfers nothing. The real database and logs of a nightly run are
staged in tests/orchestration/test_run_day_exclusions.py."""

from __future__ import annotations

import json
import os
import uuid

import pytest

import lib.staging.urldb_and_logs as runs
from lib.orchestration.stage_outputs import stage_logs
from lib.staging import StagingError
from tests.staging.fake_irods import FakeIrods, sha2

COLL = "/zone/home/ows/dc1"


def _write(path, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def _state(db, versions: list[int], days: list[str]) -> dict:
    history = [{"version": v, "table": f"v{v:06d}", "days": days[: i + 1]} for i, v in enumerate(versions)]
    state = {"version": versions[-1], "table": f"v{versions[-1]:06d}", "days": days, "partitions": 2}
    state["history"] = history
    _write(os.path.join(db, "_state.json"), json.dumps(state).encode())
    return state


def _urldb(tmp_path) -> str:
    """A database folder laid out as lib/catalogue/urldb.py writes it: two kept versions, two
    merged days' edits and digests, a third day's edits whose merge did not finish, and the
    side files Spark leaves (checksums, an unfinished temp file)."""
    db = str(tmp_path / "urldb")
    for v in (1, 2):
        for p in (0, 1):
            _write(f"{db}/v{v:06d}/part={p}/part-0.parquet", f"table v{v} part {p}".encode())
            _write(f"{db}/v{v:06d}/part={p}/.part-0.parquet.crc", b"crc")
    for day in ("2026-01-14", "2026-01-15", "2026-01-16"):
        _write(f"{db}/days/date={day}/part=0/part-0.parquet", f"edits {day}".encode())
        _write(f"{db}/digests/date={day}/part-0.parquet", f"digests {day}".encode())
    _write(f"{db}/v000003.tmp/part=0/part-0.parquet", b"unfinished")
    _state(db, [1, 2], ["2026-01-14", "2026-01-15"])
    return db


def _staged(fake: FakeIrods, prefix: str) -> dict[str, bytes]:
    return {p[len(prefix) + 1 :]: o["data"] for p, o in fake.objects.items() if p.startswith(prefix + "/")}


def test_urldb_stages_its_current_version_and_days_state_last_then_nothing(tmp_path, monkeypatch):
    db = _urldb(tmp_path)
    fake = FakeIrods()
    monkeypatch.setattr("lib.staging.open_session", lambda env_file=None: fake)
    spec = {"type": "irods", "collection": COLL}
    report = runs.stage_urldb(db, spec)
    staged = _staged(fake, f"{COLL}/urldb")
    expected = {f"v000002/part={p}/part-0.parquet" for p in (0, 1)} | {
        f"{side}/date={d}/{tail}"
        for d in ("2026-01-14", "2026-01-15")
        for side, tail in (("days", "part=0/part-0.parquet"), ("digests", "part-0.parquet"))
    }
    assert set(staged) == expected | {"_state.json"}  # no v000001, no unmerged day, no .crc, no temp
    for rel in expected:
        with open(os.path.join(db, rel), "rb") as f:
            assert staged[rel] == f.read()
        assert fake.objects[f"{COLL}/urldb/{rel}"]["checksum"] == sha2(staged[rel])
    state = json.loads(staged["_state.json"])
    assert state["table"] == "v000002" and state["days"] == ["2026-01-14", "2026-01-15"]
    assert state["history"] == [{"version": 2, "table": "v000002", "days": ["2026-01-14", "2026-01-15"]}]
    puts = [c[1].rsplit("/urldb/", 1)[1] for c in fake.calls if c[0] == "put"]
    assert puts[-1] == "_state.json" and sorted(puts) == sorted(staged)
    assert report["copied"] == len(staged) and report["version"] == 2 and report["days"] == 2

    fake.calls.clear()
    again = runs.stage_urldb(db, spec)
    assert again["copied"] == 0 and again["deleted"] == 0
    assert [c for c in fake.calls if c[0] in ("put", "unlink")] == []
    assert _staged(fake, f"{COLL}/urldb") == staged

    # the next merge: version 3 with the 16th; v000001 pruned. The new state comes after its
    # files and the superseded version goes only after the new state is in place
    os.rename(f"{db}/v000003.tmp", f"{db}/v000003")
    _write(f"{db}/v000003/part=1/part-0.parquet", b"table v3 part 1")
    _state(db, [1, 2, 3], ["2026-01-14", "2026-01-15", "2026-01-16"])
    fake.calls.clear()
    third = runs.stage_urldb(db, spec)
    ops = [(c[0], c[1].rsplit("/urldb/", 1)[1]) for c in fake.calls if c[0] in ("put", "unlink")]
    commit = ops.index(("put", "_state.json"))
    assert {o for o in ops[:commit]} == {
        ("put", "v000003/part=0/part-0.parquet"),
        ("put", "v000003/part=1/part-0.parquet"),
        ("put", "days/date=2026-01-16/part=0/part-0.parquet"),
        ("put", "digests/date=2026-01-16/part-0.parquet"),
    }
    assert sorted(ops[commit + 1 :]) == [("unlink", f"v000002/part={p}/part-0.parquet") for p in (0, 1)]
    assert third["deleted"] == 2 and json.loads(_staged(fake, f"{COLL}/urldb")["_state.json"])["version"] == 3


def test_a_merge_during_the_snapshot_makes_it_start_again(tmp_path, monkeypatch):
    db = _urldb(tmp_path)
    real = runs._link_tree
    moved = []

    def link_then_merge(src, dest, rel):
        out = real(src, dest, rel)
        if not moved:  # another run commits day 16 while the first snapshot is being laid out
            moved.append(rel)
            _state(db, [1, 2], ["2026-01-14", "2026-01-15", "2026-01-16"])
        return out

    monkeypatch.setattr(runs, "_link_tree", link_then_merge)
    dest = tmp_path / "archive"
    report = runs.stage_urldb(db, {"type": "filesystem", "path": str(dest)})
    assert moved and report["days"] == 3
    staged = json.loads((dest / "urldb" / "_state.json").read_text())
    assert staged["days"] == ["2026-01-14", "2026-01-15", "2026-01-16"]
    assert (dest / "urldb/days/date=2026-01-16/part=0/part-0.parquet").read_bytes() == b"edits 2026-01-16"

    merges = []

    def always_moving(src, dest, rel):
        merges.append(rel)  # a backfill commits a day after every file laid out
        _state(db, [1, 2], ["2026-01-14", "2026-01-15"] + [f"2026-02-{len(merges):02d}"])
        return real(src, dest, rel)

    monkeypatch.setattr(runs, "_link_tree", always_moving)
    with pytest.raises(StagingError, match="kept changing"):
        runs.stage_urldb(db, {"type": "filesystem", "path": str(tmp_path / "other")})
    assert not (tmp_path / "other" / "urldb" / "_state.json").exists()  # nothing committed


def _run_logs(tmp_path) -> tuple[dict, dict, dict]:
    logs = tmp_path / "logs" / "dailyslice-dc1-2026-01-15-77"
    files = {
        "spark-events/local-1700000000000": b'{"Event":"SparkListenerLogStart","Spark Version":"4.0.0"}\n',
        "summaries/preprocess.json": b'{"pages_kept": 12}',
        "_errors.jsonl": b'{"file": "a.warc.gz", "offset": 10, "reason": "bad"}\n',
    }
    for rel, data in files.items():
        _write(str(logs / rel), data)
    run_log = tmp_path / "logs" / "dailyslice-dc1-2026-01-15-77.log"
    run_log.write_bytes(b"run-day: preprocess exit 0\n")
    sub = {"job_id": "77", "run_log": str(run_log), "slurm_log": str(tmp_path / "nothing.out")}
    marker = {"ok": True, "job_id": "77", "log": str(run_log), "run_logs": str(logs)}
    files["run.log"] = run_log.read_bytes()
    return sub, marker, files


def test_run_logs_are_staged_per_job_with_the_marker_and_restaged_as_nothing(tmp_path, monkeypatch):
    import datetime as dt

    sub, marker, files = _run_logs(tmp_path)
    fake = FakeIrods()
    monkeypatch.setattr("lib.staging.open_session", lambda env_file=None: fake)
    spec = {"type": "irods", "collection": COLL}
    day = dt.date(2026, 1, 15)
    report = stage_logs(marker, sub, spec, day)
    prefix = f"{COLL}/logs/2026-01/15/77"
    staged = _staged(fake, prefix)
    assert json.loads(staged.pop("marker.json")) == marker
    assert staged.pop("_SUCCESS") == b"" and staged == files  # slurm.out did not exist: left out
    assert [c[1] for c in fake.calls if c[0] == "put"][-1] == f"{prefix}/_SUCCESS"
    assert all(fake.objects[f"{prefix}/{r}"]["checksum"] == sha2(d) for r, d in files.items())
    assert report["copied"] == len(files) + 2

    fake.calls.clear()
    assert stage_logs(marker, sub, spec, day)["copied"] == 0
    assert [c for c in fake.calls if c[0] in ("put", "unlink")] == []
    # a job that died before writing a marker: its folder (from the submission) and Slurm's output
    (tmp_path / "nothing.out").write_bytes(b"run-day: Python environment not found\n")
    dead = stage_logs(None, {**sub, "job_id": "78", "run_logs": marker["run_logs"]}, spec, day)
    assert _staged(fake, f"{COLL}/logs/2026-01/15/78")["slurm.out"] == b"run-day: Python environment not found\n"
    assert dead["copied"] == len(files) + 2


@pytest.mark.live
@pytest.mark.skipif(
    not os.environ.get("IRODS_ENVIRONMENT_FILE"), reason="IRODS_ENVIRONMENT_FILE not set: no iRODS server"
)
def test_urldb_and_logs_on_a_live_irods_server(tmp_path):
    import datetime as dt

    from irods.helpers import home_collection

    from lib.staging.irods import open_session

    session = open_session(os.environ["IRODS_ENVIRONMENT_FILE"])
    coll = f"{home_collection(session)}/dailyslice-test-{uuid.uuid4().hex[:8]}"
    spec = {"type": "irods", "collection": coll, "env_file": os.environ["IRODS_ENVIRONMENT_FILE"]}
    try:
        db = _urldb(tmp_path)
        assert runs.stage_urldb(db, spec)["copied"] == 7
        assert runs.stage_urldb(db, spec)["copied"] == 0
        state = session.data_objects.get(f"{coll}/urldb/_state.json")
        with state.open("r") as f:
            assert json.load(f)["table"] == "v000002"
        sub, marker, files = _run_logs(tmp_path)
        assert stage_logs(marker, sub, spec, dt.date(2026, 1, 15))["copied"] == len(files) + 2
        obj = session.data_objects.get(f"{coll}/logs/2026-01/15/77/_errors.jsonl")
        assert obj.checksum == sha2(files["_errors.jsonl"])
        assert stage_logs(marker, sub, spec, dt.date(2026, 1, 15))["copied"] == 0
    finally:
        if session.collections.exists(coll):
            session.collections.remove(coll, recurse=True, force=True)
        session.cleanup()


def test_urldb_on_placement_slices_is_found_again_through_them(tmp_path):
    from lib.placement.swap import collection_of

    db = _urldb(tmp_path)
    roots = [str(tmp_path / f"slice{i}") for i in range(3)]
    report = runs.stage_urldb(db, {"type": "slices", "config": roots})
    assert report["files"] == 8 and report["version"] == 2  # 6 data files, the state, the marker
    coll = collection_of(roots)
    for rel in ("v000002/part=1/part-0.parquet", "days/date=2026-01-15/part=0/part-0.parquet"):
        with (
            open(os.path.join(roots[coll.locate(f"urldb/{rel}")], "urldb", rel), "rb") as f,
            open(f"{db}/{rel}", "rb") as g,
        ):
            assert f.read() == g.read()


def test_a_lagging_pointer_stages_the_newest_committed_version(tmp_path):
    # a merge that committed version 3 by compare-and-swap (lib.store.versioned) and died before
    # it moved the pointer: the staged copy is version 3, which readers of the database see
    db = _urldb(tmp_path)
    for p in (0, 1):
        _write(f"{db}/v000003-run9/part={p}/part-0.parquet", f"table v3 part {p}".encode())
    days = ["2026-01-14", "2026-01-15", "2026-01-16"]
    after = {"version": 3, "table": "v000003-run9", "days": days, "partitions": 2, "history": []}
    _write(f"{db}/_state/after-v000002.json", json.dumps(after).encode())
    dest = tmp_path / "archive"
    report = runs.stage_urldb(db, {"type": "filesystem", "path": str(dest)})
    assert report["days"] == 3
    staged = json.loads((dest / "urldb" / "_state.json").read_text())
    assert (staged["version"], staged["table"]) == (3, "v000003-run9")
    assert (dest / "urldb/v000003-run9/part=1/part-0.parquet").read_bytes() == b"table v3 part 1"
