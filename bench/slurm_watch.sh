#!/bin/bash
# Slurm watcher benchmark (bench/README.md): 50 concurrent 5 s jobs watched by trtllm-run's
# SlurmWatcher and by a naive one-squeue-per-job-per-second watcher; scheduler RPCs per
# job-minute (sdiag, sacctmgr show stats), median delay job end -> verdict, SSH connections
# per remote run. Needs root (the test services) and about 6 minutes.
#   bench/slurm_watch.sh [slurm_watch_bench options]   (BUILD_DIR: the build, default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
tests/services/slurm.sh ensure >/dev/null
tests/services/sshd.sh ensure >/dev/null
exec "$build_dir/bin/slurm_watch_bench" --remote "$@"
