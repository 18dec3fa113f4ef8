#!/bin/bash
# A CI stage on the test cluster (bench/README.md "stage.sh"): `trtllm-run stage
# Bench-PyTorch --scenario local_slurm` on a fixture checkout in TensorRT-LLM's shape
# (jenkins/L0_Test.groovy with a stage family of 3 splits, a test-db YAML, waives.txt,
# tests/integration/defs/.test_durations and a test file) that renders N tests (default
# 300) of S seconds (default 1), every one passing, so that least_duration splits them evenly.
#
# Measured, from trtllm-run's start to its exit:
#   wall time        against the longest shard's run time (sacct Start..End of the shard
#                    jobs, round 0); target <= 1.2x + 30 s
#   controller queries per job-minute
#                    every scontrol/squeue/sacct trtllm-run ran (PATH wrappers log them;
#                    sacct is the accounting daemon's, counted all the same) over the shard
#                    jobs' summed run time; target <= 2
#   start spread     the latest shard job's start minus the first's (sacct); the issue's
#                    concurrency check: <= 10 s
#   correctness      every rendered test once in the merged JUnit, one job per split, the
#                    stage PASSED, no job left in the queue
# Every sbatch goes through a PATH wrapper that adds --job-name=trtllm-bench-stage-<pid>
# --mem=256M --time=10 (1 CPU each, partition batch,cpu: the 2-node test cluster runs 4
# such jobs at once); all jobs of that name are cancelled at the end, on failure and on
# SIGINT/SIGTERM/SIGHUP, and the temp tree is removed. Needs root and the test cluster
# (tests/services/slurm.sh ensure).
#   bench/stage.sh [--tests N] [--seconds S] [--partition P] [--python PY] [--check] [--smoke]
#   (BUILD_DIR: the build, default build; --python: the shards' interpreter, with pytest,
#   default /usr/bin/python3; KEEP_TMP=1 keeps the temp tree; --smoke: 30 tests of 1 s, correctness only, for
#   ctest; --check: exit 1 when a target is missed)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
bin=$(realpath -m "$build_dir/bin/trtllm-run")
tests=300
seconds=1
partition=batch,cpu
python=/usr/bin/python3
check=0
smoke=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --tests) tests=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --partition) partition=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --check) check=1; shift ;;
    --smoke) tests=30; seconds=1; check=1; smoke=1; shift ;;
    *) echo "usage: $0 [--tests N] [--seconds S] [--partition P] [--python PY] [--check] [--smoke]" >&2
       exit 2 ;;
  esac
done
[[ $tests =~ ^[0-9]+$ && $tests -ge 3 && $tests -le 5000 ]] ||
  { echo "$0: --tests must be a whole number from 3 to 5000, got '$tests'" >&2; exit 2; }
[[ $seconds =~ ^[0-9]+$ && $seconds -ge 1 && $seconds -le 60 ]] ||
  { echo "$0: --seconds must be a whole number from 1 to 60, got '$seconds'" >&2; exit 2; }
[[ $partition =~ ^[A-Za-z0-9_,-]+$ ]] ||
  { echo "$0: --partition must be partition names separated by commas, got '$partition'" >&2
    exit 2; }
[[ -x $bin ]] || { echo "$bin not found: build trtllm-run and its plugins (BUILD_DIR=...)" >&2; exit 2; }
"$python" -c 'import pytest' 2>/dev/null ||
  { echo "$0: $python cannot import pytest: give --python an interpreter that has it" >&2; exit 2; }
command -v jq >/dev/null || { echo "$0: jq is needed" >&2; exit 2; }
tests/services/slurm.sh ensure >/dev/null

splits=3
stage=Bench-PyTorch
tag=trtllm-bench-stage-$$
root=$(mktemp -d "${TMPDIR:-/tmp}/trtllm_stage_bench.XXXXXX")
child=""
cleanup() {
  [[ -n $child ]] && kill -INT "$child" 2>/dev/null && sleep 2
  scancel --name="$tag" >/dev/null 2>&1 || true
  [[ -n ${KEEP_TMP:-} ]] || rm -rf -- "$root"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
echo "stage: jobs named $tag in $root" >&2

# PATH wrappers: sbatch adds the benchmark's options; scontrol, squeue and sacct log one
# line per call ("<tool> <start> <args>") to $root/bin/queries.log.
mkdir -p "$root/bin"
: >"$root/bin/queries.log"
: >"$root/bin/submits.log"
real_sbatch=$(command -v sbatch)
cat >"$root/bin/sbatch" <<EOF
#!/bin/bash
kind=submit
for arg; do [[ \$arg == --test-only ]] && kind=test; done
$real_sbatch --job-name=$tag --mem=256M --time=10 "\$@"
rc=\$?
echo "\$kind \$EPOCHREALTIME \$rc" >>$root/bin/submits.log
exit \$rc
EOF
for tool in scontrol squeue sacct; do
  real=$(command -v "$tool")
  cat >"$root/bin/$tool" <<EOF
#!/bin/bash
echo "$tool \$EPOCHREALTIME \$*" >>$root/bin/queries.log
exec $real "\$@"
EOF
done
chmod 755 "$root/bin"/*

# The fixture checkout: the stage family Bench-PyTorch of 3 splits (x86SlurmTestConfigs'
# shape: platform, test-db context, split id, split count, GPUs, nodes, sbatch), one test-db
# block for pre-merge PyTorch stages, N parametrized tests of S seconds with their durations.
repo=$root/repo
mkdir -p "$repo/jenkins" "$repo/tests/integration/defs" \
  "$repo/tests/integration/test_lists/test-db"
{
  echo "def launchTestJobs(pipeline, testFilter)"
  echo "{"
  echo "    x86SlurmTestConfigs = ["
  for ((k = 1; k <= splits; ++k)); do
    echo "        \"$stage-$k\": [\"cpu-x1\", \"l0_bench\", $k, $splits, 1, 1, true],"
  done
  echo "    ]"
  echo "}"
} >"$repo/jenkins/L0_Test.groovy"
cat >"$repo/tests/integration/defs/test_bench.py" <<EOF
import time

import pytest


@pytest.mark.parametrize("index", range($tests))
def test_sleep(index):
    time.sleep($seconds)
EOF
{
  echo "version: 0.0.1"
  echo "l0_bench:"
  echo "- condition:"
  echo "    ranges:"
  echo "      system_gpu_count:"
  echo "        gte: 0"
  echo "        lte: 8"
  echo "    terms:"
  echo "      stage: pre_merge"
  echo "      backend: pytorch"
  echo "  tests:"
  for ((i = 0; i < tests; ++i)); do echo "  - test_bench.py::test_sleep[$i]"; done
} >"$repo/tests/integration/test_lists/test-db/l0_bench.yml"
echo "# none waived" >"$repo/tests/integration/test_lists/waives.txt"
{
  echo "{"
  for ((i = 0; i < tests; ++i)); do
    echo "  \"test_bench.py::test_sleep[$i]\": $seconds$([[ $i -lt $((tests - 1)) ]] && echo ,)"
  done
  echo "}"
} >"$repo/tests/integration/defs/.test_durations"

# The stage, every split of the family, to its verdict.
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$EPOCHREALTIME
rc=0
PATH=$root/bin:$PATH "$bin" stage "$stage" --scenario local_slurm --repo-root "$repo" \
  --partition "$partition" --required-devices 0 --skip-install true --container-runtime none \
  --container-image none --python "$python" --junit "$root/stage.xml" --json \
  >"$root/result.json" 2>"$root/stage.err" &
child=$!
wait "$child" || rc=$?
end=$EPOCHREALTIME
child=""
wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')

status=$(jq -r '.status // "-"' "$root/result.json" 2>/dev/null || echo -)
passed=$(jq -r '.counts.passed // 0' "$root/result.json" 2>/dev/null || echo 0)
mapfile -t job_ids < <(jq -r '.shard_runs[] | select(.round == 0) | .job_id' \
  "$root/result.json" 2>/dev/null | grep -E '^[0-9]+$' || true)
submits=$(awk '$1 == "submit" && $3 == 0 { n++ } END { print n + 0 }' "$root/bin/submits.log")
probes=$(awk '$1 == "test" { n++ } END { print n + 0 }' "$root/bin/submits.log")

# The shard jobs' start and end (epoch seconds) from accounting; it may lag a few seconds.
sacct_rows=""
for _ in $(seq 20); do
  if ((${#job_ids[@]} > 0)); then
    sacct_rows=$(SLURM_TIME_FORMAT=%s sacct -n -X -P -o JobID,Start,End,State \
      -j "$(IFS=,; echo "${job_ids[*]}")" 2>/dev/null | grep -E '^[0-9]+\|[0-9]+\|[0-9]+\|' || true)
  fi
  [[ $(printf '%s' "$sacct_rows" | grep -c . || true) -ge ${#job_ids[@]} ]] && break
  sleep 1
done
read -r longest job_seconds spread < <(printf '%s\n' "$sacct_rows" | awk -F'|' '
  NF >= 3 { d = $3 - $2; if (d > m) m = d; s += d
            if (first == "" || $2 < first) first = $2; if ($2 > last) last = $2 }
  END { printf "%d %d %d\n", m, s, last - first }')
queries=$(wc -l <"$root/bin/queries.log")
by_tool=$(awk '{ n[$1]++ } END { printf "scontrol %d, squeue %d, sacct %d", n["scontrol"], n["squeue"], n["sacct"] }' \
  "$root/bin/queries.log")
per_job_minute=$(awk -v q="$queries" -v s="$job_seconds" 'BEGIN { printf "%.2f", (s > 0 ? q / (s / 60) : 99) }')
wall_target=$(awk -v l="$longest" 'BEGIN { printf "%.1f", 1.2 * l + 30 }')
stats=$(jq -r '.sessions[0].stats | "\(.controller_queries) controller / \(.accounting_queries) accounting queries, \(.watchers) watcher"' \
  "$root/result.json" 2>/dev/null || echo "-")

# The merged JUnit: every rendered test exactly once.
junit_cases=$(grep -o '<testcase [^>]*name="[^"]*"' "$root/stage.xml" 2>/dev/null |
  sed 's/.*name="//; s/"$//' | sort | uniq | wc -l)
junit_total=$(grep -c '<testcase ' "$root/stage.xml" 2>/dev/null || echo 0)
left=$(squeue -h --name="$tag" -o %i 2>/dev/null | wc -l)

# PASS or MISS for the condition $1 (a miss is recorded in a file); the smoke run only
# prints the timing targets.
verdict() { if eval "$1"; then echo PASS; else echo x >>"$root/missed"; echo MISS; fi; }
perf_verdict() { if [[ $smoke == 1 ]]; then eval "$1" && echo "(pass)" || echo "(miss)"; else verdict "$1"; fi; }
row() { printf "%-44s %-14s %s\n" "$@"; }
echo "== stage $stage: $tests tests of $seconds s in $splits splits, local_slurm (1 CPU, 256 MB, partition $partition)"
echo "   host load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
row metric target measured
row "wall time, start to exit (s)" "<= $wall_target" \
  "$wall $(perf_verdict "awk 'BEGIN { exit !($wall <= $wall_target) }'")"
row "  longest shard's run time (s, sacct)" "" "$longest"
row "  shard jobs' summed run time (s)" "" "$job_seconds"
row "controller queries per job-minute" "<= 2" \
  "$per_job_minute $(perf_verdict "awk 'BEGIN { exit !($per_job_minute <= 2) }'")"
row "  queries trtllm-run ran" "" "$queries ($by_tool)"
row "  session stats" "" "$stats"
row "shard jobs' start spread (s, sacct)" "<= 10" \
  "$spread $(perf_verdict "((spread <= 10))")"
row "shard jobs (round 0) / sbatch submits" "$splits / $splits" \
  "${#job_ids[@]} / $submits (+$probes --test-only) $(verdict "[[ ${#job_ids[@]} == $splits && $submits == $splits ]]")"
row "stage status, tests passed" "PASSED, $tests" \
  "$status, $passed $(verdict "[[ $status == PASSED && $passed == $tests && $rc == 0 ]]")"
row "merged JUnit: testcases / distinct" "$tests / $tests" \
  "$junit_total / $junit_cases $(verdict "[[ $junit_total == $tests && $junit_cases == $tests ]]")"
row "jobs left in the queue" "0" "$left $(verdict "[[ $left == 0 ]]")"
miss=$([[ -s $root/missed ]] && echo 1 || echo 0)
echo
echo "result: $([[ $miss == 0 ]] && echo "targets met" || echo "TARGETS MISSED")"
if [[ $check == 1 && $miss == 1 ]]; then
  tail -20 "$root/stage.err" >&2
  exit 1
fi
