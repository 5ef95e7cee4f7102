"""Each job's command line is generated from its options dataclass, and no flag was lost.

``tests/data/job_flags.json`` is a snapshot of every Spark job's parser taken while the flags
were still written by hand (``add_argument`` beside the dataclass): each flag's option strings,
dest, type, default, choices, action, nargs, metavar and exclusive group. The generated parsers
must match it in all of these (help wording may change); and every flag's help shows the
default the dataclass field holds, not a hand-written copy of it.
"""

from __future__ import annotations

import argparse
import json
import pathlib
from typing import Any

import pytest

from jobs import catalogue, extract, index, ondemand, preprocess

ROOT = pathlib.Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "tests" / "data" / "job_flags.json"
JOBS = {
    "preprocess": preprocess.PreprocessJob,
    "index": index.IndexJob,
    "catalogue": catalogue.CatalogueJob,
    "extract": extract.ExtractJob,
    "on-demand": ondemand.OnDemandJob,
}


def _plain(value: Any) -> Any:
    """A default or choice as JSON holds it (a function or type by its name: it may move between modules)."""
    if isinstance(value, (list, tuple, range)):
        return [_plain(v) for v in value]
    if callable(value):
        return value.__qualname__
    return value


def flags(parser: argparse.ArgumentParser) -> dict[str, dict[str, Any]]:
    """What a parser accepts, by dest: everything but the help text."""
    groups = {id(a): i for i, g in enumerate(parser._mutually_exclusive_groups) for a in g._group_actions}
    return {
        a.dest: {
            "flags": list(a.option_strings),
            "action": type(a).__name__,
            "type": _plain(a.type),
            "default": _plain(a.default),
            "choices": _plain(a.choices),
            "nargs": a.nargs,
            "const": _plain(a.const),
            "metavar": a.metavar,
            "required": a.required,
            "exclusive_group": groups.get(id(a)),
        }
        for a in parser._actions
        if a.dest != "help"
    }


@pytest.fixture(autouse=True)
def _no_env_defaults(monkeypatch):
    monkeypatch.delenv("DAILYSLICE_S3_MAX_CONNECTIONS_PER_JOB", raising=False)


@pytest.mark.parametrize("job", JOBS)
def test_every_flag_of_the_snapshot_is_still_there_with_the_same_meaning(job):
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))[job]
    assert flags(JOBS[job]().parser()) == snapshot


if __name__ == "__main__":  # pragma: no cover - python -m tests.test_job_flags writes the snapshot
    import os

    os.environ.pop("DAILYSLICE_S3_MAX_CONNECTIONS_PER_JOB", None)
    snap = {name: flags(cls().parser()) for name, cls in JOBS.items()}
    SNAPSHOT.write_text(json.dumps(snap, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(sum(map(len, snap.values())), "flags")
