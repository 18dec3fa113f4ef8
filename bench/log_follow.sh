#!/bin/bash
# Log-following benchmark: bytes read per byte written while a 1 GiB log is written in
# 50 s (LogFollower vs the original whole-file grep every 10 s), and the case-insensitive
# scan time of that log (PatternScanner vs grep -cF / grep -ci). Needs ~1.3 GiB free in
# $TMPDIR (or /tmp) and about 70 s.
#   bench/log_follow.sh [log_follow_bench options]   (BUILD_DIR: the build, default build)
#   e.g. bench/log_follow.sh --size-mb 256 --seconds 12.5 for a scaled-down run
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
exec "$build_dir/bin/log_follow_bench" "$@"
