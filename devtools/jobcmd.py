"""The start of a job's command line, ``python jobs/{job}.py --input --output --master``: the benchmarks
and the real-shaped days (:mod:`devtools.realday`) run the jobs this way."""

import os
import pathlib
import sys

#: the checkout the scripts run from
ROOT = pathlib.Path(__file__).resolve().parents[1]

#: Where the scripts build their inputs and keep their outputs: benchmarks/work, or the folder
#: in $DAILYSLICE_BENCH_WORK (benchmarks/smoke.py's small runs go there, so that no full-size run
#: reuses what they built: several scripts keep a built day or index by folder name only).
WORK = pathlib.Path(os.environ.get("DAILYSLICE_BENCH_WORK") or ROOT / "benchmarks" / "work")


def job_cmd(job: str, inp: object, out: object, cores: object, root: object = ROOT) -> list[str]:
    """The start of ``jobs/{job}.py``'s command line: ``inp`` -> ``out`` on ``local[cores]`` (options follow);
    ``root``: the checkout whose job runs (this one by default)."""
    return [
        sys.executable,
        str(pathlib.Path(root) / "jobs" / f"{job}.py"),
        "--input",
        str(inp),
        "--output",
        str(out),
        "--master",
        f"local[{cores}]",
    ]
