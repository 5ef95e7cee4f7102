"""Orchestration of the nightly runs (used by the Airflow DAGs in airflow/dags/):
``datacenters`` (the data-center config), ``sizing`` (nodes and walltime of a day's job), ``slurm``
(Slurm access), ``trigger`` (the deferrable wait for a Slurm job), ``dag_factory`` (the nightly
DAG, its tasks wired), ``nightly`` (those tasks as plain functions), ``runenv`` (the run's day and S3
settings), ``exchange_task`` (its link exchange task), ``stage_outputs`` (staging a finished day's outputs),
``days`` (which recent days are complete, changed or missing: ``check-days``), ``ondemand_requests`` and
``ondemand_dag`` (the on-demand requests and their DAG), ``batch_dag`` (a day's batches every N minutes: its DAG),
``replication`` (which data centers hold a
copy of each folder kind) and ``replicas`` (those copies compared for ``check-days``),
``chain`` (the night's steps, which exit codes let the next run, the night's exit code) and ``marker``
(the night's marker as a typed record).

It lives in the installed package, not the DAG folder, because Airflow 3 does not put the
DAG folder on ``sys.path``: the triggerer must import the trigger's class path, and the
workers import the staging code anyway. Importing this package needs no Airflow;
``trigger``, ``nightly`` and ``dag_factory`` do.
"""
