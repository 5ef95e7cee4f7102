"""Wall time per named step of a run: where a day's time went."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator


class Steps:
    """Wall time per named step of a run, in seconds (ms precision).

    ``with steps("map"): ...`` records the block's duration under ``"map"`` once the block
    finishes (a step that raised is not recorded: the run failed and says why instead).
    Steps may run in other threads (the index's graph beside its map). ``seconds`` is the
    dict the jobs report in their summaries.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.seconds[name] = round(time.perf_counter() - start, 3)
