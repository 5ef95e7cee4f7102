"""The Spark jobs' command lines are a shell around typed options (lib.runtime.options.JobOptions).

Every command line the project documents (README, docs/, the jobs' docstrings, deploy/ scripts)
still parses, and to the options argparse reads from it, field for field; the command lines
documented when the options objects came (``tests/data/job_command_lines.json``, written by the
argparse-only jobs before) still parse to the same options; the options' defaults are the
parsers' defaults; a job called as a function runs with an options object.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import pathlib
import re
import shlex
from typing import Any

import pytest

from jobs import catalogue, extract, index, preprocess
from lib.errors import UsageError
from lib.runtime.options import JobOptions

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "job_command_lines.json"
JOBS = {
    "preprocess": preprocess.PreprocessJob,
    "index": index.IndexJob,
    "catalogue": catalogue.CatalogueJob,
    "extract": extract.ExtractJob,
}
#: where a command line names a job: ``dailyslice JOB``, ``jobs/JOB.py``, ``-m jobs.JOB``
_CALL = re.compile(r"(?:\bdailyslice\s+|\bjobs/|-m\s+jobs\.)(" + "|".join(JOBS) + r")(?:\.py)?\"?(?=\s|$)")
#: shell words of the deploy scripts: the exclusion list given, optional extras dropped, $DATE a day, other
#: variables their names
_SHELL_VARS = [
    (re.compile(r'"?\$\{EXCL_ARGS\[@\]\}"?'), "--exclusions EXCLUSIONS"),
    (re.compile(r"\$\{\w+:-\}"), ""),
    (re.compile(r"\$\{?DATE\}?\b"), "2026-01-15"),
    (re.compile(r"\$\{(\w+)[^}]*\}"), r"\1"),
    (re.compile(r"\$(\w+)"), r"\1"),
]


def _sources() -> list[pathlib.Path]:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "jobs").glob("*.py"))]
    deploy = [p for p in sorted((ROOT / "deploy").rglob("*")) if p.is_file()]
    return [p for p in docs + deploy + [ROOT / "Makefile"] if p.exists() and "benchmarks" not in p.name]


def _code_lines(path: pathlib.Path) -> list[tuple[int, str]]:
    """(line number, text) of the lines that may hold a command: fenced or indented code in
    Markdown, every line elsewhere; continuation lines (``\\``) joined."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[tuple[int, str]] = []
    fenced, i = False, 0
    while i < len(lines):
        no, text = i + 1, lines[i]
        while text.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text.rstrip()[:-1] + " " + lines[i].strip()
        i += 1
        if path.suffix == ".md":
            if text.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if not fenced and not text.startswith("    "):
                continue
        out.append((no, text))
    return out


def _argv(rest: str) -> list[str] | None:
    """The arguments after the job's name, or None when the text is a synopsis, not a command."""
    for pattern, repl in _SHELL_VARS:
        rest = pattern.sub(repl, rest)
    try:
        words = shlex.split(rest, comments=True)
    except ValueError:
        return None
    argv: list[str] = []
    group: list[str] | None = None  # a synopsis' optional part: [--docs-per-shard 100000]
    for w in words:
        if w in ("...", "|") or w.startswith(("2>", ">")):
            continue
        if w in ("&&", ";", "||") or w.startswith(("$(", "`")):
            break
        if w.startswith("[--"):
            w, group = w[1:], []
        if group is None:
            argv.append(w)
            continue
        closes = w.endswith("]") and w.count("[") < w.count("]")
        group.append(w[:-1] if closes else w)
        if closes:  # taken as given, unless it names a value (--docs-per-shard N)
            argv += [] if any(v.isupper() for v in group[1:]) else group
            group = None
    return argv if argv and argv[0].startswith("-") and argv != ["--help"] else None


def documented_command_lines() -> list[dict[str, Any]]:
    """Every documented command line of a Spark job: ``{"source", "job", "argv"}``."""
    found = []
    for path in _sources():
        for no, text in _code_lines(path):
            for m in _CALL.finditer(text):
                argv = _argv(text[m.end() :])
                if argv is not None:
                    found.append({"source": f"{path.relative_to(ROOT)}:{no}", "job": m.group(1), "argv": argv})
    return found


def _plain(value: Any) -> Any:
    """An option's value as JSON holds it (dates as YYYY-MM-DD, sequences as lists)."""
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def parsed(job: str, argv: list[str]) -> dict[str, Any]:
    """What the job's command line gives: the options object's fields, as JSON holds them."""
    options = JOBS[job]().options_from_argv(argv)
    return {f.name: _plain(getattr(options, f.name)) for f in dataclasses.fields(options)}


@pytest.fixture(autouse=True)
def _no_env_defaults(monkeypatch):
    monkeypatch.delenv("DAILYSLICE_S3_MAX_CONNECTIONS_PER_JOB", raising=False)


def test_the_collector_finds_the_command_lines_of_every_kind_of_source():
    lines = documented_command_lines()
    by_source = {c["source"].split(":")[0] for c in lines}
    assert {"README.md", "docs/index.md", "docs/extract.md"} <= by_source
    assert {c["job"] for c in lines} == set(JOBS)
    # a synopsis' optional parts are taken as given: docs/index.md's [--docs-per-shard 100000] ...
    synopsis = next(c for c in lines if "--gzip-level" in c["argv"])
    assert synopsis["argv"][-2:] == ["--master", "local[*]"] and "--no-graph" in synopsis["argv"]


def test_every_documented_command_line_parses_to_the_options_argparse_reads():
    lines = documented_command_lines()
    assert len(lines) >= 20
    for c in lines:
        job = JOBS[c["job"]]()
        args = job.parser().parse_args(c["argv"])
        options = parsed(c["job"], c["argv"])
        assert options == {k: _plain(v) for k, v in vars(args).items()}, c["source"]


def test_the_command_lines_the_nights_chain_gives_its_jobs_parse_to_the_options_argparse_reads():
    """deploy/common/run-day.sh no longer spells the jobs' command lines: ``dailyslice day`` builds them
    (jobs/day.py, step_argv), and each must parse as a documented one does."""
    from jobs import day
    from lib.orchestration import chain

    paths = chain.DayPaths(dt.date(2026, 1, 15), "s3://bucket/dc1", "/scratch/out")
    for name in chain.STEP_NAMES:
        argv = day.step_argv(name, paths, "/scratch/out/_exclusions.jsonl", "/logs/summaries", "--wait-lock 5")
        args = JOBS[name]().parser().parse_args(argv)
        assert parsed(name, argv) == {k: _plain(v) for k, v in vars(args).items()}, name
        assert args.wait_lock == 5.0 and args.exclusions == "/scratch/out/_exclusions.jsonl"


def test_the_command_lines_documented_before_the_options_objects_parse_to_the_same_options():
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert len(golden) >= 20
    for c in golden:
        now = parsed(c["job"], c["argv"])
        where = f"{c['source']}: {shlex.join(c['argv'])}"
        # an option added after the snapshot must be at its default on these lines
        defaults = {f.name: _plain(f.default) for f in dataclasses.fields(JOBS[c["job"]].options_class)}
        added = {k: v for k, v in now.items() if k not in c["options"]}
        assert added == {k: defaults[k] for k in added}, where
        assert {k: v for k, v in now.items() if k in c["options"]} == c["options"], where


def test_options_defaults_are_the_parsers_defaults():
    for name, cls in JOBS.items():
        job = cls()
        defaults = {a.dest: a.default for a in job.parser()._actions if a.dest != "help"}
        fields = {f.name: f for f in dataclasses.fields(job.options_class)}
        assert set(defaults) == set(fields), name
        plain = job.options_class()
        for dest, default in defaults.items():
            assert _plain(getattr(plain, dest)) == _plain(default), f"{name} --{dest}"


def test_options_are_frozen_and_resolving_paths_returns_new_options():
    job = index.IndexJob()
    options = index.IndexOptions(date=dt.date(2026, 1, 15), root="s3://bucket/x/", docs_per_shard=40)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.docs_per_shard = 1  # type: ignore[misc]
    resolved = job.resolve_io(options)
    assert options.input is None and resolved.input == "s3://bucket/x/preprocessed/2026-01/15"
    assert resolved.output == "s3://bucket/x/index/2026-01/15" and resolved.docs_per_shard == 40
    with pytest.raises(UsageError, match="--date and --root"):
        job.resolve_io(index.IndexOptions(input="a"))
    assert isinstance(options, JobOptions)


def test_the_index_records_the_options_that_shape_a_day_and_reads_them_back():
    options = index.IndexOptions(
        input="i", output="o", docs_per_shard=40, min_group_docs=1, graph=False, exclusions="rules.jsonl", gzip_level=6
    )
    record = options.record()
    assert record == {
        "docs_per_shard": 40,
        "min_group_docs": 1,
        "gzip_level": 6,
        "graph": False,
        "anchors": True,
        "honour_robots": True,
        "robots_txt_agents": [],
        "dup_bands": 16,
        "dup_threshold": 0.7,
        "dup_days": 30,
    }
    again = index.IndexOptions.from_record(json.loads(json.dumps(record)))
    assert again == index.IndexOptions(docs_per_shard=40, min_group_docs=1, gzip_level=6, graph=False)
    # a day recorded before a setting existed gets that setting's default
    assert index.IndexOptions.from_record({"docs_per_shard": 7}) == index.IndexOptions(docs_per_shard=7)


def _published(folder: pathlib.Path) -> dict[str, bytes]:
    """A published folder's files but its run record (``_stats.json`` holds times)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name not in ("_stats.json", "_SUCCESS")
    }


def test_a_job_called_as_a_function_publishes_what_its_command_line_does(spark, tmp_path):
    from lib.store import layout
    from lib.warc.sample import write_sample_crawl

    day, root = dt.date(2026, 1, 15), tmp_path / "root"
    write_sample_crawl(str(root), day, files=2, pages_per_file=30)
    result = preprocess.run(spark, preprocess.PreprocessOptions(date=day, root=str(root)))
    assert result.ok and result.exit_code == 0 and result.summary["pages_kept"] > 0
    # docs/runtime.md's example, as written, on this root
    doc = (ROOT / "docs" / "runtime.md").read_text(encoding="utf-8")
    example = doc.split("## Calling a job from Python", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    assert '"/data/bucket"' in example
    exec(example.replace('"/data/bucket"', repr(str(root))), {"spark": spark})  # the doc's own code
    by_function = pathlib.Path(layout.day_path(str(root), layout.INDEX, day))
    by_command = tmp_path / "index-cli"
    pre = layout.day_path(str(root), layout.PREPROCESSED, day)
    assert (
        index.main(
            ["--input", pre, "--output", str(by_command), "--date", day.isoformat(), "--docs-per-shard", "40"],
            spark=spark,
        )
        == 0
    )
    got, want = _published(by_function), _published(by_command)
    assert any(k.endswith(".ciff.gz") for k in want) and got == want
    stats = [json.loads((d / "_stats.json").read_text())["args"] for d in (by_function, by_command)]
    assert stats[0] == stats[1] == index.IndexOptions(docs_per_shard=40).record()
    marker = json.loads((pathlib.Path(layout.day_path(str(root), layout.CATALOGUE, day)) / "_SUCCESS").read_text())
    assert marker["args"] == {"warc_prefix": None, "no_report": False}  # the root's warc/, wherever it is then
    # a missing input is refused before anything runs; the command line exits 2 for it
    with pytest.raises(UsageError, match="does not exist"):
        index.run(spark, index.IndexOptions(input=str(tmp_path / "nothing"), output=str(tmp_path / "x")))
    assert not (tmp_path / "x").exists()


if __name__ == "__main__":  # pragma: no cover - writes the golden file from the current code
    import sys

    out = []
    for c in documented_command_lines():
        args = JOBS[c["job"]]().parser().parse_args(c["argv"])
        out.append({**c, "options": {k: _plain(v) for k, v in vars(args).items()}})
    GOLDEN.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"{len(out)} command lines", file=sys.stderr)
