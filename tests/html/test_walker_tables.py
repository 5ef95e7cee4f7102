"""The compiled walker's rules are the Python path's: the tag sets, the boilerplate words,
roles and thresholds, the dropping attributes, the block separator and the selectolax version in
lib/html/native/lexwalk.c are read from its source and held equal to the Python path's constants
(lib/html/boilerplate.py, measure.py, roots.py, maintext.py, headings.py) and to the pin in
pyproject.toml. A run on the slow path by accident is a health warning."""

from __future__ import annotations

import pathlib
import re
import tomllib

import pytest

from lib.html import boilerplate, headings, maintext, measure, roots, walk
from lib.preprocess import health

ROOT = pathlib.Path(__file__).resolve().parents[2]
C = (ROOT / "lib/html/native/lexwalk.c").read_text()


def _cases(function: str) -> set[str]:
    body = re.search(r"static int " + function + r"\(uintptr_t t\) \{(.*?)\n\}", C, re.S)[1]
    return {t.lower() for t in re.findall(r"case LXB_TAG_(\w+):", body)}


def _strings(array: str) -> list[str]:
    body = re.search(r"static const char \*const " + array + r"\[\] = \{(.*?)\};", C, re.S)[1]
    return re.findall(r'"([^"]*)"', body)


@pytest.mark.parametrize(
    "function, tags",
    [
        ("is_invisible_tag", boilerplate.INVISIBLE_TAGS),
        ("is_boiler_tag", boilerplate.BOILER_TAGS),
        ("is_protected_tag", boilerplate.PROTECTED_TAGS),
        ("is_class_exempt_tag", boilerplate.CLASS_EXEMPT_TAGS),
        ("is_link_exempt_tag", boilerplate.LINK_EXEMPT_TAGS),
        ("is_paragraph_tag", measure.PARAGRAPH_TAGS),
        ("is_block_tag", boilerplate.BLOCK_TAGS),
        ("is_cell_tag", maintext.CELL_TAGS),
        ("is_heading_tag", boilerplate.HEADING_TAGS),
        ("is_teaser_tag", boilerplate.TEASER_TAGS),
    ],
)
def test_the_tag_sets_are_the_python_ones(function, tags):
    assert _cases(function) == set(tags)


def test_the_word_lists_are_the_python_ones():
    assert set(_strings("BOILER_WORDS")) == boilerplate.BOILER_WORDS
    assert set(_strings("STATE_PARTS")) == boilerplate.STATE_PARTS
    assert set(_strings("BOILER_ROLES")) == boilerplate.BOILER_ROLES
    assert set(_strings("NOPRINT_WORDS")) == boilerplate.NOPRINT_WORDS
    assert set(_strings("NOPRINT_PARTS")) == boilerplate.NOPRINT_PARTS


@pytest.mark.parametrize(
    "name",
    [
        "LINK_NUM",
        "LINK_DEN",
        "ROOT_NUM",
        "ROOT_DEN",
        "ROOT_MIN",
        "CLEAN_NUM",
        "CLEAN_DEN",
        "SIB_MIN",
        "SIB_NUM",
        "SIB_DEN",
        "SIB_LEVELS",
        "LEAD_MIN",
        "LEAD_LEVELS",
        "RESIDUE_MAX",
        "RESIDUE_DEN",
        "TEASER_N",
        "TEASER_MAX",
        "TEASER_DEN",
        "HEADING_KEY_MAX",
        "HEADED_MAX",
    ],
)
def test_the_thresholds_are_the_python_ones(name):
    python = next(vars(m)[name] for m in (roots, boilerplate, headings) if name in vars(m))
    assert int(re.search(rf"#define {name} (\d+)", C)[1]) == python


def test_the_dropping_attributes_are_the_python_ones():
    assert 'attr_named(a, "hidden", 6)' in re.search(r"static int is_invisible\(.*?\n\}", C, re.S)[0]
    body = re.search(r"static int has_boiler_attr\(.*?\n\}", C, re.S)[0]
    assert 'attr_named(a, "aria-hidden", 11)' in body and 'value_is(a->value, "true")' in body


def test_the_separator_and_the_selectolax_pin_agree():
    assert int(re.search(r"#define SEP (0x[0-9a-f]+)", C)[1], 16) == ord(maintext.SEP)
    assert int(re.search(r"#define API (\d+)", C)[1]) == walk.API
    built_for = re.search(r'#define SELECTOLAX_VERSION "([^"]+)"', C)[1]
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"selectolax=={built_for}" in deps


def test_the_slow_path_by_accident_is_a_health_warning():
    assert walk.slow_by_accident("pure Python (built for selectolax 1.0.2, installed 1.0.3)")
    assert walk.slow_by_accident("pure Python (lib.html._lexwalk not built)")
    assert not walk.slow_by_accident("pure Python (DAILYSLICE_NATIVE_HTML=off)")
    assert not walk.slow_by_accident("compiled walker (selectolax 1.0.2)")
    totals = {
        "read": 10,
        "kept": 10,
        "html_seen": 10,
        "files": 1,
        "html_extraction": ["compiled walker (selectolax 1.0.2)", "pure Python (lib.html._lexwalk not built)"],
    }
    h = health.assess(totals, [{"file": "a", "read": 10, "failed_by_reason": {}}])
    assert h["ok"] and len(h["warnings"]) == 1 and "_lexwalk not built" in h["warnings"][0]
    assert "WARNING: HTML extraction ran on the slow path" in health.describe(h)
    totals["html_extraction"] = ["pure Python (DAILYSLICE_NATIVE_HTML=off)"]
    assert health.assess(totals, [{"file": "a", "read": 10, "failed_by_reason": {}}])["warnings"] == []
