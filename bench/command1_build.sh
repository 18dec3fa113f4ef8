#!/bin/bash
# Command 1 build benchmark (bench/README.md): times the configure and build steps of the
# README's command 1, exactly as the README writes them, in a fresh clone of this
# repository's HEAD with an empty build directory and ccache disabled (CCACHE_DISABLE=1), as
# a new user's first build on a machine whose packages are installed. Prints the wall time,
# the CPU time (user + system of every compiler and linker: on a shared machine the wall
# time depends on the other load, the CPU time much less), the number of build steps and
# the heaviest translation units from ninja's .ninja_log.
#   bench/command1_build.sh [--source DIR] [--top N] [--check]
# --source DIR: build DIR as it is (default: a `git clone` of HEAD into a temporary dir).
# --check: exit 1 when the wall time is over 240 s (the target on a 2-core machine).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
source_dir=
top=12
check=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --source) source_dir=$2; shift 2 ;;
    --top) top=$2; shift 2 ;;
    --check) check=1; shift ;;
    *) echo "usage: $0 [--source DIR] [--top N] [--check]" >&2; exit 2 ;;
  esac
done
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time not found: apt-get install time" >&2; exit 2; }

# Command 1 is the first line of the README that starts with cmake/install_deps.sh; its
# steps are joined by " && ". The cmake steps (configure and build) are timed; installing
# packages and running the example are not the build.
command1=$(grep -m1 '^cmake/install_deps.sh && ' README.md) ||
  { echo "README.md has no command 1 (a line starting 'cmake/install_deps.sh && ')" >&2; exit 2; }
build_steps=()
while IFS= read -r step; do
  [[ $step == cmake\ * ]] && build_steps+=("$step")
done < <(echo "$command1" | sed 's/ && /\n/g')
[[ ${#build_steps[@]} -ge 2 ]] ||
  { echo "command 1 has no configure and build steps: $command1" >&2; exit 2; }
build_command=$(printf '%s && ' "${build_steps[@]}")
build_command=${build_command% && }

work=$(mktemp -d "${TMPDIR:-/tmp}/command1_build.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
if [[ -z $source_dir ]]; then
  git clone -q --no-hardlinks "$repo" "$work/src"
  source_dir=$work/src
fi
# The build dir the README names must not exist yet: a clean build.
rm -rf -- "$source_dir/build"

echo "== README command 1 build, in $source_dir, CCACHE_DISABLE=1, $(nproc) CPUs"
echo "   $build_command"
echo "   load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if ! (cd "$source_dir" && CCACHE_DISABLE=1 /usr/bin/time -f "%e %U %S" -o "$work/time" \
      bash -c "$build_command" >"$work/build.log" 2>&1); then
  tail -n 30 "$work/build.log" >&2
  echo "command 1's build failed (log above)" >&2
  exit 1
fi
read -r wall user sys <"$work/time"
steps=$(awk 'NR > 1' "$source_dir/build/.ninja_log" | wc -l)
echo "   load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-36s %10s\n" "figure" "value"
awk -v w="$wall" 'BEGIN { printf "%-36s %7d:%02d   (target < 4:00)\n", "wall time (m:s)", w / 60, w % 60 }'
awk -v u="$user" -v s="$sys" 'BEGIN { printf "%-36s %7d:%02d\n", "CPU time, user + system (m:s)", (u + s) / 60, (u + s) % 60 }'
printf "%-36s %10d\n" "build steps (ninja)" "$steps"
echo "-- the $top slowest steps (ms, from build/.ninja_log; parallel steps overlap)"
awk 'NR > 1 { printf "%8d  %s\n", $2 - $1, $4 }' "$source_dir/build/.ninja_log" | sort -rn | head -n "$top"
if [[ $check == 1 ]] && awk -v w="$wall" 'BEGIN { exit !(w >= 240) }'; then
  echo "MISS: command 1's build took ${wall} s >= 240 s" >&2
  exit 1
fi
