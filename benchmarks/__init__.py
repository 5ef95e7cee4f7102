"""Benchmarks, each run from the checkout root as ``python -m benchmarks.bench_xxx`` (docs/benchmarks.md)."""
