"""The compiled walker's rules are lib/html/rules.py's, and nowhere else.

lib/html/native/lexwalk_rules.h (the tag sets, word lists, thresholds and codes lexwalk.c
includes) is generated from lib/html/rules.py by scripts/gen_lexwalk_rules.py: the committed
header is what the rules give, the built module carries the digest of the rules it was built
from (a walker built from other rules is not used), and the Python path's modules hold the very
objects of lib/html/rules.py, not copies. A run on the slow path by accident is a health warning.
(That both paths take the same decisions with these tables: tests/html/test_native_walk.py.)
"""

from __future__ import annotations

import importlib
import pathlib
import runpy
import tomllib

import pytest

from lib.html import rules, walk
from lib.preprocess import health

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEN = runpy.run_path(str(ROOT / "scripts" / "gen_lexwalk_rules.py"), run_name="gen")
RULE_NAMES = rules.TAG_SETS + rules.WORD_LISTS + rules.THRESHOLDS + rules.CODES + ("SEP",)


def test_the_committed_header_is_what_the_rules_give(capsys):
    assert GEN["main"](["--check"]) == 0, capsys.readouterr().err
    header = GEN["HEADER"].read_text()
    assert f'#define RULES_DIGEST "{rules.digest()}"' in header
    assert "#define LINK_NUM 3\n#define LINK_DEN 5\n" in header
    cells = "static inline int is_cell_tag(uintptr_t t) {\n    switch (t) {\n    case LXB_TAG_TD: case LXB_TAG_TH:\n"
    assert cells in header


def test_a_changed_rule_changes_the_header_and_the_digest():
    changed = GEN["load_rules"]()
    before = GEN["render"](changed)
    changed.BOILER_WORDS = changed.BOILER_WORDS | {"zzpromo"}
    changed.TEASER_MAX = 401
    after = GEN["render"](changed)
    assert '"zzpromo"' in after and "#define TEASER_MAX 401\n" in after
    assert '"zzpromo"' not in before and changed.digest() != rules.digest()
    changed.CELL_TAGS = frozenset({"td"})  # a tag set is a switch over lexbor's tag ids
    assert "case LXB_TAG_TD:\n        return 1;" not in GEN["render"](changed)
    assert "    case LXB_TAG_TD: return 1;" in GEN["render"](changed)


def test_the_header_refuses_what_c_cannot_hold():
    changed = GEN["load_rules"]()
    changed.BOILER_WORDS = changed.BOILER_WORDS | {'a"b'}
    with pytest.raises(SystemExit, match="plain ASCII"):
        GEN["render"](changed)


def test_the_selectolax_version_is_the_pin():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"selectolax=={GEN['selectolax_pin']()}" in deps
    assert f'#define SELECTOLAX_VERSION "{GEN["selectolax_pin"]()}"' in GEN["HEADER"].read_text()


def test_the_built_walker_carries_these_rules():
    assert walk.WALK is not None, walk.status()
    assert (walk.WALK.API, walk.WALK.RULES) == (walk.API, rules.digest())


def test_a_walker_built_from_other_rules_is_not_used(monkeypatch):
    monkeypatch.setattr(rules, "digest", lambda: "0" * 16)
    assert walk._usable() is None
    monkeypatch.setattr(walk, "WALK", None)  # what the import decided, had the rules been these
    assert walk.status() == "pure Python (lib.html._lexwalk built from other rules than lib/html/rules.py: rebuild it)"
    assert walk.slow_by_accident(walk.status())


@pytest.mark.parametrize(
    "module", ["boilerplate", "measure_walk", "roots", "maintext", "mainhtml", "headings", "content"]
)
def test_the_python_path_holds_the_rules_themselves(module):
    # a constant of the rules defined again in a module would be a second source
    mod = importlib.import_module(f"lib.html.{module}")
    for name in RULE_NAMES:
        if name in vars(mod):
            assert vars(mod)[name] is getattr(rules, name), f"lib.html.{module}.{name} is not lib.html.rules.{name}"
    assert importlib.import_module("lib.html.mainhtml").TAGS is rules.HTML_TAGS


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
