"""Airflow DAG file: one nightly DAG and one on-demand DAG per data center of datacenters.yaml
(``$DAILYSLICE_DATACENTERS`` overrides the path), and a batch DAG for each with ``batch_minutes``.
See docs/orchestration.md and docs/ondemand.md."""

from __future__ import annotations

import os

from lib.orchestration.batch_dag import build_batch_dag
from lib.orchestration.dag_factory import build_dag
from lib.orchestration.datacenters import load_config
from lib.orchestration.ondemand_dag import build_ondemand_dag

_config = os.environ.get("DAILYSLICE_DATACENTERS") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "datacenters.yaml"
)
for _name, _cfg in load_config(_config).items():
    for _dag in (build_dag(_name, _cfg), build_ondemand_dag(_name, _cfg), build_batch_dag(_name, _cfg)):
        if _dag is not None:  # no batch DAG without batch_minutes
            globals()[_dag.dag_id.replace("-", "_")] = _dag
