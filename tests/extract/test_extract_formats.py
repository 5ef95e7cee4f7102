"""The extract job over every archive format preprocess indexes (.warc.gz, .arc.gz, .warc, .arc,
.warc.zst with and without a dictionary frame, .warc.lz4), end to end on Spark: byte-identical
copies, output files read back by warcio, FastWARC and the zstd/lz4 command-line tools.

The gzip, plain and LZ4 inputs are real files (../shared/corpus, tests/data/conformance). No
real WARC-zstd file is available, so the zstd inputs are a real WARC's records recompressed
one frame each with the ``zstandard`` library, once plainly and once with a trained
dictionary in the leading skippable frame (the WARC-zstd layout)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess

import pytest
import zstandard
from fastwarc.warc import ArchiveIterator as FastWarcIterator
from fastwarc.warc import WarcRecordType
from warcio.archiveiterator import ArchiveIterator

from jobs.extract import ExtractJob
from lib.extract.driver import MANIFEST
from lib.extract.lines import Resolver, parse_lines
from lib.extract.record_list import record_ranges
from lib.extract.task import extract_items
from lib.store import s3
from lib.warc.streams import GzipMembers

CONFORMANCE = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "data", "conformance"))
TYPES = ("response", "resource", "revisit", "request", "metadata")


def zstd_warc(src: str, with_dict: bool) -> bytes:
    with open(src, "rb") as f:
        plain = [m.read(1 << 30) for m in GzipMembers(f)]
    if not with_dict:
        return b"".join(zstandard.ZstdCompressor().compress(p) for p in plain)
    d = zstandard.train_dictionary(8192, plain * 3)
    raw = d.as_bytes()
    frame = b"\x5d\x2a\x4d\x18" + len(raw).to_bytes(4, "little") + raw
    return frame + b"".join(zstandard.ZstdCompressor(dict_data=d).compress(p) for p in plain)


@pytest.fixture(scope="module")
def formats_root(corpus, tmp_path_factory):
    """One real archive of every format below a fresh root; names that lie about the content
    (the format is sniffed from the bytes)."""
    root = tmp_path_factory.mktemp("formats") / "archives"
    root.mkdir()
    conf = os.path.realpath(CONFORMANCE)
    copies = {
        "a.warc.gz": corpus / "aut" / "example.warc.gz",
        "b.arc.gz": corpus / "aut" / "example.arc.gz",
        "c.warc": corpus / "aut" / "issue-493.warc",
        "d.arc": os.path.join(conf, "tika", "testARC.arc"),
        "e.arc": os.path.join(conf, "warcio", "example.arc"),
        "f.warc.lz4": os.path.join(conf, "resiliparse", "warcfile.warc.lz4"),
        "renamed.bin": os.path.join(
            conf, "webarchive-discovery", "IAH-20080430204825-00000-blackbook-truncated.arc.gz"
        ),
    }
    for name, src in copies.items():
        shutil.copy(src, root / name)
    (root / "g.warc.zst").write_bytes(zstd_warc(str(corpus / "aut" / "example.warc.gz"), with_dict=False))
    (root / "h.warc.zst").write_bytes(zstd_warc(str(corpus / "resiliparse" / "warcfile.warc.gz"), with_dict=True))
    (root / "i.warc.zst").write_bytes(zstd_warc(str(corpus / "ipwb" / "sample-1.warc.gz"), with_dict=True))
    lines = []
    for name in sorted(os.listdir(root)):
        for r in record_ranges(str(root / name)):
            if r.rec_type in TYPES and r.url:
                lines.append(f"{r.url}\t{name}\t{r.offset}\t{r.length}")
    return root, lines


def decompressed(path: str) -> bytes:
    """An output file decompressed by the command-line tool of its format (zstd with the
    dictionary taken from the file's own skippable frame; lz4)."""
    data = open(path, "rb").read()
    if path.endswith(".zst"):
        args = ["zstd", "-d", "-c", "-q"]
        if data[1:4] == b"\x2a\x4d\x18":
            size = int.from_bytes(data[4:8], "little")
            dict_path = path + ".dict"
            with open(dict_path, "wb") as f:
                f.write(data[8 : 8 + size])
            args += ["-D", dict_path]
        out = subprocess.run(args + [path], capture_output=True, check=True).stdout
        if data[1:4] == b"\x2a\x4d\x18":
            os.remove(dict_path)
        return out
    if path.endswith(".lz4"):
        return subprocess.run(["lz4", "-d", "-c", "-q", "-m", path], capture_output=True, check=True).stdout
    return data


def warcio_urls(data: bytes) -> list[tuple[str, str]]:
    it = ArchiveIterator(io.BytesIO(data), arc2warc=False)
    return [
        (r.rec_type, r.rec_headers.get_header("WARC-Target-URI") or r.rec_headers.get_header("uri") or "") for r in it
    ]


def check_formats_output(out):
    rows = [line.rstrip("\n").split("\t") for line in open(os.path.join(out, MANIFEST)) if not line.startswith("#")]
    by_file: dict[str, list] = {}
    for url, name, off, n, _, src, src_off in rows:
        data = open(os.path.join(out, name), "rb").read()
        src_data = open(src.removeprefix("file://"), "rb").read()
        assert data[int(off) : int(off) + int(n)] == src_data[int(src_off) : int(src_off) + int(n)], (name, off)
        by_file.setdefault(name, []).append(url)
    names = sorted(n for n in os.listdir(out) if n.startswith("extract-"))
    assert names == sorted(by_file)
    for name in names:
        recs = warcio_urls(decompressed(os.path.join(out, name)))
        kind = name.split(".")[1]
        assert recs[0][0] == ("arc_header" if kind == "arc" else "warcinfo"), name
        assert [u for _, u in recs[1:]] == [u.replace(" ", "%20") if kind == "warc" else u for u in by_file[name]], name
        if kind == "warc" and not name.endswith(".zst"):  # FastWARC reads gzip, LZ4 and plain WARC
            with open(os.path.join(out, name), "rb") as f:
                fast = [
                    r.headers.get("WARC-Target-URI")
                    for r in FastWarcIterator(f, record_types=WarcRecordType.any_type, parse_http=False)
                ]
            assert fast[0] is None and len(fast) == len(recs), name
    return rows, names


@pytest.mark.slow
def test_every_format_end_to_end(spark, formats_root, tmp_path):
    root, lines = formats_root
    tsv = tmp_path / "list.tsv"
    tsv.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    rc = ExtractJob().main(
        ["--tsv", str(tsv), "--archives", str(root), "--output", str(out), "--partitions", "2"], spark=spark
    )
    assert rc == 0
    rows, names = check_formats_output(out)
    assert len(rows) == len(lines)
    suffixes = {n.split(".", 1)[1] for n in names}
    assert suffixes == {"warc.gz", "arc.gz", "warc", "arc", "warc.lz4", "warc.zst"}
    # the two dictionaries never share a file; each zstd file starts with its source's frame
    zst = [n for n in names if n.endswith(".zst")]
    heads = {open(out / n, "rb").read(4) for n in zst}
    assert b"\x5d\x2a\x4d\x18" in heads and b"\x28\xb5\x2f\xfd" in heads
    dict_files = {(out / n).read_bytes()[:64] for n in zst if (out / n).read_bytes()[:4] == b"\x5d\x2a\x4d\x18"}
    assert len(dict_files) == 2
    # the manifest is an input again; --verify checks every member of every format
    out2 = tmp_path / "again"
    rc = ExtractJob().main(
        ["--tsv", str(out / MANIFEST), "--archives", str(out), "--output", str(out2), "--verify"], spark=spark
    )
    assert rc == 0
    rows2, _ = check_formats_output(out2)
    assert len(rows2) == len(lines)


def test_not_an_archive_and_wrong_offsets(formats_root, tmp_path):
    root, lines = formats_root
    (root / "notes.warc.gz").write_bytes(b"just some text\n" * 100)
    zst = [line for line in lines if "\th.warc.zst\t" in line][3]
    url, name, off, n = zst.split("\t")
    arc = [line for line in lines if "\td.arc\t" in line][1]
    aurl, aname, aoff, an = arc.split("\t")
    bad = [
        "u\tnotes.warc.gz\t0\t10",
        f"{url}\t{name}\t{int(off) + 1}\t{n}",
        f"{aurl}\t{aname}\t{int(aoff) + 3}\t{int(an) - 3}",
    ]
    items, errors = parse_lines(bad + [zst, arc], Resolver(str(root)))
    assert errors == []
    for verify in (False, True):
        out = tmp_path / f"out{verify}"
        out.mkdir()
        res = extract_items(0, items, str(out), max_bytes=1 << 20, verify=verify)
        assert res["records"] == 2
        assert sorted((no, r.split(":")[0]) for no, r in res["errors"]) == [
            (1, "bad-format"),
            (2, "not-member"),
            (3, "not-member"),
        ]
        reasons = dict(res["errors"])
        assert (
            "starts no WARC or ARC record" in reasons[1] and "zstd member" in reasons[2] and "ARC record" in reasons[3]
        )


def test_zstd_and_lz4_from_s3(formats_root, s3_bucket, tmp_path):
    root, lines = formats_root
    for name in ("h.warc.zst", "f.warc.lz4", "d.arc"):
        s3.client().upload_file(str(root / name), s3_bucket, f"w/{name}")
    chosen = [line for line in lines if line.split("\t")[1] in ("h.warc.zst", "f.warc.lz4", "d.arc")]
    items, errors = parse_lines(chosen, Resolver(f"s3://{s3_bucket}/w"))
    out = tmp_path / "out"
    out.mkdir()
    res = extract_items(0, items, str(out), max_bytes=1 << 20, verify=True)
    assert res["errors"] == [] and res["records"] == len(chosen)
    for name in sorted(os.listdir(out)):
        if name.startswith("extract-"):
            recs = warcio_urls(decompressed(str(out / name)))
            assert len(recs) > 1


@pytest.mark.slow
def test_offsets_preprocess_records_for_every_format(spark, formats_root, tmp_path):
    """Every format through the preprocess job, then every page it kept extracted by the
    offsets it wrote, with --verify: whole members (gzip, zstd with its dictionary, LZ4) or
    plain records holding the page's URL."""
    from jobs import preprocess

    root, _ = formats_root
    inp = tmp_path / "warc"
    inp.mkdir()
    for name in os.listdir(root):
        if (
            name.endswith((".warc.gz", ".arc.gz", ".warc", ".arc", ".warc.zst", ".warc.lz4"))
            and name != "notes.warc.gz"
        ):
            shutil.copy(root / name, inp / name)
    pre = tmp_path / "pre"
    assert preprocess.main(["--input", str(inp), "--output", str(pre), "--fail-on", "never"], spark=spark) == 0
    import pyarrow.parquet as pq

    pages = pq.read_table(str(pre), columns=["url", "warc_file", "warc_offset", "warc_length"]).to_pylist()
    kinds = {os.path.basename(p["warc_file"]).split(".", 1)[1] for p in pages}
    assert kinds >= {"warc.gz", "arc.gz", "warc", "arc", "warc.zst", "warc.lz4"}, kinds
    out = tmp_path / "out"
    rc = ExtractJob().main(
        ["--from-parquet", str(pre), "--archives", str(inp), "--output", str(out), "--verify"], spark=spark
    )
    assert rc == 0
    rows, names = check_formats_output(out)
    assert sorted((r[0], r[5].removeprefix("file://"), int(r[6])) for r in rows) == sorted(
        (p["url"], p["warc_file"].removeprefix("file://"), p["warc_offset"]) for p in pages
    )
