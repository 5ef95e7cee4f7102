"""The validator on hand-broken files: each kind of violation is caught and located exactly."""

from __future__ import annotations

import gzip
import subprocess
import sys

import pytest

from lib.ciff import validate_file
from lib.ciff.__main__ import main
from lib.ciff.varint import encode_varint
from tests.fixtures_ciff import GOOD_DOCS, GOOD_LISTS, doc_msg, good_messages, list_msg, write_raw

N_LISTS = len(GOOD_LISTS)


def _list_at(i: int) -> int:
    return 1 + i  # message index in the file: header first


def _doc_at(j: int) -> int:
    return 1 + N_LISTS + j


def test_good_file_is_valid(tmp_path):
    for name in ("good.ciff", "good.ciff.gz"):
        path = tmp_path / name
        write_raw(path, good_messages())
        report = validate_file(str(path))
        assert report.ok, report.error
        assert report.stats["postings"] == 6 and report.stats["docs"] == 3 and report.stats["total_terms"] == 10


def _swap(lists, i, j):
    lists = list(lists)
    lists[i], lists[j] = lists[j], lists[i]
    return lists


def _replace(seq, i, item):
    seq = list(seq)
    seq[i] = item
    return seq


# (id, messages, section, message index in the file, term, reason fragment)
CASES = [
    (
        "unsorted-terms",
        good_messages(lists=_swap(GOOD_LISTS, 0, 1)),
        "PostingsList",
        _list_at(1),
        "apple",
        "terms not in code-point order: 'apple' after 'banana'",
    ),
    (
        "duplicate-term",
        good_messages(lists=_replace(GOOD_LISTS, 1, ("apple", [(1, 3)]))),
        "PostingsList",
        _list_at(1),
        "apple",
        "duplicate term",
    ),
    (
        "df-mismatch",
        good_messages()[:3] + [list_msg("cherry", [(1, 1)], df=2)] + good_messages()[4:],
        "PostingsList",
        _list_at(2),
        "cherry",
        "df = 2 but the list has 1 postings",
    ),
    (
        "cf-mismatch",
        good_messages()[:3] + [list_msg("cherry", [(1, 1)], cf=5)] + good_messages()[4:],
        "PostingsList",
        _list_at(2),
        "cherry",
        "cf = 5 but the tfs sum to 1",
    ),
    (
        "docids-not-ascending",
        good_messages(lists=_replace(GOOD_LISTS, 1, ("banana", [(1, 3), (0, 1)]))),
        "PostingsList",
        _list_at(1),
        "banana",
        "posting 1: docids not strictly ascending (gap 0)",
    ),
    (
        "docids-descending",
        good_messages(lists=_replace(GOOD_LISTS, 1, ("banana", [(1, 3), (-1, 1)]))),
        "PostingsList",
        _list_at(1),
        "banana",
        "posting 1: docids not strictly ascending (gap -1)",
    ),
    (
        "docid-beyond-num-docs",
        good_messages(lists=_replace(GOOD_LISTS, 3, ("date", [(3, 2)]))),
        "PostingsList",
        _list_at(3),
        "date",
        "docid 3 >= num_docs 3",
    ),
    (
        "empty-list",
        good_messages()[:3] + [list_msg("cherry", [])] + good_messages()[4:],
        "PostingsList",
        _list_at(2),
        "cherry",
        "postings list is empty",
    ),
    (
        "negative-tf",
        good_messages(lists=_replace(GOOD_LISTS, 2, ("cherry", [(1, -1)]))),
        "PostingsList",
        _list_at(2),
        "cherry",
        "tf -1 outside 1..2^31-1",
    ),
    (
        "docid-not-position",
        good_messages(docs=_replace(GOOD_DOCS, 1, (2, "d1", 4))),
        "DocRecord",
        _doc_at(1),
        None,
        "docid 2 != its position 1",
    ),
    (
        "negative-doclength",
        good_messages(docs=_replace(GOOD_DOCS, 1, (1, "d1", -4))),
        "DocRecord",
        _doc_at(1),
        None,
        "negative doclength -4",
    ),
    # lengths off by one in opposite directions: the sums still agree, only the per-document check sees it
    (
        "doclength-not-exact",
        good_messages(docs=[(0, "d0", 4), (1, "d1", 3), (2, "d2", 3)]),
        "DocRecord",
        _doc_at(0),
        None,
        "doclength 4 but the postings give 3 terms for docid 0",
    ),
    (
        "avg-doclength",
        good_messages(header=dict(average_doclength=3.0)),
        "Header",
        None,
        None,
        "average_doclength 3.0 inconsistent",
    ),
    ("version", good_messages(header=dict(version=2)), "Header", None, None, "version = 2, expected 1"),
    ("negative-count", good_messages(header=dict(num_docs=-1)), "Header", None, None, "num_docs = -1 is negative"),
    (
        "total-terms",
        good_messages(header=dict(total_terms_in_collection=11, average_doclength=11 / 3)),
        "end of file",
        None,
        None,
        "sum of all tf 10 != header total_terms_in_collection 11",
    ),
    # only 3 of 4 lists present: per-document and tf totals cannot be checked, the doclength total can
    (
        "doclength-total",
        good_messages(
            header=dict(num_postings_lists=3), lists=GOOD_LISTS[:3], docs=_replace(GOOD_DOCS, 2, (2, "d2", 4))
        ),
        "end of file",
        None,
        None,
        "sum of doclength 11 != header total_terms_in_collection 10",
    ),
    (
        "num-lists-too-large",
        good_messages(header=dict(num_postings_lists=5, total_postings_lists=5)),
        "PostingsList",
        _list_at(4),
        None,
        "header's num_postings_lists may be too large",
    ),
    (
        "num-lists-too-small",
        good_messages(header=dict(num_postings_lists=3, total_postings_lists=3)),
        "DocRecord",
        _doc_at(-1),
        None,
        "header's num_postings_lists may be too small",
    ),
    (
        "num-docs-too-large",
        good_messages(header=dict(num_docs=4, total_docs=4, average_doclength=2.5)),
        "DocRecord",
        _doc_at(3),
        None,
        "file ends after 3 doc records but the header announces 4",
    ),
    (
        "oversized-doclength",
        good_messages()[:-1] + [b"\x08\x02\x12\x02d2\x18" + encode_varint(2**31)],
        "DocRecord",
        _doc_at(2),
        None,
        "field doclength = 2147483648 out of int32 range",
    ),
    (
        "oversized-gap",
        good_messages()[:4] + [b"\x0a\x04date\x10\x01\x18\x02\x22\x08\x08" + encode_varint(2**31) + b"\x10\x02"],
        "PostingsList",
        _list_at(3),
        "date",
        "docid gap 2147483648 exceeds int32",
    ),
    (
        "invalid-utf8-term",
        good_messages()[:4] + [b"\x0a\x02\xff\xfe\x10\x01\x18\x02\x22\x04\x08\x02\x10\x02"],
        "PostingsList",
        _list_at(3),
        None,
        "field term is not valid UTF-8",
    ),
]


@pytest.mark.parametrize("name,messages,section,index,term,reason", CASES, ids=[c[0] for c in CASES])
def test_violation_is_named_with_its_position(tmp_path, name, messages, section, index, term, reason):
    path = tmp_path / f"{name}.ciff"
    offsets = write_raw(path, messages)
    report = validate_file(str(path))
    assert not report.ok
    err = report.error
    assert reason in err.reason, err
    assert err.section == section, err
    assert err.path == str(path)
    if index is not None:
        file_index = index if index >= 0 else len(messages) + index
        expected_ordinal = file_index - 1 if section == "PostingsList" else file_index - 1 - N_LISTS
        if name == "num-lists-too-small":
            expected_ordinal = 0  # the last PostingsList, read as DocRecord #0
            file_index = 1 + 3
        assert err.message_index == expected_ordinal, err
        # a missing message is reported where it should start: the end of the file
        expected_offset = offsets[file_index] if file_index < len(offsets) else path.stat().st_size
        assert err.offset == expected_offset, err
    if term is not None:
        assert err.term == term
    assert str(path) in str(err) and reason in str(err)


def test_truncated_files(tmp_path):
    messages = good_messages()
    full = tmp_path / "full.ciff"
    offsets = write_raw(full, messages)
    data = full.read_bytes()
    # cut inside PostingsList #2
    cut = tmp_path / "cut1.ciff"
    cut.write_bytes(data[: offsets[3] + 4])
    err = validate_file(str(cut)).error
    assert err.section == "PostingsList" and err.message_index == 2 and err.offset == offsets[3]
    assert "truncated file" in err.reason
    # cut exactly after the postings lists: no doc record at all
    cut.write_bytes(data[: offsets[_doc_at(0)]])
    err = validate_file(str(cut)).error
    assert err.section == "DocRecord" and err.message_index == 0 and err.offset == offsets[_doc_at(0)]
    assert "file ends after 0 doc records but the header announces 3" in err.reason
    # a truncated .gz stream
    gz = tmp_path / "cut.ciff.gz"
    gz.write_bytes(gzip.compress(data)[:-12])
    err = validate_file(str(gz)).error
    assert err is not None and ("truncated" in err.reason)
    # an empty file
    empty = tmp_path / "empty.ciff"
    empty.write_bytes(b"")
    assert "empty file" in validate_file(str(empty)).error.reason


def test_trailing_bytes_and_misnamed_gzip(tmp_path):
    path = tmp_path / "tail.ciff"
    offsets = write_raw(path, good_messages(), tail=encode_varint(3) + doc_msg(3, "d3", 0)[:3])
    err = validate_file(str(path)).error
    assert "data after the last of the 3 doc records" in err.reason
    assert err.offset == path.stat().st_size - 4 and err.offset > offsets[-1]
    misnamed = tmp_path / "zipped.ciff"
    misnamed.write_bytes(gzip.compress(b"\x00"))
    assert "does not end in .gz" in validate_file(str(misnamed)).error.reason


def test_cli_validate_names_first_violation_and_exits_1(tmp_path, capsys):
    good, bad = tmp_path / "good.ciff.gz", tmp_path / "bad.ciff"
    write_raw(good, good_messages())
    offsets = write_raw(bad, good_messages(lists=_swap(GOOD_LISTS, 2, 3)))
    assert main(["validate", str(good)]) == 0
    assert main(["validate", str(good), str(bad)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-3].startswith(f"OK {good}: 4 postings lists, 6 postings, 3 docs, 10 terms")
    assert out[-1] == (
        f"INVALID {bad}, PostingsList #3, byte offset {offsets[4]}, term 'cherry': "
        "terms not in code-point order: 'cherry' after 'date'"
    )
    # the real entry point, once, as a user runs it
    proc = subprocess.run([sys.executable, "-m", "lib.ciff", "validate", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1 and "terms not in code-point order" in proc.stdout
