"""Near-duplicates, in one room (docs/dedup.md): MinHash signatures of main texts (``minhash``),
the preprocess job's ``minhash`` column (``page_column``), LSH bands, verified pairs and clusters as
plain functions (``clusters``), a day's clusters as Spark stages (``day_clusters``), the signature
store of the last N days (``sigstore``) and a day matched against it (``crossday``).

Tests are in ``tests/neardup/``; the benchmarks are benchmarks/bench_minhash.py (signatures against datasketch and
rensa), bench_dedup_jobs.py (a day's clusters) and bench_crossday.py (a day against the store).
"""
