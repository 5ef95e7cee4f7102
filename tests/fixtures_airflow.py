"""Airflow 3 in a temporary AIRFLOW_HOME with a SQLite metadata DB, for ``dag.test()``.

Airflow reads its configuration when first imported, so the environment is set here
before anything imports ``airflow`` (test modules import it inside tests only).
Register with ``pytest_plugins = ["tests.fixtures_airflow"]``.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DAGS = ROOT / "airflow" / "dags"


@pytest.fixture(scope="session")
def airflow_home(tmp_path_factory):
    """Set AIRFLOW_HOME and friends for the session and migrate a fresh SQLite DB once."""
    import importlib.util

    if importlib.util.find_spec("airflow") is None:  # find_spec: importing now would read the wrong config
        pytest.skip("apache-airflow 3 not installed: pip install -e '.[airflow]'")
    home = tmp_path_factory.mktemp("airflow-home")
    env = {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
        "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(home / "logs"),
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    r = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"airflow db migrate failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    if "airflow.settings" in sys.modules:  # imported earlier with another config: point it here
        from airflow import settings

        settings.dispose_orm()
        settings.SQL_ALCHEMY_CONN = env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
        settings.configure_orm()
    yield home
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
