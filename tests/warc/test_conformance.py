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
    stale = [
        k
        for k in c.KNOWN_DIFFERENCES
        if any(__import__("fnmatch").fnmatch(n, k[0]) for n in names)
        and not any(c.known_reason(d) == k[3] and d.kind == k[2] for d in seen)
    ]
    assert not stale, f"KNOWN_DIFFERENCES entries that match nothing any more: {stale}\n{text}"


def _brotli_responses(path) -> set[str]:
    """Record ids of the responses in ``path`` whose HTTP Content-Encoding is br (read by warcio)."""
    from warcio.archiveiterator import ArchiveIterator

    out = set()
    try:
        with open(path, "rb") as f:
            for rec in ArchiveIterator(f, arc2warc=True):
                if (
                    rec.rec_type == "response"
                    and rec.http_headers is not None
                    and "br" in (rec.http_headers.get_header("Content-Encoding") or "").lower()
                ):
                    out.add(c._rid(rec.rec_headers.get_header("WARC-Record-ID")))
    except Exception:  # broken test files: compared in full by the tests above
        pass
    return out


def test_brotli_pages_kept_with_warcios_text():
    """Content-Encoding: br responses (browser crawls) are decoded with the declared brotli
    dependency: every one warcio reads as a 2xx HTML page is kept, with warcio's decoded body
    and the same text once decoded."""
    import brotli  # a declared dependency: the import itself is part of the check

    from lib.html.charset import decode_html

    checked = kept_pages = 0
    for name, path in FILES:
        ids = _brotli_responses(path)
        if not ids:
            continue
        wio, (ours, _) = c.warcio_view(path), c.our_view(path, path.name)
        assert not wio.undecodable, c.reference_cannot_decode(path, wio.undecodable)
        by_id = {v.record_id: v for v in ours.records}
        for r in wio.records:
            if r.record_id not in ids or r.body is None:
                continue
            o = by_id[r.record_id]
            assert o.error is None and o.body == r.body, (name, r.record_id, o.error)
            assert decode_html(o.body, None).text == decode_html(r.body, None).text
            checked += 1
            if c.expected_outcome(r) == "kept":
                assert o.outcome == "kept", (name, r.record_id, o.outcome)
                kept_pages += 1
    assert brotli.decompress(brotli.compress(b"<p>x")) == b"<p>x"
    print(f"brotli responses checked against warcio: {checked}, kept as pages: {kept_pages}")
    assert checked >= 7 and kept_pages >= 7


def test_reference_without_a_decoder_fails_clearly(monkeypatch):
    """warcio without a br decoder passes brotli bodies through raw: the suite names the missing
    decoder instead of reporting every such body as a difference."""
    from warcio.bufferedreaders import BufferedReader

    name, path = next((n, p) for n, p in FILES if _brotli_responses(p))
    assert "br" in BufferedReader.get_supported_decompressors(), "the locked install has brotlicffi"
    decoders = {k: v for k, v in BufferedReader.DECOMPRESSORS.items() if k != "br"}
    monkeypatch.setattr(BufferedReader, "DECOMPRESSORS", decoders)
    assert c.warcio_view(path).undecodable == {"br"}
    with pytest.raises(c.ReferenceCannotDecode, match=r"cannot decode Content-Encoding br .*brotlicffi>=1\.2\.1\.0"):
        c.compare_file.__wrapped__(name, path)
