#!/bin/bash
# Installs the Debian 12 packages that building and testing trtllm-run need. Idempotent:
# does nothing when everything is present. Run as root (or through sudo).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

packages=(
  g++ cmake ninja-build pkg-config git clang-format
  libboost1.81-dev libboost-program-options1.81-dev libboost-filesystem1.81-dev
  rapidjson-dev libyaml-cpp-dev catch2
  libsqlite3-dev sqlite3  # the history store; sqlite3: the tests and bench read stores with it
  libpq-dev postgresql  # a shared history on PostgreSQL; postgresql: the tests' server
  python3  # perf-sanity plans run the repo's submit.py (tests: a stand-in)
  python3-pytest  # tests: real pytest runs the TensorRT-LLM-shaped test trees
  python3-pytest-timeout  # tests: a test list's TIMEOUT (N) is pytest-timeout's --timeout
  python3-pandas  # tests: the independent implementation of CI's perf baseline (perf_gate_pandas)
  groff-base bsdextrautils  # tests: the generated man page rendered (nroff -man) and read (col -b)
  strace time  # tests: what `run` opens (strace) and its peak RSS (GNU time)
  chromium  # tests: the HTML report opened headless (screenshot, DOM, net log)
  util-linux  # tests: unshare -n runs that browser without a network
  tmux  # tests: the terminal that Ctrl-C is pressed in and whose screen is read (capture-pane)
  openssh-client  # the SSH scenario (unit tests run a real ssh that fails to connect)
  clang libclang-rt-dev llvm  # sanitizer + libFuzzer build (tests/run.sh), readable ASan stacks
)
packages+=("$@")  # extra packages a caller needs (test services)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

sudo_cmd=()
[[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
# Boost 1.81's -dev packages conflict with 1.74's; remove those first on a reused machine.
mapfile -t old_boost < <(dpkg-query -W -f='${Package} ${Status}\n' 'libboost*1.74-dev' 2>/dev/null |
                         awk '/install ok installed/{print $1}')
if [[ ${#old_boost[@]} -gt 0 ]]; then
  "${sudo_cmd[@]}" apt-get remove -y -q "${old_boost[@]}" >/dev/null
fi
echo "install_deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -q >/dev/null
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
