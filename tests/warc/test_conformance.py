"""Differential conformance suite: every record of real archives from many producers, read by
us and by warcio/FastWARC; any disagreement not reviewed in KNOWN_DIFFERENCES fails.

The corpus is tests/data/conformance/ (see its SOURCES.md), plus the shared real-crawl samples
beside the project when present. The headline figure is emitted as a warning so that it shows
in the normal pytest summary.
"""

from __future__ import annotations

import warnings

import pytest

from tests import conformance as c

FILES = c.archive_files()


class ConformanceFigure(UserWarning):
    """Carries the suite's headline figure into pytest's warnings summary."""


@pytest.mark.parametrize("name,path", FILES, ids=[n for n, _ in FILES])
def test_file_agrees_with_reference_readers(name, path):
    result = c.compare_file(name, path)
    unexpected = result.unexpected
    assert not unexpected, f"{len(unexpected)} unreviewed difference(s):\n" + "\n".join(map(str, unexpected))


def test_conformance_figure_and_known_list():
    results = [c.compare_file(n, p) for n, p in FILES]
    text = c.figure(results)
    warnings.warn(ConformanceFigure(text), stacklevel=1)
    print(text)
    seen = [d for r in results for d in r.differences]
    names = {n for n, _ in FILES}
    stale = [k for k in c.KNOWN_DIFFERENCES
             if any(__import__("fnmatch").fnmatch(n, k[0]) for n in names)
             and not any(c.known_reason(d) == k[3] and d.kind == k[2] for d in seen)]
    assert not stale, f"KNOWN_DIFFERENCES entries that match nothing any more: {stale}\n{text}"
