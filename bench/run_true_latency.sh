#!/bin/bash
# Run latency benchmark (bench/README.md): what `trtllm-run run --scenario local_direct
# --custom-cmd true` costs end to end (process start, planning, the job, the verdict,
# result.json) against `bash -c true` in the same run: p50 and p99 of N interleaved runs
# each, and their ratio. A job's end is seen through its pidfd, not at a poll interval,
# so the p99 must stay near the p50 (no 0.5 s outliers). ~10 s for the default 100 runs.
#   bench/run_true_latency.sh [--runs N] [--check]   (BUILD_DIR: the build, default build)
# --check: exit 1 when the p99 of trtllm-run is over 0.25 s.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
bin="$build_dir/bin/trtllm-run"
runs=100
check=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --check) check=1; shift ;;
    *) echo "usage: $0 [--runs N] [--check]" >&2; exit 2 ;;
  esac
done
[[ -x $bin ]] || { echo "$bin not found: build trtllm-run first (BUILD_DIR=...)" >&2; exit 2; }
root=$(mktemp -d "${TMPDIR:-/tmp}/run_true_latency.XXXXXX")
trap 'rm -rf -- "$root"' EXIT

# Seconds (microsecond resolution) one command took, appended to the file $1.
time_one() {
  local out=$1 start end
  shift
  start=$EPOCHREALTIME
  "$@" >/dev/null 2>&1 </dev/null
  end=$EPOCHREALTIME
  echo "$start $end" | awk '{printf "%.6f\n", $2 - $1}' >>"$out"
}

for ((i = 0; i < runs; ++i)); do
  time_one "$root/trtllm" "$bin" run --scenario local_direct --custom-cmd true \
    --repo-root "$root" --model-name "bench$i"
  time_one "$root/bash" bash -c true
  rm -rf -- "$root/work_dirs"
done

# p50 and p99 (nearest rank) of the figures in file $1.
percentiles() {
  sort -g "$1" | awk '{v[NR] = $1} END {
    p50 = v[int((NR * 50 + 99) / 100)]; p99 = v[int((NR * 99 + 99) / 100)]
    printf "%.4f %.4f\n", p50, p99 }'
}
read -r t50 t99 < <(percentiles "$root/trtllm")
read -r b50 b99 < <(percentiles "$root/bash")
echo "== trtllm-run run --scenario local_direct --custom-cmd true vs bash -c true, $runs interleaved runs each"
printf "%-44s %10s %10s\n" "command" "p50 (s)" "p99 (s)"
printf "%-44s %10s %10s\n" "trtllm-run run ... --custom-cmd true" "$t50" "$t99"
printf "%-44s %10s %10s\n" "bash -c true" "$b50" "$b99"
awk -v t50="$t50" -v t99="$t99" -v b50="$b50" -v b99="$b99" 'BEGIN {
  printf "%-44s %10.1f %10.1f\n", "ratio trtllm-run / bash", t50 / b50, t99 / b99
  printf "%-44s %10.2f\n", "trtllm-run p99 / its p50 (target <= 3)", t99 / t50 }'
if [[ $check == 1 ]] && awk -v t99="$t99" 'BEGIN { exit !(t99 > 0.25) }'; then
  echo "MISS: trtllm-run p99 $t99 s > 0.25 s" >&2
  exit 1
fi
