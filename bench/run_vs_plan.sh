#!/bin/bash
# Run vs plan benchmark (bench/README.md): what `trtllm-run run --scenario local_direct
# --custom-cmd true` costs over `trtllm-run plan` of the same case, measured in the same
# run: N interleaved rounds of each (wall time by bash $EPOCHREALTIME, peak RSS by GNU
# time's %M), medians and their ratios. `run` is `plan` plus the job, so anything it does
# beyond that (scanning every process of the host, reading files into buffers larger than
# the files) shows up as the ratio. ~10 s for the default 50 rounds.
#   bench/run_vs_plan.sh [--runs N] [--check]   (BUILD_DIR: the build, default build)
# The wall-time verdict is the median of the per-round ratios (run_i / plan_i, measured one
# right after the other): load from other processes moves both of a round alike, where it
# moves the medians of the two series apart. The ratio of the medians is printed beside it.
# Each round also times the job alone, the command `run` starts for --custom-cmd true
# (`bash -E -u -o pipefail -c true`), and prints the median of run_i - plan_i - job_i: what
# `run` costs beyond `plan` plus its job (the job's start alone is a fixed ~10 ms of CPU that
# weighs more the lighter `plan` gets).
# --check: exit 1 when that paired median is over 1.3 or run's median peak RSS is over 1.2x
# plan's.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
bin="$build_dir/bin/trtllm-run"
runs=50
check=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --check) check=1; shift ;;
    *) echo "usage: $0 [--runs N] [--check]" >&2; exit 2 ;;
  esac
done
[[ -x $bin ]] || { echo "$bin not found: build trtllm-run and its plugins first (BUILD_DIR=...)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time not found: apt-get install time" >&2; exit 2; }
root=$(mktemp -d "${TMPDIR:-/tmp}/run_vs_plan.XXXXXX")
trap 'rm -rf -- "$root"' EXIT

# Times one command: appends "seconds peak_rss_kib cpu_seconds" to the file $1 (CPU: user +
# system of the command and its children, the job included); exit 1 when it failed.
measure() {
  local out=$1 start end rss
  shift
  start=$EPOCHREALTIME
  if ! /usr/bin/time -f "%M %U %S" -o "$root/rss" "$@" >"$root/output" 2>&1 </dev/null; then
    echo "failed: $*" >&2
    cat "$root/output" >&2
    exit 1
  fi
  end=$EPOCHREALTIME
  rss=$(tail -n 1 "$root/rss")
  echo "$start $end $rss" | awk '{printf "%.6f %d %.2f\n", $2 - $1, $3, $4 + $5}' >>"$out"
}

# Times one command by wall clock alone (no GNU time around it, whose own start run and
# plan both carry): appends "seconds 0 0" to the file $1.
measure_wall() {
  local out=$1 start end
  shift
  start=$EPOCHREALTIME
  "$@" >/dev/null 2>&1 </dev/null || { echo "failed: $*" >&2; exit 1; }
  end=$EPOCHREALTIME
  echo "$start $end" | awk '{printf "%.6f 0 0\n", $2 - $1}' >>"$out"
}

case_args=(--scenario local_direct --custom-cmd true --repo-root "$root")
for ((i = 0; i < runs; ++i)); do
  measure "$root/plan" "$bin" plan "${case_args[@]}" --model-name "plan$i"
  measure "$root/run" "$bin" run "${case_args[@]}" --model-name "run$i"
  measure_wall "$root/job" bash -E -u -o pipefail -c true
  rm -rf -- "$root/work_dirs"
done

# The median (nearest rank) of column $2 of the file $1.
median() {
  awk -v col="$2" '{print $col}' "$1" | sort -g | awk '{v[NR] = $1} END { print v[int((NR + 1) / 2)] }'
}
plan_s=$(median "$root/plan" 1)
run_s=$(median "$root/run" 1)
plan_rss=$(median "$root/plan" 2)
run_rss=$(median "$root/run" 2)
plan_cpu=$(median "$root/plan" 3)
run_cpu=$(median "$root/run" 3)
echo "== trtllm-run run vs plan (--scenario local_direct --custom-cmd true), $runs interleaved rounds"
printf "%-28s %14s %18s %16s\n" "command" "median (ms)" "peak RSS (MB)" "CPU (ms, 10 ms)"
awk -v s="$plan_s" -v r="$plan_rss" -v c="$plan_cpu" 'BEGIN {
  printf "%-28s %14.1f %18.1f %16.0f\n", "plan", s * 1000, r / 1024, c * 1000 }'
awk -v s="$run_s" -v r="$run_rss" -v c="$run_cpu" 'BEGIN {
  printf "%-28s %14.1f %18.1f %16.0f\n", "run", s * 1000, r / 1024, c * 1000 }'
# Per round: run_i / plan_i of wall time and of CPU (line i of each file is round i).
paste -d ' ' "$root/plan" "$root/run" |
  awk '{ print $4 / $1, ($3 > 0 ? $6 / $3 : 0) }' >"$root/paired"
paired_s=$(median "$root/paired" 1)
paired_cpu=$(median "$root/paired" 2)
awk -v ps="$plan_s" -v rs="$run_s" -v pr="$plan_rss" -v rr="$run_rss" 'BEGIN {
  printf "%-28s %14.2f %18.2f   (of the medians)\n", "ratio run / plan", rs / ps, rr / pr }'
awk -v s="$paired_s" -v c="$paired_cpu" 'BEGIN {
  printf "%-28s %14.2f %18s %16.2f   (median of per-round ratios)\n", "paired ratio run / plan", s, "", c }'
# Per round: run_i - plan_i - job_i, (run_i - job_i) / plan_i and (plan_i + job_i) / plan_i
# (the floor: the ratio of a `run` that added nothing to `plan` but its job), wall time.
paste -d ' ' "$root/plan" "$root/run" "$root/job" |
  awk '{ print $4 - $1 - $7, ($4 - $7) / $1, ($1 + $7) / $1 }' >"$root/beyond"
awk -v s="$(median "$root/job" 1)" 'BEGIN {
  printf "%-28s %14.1f\n", "the job alone (bash -c true)", s * 1000 }'
awk -v s="$(median "$root/beyond" 1)" 'BEGIN {
  printf "%-28s %14.1f   (median per round)\n", "run - plan - job", s * 1000 }'
awk -v r="$(median "$root/beyond" 2)" 'BEGIN {
  printf "%-28s %14.2f   (median per round)\n", "(run - job) / plan", r }'
awk -v r="$(median "$root/beyond" 3)" 'BEGIN {
  printf "%-28s %14.2f   (median per round: run adding nothing but the job)\n", "floor (plan + job) / plan", r }'
echo "targets: paired wall ratio <= 1.3, RSS ratio <= 1.2; load average $(cut -d ' ' -f 1-3 /proc/loadavg)"
echo "processes on this host: $(find /proc -maxdepth 1 -name "[0-9]*" 2>/dev/null | wc -l) (a scan of every process grows with them)"
if [[ $check == 1 ]]; then
  miss=0
  awk -v r="$paired_s" 'BEGIN { exit !(r > 1.3) }' &&
    { echo "MISS: the median of per-round wall ratios run / plan is $paired_s > 1.3" >&2; miss=1; }
  awk -v pr="$plan_rss" -v rr="$run_rss" 'BEGIN { exit !(rr > 1.2 * pr) }' &&
    { echo "MISS: run's peak RSS ${run_rss} KiB > 1.2x plan's ${plan_rss} KiB" >&2; miss=1; }
  exit $miss
fi
