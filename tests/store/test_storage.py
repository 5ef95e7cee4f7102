"""lib.store.storage against local folders and the loopback S3 server."""

from __future__ import annotations

import os

import pytest

from lib.store import s3, storage


def test_local_listing_ranges_and_uris(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x.warc.gz").write_bytes(b"0123456789")
    (tmp_path / "a" / "y.txt").write_bytes(b"no")
    found = storage.list_files(str(tmp_path), [".warc.gz"])
    assert [(f.uri, f.size) for f in found] == [(f"file://{tmp_path}/a/b/x.warc.gz", 10)]
    assert storage.read_range(found[0].uri, 3, 4) == b"3456"
    assert storage.read_range(found[0].uri, 8, 10) == b"89"  # short read at the end, not an error
    assert storage.list_files(str(tmp_path / "missing")) == []


def test_s3_listing_and_ranges(s3_bucket):
    c = s3.client()
    for i in range(3):
        c.put_object(Bucket=s3_bucket, Key=f"warc/2026-01/15/c{i}/f.warc.gz", Body=bytes(range(i + 5)))
    c.put_object(Bucket=s3_bucket, Key="warc/2026-01/150/other.warc.gz", Body=b"x")  # prefix sibling
    found = storage.list_files(f"s3://{s3_bucket}/warc/2026-01/15", [".warc.gz"])
    assert [f.size for f in found] == [5, 6, 7]
    assert storage.read_range(found[2].uri, 2, 3) == bytes([2, 3, 4])
    assert storage.read_range(found[0].uri, 100, 3) == b""
    assert storage.exists(found[0].uri) and not storage.exists(f"s3://{s3_bucket}/nope")


def test_s3_stream_resumes_after_a_dropped_connection(s3_bucket, monkeypatch):
    data = os.urandom(3 << 20)
    s3.client().put_object(Bucket=s3_bucket, Key="big.bin", Body=data)
    real_open = storage.S3Stream._open
    drops = {"n": 0}

    class Flaky:
        def __init__(self, body):
            self.body = body
            self.served = 0

        def read(self, n):
            if self.served > (1 << 20) and drops["n"] < 2:
                drops["n"] += 1
                raise ConnectionResetError("connection reset by peer")
            out = self.body.read(n)
            self.served += len(out)
            return out

        def close(self):
            self.body.close()

    def flaky_open(self):
        real_open(self)
        self._body = Flaky(self._body)

    monkeypatch.setattr(storage.S3Stream, "_open", flaky_open)
    with storage.open_stream(f"s3://{s3_bucket}/big.bin", buffer_size=64 << 10) as f:
        got = b"".join(iter(lambda: f.read(100_000), b""))
    assert drops["n"] == 2 and got == data


def test_upload_tree_replaces_and_writes_success_last(s3_bucket, tmp_path):
    src = tmp_path / "day"
    (src / "language=eng").mkdir(parents=True)
    (src / "language=eng" / "p.parquet").write_bytes(b"new")
    (src / "_SUCCESS").write_bytes(b"{}")
    dest = f"s3://{s3_bucket}/out/day"
    s3.client().put_object(Bucket=s3_bucket, Key="out/day/language=deu/stale.parquet", Body=b"old")
    s3.client().put_object(Bucket=s3_bucket, Key="out/day/_SUCCESS", Body=b"old")
    order = []
    real = s3.client().upload_file
    monkey_client = s3.client()
    monkey_client.upload_file = lambda f, b, k, **kw: (order.append(k), real(f, b, k, **kw))
    try:
        assert storage.upload_tree(str(src), dest) == 2
    finally:
        del monkey_client.upload_file
    assert order == ["out/day/language=eng/p.parquet", "out/day/_SUCCESS"]
    keys = sorted(f.uri for f in storage.list_files(dest))
    assert keys == [f"{dest}/_SUCCESS", f"{dest}/language=eng/p.parquet"]


def test_a_failed_upload_fails_the_publish_and_leaves_no_marker(s3_bucket, tmp_path):
    src = tmp_path / "day"
    for i in range(20):
        (src / f"part={i % 4}").mkdir(parents=True, exist_ok=True)
        (src / f"part={i % 4}" / f"f{i}.parquet").write_bytes(os.urandom(1000))
    (src / "_SUCCESS").write_bytes(b"{}")
    dest = f"s3://{s3_bucket}/failing/day"
    real = s3.client().upload_file
    monkey_client = s3.client()

    def flaky(f, b, k, **kw):
        if k.endswith("/f13.parquet"):
            raise OSError("disk read error")
        return real(f, b, k, **kw)

    monkey_client.upload_file = flaky
    try:
        with pytest.raises(OSError, match="disk read error"):
            storage.upload_tree(str(src), dest)
    finally:
        del monkey_client.upload_file
    assert not storage.exists(f"{dest}/_SUCCESS")
    assert storage.upload_tree(str(src), dest) == 21  # the re-run publishes the whole folder
    assert len(storage.list_files(dest)) == 21 and storage.exists(f"{dest}/_SUCCESS")


def test_local_publish_copies_the_tree_and_puts_the_marker_last(tmp_path, monkeypatch):
    src = tmp_path / "out"
    (src / "com" / "eng").mkdir(parents=True)
    (src / "graph" / "edges").mkdir(parents=True)  # an empty folder is part of the output too
    (src / "empty").mkdir()
    (src / "com" / "eng" / "index-0.ciff.gz").write_bytes(os.urandom(3 << 20))
    (src / "graph" / "edges" / "_SUCCESS").write_bytes(b"")
    (src / "_SUCCESS").write_bytes(b"done")
    dest = tmp_path / "pub" / "day"
    (dest / "stale").mkdir(parents=True)
    (dest / "stale" / "gone.txt").write_text("old")
    (dest / "_SUCCESS").write_bytes(b"")
    seen = []
    real = storage.commit_dir
    monkeypatch.setattr(storage, "commit_dir", lambda t, f: (seen.append(sorted(os.listdir(t))), real(t, f)))
    monkeypatch.chdir(tmp_path)  # a relative destination, as a user types it
    assert storage.upload_tree(str(src), "pub/day") == 3
    assert seen == [["com", "empty", "graph"]]  # no marker in the folder until it is in place
    got = {str(p.relative_to(dest)): p.read_bytes() for p in dest.rglob("*") if p.is_file()}
    assert got == {"com/eng/index-0.ciff.gz": (src / "com" / "eng" / "index-0.ciff.gz").read_bytes(),
                   "_SUCCESS": b"done"}
    assert (dest / "empty").is_dir() and (dest / "graph" / "edges").is_dir()
    assert not (tmp_path / "pub" / "day.publishing").exists()
    assert storage.read_range("pub/day/com/eng/index-0.ciff.gz", 5, 7) == got["com/eng/index-0.ciff.gz"][5:12]
    with pytest.raises(FileNotFoundError):
        storage.read_range("pub/day/nope", 0, 1)
    flat = tmp_path / "flat"  # files only, no folder below: the copy still has its root
    flat.mkdir()
    (flat / "part-0.parquet").write_bytes(b"rows")
    (flat / "_SUCCESS").write_bytes(b"{}")
    assert storage.upload_tree(str(flat), str(tmp_path / "pub" / "outbound")) == 2
    assert sorted(os.listdir(tmp_path / "pub" / "outbound")) == ["_SUCCESS", "part-0.parquet"]


def test_commit_dir_swaps_whole_folders(tmp_path):
    final = tmp_path / "day"
    final.mkdir()
    (final / "old.txt").write_text("old")
    (final / "_SUCCESS").write_text("")
    tmp = tmp_path / "day.tmp-1"
    tmp.mkdir()
    (tmp / "new.txt").write_text("new")
    storage.commit_dir(str(tmp), str(final))
    assert sorted(os.listdir(final)) == ["new.txt"] and not tmp.exists()
    assert not (tmp_path / "day.old").exists()


def test_bad_uris_are_rejected():
    with pytest.raises(ValueError):
        storage.split_s3("s3:///no-bucket")
    with pytest.raises(ValueError):
        storage.local_path("http://example.com/x")
