"""The on-demand DAG end to end on real parts: a request folder beside a published day -> pick
-> real sbatch of deploy/slurm/ondemand.sbatch on the two-node Slurm cluster (jobs/ondemand.py
in Spark local mode) -> public/<id>/ staged to a filesystem target; then a run with nothing new
to do, and a bad request whose reason reaches the failed run."""

from __future__ import annotations

import json
import pathlib

import pytest

from tests.helpers_datacenters import datacenter_entry, datacenters_file
from tests.index.test_index_job import sample_pages, write_day

pytest_plugins = ["tests.fixtures_airflow", "tests.fixtures_slurm"]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _request(root: pathlib.Path, rid: str, languages: list[str]) -> pathlib.Path:
    folder = root / "on_demand" / rid
    folder.mkdir(parents=True)
    config = {"days": ["2026-01-15"], "languages": languages, "requester": "t", "purpose": "DAG test"}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "url_patterns.txt").write_text("example.com\n")
    return folder


@pytest.fixture(scope="module")
def ondemand_dc(slurm_cluster, airflow_home, s3_server, submit_jvm_archive, tmp_path_factory):
    base = tmp_path_factory.mktemp("ondemand-dag")
    cfg = datacenter_entry(base, s3_server, "unused", "dc1", 1, submit_jvm_archive)
    cfg.update(output_root=str(base / "out"), log_dir=str(base / "logs"), start_date="2026-01-01")
    cfg["staging"]["path"] = str(base / "archive")
    cfg["on_demand"] = {"args": "--master local[1]"}
    write_day(base / "out", sample_pages())
    path = base / "datacenters.json"
    path.write_text(json.dumps({"datacenters": {"dc1": cfg}}))
    from lib.orchestration.datacenters import load_config

    with datacenters_file(path):
        yield base, load_config(str(path))["dc1"]


def test_a_request_is_picked_run_on_slurm_and_staged(ondemand_dc):
    from lib.orchestration.ondemand_dag import build_ondemand_dag

    base, cfg = ondemand_dc
    folder = _request(base / "out", "r1", ["eng"])
    dag = build_ondemand_dag("dc1", cfg)
    dr = dag.test()
    logs = "\n".join(p.read_text()[-3000:] for p in sorted((base / "logs").glob("*.out")))
    assert str(dr.state) == "success", logs
    status = json.loads((folder / "status.json").read_text())
    eng_com = [p for p in sample_pages() if p["language"] == "eng" and p["url_host"].endswith(".example.com")]
    assert status["state"] == "done" and status["counts"]["kept"] == len(eng_com)
    published, staged = base / "out" / "public" / "r1", base / "archive" / "public" / "r1"
    manifest = json.loads((published / "_manifest.json").read_text())
    assert manifest["files"] and (staged / "_SUCCESS").exists()
    for rel in [*manifest["files"], "_manifest.json"]:
        assert (staged / rel).read_bytes() == (published / rel).read_bytes()

    # nothing new: the run skips everything after pick and succeeds; r1 is not run again
    dr = dag.test()
    assert str(dr.state) == "success"
    assert json.loads((folder / "status.json").read_text())["updated"] == status["updated"]

    # a bad request: the run fails with the request's reason; nothing published
    bad = _request(base / "out", "r2", ["xxq"])
    dr = dag.test()
    assert str(dr.state) == "failed"
    reason = json.loads((bad / "status.json").read_text())["reason"]
    assert "unknown language(s) 'xxq'" in reason
    assert not (base / "out" / "public" / "r2").exists() and not (base / "archive" / "public" / "r2").exists()
