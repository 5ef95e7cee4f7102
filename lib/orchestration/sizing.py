"""Nodes and walltime for a day's job, from the volume of its WARC files.

With V the day's WARC volume in GiB, r = ``gib_per_node_hour`` (measured throughput of
preprocess+index per node), h = ``target_hours`` (how long a day should take):

    nodes   = clamp(ceil(V / (r * h)), min_nodes, max_nodes) + extra_nodes
    minutes = clamp(ceil(overhead_minutes + safety_factor * 60 * V / (r * work_nodes)),
                    min_minutes, max_minutes)

where work_nodes = nodes - extra_nodes (Magpie's rank 0 runs only the Spark master, so
``extra_nodes: 1`` there). The walltime is a limit, not a reservation: a generous safety
factor costs little, a short one kills a day's run.

With a cap of C archives read from S3 at once by the job (``s3.max_connections_per_job``)
and K cores per node (``sizing.cores_per_node``), only C / K nodes' worth of cores read at a
time: work_nodes is at most ceil(C / K), and the walltime is computed for C / K nodes when
that is fewer, since the cap, not the nodes, then sets the pace.
"""

from __future__ import annotations

import math
from typing import Any

GIB = 1 << 30


def size_job(total_bytes: int, files: int, sizing: dict[str, Any], s3_cap: int | None = None) -> dict[str, Any]:
    """``{"nodes", "minutes", "time"}`` (and ``"s3_limited": True`` when the cap sets the pace) for
    ``total_bytes`` of input in ``files``
    files, under ``s3_cap`` concurrent S3 reads per job (module doc)."""
    if files <= 0:
        raise ValueError("no input files: nothing to size")
    gib = total_bytes / GIB
    rate = float(sizing["gib_per_node_hour"])
    if rate <= 0:
        raise ValueError("sizing.gib_per_node_hour must be positive")
    want = math.ceil(gib / (rate * float(sizing["target_hours"])))
    # never more nodes than files: a file is the smallest unit of work
    work_nodes = max(int(sizing["min_nodes"]), min(want, int(sizing["max_nodes"]), files))
    work_nodes = max(work_nodes, 1)
    pace = float(work_nodes)
    cores = sizing.get("cores_per_node")
    limited = False
    if s3_cap and cores:
        s3_nodes = s3_cap / float(cores)  # nodes whose cores the cap keeps reading
        if s3_nodes < work_nodes:
            limited = True
            work_nodes = max(int(sizing["min_nodes"]), math.ceil(s3_nodes), 1)
            pace = min(float(work_nodes), s3_nodes)
    minutes = math.ceil(float(sizing["overhead_minutes"]) + float(sizing["safety_factor"]) * 60 * gib / (rate * pace))
    minutes = max(int(sizing["min_minutes"]), min(minutes, int(sizing["max_minutes"])))
    out: dict[str, Any] = {
        "nodes": work_nodes + int(sizing["extra_nodes"]),
        "minutes": minutes,
        "time": slurm_time(minutes),
    }
    if limited:
        out["s3_limited"] = True
    return out


def slurm_time(minutes: int) -> str:
    """``D-HH:MM:SS`` for sbatch --time."""
    d, rest = divmod(int(minutes), 24 * 60)
    h, m = divmod(rest, 60)
    return f"{d}-{h:02d}:{m:02d}:00"
