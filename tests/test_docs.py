"""docs/preprocess.md documents every output column; the README keeps the two set-up commands."""

from __future__ import annotations

import pathlib

from lib.pages.schema import CAPTURE_COLUMNS, OPT_IN_PAGE_COLUMNS, PAGE_COLUMNS

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PREPROCESS_DOC = (ROOT / "docs" / "preprocess.md").read_text()


def test_every_column_is_documented():
    for name, _, desc in PAGE_COLUMNS + OPT_IN_PAGE_COLUMNS + CAPTURE_COLUMNS:
        assert f"| `{name}` |" in PREPROCESS_DOC, name
        assert desc in PREPROCESS_DOC, name


def test_readme_keeps_exactly_two_setup_commands():
    block = README.split("## Set up on a fresh machine", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["make demo", "make test"]
