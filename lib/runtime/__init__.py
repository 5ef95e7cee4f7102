"""The Spark job runtime: ``sparkjob`` (the job base class), ``options`` (options declared once,
the command line generated), ``result`` (results, exit codes), ``steps`` (timed steps),
``session`` (logging, the workers' Python, the Spark session), ``pyfiles`` (``lib`` zipped for
executors), ``maptasks`` (Python work as Spark tasks), ``packing`` (tasks planned by bytes),
``localmode``, ``jvm_cache`` and ``pydaemon`` (what only a local driver JVM gains)."""
