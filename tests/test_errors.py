"""One error family: every exception class the project defines derives from DailysliceError,
there is one ConfigError, and a usage error raised inside a job exits 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest

from lib.errors import ConfigError, UsageError


#: run in a fresh interpreter: importing every module loads Airflow (the DAG factory), whose
#: configuration must not be read before the Airflow tests set their own AIRFLOW_HOME
SCAN = """
import importlib, inspect, json, pkgutil
import lib
from lib.errors import DailysliceError
out = []
for m in pkgutil.walk_packages(lib.__path__, "lib."):
    if m.name.endswith(("._lexwalk", "._maxscore")):
        continue
    mod = importlib.import_module(m.name)
    for _, c in inspect.getmembers(mod, inspect.isclass):
        if issubclass(c, BaseException) and c.__module__ == m.name:
            out.append([m.name, c.__qualname__, issubclass(c, DailysliceError)])
print(json.dumps(out))
"""


def _project_exceptions() -> list[list]:
    """[module, class, in the family] of every exception class the project defines."""
    env = dict(os.environ, AIRFLOW_HOME=tempfile.mkdtemp(prefix="errors-scan-airflow-"))
    r = subprocess.run([sys.executable, "-c", SCAN], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def exceptions() -> list[list]:
    return _project_exceptions()


def test_every_project_exception_is_in_the_family(exceptions):
    assert len(exceptions) >= 20
    assert [f"{m}.{c}" for m, c, ok in exceptions if not ok] == []


def test_one_config_error(exceptions):
    from lib.orchestration import datacenters as dc_config
    from lib.placement import config as slice_config

    assert dc_config.ConfigError is slice_config.ConfigError is ConfigError
    assert [m for m, c, _ in exceptions if c == "ConfigError"] == ["lib.errors"]


def test_a_usage_error_found_inside_a_job_exits_2(tmp_path, capsys):
    from jobs.catalogue import main

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "_SUCCESS").write_text("")
    # no --date and an input path without YYYY-MM/DD: the job finds it out in run(), before Spark work
    assert main(["--input", str(tmp_path / "in"), "--output", str(tmp_path / "out")], spark=object()) == 2
    assert "give --date" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # found while resolving the options: argparse's exit 2
        main(["--date", "2026-01-01"], spark=object())
    assert e.value.code == 2
    assert issubclass(UsageError, ValueError)
