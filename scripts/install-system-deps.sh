#!/usr/bin/env bash
# System packages the tests need (Debian 12). Idempotent: installs only what is missing.
set -euo pipefail
need=()
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
# a real Slurm cluster for the orchestration tests (devtools/slurm.py starts the daemons)
[ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] && command -v sbatch >/dev/null 2>&1 || need+=(slurm-wlm)
[ -x /usr/sbin/munged ] || need+=(munge)
# headless browser that renders the catalogue's daily report in its test
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# the SWAP servers' benchmark peer (nginx) and load generator (wrk); curl for the SWAP tests
[ -x /usr/sbin/nginx ] || need+=(nginx)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then echo "need root to install: ${need[*]}" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
