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
from dataclasses import dataclass, fields
from typing import Any

import pytest

from jobs import catalogue, extract, index, ondemand, preprocess
from lib.runtime.options import DayJobOptions, Flag, build_parser, byte_text, default_of, opt

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


def _switch(spec: Flag) -> bool:
    return dict(spec.argparse).get("action") in ("store_true", "store_false")


@pytest.mark.parametrize("job", JOBS)
def test_each_option_is_declared_once_in_the_dataclass_and_its_help_shows_the_fields_default(job):
    options_class = JOBS[job].options_class
    parser = JOBS[job]().parser()
    assert parser.format_help()  # argparse refuses an empty exclusive group here
    actions = {a.dest: a for a in parser._actions if a.dest != "help"}
    assert set(actions) == {f.name for f in fields(options_class)}  # every field a flag, every flag a field
    for f in fields(options_class):
        spec, action, value = f.metadata["cli"], actions[f.name], default_of(f)
        assert "default" not in spec.help, f"{job} --{f.name}: the help repeats a default by hand"
        assert action.default == (list(value) if isinstance(value, tuple) else value), f.name
        if spec.shown is not None:
            shown = spec.shown.format(input_kind=JOBS[job].input_kind, output_kind=JOBS[job].output_kind)
            assert action.help.endswith(f"(default: {shown.replace('%', '%%')})"), f.name
        elif not _switch(spec) and value not in (None, ()):
            assert action.help.endswith(f"(default: {spec.render(value)})"), f.name
            assert spec.render(value) == str(value) or spec.render is byte_text, f.name
        else:
            assert "(default" not in action.help, f.name


def test_a_new_option_is_one_field():
    @dataclass(frozen=True)
    class Opts(DayJobOptions):
        size: int = opt(3 << 20, "bytes a part holds", render=byte_text, type=int, metavar="BYTES")
        graph: bool = opt(True, "no web graph", flag="--no-graph", action="store_false")
        a: str | None = opt(None, "one list", group="list")
        b: str | None = opt(None, "another list", group="list")
        names: tuple[str, ...] = opt((), "a name (repeat)", action="append")
        plain: int = 7  # no opt(): not on the command line

    p = build_parser(Opts, "x.py", input_kind="warc", output_kind="out")
    help_text = " ".join(p.format_help().split())
    assert (
        "bytes a part holds (default: 3 MiB)" in help_text
        and "input folder (default: ROOT/warc/YYYY-MM/DD)" in help_text
    )
    assert "--plain" not in help_text
    got = Opts.from_args(p.parse_args(["--size", "5", "--no-graph", "--names", "x", "--names", "y", "--a", "1"]))
    assert got == Opts(size=5, graph=False, names=("x", "y"), a="1")
    assert Opts.from_args(p.parse_args([])) == Opts()
    with pytest.raises(SystemExit):
        p.parse_args(["--a", "1", "--b", "2"])  # one exclusive group
