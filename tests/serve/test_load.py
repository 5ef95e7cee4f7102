"""A bounded load test on loopback: 16 concurrent clients for a few seconds against the service on
the demo day, three searches to one download, zero errors. Latency figures are printed, not
asserted (speed is measured in benchmarks/bench_serve_load.py)."""

from __future__ import annotations

import json

from devtools.loadgen import run_load
from tests.serve.fixtures_http import DEMO_DAY


def test_sixteen_clients_mixed_search_and_download_without_errors(service):
    res = run_load(service, DEMO_DAY.isoformat(), seconds=10, clients=16)
    print("load:", json.dumps(res))
    assert res["errors"] == 0, res["error_samples"]
    assert res["search"]["n"] > 50 and res["download"]["n"] > 10
    assert res["requests"] == res["search"]["n"] + res["download"]["n"]
