"""Key-space partitions by MD5 (as Nutch's distributed WebDB: k writers, each owning one range of the MD5 key space).

Partition ``p`` of ``k`` owns the MD5 values ``[p * 2^128 / k, (p + 1) * 2^128 / k)``:
for ``k`` a power of two that is exactly "the first log2(k) bits of MD5(key)"; for other
``k`` the split points are ``ceil(p * 2^128 / k)``, so every partition owns a contiguous
range whose size differs from the others' by at most one value.

Because the ranges are contiguous and ordered, sorting keys by MD5 value and cutting at
the split points gives the same partitions (Spark: a range partitioner on the hash), and
going from ``k`` to ``2k`` partitions splits each range in two at its midpoint. See
docs/placement.md for the split points of small ``k``.
"""

from __future__ import annotations

import hashlib

BITS = 128
SPACE = 1 << BITS


def md5_int(key: str) -> int:
    """MD5 of the UTF-8 key as a big-endian 128-bit integer."""
    return int.from_bytes(hashlib.md5(key.encode("utf-8")).digest(), "big")


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")


def partition_of(key: str, k: int) -> int:
    """Partition (0..k-1) of ``key`` among ``k`` key-space ranges."""
    _check_k(k)
    return (md5_int(key) * k) >> BITS


def split_points(k: int) -> list[int]:
    """The lowest MD5 value owned by each of the ``k`` partitions."""
    _check_k(k)
    return [-(-p * SPACE // k) for p in range(k)]


def partition_range(p: int, k: int) -> tuple[int, int]:
    """``[lo, hi)``: the MD5 values owned by partition ``p`` of ``k``."""
    _check_k(k)
    if not 0 <= p < k:
        raise ValueError(f"partition {p} out of range for k={k}")
    lo = -(-p * SPACE // k)
    hi = -(-(p + 1) * SPACE // k)
    return lo, hi


def prefix_bits(k: int) -> int | None:
    """``log2(k)`` when ``k`` is a power of two (the partition is then the first that many
    bits of the hash), else ``None``."""
    _check_k(k)
    return k.bit_length() - 1 if k & (k - 1) == 0 else None


def split_points_hex(k: int) -> list[str]:
    """Split points as 32-digit hex strings (how they are listed in the docs)."""
    return [f"{s:032x}" for s in split_points(k)]
