"""lib/runtime/jvm_cache.py: the driver JVM's class archive (what it is keyed on, how a new one is
published) and, end to end, that a second job run really maps its classes from it."""

from __future__ import annotations

import hashlib
import os
import pathlib
import subprocess
import sys
import time

import pytest

from lib.runtime import jvm_cache
from tests.index.test_index_job import sample_pages, write_day

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path, monkeypatch) -> pathlib.Path:
    """An empty cache folder, the archive switched on, and no driver JVM in this process
    (the test session's own JVM would otherwise make every plan ``None``)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(jvm_cache.ENV_DIR, str(folder))
    monkeypatch.setenv(jvm_cache.ENV_SWITCH, "on")
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setattr(jvm_cache, "jvm_running", lambda: False)
    return folder


def test_first_plan_creates_then_later_plans_use_the_archive(cache):
    first = jvm_cache.plan("6g")
    assert first is not None and first.creating
    assert first.tmp == f"{first.path}.{os.getpid()}.tmp"
    assert first.java_option.split()[0] == f"-XX:ArchiveClassesAtExit={first.tmp}"
    assert pathlib.Path(first.path).parent == cache and first.path.endswith(".jsa")
    pathlib.Path(first.path).write_bytes(b"archive")
    again = jvm_cache.plan("8g")  # same archive below 32 GB of heap
    assert again is not None and not again.creating and again.path == first.path
    assert again.java_option == f"-XX:SharedArchiveFile={first.path}"
    big = jvm_cache.plan("40g")  # no compressed pointers: another archive
    assert big is not None and big.creating and big.path != first.path


def test_empty_archive_is_not_used(cache):
    path = pathlib.Path(jvm_cache.plan().path)
    path.write_bytes(b"")
    assert jvm_cache.plan().creating


@pytest.mark.parametrize("value", ["off", "0", "false", "NO"])
def test_switched_off(cache, monkeypatch, value):
    monkeypatch.setenv(jvm_cache.ENV_SWITCH, value)
    assert jvm_cache.plan() is None


def test_no_plan_once_a_driver_jvm_runs(cache, monkeypatch):
    monkeypatch.setattr(jvm_cache, "jvm_running", lambda: True)
    assert jvm_cache.plan() is None


def test_unwritable_cache_folder_means_no_archive(cache, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(jvm_cache.ENV_DIR, str(blocker / "cache"))
    assert jvm_cache.plan() is None


def test_key_follows_java_jars_and_heap(tmp_path):
    java, jar = tmp_path / "java", tmp_path / "a.jar"
    java.write_bytes(b"jvm")
    jar.write_bytes(b"jar")
    k = jvm_cache.archive_key(str(java), [str(jar)], "6g")
    assert k == jvm_cache.archive_key(str(java), [str(jar)], "2048m")
    assert k != jvm_cache.archive_key(str(java), [str(jar)], "32g")
    assert k != jvm_cache.archive_key(str(java), [], "6g")
    jar.write_bytes(b"another jar")
    assert k != jvm_cache.archive_key(str(java), [str(jar)], "6g")


@pytest.mark.parametrize("mem,big", [("6g", False), ("32g", True), ("31g", False), ("40000m", True),
                                      ("40000", True), ("4000", False), (None, False), ("64GB", True), ("x", False)])
def test_big_heap(mem, big):
    assert jvm_cache.big_heap(mem) is big


def test_merge_keeps_the_users_options():
    assert jvm_cache.merge_option(None, "-XX:A") == "-XX:A"
    assert jvm_cache.merge_option("-Dx=1 -Xss4m", "-XX:A") == "-Dx=1 -Xss4m -XX:A"


def test_stale_temporary_archives_are_removed(cache):
    cache.mkdir(parents=True)
    old, fresh = cache / "spark-driver-x.jsa.1.tmp", cache / "spark-driver-x.jsa.2.tmp"
    old.write_bytes(b"1")
    fresh.write_bytes(b"2")
    hour_ago = time.time() - jvm_cache.STALE_TMP_SECONDS - 60
    os.utime(old, (hour_ago, hour_ago))
    jvm_cache.plan()
    assert not old.exists() and fresh.exists()


class _Gateway:
    """Stands in for PySpark's gateway: ``proc`` is a real child that, like the driver JVM,
    exits when its stdin closes and writes the archive on its way out."""

    def __init__(self, proc):
        self.proc = proc
        self.closed = False

    def shutdown(self):
        self.closed = True


def _child(tmp: str, rc: int) -> subprocess.Popen:
    code = f"import sys; sys.stdin.read(); open({tmp!r}, 'wb').write(b'classes'); sys.exit({rc})"
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)


@pytest.mark.parametrize("rc", [0, 1])
def test_finish_publishes_only_after_a_clean_exit(cache, monkeypatch, rc):
    from pyspark import SparkContext

    p = jvm_cache.plan()
    gw = _Gateway(_child(p.tmp, rc))
    monkeypatch.setattr(SparkContext, "_gateway", gw)
    monkeypatch.setattr(SparkContext, "_jvm", object())
    assert jvm_cache.finish(p) is (rc == 0)
    assert gw.closed and gw.proc.returncode == rc
    assert SparkContext._gateway is None and SparkContext._jvm is None  # a new session starts a new JVM
    assert not os.path.exists(p.tmp)
    if rc == 0:
        assert pathlib.Path(p.path).read_bytes() == b"classes"
    else:
        assert not os.path.exists(p.path)


def test_finish_does_nothing_when_the_archive_was_used(cache, monkeypatch):
    from pyspark import SparkContext

    pathlib.Path(jvm_cache.plan().path).write_bytes(b"archive")
    used = jvm_cache.plan()
    monkeypatch.setattr(SparkContext, "_gateway", _Gateway(None))
    assert jvm_cache.finish(used) is False and jvm_cache.finish(None) is False
    assert SparkContext._gateway is not None


def _digests(out: pathlib.Path) -> dict[str, str]:
    """Shards and metadata (the graph's Spark part files carry a random name)."""
    return {str(f.relative_to(out)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(out.rglob("*")) if f.is_file() and "graph" not in f.parts and f.name != "_stats.json"}


@pytest.mark.slow
def test_second_job_maps_spark_classes_from_the_archive(tmp_path):
    """Two real runs of jobs/index.py: the first writes the archive as its JVM exits, the
    second's JVM loads Spark's classes from it (its class-loading log says so), and the
    index is byte for byte the same."""
    day = write_day(tmp_path, sample_pages())
    env = {**os.environ, jvm_cache.ENV_SWITCH: "on", jvm_cache.ENV_DIR: str(tmp_path / "cache"),
           "PYSPARK_PYTHON": sys.executable}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    log = tmp_path / "classes.log"

    def run(out: str, *extra: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, str(ROOT / "jobs" / "index.py"), "--input", str(day), "--output", str(tmp_path / out),
               "--master", "local[1]", "--docs-per-shard", "4", "--min-group-docs", "3", *extra]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)

    first = run("out1")
    assert first.returncode == 0, first.stderr[-3000:]
    archives = list((tmp_path / "cache").iterdir())
    assert len(archives) == 1 and archives[0].suffix == ".jsa" and archives[0].stat().st_size > 10 << 20
    assert "[warning][cds]" not in first.stdout + first.stderr  # the dump's noise is silenced
    second = run("out2", "--conf", f"spark.driver.extraJavaOptions=-Xlog:class+load=info:file={log}")
    assert second.returncode == 0, second.stderr[-3000:]
    loaded = log.read_text()
    assert "org.apache.spark.SparkContext source: shared objects file (top)" in loaded
    assert "org.apache.spark.sql.classic.SparkSession source: shared objects file (top)" in loaded
    assert list((tmp_path / "cache").iterdir()) == archives  # used, not rewritten
    digests = _digests(tmp_path / "out1")
    assert any(k.endswith(".ciff.gz") for k in digests) and digests == _digests(tmp_path / "out2")
