"""Benchmarks, each run from the checkout root as ``python -m benchmarks.bench_xxx`` (docs/benchmarks.md)."""

import os
import pathlib

#: Where the scripts build their inputs and keep their outputs: benchmarks/work, or the folder
#: in $DAILYSLICE_BENCH_WORK (benchmarks/smoke.py's small runs go there, so that no full-size run
#: reuses what they built: several scripts keep a built day or index by folder name only).
WORK = pathlib.Path(os.environ.get("DAILYSLICE_BENCH_WORK") or pathlib.Path(__file__).resolve().parent / "work")
