"""benchmarks/prep_stages.py: the preprocess task's CPU by stage (issue 62), on real heavy pages."""

import subprocess

import pytest

from benchmarks import common, prep_stages, report
from benchmarks.bench_preprocess_peers import build_heavy


@pytest.fixture(scope="module")
def breakdown(tmp_path_factory):
    files = build_heavy(str(tmp_path_factory.mktemp("heavy")), 40, 2)
    return prep_stages.breakdown(files)


def test_the_stages_add_up_to_the_task(breakdown):
    b = breakdown
    assert b["pages"] == 40
    stages = b["stage_us_per_page"]
    assert set(stages) == {s for s, _ in prep_stages.STAGES}
    # exclusive times: together they are the task's CPU (and the host index), nothing counted twice
    assert sum(stages.values()) == pytest.approx(b["us_per_page"], rel=0.02)
    assert sum(b["stage_share_pct"].values()) == pytest.approx(100, abs=1)
    # every page is parsed once, its language identified once; signatures and Arrow once a batch
    assert b["calls_per_page"]["parse"] == 1 and b["calls_per_page"]["language"] == 1
    assert b["calls_per_page"]["minhash"] < 1 and b["calls_per_page"]["arrow"] < 1
    for s in ("read", "parse", "fields_links", "main_text", "language", "minhash", "arrow", "parquet"):
        assert stages[s] > 0, s


def test_the_wrappers_are_taken_off_afterwards(breakdown):
    from lib.html import content
    from lib.preprocess import langid

    assert content.LexborHTMLParser.__module__.startswith("selectolax")
    assert langid.identify.__module__ == "lib.preprocess.langid"


def test_targets_say_which_held():
    res = {
        "ratios": {
            "ours/selectolax (cpu)": 1.31,
            "job local[2] / selectolax one core (wall)": 1.7,
            "job whole run / 2 cores of ours (cpu rate)": 0.9,
        },
        "stages": {"stage_share_pct": {"minhash": 5.5}},
    }
    t = prep_stages.targets(res, 2)
    assert {k: v["held"] for k, v in t.items()} == {
        "ours/peer per core": True,
        "job/one peer core": False,
        "job/two cores of ours": True,
        "minhash share of ours (%)": False,
    }
    assert prep_stages.targets({"ratios": {}}, 2) == {}  # what a run did not measure is not judged


def test_a_result_names_the_commit_it_measured(tmp_path):
    head = subprocess.run(
        ["git", "-C", str(report.ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    path = common.write_result("bench_x", {"wall_s": 1.0}, what="w", results=tmp_path)
    commit = common.checkout_commit()
    assert commit is not None and commit.split("+")[0] == head
    results = report.read_results(tmp_path)
    assert results[0]["commit"] == commit and path.exists()
    assert f"at `{commit}`" in report.current_table(results).splitlines()[-1]
    # a run recorded from elsewhere names the commit it measured there
    common.write_result(
        "bench_y", {"wall_s": 2.0}, what="w", when="2026-11-21T10:00:00Z", commit="abc1234", results=tmp_path
    )
    row = [r for r in report.read_results(tmp_path) if r["bench"] == "bench_y"][0]
    assert report.row(row).count("2026-11-21T10:00:00Z at `abc1234`") == 1
