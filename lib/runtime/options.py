"""A job's options, declared once: a frozen dataclass whose fields carry their command-line flags.

Each field of a job's options class is an :func:`opt`: its default, its help and whatever
argparse needs beyond them (``type``, ``choices``, ``metavar``, ``action``). :func:`build_parser`
generates the command line from the class, so the flag, its default and the default its help
shows are one declaration. A new option is one field::

    docs_per_shard: int = opt(100_000, "target documents per shard", type=int)

gives ``--docs-per-shard N`` (dest ``docs_per_shard``, default 100000) whose help ends in
"(default: 100000)". ``flag="--no-graph", action="store_false"`` names a flag that differs from
the field's name; ``shown=`` replaces the rendered default where the value alone would mislead
(a default read from the environment, None standing for a path under the root);
``group=`` puts flags in one mutually exclusive group. A field without :func:`opt` has no flag.
"""

from __future__ import annotations

import argparse
import datetime as dt
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, Callable, TypeVar

from lib.runtime.result import EXIT_BUSY, EXIT_EMPTY

OptionsT = TypeVar("OptionsT", bound="JobOptions")
_CLI = "cli"  # the metadata key of a field's command-line part


@dataclass(frozen=True)
class Flag:
    """The command-line part of an options field (its ``metadata["cli"]``)."""

    help: str
    flag: str | None = None  # default: --the-field-name
    shown: str | None = None  # the default as the help shows it (default: rendered from the field)
    render: Callable[[Any], str] = str  # how the help renders the field's default
    group: str | None = None  # a mutually exclusive group, by name
    argparse: tuple[tuple[str, Any], ...] = ()  # the rest of add_argument's keywords


def opt(
    default: Any = MISSING,
    help: str = "",
    *,
    default_factory: Callable[[], Any] | Any = MISSING,
    flag: str | None = None,
    shown: str | None = None,
    render: Callable[[Any], str] = str,
    group: str | None = None,
    **argparse_kwargs: Any,
) -> Any:
    """A dataclass field that is also a command-line option (the module docstring says how)."""
    meta = {_CLI: Flag(help, flag, shown, render, group, tuple(argparse_kwargs.items()))}
    if default_factory is not MISSING:
        return field(default_factory=default_factory, metadata=meta)
    return field(default=default, metadata=meta)


def byte_text(n: int) -> str:
    """A byte count as the help shows it: ``128 MiB``, ``512 KiB``, ``0``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return str(n)


def parse_date(text: str) -> dt.date:
    """``--date``'s type: a YYYY-MM-DD day."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--date must be YYYY-MM-DD, got {text!r}") from None


def default_of(f: Field) -> Any:
    """A field's default value (its factory called)."""
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    raise TypeError(f"option {f.name} has no default")


@dataclass(frozen=True)
class JobOptions:
    """The options every job takes (the common command-line options).

    A job's own options subclass this. ``input``/``output`` may be left out when ``date`` and
    ``root`` are given (``SparkJob.resolve_io`` fills them); sequences are tuples, so an
    options object is a value: a run never changes it, :func:`dataclasses.replace` makes another.
    ``{input_kind}``/``{output_kind}`` in a help stand for the job's layout kinds.
    """

    date: dt.date | None = opt(None, "day to process, YYYY-MM-DD", type=parse_date)
    root: str | None = opt(None, "bucket root (local path, file:// or s3://bucket/prefix)")
    input: str | None = opt(None, "input folder", shown="ROOT/{input_kind}/YYYY-MM/DD")
    output: str | None = opt(None, "output folder", shown="ROOT/{output_kind}/YYYY-MM/DD")
    master: str | None = opt(None, "Spark master", shown="spark-submit's, else local[*]")
    partitions: int = opt(0, "Spark tasks (0: one per input file)", type=int)
    staging: str | None = opt(None, "local/cluster folder for output bound for S3", shown="a temp folder")
    conf: tuple[str, ...] = opt((), "extra Spark setting (repeat)", action="append", metavar="KEY=VALUE")
    summary: str | None = opt(None, "also write the run summary (JSON) to this file")
    log_level: str = opt("WARN", "Spark log level")
    exclusions: str | None = opt(
        None,
        "exclusion list (take-downs, lib.pages.exclusions) to apply: a local path or s3:// URI that must exist, "
        "or 'none'",
        shown="ROOT/_exclusions.jsonl when it exists",
        metavar="URI",
    )

    @classmethod
    def from_args(cls: type[OptionsT], args: argparse.Namespace) -> OptionsT:
        """The options of a parsed command line (lists become tuples)."""
        given = vars(args)
        values: dict[str, Any] = {
            f.name: tuple(v) if isinstance(v := given[f.name], list) else v for f in fields(cls) if f.name in given
        }
        return cls(**values)

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Every field's default, by name (what the command line's parser defaults to)."""
        return {f.name: default_of(f) for f in fields(cls)}


@dataclass(frozen=True)
class DayJobOptions(JobOptions):
    """The options of a job that checks its input day (``checks_input``): it holds a lease on
    its output and refuses an empty day unless asked."""

    wait_lock: float = opt(
        0.0,
        "wait this long for another run of the same output to finish",
        shown=f"0: refuse at once, exit {EXIT_BUSY}",
        type=float,
        metavar="SECONDS",
    )
    allow_empty: bool = opt(
        False,
        f"publish an empty output when the input day holds nothing (without it: exit {EXIT_EMPTY}, nothing published)",
        action="store_true",
    )


def help_text(f: Field, spec: Flag, kinds: dict[str, str]) -> str:
    """A flag's help: the field's text and the default it shows (none for a switch or an unset default)."""
    action = dict(spec.argparse).get("action")
    value = default_of(f)
    if spec.shown is not None:
        default = spec.shown
    elif action in ("store_true", "store_false") or value in (None, ()):
        default = None
    else:
        default = spec.render(value)
    text = spec.help if default is None else f"{spec.help} (default: {default})"
    for kind, name in kinds.items():
        text = text.replace("{" + kind + "}", name)
    return text.replace("%", "%%")  # argparse formats helps with %


def build_parser(
    options_class: type[JobOptions], prog: str, description: str = "", **kinds: str
) -> argparse.ArgumentParser:
    """The command line of ``options_class``: one flag per :func:`opt` field, in field order,
    the common ones (:class:`JobOptions`, :class:`DayJobOptions`) first; defaults are the fields'."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    common = {f.name for f in fields(DayJobOptions)}
    ordered = sorted(fields(options_class), key=lambda f: f.name not in common)  # stable: field order kept
    groups: dict[str, Any] = {}
    flagged = [f for f in ordered if _CLI in f.metadata]
    for f in flagged:
        spec = f.metadata[_CLI]
        where: Any = p
        if spec.group is not None:
            if spec.group not in groups:
                groups[spec.group] = p.add_mutually_exclusive_group()
            where = groups[spec.group]
        where.add_argument(
            spec.flag or "--" + f.name.replace("_", "-"),
            dest=f.name,
            help=help_text(f, spec, kinds),
            **dict(spec.argparse),
        )
    defaults = {f.name: default_of(f) for f in flagged}
    p.set_defaults(**{k: list(v) if isinstance(v, tuple) else v for k, v in defaults.items()})
    return p
