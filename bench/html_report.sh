#!/bin/bash
# HTML report benchmark (bench/README.md): `trtllm-run report` of a stage run dir of N tests
# (default 1,000: a tenth failed with a message, a tenth rerun, 4 shard jobs with a log tail
# each, a perf section of 2 metrics with 90 history points), 10 runs: the page's size and the
# median wall time (process start included), beside `trtllm-run --version` as the floor.
#   bench/html_report.sh [--tests N] [--check] [--smoke]   (BUILD_DIR: default build)
# --check: exit 1 when the page is over 1.5 MB or the median over 1 s. --smoke: 100 tests.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
bin="$build_dir/bin/trtllm-run"
tests=1000
check=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --tests) tests=$2; shift 2 ;;
    --check) check=1; shift ;;
    --smoke) tests=100; shift ;;
    *) echo "usage: $0 [--tests N] [--check] [--smoke]" >&2; exit 2 ;;
  esac
done
[[ -x $bin ]] || { echo "$bin not found: build trtllm-run first (BUILD_DIR=...)" >&2; exit 2; }
root=$(mktemp -d "${TMPDIR:-/tmp}/html_report_bench.XXXXXX")
trap 'rm -rf -- "$root"' EXIT

python3 - "$root" "$tests" <<'PY'
import json, os, sys
root, n = sys.argv[1], int(sys.argv[2])
run_dir = os.path.join(root, "stage")
os.makedirs(run_dir)
shard_runs, tests = [], []
for split in range(1, 5):
    work = os.path.join(root, "shard_%d" % split)
    os.makedirs(work)
    names = ["tests/integration/defs/accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::"
             "test_fp8_tp4[%d-latency-cuda_graph=%s]" % (i, i % 2 == 0)
             for i in range(n) if i % 4 == split - 1]
    result = {"schema_version": 1, "status": "FAILED", "reason": "exit 1", "scenario": "local_slurm",
              "started_at": "2026-12-02T10:00:00Z", "finished_at": "2026-12-02T10:30:00Z",
              "diagnosis": "pytest: tests failed", "log_file": work + "/log",
              "log_tail": ["E   AssertionError: accuracy %d below threshold" % k for k in range(60)],
              "details": {"job_id": str(1000 + split)}}
    json.dump(result, open(os.path.join(work, "result.json"), "w"))
    shard_runs.append({"split_id": split, "round": 0, "status": "FAILED", "job_id": str(1000 + split),
                       "work_dir": work, "tests": names})
for i in range(n):
    failed, rerun = i % 10 == 3, i % 10 == 5
    attempts = [{"outcome": "failed" if failed or rerun else "passed", "seconds": 30.5,
                 "message": "AssertionError: accuracy 0.61 < 0.65\n" * 5 if failed or rerun else ""}]
    if rerun:
        attempts.append({"outcome": "passed", "seconds": 29.0})
    tests.append({"id": shard_runs[i % 4]["tests"][i // 4], "split_id": i % 4 + 1,
                  "outcome": "failed" if failed else "flaky" if rerun else "passed",
                  "seconds": 30.5, "reruns": 1 if rerun else 0, "attempts": attempts})
stage = {"schema_version": 1, "kind": "stage", "stage": "A100X-PyTorch-1", "status": "FAILED",
         "reason": "bench", "run_dir": run_dir, "started_at": "2026-12-02T10:00:00Z",
         "finished_at": "2026-12-02T10:31:00Z", "duration_seconds": 1860,
         "counts": {"total": n}, "shard_runs": shard_runs, "tests": tests,
         "sessions": [{"scenario": "local_slurm"}], "warnings": []}
json.dump(stage, open(os.path.join(run_dir, "result.json"), "w"))
PY

median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
time_runs() {
  local out=$root/times.$1
  shift
  for _ in $(seq 10); do
    local start=$EPOCHREALTIME
    "$@" >/dev/null 2>&1 || { "$@"; exit 1; }
    echo "$start $EPOCHREALTIME" | awk '{printf "%.6f\n", $2 - $1}' >>"$out"
  done
  median <"$out"
}
page=$root/report.html
report_s=$(time_runs report "$bin" report "$root/stage" --html "$page" --no-history --no-scheduler)
floor_s=$(time_runs floor "$bin" --version)
bytes=$(stat -c %s "$page")
rows=$(grep -o '<tr class="o-' "$page" | wc -l)
printf '== trtllm-run report of a stage of %d tests (median of 10 runs)\n' "$tests"
printf '%-44s %-10s %s\n' metric target measured
printf '%-44s %-10s %s\n' "page size (bytes)" "<= 1.5 MB" "$bytes"
printf '%-44s %-10s %s\n' "table rows (tests + reruns)" "" "$rows"
printf '%-44s %-10s %s\n' "report wall time (s)" "<= 1" "$report_s"
printf '%-44s %-10s %s\n' "trtllm-run --version (process floor, s)" "" "$floor_s"
if [[ $check -eq 1 ]]; then
  awk -v b="$bytes" -v s="$report_s" 'BEGIN {exit !(b <= 1500000 && s <= 1.0)}' ||
    { echo "result: target missed"; exit 1; }
  echo "result: targets met"
fi
