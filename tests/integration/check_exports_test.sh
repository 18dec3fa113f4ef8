#!/bin/bash
# tests/check_exports.py holds libtrtllm_run_core.so to its API: the built library
# passes; a listing with a private header's function, an anonymous-namespace symbol or
# one symbol over the budget fails naming it; a private header marked TRTLLM_RUN_API or
# visibility("default") fails naming the line; a missing library is bad usage (exit 2).
#
#   check_exports_test.sh SOURCE_DIR LIBRARY [--no-budget]
#
# --no-budget (sanitizer builds) is passed on where the real budget would count.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 SOURCE_DIR LIBRARY [--no-budget]" >&2
  exit 2
fi
source_dir=$1
library=$2
shift 2
extra=("$@")
check="$source_dir/tests/check_exports.py"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/check_exports_test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Runs the check with the given arguments; exit status in $rc, stdout+stderr in $out.
run_check() {
  rc=0
  out=$(python3 "$check" "$@" 2>&1) || rc=$?
}

expect() {
  local what=$1 want_rc=$2 needle=$3
  if [[ $rc -ne $want_rc ]]; then
    fail "$what: exit $rc, expected $want_rc:"$'\n'"$out"
  elif [[ $out != *"$needle"* ]]; then
    fail "$what: the output does not say '$needle':"$'\n'"$out"
  fi
}

# 1. The built library: the API only, within the budget.
run_check "$library" "${extra[@]}"
expect "the built library" 0 "PASS: "
echo "$out"

listing="$scratch/listing.txt"
nm -D --defined-only -C "$library" >"$listing"
count=$(wc -l <"$listing")

# 2. A private header's function exported. The name must be private for the case to mean
# anything: declared in libcore/src, never written in the API headers.
private=IsCasesDir
grep -rqw "$private" "$source_dir/libcore/src" || fail "$private is no longer in libcore/src: pick another"
if grep -rqw "$private" "$source_dir/libcore/include/trtllm_run"; then
  fail "$private is in the API headers now: pick another private name"
fi
cp "$listing" "$scratch/private.txt"
echo "0000000000001000 T trtllm_run::$private(std::string const&)" >>"$scratch/private.txt"
run_check "$library" "${extra[@]}" --nm-listing "$scratch/private.txt"
expect "a private function" 1 "not in the API headers: $private"

# A private class's member and typeinfo, qualified inside a public namespace.
cp "$listing" "$scratch/member.txt"
echo "0000000000002000 V typeinfo for trtllm_run::SlurmWatchBatcher" >>"$scratch/member.txt"
run_check "$library" "${extra[@]}" --nm-listing "$scratch/member.txt"
expect "a private class's typeinfo" 1 "not in the API headers: SlurmWatchBatcher"

# 3. Anything of an anonymous namespace.
cp "$listing" "$scratch/anonymous.txt"
echo "0000000000003000 T trtllm_run::(anonymous namespace)::Helper()" >>"$scratch/anonymous.txt"
run_check "$library" "${extra[@]}" --nm-listing "$scratch/anonymous.txt"
expect "an anonymous-namespace symbol" 1 "(anonymous namespace)"

# 4. One symbol over the budget; exactly at it passes.
echo "max_exported_symbols $((count - 1))" >"$scratch/budget_under.txt"
run_check "$library" --budget-file "$scratch/budget_under.txt"
expect "one over the budget" 1 "$count exported symbols, over the budget of $((count - 1))"
echo "max_exported_symbols $count" >"$scratch/budget_exact.txt"
run_check "$library" --budget-file "$scratch/budget_exact.txt"
expect "at the budget" 0 "PASS: $count exported symbols"

# 5. Export marks in private code: a copy of the sources with one planted in each form.
copy="$scratch/tree"
mkdir -p "$copy/libcore" "$copy/tests/fixtures"
cp -r "$source_dir/libcore/include" "$source_dir/libcore/src" "$copy/libcore/"
cp -r "$source_dir/apps" "$copy/apps"
cp -r "$source_dir/tests/fixtures/exports" "$copy/tests/fixtures/exports"
run_check "$library" "${extra[@]}" --source-dir "$copy"
expect "the copied tree" 0 "PASS: "
header=$(grep -rl "^std::string\|^bool\|^Status" "$copy/libcore/src" --include='*.h' | sort | head -1)
sed -i '0,/^\(std::string\|bool\|Status\) /s//TRTLLM_RUN_API &/' "$header"
line=$(grep -n "TRTLLM_RUN_API" "$header" | head -1 | cut -d: -f1)
run_check "$library" --source-dir "$copy"
expect "TRTLLM_RUN_API in a private header" 1 "${header#"$copy"/}:$line:"
cp "$source_dir/${header#"$copy"/}" "$header"
echo 'void Planted() __attribute__((visibility("default")));' >>"$copy/apps/trtllm-run/cli.h"
run_check "$library" --source-dir "$copy"
expect "visibility(\"default\") in the CLI" 1 "apps/trtllm-run/cli.h:"

# 6. Bad usage.
run_check "$scratch/no-such-library.so"
expect "a missing library" 2 "no library at"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "PASS: check_exports.py passes the library and fails each planted export"
