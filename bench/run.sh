#!/bin/bash
# Runs every benchmark (bench/*.sh other than this one, in name order) against an optimized
# build and prints each one's target vs measured figures and its in-run baselines.
#   bench/run.sh                      builds build-bench (Release) first
#   BUILD_DIR=build bench/run.sh      uses an existing build instead (not a sanitizer build)
# Exit status: 1 when a benchmark failed to run; missed targets are printed, not fatal.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z ${BUILD_DIR:-} ]]; then
  export BUILD_DIR=build-bench
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRTLLM_RUN_BUILD_TESTS=OFF \
    -DTRTLLM_RUN_BUILD_BENCH=ON -DTRTLLM_RUN_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$BUILD_DIR" -j"$(nproc)" >/dev/null
fi
failed=()
for script in bench/*.sh; do
  [[ $script == bench/run.sh ]] && continue
  # A whole build without ccache (minutes): only when asked.
  [[ $script == bench/command1_build.sh && ${BENCH_COMMAND1:-0} != 1 ]] && continue
  echo "#### $script"
  if ! bash "$script"; then
    failed+=("$script")
  fi
  echo
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "benchmarks that failed to run: ${failed[*]}" >&2
  exit 1
fi
