"""``extract --record-ids FILE``: each id found through the record store in one step, over two
real published days of the shared corpus (tests/fixtures_days.py). The store is copied away
from the root and named with ``--record-store``, so nothing of the published days but the
archives can be read; the records copied out are held to warcio's reading of the source
archives, and ids the store does not hold are counted, named and make the job exit 1."""

from __future__ import annotations

import glob
import os
import shutil

import pyarrow.parquet as pq
import pytest
from warcio.archiveiterator import ArchiveIterator

from jobs.extract import ExtractJob
from lib.catalogue import recordstore
from lib.extract.driver import ERRORS, MANIFEST
from lib.store import storage
from tests.fixtures_days import D1, D2

MISSING = "urn:uuid:00000000-0000-4000-8000-00000000dead"


def day_captures(root: str, day) -> list[dict]:
    folder = os.path.join(root, "preprocessed", f"{day:%Y-%m}", f"{day:%d}", "_captures")
    cols = ["record_id", "record_type", "url", "warc_file", "warc_offset"]
    return pq.read_table(glob.glob(os.path.join(folder, "*.parquet")), columns=cols).to_pylist()


def warcio_record(uri: str, offset: int) -> tuple[str, str, bytes]:
    """(record id, URL, content) of the record at ``offset`` of an archive, as warcio reads it."""
    with open(storage.local_path(uri), "rb") as f:
        f.seek(offset)
        rec = next(iter(ArchiveIterator(f, arc2warc=True)))
        h = rec.rec_headers
        return h.get_header("WARC-Record-ID").strip("<>"), h.get_header("WARC-Target-URI"), rec.content_stream().read()


def output_records(out: str) -> dict[str, tuple[str, bytes]]:
    """record id -> (URL, content) of every record of the extract's output archives."""
    got = {}
    for path in sorted(glob.glob(os.path.join(out, "*.warc*")) + glob.glob(os.path.join(out, "*.arc*"))):
        with open(path, "rb") as f:
            for rec in ArchiveIterator(f, arc2warc=True):
                if rec.rec_type in ("warcinfo",) or rec.rec_headers.get_header("WARC-Target-URI", "").startswith(
                    "filedesc:"
                ):
                    continue
                h = rec.rec_headers
                got[h.get_header("WARC-Record-ID").strip("<>")] = (
                    h.get_header("WARC-Target-URI"),
                    rec.content_stream().read(),
                )
    return got


@pytest.fixture(scope="module")
def store_copy(corpus_days, tmp_path_factory) -> str:
    """The root's record store, copied out of the root (the job is told where it is)."""
    dest = str(tmp_path_factory.mktemp("rs") / "recordstore")
    shutil.copytree(os.path.join(corpus_days, recordstore.FOLDER), dest)
    return dest


def test_records_by_id_through_the_record_store_and_missing_ids_named(spark, corpus_days, store_copy, tmp_path):
    caps = {D1: day_captures(corpus_days, D1), D2: day_captures(corpus_days, D2)}
    # ids of both days, spread over the files
    wanted = []
    for day, rows in caps.items():
        files = sorted({r["warc_file"] for r in rows})
        for f in files:
            of_file = [r for r in rows if r["warc_file"] == f and r["record_type"] == "response"]
            wanted += of_file[:: max(1, len(of_file) // 4)][:4]
    assert len({r["warc_file"] for r in wanted}) >= 3
    ids = tmp_path / "ids.txt"
    lines = ["# record ids to copy out", f"<{wanted[0]['record_id']}>", ""]  # as a WARC header writes it
    lines += [r["record_id"] for r in wanted[1:]] + [MISSING]
    ids.write_text("\n".join(lines) + "\n")
    out = str(tmp_path / "out")
    job = ExtractJob()
    rc = job.main(["--record-ids", str(ids), "--record-store", store_copy, "--output", out], spark=spark)
    summary = job.last_result.summary
    assert rc == 1  # one id missing: a failed line, as any other bad input
    assert summary["lines"] == len(wanted) + 1 and summary["extracted"] == len(wanted)
    assert summary["failed"] == 1 and summary["failed_by_reason"] == {"not-found": 1}
    assert summary["record_ids_missing"] == 1 and summary["missing_record_ids"] == [MISSING]
    with open(os.path.join(out, ERRORS)) as f:
        errors = [ln.rstrip("\n").split("\t") for ln in f if not ln.startswith("#")]
    assert errors == [[str(len(lines)), f"not-found: {MISSING}: no such record id in {store_copy}", MISSING]]
    # each record copied is the one warcio reads at the capture's offset in its source archive
    got = output_records(out)
    assert set(got) == {r["record_id"] for r in wanted}
    for r in wanted:
        rid, url, content = warcio_record(r["warc_file"], r["warc_offset"])
        assert rid == r["record_id"] and got[rid] == (url, content) and url == r["url"]
    with open(os.path.join(out, MANIFEST)) as f:
        manifest = [ln.split("\t") for ln in f if not ln.startswith("#")]
    assert sorted(int(m[4]) for m in manifest) == [2, *range(4, 4 + len(wanted) - 1)]


def test_every_id_found_exits_0_and_the_store_is_required(spark, corpus_days, store_copy, tmp_path, capsys):
    rows = day_captures(corpus_days, D2)[:3]
    ids = tmp_path / "ids.txt"
    ids.write_text("".join(r["record_id"] + "\n" for r in rows))
    job = ExtractJob()
    rc = job.main(["--record-ids", str(ids), "--root", corpus_days, "--output", str(tmp_path / "o")], spark=spark)
    assert rc == 0 and job.last_result.summary["record_ids_missing"] == 0
    assert job.last_result.summary["record_store"] == os.path.join(corpus_days, recordstore.FOLDER)
    assert set(output_records(str(tmp_path / "o"))) == {r["record_id"] for r in rows}
    out = ["--output", str(tmp_path / "x")]
    for argv, reason in [
        (["--record-ids", str(ids), *out], "needs --record-store DIR or --root"),
        (["--record-ids", str(ids), "--record-store", str(tmp_path), *out], "no record store"),
        (["--tsv", str(ids), "--record-store", store_copy, *out], "needs --record-ids"),
    ]:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:  # a usage error, as argparse's own
            ExtractJob().main(argv, spark=spark)
        assert exc.value.code == 2 and reason in capsys.readouterr().err
        assert not os.path.exists(tmp_path / "x")
