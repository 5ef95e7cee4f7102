"""Stop-word lists from ROOT/shared/auxiliary/models (lib.text.stoplists): the index job builds a
day with the root's current list of a language, its CIFFs and _stats.json name the version, and
the service queries each day with the version that built it, after a newer one is added."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import pathlib
import shutil

import pytest

from lib.ciff.reader import CiffReader
from lib.serve.engine import Engine
from lib.store import auxiliary
from lib.text import stoplists
from lib.text.analysis import analyzer_from_description, get_analyzer
from tests.index.test_index_job import DAY, OPTS, sample_pages, write_day

DAY2, DAY3 = DAY + dt.timedelta(days=1), DAY + dt.timedelta(days=2)
V1 = "# our English list, first version: 'the' is no longer a stop word, 'river' is\nriver\nWalkers\n\nnear\n"
V2 = "mountain\n"


def _index(spark, root: pathlib.Path, day: dt.date, *extra: str) -> tuple[int, str]:
    from jobs import index

    job = index.IndexJob()
    code = job.main(["--root", str(root), "--date", day.isoformat(), *OPTS, *extra], spark=spark)
    return code, job.last_result.summary.get("error", "")


def _add(root: pathlib.Path, name: str, text: str | bytes, version: str) -> pathlib.Path:
    src = root / f"{name}-{version}.txt"
    src.write_bytes(text.encode() if isinstance(text, str) else text)
    argv = ["add", "models", name, str(src), "--version", version, "--root", str(root)]
    assert auxiliary.main(argv) == 0  # `dailyslice auxiliary add`
    return src


def _terms(day: pathlib.Path, rel: str) -> set[str]:
    """Every term of the CIFF shards of ``rel`` (TLD/LANG) of an index day."""
    return {pl.term for p in sorted((day / rel).glob("index-*.ciff.gz")) for pl in CiffReader(str(p)).postings()}


def _description(day: pathlib.Path, rel: str, kind: str = "index") -> str:
    return CiffReader(str(next((day / rel).glob(f"{kind}-*.ciff.gz")))).header.description


@pytest.fixture(scope="module")
def days(spark, tmp_path_factory):
    """Day 1 indexed with the packaged lists; then v1 of the English list added and day 2 indexed
    with it; then v2 added (day 2 stays built with v1); day 3 refused while v2's bytes were changed,
    then indexed with v2, given its folders as the night's chain gives them (no --root)."""
    root = tmp_path_factory.mktemp("stoproot")
    first = write_day(root, sample_pages())
    for day in (DAY2, DAY3):
        shutil.copytree(first, root / "preprocessed" / f"{day:%Y-%m}" / f"{day:%d}")
    assert _index(spark, root, DAY, "--no-graph") == (0, "")  # the postings are enough here
    v1 = _add(root, "stopwords-eng", V1, "v1")
    assert _index(spark, root, DAY2) == (0, "")
    _add(root, "stopwords-eng", V2, "v2")
    shared = root / "shared/auxiliary/models/stopwords-eng/v2/stopwords-eng-v2.txt"
    shared.write_bytes(b"mountain\nvalley\n")
    idx = root / "index" / "2026-01"
    refused = (*_index(spark, root, DAY3), (idx / "17").exists())
    shared.write_bytes(V2.encode())
    from jobs import index

    folders = ["--input", str(root / "preprocessed" / "2026-01" / "17"), "--output", str(idx / "17")]
    assert index.main([*folders, "--date", DAY3.isoformat(), *OPTS, "--no-graph"], spark=spark) == 0
    return root, idx / "15", idx / "16", v1, refused


def test_a_word_of_the_shared_list_is_absent_from_postings_and_present_with_the_packaged(days):
    _, packaged, shared, _, _ = days
    for rel in ("com/eng", "uk/eng", "other/eng"):
        before, after = _terms(packaged, rel), _terms(shared, rel)
        assert before - after <= {"river", "walker", "near"}  # the shared list's words only
        assert "the" not in before and "and" not in before  # the packaged list's
    before, after = _terms(packaged, "com/eng"), _terms(shared, "com/eng")
    assert {"river", "walker", "near"} <= before and not {"river", "walker", "near"} & after
    assert {"the", "is", "about"} <= after  # packaged stop words, not in v1: indexed now
    assert {"mountain", "along"} <= after
    # other languages keep the packaged lists and their analyzers' names: same terms
    assert _terms(packaged, "de/deu") == _terms(shared, "de/deu") and "die" not in _terms(shared, "de/deu")
    assert _description(packaged, "de/deu").split(";")[0] == _description(shared, "de/deu").split(";")[0]


def test_the_ciffs_and_stats_name_the_list_that_built_them(days):
    root, packaged, shared, v1, _ = days
    assert _description(packaged, "com/eng").startswith("dailyslice-v1:eng:lower+stop+snowball-english;")
    for kind in ("index", "anchors"):
        desc = _description(shared, "com/eng", kind)
        assert desc.startswith("dailyslice-v1:eng:lower+stop@v1+snowball-english;")
        with pytest.raises(ValueError, match="no shared stop-word list of eng given"):
            analyzer_from_description(desc)  # without the day's list: refused, not analyzed otherwise
    built = json.loads((shared / "_stats.json").read_text())["built_with"]["models"]
    rel = "stopwords-eng/v1/stopwords-eng-v1.txt"
    want = {"version": "v1", "sha256": hashlib.sha256(v1.read_bytes()).hexdigest(), "source": "shared", "rel": rel}
    assert {k: v for k, v in built["stopwords-eng"].items() if k != "file"} == want
    assert built["stopwords-eng"]["file"].endswith(f"shared/auxiliary/models/{rel}")
    assert "stopwords-eng" not in json.loads((packaged / "_stats.json").read_text())["built_with"]["models"]
    groups = {g["lang"]: g["analyzer"] for g in json.loads((shared / "_stats.json").read_text())["groups"]}
    assert groups["eng"].endswith("stop@v1+snowball-english") and groups["deu"] == get_analyzer("deu").name


def test_a_changed_list_is_refused_before_anything_is_written(days):
    root, *_, refused = days
    code, error, written = refused
    assert (code, written) == (1, False)
    assert "shared/auxiliary/models/stopwords-eng/v2/stopwords-eng-v2.txt: sha256" in error
    assert "does not match" in error


def test_each_day_is_queried_with_its_own_list_after_a_newer_one_is_added(days, tmp_path):
    root, *_ = days
    manifest = auxiliary.manifest(str(root), "models")
    assert manifest["stopwords-eng"]["version"] == "v2"  # the current one: neither day's
    eng = Engine({"dc1": str(root)}, cache_dir=str(tmp_path / "cache"))

    def hits(q: str, day: dt.date) -> int:
        return eng.search(q, day, langs=["eng"], k=50).total_results

    # day 1, packaged list: 'the' is a stop word, 'river' and 'mountain' are terms
    assert (hits("the", DAY), hits("river", DAY) > 0, hits("mountain", DAY) > 0) == (0, True, True)
    # day 2, v1: 'river' is dropped from the query (and from the postings), 'the' is searchable;
    # 'mountain' is v2's stop word: still found, so the query is not analyzed with v2
    assert hits("river", DAY2) == 0 and hits("the", DAY2) > 0
    assert hits("mountain", DAY2) == hits("mountain", DAY) > 0
    day2 = eng.load("dc1", DAY2)
    assert {s.analyzer.name for s in day2.shards if s.lang == "eng"} == {
        "dailyslice-v1:eng:lower+stop@v1+snowball-english"
    }
    assert {s.analyzer.stoplist.version for s in day2.shards if s.lang == "eng"} == {"v1"}
    assert not day2.skipped
    # day 3, v2 (the root's list when it was built): 'mountain' is a stop word there, 'river' a term
    assert (hits("mountain", DAY3), hits("river", DAY3) > 0, hits("the", DAY3) > 0) == (0, True, True)
    assert {s.analyzer.name for s in eng.load("dc1", DAY3).shards if s.lang == "eng"} == {
        "dailyslice-v1:eng:lower+stop@v2+snowball-english"
    }


def test_a_day_whose_list_is_gone_names_it_and_serves_its_other_languages(days, tmp_path):
    root, *_ = days
    copy = tmp_path / "root"
    shutil.copytree(root / "index", copy / "index")  # the days without the shared folder
    day2 = Engine({"dc1": str(copy)}, cache_dir=str(tmp_path / "cache")).load("dc1", DAY2)
    assert {s.lang for s in day2.shards} >= {"deu", "fra"} and "eng" not in {s.lang for s in day2.shards}
    reasons = [s["reason"] for s in day2.skipped if s["lang"] == "eng"]
    assert reasons and all("no shared stop-word list of eng given" in r for r in reasons)
    assert any("stopwords-eng/v1/stopwords-eng-v1.txt" in n and "missing" in n for n in day2.notes)


def test_bad_list_files_are_refused_naming_file_and_place(tmp_path):
    with pytest.raises(stoplists.StopListError, match=r"eng\.txt: not UTF-8 at byte offset 6"):
        stoplists.parse(b"river\n\xff\xfe", "eng.txt")
    with pytest.raises(stoplists.StopListError, match=r"eng\.txt: line 2 \('two words'\) is not one word"):
        stoplists.parse(b"river\ntwo words\n", "eng.txt")
    assert stoplists.parse("# c\nThe\n\nl\u2019\nSTRASSE\n".encode(), "x") == {"the", "l'", "strasse"}
    root = tmp_path / "root"
    root.mkdir()
    _add(root, "stopwords-EN", "the\n", "v1")
    with pytest.raises(stoplists.StopListError, match="'EN' is not a language code"):
        stoplists.resolve(str(root))


def test_a_purge_rebuilds_a_day_with_the_list_that_built_it(spark, days, tmp_path):
    from jobs.purge import JobRebuild

    root, _, shared, _, _ = days
    out = tmp_path / "rebuilt"
    inp = root / "preprocessed" / "2026-01" / "16"
    recorded = json.loads((shared / "_stats.json").read_text())["args"] | {"graph": False}  # the postings suffice
    assert JobRebuild(spark, str(root)).index(DAY2, str(inp), str(out), "none", recorded) == 0
    built = json.loads((out / "_stats.json").read_text())["built_with"]["models"]
    assert built["stopwords-eng"]["version"] == "v1"  # not v2, the root's current list
    assert _description(out, "com/eng").startswith("dailyslice-v1:eng:lower+stop@v1+snowball-english;")
    assert _terms(out, "com/eng") == _terms(shared, "com/eng")
