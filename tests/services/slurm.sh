#!/bin/bash
# Real Slurm 22.05 clusters on this host for the test suite (Debian 12, root, no systemd).
#
#   tests/services/slurm.sh ensure   start both clusters unless they already answer (idempotent);
#                                    a running trtllm-test from before gpunode2 existed is
#                                    upgraded: its config rewritten, its slurmctld and slurmds
#                                    restarted (queue and running jobs kept)
#   tests/services/slurm.sh stop     stop every daemon this script started (by PID file)
#   tests/services/slurm.sh status   exit 0 when both clusters answer
#
# Cluster "trtllm-test" (default SLURM_CONF=/etc/slurm/slurm.conf): accounting through
# slurmdbd + MariaDB; nodes `localhost` (2 fake GPUs as gres gpu:2, /dev/fakegpu[0-1]),
# `cpunode` (no gres; a second slurmd, 127.0.0.2) and `gpunode2` (a third slurmd,
# 127.0.0.3, like localhost: 2 fake GPUs, /dev/fakegpu[2-3]); memory enforcement
# (OverMemoryKill) so a step over its --mem ends OUT_OF_MEMORY. Partitions, in sinfo order:
#   maint          State=DOWN                    localhost
#   restricted     AllowAccounts=proj2           localhost
#   batch-backfill                               localhost
#   debug          MaxTime=02:00:00              localhost
#   batch          Default=YES                   localhost
#   cpu                                          cpunode   (gres "(null)")
#   multi                                        localhost,gpunode2 (2-node jobs: srun -N2)
# Accounts research and proj2. Users: root (default research, also proj2), sshtest and
# slurmpw (default research), noassoc (a local user with no association).
# MinJobAge=20: finished jobs leave squeue after ~20 s.
#
# Cluster "trtllm-noacct" (SLURM_CONF=/etc/slurm-noacct/slurm.conf): no accounting
# (sacct/sacctmgr unusable), node `localhost` on other ports, partition batch,
# MinJobAge=10.
#
# Cluster "trtllm-fault" (SLURM_CONF=/etc/slurm-fault/slurm.conf): for fault tests that
# kill and restart its controller, so that no shared cluster is disturbed. Not part of
# ensure/status; like trtllm-noacct (no accounting, partition batch, MinJobAge=10) on
# ports 6837/6838. Started on demand:
#   tests/services/slurm.sh fault-ensure      start it unless it answers (needs munge: ensure first)
#   tests/services/slurm.sh fault-kill-ctld   kill -9 its slurmctld (jobs keep running)
#   tests/services/slurm.sh fault-start-ctld  start its slurmctld again, recovering its state
#   tests/services/slurm.sh fault-stop        stop its daemons
#
# Daemon logs: /var/log/slurm/; PID files: /run/trtllm-test-slurm/.
set -euo pipefail

PIDDIR=/run/trtllm-test-slurm
MAIN_CONF=/etc/slurm/slurm.conf
NOACCT_DIR=/etc/slurm-noacct
NOACCT_CONF=$NOACCT_DIR/slurm.conf
GPUS=2

stop_pid() {
  local file=$PIDDIR/$1.pid
  if [[ -s $file ]]; then
    local pid
    pid=$(cat "$file")
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid"
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$file"
  fi
}

answers() {  # cluster answers and its nodes are usable
  SLURM_CONF=$1 timeout 10 sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'
}

status() {
  answers "$MAIN_CONF" && answers "$NOACCT_CONF" && timeout 10 sacctmgr -n show cluster >/dev/null 2>&1
}

stop() {
  fault_stop
  # slurmd PID files are named per node (SlurmdPidFile=...slurmd<suffix>-%n.pid).
  local file
  for file in "$PIDDIR"/slurmd*.pid; do
    [[ -e $file ]] && stop_pid "$(basename "$file" .pid)"
  done
  for daemon in slurmctld-noacct slurmctld slurmdbd mariadb munged; do
    stop_pid "$daemon"
  done
}

node_facts() {  # CPUs, topology and memory slurmd detects, minus headroom
  NCPU=$(nproc)
  TOPO=$(slurmd -C | head -1 | grep -o 'Boards=.*ThreadsPerCore=[0-9]*')
  MEM=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
  MEM=$(( (MEM - 1024) / 3 ))  # a share of this host's memory per slurmd (declared only)
}

common_conf() {  # $1 cluster name, $2 ctld port, $3 state dir suffix, $4 MinJobAge
  cat <<EOF
ClusterName=$1
SlurmctldHost=localhost
SlurmctldPort=$2
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
StateSaveLocation=/var/spool/slurmctld$3
SlurmdSpoolDir=/var/spool/slurmd$3-%n
SlurmctldPidFile=$PIDDIR/slurmctld$3.pid
SlurmdPidFile=$PIDDIR/slurmd$3-%n.pid
SlurmctldLogFile=/var/log/slurm/slurmctld$3.log
SlurmdLogFile=/var/log/slurm/slurmd$3-%n.log
SlurmctldDebug=info
SlurmdDebug=info
InactiveLimit=0
KillWait=5
MinJobAge=$4
Waittime=0
SlurmctldTimeout=30
SlurmdTimeout=30
GresTypes=gpu
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=1
JobAcctGatherParams=OverMemoryKill
EOF
}

start_munge() {
  if [[ -s $PIDDIR/munged.pid ]] && kill -0 "$(cat "$PIDDIR/munged.pid")" 2>/dev/null; then return; fi
  [[ -s /etc/munge/munge.key ]] || mungekey --create --keyfile=/etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key
  chmod 600 /etc/munge/munge.key
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  rm -f /run/munge/munged.pid
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid --force
  for _ in $(seq 50); do [[ -s /run/munge/munged.pid ]] && break; sleep 0.1; done
  cp /run/munge/munged.pid "$PIDDIR/munged.pid"
  munge -n | unmunge >/dev/null
}

start_accounting() {
  mkdir -p /run/mysqld
  chown mysql:mysql /run/mysqld
  [[ -d /var/lib/mysql/mysql ]] || mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
  /usr/sbin/mariadbd --user=mysql --pid-file=/run/mysqld/mysqld.pid \
    --socket=/run/mysqld/mysqld.sock --bind-address=127.0.0.1 >/var/log/slurm/mariadb.log 2>&1 &
  echo $! >"$PIDDIR/mariadb.pid"
  for _ in $(seq 150); do
    mariadb-admin --socket=/run/mysqld/mysqld.sock ping >/dev/null 2>&1 && break
    kill -0 "$(cat "$PIDDIR/mariadb.pid")" 2>/dev/null || { tail -5 /var/log/slurm/mariadb.log; exit 1; }
    sleep 0.2
  done
  mariadb --socket=/run/mysqld/mysqld.sock <<'SQL'
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmdbpass';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
SQL
  cat >/etc/slurm/slurmdbd.conf <<EOF
AuthType=auth/munge
DbdHost=localhost
DbdPort=6819
SlurmUser=root
DebugLevel=info
LogFile=/var/log/slurm/slurmdbd.log
PidFile=$PIDDIR/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurmdbpass
StorageLoc=slurm_acct_db
EOF
  chmod 600 /etc/slurm/slurmdbd.conf
  slurmdbd
  for _ in $(seq 150); do sacctmgr -n show cluster >/dev/null 2>&1 && break; sleep 0.2; done
  sacctmgr -i add cluster trtllm-test >/dev/null || true
  sacctmgr -i add account research Description=research Organization=trtllm >/dev/null || true
  sacctmgr -i add account proj2 Description=proj2 Organization=trtllm >/dev/null || true
  sacctmgr -i add user root Account=research DefaultAccount=research >/dev/null || true
  sacctmgr -i add user root Account=proj2 >/dev/null || true
  for user in sshtest slurmpw; do
    sacctmgr -i add user "$user" Account=research DefaultAccount=research >/dev/null || true
  done
}

write_main_conf() {
  node_facts
  {
    common_conf trtllm-test 6817 "" 20
    cat <<EOF
SlurmdPort=6818
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageEnforce=associations
EnforcePartLimits=ALL
AccountingStorageTRES=gres/gpu
JobCompType=jobcomp/none
# cpunode first: while a node named localhost is the only one defined, Slurm's lookup
# returns it for any name and reports the next node as a duplicate.
NodeName=cpunode NodeHostname=cpunode NodeAddr=127.0.0.2 Port=6816 CPUs=$NCPU $TOPO RealMemory=$MEM State=UNKNOWN
NodeName=localhost NodeHostname=localhost NodeAddr=127.0.0.1 Port=6818 CPUs=$NCPU $TOPO RealMemory=$MEM Gres=gpu:$GPUS State=UNKNOWN
NodeName=gpunode2 NodeHostname=gpunode2 NodeAddr=127.0.0.3 Port=6815 CPUs=$NCPU $TOPO RealMemory=$MEM Gres=gpu:$GPUS State=UNKNOWN
PartitionName=maint Nodes=localhost State=DOWN MaxTime=INFINITE
PartitionName=restricted Nodes=localhost AllowAccounts=proj2 MaxTime=INFINITE State=UP
PartitionName=batch-backfill Nodes=localhost MaxTime=INFINITE State=UP
PartitionName=debug Nodes=localhost MaxTime=02:00:00 State=UP
PartitionName=batch Nodes=localhost Default=YES MaxTime=INFINITE State=UP
PartitionName=cpu Nodes=cpunode MaxTime=INFINITE State=UP
PartitionName=multi Nodes=localhost,gpunode2 MaxTime=INFINITE State=UP
EOF
  } >"$MAIN_CONF"
  # localhost's GPUs are /dev/fakegpu0..GPUS-1, gpunode2's the next GPUS.
  for i in $(seq 0 $((2 * GPUS - 1))); do
    [[ -e /dev/fakegpu$i ]] || mknod -m 666 "/dev/fakegpu$i" c 195 "$i"
  done
  # File-less gres entries are dropped by slurmd; fake character devices (never opened) work.
  {
    echo "NodeName=localhost Name=gpu File=/dev/fakegpu[0-$((GPUS - 1))] AutoDetect=off"
    echo "NodeName=gpunode2 Name=gpu File=/dev/fakegpu[$GPUS-$((2 * GPUS - 1))] AutoDetect=off"
  } >/etc/slurm/gres.conf
  rm -f /etc/slurm/cgroup.conf  # 22.05 has no "disabled" cgroup plugin; none is used here
}

write_noacct_conf() {
  node_facts
  mkdir -p "$NOACCT_DIR"
  {
    common_conf trtllm-noacct 6827 "-noacct" 10
    cat <<EOF
SlurmdPort=6828
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=localhost NodeHostname=localhost NodeAddr=127.0.0.1 Port=6828 CPUs=$NCPU $TOPO RealMemory=$MEM State=UNKNOWN
PartitionName=batch Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
  } >"$NOACCT_CONF"
  : >"$NOACCT_DIR/gres.conf"
}

FAULT_DIR=/etc/slurm-fault
FAULT_CONF=$FAULT_DIR/slurm.conf

write_fault_conf() {
  node_facts
  mkdir -p "$FAULT_DIR"
  {
    common_conf trtllm-fault 6837 "-fault" 10
    cat <<EOF
SlurmdPort=6838
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=localhost NodeHostname=localhost NodeAddr=127.0.0.1 Port=6838 CPUs=$NCPU $TOPO RealMemory=$MEM State=UNKNOWN
PartitionName=batch Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
  } >"$FAULT_CONF"
  : >"$FAULT_DIR/gres.conf"
}

fault_ctld_alive() {
  [[ -s $PIDDIR/slurmctld-fault.pid ]] && kill -0 "$(cat "$PIDDIR/slurmctld-fault.pid")" 2>/dev/null
}

fault_start_ctld() {  # without -c: the controller recovers its jobs from StateSaveLocation
  fault_ctld_alive && return 0
  mkdir -p /var/spool/slurmctld-fault
  SLURM_CONF=$FAULT_CONF slurmctld
  for _ in $(seq 100); do
    SLURM_CONF=$FAULT_CONF timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP' && return 0
    sleep 0.2
  done
  echo "slurm.sh: the trtllm-fault slurmctld did not come up; see /var/log/slurm/slurmctld-fault.log" >&2
  exit 1
}

fault_kill_ctld() {
  if fault_ctld_alive; then
    local pid
    pid=$(cat "$PIDDIR/slurmctld-fault.pid")
    kill -9 "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
}

fault_stop() {
  stop_pid slurmd-fault-localhost
  stop_pid slurmctld-fault
}

fault_ensure() {
  answers "$FAULT_CONF" && return 0
  [[ -s $PIDDIR/munged.pid ]] && kill -0 "$(cat "$PIDDIR/munged.pid")" 2>/dev/null ||
    { echo "slurm.sh: munge is not running; run 'slurm.sh ensure' first" >&2; exit 1; }
  fault_stop
  write_fault_conf
  mkdir -p /var/spool/slurmctld-fault
  SLURM_CONF=$FAULT_CONF slurmctld -c
  SLURM_CONF=$FAULT_CONF slurmd -N localhost
  for _ in $(seq 150); do answers "$FAULT_CONF" && return 0; sleep 0.2; done
  echo "slurm.sh: the trtllm-fault cluster did not come up; see /var/log/slurm/*-fault*.log" >&2
  exit 1
}

add_host_names() {  # cpunode and gpunode2 are more slurmds on this host; Slurm wants distinct names
  grep -qE '^127\.0\.0\.2[[:space:]].*\bcpunode\b' /etc/hosts || echo "127.0.0.2 cpunode" >>/etc/hosts
  grep -qE '^127\.0\.0\.3[[:space:]].*\bgpunode2\b' /etc/hosts || echo "127.0.0.3 gpunode2" >>/etc/hosts
}

start_main_slurmds() {
  slurmd -N localhost
  slurmd -N cpunode
  slurmd -N gpunode2
}

wait_main_nodes() {  # nodes can register one after another: wait until every node is usable
  for _ in $(seq 150); do
    [[ $(timeout 10 sinfo -h -N -o '%T' 2>/dev/null | grep -cvE '^(idle|mixed|allocated)') -eq 0 ]] &&
      answers "$MAIN_CONF" && return 0
    sleep 0.2
  done
  return 1
}

main_is_current() {  # the running trtllm-test has the node the current config adds
  timeout 10 scontrol show node gpunode2 >/dev/null 2>&1
}

upgrade_main() {  # a running trtllm-test with an older config: rewrite it, restart its daemons
  echo "slurm.sh: trtllm-test has no node gpunode2: rewriting $MAIN_CONF, restarting its slurmctld and slurmds" >&2
  add_host_names
  write_main_conf
  local node
  for node in localhost cpunode gpunode2; do stop_pid "slurmd-$node"; done
  stop_pid slurmctld
  # Without -c the controller recovers its queue; slurmstepd outlives slurmd, so running
  # jobs go on and the restarted slurmds find them again.
  slurmctld
  start_main_slurmds
  if ! wait_main_nodes; then
    echo "slurm.sh: trtllm-test did not come back with gpunode2; see /var/log/slurm/" >&2
    sinfo -N >&2 || true
    exit 1
  fi
}

start() {
  export DEBIAN_FRONTEND=noninteractive
  local packages=(slurmctld slurmd slurm-client munge slurmdbd mariadb-server)
  local missing=()
  for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$package")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
  stop
  mkdir -p "$PIDDIR" /var/log/slurm /var/spool
  start_munge
  for user in sshtest slurmpw noassoc; do
    id "$user" >/dev/null 2>&1 || useradd -m -s /bin/bash "$user"
  done
  add_host_names
  write_main_conf
  write_noacct_conf
  start_accounting
  mkdir -p /var/spool/slurmctld /var/spool/slurmctld-noacct
  slurmctld -c
  start_main_slurmds
  SLURM_CONF=$NOACCT_CONF slurmctld -c
  SLURM_CONF=$NOACCT_CONF slurmd -N localhost
  for _ in $(seq 150); do
    status && break
    sleep 0.2
  done
  if ! status; then
    echo "slurm.sh: the clusters did not come up; see /var/log/slurm/" >&2
    tail -n 20 /var/log/slurm/*.log >&2 || true
    exit 1
  fi
  wait_main_nodes || true
}

case ${1:-ensure} in
  ensure)
    if status; then
      main_is_current || upgrade_main
    else
      start
    fi
    echo "slurm: trtllm-test (SLURM_CONF=$MAIN_CONF), trtllm-noacct (SLURM_CONF=$NOACCT_CONF)"
    ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  fault-ensure) fault_ensure ;;
  fault-kill-ctld) fault_kill_ctld ;;
  fault-start-ctld) fault_start_ctld ;;
  fault-stop) fault_stop ;;
  *)
    echo "usage: $0 ensure|start|stop|status|fault-ensure|fault-kill-ctld|fault-start-ctld|fault-stop" >&2
    exit 2
    ;;
esac
