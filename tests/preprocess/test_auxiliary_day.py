"""A preprocessed day and the shared folders: the model and filters that built it, the plugin gate
at the job's start, the per-file logs beside its page files, its line in logs.csv."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil

import pyarrow.parquet as pq
import pytest

from jobs import preprocess
from lib.preprocess import filelogs, gate, langid
from lib.serve.published import SliceStore
from lib.store import auxiliary, layout, update_log
from lib.warc.sample import write_sample_crawl

DATE = dt.date(2026, 1, 15)


def _sha(path: str) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _run(root: str, spark, *extra: str) -> tuple[int, str]:
    """(exit code, the summary's error) of a preprocess run of the day."""
    job = preprocess.PreprocessJob()
    code = job.main(["--date", DATE.isoformat(), "--root", root, *extra], spark=spark)
    return code, job.last_result.summary.get("error", "")


@pytest.fixture(scope="module")
def day(tmp_path_factory, spark):
    """A root with a shared model (a copy of the packaged one) and take-down list, the microdata
    plugin through the gate, and one preprocessed day; and what its refused runs said first."""
    root = str(tmp_path_factory.mktemp("auxroot"))
    write_sample_crawl(root, DATE, files=2, pages_per_file=20)
    model = os.path.join(root, "lid.176.ftz")
    shutil.copyfile(langid.packaged()[0], model)
    auxiliary.add(root, layout.MODELS, langid.ITEM, model, "lid176-2017")
    takedown = os.path.join(root, "takedown.jsonl")
    with open(takedown, "w") as f:
        f.write('{"host": "gone.example.org", "date": "2026-12-01", "reason": "owner request"}\n')
    auxiliary.add(root, layout.FILTERS, "takedown", takedown, "2026-12-01")
    out = layout.day_path(root, layout.PREPROCESSED, DATE)
    refused = {}
    # 1. the plugin has no evaluation yet: refused before anything is written
    refused["unevaluated"] = (*_run(root, spark, "--enrich", "microdata"), os.path.exists(out))
    # 2. the shared model's bytes changed: refused, naming the file
    shared = os.path.join(root, "shared/auxiliary/models/lid/lid176-2017/lid.176.ftz")
    good = open(shared, "rb").read()
    with open(shared, "r+b") as f:
        f.write(b"\0\0\0\0")
    refused["tampered"] = (*_run(root, spark), os.path.exists(out))
    with open(shared, "wb") as f:
        f.write(good)
    mp = pytest.MonkeyPatch()
    mp.setenv("DAILYSLICE_SHARED", str(tmp_path_factory.mktemp("no-shared")))  # committed data: quick
    evaluation = gate.evaluate(root, "microdata")
    mp.undo()
    job = preprocess.PreprocessJob()
    assert job.main(["--date", DATE.isoformat(), "--root", root, "--enrich", "microdata"], spark=spark) == 0
    return root, out, refused, evaluation, job.last_result.summary


def test_refusals_write_nothing_and_say_why(day):
    root, _, refused, evaluation, _ = day
    code, error, written = refused["unevaluated"]
    assert (code, written) == (2, False)
    assert f"'microdata' version {evaluation['version']} has no evaluation" in error and "plugin evaluate" in error
    code, error, written = refused["tampered"]
    assert (code, written) == (1, False)
    assert "shared/auxiliary/models/lid/lid176-2017/lid.176.ftz: sha256" in error and "does not match" in error


def test_the_day_records_the_model_filters_and_plugin_that_built_it(day):
    root, out, _, evaluation, summary = day
    stats = json.load(open(os.path.join(out, layout.STATS)))
    built = stats["built_with"]
    model = os.path.join(root, "shared/auxiliary/models/lid/lid176-2017/lid.176.ftz")
    want = {"version": "lid176-2017", "sha256": _sha(model), "source": "shared", "file": model}
    assert built["models"]["lid"] == want
    take = built["filters"]["takedown"]
    assert (take["version"], take["source"]) == ("2026-12-01", "shared") and take["sha256"] == _sha(take["file"])
    assert built["plugins"]["microdata"]["sha256"] == evaluation["sha256"]
    assert built["plugins"]["microdata"]["version"] == evaluation["version"]
    assert summary["exclusion_rules"] == 1  # the shared list is the one applied
    # logs.csv: the model, the filter, the plugin's evaluation, the day, in that order
    got = [(u.kind, u.name) for u in update_log.read(root)]
    day_line = ("day", "preprocessed/2026-01/15")
    assert got == [("model", "lid"), ("filter", "takedown"), ("plugin", "microdata"), day_line]
    assert summary["update"] == 4


def test_each_page_file_has_its_log_beside_it(day):
    root, out, _, _, summary = day
    stats = json.load(open(os.path.join(out, layout.STATS)))
    pages = sorted(
        os.path.relpath(os.path.join(d, n), out)
        for d, _, names in os.walk(out)
        for n in names
        if n.endswith(".parquet") and os.path.basename(d).startswith("language=")
    )
    assert [e["pages"] for e in stats["file_logs"]] == pages and len(pages) >= 2
    rows = 0
    for e in stats["file_logs"]:
        assert e["log"] == layout.file_log_name(e["pages"]) and os.path.basename(e["log"]).startswith("_part-")
        (line,) = filelogs.read(os.path.join(out, e["log"]))
        path = os.path.join(out, e["pages"])
        meta = pq.read_metadata(path)
        lang = layout.language_of(os.path.dirname(path))
        want = (meta.num_rows, os.path.getsize(path), os.path.basename(path))
        assert (line["rows"], line["bytes"], line["file"]) == want
        assert line["language"] == lang and line["languages"] == {lang: meta.num_rows}
        assert line["event"] == "written" and line["written"].startswith("20")
        assert line["archives"] and all(a["file"].startswith("file://") for a in line["archives"])
        assert line["errors"]["failed"] == sum(a["failed"] for a in line["archives"])
        rows += line["rows"]
    assert rows == summary["pages_kept"] > 0
    # Parquet readers skip the logs: the day still reads as its pages alone
    assert pq.read_table(out).num_rows == rows
    # and the service's manifest of the day lists them with the page files
    listed = {f.path for f in SliceStore({"dc": root}).list_files(DATE, parts=["preprocessed"])}
    assert {f"preprocessed/2026-01/15/{e['log']}" for e in stats["file_logs"]} <= listed
