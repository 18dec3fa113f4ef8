#!/bin/bash
# The whole test suite: installs what it needs, builds warning-free, checks formatting,
# runs every test (unit, integration against real processes, install + examples).
# Usage: tests/run.sh   (as root on Debian 12; BUILD_DIR overrides the build directory)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}

# The MCP SDK-client test needs Node and npm: Debian's, unless a Node that ships its own
# npm is there already (NodeSource's nodejs conflicts with Debian's npm package).
node_packages=()
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  node_packages=(nodejs npm)
fi
cmake/install_deps.sh "${node_packages[@]}"

# The services the integration tests use start in the background while the code builds;
# the tests that need them wait for them (wait_services). Stopped on exit when this script
# started them. Two jobs run at once: slurm, sshd and docker one after the other (each
# apt-installs what it lacks, and sshd's users get Slurm associations), postgres beside
# them (its packages come from cmake/install_deps.sh above).
services_log=$(mktemp "${TMPDIR:-/tmp}/trtllm_services.XXXXXX")
services_started=$(mktemp "${TMPDIR:-/tmp}/trtllm_services_started.XXXXXX")
start_services() {  # the services named, in turn; their output in $services_log.N
  local service
  for service in "$@"; do
    [[ -x tests/services/$service.sh ]] || continue
    if ! tests/services/"$service".sh status >/dev/null 2>&1; then
      echo "== starting $service"
      tests/services/"$service".sh ensure
      echo "$service" >>"$services_started"
    fi
  done
}
start_services slurm sshd docker >"$services_log.1" 2>&1 &
services_pids=($!)
start_services postgres >"$services_log.2" 2>&1 &
services_pids+=($!)
stop_services() {
  local pid
  for pid in "${services_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  while read -r service; do tests/services/"$service".sh stop || true; done <"$services_started"
  rm -f "$services_log" "$services_log".[12] "$services_started"
}
trap stop_services EXIT
wait_services() {
  local rc=0 pid
  for pid in "${services_pids[@]}"; do wait "$pid" || rc=$?; done
  cat "$services_log".[12]
  if [[ $rc != 0 ]]; then
    echo "starting the test services failed (exit $rc)" >&2
    exit 1
  fi
}

echo "== format check (clang-format, .clang-format)"
git ls-files -co --exclude-standard '*.cc' '*.h' | xargs clang-format --dry-run --Werror

echo "== layout check (no include cycle between the areas of libcore/src)"
python3 tests/check_layout.py

echo "== build ($build_dir)"
# Tests, benchmarks and example programs on: README command 1 may have configured this
# build directory for the product only.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRTLLM_RUN_WERROR=ON \
  -DTRTLLM_RUN_BUILD_TESTS=ON -DTRTLLM_RUN_BUILD_BENCH=ON -DTRTLLM_RUN_BUILD_EXAMPLES=ON >/dev/null
cmake --build "$build_dir" -j"$(nproc)"

echo "== exported symbols (libtrtllm_run_core.so: the API of include/trtllm_run/ only, within budget)"
python3 tests/check_exports.py "$build_dir/lib/libtrtllm_run_core.so"

echo "== Debian package (cpack -G DEB, apt-get install, the example case installed, remove)"
tests/deb_package.sh "$build_dir"

# The sanitizer stage (on unless TRTLLM_RUN_SANITIZERS=0): the whole suite again, built
# with clang++ under AddressSanitizer (LeakSanitizer on) + UndefinedBehaviorSanitizer, plus
# the libFuzzer targets in fuzz/, each fuzzed for TRTLLM_RUN_FUZZ_SECONDS (default 30; ctest
# label fuzz) after its seed corpus and fuzz/regressions are replayed. Any report fails its test
# (halt_on_error; the build makes UBSan fatal). With it on, the plain build above runs the
# tests that need no service and the instrumented build runs every test, so the slow
# service tests run once; with it off, the plain build runs every test. ASAN_BUILD_DIR
# overrides its build directory.
sanitizers=${TRTLLM_RUN_SANITIZERS:-1}

echo "== tests ($build_dir)"
if [[ $sanitizers != 0 ]]; then
  ctest --test-dir "$build_dir" --output-on-failure -j2 --timeout 900 -LE 'slurm|sshd|docker|postgres|fault'
else
  wait_services
  ctest --test-dir "$build_dir" --output-on-failure -j2 --timeout 900
fi

if [[ $sanitizers != 0 ]]; then
  asan_dir=${ASAN_BUILD_DIR:-build-asan}
  echo "== sanitizer build ($asan_dir: clang++, address+undefined, fuzz targets)"
  # -Wno-unknown-warning-option: clang ignores the GCC-only groups some pragmas name.
  cmake -S . -B "$asan_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS=-Wno-unknown-warning-option -DTRTLLM_RUN_SANITIZE=address,undefined \
    -DTRTLLM_RUN_BUILD_FUZZERS=ON -DTRTLLM_RUN_FUZZ_SECONDS="${TRTLLM_RUN_FUZZ_SECONDS:-30}" \
    -DTRTLLM_RUN_WERROR=ON -DTRTLLM_RUN_BUILD_TESTS=ON -DTRTLLM_RUN_BUILD_BENCH=ON \
    -DTRTLLM_RUN_BUILD_EXAMPLES=ON -DTRTLLM_RUN_UNITY_BUILD=ON >/dev/null
  cmake --build "$asan_dir" -j"$(nproc)"
  wait_services
  echo "== every test under ASan + UBSan, and fuzzing ($asan_dir)"
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir "$asan_dir" --output-on-failure -j2 --timeout 900
fi
