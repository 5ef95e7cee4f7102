"""Preprocess per core against the loops a user would write with FastWARC, selectolax,
Resiliparse and fastText, in one invocation on the same files.

Loops (one process, one core each), timed on the same WARC files:

* ``ours``: everything the job's task does, one task over the files
  (lib.preprocess.tasks.process_task into a scratch folder): the page rows of
  lib.preprocess.archive_pages.FileProcessor (read, HTTP, charset, title/description/lang/canonical, links
  with anchors, directives, discussion markup, main text without boilerplate, language, URL parts,
  digests, captures), the MinHash signatures, Arrow batches, Parquet pages and captures
* ``ours_bare``: the page rows alone (FileProcessor; ``ours`` before 2026-12: no signatures, Arrow
  or Parquet)
* ``selectolax``: FastWARC read + selectolax (lexbor) title, links (urljoin; no anchor texts, as the
  issue's loop), text after dropping script/style/nav/header/footer/aside/form + fastText lid.176
  on 2,000 chars
* ``resiliparse``: FastWARC read + Resiliparse main-content text + fastText on 2,000 chars

then the selectolax loop in ``--cores`` processes at once (the files dealt among them: what the
machine's cores give a peer when all are busy, the ceiling of any job's scaling), then
``jobs/preprocess.py --master local[2]`` on the same files (JVM start and Parquet output
included; the driver JVM maps Spark's classes from lib/runtime/jvm_cache.py's archive, written by one
untimed run when missing, as on any machine where the job ran before). The job's line gives its
CPU seconds by process (benchmarks/proctree.py) and its phases from the summary's ``task_timing``:
start (launch to the first task), the tasks' span, end (last task to exit), the tasks' CPU per
page against our loop's, and the span's rate against two cores of our loop.

Inputs (``--set``, repeatable; default all three):

* ``real``: the real-shaped day of devtools/realday.py (the shared samples and the heavy pages
  with every record type, ``--copies`` copies with renamed hosts), in both cuts: ``real-small``
  (many small archives) and ``real-large`` (few large ones); the day's shape is printed beside
  each figure. The sets below copy pages verbatim: extra rows.
* ``heavy``: tests/data/heavy_pages (138 real pages, 134 KB mean, ~160 links; see its
  SOURCES.md) wrapped as WARC response records, each page repeated under distinct URLs to
  ``--records`` records, in ``--files`` files (built once into ``--work``)
* ``shared``: the gzip members of the HTML response records of the shared samples
  (../shared/corpus/*/*.warc.gz), copied as they are, repeated to ``--records``

The in-process loops run ``--repeat`` times in alternation (ours, selectolax, resiliparse,
ours, ...); each loop's rate is its median, and ratios are of medians measured in the same
invocation. CPU seconds of the process are given beside wall seconds (the machine is shared).
Each set also gets the CPU of ``ours`` by stage (benchmarks/prep_stages.py) and the issue-62
targets, held or not (:func:`benchmarks.prep_stages.targets`); each ``--set`` is one result file
(one row of docs/benchmarks.md).

    python -m benchmarks.bench_preprocess_peers [--set real --set heavy --set shared] [--copies 1] [--repeat 3]
        [--no-job] [--loops ours,ours_bare,selectolax,resiliparse]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import shlex
import shutil
import statistics
import sys
import tempfile
import time

from benchmarks import WORK as BENCH_WORK
from benchmarks import prep_stages
from benchmarks.common import load, timed, utc_now, write_result
from benchmarks.prep_job import ensure_class_archive, run_job
from devtools.heavypages import heavy_pages, warc_member

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

DROP = ["script", "style", "nav", "header", "footer", "aside", "form"]
LID_CHARS = 2000


# ------------------------------------------------------------------ inputs
def repeat_url(url: str, k: int) -> str:
    return url if k == 0 else f"{url}{'&' if '?' in url else '?'}copy={k}"


def build(folder: str, prefix: str, records: int, files: int, member, key: dict) -> list[str]:
    """``records`` gzip members (``member(i)``) dealt round-robin into ``files`` WARC files,
    built once: a stamp beside them says from what."""
    paths = [os.path.join(folder, f"{prefix}-{i}.warc.gz") for i in range(files)]
    stamp = os.path.join(folder, "built.json")
    want = {"records": records, "files": files, **key}
    if os.path.exists(stamp) and json.load(open(stamp)) == want and all(map(os.path.exists, paths)):
        return paths
    os.makedirs(folder, exist_ok=True)
    if os.path.exists(stamp):
        os.remove(stamp)  # a build that dies half-way must not pass for a finished one
    outs = [open(p, "wb") for p in paths]
    for i in range(records):
        outs[i % files].write(member(i))
    for o in outs:
        o.close()
    with open(stamp, "w") as f:
        json.dump(want, f)
    return paths


def build_heavy(folder: str, records: int, files: int) -> list[str]:
    pages = heavy_pages()

    def member(i: int) -> bytes:
        url, body = pages[i % len(pages)]
        return warc_member(repeat_url(url, i // len(pages)), body, i)

    return build(folder, "heavy", records, files, member, {"pages": len(pages)})


def build_shared(folder: str, corpus: str, records: int, files: int) -> list[str]:
    """The gzip members of the shared samples' HTML responses, copied as they are, repeated."""
    from benchmarks.bench_preprocess import real_members

    members = real_members(corpus)
    if not members:
        raise SystemExit(f"no HTML response records in {corpus}/*/*.warc.gz (--corpus)")
    return build(folder, "shared", records, files, lambda i: members[i % len(members)], {"members": len(members)})


# ------------------------------------------------------------------ loops
def loop_ours(files: list[str]) -> int:
    """Everything the job's task does, one task over ``files``, into a scratch folder."""
    from lib.preprocess import tasks
    from lib.preprocess.file_counters import FileResult

    out = tempfile.mkdtemp(prefix="peers-ours-")
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # a line per archive
            rows = tasks.process_task([(p, os.path.getsize(p)) for p in files], tasks.TaskSettings(out, 10 << 20, 500))
        return sum(FileResult.from_json(r["stats"]).kept for r in rows)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def loop_ours_bare(files: list[str]) -> int:
    from benchmarks.bench_preprocess import bare_loop  # lib.preprocess.archive_pages.FileProcessor over each file

    return bare_loop(files)[1]


def _fasttext():
    import fasttext

    from lib.preprocess.langid import model_path

    fasttext.FastText.eprint = lambda *a, **k: None
    return fasttext.load_model(model_path()).f.predict  # the C++ binding: fastText's wrapper breaks under numpy 2


def _fastwarc_html(files: list[str]):
    """(url, body) of every 2xx text/html response, read with FastWARC."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    for path in files:
        with open(path, "rb") as f:
            for rec in ArchiveIterator(f, record_types=WarcRecordType.response, parse_http=True):
                if rec.http_headers is None or not 200 <= (rec.http_headers.status_code or 0) < 300:  # dns:, ...
                    continue
                ctype = (rec.http_headers.get("Content-Type") or "").lower()
                if "html" not in ctype:
                    continue
                yield rec.headers.get("WARC-Target-URI"), rec.reader.read()


def loop_selectolax(files: list[str]) -> int:
    from urllib.parse import urljoin

    from selectolax.lexbor import LexborHTMLParser

    predict = _fasttext()
    n = 0
    for url, body in _fastwarc_html(files):
        tree = LexborHTMLParser(body)
        t = tree.css_first("title")
        title = t.text(strip=True) if t is not None else ""
        links = []
        for a in tree.css("a[href]"):
            href = a.attributes.get("href")
            if href:
                links.append(urljoin(url, href))
        tree.strip_tags(DROP)
        text = tree.body.text(separator="\n", strip=True) if tree.body is not None else ""
        sample = f"{title} {text[:LID_CHARS]}".replace("\n", " ")
        predict(sample + "\n", 1, 0.0, "strict")
        n += 1
    return n


def loop_resiliparse(files: list[str]) -> int:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import detect_encoding
    from resiliparse.parse.html import HTMLTree

    predict = _fasttext()
    n = 0
    for _url, body in _fastwarc_html(files):
        tree = HTMLTree.parse_from_bytes(body, detect_encoding(body))
        title = tree.title or ""
        text = extract_plain_text(tree, main_content=True)
        sample = f"{title} {text[:LID_CHARS]}".replace("\n", " ")
        predict(sample + "\n", 1, 0.0, "strict")
        n += 1
    return n


LOOPS = {"ours": loop_ours, "ours_bare": loop_ours_bare, "selectolax": loop_selectolax, "resiliparse": loop_resiliparse}


def timed_loop(fn, files: list[str]) -> dict:
    """``fn(files)`` once: its pages, wall and CPU seconds, and the load around it."""
    l0 = load()
    t = timed(lambda: fn(files))
    return {
        "pages": t.result,
        "wall": round(t.wall, 2),
        "cpu": round(t.cpu, 2),
        "load_before": l0,
        "load_after": load(),
    }


def parallel_loop(loop, files: list[str], procs: int) -> dict:
    """``loop`` in ``procs`` processes at once, the files dealt among them: what the machine's
    cores give a loop when all are busy (the ceiling a job's scaling is held to: two processes
    at once need not each run at one's speed)."""
    import multiprocessing as mp

    shares = [files[i::procs] for i in range(procs)]
    l0 = load()
    with mp.get_context("spawn").Pool(procs) as pool:
        pool.map(loop, [s[:1] for s in shares])  # imports and the model, untimed
        t0 = time.perf_counter()
        pages = sum(pool.map(loop, shares))
        wall = time.perf_counter() - t0
    return {"pages": pages, "wall": round(wall, 2), "load_before": l0, "load_after": load()}


# ------------------------------------------------------------------ main
def bench_set(name: str, files: list[str], warm: list[str], a) -> dict:
    size = sum(os.path.getsize(p) for p in files)
    res: dict = {"files": len(files), "compressed_mb": round(size / 1e6, 1), "runs": {k: [] for k in LOOPS}}
    print(f"[{name}] {len(files)} files, {size / 1e6:.1f} MB compressed, load {load()}", flush=True)
    for fn in LOOPS.values():  # imports, models, caches: not what a loop costs per page
        fn(warm)
    for _ in range(a.repeat):
        for k, fn in LOOPS.items():
            r = timed_loop(fn, files)
            res["runs"][k].append(r)
            print(
                f"[{name}] {k:12s} {r['pages']} pages, {r['wall']:.1f} s wall, {r['cpu']:.1f} s cpu, "
                f"{r['pages'] / r['wall']:.0f} pages/s, load {r['load_after']}",
                flush=True,
            )
    rates = {}
    for k, runs in res["runs"].items():
        wall = statistics.median(r["wall"] for r in runs)
        cpu = statistics.median(r["cpu"] for r in runs)
        rates[k] = {
            "pages": runs[0]["pages"],
            "wall": wall,
            "cpu": cpu,
            "pages_per_s": round(runs[0]["pages"] / wall, 1),
            "pages_per_cpu_s": round(runs[0]["pages"] / cpu, 1),
        }
    res["rates"] = rates
    peer = rates["selectolax"]
    res["ratios"] = {}
    for k in [k for k in rates if k != "ours"]:
        for clock in ("wall", "cpu"):
            res["ratios"][f"ours/{k} ({clock})"] = round(rates[k][clock] / rates["ours"][clock], 3)
    # core-hours for 1 TiB of such compressed WARC, at our single-core CPU rate
    res["core_hours_per_tib"] = round((1 << 40) / (size / rates["ours"]["cpu"]) / 3600, 1)
    for k in [k for k in ("selectolax", "ours") if k in LOOPS and a.cores > 1]:
        par = parallel_loop(LOOPS[k], files, a.cores)
        par["pages_per_s"] = round(par["pages"] / par["wall"], 1)
        res[f"{k}_parallel"] = par
        res["ratios"][f"{k} {a.cores} processes / one (wall)"] = round(rates[k]["wall"] / par["wall"], 3)
        print(
            f"[{name}] {k} x{a.cores} processes {par['pages']} pages, {par['wall']:.1f} s, "
            f"{par['pages_per_s']:.0f} pages/s, load {par['load_after']}",
            flush=True,
        )
    if not a.no_job:
        res["class_archive_written_s"] = ensure_class_archive(files, a.work, a.cores)
        job = run_job(files, a.work, a.cores, shlex.split(a.job_args))
        job["pages_per_s"] = round(job["pages"] / job["wall"], 1)
        res["job"] = job
        res["ratios"][f"job local[{a.cores}] / selectolax one core (wall)"] = round(peer["wall"] / job["wall"], 3)
        res["ratios"][f"job local[{a.cores}] / ours one core (wall)"] = round(rates["ours"]["wall"] / job["wall"], 3)
        for k in [k for k in ("selectolax", "ours") if f"{k}_parallel" in res]:
            res["ratios"][f"job local[{a.cores}] / {k} {a.cores} processes (wall)"] = round(
                res[f"{k}_parallel"]["wall"] / job["wall"], 3
            )
        res["core_hours_per_tib_job"] = round((1 << 40) / (size / job["wall"]) / 3600 * a.cores, 1)
        print(
            f"[{name}] job local[{a.cores}] {job['pages']} pages, {job['wall']:.1f} s, {job['pages_per_s']:.0f} "
            "pages/s, "
            f"load {job['load_after']}, cpu {json.dumps(job['cpu'])}",
            flush=True,
        )
        if "phases" in job:  # the rate once the tasks run, against two cores of our loop by CPU
            tt = job["task_timing"]
            two = a.cores * rates["ours"]["pages_per_cpu_s"]
            res["ratios"][f"job whole run / {a.cores} cores of ours (cpu rate)"] = round(
                job["pages"] / job["wall"] / two, 3
            )
            res["ratios"][f"job tasks' span / {a.cores} cores of ours (cpu rate)"] = round(
                tt["pages_per_span_second"] / two, 3
            )
            res["ratios"]["job task cpu per page / ours"] = round(
                rates["ours"]["pages_per_cpu_s"] / tt["pages_per_task_cpu_second"], 3
            )
            print(f"[{name}] job phases {json.dumps(job['phases'])} s; tasks {json.dumps(tt)}", flush=True)
    if "ours" in LOOPS:
        res["stages"] = prep_stages.breakdown(files)
        print(f"[{name}] CPU by stage, {prep_stages.table(res['stages'])}", flush=True)
    res["targets"] = prep_stages.targets(res, a.cores)
    print(f"[{name}] ratios {json.dumps(res['ratios'])}", flush=True)
    print(f"[{name}] targets {json.dumps(res['targets'])}", flush=True)
    return res


def variant(name: str, no_job: bool) -> str:
    """The row a set's result is: the heavy set without the job is the main one (docs/benchmarks.md)."""
    if name == "heavy":
        return "" if no_job else "heavy day with the job"
    return ("real-shaped day" if name == "real" else name) + (", without the job" if no_job else "")


def record(name: str, sets: dict, head: dict, a) -> None:
    """One result file for the ``--set`` ``name`` (the real day's two cuts together)."""
    figures, ratio = {}, {}
    for s, r in sets.items():
        figures[s] = {f"{k} pages per cpu s": v["pages_per_cpu_s"] for k, v in r["rates"].items()}
        if "job" in r:
            figures[s] |= {"job wall s": r["job"]["wall"], "job pages per s": r["job"]["pages_per_s"]}
        if "stages" in r:
            figures[s]["ours cpu µs a page by stage"] = r["stages"]["stage_us_per_page"]
        ratio[s] = {**r["ratios"], "targets held": {k: v["held"] for k, v in r["targets"].items()}}
    write_result(
        "bench_preprocess_peers",
        figures,
        what="our preprocess loop (everything on) per CPU second against loops a user would write; "
        "the job on local[2]; our CPU by stage",
        peer="FastWARC + selectolax + fastText; FastWARC + Resiliparse + fastText",
        ratio=ratio,
        shape={s: r.get("shape") or f"{r['files']} files, {r['compressed_mb']} MB" for s, r in sets.items()},
        variant=variant(name, a.no_job),
        started=head["started"],
        load_before=head["load_start"],
        command="python -m benchmarks.bench_preprocess_peers " + shlex.join(sys.argv[1:]),
        details={**head, "sets": sets},
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", action="append", choices=["real", "heavy", "shared"])
    ap.add_argument("--copies", type=int, default=1, help="copies of the real-shaped day")
    ap.add_argument("--work", default=os.path.join(BENCH_WORK, "peers"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    ap.add_argument("--records", type=int, default=20_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--no-job", action="store_true")
    ap.add_argument("--job-args", default="", help="more arguments for jobs/preprocess.py (one string)")
    ap.add_argument("--loops", default=",".join(LOOPS), help="comma-separated subset of " + ",".join(LOOPS))
    a = ap.parse_args()
    for k in list(LOOPS):
        if k not in a.loops.split(","):
            del LOOPS[k]
    os.makedirs(a.work, exist_ok=True)
    result = {
        "machine": f"{platform.node()}, {os.cpu_count()} cores, {platform.processor() or platform.machine()}",
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_start": load(),
        "sets": {},
    }
    for name in a.set or ["real", "heavy", "shared"]:
        head = {"started": utc_now(), "load_start": load()}
        folder = os.path.join(a.work, name)
        sets: dict = {}
        if name == "real":
            from devtools import realday

            rd = realday.cached_day(os.path.join(a.work, f"real-{a.copies}x"), a.copies, a.corpus)
            for cut in realday.CUTS:
                line = realday.cut_line(rd["shape"], cut)
                print(f"[real-{cut}] {line}", flush=True)
                sets[f"real-{cut}"] = {
                    **bench_set(f"real-{cut}", rd["files"][cut], rd["files"]["small"][:1], a),
                    "shape": line,
                }
        else:
            if name == "heavy":
                files, warm = build_heavy(folder, a.records, a.files), build_heavy(folder + "-warm", 50, 1)
            else:
                files, warm = (
                    build_shared(folder, a.corpus, a.records, a.files),
                    build_shared(folder + "-warm", a.corpus, 50, 1),
                )
            sets[name] = bench_set(name, files, warm, a)
        result["sets"].update(sets)
        record(name, sets, head, a)
    result["load_end"] = load()
    print(json.dumps(result, indent=1))
    with open(os.path.join(a.work, f"result-{time.strftime('%Y%m%dT%H%M%S')}.json"), "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
