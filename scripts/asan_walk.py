"""Run the compiled walker once under AddressSanitizer (and UBSan) over the real pages.

    python scripts/asan_walk.py        (make asan; make test runs it)

lib/html/native/lexwalk.c reads selectolax's memory through lexbor's struct layouts, so a wrong
offset or a read past a buffer is silent in a normal build. This builds an instrumented copy of
the walker into a temporary folder (the same source and generated rule tables, warnings as
errors) and, in a Python process with the sanitizer runtimes preloaded (``LD_PRELOAD``) and that
copy loaded as ``lib.html._lexwalk``, extracts every real page (:func:`real_pages`: the heavy pages
of the peer benchmark, every HTML record of the shared corpus, the ScrapingHub pages of
../shared/extraction) and a 10,000-deep document with it, main_html and links included. It exits
non-zero on any sanitizer report. First, a canary module that reads past its buffer must be
reported: a run where the sanitizer is not active fails instead of passing silently. (That the
walker's output is the Python path's: tests/html/test_native_walk.py, over the same pages.)
"""

from __future__ import annotations

import glob
import gzip
import os
import pathlib
import runpy
import subprocess
import sys
import sysconfig
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
NATIVE = ROOT / "lib" / "html" / "native"
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g", "-O1"]
STRICT = ["-Wall", "-Wextra", "-Werror"]
#: the shared data beside the checkout, or where $DAILYSLICE_SHARED says (as tests/conftest.py)
SHARED = pathlib.Path(os.environ.get("DAILYSLICE_SHARED") or ROOT.parent / "shared")
REPORTS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer")
CANARY = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
static PyObject *boom(PyObject *self, PyObject *arg) {
    (void) self;
    char *p = calloc(8, 1);
    long i = PyLong_AsLong(arg);  /* 8: one past the end, which the sanitizer must report */
    char c = p != NULL ? p[i] : 0;
    free(p);
    return PyLong_FromLong(c);
}
static PyMethodDef methods[] = {{"boom", boom, METH_O, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "canary", NULL, -1, methods, NULL, NULL, NULL, NULL};
PyMODINIT_FUNC PyInit_canary(void) { return PyModule_Create(&module); }
"""


def compile_module(source: pathlib.Path, out: pathlib.Path, includes: list[pathlib.Path], sanitize=SANITIZE) -> None:
    """An instrumented extension module from one C file."""
    flags = [f"-I{p}" for p in [*includes, pathlib.Path(sysconfig.get_paths()["include"])]]
    cmd = ["gcc", "-shared", "-fPIC", *sanitize, *STRICT, *flags, str(source), "-o", str(out)]
    subprocess.run(cmd, check=True)


def runtime_env() -> dict[str, str]:
    """The environment of the instrumented process: the sanitizer runtimes preloaded (Python is not
    built with them), Python's allocations through malloc (so that the walker's PyMem buffers are
    checked too); leaks are not reported (the interpreter keeps its objects at exit)."""
    libs = [
        subprocess.run(["gcc", f"-print-file-name={lib}"], capture_output=True, text=True, check=True).stdout.strip()
        for lib in ("libasan.so", "libubsan.so")
    ]
    return dict(
        os.environ,
        LD_PRELOAD=" ".join(libs),
        PYTHONMALLOC="malloc",
        ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0",
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1",
        PYTHONPATH=str(ROOT),
    )


def reported(stderr: str) -> bool:
    """Whether a sanitizer reported something."""
    return any(r in stderr for r in REPORTS)


def real_pages(shared: pathlib.Path = SHARED) -> list[tuple[str, str]]:
    """(URL, decoded HTML) of the real pages: the peer benchmark's heavy pages, every HTML record of
    the shared corpus's WARC files and the ScrapingHub benchmark's pages (those present)."""
    from lib.html.charset import decode_html
    from lib.warc.http import HttpError, parse_response
    from lib.warc.records import BadRecord, iter_records

    docs = []
    heavy = ROOT / "tests" / "data" / "heavy_pages"
    with open(heavy / "pages.tsv") as f:
        next(f)
        for line in f:
            name, url = line.split("\t")[:2]
            docs.append((url, decode_html(gzip.decompress((heavy / name).read_bytes())).text))
    for path in sorted(glob.glob(str(shared / "corpus" / "*" / "*.warc.gz"))):
        with open(path, "rb") as f:
            for rec in iter_records(f, path):
                if isinstance(rec, BadRecord) or rec.rec_type != "response" or not rec.url.startswith("http"):
                    continue
                try:
                    body = parse_response(rec.content).body
                except HttpError:
                    continue
                if b"<" in body[:4096]:
                    docs.append((rec.url, decode_html(body).text))
    for path in sorted((shared / "extraction" / "scrapinghub" / "html").glob("*.html.gz")):
        html = decode_html(gzip.decompress(path.read_bytes())).text
        docs.append((f"http://{path.name.split('.')[0]}.example/", html))
    return docs


def run_instrumented(module: pathlib.Path) -> int:
    """Inside the instrumented process: the instrumented walker as lib.html._lexwalk, every real page
    and a deep document through it; 0 when they were all read (a sanitizer ends the process first)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("lib.html._lexwalk", module)
    lexwalk = importlib.util.module_from_spec(spec)
    sys.modules["lib.html._lexwalk"] = lexwalk
    spec.loader.exec_module(lexwalk)
    from lib.html import content, walk

    if walk.WALK is not lexwalk:
        print(f"the instrumented walker is not the one in use: {walk.status()}", file=sys.stderr)
        return 2
    docs = real_pages()
    docs.append(("http://h/", "<body>" + "<div><span>w " * 10000 + "<a href=/d>d</a>" + "</span></div>" * 10000))
    texts = links = 0
    for url, html in docs:
        page = content.extract(html, url, None, True)
        texts += bool(page.text)
        links += len(page.links)
    print(f"asan_walk: {len(docs)} pages, {texts} with main text, {links} links", file=sys.stderr)
    if not (SHARED / "corpus").is_dir():
        print(f"asan_walk: no shared corpus at {SHARED}: the heavy pages only", file=sys.stderr)
    return 0 if len(docs) > 100 and links > 15000 else 3  # the walk saw real pages, not an empty list


def main(argv: list[str]) -> int:
    """Build, check the canary, run; 0 only when every page was read and nothing was reported."""
    if argv[:1] == ["--instrumented"]:
        return run_instrumented(pathlib.Path(argv[1]))
    runpy.run_path(str(ROOT / "scripts" / "gen_lexwalk_rules.py"), run_name="gen")["main"]([])
    env = runtime_env()
    with tempfile.TemporaryDirectory(prefix="asan-walk-") as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "canary.c").write_text(CANARY)
        # AddressSanitizer alone: UBSan's object-size check would report the read first
        compile_module(tmp / "canary.c", tmp / "canary.so", [], ["-fsanitize=address", "-g"])
        probe = [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import canary; canary.boom(8)"]
        r = subprocess.run([*probe, str(tmp)], env=env, capture_output=True, text=True)
        if r.returncode == 0 or "heap-buffer-overflow" not in r.stderr:
            print(f"the sanitizer is not active (canary exit {r.returncode}):\n{r.stderr[-2000:]}", file=sys.stderr)
            return 2
        module = tmp / "_lexwalk_asan.so"
        compile_module(NATIVE / "lexwalk.c", module, [NATIVE / "include"])
        cmd = [sys.executable, __file__, "--instrumented", str(module)]
        r = subprocess.run(cmd, env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True)
        sys.stderr.write(r.stderr)
        if reported(r.stderr):
            print("asan_walk: the sanitizer reported an error (above)", file=sys.stderr)
            return 1
        print(f"asan_walk: exit {r.returncode}, no sanitizer report", file=sys.stderr)
        return r.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
