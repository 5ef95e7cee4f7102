"""Benchmarks, each run from the checkout root as ``python -m benchmarks.bench_xxx`` (docs/benchmarks.md).

What the scripts share: ``common`` (machine, load, timing, result files), ``report`` (docs/benchmarks.md
generated from ``results/``), ``proctree`` (CPU and peak RSS of a process tree), ``index_peer`` and
``index_days`` (the index benchmarks' runs of ours and Anserini, and their days); the checkout, the work
folder and a job's command line come from :mod:`devtools.jobcmd`, and the data they build (real-shaped
days, heavy pages, cut corpora, load) from ``devtools/``, which the tests share.
"""

from devtools.jobcmd import ROOT, WORK, job_cmd  # noqa: F401  (re-exported: every script uses them)
