"""The capture index over every day (lib.catalogue.capindex): days of real CDXJ (webrecorder's
cdxj-indexer over archives of the shared corpus, no Spark) added as log-structured runs; its
look-ups against a plain sorted scan of the same lines; re-runs, crashes and purges."""

from __future__ import annotations

import bisect
import json
import math
import os
import shutil
import subprocess
import sys

import pytest

from lib.catalogue import capindex, capruns
from lib.pages.exclusions import parse as parse_exclusions

ARCHIVES = ["aut/example.warc.gz", "ipwb/sample-1.warc.gz", "dolma/sample-0000.warc.gz", "aut/example.pdf.warc.gz"]


@pytest.fixture(scope="module")
def day_files(corpus, tmp_path_factory) -> list[str]:
    """One sorted CDXJ file per archive, as cdxj-indexer writes it (a day each)."""
    out = tmp_path_factory.mktemp("capindex-days")
    files = []
    for rel in ARCHIVES:
        dest = out / (rel.replace("/", "-") + ".cdxj")
        exe = os.path.join(os.path.dirname(sys.executable), "cdxj-indexer")
        with open(dest, "wb") as f:
            subprocess.run([exe, "-s", str(corpus / rel)], stdout=f, check=True)
        files.append(str(dest))
    return files


def _lines(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [ln.rstrip("\n") for ln in f if ln.strip()]


def _range(lines: list[str], start: str, end: str) -> list[str]:
    return lines[bisect.bisect_left(lines, start) : bisect.bisect_left(lines, end)]


def test_days_become_runs_and_lookups_equal_a_sorted_scan(day_files, tmp_path, monkeypatch):
    monkeypatch.setattr(capruns, "BLOCK", 50)  # many blocks per run: look-ups cross block edges
    index = str(tmp_path / "cdxindex")
    every: list[str] = []
    for n in range(24):  # 24 days, each one archive's lines with its own file name
        src = day_files[n % len(day_files)]
        day = f"2026-05-{n + 1:02d}"
        rows = []
        for ln in _lines(src):
            key, ts, body = ln.split(" ", 2)
            fields = json.loads(body)
            fields["filename"] = f"{day}/{fields['filename']}"
            rows.append(f"{key} {ts} {json.dumps(fields)}")
        rows.sort()
        path = str(tmp_path / f"{day}.cdxj")
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(r + "\n" for r in rows))
        summary = capindex.add_day(index, day, path)
        assert summary["lines"] == len(rows)
        every += rows
    every.sort()
    state = capindex.read_state(index)
    assert sorted(state["days"]) == [f"2026-05-{n + 1:02d}" for n in range(24)]
    # log-structured: the runs stay about log2(days) + 2, and sum to every line
    assert len(state["runs"]) <= math.log2(24) + 2
    assert sum(n for r in state["runs"] for n in r["days"].values()) == len(every)
    assert sorted(os.listdir(index)) == sorted(["_state", "_state.json"] + [r["name"] for r in state["runs"]])
    reader = capindex.Reader(index)
    assert list(reader.lines("", "\uffff")) == every
    for key in ("org,archive)/", "org,archive)/web/", "com,", "zzz", "", every[len(every) // 2][:25]):
        for end in (key + "!", key[:-1] + chr(ord(key[-1]) + 1) if key else "\uffff"):
            assert list(reader.lines(key, end)) == _range(every, key, end), (key, end)


def test_a_rerun_replaces_its_day_and_a_crash_leaves_nothing_visible(day_files, tmp_path):
    index = str(tmp_path / "cdxindex")
    a, b = day_files[0], day_files[1]
    capindex.add_day(index, "2026-05-01", a)
    capindex.add_day(index, "2026-05-02", b)
    first = list(capindex.Reader(index).lines("", "\uffff"))
    assert first == sorted(_lines(a) + _lines(b))
    again = capindex.add_day(index, "2026-05-02", b)  # a re-run of the day: nothing twice
    assert again["replaced"] and list(capindex.Reader(index).lines("", "\uffff")) == first
    # the run of another day that died before its commit: written, never named by a state
    capruns.write_run(os.path.join(index, "day=2026-05-03-0123456789ab"), ((ln, 0) for ln in _lines(day_files[2])))
    assert list(capindex.Reader(index).lines("", "\uffff")) == first
    assert sorted(capindex.read_state(index)["days"]) == ["2026-05-01", "2026-05-02"]
    # a day CDXJ out of order is refused whole: the state does not change
    bad = tmp_path / "bad.cdxj"
    bad.write_text("".join(ln + "\n" for ln in reversed(_lines(a))), encoding="utf-8")
    version = capindex.read_state(index)["version"]
    with pytest.raises(capindex.CapIndexError, match="out of order"):
        capindex.add_day(index, "2026-05-04", str(bad))
    assert capindex.read_state(index)["version"] == version


def test_purge_removes_a_taken_down_urls_lines_only(day_files, tmp_path):
    index = str(tmp_path / "cdxindex")
    for n, f in enumerate(day_files[:3]):
        capindex.add_day(index, f"2026-05-0{n + 1}", f)
    before = list(capindex.Reader(index).lines("", "\uffff"))
    rules = parse_exclusions(json.dumps({"surt": "org,archive)/"}))
    gone = [ln for ln in before if ln.startswith("org,archive)/")]
    assert len(gone) > 50
    out = capindex.purge(index, rules)
    assert out["lines"] == len(gone) and out["runs"] >= 1
    after = list(capindex.Reader(index).lines("", "\uffff"))
    assert after == [ln for ln in before if ln not in set(gone)]
    assert capindex.purge(index, rules)["lines"] == 0  # idempotent
    # a day added after the purge merges with the purged runs and brings nothing back
    capindex.add_day(index, "2026-05-04", day_files[3])
    assert [ln for ln in capindex.Reader(index).lines("", "\uffff") if ln.startswith("org,archive)/")] == [
        ln for ln in _lines(day_files[3]) if ln.startswith("org,archive)/")
    ]
    shutil.rmtree(index)


def test_runs_that_meet_keep_every_day(day_files, tmp_path):
    """Four days added at once (threads, each with its own lease object, as four runs would): the
    lease and the compare-and-swap keep all four, each once."""
    import threading

    index = str(tmp_path / "cdxindex")
    capindex.add_day(index, "2026-05-01", day_files[0])
    errors: list[BaseException] = []

    def add(n: int) -> None:
        try:
            capindex.add_day(index, f"2026-06-0{n + 1}", day_files[n], job=f"run{n}", wait=8)  # polls every 0.4 s
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=add, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    assert sorted(capindex.read_state(index)["days"]) == ["2026-05-01"] + [f"2026-06-0{n + 1}" for n in range(4)]
    want = sorted(_lines(day_files[0]) + [ln for f in day_files for ln in _lines(f)])
    assert list(capindex.Reader(index).lines("", "\uffff")) == want
