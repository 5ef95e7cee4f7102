"""Near-duplicates, in one room (docs/dedup.md): MinHash signatures of main texts (:mod:`minhash`),
the preprocess job's ``minhash`` column (:mod:`page_column`), LSH bands, verified pairs and clusters as
plain functions (:mod:`clusters`), a day's clusters as Spark stages (:mod:`day_clusters`), the signature
store of the last N days (:mod:`sigstore`) and a day matched against it (:mod:`crossday`).

Tests are in ``tests/neardup/``; the benchmarks are ``bench_minhash`` (signatures against datasketch and
rensa), ``bench_dedup_jobs`` (a day's clusters) and ``bench_crossday`` (a day against the store).
"""
