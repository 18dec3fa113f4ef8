#!/bin/bash
# Slurm probe benchmark (bench/README.md): what `trtllm-run env` (the probe behind
# slurm_env.json) costs on a cluster with 3 and one with 12 partitions: wall time (median
# of --runs), programs and Slurm commands run, slurmctld RPCs; against the old probe
# script (bench/slurm_probe_old.bash) and `sacctmgr` alone, measured in the same run.
#
#   bench/slurm_probe.sh [--runs 9] [--smoke]     (root; BUILD_DIR: the build, default build)
#
# The clusters are this script's own: a slurmctld + slurmd (node `localhost`, faked GPUs
# as in tests/services/slurm.sh) on ports 6847/6848 with their own config, state, spool
# and logs under a temp dir, the shared munge, and the cluster registered in the shared
# slurmdbd (with root's associations) so the sacctmgr queries are real. Everything it
# starts or registers is stopped and removed on exit, also on failure. The shared
# clusters are not touched. --smoke: 2 runs, 3 partitions, fails when the probe fails or
# reports errors (CI; no timing target).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
runs=9
smoke=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --smoke) smoke=1; runs=2; shift ;;
    *) echo "usage: bench/slurm_probe.sh [--runs N] [--smoke]" >&2; exit 2 ;;
  esac
done
[[ $(id -u) == 0 ]] || { echo "slurm_probe.sh: needs root (starts its own slurmctld)" >&2; exit 2; }
[[ $build_dir == /* ]] || build_dir=$PWD/$build_dir
trtllm_run=$build_dir/bin/trtllm-run
[[ -x $trtllm_run ]] || { echo "slurm_probe.sh: no $trtllm_run (BUILD_DIR?)" >&2; exit 2; }
old_probe=$PWD/bench/slurm_probe_old.bash
tests/services/slurm.sh ensure >/dev/null

exec 9>/run/trtllm-probe-bench.lock
flock -n 9 || { echo "slurm_probe.sh: another run holds /run/trtllm-probe-bench.lock" >&2; exit 3; }

CLUSTER=trtllm-probebench
CTLD_PORT=6847
SLURMD_PORT=6848
ROOT=$(mktemp -d /tmp/trtllm_probe_bench_XXXXXX)
chmod 755 "$ROOT"
export SLURM_CONF=$ROOT/etc/slurm.conf
registered=0

stop_daemons() {
  local name pid
  for name in slurmd slurmctld; do
    if [[ -s $ROOT/$name.pid ]]; then
      pid=$(cat "$ROOT/$name.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$ROOT/$name.pid"
    fi
  done
}
cleanup() {
  stop_daemons
  if [[ $registered == 1 ]]; then
    SLURM_CONF=/etc/slurm/slurm.conf sacctmgr -i delete cluster "$CLUSTER" >/dev/null 2>&1 || true
  fi
  rm -rf "$ROOT"
}
trap cleanup EXIT

# $1: number of partitions. All on node localhost; the default one first in the access
# rule's order (a plain name, sinfo's default), as on a typical cluster.
write_conf() {
  local n=$1 i
  local ncpu topo mem
  ncpu=$(nproc)
  topo=$(slurmd -C | head -1 | grep -o 'Boards=.*ThreadsPerCore=[0-9]*')
  mem=$(( ($(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p') - 1024) / 4 ))
  mkdir -p "$ROOT/etc" "$ROOT/state" "$ROOT/log"
  cat >"$SLURM_CONF" <<EOF
ClusterName=$CLUSTER
SlurmctldHost=localhost
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=256
ReturnToService=2
MailProg=/bin/true
SchedulerType=sched/backfill
StateSaveLocation=$ROOT/state
SlurmdSpoolDir=$ROOT/spool-%n
SlurmctldPidFile=$ROOT/slurmctld.pid
SlurmdPidFile=$ROOT/slurmd.pid
SlurmctldLogFile=$ROOT/log/slurmctld.log
SlurmdLogFile=$ROOT/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
InactiveLimit=0
MinJobAge=10
SlurmctldTimeout=30
SlurmdTimeout=30
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageEnforce=associations
AccountingStorageTRES=gres/gpu
JobCompType=jobcomp/none
NodeName=localhost NodeHostname=localhost NodeAddr=127.0.0.1 Port=$SLURMD_PORT CPUs=$ncpu $topo RealMemory=$mem Gres=gpu:2 State=UNKNOWN
PartitionName=batch Nodes=localhost Default=YES MaxTime=INFINITE State=UP
PartitionName=debug Nodes=localhost MaxTime=02:00:00 State=UP
PartitionName=batch-backfill Nodes=localhost MaxTime=INFINITE State=UP
EOF
  local extra=(maint:DOWN restricted:UP batch-hp:UP batch-admin:UP gpu-a:UP gpu-b:UP gpu-c:UP
    long:UP short:UP)
  for ((i = 3; i < n; i++)); do
    local spec=${extra[i - 3]}
    local limit=""
    [[ ${spec%%:*} == restricted ]] && limit=" AllowAccounts=proj2"
    echo "PartitionName=${spec%%:*} Nodes=localhost MaxTime=INFINITE State=${spec##*:}$limit" >>"$SLURM_CONF"
  done
  echo "NodeName=localhost Name=gpu File=/dev/fakegpu[0-1] AutoDetect=off" >"$ROOT/etc/gres.conf"
}

start_cluster() {  # $1: partitions
  stop_daemons
  rm -rf "$ROOT/state"
  write_conf "$1"
  slurmctld -c
  slurmd -N localhost
  for _ in $(seq 150); do
    timeout 5 sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && return 0
    sleep 0.2
  done
  echo "slurm_probe.sh: the benchmark cluster did not come up; $ROOT/log:" >&2
  tail -n 20 "$ROOT"/log/*.log >&2 || true
  exit 3
}

register() {  # through the shared cluster's config: the same slurmdbd
  local sacctmgr=(env SLURM_CONF=/etc/slurm/slurm.conf sacctmgr -i)
  "${sacctmgr[@]}" add cluster "$CLUSTER" >/dev/null
  registered=1
  "${sacctmgr[@]}" add account research,proj2 Cluster="$CLUSTER" >/dev/null
  "${sacctmgr[@]}" add user root Account=research Cluster="$CLUSTER" >/dev/null
  "${sacctmgr[@]}" add user root Account=proj2 Cluster="$CLUSTER" >/dev/null
}

now_ms() { echo "${EPOCHREALTIME/./}"; }  # microseconds, as text
elapsed() { echo $(( ($(now_ms) - $1) / 1000 )); }
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# slurmctld RPCs since $1 (an sdiag snapshot): message-type counts, less sdiag's own.
sdiag_types() {
  sdiag 2>/dev/null | awk '/statistics by message type/ {t = 1; next} /statistics by user/ {t = 0}
    t && /count:/ {sub(/.*count:/, ""); split($0, a, " "); sum += a[1]} END {print sum + 0}'
}
rpcs() {  # $@: a command; prints the slurmctld RPCs it caused
  local before after
  before=$(sdiag_types)
  "$@" >/dev/null 2>&1 || true
  after=$(sdiag_types)
  echo $(( after - before - 1 ))  # the first sdiag's REQUEST_STATS_INFO
}
# Programs the command ran (successful execve, the command itself included) and Slurm
# commands among them.
count_execs() {
  strace -f -qq -e trace=execve -o "$ROOT/execs" "$@" >/dev/null 2>&1 || true
  # Concurrent execve calls are logged as "<unfinished ...>" + "<... execve resumed>".
  awk '
    /execve\("/ { match($0, /execve\("[^"]*"/); path = substr($0, RSTART + 8, RLENGTH - 9) }
    /execve\(".*<unfinished/ { pending[$1] = path; next }
    /execve resumed>.*= 0$/ { path = pending[$1] }
    /= 0$/ && (/execve\("/ || /execve resumed>/) {
      all++
      n = split(path, parts, "/")
      if (parts[n] ~ /^(sinfo|scontrol|sacctmgr|sbatch|srun|squeue|sacct)$/) slurm++
    }
    END { print all + 0, slurm + 0 }' "$ROOT/execs"
}

new_probe() { "$trtllm_run" env --output "$ROOT/slurm_env.json"; }
old_probe() { bash "$old_probe" "@@trtllm-run-bench@@"; }
sacctmgr_alone() { sacctmgr -nP show user root format=DefaultAccount; }

declare -A result
ok=1
sizes=(3 12)
[[ $smoke == 1 ]] && sizes=(3)
register
for n in "${sizes[@]}"; do
  start_cluster "$n"
  new_probe >/dev/null 2>&1 || true  # warm-up (page cache, munge)
  errors=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["errors"]))' "$ROOT/slurm_env.json" 2>/dev/null || echo missing)
  parts=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["partitions"]))' "$ROOT/slurm_env.json" 2>/dev/null || echo 0)
  if [[ $errors != 0 || $parts != "$n" ]]; then
    echo "slurm_probe.sh: the probe on $n partitions reported errors=$errors partitions=$parts:" >&2
    cat "$ROOT/slurm_env.json" >&2 || true
    ok=0
  fi
  t_new=() t_old=() t_acct=()
  for ((r = 0; r < runs; r++)); do  # interleaved
    s=$(now_ms); new_probe >/dev/null 2>&1; t_new+=("$(elapsed "$s")")
    s=$(now_ms); old_probe >/dev/null 2>&1; t_old+=("$(elapsed "$s")")
    s=$(now_ms); sacctmgr_alone >/dev/null 2>&1; t_acct+=("$(elapsed "$s")")
  done
  result[$n.new]=$(echo "${t_new[*]}" | median)
  result[$n.old]=$(echo "${t_old[*]}" | median)
  result[$n.acct]=$(echo "${t_acct[*]}" | median)
  read -r a b < <(count_execs "$trtllm_run" env --output "$ROOT/x.json")
  result[$n.new_execs]=$a result[$n.new_slurm]=$b
  read -r a b < <(count_execs bash "$old_probe" "@@m@@")
  result[$n.old_execs]=$a result[$n.old_slurm]=$b
  result[$n.new_rpcs]=$(rpcs new_probe)
  result[$n.old_rpcs]=$(rpcs old_probe)
done

echo
echo "Slurm probe cost (trtllm-run env), own cluster with accounting; median of $runs runs, interleaved"
printf '%-34s %-10s %-14s %-14s %-16s %s\n' "partitions / metric" "target" "trtllm-run" "old script" "original (ref.)" "result"
declare -A ref_ms=([3]=285 [12]=471) ref_cmds=([3]=15 [12]=47) ref_rpcs=([3]=26 [12]=90)
for n in "${sizes[@]}"; do
  verdict=PASS
  ((result[$n.new] <= 200)) || verdict=MISS
  [[ $smoke == 1 ]] && verdict="(smoke)"
  printf '%-34s %-10s %-14s %-14s %-16s %s\n' "$n partitions: wall (ms)" "<= 200" "${result[$n.new]}" "${result[$n.old]}" "${ref_ms[$n]}" "$verdict"
  printf '%-34s %-10s %-14s %-14s %-16s\n' "  sacctmgr alone, same run (ms)" "" "${result[$n.acct]}" "" ""
  printf '%-34s %-10s %-14s %-14s %-16s\n' "  Slurm commands run" "" "${result[$n.new_slurm]}" "${result[$n.old_slurm]}" "${ref_cmds[$n]}"
  printf '%-34s %-10s %-14s %-14s %-16s\n' "  programs run (all execve)" "" "${result[$n.new_execs]}" "${result[$n.old_execs]}" ""
  printf '%-34s %-10s %-14s %-14s %-16s\n' "  slurmctld RPCs (sdiag)" "" "${result[$n.new_rpcs]}" "${result[$n.old_rpcs]}" "${ref_rpcs[$n]}"
done
echo "original (ref.): the original Python probe's figures on this machine, as measured when the probe was ported"
if [[ $ok != 1 ]]; then
  echo "result: THE PROBE FAILED" && exit 1
fi
[[ $smoke == 1 ]] && echo "result: smoke run passed"
exit 0
