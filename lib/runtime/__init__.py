"""The Spark job runtime: the job base class, local-mode start-up, task packing."""
