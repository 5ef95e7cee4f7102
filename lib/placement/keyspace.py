"""Key-space partitions by MD5 (seed 001: Nutch's distributed WebDB).

Partition ``p`` of ``k`` owns the MD5 values ``[p * 2^128 / k, (p + 1) * 2^128 / k)``:
for ``k`` a power of two that is exactly "the first log2(k) bits of MD5(key)"; for other
``k`` the split points are ``ceil(p * 2^128 / k)``, so every partition owns a contiguous
range whose size differs from the others' by at most one value.
"""

from __future__ import annotations

import hashlib

SPACE = 1 << 128


def md5_int(key: str) -> int:
    """MD5 of the UTF-8 key as a big-endian 128-bit integer."""
    return int.from_bytes(hashlib.md5(key.encode("utf-8")).digest(), "big")


def partition_of(key: str, k: int) -> int:
    """Partition (0..k-1) of ``key`` among ``k`` key-space ranges."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return (md5_int(key) * k) >> 128


def split_points(k: int) -> list[int]:
    """The lowest MD5 value owned by each of the ``k`` partitions."""
    return [-(-p * SPACE // k) for p in range(k)]
