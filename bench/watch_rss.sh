#!/bin/bash
# Watcher memory at scale (bench/README.md "watch_rss.sh"): one SlurmWatcher watching 5,000
# held (pending) jobs for 3 query rounds: peak RSS (target <= 100 MB), bytes per watched
# job, CPU per query round. The jobs are submitted held (they never run and block no one)
# 4 sbatch at a time after checking that MaxJobCount and the user's association limits
# leave room for them, named trtllm-bench-<pid>, and cancelled at the end, on failure and
# on interrupt. No naive baseline (5,000 squeue processes would load the shared host; the
# 1,000-job run of bench/slurm_watch.sh has it). Needs root and the test cluster, ~1.5 min.
#   bench/watch_rss.sh [--rss-jobs 5000] [slurm_watch_bench options]   (BUILD_DIR, default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
tests/services/slurm.sh ensure >/dev/null
exec "$build_dir/bin/slurm_watch_bench" --sizes none --no-naive --rss-jobs 5000 \
  --rss-target-mb 100 "$@"
