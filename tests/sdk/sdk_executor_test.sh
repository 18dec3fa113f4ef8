#!/bin/bash
# A third-party executor gets what the built-in Slurm executors get: install the build
# into a temp prefix, build tests/sdk (the sdk_slurm executor: plugin SDK headers only,
# Slurm traits, executor_options of its own) out of tree against it, and drive it through
# the installed trtllm-run on the test cluster: the probe and validated partition (a bad
# one is exit 2), slurm_env in the placement, its options (a bad one is exit 2, nothing
# written), `trtllm-run status WORK_DIR` answered by the executor, and real Slurm jobs run
# through the SDK's public Slurm kit (SlurmClient submit, SlurmWatcher, JudgeSlurmJob):
# a passing job, a failing one judged FAILED with its exit code from the end marker, and
# one the watcher scancels at the monitor timeout (TIMEOUT, gone from the queue).
#
#   sdk_executor_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
BUILD_DIR=$(cd "$1" && pwd -P)
SOURCE_DIR=$(cd "$2" && pwd -P)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/trtllm_run_sdk_test.XXXXXX")
TMP=$(cd "$TMP" && pwd -P)
chmod 755 "$TMP"  # the Slurm job (same user) writes its log here
trap 'rm -rf "$TMP"' EXIT
PREFIX="$TMP/prefix"
PLUGIN_BUILD="$TMP/build-sdk"
REPO="$TMP/repo"
mkdir -p "$REPO"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Runs a command, keeping its output in $TMP/<name>.out/.err and its exit code in $rc.
run_step() {
  local name=$1
  shift
  set +e
  "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
  rc=$?
  set -e
}

show() {
  echo "--- stdout of $1:" >&2
  cat "$TMP/$1.out" >&2
  echo "--- stderr of $1:" >&2
  cat "$TMP/$1.err" >&2
}

expect_rc() {
  local name=$1 want=$2
  [[ $rc -eq $want ]] || {
    show "$name"
    fail "$name exited $rc, want $want"
  }
}

expect_in() {
  local name=$1 text=$2
  grep -qF -- "$text" "$TMP/$name.out" "$TMP/$name.err" || {
    show "$name"
    fail "$name does not say '$text'"
  }
}

no_work_dirs() {
  if compgen -G "$REPO/work_dirs/*" >/dev/null; then
    fail "$1 left a work dir: $(ls "$REPO/work_dirs")"
  fi
}

echo "== install $BUILD_DIR into $PREFIX and build tests/sdk against it"
run_step install cmake --install "$BUILD_DIR" --prefix "$PREFIX"
expect_rc install 0
run_step configure cmake -S "$SOURCE_DIR/tests/sdk" -B "$PLUGIN_BUILD" -G Ninja \
  -DCMAKE_PREFIX_PATH="$PREFIX"
expect_rc configure 0
run_step build cmake --build "$PLUGIN_BUILD"
expect_rc build 0
[[ -f "$PLUGIN_BUILD/executor_sdk_slurm.so" ]] || fail "no $PLUGIN_BUILD/executor_sdk_slurm.so"

unset TRTLLM_RUN_PLUGIN_PATH
CLI=("$PREFIX/bin/trtllm-run")
export TRTLLM_RUN_PLUGIN_PATH="$PLUGIN_BUILD"
CASE=(--scenario sdk_slurm --repo-root "$REPO" --model-name sdk)

echo "== a partition that does not exist: exit 2, nothing written"
run_step bad-partition "${CLI[@]}" plan "${CASE[@]}" --custom-cmd 'echo hi' --partition nope
expect_rc bad-partition 2
expect_in bad-partition "partition 'nope' (--partition) does not exist on this cluster"
expect_in bad-partition "debug"
no_work_dirs bad-partition

echo "== its own executor options: a bad value and an unknown key are exit 2"
run_step bad-nice "${CLI[@]}" plan "${CASE[@]}" --custom-cmd 'echo hi' --partition debug \
  --executor-option nice=high
expect_rc bad-nice 2
expect_in bad-nice "executor option nice=high (sdk_slurm) is not a nice value"
expect_in bad-nice "integer from 0 to 100"
run_step bad-key "${CLI[@]}" plan "${CASE[@]}" --custom-cmd 'echo hi' --partition debug \
  --executor-option colour=red
expect_rc bad-key 2
expect_in bad-key "unknown executor option 'colour' (sdk_slurm)"
expect_in bad-key "sdk_slurm takes: label, nice"
no_work_dirs "bad executor options"

echo "== plan from a request file with executor_options: probed, validated, recorded"
cat >"$TMP/case.yaml" <<'YAML'
custom_cmd: echo planned
partition: debug
executor_options:
  label: nightly
  nice: "10"
YAML
run_step plan "${CLI[@]}" plan "${CASE[@]}" --request "$TMP/case.yaml"
expect_rc plan 0
expect_in plan "slurm probe on local"
expect_in plan "partition debug (--partition; validated)"
spec=$(compgen -G "$REPO/work_dirs/*/job_spec.json" | head -n 1) || fail "plan wrote no job_spec.json"
planned_dir=$(dirname "$spec")
python3 - "$spec" <<'PY' || fail "job_spec.json of the plan: $(cat "$spec")"
import json, sys
spec = json.load(open(sys.argv[1]))
assert spec["scenario"] == "sdk_slurm", spec["scenario"]
assert spec["executor_options"] == {"label": "nightly", "nice": "10"}, spec.get("executor_options")
assert spec["partition"] == "debug", spec["partition"]
assert int(spec["sdk_probed_partitions"]) >= 5, spec["sdk_probed_partitions"]
assert spec["job_name"] == "sdk_nightly", spec["job_name"]
PY

echo "== status of the planned work dir goes through the executor"
run_step status-planned "${CLI[@]}" status "$planned_dir"
expect_rc status-planned 0
expect_in status-planned "sdk job:"
expect_in status-planned "sdk_nightly on partition debug"
expect_in status-planned "partitions probed"

echo "== run submits to Slurm with the executor's options"
run_step run "${CLI[@]}" run "${CASE[@]}" --partition debug --executor-option label=run1 \
  --custom-cmd 'echo "sdk job $SLURM_JOB_ID on $SLURM_JOB_PARTITION"' --json
expect_rc run 0
result=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["status"], r["work_dir"], r["log_file"])' "$TMP/run.out") ||
  fail "run --json printed no result: $(cat "$TMP/run.out")"
read -r status run_dir log_file <<<"$result"
[[ $status == PASSED ]] || fail "run: $status, want PASSED"
grep -Eq '^sdk job [0-9]+ on debug$' "$log_file" || fail "the job's log $log_file: $(cat "$log_file")"
run_step status-run "${CLI[@]}" status "$run_dir"
expect_rc status-run 0
expect_in status-run "PASSED"

python3 - "$TMP/run.out" <<'PY' || fail "the passing run's result: $(cat "$TMP/run.out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["exit_code"] == 0, r["exit_code"]
assert r["details"]["job_id"].isdigit(), r["details"]
# The watcher asked the controller (the verdict waits for it), not sbatch --wait.
assert int(r["details"]["sdk_client_controller_queries"]) >= 1, r["details"]
assert "COMPLETED" in r["reason"] or "exit code 0" in r["reason"], r["reason"]
PY

echo "== a failing job: the watcher's verdict is FAILED with the job's exit code"
run_step failing "${CLI[@]}" run "${CASE[@]}" --partition debug \
  --custom-cmd 'echo "about to fail"; exit 3' --json
expect_rc failing 1
python3 - "$TMP/failing.out" <<'PY' || fail "the failing run's result: $(cat "$TMP/failing.out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "FAILED", r["status"]
assert r["exit_code"] == 3, r["exit_code"]
assert "3" in r["reason"], r["reason"]
PY

echo "== the monitor timeout: the watcher scancels the running job, TIMEOUT"
run_step timeout "${CLI[@]}" run "${CASE[@]}" --partition debug --monitor-timeout 8s \
  --custom-cmd 'echo started; sleep 240' --json
expect_rc timeout 4
timeout_job=$(python3 - "$TMP/timeout.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "TIMEOUT", (r["status"], r["reason"])
assert "monitor" in r["reason"].lower() or "timeout" in r["reason"].lower(), r["reason"]
print(r["details"]["job_id"])
PY
) || fail "the timed-out run's result: $(cat "$TMP/timeout.out")"
if squeue -h -j "$timeout_job" -o %T 2>/dev/null | grep -Eq 'RUNNING|PENDING|COMPLETING'; then
  fail "job $timeout_job still runs after its TIMEOUT verdict"
fi

echo "PASS: a third-party executor with the Slurm traits gets the probe, validated placement, its options and status, and runs jobs through the SDK's Slurm kit (submit, watch, verdict)"
