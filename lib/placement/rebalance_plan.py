"""The rebalance plan file, ``CONFIG.rebalance``: a JSON header line, then one move a line.

Slices read it (while it exists, a get looks on both the old and the new slice) and
:mod:`lib.placement.rebalance` writes and follows it; it is the rebalance's only state.
"""

from __future__ import annotations

import datetime as _dt
import json

from lib.placement.errors import RebalanceError
from lib.store import storage

PLAN_FORMAT = "swap-rebalance/1"


def write_plan(path: str, frm: int, to: int, roots: list[str], moves: list[tuple[str, int, int]]) -> None:
    """Write the plan for ``frm`` -> ``to`` slices over ``roots``: ``(path, from slice, to slice)`` moves."""
    header = {
        "format": PLAN_FORMAT,
        "from": frm,
        "to": to,
        "roots": roots,
        "moves": len(moves),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    lines = [json.dumps(header)] + [json.dumps(m, ensure_ascii=False) for m in moves]
    storage.write_bytes(path, ("\n".join(lines) + "\n").encode("utf-8"))  # atomic: temp + rename


def read_plan_header(path: str) -> dict:
    """The plan's header (``from``, ``to``, ``roots``, ``moves``, ``created``)."""
    with open(path, encoding="utf-8") as f:
        header = json.loads(f.readline())
    if header.get("format") != PLAN_FORMAT:
        raise RebalanceError(f"{path}: not a rebalance plan ({PLAN_FORMAT})")
    return header


def read_plan(path: str) -> tuple[dict, list[tuple[str, int, int]]]:
    """The plan's header and its moves; RebalanceError if the file lost moves."""
    header = read_plan_header(path)
    with open(path, encoding="utf-8") as f:
        f.readline()
        moves = [tuple(json.loads(line)) for line in f if line.strip()]
    if len(moves) != header["moves"]:
        raise RebalanceError(f"{path}: plan lists {len(moves)} moves, header says {header['moves']}")
    return header, moves
