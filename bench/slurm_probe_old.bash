#!/bin/bash
# The Slurm probe script as it was before issue 7's optimization (git 9ef381a), kept so
# that bench/slurm_probe.sh can measure the old and the new probe in the same run. Run as
# `bash slurm_probe_old.bash MARKER`; prints the same sections as the new one.
M=$1
D=$(mktemp -d "${TMPDIR:-/tmp}/trtllm-run-probe.XXXXXX") || exit 97
trap 'rm -rf "$D"' EXIT
T=
if command -v timeout >/dev/null 2>&1; then T="timeout -k 5 60"; fi
q() {
  local n=$1
  shift
  $T "$@" >"$D/$n.out" 2>"$D/$n.err" </dev/null
  echo $? >"$D/$n.rc"
}
put() {
  printf '%s' "$2" >"$D/$1.out"
  : >"$D/$1.err"
  echo 0 >"$D/$1.rc"
}
emit_all() {
  local f n
  for f in "$D"/*.rc; do
    [ -e "$f" ] || continue
    n=${f##*/}
    n=${n%.rc}
    printf '%s %s %s %s %s\n' "$M" "$n" "$(cat "$f")" $(($(wc -c <"$D/$n.out"))) $(($(wc -c <"$D/$n.err")))
    cat "$D/$n.out" "$D/$n.err"
  done
}
F=
CHECK=1
U=$(id -un 2>/dev/null || whoami 2>/dev/null || printf '%s' "${USER:-}")
put user "$U"
miss=
for t in sacctmgr sinfo; do command -v "$t" >/dev/null 2>&1 || miss="$miss $t"; done
opt=
for t in scontrol srun sbatch; do command -v "$t" >/dev/null 2>&1 || opt="$opt $t"; done
put missing "$miss"
put missing_optional "$opt"
if [ -n "$miss" ]; then
  emit_all
  exit 0
fi
q defacct sacctmgr -nP show user "$U" format=DefaultAccount &
P1=$!
q assoc sacctmgr -nP show assoc where user="$U" format=account &
P2=$!
q sinfo sinfo -h -o '%P|%a|%l|%D|%G' &
P3=$!
if command -v scontrol >/dev/null 2>&1; then q nodes scontrol -o show node & fi
if command -v srun >/dev/null 2>&1; then q mpi srun --mpi=list & fi
wait "$P1" "$P2" "$P3"
first() { sed -n 's/^[[:space:]]*//; s/[[:space:]]*$//; /./{p;q;}' "$1"; }
A=
[ "$(cat "$D/defacct.rc")" = 0 ] && A=$(first "$D/defacct.out")
[ -z "$A" ] && [ "$(cat "$D/assoc.rc")" = 0 ] && A=$(first "$D/assoc.out")
put access_account "$A"
if [ "$CHECK" = 1 ] && command -v sbatch >/dev/null 2>&1 && [ "$(cat "$D/sinfo.rc")" = 0 ]; then
  seen=' '
  while IFS='|' read -r p a rest; do
    p=${p%\*}
    [ "$a" = up ] || continue
    case "$seen" in *" $p "*) continue ;; esac
    seen="$seen$p "
    if [ -n "$F" ]; then case "$F" in *" $p "*) ;; *) continue ;; esac; fi
    if [ -n "$A" ]; then
      q "access=$p" sbatch --test-only --partition="$p" --account="$A" --nodes=1 --time=00:01:00 --ntasks=1 --wrap=true &
    else
      q "access=$p" sbatch --test-only --partition="$p" --nodes=1 --time=00:01:00 --ntasks=1 --wrap=true &
    fi
  done <"$D/sinfo.out"
fi
wait
emit_all
