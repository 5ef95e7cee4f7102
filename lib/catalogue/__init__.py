"""Catalogue of the crawl (what SWAP's WarcManager and CDX tools offer) over the
preprocess output: per-day CDXJ index, URL database across days, DuckDB queries, a
read-only HTTP API and a daily HTML report. See docs/catalogue.md."""
