#!/bin/bash
# tests/check_layout.py fails on an include cycle between the areas of libcore/src and
# names it: the real tree passes; copies of it with one #include added that closes a cycle
# (two areas, then three) fail naming the areas and the added line; a private include
# planted in plugins/ fails naming the line; private includes in apps/ are counted.
#
#   check_layout_test.sh SOURCE_DIR
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 SOURCE_DIR" >&2
  exit 2
fi
source_dir=$1
check="$source_dir/tests/check_layout.py"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/check_layout_test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Runs the check on $1; its exit status in $rc, stdout+stderr in $out.
run_check() {
  rc=0
  out=$(python3 "$check" "$1" 2>&1) || rc=$?
}

expect_in_output() {
  local what=$1 needle=$2
  if [[ $out != *"$needle"* ]]; then
    fail "$what: the output does not say '$needle':"
    echo "$out" | sed 's/^/    /' >&2
  fi
}

# A copy of the tree's libcore/src, with empty plugins/ and apps/.
fresh_copy() {
  local dir="$scratch/$1"
  mkdir -p "$dir/libcore" "$dir/plugins" "$dir/apps"
  cp -r "$source_dir/libcore/src" "$dir/libcore/src"
  echo "$dir"
}

# 1. The tree as it is: no cycle.
run_check "$source_dir"
[[ $rc -eq 0 ]] || fail "the tree has an area cycle (exit $rc):"$'\n'"$out"
expect_in_output "the tree" "PASS: no include cycle"
expect_in_output "the tree" "private libcore/src includes in plugins/: 0"
expect_in_output "the tree" "PASS: plugins/ include no private libcore/src header"
expect_in_output "the tree" "private libcore/src includes in apps/:"

# 2. model -> runtime added to a tree where runtime includes model: a two-area cycle.
two=$(fresh_copy two)
grep -q '#include "model/' "$two"/libcore/src/runtime/*.cc ||
  fail "the premise broke: runtime/ no longer includes model/ (pick another pair)"
sed -i '0,/^#include /s//#include "runtime\/cases_dir.h"\n#include /' "$two/libcore/src/model/json_util.cc"
line=$(grep -n 'runtime/cases_dir.h' "$two/libcore/src/model/json_util.cc" | cut -d: -f1)
run_check "$two"
[[ $rc -eq 1 ]] || fail "two-area cycle: exit $rc, expected 1"
expect_in_output "two-area cycle" "FAIL: model and runtime include each other"
expect_in_output "two-area cycle" "libcore/src/model/json_util.cc:$line"
expect_in_output "two-area cycle" "area cycle"

# 3. supervise -> stage closes stage -> runtime -> supervise: a cycle of three areas, none
# of them including another both ways.
three=$(fresh_copy three)
grep -q '#include "runtime/' "$three"/libcore/src/stage/*.cc ||
  fail "the premise broke: stage/ no longer includes runtime/ (pick another triple)"
grep -q '#include "supervise/' "$three"/libcore/src/runtime/*.cc ||
  fail "the premise broke: runtime/ no longer includes supervise/ (pick another triple)"
sed -i '0,/^#include /s//#include "stage\/rerun_policy.h"\n#include /' \
  "$three/libcore/src/supervise/diagnosis.cc"
run_check "$three"
[[ $rc -eq 1 ]] || fail "three-area cycle: exit $rc, expected 1"
expect_in_output "three-area cycle" "area cycle runtime -> supervise -> stage -> runtime"
expect_in_output "three-area cycle" "supervise -> stage: libcore/src/supervise/diagnosis.cc:"
[[ $out != *"include each other"* ]] || fail "three-area cycle reported as a pair: $out"

# 4. A plugin including a private header fails, naming the line; one in apps/ is counted,
# not a failure; a plugin's own header beside the including file passes, also when
# libcore/src has a header of the same name.
planted=$(fresh_copy planted)
mkdir -p "$planted/plugins/p" "$planted/apps/a"
printf '#include "trtllm_run/sdk/text.h"\n#include "model/json_util.h"\n' >"$planted/plugins/p/p.cc"
printf '#include "model/json_util.h"\n' >"$planted/apps/a/a.cc"
run_check "$planted"
[[ $rc -eq 1 ]] || fail "a private include in plugins/: exit $rc, expected 1"
expect_in_output "private include" "private libcore/src includes in plugins/: 1"
expect_in_output "private include" "private libcore/src includes in apps/: 1"
expect_in_output "private include" "FAIL: plugin includes a private libcore/src header: plugins/p/p.cc:2 model/json_util.h"

angled=$(fresh_copy angled)
mkdir -p "$angled/plugins/p"
printf '#include <os/ssh.h>\n' >"$angled/plugins/p/p.cc"
run_check "$angled"
[[ $rc -eq 1 ]] || fail "an angled private include in plugins/: exit $rc, expected 1"
expect_in_output "angled include" "plugins/p/p.cc:1 os/ssh.h"

own=$(fresh_copy own)
mkdir -p "$own/plugins/p/model"
printf '#include "model/json_util.h"\n' >"$own/plugins/p/p.cc"
touch "$own/plugins/p/model/json_util.h"
run_check "$own"
[[ $rc -eq 0 ]] || fail "a plugin's own header named like a private one failed (exit $rc): $out"
expect_in_output "own header" "PASS: plugins/ include no private libcore/src header"

# 5. No libcore/src there: a usage error, exit 2.
run_check "$scratch/nowhere"
[[ $rc -eq 2 ]] || fail "no libcore/src: exit $rc, expected 2"
expect_in_output "no libcore/src" "no libcore/src under"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "PASS: check_layout.py passes the tree and names injected cycles"
