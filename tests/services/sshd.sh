#!/bin/bash
# A real OpenSSH server on 127.0.0.1:2222 for the test suite (Debian 12, root).
#
#   tests/services/sshd.sh ensure   start it unless it already answers (idempotent)
#   tests/services/sshd.sh stop     stop it (by PID file)
#   tests/services/sshd.sh status   exit 0 when it answers
#
# Users (created if missing; the Slurm service gives them associations):
#   sshtest  key auth with $DIR/id_ed25519 (no passphrase)
#   slurmpw  password auth only, password "trtllm-test-pw" (a test secret: tests grep
#            for it to prove it never leaks into argv, logs or files)
# Extra instances for fault tests (never touch the shared one on 2222), same host key,
# users and settings, started after `ensure`:
#   tests/services/sshd.sh start-extra PORT  start one on 127.0.0.1:PORT (known_hosts_PORT,
#                                            sshd-PORT.pid, sshd-PORT.log in $DIR)
#   tests/services/sshd.sh stop-extra PORT   SIGKILL it and its connections (each
#                                            client's connection drops at once)
# Client files in $DIR=/run/trtllm-test-sshd: id_ed25519 (key), known_hosts (host key
# already trusted), sshd.log (one "Accepted ..." line per authenticated connection).
set -euo pipefail

DIR=/run/trtllm-test-sshd
PORT=2222
PASSWORD=trtllm-test-pw

answers() {
  [[ -s $DIR/sshd.pid ]] && kill -0 "$(cat "$DIR/sshd.pid")" 2>/dev/null &&
    timeout 10 ssh -p "$PORT" -i "$DIR/id_ed25519" -o BatchMode=yes \
      -o UserKnownHostsFile="$DIR/known_hosts" -o StrictHostKeyChecking=yes \
      sshtest@127.0.0.1 true 2>/dev/null
}

stop() {
  if [[ -s $DIR/sshd.pid ]]; then
    kill "$(cat "$DIR/sshd.pid")" 2>/dev/null || true
    rm -f "$DIR/sshd.pid"
  fi
}

start() {
  export DEBIAN_FRONTEND=noninteractive
  local missing=()
  for package in openssh-server openssh-client; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$package")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
  stop
  mkdir -p "$DIR" /run/sshd
  chmod 755 /run/sshd  # privilege separation directory
  [[ -f $DIR/host_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -f "$DIR/host_ed25519"
  [[ -f $DIR/id_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -f "$DIR/id_ed25519"
  echo "[127.0.0.1]:$PORT $(cut -d' ' -f1,2 "$DIR/host_ed25519.pub")" >"$DIR/known_hosts"

  for user in sshtest slurmpw; do
    id "$user" >/dev/null 2>&1 || useradd -m -s /bin/bash "$user"
  done
  install -d -m 700 -o sshtest -g sshtest /home/sshtest/.ssh
  install -m 600 -o sshtest -g sshtest "$DIR/id_ed25519.pub" /home/sshtest/.ssh/authorized_keys
  echo "slurmpw:$PASSWORD" | chpasswd

  cat >"$DIR/sshd_config" <<EOF
Port $PORT
ListenAddress 127.0.0.1
HostKey $DIR/host_ed25519
PidFile $DIR/sshd.pid
PermitRootLogin no
PubkeyAuthentication yes
PasswordAuthentication yes
KbdInteractiveAuthentication no
UsePAM yes
AuthorizedKeysFile .ssh/authorized_keys
Subsystem sftp /usr/lib/openssh/sftp-server
MaxSessions 64
MaxStartups 64:30:128
LogLevel INFO
EOF
  /usr/sbin/sshd -t -f "$DIR/sshd_config"
  /usr/sbin/sshd -f "$DIR/sshd_config" -E "$DIR/sshd.log"
  for _ in $(seq 50); do answers && return 0; sleep 0.1; done
  echo "sshd.sh: sshd did not come up; see $DIR/sshd.log" >&2
  exit 1
}

extra_pid() { cat "$DIR/sshd-$1.pid" 2>/dev/null || true; }

start_extra() {  # $1 port; the shared instance must have been set up (ensure)
  local port=$1
  [[ $port =~ ^[0-9]+$ && $port != "$PORT" ]] || { echo "sshd.sh: bad extra port '$port'" >&2; exit 2; }
  [[ -s $DIR/sshd_config && -f $DIR/host_ed25519 ]] || { echo "sshd.sh: run 'sshd.sh ensure' first" >&2; exit 1; }
  local pid
  pid=$(extra_pid "$port")
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && return 0
  sed -e "s/^Port .*/Port $port/" -e "s|^PidFile .*|PidFile $DIR/sshd-$port.pid|" \
    "$DIR/sshd_config" >"$DIR/sshd_config_$port"
  echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$DIR/host_ed25519.pub")" >"$DIR/known_hosts_$port"
  /usr/sbin/sshd -t -f "$DIR/sshd_config_$port"
  /usr/sbin/sshd -f "$DIR/sshd_config_$port" -E "$DIR/sshd-$port.log"
  for _ in $(seq 50); do
    timeout 10 ssh -p "$port" -i "$DIR/id_ed25519" -o BatchMode=yes \
      -o UserKnownHostsFile="$DIR/known_hosts_$port" -o StrictHostKeyChecking=yes \
      sshtest@127.0.0.1 true 2>/dev/null && return 0
    sleep 0.1
  done
  echo "sshd.sh: the extra sshd on port $port did not come up; see $DIR/sshd-$port.log" >&2
  exit 1
}

stop_extra() {  # $1 port: the listener and every connection it forked
  local port=$1 pid
  pid=$(extra_pid "$port")
  [[ -n $pid ]] || return 0
  pkill -KILL -P "$pid" 2>/dev/null || true
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$DIR/sshd-$port.pid"
}

case ${1:-ensure} in
  ensure)
    answers || start
    echo "sshd: 127.0.0.1:$PORT key user sshtest ($DIR/id_ed25519), password user slurmpw"
    ;;
  start) start ;;
  stop) stop ;;
  status) answers ;;
  start-extra) start_extra "${2:?port}" ;;
  stop-extra) stop_extra "${2:?port}" ;;
  *)
    echo "usage: $0 ensure|start|stop|status|start-extra PORT|stop-extra PORT" >&2
    exit 2
    ;;
esac
