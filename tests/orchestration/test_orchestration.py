"""The nightly DAG end to end on real parts: loopback S3 holding a day's WARCs -> real
sbatch on a two-node Slurm cluster -> Spark standalone master/workers in the allocation
-> Parquet + CIFF -> staged to a filesystem target; plus an empty day, a failing job,
a second run of the same day, a file written late into a published day and a night that
never ran, found and queued by the next night's catch_up. The Spark run is done once and
its outputs reused."""

from __future__ import annotations

import datetime as dt
import glob
import json
import os
import pathlib

import pytest

from lib.html import walk
from tests.helpers_datacenters import LOCAL_SPARK, datacenter_entry, task_states

# shared session fixtures (one Slurm cluster, one AIRFLOW_HOME per run)
pytest_plugins = ["tests.fixtures_airflow", "tests.fixtures_slurm"]
ROOT = pathlib.Path(__file__).resolve().parents[2]
DAY = dt.date(2026, 1, 15)
RUN_AT = dt.datetime(2026, 1, 16, 3, 0, tzinfo=dt.timezone.utc)  # the 03:00 run after DAY
EMPTY_DAY = "2026-01-10"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _read_tree(root: str) -> dict[str, bytes]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            full = os.path.join(dirpath, n)
            out[os.path.relpath(full, root)] = pathlib.Path(full).read_bytes()
    return out


@pytest.fixture(scope="module")
def orchestra(slurm_cluster, airflow_home, s3_server, submit_jvm_archive, tmp_path_factory):
    """Bucket with DAY's sample crawl, a datacenters.yaml for it, the DAGs built from it."""
    import yaml

    from lib.store import s3
    from lib.warc.sample import write_sample_crawl

    base = tmp_path_factory.mktemp("orchestra")
    bucket = "crawl-dc1"
    s3.client().create_bucket(Bucket=bucket)
    local = base / "crawl"
    paths = write_sample_crawl(str(local), DAY, files=2, pages_per_file=12)
    warcs = {}
    for p in paths:
        key = "dc1/" + os.path.relpath(p, local).replace(os.sep, "/")
        s3.client().upload_file(p, bucket, key)
        warcs[key] = os.path.getsize(p)
    # dc "sick": a day whose responses are half junk (preprocess exits 3: published, unhealthy)
    from tests.helpers_warc import warc_with_broken_http

    sick, sick_offsets = warc_with_broken_http(good=6, broken=6)
    s3.client().put_object(Bucket=bucket, Key=f"sick/warc/{DAY:%Y-%m}/{DAY:%d}/crawler1/000000-0.warc.gz", Body=sick)
    job_env = {
        "SPARK_WORKER_CORES": 1,
        "SPARK_WORKER_MEMORY": "1g",
        "SPARK_EXECUTOR_MEMORY": "512m",
        "SPARK_MASTER_HOST": "127.0.0.1",
        # a day this small gets its graph in one task by default; two stages are what the cluster test below checks
        "INDEX_ARGS": "--min-group-docs 1 --graph-single-task-bytes 0",
        # the executors' JVMs run C1 only, as the drivers' (submit_jvm_archive): days of a few dozen pages
        "SPARK_SUBMIT_ARGS": "--conf spark.executor.extraJavaOptions=-XX:TieredStopAtLevel=1",
        # and the standalone master's and workers' (they schedule, they compute nothing)
        "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        **submit_jvm_archive,  # every data center's jobs (defaults' job_env is merged under their own)
    }
    common = datacenter_entry(base, s3_server, bucket, "dc1", 2, job_env)
    config = {
        "defaults": common,
        "datacenters": {
            "dc1": {},
            "broken": {"venv": "/nonexistent/venv"},
            # spark-submit in local mode inside the allocation (LOCAL_SPARK): the lightest real run of
            # run-day.sh's two jobs
            "sick": {
                "s3": {"prefix": "sick"},
                "sizing": {"min_nodes": 1, "max_nodes": 1},
                "job_env": LOCAL_SPARK,
            },
            # dc "missed": a night that never ran, found and queued by the next night's catch_up (the same light job)
            "missed": {
                "s3": {"prefix": "missed"},
                "sizing": {"min_nodes": 1, "max_nodes": 1},
                "job_env": LOCAL_SPARK,
            },
        },
    }
    cfg_path = base / "datacenters.yaml"
    cfg_path.write_text(yaml.safe_dump(config))
    saved = os.environ.get("DAILYSLICE_DATACENTERS")
    os.environ["DAILYSLICE_DATACENTERS"] = str(cfg_path)

    from lib.orchestration.dag_factory import build_dags
    from lib.orchestration.datacenters import load_config

    dags = build_dags(load_config(str(cfg_path)))
    yield {
        "base": base,
        "bucket": bucket,
        "warcs": warcs,
        "dags": dags,
        "slurm": slurm_cluster,
        "sick_offsets": sick_offsets,
    }
    if saved is None:
        os.environ.pop("DAILYSLICE_DATACENTERS", None)
    else:
        os.environ["DAILYSLICE_DATACENTERS"] = saved


_states = task_states


@pytest.fixture(scope="module")
def first_run(orchestra):
    """The one real Spark run: DAY for dc1, via the 03:00 run of the next day."""
    dr = orchestra["dags"]["dailyslice-dc1"].test(logical_date=RUN_AT)
    summary_path = orchestra["base"] / "out" / "dc1" / "_runs" / "dc1" / f"{DAY}.summary.json"
    return {"state": str(dr.state), "tasks": _states(dr), "summary_path": summary_path}


def test_day_runs_end_to_end_and_stages_the_outputs(orchestra, first_run):
    out = orchestra["base"] / "out" / "dc1"
    logs = "\n".join(pathlib.Path(p).read_text()[-3000:] for p in glob.glob(str(out / "logs" / "*.*")))
    assert first_run["state"] == "success", f"{first_run['tasks']}\n{logs}"
    assert set(first_run["tasks"].values()) == {"success"}
    summary = json.loads(first_run["summary_path"].read_text())

    # estimate saw exactly the day's WARC files in S3; sizing kept to the configured 2 nodes
    assert summary["input"]["files"] == len(orchestra["warcs"])
    assert summary["input"]["bytes"] == sum(orchestra["warcs"].values())
    assert summary["sizing"]["nodes"] == 2 and summary["sizing"]["time"] == "0-00:10:00"
    assert summary["preprocess_rc"] == 0 and summary["index_rc"] == 0 and summary["catalogue_rc"] == 0
    job_id = summary["job"]["job_id"]
    assert job_id and summary["job"]["run_log"].endswith(f"dailyslice-dc1-{DAY}-{job_id}.log")

    # the job ran on a Spark standalone cluster inside the allocation: workers on both nodes
    run_log = pathlib.Path(summary["job"]["run_log"]).read_text()
    assert "starting Spark master spark://127.0.0.1:" in run_log and "on each of 2 node(s)" in run_log
    assert "2 Spark worker(s) registered" in run_log
    assert "1 Spark application(s)" in run_log and "preprocess exit 0, index exit 0, catalogue exit 0" in run_log
    marker = json.loads((out / "_runs" / "dc1" / f"{DAY}.json").read_text())
    assert marker["ok"] and marker["job_id"] == job_id

    # staged copies are byte-identical to the job's output, with _SUCCESS
    archive = orchestra["base"] / "archive" / "dc1"
    for kind in ("preprocessed", "index", "catalogue"):
        produced = _read_tree(marker["outputs"][kind])
        staged = _read_tree(str(archive / kind / "2026-01" / "15"))
        assert staged == produced and "_SUCCESS" in staged
        assert summary["staging"][kind]["copied"] == len(produced)

    # content: the staged pages are the sample crawl's pages, partitioned by language
    import pyarrow.dataset as ds

    pages = ds.dataset(
        str(archive / "preprocessed" / "2026-01" / "15"),
        format="parquet",
        partitioning="hive",
        exclude_invalid_files=True,
    ).to_table(columns=["url", "language", "warc_file"])
    pre = marker["summaries"]["preprocess"]
    assert pages.num_rows == pre["pages_kept"] > 0
    # the cluster's executors import lib from the shipped zip and still run the compiled walker
    assert pre["html_extraction"] == [walk.status()] and walk.WALK is not None
    assert len(set(pages.column("language").to_pylist())) >= 3
    assert all(u.startswith("https://") and "/articles/2026/01/page-" in u for u in pages.column("url").to_pylist())
    assert set(pages.column("warc_file").to_pylist()) == {f"s3://{orchestra['bucket']}/{k}" for k in orchestra["warcs"]}

    # and the staged index holds CIFF files whose documents are those pages
    from lib.ciff.reader import CiffReader

    ciffs = sorted(glob.glob(str(archive / "index" / "2026-01" / "15" / "**" / "index-*.ciff*"), recursive=True))
    assert ciffs, "no CIFF file staged"
    record_ids = set(
        ds.dataset(
            str(archive / "preprocessed" / "2026-01" / "15"),
            format="parquet",
            partitioning="hive",
            exclude_invalid_files=True,
        )
        .to_table(columns=["record_id"])
        .column("record_id")
        .to_pylist()
    )
    indexed = []
    for path in ciffs:
        reader = CiffReader(path)
        docs = list(reader.docs())
        assert reader.header.num_docs == len(docs) > 0
        indexed += [d.collection_docid for d in docs]
    assert len(indexed) == len(set(indexed)) and set(indexed) <= record_ids
    assert len(indexed) >= pages.num_rows // 2

    # the nightly run ended with the catalogue: the day's CDXJ (a line per capture with a URL
    # and date), its report, and the URL database beside the dated folders
    cat = archive / "catalogue" / "2026-01" / "15"
    cat_summary = marker["summaries"]["catalogue"]
    cdxj_lines = (cat / "index.cdxj").read_text().splitlines()
    assert len(cdxj_lines) == cat_summary["cdxj_lines"] >= pages.num_rows > 0
    assert (cat / "report.html").is_file() and (out / "urldb" / "_state.json").is_file()
    assert cat_summary["urldb"]["urls"] > 0
    # the URL database and the job's logs left scratch too: the staged state names the table the
    # job merged into, byte for byte; the logs hold a Spark event log per job and the run log
    archive = orchestra["base"] / "archive" / "dc1"
    state = json.loads((archive / "urldb" / "_state.json").read_text())
    assert state["days"] == [DAY.isoformat()] and summary["staging"]["urldb"]["version"] == state["version"]
    table = out / "urldb" / state["table"]
    assert _read_tree(str(archive / "urldb" / state["table"])) == {
        k: v for k, v in _read_tree(str(table)).items() if not k.rsplit("/", 1)[-1].startswith(".")
    }
    staged_logs = archive / "logs" / "2026-01" / "15" / str(job_id)
    assert (staged_logs / "run.log").read_text() == run_log and (staged_logs / "_SUCCESS").is_file()
    # one Spark application for the night's three jobs (dailyslice day): one event log
    assert len(list((staged_logs / "spark-events").glob("eventlog_v2_app-*"))) == 1
    assert json.loads((staged_logs / "summaries" / "catalogue.json").read_text()) == cat_summary


def test_second_run_of_the_same_day_stages_nothing(orchestra, first_run):
    archive = orchestra["base"] / "archive" / "dc1"
    before = {p: os.stat(p).st_mtime_ns for p in glob.glob(str(archive / "**" / "*"), recursive=True)}
    dr = orchestra["dags"]["dailyslice-dc1"].test(logical_date=RUN_AT)
    assert str(dr.state) == "success", _states(dr)
    summary = json.loads(first_run["summary_path"].read_text())
    assert summary["job"]["job_id"] is None and summary["job"]["reused_job_id"]  # not resubmitted
    for kind in ("preprocessed", "index", "urldb"):
        assert summary["staging"][kind]["copied"] == 0 and summary["staging"][kind]["deleted"] == 0
        assert summary["staging"][kind]["skipped"] > 0
    assert summary["staging"]["logs"]["status"].startswith("no job ran")  # staged by the run that ran it
    after = {p: os.stat(p).st_mtime_ns for p in glob.glob(str(archive / "**" / "*"), recursive=True)}
    assert after == before


def test_a_day_without_warcs_is_skipped_and_the_run_succeeds(orchestra):
    dr = orchestra["dags"]["dailyslice-dc1"].test(logical_date=RUN_AT, run_conf={"date": EMPTY_DAY})
    states = _states(dr)
    assert str(dr.state) == "success"
    assert states.pop("catch_up") == "success"  # beside the day's chain: it checks the recent nights anyway
    assert set(states.values()) == {"skipped"}, states
    out = orchestra["base"] / "out" / "dc1"
    assert not (out / "_runs" / "dc1" / f"{EMPTY_DAY}.json").exists()
    assert not glob.glob(str(out / "logs" / f"*{EMPTY_DAY}*"))  # nothing was submitted


def test_a_failing_job_fails_the_run_with_the_log_tail(orchestra, capfd):
    dr = orchestra["dags"]["dailyslice-broken"].test(logical_date=RUN_AT)
    states = _states(dr)
    assert str(dr.state) == "failed"
    assert states["check"] == "failed" and states["wait"] == "success" and states["submit"] == "success"
    assert states["stage"] == "upstream_failed" and states["summary"] == "upstream_failed"
    captured = capfd.readouterr()
    text = captured.out + captured.err
    # the job script's own error, read back from the Slurm output file into the task log
    assert "Python environment not found: /nonexistent/venv/bin/python" in text
    assert "--- last 20 lines of" in text and "slurm-dailyslice-broken-2026-01-15-" in text
    out = orchestra["base"] / "out" / "broken"
    assert not (out / "_runs" / "broken" / f"{DAY}.json").exists()
    # no output is staged, but the record of why it failed is: Slurm's output file (the job died
    # before its run log existed)
    assert states["logs"] == "success"
    staged = orchestra["base"] / "archive" / "broken"
    assert sorted(str(p.relative_to(staged)) for p in staged.rglob("*") if p.is_file()) == [
        f"logs/2026-01/15/{_returned(dr, 'submit')['job_id']}/{name}" for name in ("_SUCCESS", "slurm.out")
    ]
    assert "Python environment not found" in next(staged.rglob("slurm.out")).read_text()


def test_an_unhealthy_day_is_indexed_but_fails_the_run_with_its_health(orchestra, capfd):
    dr = orchestra["dags"]["dailyslice-sick"].test(logical_date=RUN_AT)
    states = _states(dr)
    out = orchestra["base"] / "out" / "sick"
    text = "".join(capfd.readouterr())
    assert str(dr.state) == "failed", f"{states}\n{text[-3000:]}"
    assert states["wait"] == "success" and states["check"] == "failed" and states["stage"] == "upstream_failed"
    # run-day.sh indexed the published day, then wrote a failure marker with the health block
    failed = json.loads((out / "_runs" / "sick" / f"{DAY}.failed.json").read_text())
    assert failed["ok"] is False and failed["preprocess_rc"] == 3 and failed["index_rc"] == 0
    assert failed["catalogue_rc"] == 0
    assert failed["health"]["ok"] is False and failed["health"]["breached"] == ["max_failed_share"]
    assert not (out / "_runs" / "sick" / f"{DAY}.json").exists()
    for kind in ("preprocessed", "index", "catalogue"):
        assert (out / kind / "2026-01" / "15" / "_SUCCESS").exists()
    # the check task's log and exception say what was lost and where
    reason = failed["health"]["top_reasons"][0]["reason"]
    assert "sick 2026-01-15: day is UNHEALTHY" in text and "breached max_failed_share (50.00% > 1.00%)" in text
    assert f"top reasons: {reason} 6" in text
    for off in orchestra["sick_offsets"][:3]:
        assert f"offset {off}: {reason}" in text
    assert "AirflowFailException: sick 2026-01-15: day is UNHEALTHY" in text


def test_the_graph_ran_on_the_cluster_in_independent_key_ranges(orchestra, first_run):
    """The index job's web graph on the Slurm allocation's Spark cluster: its in-links come in
    one file per key range of dst_url (no URL in two ranges), its host graph in one file per
    key range of src_host, as many as the cluster's task slots, and the spill is gone."""
    import pyarrow.parquet as pq

    marker = json.loads((orchestra["base"] / "out" / "dc1" / "_runs" / "dc1" / f"{DAY}.json").read_text())
    g = pathlib.Path(marker["outputs"]["index"]) / "graph"
    stats = json.loads((g.parent / "_stats.json").read_text())["graph"]
    assert stats["edges"] > 0 and stats["inlinks"] > 0
    inl = sorted(g.glob("inlinks/part-*.parquet"))
    hosts = sorted(g.glob("hosts/part-*.parquet"))
    edges = sorted(g.glob("edges/part-*.parquet"))
    # at least one key range per task slot of the 2-node cluster; one edges file per page file
    assert len(inl) >= 2 and hosts and edges
    urls = [pq.read_table(f, columns=["dst_url"]).column(0).to_pylist() for f in inl]
    assert sum(map(len, urls)) == len(set().union(*map(set, urls))) == stats["inlinks"]
    assert sum(1 for u in urls if u) >= 2  # the work really split
    pairs = [pq.read_table(f, columns=["src_host"]).column(0).to_pylist() for f in hosts]
    owners = {}
    for k, hs in enumerate(pairs):
        for h in hs:
            assert owners.setdefault(h, k) == k  # a source host's rows in one key range only
    assert sum(pq.read_metadata(f).num_rows for f in edges) == stats["edges"]
    assert not (g / "_spill").exists()


def test_a_file_written_late_into_a_published_day_runs_the_day_again(orchestra, first_run, corpus):
    """The crawler writes one more WARC into the day's folder after the day was published: the
    next run of that day sees its input record differ from the bucket and runs the job again
    on the real Slurm + Spark path; the re-published, re-staged day has the late file's pages."""
    import pyarrow.dataset as ds

    from lib.store import s3

    before = json.loads(first_run["summary_path"].read_text())["job"]
    late = str(corpus / "dolma" / "sample-0000.warc.gz")  # a real crawl file (48 records, 22 pages)
    key = f"dc1/warc/{DAY:%Y-%m}/{DAY:%d}/crawler9/{os.path.basename(late)}"
    s3.client().upload_file(late, orchestra["bucket"], key)
    try:
        dr = orchestra["dags"]["dailyslice-dc1"].test(logical_date=RUN_AT, run_conf={"date": DAY.isoformat()})
        assert str(dr.state) == "success" and set(_states(dr).values()) == {"success"}, _states(dr)
        summary = json.loads(first_run["summary_path"].read_text())
        job = summary["job"]
        assert job["job_id"] and job["job_id"] != (before.get("job_id") or before.get("reused_job_id"))
        assert job["rerun_because"]["added"] == [f"{DAY:%Y-%m}/{DAY:%d}/crawler9/{os.path.basename(late)}"]
        assert summary["input"]["files"] == len(orchestra["warcs"]) + 1
        staged = orchestra["base"] / "archive" / "dc1" / "preprocessed" / "2026-01" / "15"
        rec = json.loads((staged / "_inputs.json").read_text())
        assert rec["count"] == len(orchestra["warcs"]) + 1
        files = set(
            ds.dataset(
                str(staged),
                format="parquet",
                partitioning="hive",
                exclude_invalid_files=True,
                ignore_prefixes=["_", "."],
            )
            .to_table(columns=["warc_file"])
            .column(0)
            .to_pylist()
        )
        assert f"s3://{orchestra['bucket']}/{key}" in files  # the real file's pages are published
        # and the run after that finds the day complete: nothing resubmitted
        dr = orchestra["dags"]["dailyslice-dc1"].test(logical_date=RUN_AT, run_conf={"date": DAY.isoformat()})
        assert str(dr.state) == "success"
        again = json.loads(first_run["summary_path"].read_text())["job"]
        assert again["job_id"] is None and again["reused_job_id"] == job["job_id"]
    finally:
        s3.client().delete_object(Bucket=orchestra["bucket"], Key=key)


SKIPPED = dt.date(2026, 1, 12)  # a night that never ran: its WARCs are in the bucket, no day was published
NEXT_NIGHT = dt.datetime(2026, 1, 14, 3, 0, tzinfo=dt.timezone.utc)  # the run of 2026-01-13, a day without WARCs
# dag.test() runs the tasks in this process and an earlier run's params.date stays on them: name the day
NEXT_DAY = {"date": "2026-01-13"}


def _catch_up_runs(dag_id: str) -> list[dict]:
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session

    with create_session() as session:
        runs = session.query(DagRun).filter(DagRun.dag_id == dag_id, DagRun.run_id.like("catchup__%")).all()
        return [
            {"run_id": r.run_id, "state": str(r.state), "conf": dict(r.conf or {}), "run_type": str(r.run_type)}
            for r in runs
        ]


def _returned(dr, task_id: str):
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        query = XComModel.get_many(run_id=dr.run_id, dag_ids=dr.dag_id, task_ids=task_id, key="return_value")
        return XComModel.deserialize_value(session.scalars(query).one())


def test_a_skipped_night_is_found_queued_once_and_run(orchestra, caplog, corpus):
    """The nightly catch_up task on the real path: a night whose run never happened (its WARCs
    in the bucket, no published day) is found by the next night's run, whose own day is empty
    (catch_up runs beside the skipped chain), and queued as a run of the DAG for that day; a
    second check finds that run and does not queue the day again; the day, run, is complete."""
    import pyarrow.dataset as ds

    from lib.orchestration import days
    from lib.store import s3

    dag = orchestra["dags"]["dailyslice-missed"]
    keys = []
    for p in [str(corpus / "dolma" / "sample-0001.warc.gz")]:  # a real crawl file (34 records, 15 pages)
        keys.append(f"missed/warc/{SKIPPED:%Y-%m}/{SKIPPED:%d}/crawler1/{os.path.basename(p)}")
        s3.client().upload_file(p, orchestra["bucket"], keys[-1])

    caplog.clear()
    dr = dag.test(logical_date=NEXT_NIGHT, run_conf=NEXT_DAY)
    states = _states(dr)
    warned = [r.getMessage() for r in caplog.records if r.name == "dailyslice.dag" and r.levelname == "WARNING"]
    assert str(dr.state) == "success" and states["catch_up"] == "success", states
    assert states["estimate"] == "skipped" and states["summary"] == "skipped"  # the night's own day: no WARCs
    report = _returned(dr, "catch_up")
    assert report["window"] == ["2026-01-07", "2026-01-13"] and report["own_day"] == "2026-01-13"
    assert report["states"] == {
        "empty": ["2026-01-07", "2026-01-08", "2026-01-09", "2026-01-10", "2026-01-11", "2026-01-13"],
        "missing": [str(SKIPPED)],
    }
    assert [(q["day"], q["state"], q["files"]) for q in report["queued"]] == [(str(SKIPPED), "missing", 1)]
    assert report["already_queued"] == [] and report["deferred"] == []
    run_id = report["queued"][0]["run_id"]
    assert run_id.startswith(f"catchup__{SKIPPED}__")
    assert len(warned) == 1 and warned[0].startswith(f"catch-up: {SKIPPED}  missing    (1 archives, ")
    assert warned[0].endswith(f"no published day): queued as run {run_id}")
    # the run waits in the Airflow DB for the scheduler (max_active_runs at a time) with the day as its conf
    assert _catch_up_runs(dag.dag_id) == [
        {"run_id": run_id, "state": "queued", "conf": {"date": str(SKIPPED)}, "run_type": "operator_triggered"}
    ]

    # the check again (the next night's run re-run): the day is found queued, not queued twice
    dr = dag.test(logical_date=NEXT_NIGHT, run_conf=NEXT_DAY)
    again = _returned(dr, "catch_up")
    assert again["queued"] == [] and [(a["run_id"], a["run_state"]) for a in again["already_queued"]] == [
        (run_id, "queued")
    ]
    assert [r["run_id"] for r in _catch_up_runs(dag.dag_id)] == [run_id]

    # the queued run's work: the skipped day on the real Slurm + Spark path
    dr = dag.test(logical_date=dt.datetime(2026, 1, 13, 3, 0, tzinfo=dt.timezone.utc), run_conf={"date": str(SKIPPED)})
    assert str(dr.state) == "success" and set(_states(dr).values()) == {"success"}, _states(dr)
    out = orchestra["base"] / "out" / "missed"
    summary = json.loads((out / "_runs" / "missed" / f"{SKIPPED}.summary.json").read_text())
    assert summary["job"]["job_id"] and summary["input"]["files"] == 1
    assert summary["catch_up"]["own_day"] == str(SKIPPED) and summary["catch_up"]["queued"] == []  # its own day
    root = f"s3://{orchestra['bucket']}/missed"
    assert [r["state"] for r in days.check_days(root, str(out), SKIPPED, 1)] == ["complete"]
    staged = orchestra["base"] / "archive" / "missed" / "preprocessed" / f"{SKIPPED:%Y-%m}" / f"{SKIPPED:%d}"
    pages = ds.dataset(
        str(staged), format="parquet", partitioning="hive", exclude_invalid_files=True, ignore_prefixes=["_", "."]
    ).to_table(columns=["warc_file"])
    assert pages.num_rows > 0 and set(pages.column(0).to_pylist()) == {f"s3://{orchestra['bucket']}/{k}" for k in keys}
    # and the next check finds it complete: nothing to queue
    dr = dag.test(logical_date=NEXT_NIGHT, run_conf=NEXT_DAY)
    last = _returned(dr, "catch_up")
    assert str(SKIPPED) in last["states"]["complete"] and not (last["queued"] or last["already_queued"])
