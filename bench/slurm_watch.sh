#!/bin/bash
# Slurm watcher benchmark (bench/README.md): 50 and 200 concurrent 5 s jobs watched by
# trtllm-run's SlurmWatcher and by a naive one-squeue-per-job-per-second watcher (scheduler
# RPCs per job-minute, delay job end -> verdict, watcher CPU); a remote watch over the
# loopback sshd against a naive `ssh HOST squeue -j ID` poller (SSH connections and round
# trips per job-minute); peak RSS while watching 1,000 held jobs. Needs root (the test
# services) and about 9 minutes. Every job is named trtllm-bench-<pid> and cancelled at the
# end, on failure and on interrupt.
#   bench/slurm_watch.sh [slurm_watch_bench options]   (BUILD_DIR: the build, default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
tests/services/slurm.sh ensure >/dev/null
tests/services/sshd.sh ensure >/dev/null
exec "$build_dir/bin/slurm_watch_bench" --remote "$@"
