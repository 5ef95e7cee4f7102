"""The one exception type of lib.ciff: a violation of the CIFF format or of our writer's contract."""

from __future__ import annotations

from typing import TypedDict, Unpack

from lib.errors import DailysliceError


class Position(TypedDict, total=False):
    """Where a CiffError was found: the keyword arguments of CiffError besides the reason."""

    path: str | None
    message_index: int | None
    offset: int | None
    term: str | None
    section: str | None


class CiffError(DailysliceError, ValueError):
    """A CIFF violation; the message names where it was found (file, message index, byte offset, term).

    The position is also kept in attributes so callers (the validator, tests) can use it without
    parsing the message.
    """

    def __init__(
        self,
        reason: str,
        *,
        path: str | None = None,
        message_index: int | None = None,
        offset: int | None = None,
        term: str | None = None,
        section: str | None = None,
    ) -> None:
        self.reason = reason
        self.path = path
        self.message_index = message_index
        self.offset = offset
        self.term = term
        self.section = section
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.path is not None:
            where.append(str(self.path))
        if self.section is not None and self.message_index is not None:
            where.append(f"{self.section} #{self.message_index}")
        elif self.message_index is not None:
            where.append(f"message #{self.message_index}")
        elif self.section is not None:
            where.append(self.section)
        if self.offset is not None:
            where.append(f"byte offset {self.offset}")
        if self.term is not None:
            where.append(f"term {self.term!r}")
        return (", ".join(where) + ": " if where else "") + self.reason

    def at(self, **where: Unpack[Position]) -> "CiffError":
        """A copy with more position details filled in (fields already set are kept)."""
        return CiffError(
            self.reason,
            path=self.path if self.path is not None else where.get("path"),
            message_index=self.message_index if self.message_index is not None else where.get("message_index"),
            offset=self.offset if self.offset is not None else where.get("offset"),
            term=self.term if self.term is not None else where.get("term"),
            section=self.section if self.section is not None else where.get("section"),
        )
