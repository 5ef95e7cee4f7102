"""One error family: every exception class the project defines derives from DailysliceError,
there is one ConfigError, and a usage error raised inside a job exits 2."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import lib
from lib.core.errors import ConfigError, DailysliceError, UsageError


def _project_exceptions() -> list[type]:
    out = []
    for m in pkgutil.walk_packages(lib.__path__, "lib."):
        if m.name.endswith("._lexwalk") or m.name.endswith("._maxscore"):
            continue
        mod = importlib.import_module(m.name)
        out += [c for _, c in inspect.getmembers(mod, inspect.isclass)
                if issubclass(c, BaseException) and c.__module__ == m.name]
    return out


def test_every_project_exception_is_in_the_family():
    found = _project_exceptions()
    assert len(found) >= 20
    assert [c.__qualname__ for c in found if not issubclass(c, DailysliceError)] == []


def test_one_config_error():
    from lib.orchestration import config as dc_config
    from lib.placement import config as slice_config

    assert dc_config.ConfigError is slice_config.ConfigError is ConfigError
    assert [c for c in _project_exceptions() if c.__name__ == "ConfigError"] == [ConfigError]


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
