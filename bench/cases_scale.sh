#!/bin/bash
# Many local_slurm cases (bench/README.md "cases_scale.sh"): `trtllm-run run --cases FILE
# --scenario local_slurm` with N custom-command cases (`true`; 1 CPU, 64 MB) against a loop
# of plain `sbatch --wrap true` of the same N jobs in the same run.
#
#   (a) submit side, N cases (default 1,000), one sbatch per case (TRTLLM_RUN_SLURM_ARRAYS=0;
#       arrays are the default): every job is submitted held (they never run and
#       block no one), `--max-parallel N` (every case in flight at once, as the loop queues
#       every job). Measured: wall time from start to all N submitted, sbatch calls,
#       trtllm-run's peak RSS; then Ctrl-C (SIGINT): time until every job was cancelled and
#       trtllm-run exited. The same N jobs by the sbatch loop: its wall time to submit; and
#       by N plain sbatch at once (xargs -P N), what concurrent submission alone costs.
#   (b) to the verdict, M cases per case likewise (default 100; the cluster runs 4 at a time): the same, not
#       held, to every case's verdict: wall time to all submitted and to all judged.
#   Planning alone: `trtllm-run plan --cases` of the N cases (per-case planning cost).
#
# Every sbatch (trtllm-run's and the loop's) goes through a PATH wrapper that counts the calls,
# logs their end times and adds --job-name=trtllm-bench-<pid> --nice=1000 --mem=64M --time=10
# (and --hold for (a)); all jobs of that name are cancelled at the end, on failure and on
# SIGINT/SIGTERM/SIGHUP. Needs the test cluster (tests/services/slurm.sh ensure).
#   (a2) the same N cases held as job arrays (TRTLLM_RUN_SLURM_ARRAYS=1): wall to all submitted
#       (target <= 0.2x the loop), sbatch calls (one per MaxArraySize chunk), peak threads and
#       RSS with every case in flight (target <= 60 MB), then SIGINT as in (a).
#   bench/cases_scale.sh [--cases N] [--verdict-cases M] [--partition P] [--check] [--smoke]
#   [--arrays-only: the loop, all at once and (a2) only]
#   (BUILD_DIR: the build, default build; --smoke: 20 and 10 cases, for ctest)
# --check: exit 1 when a target is missed (each case submitted once, no job left behind,
# every verdict PASSED, peak RSS <= 100 MB, (a) no slower than the loop; --smoke checks
# only the first three: at 20 cases the fixed start-up cost dominates the timing).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
bin=$(realpath -m "$build_dir/bin/trtllm-run")
cases=1000
verdict_cases=100
partition=batch,cpu
check=0
smoke=0
arrays_only=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --cases) cases=$2; shift 2 ;;
    --verdict-cases) verdict_cases=$2; shift 2 ;;
    --partition) partition=$2; shift 2 ;;
    --check) check=1; shift ;;
    --arrays-only) arrays_only=1; shift ;;
    --smoke) cases=20; verdict_cases=10; check=1; smoke=1; shift ;;
    *) echo "usage: $0 [--cases N] [--verdict-cases M] [--partition P] [--check] [--smoke] [--arrays-only]" >&2
       exit 2 ;;
  esac
done
for n in "$cases" "$verdict_cases"; do
  [[ $n =~ ^[0-9]+$ && $n -ge 1 && $n -le 5000 ]] ||
    { echo "$0: case counts must be whole numbers from 1 to 5000, got '$n'" >&2; exit 2; }
done
[[ -x $bin ]] || { echo "$bin not found: build trtllm-run and its plugins (BUILD_DIR=...)" >&2; exit 2; }
tests/services/slurm.sh ensure >/dev/null

tag=trtllm-bench-$$
root=$(mktemp -d "${TMPDIR:-/tmp}/trtllm_cases_scale.XXXXXX")
child="" trtllm_pid=""
cleanup() {
  [[ -n $trtllm_pid ]] && kill "$trtllm_pid" 2>/dev/null && sleep 2
  [[ -n $child ]] && kill "$child" 2>/dev/null
  scancel --name="$tag" >/dev/null 2>&1 || true
  rm -rf -- "$root"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
real_sbatch=$(command -v sbatch)
echo "cases_scale: jobs named $tag in $root" >&2

# A directory with an `sbatch` that logs "<submit|test> <start> <end> <rc>" per call to
# DIR/calls.log and adds the benchmark's options (and $2, e.g. --hold).
make_wrapper() {
  mkdir -p "$1"
  cat >"$1/sbatch" <<EOF
#!/bin/bash
start=\$EPOCHREALTIME
kind=submit
for arg; do [[ \$arg == --test-only ]] && kind=test; done
$real_sbatch --job-name=$tag --nice=1000 --mem=64M --time=10 $2 "\$@"
rc=\$?
echo "\$kind \$start \$EPOCHREALTIME \$rc" >>$1/calls.log
exit \$rc
EOF
  chmod 755 "$1/sbatch"
  : >"$1/calls.log"
}
make_wrapper "$root/held" --hold
make_wrapper "$root/run" ""

# The cases file of $1 cases: `true` on no GPU, unique model names.
write_cases() {
  {
    echo "defaults: {custom_cmd: 'true', required_devices: 0}"
    echo "cases:"
    for ((i = 1; i <= $1; ++i)); do echo "  - {model_name: scale$i}"; done
  } >"$2"
}
mkdir -p "$root/repo"
write_cases "$cases" "$root/cases_a.yaml"
write_cases "$verdict_cases" "$root/cases_b.yaml"
common=(--scenario local_slurm --repo-root "$root/repo" --partition "$partition"
  --skip-install true --container-runtime none --container-image none)

count_calls() { awk -v k="$2" '$1 == k && $4 == 0 { n++ } END { print n + 0 }' "$1/calls.log"; }
# Seconds from $2 to the end of the last successful submit in $1/calls.log.
last_submit_after() {
  awk -v t0="$2" '$1 == "submit" && $4 == 0 && $3 > m { m = $3 } END { printf "%.2f", m - t0 }' \
    "$1/calls.log"
}
first_submit_after() {
  awk -v t0="$2" '$1 == "submit" && (m == "" || $2 < m) { m = $2 } END { printf "%.2f", m - t0 }' \
    "$1/calls.log"
}
left_in_queue() { squeue -h --name="$tag" -o %i 2>/dev/null | wc -l; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Runs trtllm-run ($1: wrapper dir, $2: run dir, rest: arguments) in the background, sampling
# its VmHWM; with $STOP_AFTER set, sends SIGINT once that many submits succeeded. Sets
# run_rc, run_hwm_kb (trtllm-run's own VmHWM, last sample), run_maxrss_kb (/usr/bin/time:
# the largest of it and its children), run_start, run_end, run_sigint.
run_trtllm() {
  local wrap=$1 run_dir=$2
  shift 2
  run_hwm_kb=0 run_threads=0 run_sigint="" run_start=$EPOCHREALTIME
  local stop_at=""
  PATH=$wrap:$PATH /usr/bin/time -f '%M' -o "$run_dir.time" \
    "$bin" run "$@" --run-dir "$run_dir" >/dev/null 2>"$run_dir.err" &
  child=$!
  local pid="" hwm
  while kill -0 "$child" 2>/dev/null; do
    [[ -z $pid ]] && pid=$(pgrep -P "$child" -x trtllm-run || true) && trtllm_pid=$pid
    if [[ -n $pid ]]; then
      hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
      [[ -n $hwm && $hwm -gt $run_hwm_kb ]] && run_hwm_kb=$hwm
      threads=$(awk '/^Threads:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
      [[ -n $threads && $threads -gt $run_threads ]] && run_threads=$threads
      if [[ -n ${STOP_AFTER:-} && -z $run_sigint && -z $stop_at ]] &&
        (($(count_calls "$wrap" submit) >= STOP_AFTER)); then
        # $STOP_DELAY: seconds more in flight (the watcher's rounds over every case) first.
        stop_at=$(awk -v t="$EPOCHREALTIME" -v d="${STOP_DELAY:-0}" 'BEGIN { printf "%.3f", t + d }')
      fi
      if [[ -n $stop_at && -z $run_sigint ]] &&
        awk -v t="$EPOCHREALTIME" -v s="$stop_at" 'BEGIN { exit !(t >= s) }'; then
        run_sigint=$EPOCHREALTIME
        kill -INT "$pid"
      fi
    fi
    sleep 0.2
  done
  run_rc=0
  wait "$child" || run_rc=$?
  run_end=$EPOCHREALTIME
  child="" trtllm_pid=""
  run_maxrss_kb=$(tail -1 "$run_dir.time" 2>/dev/null | tr -dc 0-9)
}

# Planning alone (nothing written or submitted).
plan_start=$EPOCHREALTIME
PATH=$root/run:$PATH "$bin" plan --cases "$root/cases_a.yaml" "${common[@]}" >/dev/null 2>&1 ||
  { echo "cases_scale: trtllm-run plan --cases failed" >&2; exit 3; }
plan_s=$(elapsed "$plan_start" "$EPOCHREALTIME")
probe_tests=$(count_calls "$root/run" test)
: >"$root/run/calls.log"

# The baseline: a loop of plain sbatch, held, then cancelled.
loop_start=$EPOCHREALTIME
for ((i = 1; i <= cases; ++i)); do
  PATH=$root/held:$PATH sbatch --parsable --partition="$partition" --ntasks=1 \
    --output=/dev/null --wrap true >/dev/null ||
    { echo "cases_scale: plain sbatch failed" >&2; exit 3; }
done
loop_s=$(elapsed "$loop_start" "$EPOCHREALTIME")
loop_calls=$(count_calls "$root/held" submit)
scancel --name="$tag" >/dev/null 2>&1 || true
while (($(left_in_queue) > 0)); do sleep 1; done
: >"$root/held/calls.log"
# The same N plain sbatch all at once (as trtllm-run's N case threads submit): what
# concurrent submission alone costs.
burst_start=$EPOCHREALTIME
seq "$cases" | PATH=$root/held:$PATH xargs -P "$cases" -I{} sbatch --parsable \
  --partition="$partition" --ntasks=1 --output=/dev/null --wrap true >/dev/null ||
  { echo "cases_scale: plain sbatch (all at once) failed" >&2; exit 3; }
burst_s=$(elapsed "$burst_start" "$EPOCHREALTIME")
scancel --name="$tag" >/dev/null 2>&1 || true
while (($(left_in_queue) > 0)); do sleep 1; done
: >"$root/held/calls.log"

a_threads=-
if [[ $arrays_only == 0 ]]; then
# (a) N cases, held, SIGINT once all are submitted.
STOP_AFTER=$cases TRTLLM_RUN_SLURM_ARRAYS=0 run_trtllm "$root/held" "$root/run_a" --cases "$root/cases_a.yaml" \
  "${common[@]}" --max-parallel "$cases"
a_rc=$run_rc a_hwm=$run_hwm_kb a_maxrss=$run_maxrss_kb a_threads=$run_threads
a_first=$(first_submit_after "$root/held" "$run_start")
a_submitted=$(last_submit_after "$root/held" "$run_start")
a_calls=$(count_calls "$root/held" submit)
a_tests=$(count_calls "$root/held" test)
a_cancel=$([[ -n $run_sigint ]] && elapsed "$run_sigint" "$run_end" || echo -)
a_left=$(left_in_queue)
a_cancelled=$(jq '[.cases[] | select(.status == "CANCELLED")] | length' "$root/run_a/result.json" \
  2>/dev/null || echo 0)
scancel --name="$tag" >/dev/null 2>&1 || true
fi

# (a2) The same N cases as job arrays (TRTLLM_RUN_SLURM_ARRAYS=1): one sbatch per chunk of
# MaxArraySize, SIGINT 3 s after the last (every case in flight, watched).
max_array=$(scontrol show config 2>/dev/null | awk '$1 == "MaxArraySize" { print $3 }')
max_array=${max_array:-1001}
arrays_expected=$(((cases + max_array - 1) / max_array))
: >"$root/held/calls.log"
STOP_AFTER=$arrays_expected STOP_DELAY=3 TRTLLM_RUN_SLURM_ARRAYS=1 run_trtllm "$root/held" \
  "$root/run_a2" --cases "$root/cases_a.yaml" "${common[@]}" --max-parallel "$cases"
a2_rc=$run_rc a2_hwm=$run_hwm_kb a2_maxrss=$run_maxrss_kb a2_threads=$run_threads
a2_submitted=$(last_submit_after "$root/held" "$run_start")
a2_calls=$(count_calls "$root/held" submit)
a2_cancel=$([[ -n $run_sigint ]] && elapsed "$run_sigint" "$run_end" || echo -)
a2_left=$(left_in_queue)
a2_cancelled=$(jq '[.cases[] | select(.status == "CANCELLED")] | length' "$root/run_a2/result.json" \
  2>/dev/null || echo 0)
a2_jobs=$(jq -r '.sessions[0].stats.jobs // "-"' "$root/run_a2/result.json" 2>/dev/null || echo -)
scancel --name="$tag" >/dev/null 2>&1 || true

if [[ $arrays_only == 0 ]]; then
# (b) M cases to the verdict.
unset STOP_AFTER
TRTLLM_RUN_SLURM_ARRAYS=0 run_trtllm "$root/run" "$root/run_b" --cases "$root/cases_b.yaml" "${common[@]}" \
  --max-parallel "$verdict_cases"
b_rc=$run_rc b_hwm=$run_hwm_kb b_maxrss=$run_maxrss_kb
b_submitted=$(last_submit_after "$root/run" "$run_start")
b_judged=$(elapsed "$run_start" "$run_end")
b_calls=$(count_calls "$root/run" submit)
b_tests=$(count_calls "$root/run" test)
b_passed=$(jq '[.cases[] | select(.status == "PASSED")] | length' "$root/run_b/result.json" \
  2>/dev/null || echo 0)
b_stats=$(jq -r '.sessions[0].stats | "\(.submits) submits, \(.controller_queries) controller / \(.accounting_queries) accounting queries, \(.watchers) watcher"' \
  "$root/run_b/result.json" 2>/dev/null || echo "-")
b_left=$(left_in_queue)
fi

# PASS or MISS for the condition $1 (called in $(...): a miss is recorded in a file).
verdict() { if eval "$1"; then echo PASS; else echo x >>"$root/missed"; echo MISS; fi; }
# The same for the speed and memory targets, which the smoke run only prints.
perf_verdict() { if [[ $smoke == 1 ]]; then eval "$1" && echo "(pass)" || echo "(miss)"; else verdict "$1"; fi; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
row() { printf "%-46s %-10s %-24s %s\n" "$@"; }
echo "== $cases local_slurm cases (custom 'true', 1 CPU, 64 MB, partition $partition) vs a loop of plain sbatch, same run"
row metric target trtllm-run "plain sbatch: a loop | all at once"
if [[ $arrays_only == 0 ]]; then
row "(a) $cases cases, held: wall to all submitted (s)" "<= loop" \
  "$a_submitted $(perf_verdict "awk 'BEGIN { exit !($a_submitted <= $loop_s) }'")" \
  "$loop_s | $burst_s"
row "  ratio trtllm-run / loop" "" \
  "$(awk -v a="$a_submitted" -v b="$loop_s" 'BEGIN { printf "%.2f", a / b }')" ""
row "  per case (ms)" "" \
  "$(awk -v a="$a_submitted" -v n="$cases" 'BEGIN { printf "%.1f", 1000 * a / n }')" \
  "$(awk -v a="$loop_s" -v b="$burst_s" -v n="$cases" 'BEGIN { printf "%.1f | %.1f", 1000 * a / n, 1000 * b / n }')"
row "  start to first submit (s)" "" "$a_first" "-"
row "  planning alone: plan --cases (s, ms/case)" "" \
  "$plan_s, $(awk -v a="$plan_s" -v n="$cases" 'BEGIN { printf "%.2f", 1000 * a / n }')" "-"
row "  sbatch submits (one per case)" "$cases" "$a_calls $(verdict "[[ $a_calls == $cases ]]")" \
  "$loop_calls"
row "  sbatch --test-only (the probe)" "" "$a_tests (plan alone: $probe_tests)" "0"
row "  peak RSS (MB): own VmHWM / with children" "<= 100" \
  "$(mb "$a_hwm") / $(mb "${a_maxrss:-0}") $(perf_verdict "((a_hwm <= 102400))")" "-"
row "  SIGINT -> all cancelled, exit (s)" "" "$a_cancel (exit $a_rc)" "-"
row "  cases CANCELLED / jobs left in the queue" "$cases / 0" \
  "$a_cancelled / $a_left $(verdict "[[ $a_cancelled == $cases && $a_left == 0 ]]")" "-"
fi
row "(a2) $cases cases as job arrays, held: wall to all submitted (s)" "<= 0.2 x loop" \
  "$a2_submitted $(perf_verdict "awk 'BEGIN { exit !($a2_submitted <= 0.2 * $loop_s) }'")" \
  "$loop_s | $burst_s"
row "  ratio arrays / loop, arrays / all at once" "<= 0.2" \
  "$(awk -v a="$a2_submitted" -v b="$loop_s" -v c="$burst_s" 'BEGIN { printf "%.3f, %.3f", a / b, a / c }')" ""
row "  sbatch submits (one per array of <= $max_array)" "$arrays_expected" \
  "$a2_calls $(verdict "[[ $a2_calls == $arrays_expected ]]")" "$loop_calls"
row "  cases watched by the one watcher" "$cases" "$a2_jobs $(verdict "[[ $a2_jobs == $cases ]]")" "-"
row "  peak threads: arrays / thread per case (a)" "< 10" \
  "$a2_threads / $a_threads $(perf_verdict "((a2_threads < 10))")" "-"
row "  peak RSS (MB): own VmHWM / with children" "<= 60" \
  "$(mb "$a2_hwm") / $(mb "${a2_maxrss:-0}") $(perf_verdict "((a2_hwm <= 61440))")" "-"
row "  SIGINT -> all cancelled, exit (s)" "" "$a2_cancel (exit $a2_rc)" "-"
row "  cases CANCELLED / jobs left in the queue" "$cases / 0" \
  "$a2_cancelled / $a2_left $(verdict "[[ $a2_cancelled == $cases && $a2_left == 0 ]]")" "-"
if [[ $arrays_only == 0 ]]; then
row "(b) $verdict_cases cases to the verdict: wall to all submitted (s)" "" "$b_submitted" "-"
row "  wall to all judged (s)" "" "$b_judged" "-"
row "  cases PASSED" "$verdict_cases" \
  "$b_passed $(verdict "[[ $b_passed == $verdict_cases && $b_rc == 0 ]]")" "-"
row "  sbatch submits / --test-only" "$verdict_cases" \
  "$b_calls / $b_tests $(verdict "[[ $b_calls == $verdict_cases ]]")" "-"
row "  session stats" "" "$b_stats" ""
row "  peak RSS (MB): own VmHWM / with children" "<= 100" \
  "$(mb "$b_hwm") / $(mb "${b_maxrss:-0}") $(perf_verdict "((b_hwm <= 102400))")" "-"
row "  jobs left in the queue" "0" "$b_left $(verdict "[[ $b_left == 0 ]]")" "-"
fi
miss=$([[ -s $root/missed ]] && echo 1 || echo 0)
echo
echo "result: $([[ $miss == 0 ]] && echo "targets met" || echo "TARGETS MISSED")"
if [[ $check == 1 && $miss == 1 ]]; then
  tail -5 "$root/run_a.err" "$root/run_b.err" >&2
  exit 1
fi
