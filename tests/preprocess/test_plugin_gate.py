"""The plugin gate (lib.preprocess.gate, `dailyslice plugin`): benchmark runs, thresholds, refusals.

The benchmark is the committed conformance archives, plus the shared corpus where it exists
beside the checkout; these tests point ``DAILYSLICE_SHARED`` at an empty folder where they need
the committed data alone (what a clone without ``../shared`` has), which also keeps them quick.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import pathlib
import shutil

import pytest

from lib.errors import ConfigError, UsageError
from lib.preprocess import enrich, gate, plugin
from lib.store import update_log
from tests.preprocess.enrich_plugins import installed

HERE = pathlib.Path(__file__).resolve().parent
MICRODATA_SRC = HERE.parents[1] / "lib" / "preprocess" / "microdata.py"


@pytest.fixture(scope="module")
def test_plugins(tmp_path_factory):
    """The test plugins registered under dailyslice.enrichers by a distribution, as pip would."""
    plugins = {
        "gate_flaky": "tests.preprocess.enrich_plugins:flaky",
        "gate_half": "tests.preprocess.enrich_plugins:half_microdata",
    }
    with installed(tmp_path_factory.mktemp("site"), "gate-test-plugins", "2.5", plugins) as site:
        yield site


@pytest.fixture(scope="module")
def committed_only(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("DAILYSLICE_SHARED", str(tmp_path_factory.mktemp("no-shared")))
    yield
    mp.undo()


@pytest.fixture(scope="module")
def microdata_root(tmp_path_factory, committed_only):
    root = str(tmp_path_factory.mktemp("root"))
    return root, gate.evaluate(root, "microdata")


def test_microdata_passes_the_gate_on_committed_data(microdata_root):
    root, doc = microdata_root
    m = doc["measures"]
    assert doc["approved"] and doc["reasons"] == []
    assert doc["sha256"] == hashlib.sha256(MICRODATA_SRC.read_bytes()).hexdigest()
    assert list(m["pages_by_corpus"]) == ["conformance"] and m["pages"] >= doc["thresholds"]["min_pages"]
    assert all(b.startswith("conformance:") for b in doc["benchmark"])
    assert m["failed"] == 0 and m["pages_per_second_per_core"] > 0
    # every page has an expected output, and microdata equals Resilipipe's on each
    assert m["compared"] == m["pages"] and m["precision"] == m["recall"] == 1.0
    expected = [json.loads(x) for x in gzip.open(MICRODATA_SRC.with_name("microdata_expected.jsonl.gz"), "rt")]
    assert 0 < m["annotated"] <= sum(e["values"]["microdata"] is not None for e in expected)
    assert m["annotated_share"] == round(m["annotated"] / m["pages"], 4)
    path = gate.evaluation_path(root, "microdata", doc["version"])
    assert json.loads(open(path).read()) == doc
    assert [(u.kind, u.name, u.version) for u in update_log.read(root)] == [("plugin", "microdata", doc["version"])]
    assert gate.require(root, enrich.load(["microdata"])) == {
        "microdata": {"version": doc["version"], "sha256": doc["sha256"], "evaluation": path}
    }


def test_thresholds_come_from_the_roots_configuration(microdata_root, tmp_path):
    _, doc = microdata_root
    cfg = tmp_path / "shared" / "auxiliary" / "plugins" / "thresholds.json"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(json.dumps({"min_pages_per_second": 1e9, "min_annotated_share": 0.5}))
    t = gate.Thresholds.for_root(str(tmp_path))
    assert (t.min_pages_per_second, t.min_annotated_share, t.max_failed_pages) == (1e9, 0.5, 0)
    why = gate.verdict(doc["measures"], t)
    assert len(why) == 2 and "pages/s per core, below 1000000000.0" in why[0] and "annotated" in why[1]
    cfg.write_text(json.dumps({"min_speed": 3}))
    with pytest.raises(ConfigError, match=r"thresholds.json: not plugin thresholds .*keys: max_failed_pages"):
        gate.Thresholds.for_root(str(tmp_path))


def test_a_plugin_that_crashes_on_a_page_is_refused_and_cannot_run(test_plugins, committed_only, tmp_path, capsys):
    root = str(tmp_path)
    assert plugin.main(["evaluate", "gate_flaky", "--root", root]) == 1  # refused
    path = gate.evaluation_path(root, "gate_flaky", "2.5")  # the distribution's version
    doc = json.loads(open(path).read())
    m = doc["measures"]
    assert not doc["approved"] and m["failed"] == m["failed_by_reason"]["ValueError"] > 0
    assert doc["reasons"][0].startswith(f"failed on {m['failed']} benchmark pages")
    assert m["samples"] and m["samples"][0]["detail"] == "ValueError: text length divisible by 3"
    assert "expected_outputs" in m and "precision" not in m  # it ships none
    assert update_log.read(root)[-1].detail.startswith(f"sha256={doc['sha256']} refused: failed on")
    with pytest.raises(UsageError, match=r"'gate_flaky' was refused by its evaluation .*failed on \d+ benchmark"):
        gate.require(root, enrich.load(["gate_flaky"]))
    capsys.readouterr()
    assert plugin.main(["show", "gate_flaky", "--root", root]) == 0
    assert json.loads(capsys.readouterr().out) == doc


def test_recall_against_the_shipped_expected_outputs(test_plugins, committed_only, tmp_path):
    doc = gate.evaluate(str(tmp_path), "gate_half")
    m = doc["measures"]
    assert m["compared"] == m["pages"] and m["precision"] == 1.0  # what it says is right
    assert 0 < m["recall"] < 1.0  # but it leaves out the pages of odd-length URLs
    assert not doc["approved"] and any(r.startswith(f"recall {m['recall']}") for r in doc["reasons"])


def test_the_nightly_check_says_why(microdata_root, tmp_path):
    root, doc = microdata_root
    plugins = enrich.load(["microdata"])
    with pytest.raises(UsageError, match=r"'microdata' version .* has no evaluation .* missing\): run `dailyslice"):
        gate.require(str(tmp_path), plugins)
    with pytest.raises(UsageError, match="give --root"):
        gate.require(None, plugins)
    path = gate.evaluation_path(str(tmp_path), "microdata", doc["version"])
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        json.dump(doc | {"sha256": "0" * 64}, f)  # an evaluation of other code under the same version
    with pytest.raises(UsageError, match=r"evaluated sha256 0{64}, the installed .*microdata.py is [0-9a-f]{64}"):
        gate.require(str(tmp_path), plugins)
    assert plugin.main(["evaluate", "no_such_plugin", "--root", str(tmp_path)]) == 2


def test_the_benchmark_includes_the_shared_corpus_where_it_exists(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus" / "x"
    corpus.mkdir(parents=True)
    (corpus / "a.warc.gz").write_bytes(b"")
    (corpus / "README.md").write_text("not an archive")
    monkeypatch.setenv("DAILYSLICE_SHARED", str(tmp_path))
    got = gate.benchmark_archives()
    assert ("shared", str(corpus / "a.warc.gz")) in got and not any(p.endswith(".md") for _, p in got)
    assert {c for c, _ in got} == {"conformance", "shared"}


def test_page_keys_do_not_depend_on_where_the_archives_lie(tmp_path):
    """An ARC record's id is made of its archive's name and offset: the gate names each archive by
    its file name, so the expected outputs' keys hold in any checkout (CI clones elsewhere)."""
    arcs = [(c, p) for c, p in gate.benchmark_archives() if c == "conformance" and ".arc" in os.path.basename(p)]
    assert arcs, "the conformance archives hold ARC files"
    moved = []
    for i, (c, p) in enumerate(arcs):
        dest = tmp_path / str(i) / os.path.basename(p)
        dest.parent.mkdir()
        shutil.copyfile(p, dest)
        moved.append((c, str(dest)))
    here = [gate._key(a, row) for _, a, row, _, _ in gate.benchmark_pages(arcs, [])]
    there = [gate._key(a, row) for _, a, row, _, _ in gate.benchmark_pages(moved, [])]
    assert here and here == there
