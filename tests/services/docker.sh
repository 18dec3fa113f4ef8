#!/bin/bash
# The Docker engine for the [docker] tests: a real dockerd (Debian docker.io, 20.10) on
# the default socket, and a small local test image. No registry is reachable from the
# test machines, so the image is made here with `docker import`.
#
# Usage: tests/services/docker.sh ensure   # idempotent: install, start, build the image
#        tests/services/docker.sh stop     # stop the dockerd this script started (by PID)
#        tests/services/docker.sh status   # exit 0 when the engine answers and the image exists
#        tests/services/docker.sh private-start DIR   # a second, private dockerd (see below)
#        tests/services/docker.sh private-stop DIR
#
# private-start starts another dockerd whose socket, data and state all live in DIR
# (socket DIR/docker.sock, printed as a DOCKER_HOST value), with no bridge and no
# iptables rules, and loads the test image into it. Tests that stop an engine on
# purpose ("engine stopped -> ERROR") stop that one, never the shared engine.
# private-stop stops it (by its PID file), unmounts what it left under DIR and removes
# its data; DIR itself stays.
#
# The image trtllm-run-test:busybox is busybox (sh, sleep, head, cat, ...) plus the
# host's /bin/bash and the shared libraries ldd lists for it: the Category 1 payload
# runs `bash -c`, which busybox lacks. Copying bash takes well under a second; a
# debootstrap minbase image would take ~25 s and need the network. The image has no
# Python and no TensorRT-LLM: tests run with skip_install=true, build_project=false.
#
# State (pid file, dockerd log, rootfs) lives in $TRTLLM_RUN_SERVICES_DIR/docker
# (default /tmp/trtllm-run-services/docker). Concurrent callers are serialized by a lock.
set -euo pipefail

IMAGE=${TRTLLM_RUN_TEST_IMAGE:-trtllm-run-test:busybox}
STATE=${TRTLLM_RUN_SERVICES_DIR:-/tmp/trtllm-run-services}/docker
mkdir -p "$STATE"

log() { echo "docker.sh: $*" >&2; }

engine_up() { docker info >/dev/null 2>&1; }

install_packages() {
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  [[ -x /bin/busybox ]] || missing+=(busybox-static)
  [[ ${#missing[@]} -eq 0 ]] && return 0
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  local sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
    "${sudo_cmd[@]}" apt-get update -q >/dev/null
    "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  }
}

start_engine() {
  engine_up && return 0
  # A dockerd of ours that died leaves its pid file and the socket behind.
  rm -f "$STATE/dockerd.pid"
  log "starting dockerd (log: $STATE/dockerd.log)"
  # setsid: the engine must outlive the test process that first needed it. The lock's fd 9
  # is closed for it, or every later `ensure` would wait for the engine to exit.
  setsid dockerd --pidfile "$STATE/dockerd.pid" >"$STATE/dockerd.log" 2>&1 </dev/null 9>&- &
  for _ in $(seq 150); do
    engine_up && return 0
    sleep 0.2
  done
  log "dockerd did not answer within 30 s; last lines of $STATE/dockerd.log:"
  tail -n 20 "$STATE/dockerd.log" >&2 || true
  return 1
}

build_image() {
  docker image inspect "$IMAGE" >/dev/null 2>&1 && return 0
  log "building $IMAGE"
  local root="$STATE/rootfs"
  rm -rf "$root"
  mkdir -p "$root"/{bin,tmp,etc,proc,sys,dev,root,lib,lib64,usr/bin}
  chmod 1777 "$root/tmp"
  cp /bin/busybox "$root/bin/busybox"
  local applet
  for applet in $("$root/bin/busybox" --list); do
    [[ $applet == busybox || $applet == bash ]] || ln -sf busybox "$root/bin/$applet"
  done
  cp -L /bin/bash "$root/bin/bash"
  local lib
  for lib in $(ldd /bin/bash | grep -o '/[^ ]*'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
  echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
  echo 'root:x:0:' >"$root/etc/group"
  tar -C "$root" -cf "$STATE/rootfs.tar" .
  docker import --change 'ENV PATH=/usr/bin:/bin' "$STATE/rootfs.tar" "$IMAGE" >/dev/null
  rm -rf "$root" "$STATE/rootfs.tar"
  docker run --rm "$IMAGE" bash -c 'echo "bash $BASH_VERSION ok"' >/dev/null
}

private_start() {
  local dir=$1
  mkdir -p "$dir"
  local host="unix://$dir/docker.sock"
  # Its own network namespace: a second dockerd removes the host's docker0 bridge (even
  # with --bridge=none), which breaks the shared engine.
  setsid unshare --net dockerd -H "$host" --data-root "$dir/data" --exec-root "$dir/exec" \
    --pidfile "$dir/dockerd.pid" --bridge=none --iptables=false --ip-masq=false \
    >"$dir/dockerd.log" 2>&1 </dev/null 9>&- &
  for _ in $(seq 150); do
    DOCKER_HOST=$host docker info >/dev/null 2>&1 && break
    sleep 0.2
  done
  if ! DOCKER_HOST=$host docker info >/dev/null 2>&1; then
    log "private dockerd in $dir did not answer within 30 s; see $dir/dockerd.log"
    return 1
  fi
  docker save "$IMAGE" | DOCKER_HOST=$host docker load >/dev/null
  echo "$host"
}

private_stop() {
  local dir=$1
  if [[ -s $dir/dockerd.pid ]]; then
    local pid
    pid=$(cat "$dir/dockerd.pid")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    fi
    rm -f "$dir/dockerd.pid"
  fi
  local mount
  # Deepest first: the netns and overlay mounts the engine leaves on a forced stop.
  for mount in $(awk -v d="$dir/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r); do
    umount -l "$mount" 2>/dev/null || true
  done
  rm -rf "$dir/data" "$dir/exec"
}

case ${1:-ensure} in
  ensure)
    exec 9>"$STATE/ensure.lock"
    flock 9
    install_packages
    start_engine
    build_image
    ;;
  stop)
    exec 9>"$STATE/ensure.lock"
    flock 9
    if [[ -s $STATE/dockerd.pid ]]; then
      pid=$(cat "$STATE/dockerd.pid")
      if kill "$pid" 2>/dev/null; then
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      fi
      rm -f "$STATE/dockerd.pid"
    else
      log "no dockerd started by this script ($STATE/dockerd.pid absent); nothing stopped"
    fi
    ;;
  status)
    engine_up && docker image inspect "$IMAGE" >/dev/null 2>&1
    ;;
  private-start)
    [[ -n ${2:-} ]] || { echo "usage: $0 private-start DIR" >&2; exit 2; }
    private_start "$2"
    ;;
  private-stop)
    [[ -n ${2:-} ]] || { echo "usage: $0 private-stop DIR" >&2; exit 2; }
    private_stop "$2"
    ;;
  *)
    echo "usage: $0 ensure|stop|status|private-start DIR|private-stop DIR" >&2
    exit 2
    ;;
esac
