#!/bin/bash
# Plan latency benchmark (bench/README.md): `trtllm-run plan` for each workflow on
# local_slurm with a saved slurm_env.json, against `/usr/bin/python3 -c pass` in the same
# run (median and p90 of 50 interleaved runs each). Needs /usr/bin/python3; ~30 s.
#   bench/plan_latency.sh [plan_latency_bench options]   (BUILD_DIR: the build, default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
exec "$build_dir/bin/plan_latency_bench" "$@"
