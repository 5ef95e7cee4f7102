"""How the index and graph map stages plan their tasks by bytes (no Spark): runs of
consecutive files, every file in one run, the docid order kept."""

from __future__ import annotations

from lib.index import graph, pipeline


def _files(tmp_path, sizes):
    out = []
    for i, n in enumerate(sizes):
        p = tmp_path / f"language=eng/part-{i:05d}.parquet"
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(b"x" * n)
        out.append(str(p))
    return out


def test_index_runs_are_consecutive_files_biggest_first(tmp_path):
    sizes = [3_000] * 500 + [2_000_000] + [10] * 100
    files = [(p, "eng", n) for p, n in zip(_files(tmp_path, sizes), sizes)]
    runs = pipeline.map_runs(files, slots=2)
    assert len(runs) <= 2 * pipeline.RUNS_PER_SLOT + 1  # 601 files, a handful of tasks
    starts = sorted(t for t, _ in runs)
    flat = [p for t in starts for p, _ in dict(runs)[t]]
    assert flat == [f[0] for f in files]  # every file once, in path (docid) order
    for t, members in runs:
        assert members[0][0] == files[t][0]  # a run is reported under its first file
    weights = [sum(files[[f[0] for f in files].index(p)][2] for p, _ in m) for _, m in runs]
    assert weights == sorted(weights, reverse=True)


def test_graph_runs_give_the_big_run_the_idle_cores(tmp_path):
    files = _files(tmp_path, [20_000_000] + [5_000] * 40)
    runs = graph.map_runs(files, slots=4)
    assert runs[0] == (0, files[:1], 4)  # one file holds almost all bytes: all four cores
    assert all(threads == 1 for _, _, threads in runs[1:])
    assert sorted(f for _, fs, _ in runs for f in fs) == sorted(files)
    even = graph.map_runs(_files(tmp_path, [10_000] * 8), slots=2)
    assert [threads for _, _, threads in even] == [1] * len(even) and len(even) == 4
