"""lib/runtime/packing.py: tasks planned by bytes, the way Spark's file sources plan them."""

from __future__ import annotations

import random

from lib.runtime.packing import pack_in_order, split_bytes


def test_split_bytes_is_sparks_max_split_bytes():
    mb = 1 << 20
    # a big day: the task limit; a small one: its cost spread over the slots, never below one open
    assert split_bytes([300 * mb] * 10, 128 * mb, 4 * mb, slots=2) == 128 * mb
    assert split_bytes([10 * mb] * 4, 128 * mb, 4 * mb, slots=2) == 28 * mb
    assert split_bytes([1] * 3, 128 * mb, 4 * mb, slots=8) == 4 * mb
    assert split_bytes([], 128 * mb, 4 * mb, slots=2) == 4 * mb


def test_runs_cover_every_file_once_in_order_within_the_limit():
    rnd = random.Random(7)
    for _ in range(200):
        sizes = [rnd.choice([0, 1, 50, 5_000, 70_000, 2_000_000]) for _ in range(rnd.randint(0, 60))]
        task, cost, slots = rnd.choice([100_000, 1 << 20]), rnd.choice([0, 1000, 64 << 10]), rnd.randint(1, 8)
        runs = pack_in_order(sizes, task, cost, slots)
        assert [i for r in runs for i in r] == list(range(len(sizes)))  # every file once, in order
        assert all(r.step == 1 and len(r) for r in runs)
        limit = split_bytes(sizes, task, cost, slots)
        for r in runs:
            used = sum(sizes[i] + cost for i in r)
            assert used <= limit or len(r) == 1  # a file over the limit alone, never split
        # a run ends only when the next file would not fit
        for a, b in zip(runs, runs[1:]):
            assert sum(sizes[i] + cost for i in a) + sizes[b.start] + cost > limit
        assert pack_in_order(sizes, task, cost, slots) == runs  # deterministic


def test_many_small_files_share_few_tasks_and_big_ones_stay_alone():
    small = [20_000] * 8_000  # a day cut into 8,000 files of 20 KB
    runs = pack_in_order(small, 128 << 20, 64 << 10, slots=6)
    assert len(runs) <= 7 and all(len(r) == 1333 for r in runs[:6])  # ceil of a sixth; the rest in a 7th
    big = [500 << 20, 10, 10, 600 << 20]
    assert pack_in_order(big, 128 << 20, 64 << 10, slots=2) == [range(0, 1), range(1, 3), range(3, 4)]
