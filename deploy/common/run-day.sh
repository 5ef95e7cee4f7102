#!/usr/bin/env bash
# run-day.sh: preprocess, index, then catalogue one day of one data center on a Spark
# standalone cluster inside a Slurm allocation. Shared by deploy/slurm/dailyslice.sbatch (plain
# Slurm: this script starts the Spark master and one worker per node) and by Magpie
# (MAGPIE_JOB_TYPE=script: Magpie already started Spark and exported SPARK_MASTER_NODE,
# so this script only submits).
#
# The night itself is `dailyslice day` (jobs/day.py), submitted once: one Spark application
# runs preprocess, index and catalogue in order, each when the exit codes before it allow, and
# writes the marker; the steps, that rule, the exit codes and the marker's fields are declared in
# lib/orchestration/chain.py and lib/orchestration/marker.py. In short: success is the marker
# file, written only when all three jobs exited 0 (Magpie's own exit code is always 0);
# otherwise MARKER.failed.json is written and the exit code is non-zero (3: published but
# unhealthy; 2 or 4: no input folder or no archives; 5: another run holds the day; 1 otherwise).
# This script only sets up the allocation (Spark master and workers, or Magpie's) and submits.
#
# Required:  DATE (YYYY-MM-DD), INPUT_ROOT (bucket root holding warc/YYYY-MM/DD, s3:// or
#            a path), OUTPUT_ROOT (shared cluster filesystem: preprocessed/, index/, catalogue/
#            and urldb/ go there)
# Optional (defaults):
#   DATA_CENTER (default)            name used in logs and the marker path
#   DAILYSLICE_HOME (this checkout)  project folder with jobs/ and lib/
#   VENV ($DAILYSLICE_HOME/.venv)    Python environment with pyspark and the project installed
#   SCRATCH_DIR (${TMPDIR:-/tmp}/dailyslice-$JOB_ID)  node-local folder for Spark work/shuffle
#   LOG_DIR ($OUTPUT_ROOT/logs)      the run log is $LOG_DIR/dailyslice-$DATA_CENTER-$DATE-$JOB_ID.log
#   RUN_LOGS ($LOG_DIR/dailyslice-$DATA_CENTER-$DATE-$JOB_ID)  the run's other logs, staged with it:
#                                    spark-events/ (Spark event logs, for the history server),
#                                    summaries/ (each job's --summary), _errors.jsonl (preprocess's)
#   MARKER_FILE ($OUTPUT_ROOT/_runs/$DATA_CENTER/$DATE.json; with BATCH=1 $DATE.tick.json)
#   BATCH (unset)                    1: run the day's next batch (`dailyslice day --batch`): the archives
#                                    no published batch took, published as batch=N/; MARKER_FILE is then
#                                    the tick's marker (the batch's, or one with nothing_new: nothing to
#                                    do), the batch's own is $DATE.batch=N.json beside it. The job keeps
#                                    the name dailyslice-$DATA_CENTER (singleton): never beside the night
#                                    (a tick with nothing new ends before Spark starts: --plan-only)
#   BATCH_SETTLE (60)                seconds a local archive must be unchanged before a batch takes it
#   SPARK_WORKER_CORES (CPUs of the node), SPARK_WORKER_MEMORY (4g), SPARK_EXECUTOR_MEMORY (2g),
#   SPARK_EXECUTOR_CORES (all of a worker's), SPARK_DRIVER_MEMORY (2g),
#   SPARK_MASTER_HOST ($(hostname)), DAILYSLICE_SPARK_PORT (a free port),
#   URLDB ($OUTPUT_ROOT/urldb)       the URL database the catalogue merges each day into
#   SIGNATURES ($OUTPUT_ROOT/signatures)  the index's signature store of the last days (dup_of)
#   EXCLUSIONS ($OUTPUT_ROOT/_exclusions.jsonl when it exists)  the take-down list the three jobs
#                                    apply (lib/pages/exclusions.py); a given URI must exist
#   SPARK_SUBMIT_ARGS, PREPROCESS_ARGS, INDEX_ARGS, CATALOGUE_ARGS (extra arguments, word-split;
#                  a job's Spark settings go in SPARK_SUBMIT_ARGS: the three share one application),
#   KEEP_SCRATCH (unset: scratch is removed at the end), WORKER_START_TIMEOUT (300 s),
#   S3_CREDENTIALS (refreshing: S3 clients take refreshing credentials only, e.g. AWS_CONFIG_FILE
#                  with a credential_process; exported static keys are dropped)
set -uo pipefail

die() { echo "run-day: $*" >&2; exit 2; }
: "${DATE:?run-day: DATE (YYYY-MM-DD) is required}"
: "${INPUT_ROOT:?run-day: INPUT_ROOT (bucket root with warc/) is required}"
: "${OUTPUT_ROOT:?run-day: OUTPUT_ROOT (cluster filesystem for the output) is required}"
[[ "$DATE" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || die "DATE must be YYYY-MM-DD, got '$DATE'"
DATA_CENTER=${DATA_CENTER:-default}
JOB_ID=${SLURM_JOB_ID:-local-$$}
DAILYSLICE_HOME=${DAILYSLICE_HOME:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
[ -f "$DAILYSLICE_HOME/jobs/preprocess.py" ] || die "DAILYSLICE_HOME=$DAILYSLICE_HOME has no jobs/preprocess.py"
VENV=${VENV:-$DAILYSLICE_HOME/.venv}
[ -x "$VENV/bin/python" ] || die "Python environment not found: $VENV/bin/python (set VENV)"
PY=$VENV/bin/python
# the jobs import the installed project (pip install -e "$DAILYSLICE_HOME"), not the checkout by path
(cd / && "$PY" -c "import jobs.index, lib.store.layout") >/dev/null 2>&1 \
  || die "the project is not installed in $VENV: $VENV/bin/pip install -e $DAILYSLICE_HOME"
LOG_DIR=${LOG_DIR:-$OUTPUT_ROOT/logs}
case "${BATCH:-}" in
  "" | 0) BATCH=""; TICK="" ;;
  1) TICK=.tick ;;
  *) die "BATCH must be 1 (a batch tick) or unset, got '$BATCH'" ;;
esac
MARKER_FILE=${MARKER_FILE:-$OUTPUT_ROOT/_runs/$DATA_CENTER/$DATE$TICK.json}
SCRATCH_DIR=${SCRATCH_DIR:-${TMPDIR:-/tmp}/dailyslice-$JOB_ID}
mkdir -p "$LOG_DIR" "$(dirname "$MARKER_FILE")" "$SCRATCH_DIR" || die "cannot create $LOG_DIR / $SCRATCH_DIR"
LOG_FILE=$LOG_DIR/dailyslice-$DATA_CENTER-$DATE-$JOB_ID.log
RUN_LOGS=$(realpath -m "${RUN_LOGS:-$LOG_DIR/dailyslice-$DATA_CENTER-$DATE-$JOB_ID}")
mkdir -p "$RUN_LOGS/spark-events" "$RUN_LOGS/summaries" || die "cannot create $RUN_LOGS"
echo "run-day: log in $LOG_FILE"
exec >>"$LOG_FILE" 2>&1
echo "run-day: $(date -u +%FT%TZ) data center $DATA_CENTER, day $DATE, job $JOB_ID on $(hostname)"

# a marker from an earlier run of the same day must not vouch for this one
rm -f "$MARKER_FILE" "${MARKER_FILE%.json}.failed.json"

export SPARK_HOME=${SPARK_HOME:-$("$PY" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')}
export PYSPARK_PYTHON=$PY PYSPARK_DRIVER_PYTHON=$PY
export PYTHONPATH=$DAILYSLICE_HOME${PYTHONPATH:+:$PYTHONPATH}

# S3_CREDENTIALS=refreshing (the DAG's s3.credentials): every S3 client of the run (driver and
# executors, which inherit this environment) refreshes its credentials before they expire, so a
# job that waited hours in the queue or runs for days keeps access across key rotations. Keys
# exported into the job (sbatch --export=ALL) would never change: drop them, and refuse to start
# when what is configured does not refresh (lib/store/s3.py).
if [ "${S3_CREDENTIALS:-}" = refreshing ]; then
  unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
  "$PY" -c "from lib.store import s3; print('run-day: S3 credentials from', s3.session().get_credentials().method)" \
    || die "S3_CREDENTIALS=refreshing, but no refreshing S3 credentials (see the error above)"
fi
export SPARK_LOCAL_DIRS=$SCRATCH_DIR/local SPARK_WORKER_DIR=$SCRATCH_DIR/work
mkdir -p "$SPARK_LOCAL_DIRS" "$SPARK_WORKER_DIR"
WORKER_CORES=${SPARK_WORKER_CORES:-${SLURM_CPUS_ON_NODE:-$(nproc)}}
WORKER_MEMORY=${SPARK_WORKER_MEMORY:-4g}

MASTER_PID=""; WORKERS_PID=""
cleanup() {
  local rc=$?
  if [ -n "$WORKERS_PID" ]; then kill -TERM "$WORKERS_PID" 2>/dev/null; wait "$WORKERS_PID" 2>/dev/null; fi
  if [ -n "$MASTER_PID" ]; then kill -TERM "$MASTER_PID" 2>/dev/null; wait "$MASTER_PID" 2>/dev/null; fi
  [ -n "${KEEP_SCRATCH:-}" ] || rm -rf "$SCRATCH_DIR"
  echo "run-day: $(date -u +%FT%TZ) finished with exit code $rc"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

wait_port() {  # host port seconds
  local deadline=$((SECONDS + $3))
  until (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || return 1
    kill -0 "$MASTER_PID" 2>/dev/null || return 1
    sleep 1
  done
}

DAY_ARGS=(--date "$DATE" --input-root "$INPUT_ROOT" --output-root "$OUTPUT_ROOT" --data-center "$DATA_CENTER"
  --job-id "$JOB_ID" --marker "$MARKER_FILE" --log "$LOG_FILE" --run-logs "$RUN_LOGS"
  --urldb "${URLDB:-$OUTPUT_ROOT/urldb}" --signatures "${SIGNATURES:-$OUTPUT_ROOT/signatures}"
  --preprocess-args="${PREPROCESS_ARGS:-}" --index-args="${INDEX_ARGS:-}" --catalogue-args="${CATALOGUE_ARGS:-}")
[ -z "${EXCLUSIONS:-}" ] || DAY_ARGS+=(--exclusions "$EXCLUSIONS")
[ -z "$BATCH" ] || DAY_ARGS+=(--batch --settle "${BATCH_SETTLE:-60}")
if [ -n "$BATCH" ]; then
  # a tick with nothing new ends here, before any Spark daemon starts (its nothing_new marker written);
  # 10: a batch to run
  "$PY" -m jobs.day "${DAY_ARGS[@]}" --plan-only
  RC=$?
  if [ "$RC" -ne 10 ]; then
    [ "$RC" -eq 0 ] || [ -f "${MARKER_FILE%.json}.failed.json" ] || "$PY" -m jobs.day "${DAY_ARGS[@]}" --driver-failed "$RC"
    exit "$RC"
  fi
fi

if [ -n "${SPARK_MASTER_NODE:-}" ]; then
  # Magpie (or any pre-started cluster): use it, start and stop nothing
  MASTER_URL=spark://$SPARK_MASTER_NODE:${SPARK_MASTER_PORT:-7077}
  echo "run-day: using the running Spark master $MASTER_URL"
else
  [ -n "${SLURM_JOB_ID:-}" ] || die "not in a Slurm allocation and no SPARK_MASTER_NODE: nothing to run Spark on"
  MASTER_HOST=${SPARK_MASTER_HOST:-$(hostname)}
  MASTER_PORT=${DAILYSLICE_SPARK_PORT:-$("$PY" -c 'import socket; s=socket.socket(); s.bind(("",0)); print(s.getsockname()[1])')}
  MASTER_URL=spark://$MASTER_HOST:$MASTER_PORT
  echo "run-day: starting Spark master $MASTER_URL and a worker on each of ${SLURM_JOB_NUM_NODES:-1} node(s)"
  "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
    --host "$MASTER_HOST" --port "$MASTER_PORT" --webui-port 0 &
  MASTER_PID=$!
  wait_port "$MASTER_HOST" "$MASTER_PORT" 120 || die "Spark master did not start on $MASTER_URL"
  # --overlap: the workers share the allocation with the driver running in the batch step
  srun --overlap --kill-on-bad-exit=0 --nodes="${SLURM_JOB_NUM_NODES:-1}" --ntasks="${SLURM_JOB_NUM_NODES:-1}" \
    --ntasks-per-node=1 "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
    --cores "$WORKER_CORES" --memory "$WORKER_MEMORY" --webui-port 0 --work-dir "$SPARK_WORKER_DIR" "$MASTER_URL" &
  WORKERS_PID=$!
  # a missing worker would leave spark-submit waiting for executors until the time limit
  NODES=${SLURM_JOB_NUM_NODES:-1}
  deadline=$((SECONDS + ${WORKER_START_TIMEOUT:-300}))
  until [ "$(grep -c 'Successfully registered with master' "$LOG_FILE")" -ge "$NODES" ]; do
    kill -0 "$WORKERS_PID" 2>/dev/null || die "Spark workers exited before registering (srun failed?)"
    [ $SECONDS -lt $deadline ] || die "only $(grep -c 'Successfully registered with master' "$LOG_FILE") of $NODES Spark workers registered"
    sleep 1
  done
  echo "run-day: $NODES Spark worker(s) registered"
fi

# the night itself, declared once in Python (lib/orchestration/chain.py): one spark-submit of
# `dailyslice day` (jobs/day.py), one Spark application for the three jobs; it picks the
# exclusion list, runs each job when the exit codes before it allow, copies _errors.jsonl
# beside the logs and writes the marker
echo "run-day: $(date -u +%FT%TZ) spark-submit dailyslice day (jobs/day.py)"
# shellcheck disable=SC2086  # SPARK_SUBMIT_ARGS is a word list on purpose
"$SPARK_HOME/bin/spark-submit" --master "$MASTER_URL" \
  --driver-memory "${SPARK_DRIVER_MEMORY:-2g}" --executor-memory "${SPARK_EXECUTOR_MEMORY:-2g}" \
  ${SPARK_EXECUTOR_CORES:+--executor-cores "$SPARK_EXECUTOR_CORES"} \
  --conf spark.pyspark.python="$PY" --conf spark.pyspark.driver.python="$PY" \
  --conf spark.local.dir="$SPARK_LOCAL_DIRS" --conf spark.ui.enabled=false \
  --conf spark.eventLog.enabled=true --conf spark.eventLog.dir="file://$RUN_LOGS/spark-events" \
  ${SPARK_SUBMIT_ARGS:-} "$DAILYSLICE_HOME/jobs/day.py" "${DAY_ARGS[@]}"
RC=$?
# a driver that died before its marker (killed, out of memory, no JVM) still leaves a failure marker
if [ ! -f "$MARKER_FILE" ] && [ ! -f "${MARKER_FILE%.json}.failed.json" ] && [ "$RC" -ne 0 ]; then
  "$PY" -m jobs.day "${DAY_ARGS[@]}" --driver-failed "$RC"
fi
exit "$RC"
