"""``dailyslice --help`` lists every command of the project.

Each module that runs as a program (``python -m``: a ``__main__.py``, or a ``main`` under
``if __name__ == "__main__"``) in ``lib/`` and ``jobs/`` is a ``dailyslice`` command, each
installed script is ``dailyslice`` or runs one of them, and the developer tools outside the
package (``scripts/``, ``devtools/``) are listed under "other ways in".
"""

from __future__ import annotations

import ast
import pathlib
import tomllib

import pytest

from jobs import cli

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: modules that run as programs but are not commands: the dispatcher itself, Spark's worker daemon
NOT_COMMANDS = {"jobs.cli", "lib.runtime.pydaemon"}


def _runs_as_program(path: pathlib.Path) -> bool:
    if path.name == "__main__.py":
        return True
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(n, ast.If) and isinstance(n.test, ast.Compare) and ast.unparse(n.test) == "__name__ == '__main__'"
        for n in tree.body
    )


def _programs(*folders: str) -> set[str]:
    found = set()
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if _runs_as_program(path):
                found.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


def test_every_program_module_of_the_package_is_a_command():
    commands = {module for module, _ in cli.COMMANDS.values()}
    assert _programs("lib", "jobs") - NOT_COMMANDS == commands


def test_every_installed_script_is_the_command_or_one_of_its_commands():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    commands = {module for module, _ in cli.COMMANDS.values()}
    for name, target in scripts.items():
        module = target.split(":")[0]
        assert target == "jobs.cli:main" or module in commands, name
        if name != "dailyslice":
            assert name in " ".join(cli.ELSEWHERE), f"{name} is not listed under 'other ways in'"


def test_the_tools_outside_the_package_are_listed_as_other_ways_in(capsys):
    assert cli.main(["--help"]) == 0
    listed = capsys.readouterr().out
    for module in _programs("devtools"):
        assert f"python -m {module}" in listed, module
    for path in sorted((ROOT / "scripts").iterdir()):
        assert f"scripts/{path.name}" in listed, path.name
    assert "spark-submit jobs/" in listed and "dailyslice-serve" in listed


@pytest.mark.parametrize("name", ["list-records", "index-digest", "sample-crawl"])
def test_the_commands_that_were_only_modules_answer_help(name, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main([name, "--help"])
    assert e.value.code == 0 and "usage:" in capsys.readouterr().out


def test_sample_crawl_writes_the_files_it_prints(tmp_path, capsys):
    root = tmp_path / "root"
    assert cli.main(["sample-crawl", "--root", str(root), "--date", "2026-01-15", "--files", "1"]) == 0
    printed = capsys.readouterr().out.split()
    assert len(printed) == 1 and pathlib.Path(printed[0]).parent.parent == root / "warc" / "2026-01" / "15"
    from warcio.archiveiterator import ArchiveIterator

    with open(printed[0], "rb") as f:  # a WARC warcio reads, with the default 40 pages' responses
        assert sum(r.rec_type == "response" for r in ArchiveIterator(f)) >= 40
