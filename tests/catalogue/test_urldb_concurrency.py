"""Runs that meet in one URL database lose nothing (issue 45): a nightly day, a 3-day backfill and
a purge at once, with a fourth run SIGKILLed in the middle of its merge (just before it commits,
holding the database's lease), with days on local folders and on the loopback S3 server.
Afterwards the database holds every day a run reported done, row for row the table the same days
give merged one after another, and the purge's take-down holds."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lib.catalogue import urldb
from lib.catalogue.day_captures import read_captures
from lib.pages import exclusions
from lib.pages.schema import CAPTURE_SCHEMA
from lib.purge.urldb_removal import purge_urldb
from lib.store import layout, lease, storage

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UTC = dt.timezone.utc
K = 2  # key-space partitions: small days, few files
BEFORE = dt.date(2026, 1, 31)  # merged before the runs start; holds the URL the purge takes down
BACKFILL = [dt.date(2026, 2, d) for d in range(1, 4)]
KILLED = dt.date(2026, 2, 7)
NIGHTLY = dt.date(2026, 2, 10)
TAKEN_DOWN = "http://takedown.example.org/private"
RULE = {"url": TAKEN_DOWN, "reason": "take-down request 45"}


def captures(day: dt.date) -> pa.Table:
    """A small day: URLs seen every day (one changes content every other day), a URL of this day
    only, and on :data:`BEFORE` the page the purge takes down."""
    n = day.toordinal()
    urls = [
        ("http://www.example.com/", "sha1:AAAA"),
        ("https://example.com/news?id=2", f"sha1:N{n % 2}"),
        (f"http://day.example.net/{day}", f"sha1:D{n}"),
        ("http://example.org/page", f"sha1:P{n % 3}"),
    ]
    if day == BEFORE:
        urls.append((TAKEN_DOWN, "sha1:XXXX"))
    rows = []
    f = f"file:///warc/{day:%Y-%m}/{day:%d}/crawler1/100000-0.warc.gz"
    for i, (url, digest) in enumerate(urls * 2):  # two captures each: the second an hour later
        t = dt.datetime(day.year, day.month, day.day, 10 + i // len(urls), i, tzinfo=UTC)
        rows.append((url, t, "response", f"<urn:uuid:{day}-{i}>", 200, "text/html", digest, True, f, 100 * i, 90, None))
    return pa.Table.from_pylist([dict(zip(CAPTURE_SCHEMA.names, r, strict=True)) for r in rows], CAPTURE_SCHEMA)


def write_day(root: str, day: dt.date) -> None:
    """The preprocessed day as the catalogue reads it: ``_captures/`` and ``_SUCCESS`` (last)."""
    out = layout.day_path(root, layout.PREPROCESSED, day)
    buf = pa.BufferOutputStream()
    pq.write_table(captures(day), buf)
    storage.write_bytes(storage.join(out, layout.CAPTURES, "part-00000.parquet"), buf.getvalue().to_pybytes())
    storage.write_bytes(storage.join(out, layout.SUCCESS), b"")


def table(db: str) -> list[dict]:
    """The current table version, row for row, in id order."""
    return sorted(pq.read_table(urldb.table_path(db)).to_pylist(), key=lambda r: r["id"])


@pytest.fixture(scope="module")
def sequential(spark, tmp_path_factory) -> list[dict]:
    """The reference: the days the runs report done merged one after another in this process
    (as the job reads them), then the take-down."""
    base = tmp_path_factory.mktemp("sequential")
    db = str(base / "urldb")
    for day in [BEFORE, *BACKFILL, NIGHTLY]:
        merge(spark, str(base), db, day)
    purge_urldb(db, exclusions.parse(json.dumps(RULE)))
    return table(db)


def merge(spark, root: str, db: str, day: dt.date) -> None:
    """Merge ``day`` (written under the local ``root``) into ``db`` in this process."""
    write_day(root, day)
    urldb.merge_day(spark, db, day, read_captures(spark, layout.day_path(root, layout.PREPROCESSED, day)), K)


def _catalogue(root: str, db: str, days: list[dt.date], env: dict[str, str], **popen) -> subprocess.Popen:
    """One process that runs the catalogue job for ``days`` in turn in one Spark session (a
    backfill's days; one day: the nightly run) and prints each day's exit code."""
    code = (
        "import json, sys\n"
        "from jobs.catalogue import CatalogueJob, CatalogueOptions, main\n"
        "spark = CatalogueJob().session(CatalogueOptions(master='local[1]'))\n"
        "for d in sys.argv[3:]:\n"
        "    rc = main(['--root', sys.argv[1], '--urldb', sys.argv[2], '--date', d, '--no-report',\n"
        f"               '--url-partitions', '{K}', '--exclusions', 'none', '--urldb-wait', '300'], spark=spark)\n"
        "    print(json.dumps({'day': d, 'rc': rc}), flush=True)\n"
    )
    argv = [sys.executable, "-c", code, root, db, *(d.isoformat() for d in days)]
    return subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def _done(proc: subprocess.Popen) -> tuple[list[str], list[str]]:
    """The days a catalogue process reported done (exit 0), and a line for each that was not."""
    out, err = proc.communicate(timeout=600)
    days = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    errors = [x for x in err.splitlines() if "Error" in x or "Caused" in x or " is held by " in x][-5:]
    failed = [f"{d['day']}: exit {d['rc']}" for d in days if d["rc"]] + ([] if days else ["no day run"])
    return [d["day"] for d in days if d["rc"] == 0], failed + (errors if failed else [])


def _until(what, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not what() and time.monotonic() < deadline:
        time.sleep(0.1)


def test_runs_that_meet_lose_no_day(sequential, spark, tmp_path, s3_bucket, job_jvm_archive) -> None:
    """The nightly and the killed run read their days from the S3 server and publish there, the
    backfill reads local folders: both kinds in one scenario (each run costs a JVM)."""
    local, bucket = str(tmp_path / "root"), f"s3://{s3_bucket}/dc-a"
    db = str(tmp_path / "urldb")  # the database lives on the cluster filesystem (Spark has no S3 here)
    merge(spark, local, db, BEFORE)  # the database as the runs find it
    for day in BACKFILL:
        write_day(local, day)
    for day in (KILLED, NIGHTLY):
        write_day(bucket, day)
    excl = tmp_path / "take-down.jsonl"
    excl.write_text(json.dumps(RULE) + "\n")
    purge_root = tmp_path / "purge-root"  # the purge's published days: none to rebuild, only the database
    purge_root.mkdir()
    # a dead holder's lease lapses after its TTL: 10 s, not the default 120, so the runs that
    # wait for the SIGKILLed one do not idle for two minutes (a live holder beats every TTL/3,
    # 3.3 s, a local file write: 6.7 s of slack even on a loaded machine); the runs' driver JVMs
    # map the session's class archive
    env = dict(os.environ, PYTHONPATH=REPO, DAILYSLICE_LOCK_TTL="10", **job_jvm_archive)

    flag = tmp_path / "paused"
    killed = _catalogue(bucket, db, [KILLED], dict(env, **{urldb.PAUSE_HOOK: str(flag)}), start_new_session=True)
    started = [killed]
    try:
        _until(lambda: flag.exists() or killed.poll() is not None, 180)
        # the run to kill now holds the database's lease, its next version written, not committed
        started += [_catalogue(bucket, db, [NIGHTLY], env), _catalogue(local, db, BACKFILL, env)]
        argv = [sys.executable, "jobs/purge.py", "--root", str(purge_root), "--urldb", db, "--exclusions", str(excl)]
        purge = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started.append(purge)
        waiting: list[bytes] = []
        reader = threading.Thread(target=lambda: waiting.extend(purge.stderr), daemon=True)
        reader.start()
        _until(lambda: any(b"waiting up to" in line for line in waiting), 60)  # the purge meets the holder
        if killed.poll() is None:
            os.killpg(killed.pid, signal.SIGKILL)
        killed.communicate()
        (night, night_failed), (back, back_failed) = _done(started[1]), _done(started[2])
        p_out = purge.stdout.read()
        purge.wait(600)
        reader.join(10)
    finally:
        for p in started:
            if p.poll() is None:
                p.kill()

    state = urldb.read_state(db)
    done = sorted({BEFORE.isoformat(), *night, *back})
    assert set(done) <= set(state["days"]), f"days reported done, not in the database {state['days']}"
    assert not night_failed + back_failed, night_failed + back_failed  # the runs waited for each other
    assert purge.returncode == 0, b"".join(waiting)[-3000:]
    assert state["days"] == done
    assert table(db) == sequential  # row for row the days merged one after another, then the take-down
    assert json.loads(p_out)["urldb"]["urls"] == [TAKEN_DOWN]
    assert killed.returncode == -signal.SIGKILL, "the run to kill never paused in its merge"
    assert any(b"waiting up to" in line for line in waiting)  # the purge met the killed holder
    versions = sorted(n for n in os.listdir(db) if n.startswith("v"))
    assert versions == sorted(v["table"] for v in state["history"])  # the dead run's version was swept


def test_a_run_that_does_not_get_the_database_refuses_naming_the_holder(spark, tmp_path, capsys) -> None:
    """Past the wait, the catalogue, the purge and the exchange exit 5 with one line naming the
    holder, and change nothing."""
    from jobs import catalogue, exchange, purge

    root, db = str(tmp_path / "root"), str(tmp_path / "root" / "urldb")
    merge(spark, root, db, BEFORE)
    write_day(root, NIGHTLY)
    before = urldb.read_state(db)
    (tmp_path / "x.jsonl").write_text(json.dumps(RULE) + "\n")
    index_day = layout.day_path(root, layout.INDEX, NIGHTLY)
    storage.write_bytes(storage.join(index_day, layout.SUCCESS), b"")
    with urldb.lock(db, "catalogue") as held, lease.Lease(index_day, "index"):
        argv = ["--root", root, "--date", NIGHTLY.isoformat(), "--no-report", "--exclusions", "none"]
        assert catalogue.main([*argv, "--urldb-wait", "0"], spark=spark) == 5
        no_day = ["--from", "2030-01-01"]  # no day to rebuild: only the database's take-down
        assert purge.main(["--root", root, "--exclusions", str(tmp_path / "x.jsonl"), *no_day, "--wait-lock", "0"]) == 5
        assert exchange.main(["--day", index_day, "--date", NIGHTLY.isoformat(), "--wait-lock", "0"]) == 5
        err = capsys.readouterr().err
        lines = {line.split(":", 1)[0]: line for line in err.splitlines() if " is held by " in line}
        holder = f"is held by catalogue (pid {os.getpid()} on {socket.gethostname()}, since "
        for job, option in (("catalogue.py", "--urldb-wait"), ("purge", "--wait-lock")):
            assert holder in lines[job] and f"changing the URL database {db}; nothing done ({option})" in lines[job]
        assert f"is held by index (pid {os.getpid()}" in lines["exchange"], err
        assert held.owner in storage.read_bytes(lease.lock_uri(db)).decode()
    assert urldb.read_state(db) == before
    assert not os.path.exists(layout.day_path(root, layout.CATALOGUE, NIGHTLY))  # nothing published
    assert TAKEN_DOWN in {r["url"] for r in table(db)}  # the purge removed nothing
