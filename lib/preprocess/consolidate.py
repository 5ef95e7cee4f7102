"""A closed day's batches consolidated into the day: ``preprocessed/YYYY-MM/DD/`` as the union of its
published ``batch=N/`` folders (lib/preprocess/batches.py), so the night indexes and catalogues the
day from the pages its batches already made, without reading an archive again.

The page files (``language=xxx/part-*.parquet``, their logs) and the captures (``_captures/``) of
every batch are linked into the day's folder under their own names (content-derived, so two
batches never share one; if they did the consolidation stops, naming both). The side files are
merged: ``_inputs.json`` names every batch's archives, ``_errors.jsonl`` holds their lines in batch
order, ``_stats.json`` sums their counters (per-file records and page-file logs listed together,
the health assessed again over the sums) and says which batches it consolidated, and the host
index ``_hosts.parquet`` is built again over the day's files. The folder is assembled aside and
swapped in with ``_SUCCESS`` last (:class:`lib.store.publish.WorkDir`): the swap removes the
``batch=N/`` folders, whose files the day now holds, so a crash before it leaves the batches as
they were (and a re-run consolidates them again), a crash after it a consolidated day. A batch
tick must not run beside it (the data center's singleton job rule keeps them apart); one that
published a batch meanwhile is found before the swap and stops the consolidation, naming it.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

from lib.errors import DailysliceError
from lib.pages import hostindex
from lib.preprocess import health
from lib.preprocess.batches import batch_path, published_batches
from lib.store import layout, storage
from lib.store.publish import WorkDir

#: side files merged rather than linked (the host index is built again over the day's files)
MERGED = {layout.SUCCESS, layout.STATS, layout.INPUTS, layout.ERRORS, layout.HOSTS}


class ConsolidationError(DailysliceError):
    """A day's batches that cannot be consolidated (the message names the batch and file)."""


def _add(a: Any, b: Any) -> Any:
    """Counters added: numbers summed, mappings key by key, lists joined (without repeats); else the first."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a + b
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _add(a[k], b[k]) if k in a and k in b else a.get(k, b.get(k)) for k in {**a, **b}}
    if isinstance(a, list) and isinstance(b, list):
        return a + [x for x in b if x not in a]
    return a


def merge_stats(docs: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """One ``_stats.json`` of the batches' (by number): totals summed, per-file records and logs listed
    together, health assessed again over the sums with the first batch's thresholds."""
    first = docs[min(docs)]
    out = dict(first)
    out["files"] = sorted((f for d in docs.values() for f in d.get("files", [])), key=lambda f: str(f.get("file")))
    out["file_logs"] = sorted((e for d in docs.values() for e in d.get("file_logs", [])), key=lambda e: e["pages"])
    totals: dict[str, Any] = {}
    for n in sorted(docs):
        totals = _add(totals, docs[n].get("totals", {})) if totals else dict(docs[n].get("totals", {}))
    out["totals"] = totals
    th = (first.get("health") or {}).get("thresholds")
    thresholds = health.Thresholds(**th) if th else health.Thresholds()
    out["health"] = health.assess(totals, out["files"], thresholds)
    built = {json.dumps(d.get("built_with"), sort_keys=True) for d in docs.values()}
    if len(built) > 1:  # a model or list changed during the day: say which batch used what
        out["built_with_batches"] = {str(n): d.get("built_with") for n, d in sorted(docs.items())}
    out["consolidated_from"] = sorted(docs)
    return out


def _link(src: str, dest: str) -> None:
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    try:
        os.link(src, dest)  # the same filesystem: no bytes copied, and the batch's copy may go
    except OSError:
        shutil.copyfile(src, dest)


def consolidate(day_output: str) -> dict[str, Any]:
    """Publish the preprocessed day ``day_output`` (a local or cluster path) as the union of its
    published batches (module doc); returns ``{"batches", "pages", "files", "archives"}``."""
    if storage.is_s3(day_output):
        raise ConsolidationError(f"{day_output}: batches are consolidated on a filesystem, not on S3")
    day_dir = storage.local_path(day_output).rstrip("/")
    done = published_batches(day_dir)
    if not done:
        raise ConsolidationError(f"{day_dir}: no published batch to consolidate")
    stats: dict[int, dict[str, Any]] = {}
    owner: dict[str, int] = {}
    with WorkDir(day_dir, name="consolidate") as wd:
        inputs: dict[str, dict[str, Any]] = {}
        errors: list[bytes] = []
        for n in sorted(done):
            src = storage.local_path(batch_path(day_dir, n))
            for f in done[n].get("files", []):
                if f["name"] in inputs:
                    raise ConsolidationError(f"{src}/{layout.INPUTS}: {f['name']} is batch {n}'s and an earlier one's")
                inputs[f["name"]] = f
            for dirpath, _, names in os.walk(src):
                for name in names:
                    rel = os.path.relpath(os.path.join(dirpath, name), src)
                    if rel in MERGED:
                        continue
                    if rel in owner:
                        raise ConsolidationError(f"{src}/{rel}: batches {owner[rel]} and {n} both hold {rel}")
                    owner[rel] = n
                    _link(os.path.join(dirpath, name), os.path.join(wd.path, rel))
            try:
                with open(os.path.join(src, layout.STATS)) as fh:
                    stats[n] = json.load(fh)
            except (OSError, ValueError) as e:
                raise ConsolidationError(f"{src}/{layout.STATS}: unreadable ({e})") from None
            if os.path.isfile(os.path.join(src, layout.ERRORS)):
                errors.append(open(os.path.join(src, layout.ERRORS), "rb").read())
        merged = merge_stats(stats)
        storage.write_bytes(os.path.join(wd.path, layout.STATS), json.dumps(merged, indent=1, sort_keys=True).encode())
        body = {
            "files": [inputs[k] for k in sorted(inputs)],
            "count": len(inputs),
            "bytes": sum(int(f.get("size", 0)) for f in inputs.values()),
            "batches": sorted(done),
        }
        storage.write_bytes(
            os.path.join(wd.path, layout.INPUTS), (json.dumps(body, indent=1, sort_keys=True) + "\n").encode()
        )
        storage.write_bytes(os.path.join(wd.path, layout.ERRORS), b"".join(errors))
        hostindex.write(wd.path)
        pages = int(merged["totals"].get("kept", 0))
        late = sorted(set(published_batches(day_dir)) - set(done))
        if late:  # a tick ran beside the night (the data center's singleton job should prevent it): keep it
            raise ConsolidationError(
                f"{day_dir}: batch {late[0]} was published while consolidating; run the night again"
            )
        wd.publish({"job": "consolidate", "batches": sorted(done), "pages": pages, "healthy": merged["health"]["ok"]})
    return {"batches": sorted(done), "pages": pages, "files": len(owner), "archives": len(inputs)}
