#!/bin/bash
# Many remote_slurm cases (bench/README.md "remote_cases.sh"): `trtllm-run run --cases FILE
# --scenario remote_slurm` with N cases (default 50) of a 5 s job over the loopback sshd (user
# sshtest) to the test cluster, run twice in the same run: the default (one session per
# destination where the build has it) and `--executor-option session=per-case` (one session
# per case: N SSH connections, N repo setups, N watchers). A build without that option runs
# per case both times (the second column then says so).
#
# Measured per run, from its start to its exit:
#   SSH connections  the client's: master connections trtllm-run's ssh started (a PATH `ssh`
#                    wrapper logs every ssh it runs; one of them is the planning probe's
#                    before the cases start) and the cases' details.ssh_connections
#                    (or the session's stats); sshd's: "Accepted" lines for sshtest in its log
#   repo setups      remote commands that set up the checkout (clone/fetch + checkout)
#   controller queries per job-minute
#                    remote job queries trtllm-run sent (scontrol show job, squeue, sacct, the
#                    batched query script; client side), and
#                    slurmctld RPCs of user sshtest (sdiag; other sshtest users in the same
#                    window count too), over the jobs' run time (each job prints its start and
#                    end); target <= 2
#   verdict delay    job end (printed by the job just before it exits) -> the case's verdict
#                    line on trtllm-run's stderr (timestamped as it arrives); median <= 10 s,
#                    p90 <= 31 s (confirmations paced by the query budget)
# The cases' jobs are named after this run (research.rc<pid>_<i>_custom); any left are
# cancelled at the end, on failure and on SIGINT/SIGTERM/SIGHUP, and the remote checkout and
# work dirs are removed. Needs root and the test services.
#   bench/remote_cases.sh [--cases N] [--seconds S] [--no-baseline] [--check] [--smoke]
#   (BUILD_DIR: the build, default build; --smoke: 3 cases of 2 s, correctness only;
#   --no-baseline: the default run only, not the one session per case)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
bin=$(realpath -m "$build_dir/bin/trtllm-run")
cases=50
seconds=5
check=0
smoke=0
no_baseline=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --cases) cases=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --check) check=1; shift ;;
    --no-baseline) no_baseline=1; shift ;;
    --smoke) cases=3; seconds=2; check=1; smoke=1; shift ;;
    *) echo "usage: $0 [--cases N] [--seconds S] [--no-baseline] [--check] [--smoke]" >&2; exit 2 ;;
  esac
done
[[ $cases =~ ^[0-9]+$ && $cases -ge 1 && $cases -le 1000 ]] ||
  { echo "$0: --cases must be a whole number from 1 to 1000, got '$cases'" >&2; exit 2; }
[[ $seconds =~ ^[0-9]+$ && $seconds -ge 1 && $seconds -le 600 ]] ||
  { echo "$0: --seconds must be a whole number from 1 to 600, got '$seconds'" >&2; exit 2; }
[[ -x $bin ]] || { echo "$bin not found: build trtllm-run and its plugins (BUILD_DIR=...)" >&2; exit 2; }
tests/services/slurm.sh ensure >/dev/null
tests/services/sshd.sh ensure >/dev/null

ssh_dir=/run/trtllm-test-sshd
tag=rc$$
root=$(mktemp -d "${TMPDIR:-/tmp}/trtllm_remote_cases.XXXXXX")
chmod 755 "$root"
remote_root=/home/sshtest/trtllm_bench_$tag
trtllm_pid=""
cancel_ours() {
  local ids
  ids=$(squeue -h -u sshtest -o '%i %j' 2>/dev/null | awk -v t="research.${tag}_" 'index($2, t) == 1 { print $1 }')
  [[ -n $ids ]] && scancel $ids >/dev/null 2>&1
  return 0
}
cleanup() {
  [[ -n $trtllm_pid ]] && kill -INT "$trtllm_pid" 2>/dev/null && sleep 3
  cancel_ours
  rm -rf -- "$remote_root"
  [[ -n ${BENCH_KEEP:-} ]] || rm -rf -- "$root"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
echo "remote_cases: cases ${tag}_<i> in $root, remote $remote_root" >&2

# The "remote" repository: a bare repo with one commit, owned by sshtest.
git init -q -b main "$root/seed"
git -C "$root/seed" -c user.email=b@example.com -c user.name=bench commit -q --allow-empty -m seed
git clone -q --bare "$root/seed" "$root/origin.git"
chown -R sshtest "$root/origin.git"
cat >"$root/ssh_config" <<EOF
Host trtllm-bench-login
  HostName 127.0.0.1
  Port 2222
  User sshtest
  IdentityFile $ssh_dir/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $ssh_dir/known_hosts
EOF

# An `ssh` that logs "<epoch> <kind> <remote command>" per call (kind: master, check, exit,
# command) to $root/ssh.log and runs the real one.
real_ssh=$(command -v ssh)
mkdir -p "$root/bin"
cat >"$root/bin/ssh" <<EOF
#!/bin/bash
kind=command
for arg; do
  case \$arg in
    ControlMaster=yes) kind=master ;;
    check) [[ \$prev == -O ]] && kind=check ;;
    exit) [[ \$prev == -O ]] && kind=exit ;;
  esac
  prev=\$arg
done
line=\$(printf '%s %s %s' "\$EPOCHREALTIME" "\$kind" "\${!#}" | head -c 4000 | tr '\n\r' '  ')
echo "\$line" >>"$root/ssh.log"
exec $real_ssh "\$@"
EOF
chmod 755 "$root/bin/ssh"

{
  echo "defaults: {required_devices: 0}"
  echo "cases:"
  for ((i = 1; i <= cases; ++i)); do
    echo "  - {model_name: ${tag}_$i, custom_cmd: 'echo \"[bench] start \$(date +%s.%N)\"; sleep $seconds; echo \"[bench] end \$(date +%s.%N)\"'}"
  done
} >"$root/cases.yaml"


sshd_accepted() { grep -c 'Accepted publickey for sshtest' "$ssh_dir/sshd.log" || true; }
sdiag_user() {
  sdiag 2>/dev/null | awk '/statistics by user/ { u = 1 }
    u && $1 == "sshtest" && match($0, /count:[0-9]+/) { n = substr($0, RSTART + 6, RLENGTH - 6) }
    END { print n + 0 }'
}

# One run: $1 its name, the rest extra arguments. Leaves $root/$1/: result.json, stderr.ts
# (stderr lines with their arrival time), ssh.log (its ssh calls), figures (key=value).
run_once() {
  local name=$1
  shift
  local dir=$root/$name
  mkdir -p "$dir"
  : >"$root/ssh.log"
  local accepted_before rpc_before start
  accepted_before=$(sshd_accepted)
  rpc_before=$(sdiag_user)
  start=$EPOCHREALTIME
  PATH=$root/bin:$PATH "$bin" run --cases "$root/cases.yaml" --run-dir "$dir/run" \
    --scenario remote_slurm --ssh-host trtllm-bench-login --slurm-user sshtest \
    --ssh-config-file "$root/ssh_config" --repo-root "$root/seed" \
    --remote-repo-path "$remote_root/TensorRT-LLM" --repo-url "$root/origin.git" \
    --repo-branch main --partition batch,cpu --skip-install true --build-project false \
    --container-runtime none --container-image none --kill-grace 5 "$@" \
    2> >(while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done >"$dir/stderr.ts") \
    >/dev/null &
  trtllm_pid=$!
  local rc=0
  wait "$trtllm_pid" || rc=$?
  trtllm_pid=""
  local wall
  wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  sleep 0.5  # the stderr timestamper's last lines
  cp "$root/ssh.log" "$dir/ssh.log"
  local accepted rpcs
  accepted=$(($(sshd_accepted) - accepted_before))
  rpcs=$(($(sdiag_user) - ${rpc_before:-0}))
  cancel_ours
  {
    echo "rc=$rc"
    echo "wall=$wall"
    echo "sshd_accepted=$accepted"
    echo "sdiag_rpcs=$rpcs"
  } >"$dir/figures"
}

# The figures of run $1 as "key=value" lines: the ones run_once wrote and those computed from
# its result.json, ssh.log, stderr.ts and the jobs' own start/end lines.
summarize() {
  local dir=$root/$1
  cat "$dir/figures"
  local result=$dir/run/result.json
  [[ -s $result ]] || { echo "passed=0"; return; }
  echo "passed=$(jq '[.cases[] | select(.status == "PASSED")] | length' "$result")"
  echo "client_details=$(jq '[.cases[].result.details.ssh_connections // "0" | tonumber] | add' "$result")"
  echo "session_stats=$(jq -c '[.sessions[] | {shared, stats}]' "$result" | tr -d ' ')"
  awk '
    $2 == "master" { m++ }
    $2 == "command" { c++ }
    $2 == "command" && /git clone --quiet/ { r++ }
    $2 == "command" && /(scontrol[^;|]* show job|squeue |sacct |TRTLLM_RUN_QUERY_TIMEOUT)/ &&
      !/for tool in/ { q++ }
    $2 == "command" && /tail -c/ { l++ }
    END { printf "client_masters=%d\ncommands=%d\nrepo_setups=%d\nclient_queries=%d\nlog_copies=%d\n", m, c, r, q, l }
  ' "$dir/ssh.log"
  # Job start/end from each case's log; the verdict time from the "[k/N] ... (case i)" line.
  jq -r '.cases[] | "\(.index) \(.result.log_file // "")"' "$result" | while read -r index log; do
    local start="" end="" verdict=""
    if [[ -n $log && -f $log ]]; then
      start=$(sed -n 's/.*\[bench\] start \([0-9.]*\).*/\1/p' "$log" | head -1)
      end=$(sed -n 's/.*\[bench\] end \([0-9.]*\).*/\1/p' "$log" | head -1)
    fi
    verdict=$(awk -v c="(case $index)" '$3 ~ /^\[[0-9]+\/[0-9]+\]$/ && index($0, c) { print $1; exit }' \
      "$dir/stderr.ts")
    echo "job $index ${start:--} ${end:--} ${verdict:--}"
  done >"$dir/jobs"
  awk '
    $3 != "-" && $4 != "-" && $4 > $3 { jm += ($4 - $3) / 60 }
    $4 != "-" && $5 != "-" { d[++n] = $5 - $4 }
    END {
      if (n > 0) {
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (d[j] < d[i]) { t = d[i]; d[i] = d[j]; d[j] = t }
        printf "delay_median=%.2f\ndelay_p90=%.2f\ndelay_max=%.2f\n", d[int(0.5 * (n - 1) + 0.5) + 1], d[int(0.9 * (n - 1) + 0.5) + 1], d[n]
      } else print "delay_median=-\ndelay_p90=-\ndelay_max=-"
      printf "delays=%d\njob_minutes=%.2f\n", n, jm
    }' "$dir/jobs"
}

# The per-case run asks for --executor-option session=per-case where remote_slurm takes it
# (a build with the shared session); without it every case has its own session anyway.
per_case_option=(--executor-option session=per-case)
has_session=1
if ! PATH=$root/bin:$PATH "$bin" plan --cases "$root/cases.yaml" --scenario remote_slurm \
  --ssh-host trtllm-bench-login --slurm-user sshtest --ssh-config-file "$root/ssh_config" \
  --repo-root "$root/seed" --remote-repo-path "$remote_root/TensorRT-LLM" \
  --partition batch,cpu --skip-install true --container-runtime none --container-image none \
  "${per_case_option[@]}" >/dev/null 2>"$root/plan.err"; then
  grep -q "takes no executor options" "$root/plan.err" ||
    { echo "remote_cases: trtllm-run plan failed:" >&2; tail -5 "$root/plan.err" >&2; exit 3; }
  per_case_option=()
  has_session=0
fi

run_once shared
[[ $no_baseline == 1 ]] || run_once per_case "${per_case_option[@]}"
declare -A s p
while IFS='=' read -r k v; do s[$k]=$v; done < <(summarize shared)
if [[ $no_baseline == 0 ]]; then
  while IFS='=' read -r k v; do p[$k]=$v; done < <(summarize per_case)
fi
for k in "${!s[@]}"; do [[ -v p[$k] ]] || p[$k]=-; done

: >"$root/missed"
verdict() { if eval "$1"; then echo PASS; else echo x >>"$root/missed"; echo MISS; fi; }
perf_verdict() { if [[ $smoke == 1 ]]; then eval "$1" && echo "(pass)" || echo "(miss)"; else verdict "$1"; fi; }
per_jm() { awk -v n="$1" -v m="$2" 'BEGIN { if (m > 0) printf "%.2f", n / m; else print "-" }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "-" && a <= b) }'; }
row() { printf "%-42s %-9s %-30s %s\n" "$@"; }
per_case_label="--executor-option session=per-case"
[[ ${#per_case_option[@]} -eq 0 ]] && per_case_label="per case (remote_slurm here takes no session option)"
[[ $no_baseline == 1 ]] && per_case_label="(one session per case: not run, --no-baseline)"
shared_label=default
echo "== $cases remote_slurm cases of $seconds s over the loopback sshd (user sshtest), both runs in this run"
row metric target "$shared_label" "$per_case_label"
# Without the shared session, concurrent cases set up the same remote checkout at once and
# some fail ("remote origin already exists"): the smoke run then only prints it.
passed_verdict=verdict
[[ $has_session == 0 ]] && passed_verdict=perf_verdict
row "cases PASSED" "$cases" "${s[passed]} $($passed_verdict "[[ ${s[passed]} == $cases ]]")" \
  "${p[passed]}"
# The shared session's targets (a build without it only prints them): one master for the
# run besides the planning probe's, one repo setup.
row "SSH connections: client (masters started)" "<= 2" \
  "${s[client_masters]} $($passed_verdict "((${s[client_masters]} <= 2))")" "${p[client_masters]}"
row "  cases' details.ssh_connections (sum)" "" "${s[client_details]}" "${p[client_details]}"
row "  sshd \"Accepted\" lines in the window" "" "${s[sshd_accepted]}" "${p[sshd_accepted]}"
row "repo setups (remote clone/fetch scripts)" "1" \
  "${s[repo_setups]} $($passed_verdict "((${s[repo_setups]} == 1))")" "${p[repo_setups]}"
row "remote commands (round trips)" "" "${s[commands]}" "${p[commands]}"
row "  of them log copies (tail -c)" "" "${s[log_copies]}" "${p[log_copies]}"
row "controller queries per job-minute: client" "<= 2" \
  "$(per_jm "${s[client_queries]}" "${s[job_minutes]}") $(perf_verdict "le $(per_jm "${s[client_queries]}" "${s[job_minutes]}") 2")" \
  "$(per_jm "${p[client_queries]}" "${p[job_minutes]}")"
row "  client queries / job-minutes" "" "${s[client_queries]} / ${s[job_minutes]}" \
  "${p[client_queries]} / ${p[job_minutes]}"
row "  slurmctld RPCs of sshtest, all (sdiag)/job-min" "" \
  "$(per_jm "${s[sdiag_rpcs]}" "${s[job_minutes]}") (${s[sdiag_rpcs]})" \
  "$(per_jm "${p[sdiag_rpcs]}" "${p[job_minutes]}") (${p[sdiag_rpcs]})"
# A clean end is final once the controller confirms it; within the query budget a 5 s job
# earns a tenth of a query, so verdicts wait for the next query the budget allows (at most
# SlurmWatchOptions::max_confirm_wait, 30 s, after the previous one). The wall time is what
# the delay must not cost: a job's end line frees its --max-parallel place.
row "verdict delay job end -> verdict, median (s)" "<= 10" \
  "${s[delay_median]} $(perf_verdict "le ${s[delay_median]} 10")" "${p[delay_median]}"
row "  p90 (s)" "<= 31" "${s[delay_p90]} $(perf_verdict "le ${s[delay_p90]} 31")" "${p[delay_p90]}"
row "  max (s) / delays measured" "" "${s[delay_max]} / ${s[delays]}" "${p[delay_max]} / ${p[delays]}"
row "wall time (s) / exit code" "" "${s[wall]} / ${s[rc]}" "${p[wall]} / ${p[rc]}"
row "session stats" "" "${s[session_stats]}" ""
row "" "" "" "${p[session_stats]}"
echo
if [[ -s $root/missed ]]; then echo "result: TARGETS MISSED"; else echo "result: targets met"; fi
if [[ $check == 1 && -s $root/missed ]]; then
  tail -5 "$root/shared/stderr.ts" >&2
  [[ $no_baseline == 1 ]] || tail -5 "$root/per_case/stderr.ts" >&2
  exit 1
fi
