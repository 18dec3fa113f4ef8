#!/bin/bash
# Core decides by executor traits and plan facts, never by plugin names: a string literal
# naming a built-in executor (local_direct, local_docker, local_slurm, remote_slurm) or
# workflow (pytest, bench, eval, custom, perf_sanity) may appear in libcore/src only in
# routing.cc, the routing table of spec 000 Step 2.
#
#   core_plugin_names_test.sh SOURCE_DIR
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 SOURCE_DIR" >&2
  exit 2
fi
SRC="$1/libcore/src"
[[ -d $SRC ]] || {
  echo "FAIL: no $SRC" >&2
  exit 1
}

status=0
check() {
  local what=$1 pattern=$2
  local hits
  hits=$(grep -rnE --include='*.cc' --include='*.h' "$pattern" "$SRC" | grep -v "^$SRC/placement/routing.cc:" || true)
  if [[ -n $hits ]]; then
    echo "FAIL: libcore/src names built-in $what outside routing.cc:" >&2
    echo "$hits" | sed "s|^$SRC/|  libcore/src/|" >&2
    status=1
  fi
}
check executors '"(local_direct|local_docker|local_slurm|remote_slurm)"'
check workflows '"(pytest|bench|eval|custom|perf_sanity)"'
[[ $status -eq 0 ]] && echo "PASS: only routing.cc names built-in executors and workflows"
exit $status
