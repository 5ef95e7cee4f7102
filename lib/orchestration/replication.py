"""Replication per folder: which data centers hold a copy of each kind of folder (``datacenters.yaml``).

::

    replication:
      warc: own                   # the default: only the data center that made it
      preprocessed: [dc-a]        # every data center's preprocessed days are staged to dc-a's target
      index: all                  # to every data center's target
      catalogue: [dc-a, dc-b]

Kinds (:data:`FOLDER_KINDS`): the dated ``warc``, ``preprocessed``, ``index``, ``catalogue`` and the
undated ``urldb``, ``shared/auxiliary``, ``public``, ``community``. A rule is ``own``, ``all``, one data
center's name or a list of names; a kind without a rule is ``own``, which is what staging did before.
A name that is not a data center of the file, an unknown kind or an empty list is a
:class:`ConfigError` at load, naming the rule.

Where a copy lives: in the holder's staging target (``staging`` of its config), under the usual
layout (``KIND/YYYY-MM/DD``, ``urldb/``, ...) when the holder made it, else under
``_replicas/<producer>/`` of that target (:func:`holder_spec`), so copies of different data
centers' days never meet. The nightly ``stage`` task stages each output to every holder
(:func:`lib.orchestration.stage_outputs.stage_replicated`); the ``exchange`` task reads a partner's links
from the copy it holds of the partner's index (:func:`exchange_partners`); ``check-days
--datacenters`` compares the copies (:mod:`lib.orchestration.replicas`).
"""

from __future__ import annotations

import copy
from typing import Any

from lib.errors import ConfigError

DATED_KINDS = ("warc", "preprocessed", "index", "catalogue")
FOLDER_KINDS = (*DATED_KINDS, "urldb", "shared/auxiliary", "public", "community")
OWN = "own"
ALL = "all"
REPLICAS = "_replicas"


def parse_rules(raw: Any, names: list[str], path: str) -> dict[str, list[str] | str]:
    """``{kind: "own" | [data center, ...]}`` for every kind of :data:`FOLDER_KINDS` (``all`` expanded)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: replication must map folder kinds to data centers, got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(FOLDER_KINDS))
    if unknown:
        raise ConfigError(
            f"{path}: replication: unknown folder kind(s) {', '.join(map(repr, unknown))}"
            f" (one of {', '.join(FOLDER_KINDS)})"
        )
    rules: dict[str, list[str] | str] = {}
    for kind in FOLDER_KINDS:
        rule = raw.get(kind, OWN)
        if rule == OWN:
            rules[kind] = OWN
            continue
        if rule == ALL:
            rules[kind] = list(names)
            continue
        dcs = [rule] if isinstance(rule, str) else rule
        if not isinstance(dcs, list) or not dcs or not all(isinstance(d, str) for d in dcs):
            raise ConfigError(
                f"{path}: replication.{kind}: give 'own', 'all', a data center or a non-empty list of them,"
                f" got {rule!r}"
            )
        bad = [d for d in dcs if d not in names]
        if bad:
            raise ConfigError(
                f"{path}: replication.{kind}: unknown data center(s) {', '.join(map(repr, bad))}"
                f" (known: {', '.join(names)})"
            )
        if len(set(dcs)) != len(dcs):
            raise ConfigError(f"{path}: replication.{kind}: a data center is named twice in {dcs}")
        rules[kind] = list(dcs)
    return rules


def holders(rules: dict[str, Any], kind: str, producer: str) -> list[str]:
    """The data centers holding a copy of ``producer``'s folders of ``kind``."""
    rule = rules.get(kind, OWN)
    return [producer] if rule == OWN else list(rule)


def replica_spec(spec: dict[str, Any], producer: str) -> dict[str, Any]:
    """A staging spec rooted at ``<its root>/_replicas/<producer>``: where a copy made elsewhere lives."""
    out = copy.deepcopy(spec)
    key = {"filesystem": "path", "s3": "uri", "irods": "collection"}.get(spec.get("type", ""))
    if key is None:
        raise ConfigError(
            f"staging type {spec.get('type')!r} cannot hold another data center's copies (filesystem, s3 or irods)"
        )
    out[key] = f"{spec[key].rstrip('/')}/{REPLICAS}/{producer}"
    return out


def holder_spec(cfgs: dict[str, dict[str, Any]], holder: str, producer: str) -> dict[str, Any]:
    """The staging spec where ``holder`` keeps ``producer``'s folders."""
    spec = cfgs[holder]["staging"]
    return spec if holder == producer else replica_spec(spec, producer)


def attach(cfgs: dict[str, dict[str, Any]], rules: dict[str, Any], path: str) -> None:
    """Give each data center's settings ``replication``: ``{kind: [{"dc": holder, "staging": spec}, ...]}``
    (its own folders' holders and where each keeps them), and ``replication_rules``. A rule that
    would put copies into a target that cannot hold them (SWAP slices) is refused here."""
    for producer, cfg in cfgs.items():
        per_kind = {}
        for kind in FOLDER_KINDS:
            try:
                per_kind[kind] = [
                    {"dc": h, "staging": holder_spec(cfgs, h, producer)} for h in holders(rules, kind, producer)
                ]
            except ConfigError as e:
                raise ConfigError(f"{path}: replication.{kind}: {e}") from None
        cfg["replication"] = per_kind
        cfg["replication_rules"] = rules
        cfg["data_centers"] = sorted(cfgs)  # who the rules can name: a partner outside them is never copied


def readable_root(spec: dict[str, Any]) -> str | None:
    """The root :mod:`lib.store.storage` reads a staging spec's files at (None: iRODS, slices)."""
    return (
        spec.get("path") if spec.get("type") == "filesystem" else spec.get("uri") if spec.get("type") == "s3" else None
    )


def exchange_partners(cfg: dict[str, Any], own: str) -> dict[str, str]:
    """The exchange's partners ``{DC: ROOT}``, each read from the copy of its index that ``own``
    holds when the ``index`` rule makes ``own`` a holder of it (and that copy is readable), else
    from the partner's own root as configured (a partner that is not a data center of the file,
    another organisation's, is never copied here)."""
    partners = dict((cfg.get("exchange") or {}).get("partners") or {})
    rules = cfg.get("replication_rules") or {}
    staging = cfg.get("staging") or {}
    for dc in partners:
        known = dc in (cfg.get("data_centers") or [])
        if known and dc != own and own in holders(rules, "index", dc) and staging.get("type") in ("filesystem", "s3"):
            root = readable_root(replica_spec(staging, dc))
            if root:
                partners[dc] = root
    return partners
