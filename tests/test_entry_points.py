"""The entry points a user runs: the ``dailyslice`` command dispatches to every job and tool, and
every benchmark starts on this install (its imports resolve: the ``bench`` extra holds what
they need beyond the project; ``--help`` runs its argument parser)."""

from __future__ import annotations

import ast
import importlib.util
import pathlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from jobs import cli

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCHMARKS = sorted((ROOT / "benchmarks").glob("bench_*.py"))


def test_the_command_lists_and_dispatches_every_entry_point(capsys):
    assert cli.main([]) == 2 and cli.main(["--help"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in cli.COMMANDS)
    for module, _ in cli.COMMANDS.values():
        assert callable(importlib.import_module(module).main), module
    assert cli.main(["no-such-command"]) == 2
    assert cli.main(["check-days", "--root", "/nonexistent", "--days", "1", "--end", "2026-01-01"]) == 0
    assert "empty" in capsys.readouterr().out


def test_the_installed_command_runs():
    exe = pathlib.Path(sys.executable).parent / "dailyslice"
    if not exe.exists():
        pytest.skip("the project is not pip-installed in this interpreter's environment")
    r = subprocess.run([str(exe), "ciff", "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "validate" in r.stdout


def _imports(path: pathlib.Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_every_benchmark_import_is_installed():
    missing = {p.name: sorted(m for m in _imports(p) if importlib.util.find_spec(m) is None) for p in BENCHMARKS}
    assert not {k: v for k, v in missing.items() if v}, "add these to the bench extra of pyproject.toml"


def test_every_benchmark_starts():
    def run(p: pathlib.Path) -> tuple[str, int, str]:
        r = subprocess.run(
            [sys.executable, "-m", f"benchmarks.{p.stem}", "--help"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=180,
        )
        return p.stem, r.returncode, r.stderr[-500:]

    assert BENCHMARKS
    with ThreadPoolExecutor(2) as pool:
        failed = [r for r in pool.map(run, BENCHMARKS) if r[1] != 0]
    assert not failed, failed


def test_the_smoke_pass_runs_every_benchmark():
    from benchmarks import smoke

    assert sorted(r[0] for r in smoke.RUNS) == [p.stem for p in BENCHMARKS]
