"""Tasks planned by bytes (lib.preprocess.plan), held against Spark's rules for files: every
archive in exactly one task, the same listing gives the same tasks, no task over the limit
unless one file alone, a small day still fills the task slots, and the tasks are balanced over
the slots (not Spark's next fit, which left a slot idle)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from lib.preprocess.plan import MIN_RANGE_BYTES, Piece, pack, plan, task_name
from lib.runtime.packing import split_bytes

MIB = 1 << 20
SIZES = st.integers(min_value=0, max_value=400 * MIB)
LISTING = st.lists(
    st.tuples(st.text("abcdefgh/._-0123456789", min_size=1, max_size=12), SIZES), max_size=60, unique_by=lambda f: f[0]
)
KNOBS = dict(task_bytes=st.integers(1, 256 * MIB), open_cost=st.integers(0, 8 * MIB), slots=st.integers(1, 16))


@settings(max_examples=300, deadline=None)
@given(files=LISTING, **KNOBS)
def test_every_file_in_exactly_one_task_within_the_limit(files, task_bytes, open_cost, slots):
    tasks = pack(files, task_bytes, open_cost, slots)
    assert sorted(i for t in tasks for i in t) == list(range(len(files)))
    assert all(tasks)  # no empty task
    limit = split_bytes([s for _, s in files], task_bytes, open_cost, slots)
    for t in tasks:
        assert len(t) == 1 or sum(files[i][1] + open_cost for i in t) <= limit, (t, limit)
        assert [files[i][0] for i in t] == sorted(files[i][0] for i in t)  # pages go out in archive-name order


@settings(max_examples=200, deadline=None)
@given(files=LISTING, rnd=st.randoms(use_true_random=False), **KNOBS)
def test_the_same_listing_in_any_order_gives_the_same_tasks(files, rnd, task_bytes, open_cost, slots):
    shuffled = list(files)
    rnd.shuffle(shuffled)
    names = lambda fs, tasks: [[fs[i][0] for i in t] for t in tasks]  # noqa: E731
    assert names(files, pack(files, task_bytes, open_cost, slots)) == names(
        shuffled, pack(shuffled, task_bytes, open_cost, slots)
    )


@settings(max_examples=200, deadline=None)
@given(files=LISTING, **KNOBS)
def test_a_small_day_fills_the_slots_and_big_tasks_go_first(files, task_bytes, open_cost, slots):
    tasks = pack(files, task_bytes, open_cost, slots)
    costs = [s + open_cost for _, s in files]
    limit = split_bytes([s for _, s in files], task_bytes, open_cost, slots)
    if limit == sum(costs) // slots and all(c <= limit for c in costs):  # a small day, no file bigger than a share
        assert len(tasks) >= slots
    biggest = [max(files[i][1] for i in t) for t in tasks]
    assert biggest == sorted(biggest, reverse=True)  # the task of the biggest file starts first


def test_a_real_shaped_day_packs_like_spark():
    """732 archives of 10-200 KB and 4 bigger files, 2 slots, Spark's defaults: the small day is
    cut for 2 slots, each task of at most half the day's cost; the 300 MB file is alone."""
    rnd = random.Random(7)
    files = [(f"col/{i:04d}.warc.gz", rnd.randint(10_000, 200_000)) for i in range(732)]
    files += [("big.warc.gz", 300 * MIB), ("a.arc.gz", 2 * MIB), ("b.warc", 57_000), ("c.warc", 47_000)]
    total = sum(s + 4 * MIB for _, s in files)
    spark = dict(task_bytes=128 * MIB, open_cost=4 * MIB)
    assert split_bytes([s for _, s in files], **spark) == 128 * MIB  # a big day: the full task size
    tasks = pack(files, **spark)
    assert [files[i][0] for i in tasks[0]] == ["big.warc.gz"]
    assert all(len(t) <= 32 for t in tasks)  # 128 MiB / (4 MiB + a little): the open cost caps a task's files
    fewest = 1 + -(-sum(s + 4 * MIB for _, s in files[:732] + files[733:]) // (128 * MIB))
    assert fewest <= len(tasks) <= fewest + 2, len(tasks)  # balanced, not many more tasks than the bytes need
    small = files[:40]
    two = pack(small, slots=2, **spark)
    per_slot = -(-sum(s + 4 * MIB for _, s in small) // 2)
    assert len(two) % 2 == 0 and all(sum(small[i][1] + 4 * MIB for i in t) <= per_slot for t in two)
    costs = [sum(small[i][1] + 4 * MIB for i in t) for t in two]
    assert max(costs) - min(costs) <= 200_000 + 4 * MIB  # balanced: within one file's cost
    assert total > 128 * MIB


def test_tasks_are_balanced_over_the_slots():
    """8 archives of 36 MB and 2 slots: next fit (Spark's rule) made 3 tasks of 3, 3 and 2 files, one
    slot working alone for a third of the run; balanced, 4 tasks of 2."""
    files = [(f"crawl/{i}.warc.gz", 36 * MIB) for i in range(8)]
    assert sorted(len(t) for t in pack(files, slots=2)) == [2, 2, 2, 2]
    files = [(f"crawl/{i}.warc.gz", 73 * MIB) for i in range(8)]
    assert [len(t) for t in pack(files, slots=2)] == [1] * 8


def test_task_names_depend_on_the_set_of_archives_only():
    assert task_name(["b", "a"]) == task_name(["a", "b"]) != task_name(["a"]) != task_name(["a", "b", "c"])
    assert len(task_name(["a"])) == 20 and task_name(["a\nb"]) != task_name(["a", "b"])


NAMES = st.sampled_from(["a.warc.gz", "B.WARC.GZ", "c.arc.gz", "d.warc", "e.warc.zst", "f.warc.lz4", "g/h.warc.gz"])


@settings(max_examples=300, deadline=None)
@given(files=st.lists(st.tuples(NAMES, SIZES), max_size=7, unique_by=lambda f: f[0]), **KNOBS)
def test_only_big_warc_gz_files_are_split_into_ranges_that_tile_them(files, task_bytes, open_cost, slots):
    files = sorted(files)
    pieces, tasks = plan(files, task_bytes, open_cost, slots)
    limit = max(MIN_RANGE_BYTES, split_bytes([s for _, s in files], task_bytes, open_cost, slots))
    assert sorted(i for t in tasks for i in t) == list(range(len(pieces)))
    for uri, size in files:
        mine = [p for p in pieces if p.uri == uri]
        if not uri.lower().endswith(".warc.gz") or size <= limit:
            assert mine == [Piece(uri, size)]
            continue
        # contiguous ranges from 0 to the end, none over the limit, all but the last of one size;
        # as few as the limit needs, or that rounded up to a multiple of the slots (never so many
        # that a range falls under half the limit)
        fewest = -(-size // limit)
        rounded = -(-fewest // slots) * slots
        assert len(mine) in (fewest, rounded) and mine[0].start == 0 and mine[-1].end is None
        halves = size // rounded >= max(limit // 2, MIN_RANGE_BYTES)
        assert len(mine) == (rounded if halves else fewest)
        assert all(a.end == b.start for a, b in zip(mine, mine[1:]))
        assert sum(p.length for p in mine) == size and max(p.length for p in mine) <= limit
        assert len({p.length for p in mine[:-1]}) <= 1
    for t in tasks:  # within a task, a file's ranges in offset order
        assert [(pieces[i].uri, pieces[i].start) for i in t] == sorted((pieces[i].uri, pieces[i].start) for i in t)


def test_a_day_of_one_large_archive_keeps_every_slot_busy():
    pieces, tasks = plan([("day.warc.gz", 668 * MIB)], 128 * MIB, 512 << 10, slots=2)
    assert len(pieces) == 6 and len(tasks) == 6 and all(len(t) == 1 for t in tasks)
    assert plan([("day.arc.gz", 668 * MIB)], 128 * MIB, 512 << 10, slots=2)[0] == [Piece("day.arc.gz", 668 * MIB)]
    small = plan([("day.warc.gz", 668 * MIB)], 128 * MIB, 512 << 10, slots=2, split_limit=1 << 40)
    assert small == ([Piece("day.warc.gz", 668 * MIB)], [[0]])


def _slot_bytes(pieces: list[Piece], tasks: list[list[int]], slots: int) -> list[int]:
    """Bytes each slot reads when the tasks, in plan order, go to the first slot free (Spark's
    local scheduler, tasks taking time in proportion to their bytes)."""
    loads = [0] * slots
    for t in tasks:
        loads[loads.index(min(loads))] += sum(pieces[i].length for i in t)
    return loads


def test_a_day_dominated_by_one_archive_ends_its_slots_together():
    """The real-shaped day's large cut: one archive of 667,884,038 bytes and one of 2,498,330.
    At 128 MiB a range it made 5 ranges, so one of 2 slots read 3 and the other 2 (one slot idle
    for 7.4 s of a 24.7 s run); rounded to a multiple of the slots, 6 ranges of 111 MB."""
    files = [("crawl/000000-0.warc.gz", 667_884_038), ("crawl/000100-1.warc.gz", 2_498_330)]
    pieces, tasks = plan(files, 128 * MIB, 512 << 10, slots=2)
    big = [p for p in pieces if p.uri == files[0][0]]
    assert len(big) == 6 and max(p.length for p in big) <= 128 * MIB
    loads = _slot_bytes(pieces, tasks, 2)
    assert max(loads) - min(loads) <= files[1][1]  # apart by the small file at most
    # 4 slots: 8 ranges of 83 MB. On 64 slots with a big day (the limit stays 128 MiB), 64 ranges of
    # a 200 MiB archive would be 3 MiB each: it stays 2
    assert len([p for p in plan(files, 128 * MIB, 512 << 10, slots=4)[0] if p.uri == files[0][0]]) == 8
    day = [(f"crawl/{i:03d}.warc.gz", 1 << 30) for i in range(100)] + [("crawl/zz.warc.gz", 200 * MIB)]
    assert len([p for p in plan(day, 128 * MIB, 512 << 10, slots=64)[0] if p.uri == "crawl/zz.warc.gz"]) == 2


def test_task_names_tell_ranges_apart():
    whole = task_name(["a.warc.gz"])
    first, second = task_name([("a.warc.gz", 0, 100)]), task_name([("a.warc.gz", 100, None)])
    assert len({whole, first, second}) == 3
    assert task_name([("a.warc.gz", 100, None), "b.warc.gz"]) == task_name(["b.warc.gz", ("a.warc.gz", 100, None)])
    assert task_name([("a.warc.gz", 100, None), "b.warc.gz"]) != task_name([("a.warc.gz", 100, 200), "b.warc.gz"])
