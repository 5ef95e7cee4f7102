"""Airflow DAG file: one nightly DAG per data center of datacenters.yaml
(``$DAILYSLICE_DATACENTERS`` overrides the path). See docs/orchestration.md."""

from __future__ import annotations

import os

from lib.orchestration.datacenters import load_config
from lib.orchestration.dag_factory import build_dag

_config = os.environ.get("DAILYSLICE_DATACENTERS") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "datacenters.yaml")
for _name, _cfg in load_config(_config).items():
    _dag = build_dag(_name, _cfg)
    globals()[_dag.dag_id.replace("-", "_")] = _dag
