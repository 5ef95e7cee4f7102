"""The serving index's shard decoder (lib.serve.serving_index._read_ciff and the compiled
decode_lists) on shards a real day has: without postings, of one document, and damaged.

Shards are written by lib.ciff's writer the way the index job's reducers write them; the
expected postings come from lib.ciff's reader. Damage must always end in a ShardError naming
the problem: never another exception, never a crash of the process (the compiled decoder).
"""

from __future__ import annotations

import gzip
import random

import numpy as np
import pytest

from lib.ciff import CiffReader
from lib.serve.day_manifest import ShardError
from lib.serve.serving_index import _read_ciff
from tests.fixtures_ciff import corpus, index_corpus


def test_a_shard_without_postings_decodes_to_empty_lists(tmp_path):
    """The real day's ``other/und/index-0``: 7 documents, no postings (the decoder gave None)."""
    docs = [(f"<urn:uuid:{i:04d}>", f"https://example.org/empty/{i}", "") for i in range(7)]
    path, _, _ = index_corpus(tmp_path, docs, lang="und", counted=True)
    name, terms, lens, docids, tfs, dl, cids = _read_ciff(str(path))
    assert "und" in name and terms == [] and len(lens) == 0
    assert docids.dtype == np.uint32 and tfs.dtype == np.uint32 and len(docids) == len(tfs) == 0
    assert dl.tolist() == [0] * 7 and cids == [d[0] for d in docs]


@pytest.mark.parametrize("n", [1, 40])
def test_postings_equal_the_ciff_reader(tmp_path, n):
    path, _, _ = index_corpus(tmp_path, corpus(n), counted=True)
    _, terms, lens, docids, tfs, dl, cids = _read_ciff(str(path))
    want = list(CiffReader(str(path)).postings())
    assert terms == [p.term for p in want] and lens.tolist() == [len(p.docids) for p in want]
    assert docids.tolist() == [d for p in want for d in p.docids] and tfs.tolist() == [t for p in want for t in p.tfs]
    assert [(c, int(x)) for c, x in zip(cids, dl)] == [
        (d.collection_docid, d.doclength) for d in CiffReader(str(path)).docs()
    ]


def _decode(tmp_path, data: bytes, name: str = "shard.ciff"):
    p = tmp_path / name
    p.write_bytes(data)
    return _read_ciff(str(p))


def test_every_truncation_is_a_shard_error(tmp_path):
    path, _, _ = index_corpus(tmp_path, corpus(5), counted=True)
    data = gzip.decompress(path.read_bytes())
    reasons = set()
    for cut in range(len(data)):
        with pytest.raises(ShardError) as e:
            _decode(tmp_path, data[:cut])
        reasons.add(str(e.value).split(":")[-1].strip()[:20])
    assert len(reasons) >= 3  # header, list and doc-record truncations are told apart
    with pytest.raises(ShardError, match="bytes after the last doc record"):
        _decode(tmp_path, data + b"\x00")
    with pytest.raises(ShardError, match="unreadable"):  # the .gz cut: gzip's own check
        _decode(tmp_path, path.read_bytes()[:-9], "shard.ciff.gz")


def test_random_damage_never_escapes_as_another_error(tmp_path):
    """Byte flips and garbage: a ShardError, or (a flipped tf, say) a shard that still decodes."""
    path, _, _ = index_corpus(tmp_path, corpus(8), counted=True)
    data = gzip.decompress(path.read_bytes())
    rnd = random.Random(7)
    failed = 0
    for _ in range(600):
        b = bytearray(data)
        for _ in range(rnd.randint(1, 4)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        try:
            _decode(tmp_path, bytes(b))
        except ShardError:
            failed += 1
    assert failed > 400
    for size in (0, 1, 17, 4096):
        with pytest.raises(ShardError):
            _decode(tmp_path, gzip.compress(rnd.randbytes(size)), "garbage.ciff.gz")
        with pytest.raises(ShardError):
            _decode(tmp_path, rnd.randbytes(size), "garbage.ciff.gz")


def test_snippet_texts_reach_every_copy_of_a_record_and_a_bad_file_is_a_note(tmp_path):
    """Metadata without plain_text (another producer's day): texts are joined from the preprocessed
    day by record id, to every document carrying that id (in any shard); an unreadable file of the
    preprocessed day leaves its pages without snippets and says so."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    from lib.serve.serving_index import _join_texts

    day = dt.date(2026, 1, 15)
    pre = tmp_path / "root" / "preprocessed" / "2026-01" / "15"
    (pre / "language=eng").mkdir(parents=True)
    (pre / "language=deu").mkdir()
    pq.write_table(
        pa.table({"record_id": ["<a>", "<b>", "<c>"], "plain_text": ["alpha text", "beta", None]}),
        pre / "language=eng" / "part-0.parquet",
    )
    (pre / "language=deu" / "part-0.parquet").write_bytes(b"PAR1 not parquet at all")
    out = tmp_path / "out"
    out.mkdir()
    np.full((3, 2), -1, np.int64).tofile(out / "shard-0.text.i64")
    np.full((1, 2), -1, np.int64).tofile(out / "shard-1.text.i64")
    rid_index = {"<a>": [(0, 0), (1, 0)], "<b>": [(0, 2)], "<c>": [(0, 1)]}
    notes: list[str] = []
    with open(out / "texts.bin", "wb") as texts:
        end = _join_texts(
            str(tmp_path / "root"), day, {"eng", "deu"}, rid_index, str(out), texts, 0, str(tmp_path), notes
        )
    data = (out / "texts.bin").read_bytes()
    assert end == len(data)
    s0 = np.fromfile(out / "shard-0.text.i64", np.int64).reshape(-1, 2)
    s1 = np.fromfile(out / "shard-1.text.i64", np.int64).reshape(-1, 2)
    text = lambda span: data[span[0] : span[0] + span[1]].decode()  # noqa: E731
    assert [text(s0[0]), text(s1[0]), text(s0[2]), text(s0[1])] == ["alpha text", "alpha text", "beta", ""]
    [note] = notes
    assert "language=deu/part-0.parquet" in note and "unreadable" in note
