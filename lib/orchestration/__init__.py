"""Orchestration of the nightly runs (used by the Airflow DAGs in airflow/dags/):
data-center config, job sizing, Slurm access, the deferrable wait trigger, the DAG factory.

It lives in the installed package, not the DAG folder, because Airflow 3 does not put the
DAG folder on ``sys.path``: the triggerer must import the trigger's class path, and the
workers import the staging code anyway. Importing this package needs no Airflow;
``trigger`` and ``dag_factory`` do.
"""
