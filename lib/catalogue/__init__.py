"""Catalogue of the crawl (seed 000's WarcManager, seed 004's CDX tooling) over the
preprocess output: per-day CDXJ index, URL database across days, DuckDB queries, a
read-only HTTP API and a daily HTML report. See docs/catalogue.md."""
