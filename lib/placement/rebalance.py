"""Rebalance a collection from n to m slices: plan first, then copy -> verify -> delete.

Doubling (m = 2n) moves a file only from slice i to slice i + n (``h mod 2n`` is ``h mod n``
or ``h mod n + n``), about half of them; halving moves everything on slice i + n to slice
i. Any other m works too but moves most files (as the SWAP paper, Smorul and JaJa, notes).

Crash safety: the plan (every move, written atomically beside the config before anything
moves) is the only state. Each move is idempotent given the slices' contents: a source
that is still there is copied (unless an identical copy is already at the destination),
the copy is compared byte for byte (MD5 of both), and only then the source is deleted; a
source that is gone must have its destination. So a crash after any step is finished by
running the same rebalance again: every file ends up exactly once, on its new slice,
with its bytes. The config's ``slices`` is rewritten after the last move and the plan is
removed last; while the plan exists, puts are refused and gets look on both slices.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable

from lib.placement import config as _config
from lib.placement.backends import FILE
from lib.placement.errors import RebalanceError
from lib.placement.rebalance_plan import read_plan, write_plan
from lib.placement.swap import Collection, locate

#: Called after every step: ``hook(step, index)``, step in plan/copy/verify/delete/config/done.
Hook = Callable[[str, int], None]


def plan_moves(coll: Collection, to: int) -> list[tuple[str, int, int]]:
    """``(path, from slice, to slice)`` for every file not on its slice for ``to`` slices."""
    if to < 1 or to > len(coll.roots):
        raise RebalanceError(f"cannot rebalance to {to} slices: {len(coll.roots)} roots are configured (add roots)")
    return [(rel, s, locate(rel, to)) for rel, _, s in coll.ls() if locate(rel, to) != s]


def _move(coll: Collection, k: int, rel: str, src: int, dst: int, hook: Hook) -> str:
    """One idempotent move; returns 'moved', 'done' (already moved) or 'lost'."""
    a, b = coll.roots[src], coll.roots[dst]
    if a.kind(rel) != FILE:
        return "done" if b.kind(rel) == FILE else "lost"
    want = a.digest(rel)
    if b.kind(rel) != FILE or b.digest(rel) != want:
        b.copy_from(a, rel)
        hook("copy", k)
    if b.digest(rel) != want:
        raise RebalanceError(f"copy of {rel!r} from slice {src} to slice {dst} differs from the original")
    hook("verify", k)
    a.delete(rel)
    hook("delete", k)
    return "moved"


def _run_moves(coll: Collection, moves: list[tuple[str, int, int]], hook: Hook, workers: int) -> list[str]:
    if workers <= 1:
        return [_move(coll, k, rel, src, dst, hook) for k, (rel, src, dst) in enumerate(moves)]
    # moves touch distinct files, so they are independent; the first failure stops the rest
    with ThreadPoolExecutor(workers) as ex:
        futures = [ex.submit(_move, coll, k, rel, src, dst, hook) for k, (rel, src, dst) in enumerate(moves)]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def rebalance(
    config_path: str, to: int, add_roots: Iterable[str] = (), hook: Hook | None = None, workers: int = 1
) -> dict:
    """Rebalance the collection of ``config_path`` to ``to`` slices (or finish the one in
    progress). ``add_roots`` are appended to the config's roots first (for a doubling);
    ``workers`` moves run in parallel threads (worth it for S3 roots)."""
    hook = hook or (lambda step, k: None)
    cfg = _config.load(config_path)
    plan_path = cfg.plan_path
    assert plan_path
    resumed = os.path.exists(plan_path)
    if resumed:
        header, moves = read_plan(plan_path)
        if header["to"] != to:
            raise RebalanceError(
                f"a rebalance from {header['from']} to {header['to']} slices is in progress ({plan_path}): "
                f"finish it first (rebalance --to {header['to']})"
            )
        if cfg.roots[: len(header["roots"])] != header["roots"]:
            raise RebalanceError(f"{config_path}: roots changed since the plan {plan_path} was made")
    else:
        new = [r for r in add_roots if r not in cfg.roots]
        if new:
            cfg.roots += new
            _config.save(cfg)
            cfg = _config.load(config_path)
        coll = Collection(cfg)
        rep = coll.verify()
        if rep.duplicates or rep.collisions:
            raise RebalanceError("fix the collection before rebalancing: " + "; ".join(rep.problems()[:5]))
        moves = plan_moves(coll, to)
        header = {
            "from": cfg.slices,
            "to": to,
            "roots": cfg.roots[: max(cfg.slices, to, *(s + 1 for _, s, _ in moves))],
        }
        write_plan(plan_path, header["from"], to, header["roots"], moves)
        hook("plan", 0)
    coll = Collection(cfg)
    results = _run_moves(coll, moves, hook, workers)
    counts = {"moved": 0, "done": 0, "lost": 0}
    for r in results:
        counts[r] += 1
    lost = [m[0] for m, r in zip(moves, results) if r == "lost"]
    if lost:
        raise RebalanceError(f"{len(lost)} planned files are on neither their old nor new slice, e.g. {lost[:3]}")
    cfg.slices = to
    _config.save(cfg)
    hook("config", 0)
    rep = Collection(_config.load(config_path)).verify()
    if not rep.ok:
        raise RebalanceError("after the moves the collection does not verify: " + "; ".join(rep.problems()[:5]))
    os.remove(plan_path)
    hook("done", 0)
    return {
        "from": header["from"],
        "to": to,
        "planned": len(moves),
        "moved": counts["moved"],
        "already_moved": counts["done"],
        "files": rep.files,
        "resumed": resumed,
    }
