"""Placement benchmark: consistent-hash balance and moved fractions per vnode count, SWAP
(MD5 mod n) doubling/halving/other-count moves, key-space balance, and a real local
rebalance (files/s).

    python -m benchmarks.bench_placement [--keys 100000] [--nodes 10]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import tempfile
import time
from collections import Counter

from benchmarks import common
from lib.pages.keyspace import md5_int, partition_of
from lib.placement.config import load
from lib.placement.consistent import ConsistentHashRing, imbalance, moved_fraction
from lib.placement.rebalance import rebalance
from lib.placement.swap import Collection, locate


def ring_rows(keys: list[str], nodes: int, vnodes_list: list[int]) -> list[dict]:
    hashes = [md5_int(k) for k in keys]
    names = [f"node{i}" for i in range(nodes)]
    rows = []
    for v in vnodes_list:
        ring = ConsistentHashRing(names, vnodes=v)
        t = time.perf_counter()
        before = [ring.lookup_hash(h) for h in hashes]
        lookup_s = time.perf_counter() - t
        load = Counter({n: 0 for n in names}) + Counter(before)
        ring.add_node(f"node{nodes}")
        added = [ring.lookup_hash(h) for h in hashes]
        only_to_new = all(a == b or b == f"node{nodes}" for a, b in zip(before, added))
        ring.remove_node(f"node{nodes}")
        ring.remove_node("node0")
        removed = [ring.lookup_hash(h) for h in hashes]
        only_from_gone = all(a == b for a, b in zip(before, removed) if a != "node0")
        rows.append(
            {
                "vnodes": v,
                "max_mean": imbalance(load),
                "min_mean": min(load.values()) * nodes / len(keys),
                "moved_add": moved_fraction(before, added),
                "moved_remove": moved_fraction(before, removed),
                "minimal_moves": only_to_new and only_from_gone,
                "lookups_per_s": len(keys) / lookup_s,
            }
        )
    return rows


def swap_rows(keys: list[str], n: int) -> list[dict]:
    def frac(a: int, b: int) -> float:
        return sum(locate(k, a) != locate(k, b) for k in keys) / len(keys)

    def balance(m: int) -> float:
        return imbalance(Counter(locate(k, m) for k in keys))

    return [
        {"change": f"{n} -> {2 * n} (double)", "moved": frac(n, 2 * n), "ideal": 0.5, "max_mean_after": balance(2 * n)},
        {"change": f"{2 * n} -> {n} (halve)", "moved": frac(2 * n, n), "ideal": 0.5, "max_mean_after": balance(n)},
        {"change": f"{n} -> {n + 1}", "moved": frac(n, n + 1), "ideal": 1 / (n + 1), "max_mean_after": balance(n + 1)},
        {"change": f"{n} -> {n - 1}", "moved": frac(n, n - 1), "ideal": 1 / n, "max_mean_after": balance(n - 1)},
    ]


def keyspace_rows(keys: list[str], ks: list[int]) -> list[dict]:
    return [{"k": k, "max_mean": imbalance(Counter(partition_of(key, k) for key in keys))} for k in ks]


def real_rebalance(files: int, size: int, n: int) -> dict:
    """Put ``files`` files on n local slices, double, halve; wall time of each step."""
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "slices.json")
        with open(cfg, "w") as f:
            json.dump({"roots": [os.path.join(d, f"s{i}") for i in range(2 * n)], "slices": n}, f)
        coll = Collection(load(cfg))
        payload = os.urandom(size)
        t = time.perf_counter()
        for i in range(files):
            coll.put_bytes(f"day/{i % 50}/file-{i}.bin", payload)
        put_s = time.perf_counter() - t
        t = time.perf_counter()
        up = rebalance(cfg, 2 * n)
        double_s = time.perf_counter() - t
        t = time.perf_counter()
        down = rebalance(cfg, n)
        halve_s = time.perf_counter() - t
    return {
        "files": files,
        "size": size,
        "put_files_per_s": files / put_s,
        "double_moved": up["moved"],
        "double_s": double_s,
        "halve_moved": down["moved"],
        "halve_s": halve_s,
    }


def report(args: argparse.Namespace) -> str:
    started, load0 = common.utc_now(), common.load()
    keys = [f"http://host{i % 997}.example.org/page/{i}" for i in range(args.keys)]
    rows = ring_rows(keys, args.nodes, [1, 10, 100, 1000])
    swap = swap_rows(keys, args.nodes)
    ksp = keyspace_rows(keys, [4, 10, 16, 100])
    real = real_rebalance(args.files, args.size, 4)
    common.write_result(
        "bench_placement",
        {
            f"{r['vnodes']} vnodes: max/mean, moved on add, lookups/s": [
                r["max_mean"],
                r["moved_add"],
                round(r["lookups_per_s"]),
            ]
            for r in rows
            if r["vnodes"] in (100, 1000)
        },
        what="consistent hashing and MD5-mod-n placement: balance, moved keys, lookups; a local rebalance",
        peer="no peer (the ideal moved fraction on add)",
        ratio={
            "moved on add / ideal (100 vnodes)": round(
                next(r["moved_add"] for r in rows if r["vnodes"] == 100) * (args.nodes + 1), 3
            )
        },
        shape={"keys": args.keys, "nodes": args.nodes, "files": args.files, "file_bytes": args.size},
        details={"ring": rows, "swap": swap, "keyspace": ksp, "rebalance": real},
        started=started,
        load_before=load0,
    )
    out = [
        "## Placement",
        "",
        f"{dt.date.today().isoformat()}, {common.machine_text()}. "
        f"`python -m benchmarks.bench_placement --keys {args.keys} "
        f"--nodes {args.nodes} --files {args.files}`; keys are {args.keys} URL-like strings.",
        "",
        f"Consistent hashing, {args.nodes} nodes (ideal moved: add {1 / (args.nodes + 1):.3f}, remove "
        f"{1 / args.nodes:.3f}):",
        "",
        "| vnodes | max/mean load | min/mean load | moved on add | moved on remove | only to/from changed node "
        "| lookups/s |",
        "|---:|---:|---:|---:|---:|:---:|---:|",
    ]
    out += [
        f"| {r['vnodes']} | {r['max_mean']:.3f} | {r['min_mean']:.3f} | {r['moved_add']:.3f} | {r['moved_remove']:.3f} "
        f"| {'yes' if r['minimal_moves'] else 'NO'} | {r['lookups_per_s']:,.0f} |"
        for r in rows
    ]
    out += [
        "",
        "SWAP `MD5(path) mod n`:",
        "",
        "| change | moved | ideal (minimum) | max/mean after |",
        "|---|---:|---:|---:|",
    ]
    out += [f"| {r['change']} | {r['moved']:.3f} | {r['ideal']:.3f} | {r['max_mean_after']:.3f} |" for r in swap]
    out += [
        "",
        "Key-space ranges (first bits of MD5): " + ", ".join(f"k={r['k']}: max/mean {r['max_mean']:.3f}" for r in ksp),
    ]
    out += [
        "",
        f"Real rebalance on local folders ({real['files']} files of {real['size']} B, 4 -> 8 -> 4 slices, "
        f"copy + MD5 verify + delete, one process): put {real['put_files_per_s']:,.0f} files/s; "
        f"doubling moved {real['double_moved']} files in {real['double_s']:.2f} s "
        f"({real['double_moved'] / real['double_s']:,.0f} files/s); halving moved {real['halve_moved']} in "
        f"{real['halve_s']:.2f} s.",
        "",
    ]
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--keys", type=int, default=100_000)
    p.add_argument("--nodes", type=int, default=10)
    p.add_argument("--files", type=int, default=2000)
    p.add_argument("--size", type=int, default=4096)
    args = p.parse_args()
    text = report(args)
    print(text)


if __name__ == "__main__":
    main()
