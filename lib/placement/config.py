"""The slices config: where the slices of one collection live.

JSON (``*.json``) or TOML (any other name)::

    {"roots": ["/srv/disk0/coll", "s3://bucket/coll/1"], "slices": 2}

    roots = ["/srv/disk0/coll", "s3://bucket/coll/1"]
    slices = 2

``roots[i]`` is slice ``i``. ``slices`` (optional, default ``len(roots)``) is how many are in
use; roots past it are spares that a doubling fills (and a halving empties). Relative local
roots are relative to the config file's folder. Other keys are kept when the file is
rewritten (a rebalance rewrites ``slices``). A rebalance keeps its plan beside the config,
in ``CONFIG.rebalance``; while it exists, the collection is being rebalanced.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field
from typing import Any

from lib.errors import ConfigError
from lib.store import storage


@dataclass
class SliceConfig:
    roots: list[str]
    slices: int
    path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.roots:
            raise ConfigError(f"{self.path or 'config'}: 'roots' must list at least one slice root")
        if not 1 <= self.slices <= len(self.roots):
            raise ConfigError(
                f"{self.path or 'config'}: slices={self.slices} must be between 1 and the number of roots "
                f"({len(self.roots)})"
            )
        if len(set(self.roots)) != len(self.roots):
            raise ConfigError(f"{self.path or 'config'}: the same root is listed twice")

    @property
    def plan_path(self) -> str | None:
        """Where a rebalance keeps its plan (beside the config file)."""
        return f"{self.path}.rebalance" if self.path else None

    def rebalancing(self) -> bool:
        path = self.plan_path
        return path is not None and os.path.exists(path)


def from_roots(roots: list[str], slices: int | None = None) -> SliceConfig:
    """An in-memory config (no file, so no rebalance)."""
    return SliceConfig(list(roots), len(roots) if slices is None else slices)


def load(path: str) -> SliceConfig:
    """Read a JSON or TOML slices config; errors name the file and the problem."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read slices config: {e.strerror}") from e
    try:
        data = json.loads(raw) if path.endswith(".json") else tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid {'JSON' if path.endswith('.json') else 'TOML'}: {e}") from e
    if not isinstance(data, dict) or not isinstance(data.get("roots"), list):
        raise ConfigError(f"{path}: needs a 'roots' list of slice roots")
    roots = data.pop("roots")
    if not all(isinstance(r, str) and r.strip() for r in roots):
        raise ConfigError(f"{path}: every root must be a non-empty string")
    base = os.path.dirname(os.path.abspath(path))
    resolved = [r if "://" in r or os.path.isabs(r) else os.path.join(base, r) for r in roots]
    slices = data.pop("slices", len(roots))
    if not isinstance(slices, int) or isinstance(slices, bool):
        raise ConfigError(f"{path}: 'slices' must be an integer")
    cfg = SliceConfig(resolved, slices, os.path.abspath(path), data)
    cfg.extra["_written_roots"] = roots  # keep relative roots relative on rewrite
    return cfg


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # JSON string escapes are valid TOML basic-string escapes
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise ConfigError(f"cannot write {type(v).__name__} values to a TOML slices config")


def save(cfg: SliceConfig) -> None:
    """Rewrite the config file atomically."""
    if not cfg.path:
        raise ConfigError("this collection has no config file to write")
    extra = {k: v for k, v in cfg.extra.items() if not k.startswith("_")}
    written = cfg.extra.get("_written_roots")
    roots = list(written) + cfg.roots[len(written) :] if written else list(cfg.roots)
    data = {"roots": roots, "slices": cfg.slices, **extra}
    if cfg.path.endswith(".json"):
        text = json.dumps(data, indent=2) + "\n"
    else:
        text = "".join(f"{k} = {_toml_value(v)}\n" for k, v in data.items())
    storage.write_bytes(cfg.path, text.encode("utf-8"))
