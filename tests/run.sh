#!/bin/bash
# The whole test suite: installs what it needs, builds warning-free, checks formatting,
# runs every test (unit, integration against real processes, install + examples).
# Usage: tests/run.sh   (as root on Debian 12; BUILD_DIR overrides the build directory)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}

cmake/install_deps.sh

echo "== format check (clang-format, .clang-format)"
git ls-files -co --exclude-standard '*.cc' '*.h' | xargs clang-format --dry-run --Werror

echo "== build ($build_dir)"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRTLLM_RUN_WERROR=ON >/dev/null
cmake --build "$build_dir" -j"$(nproc)"

# The services the integration tests use: started here (and by ctest fixtures when
# ctest runs alone), stopped on exit when this script started them.
started=()
stop_services() {
  for service in "${started[@]}"; do tests/services/"$service".sh stop || true; done
}
trap stop_services EXIT
for service in slurm sshd docker; do
  [[ -x tests/services/$service.sh ]] || continue
  if ! tests/services/"$service".sh status >/dev/null 2>&1; then
    echo "== starting $service"
    tests/services/"$service".sh ensure
    started+=("$service")
  fi
done

echo "== tests"
ctest --test-dir "$build_dir" --output-on-failure -j2 --timeout 900
