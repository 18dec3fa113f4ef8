#!/bin/bash
# The Debian package works as login nodes install tools: `cpack -G DEB` in BUILD_DIR (built),
# the package's metadata and contents checked, `apt-get install ./trtllm-run_*.deb`, the
# example case run from the installed files with the build tree hidden (a private mount
# namespace mounts an empty tmpfs over it, where the kernel allows), then `apt-get purge`.
# Run by tests/run.sh after the plain build; as root, ~20 s.
#   tests/deb_package.sh BUILD_DIR
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
BUILD_DIR=$(cd "$1" && pwd -P)
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
[[ $(id -u) == 0 ]] || fail "installing a package needs root"
if dpkg-query -W -f='${Status}' trtllm-run 2>/dev/null | grep -q 'install ok installed'; then
  fail "the trtllm-run package is installed already: this test would replace and remove it"
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/trtllm_run_deb_test.XXXXXX")
installed=0
cleanup() {
  if [[ $installed == 1 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -q trtllm-run >/dev/null 2>&1 || true
  fi
  rm -rf -- "$TMP"
}
trap cleanup EXIT

echo "== cpack -G DEB in $BUILD_DIR"
(cd "$BUILD_DIR" && cpack -G DEB -B "$TMP/package") >"$TMP/cpack.log" 2>&1 ||
  { cat "$TMP/cpack.log" >&2; fail "cpack -G DEB failed"; }
debs=("$TMP"/package/trtllm-run_*.deb)
[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || fail "cpack wrote no single trtllm-run_*.deb: ${debs[*]}"
deb=${debs[0]}
echo "   $(basename "$deb"), $(du -h "$deb" | cut -f1)"

echo "== metadata: the Depends of the shared libraries and of the commands run"
depends=$(dpkg-deb -f "$deb" Depends)
echo "   Depends: $depends"
for package in bash libboost-program-options1.81.0 libboost-filesystem1.81.0 libyaml-cpp0.7 \
  libsqlite3-0 libstdc++6 libc6 libpq5; do
  [[ ", $depends," == *", $package"[\ ,]* ]] || fail "Depends lacks $package: $depends"
done

echo "== contents"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$TMP/contents"
for path in /usr/bin/trtllm-run /usr/lib/libtrtllm_run_core.so \
  /usr/lib/trtllm-run/plugins/workflow_custom.so /usr/lib/trtllm-run/plugins/workflow_pytest.so \
  /usr/lib/trtllm-run/plugins/executor_local_direct.so \
  /usr/lib/trtllm-run/plugins/executor_local_docker.so \
  /usr/lib/trtllm-run/plugins/executor_local_slurm.so \
  /usr/lib/trtllm-run/plugins/executor_remote_slurm.so \
  /usr/share/man/man1/trtllm-run.1 /usr/share/bash-completion/completions/trtllm-run \
  /usr/share/zsh/site-functions/_trtllm-run /usr/share/trtllm-run/skills/trtllm-run/SKILL.md \
  /usr/share/trtllm-run/examples/clusters.yaml /usr/share/trtllm-run/examples/cases/hello.yaml \
  /usr/share/trtllm-run/slurm_run_custom.sh /usr/include/trtllm_run/runtime.h; do
  grep -qx -- "$path" "$TMP/contents" || fail "the package lacks $path"
done

echo "== apt-get install ./$(basename "$deb")"
installed=1
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" >"$TMP/install.log" 2>&1 ||
  { cat "$TMP/install.log" >&2; fail "apt-get install failed"; }
[[ $(command -v trtllm-run) == /usr/bin/trtllm-run ]] ||
  fail "trtllm-run on PATH is $(command -v trtllm-run), not /usr/bin/trtllm-run"

echo "== nothing installed refers to the build tree ($BUILD_DIR)"
while read -r file; do
  [[ -f $file && ! -L $file ]] || continue
  if grep -qF -- "$BUILD_DIR" "$file"; then fail "$file mentions the build tree $BUILD_DIR"; fi
  if [[ $(head -c 4 "$file") == $'\x7fELF' ]]; then
    runpath=$(readelf -d "$file" | grep -E 'RUNPATH|RPATH' || true)
    [[ -z $runpath || $runpath == *'$ORIGIN'* ]] || fail "$file has a RUNPATH outside \$ORIGIN: $runpath"
  fi
done < <(dpkg -L trtllm-run)

echo "== the example case from the installed files, the build tree hidden"
mkdir -p "$TMP/repo" "$TMP/home"
example=(env -i PATH=/usr/bin:/bin HOME="$TMP/home" trtllm-run run
  --request /usr/share/trtllm-run/examples/cases/hello.yaml --repo-root "$TMP/repo")
plugins=(env -i PATH=/usr/bin:/bin HOME="$TMP/home" trtllm-run plugins)
hidden=0
if unshare -m true 2>/dev/null; then
  hidden=1
  mount_over="mount -t tmpfs trtllm-run-deb-test \"\$0\" && \"\$@\""
  example=(unshare -m sh -c "$mount_over" "$BUILD_DIR" "${example[@]}")
  plugins=(unshare -m sh -c "$mount_over" "$BUILD_DIR" "${plugins[@]}")
else
  echo "   (no mount namespace here: the build tree stays visible; the checks above still hold)"
fi
(cd "$TMP" && "${plugins[@]}") >"$TMP/plugins.out" 2>&1 ||
  { cat "$TMP/plugins.out" >&2; fail "trtllm-run plugins failed"; }
grep -q "/usr/lib/trtllm-run/plugins/executor_local_direct.so" "$TMP/plugins.out" ||
  { cat "$TMP/plugins.out" >&2; fail "trtllm-run plugins does not list /usr/lib/trtllm-run/plugins"; }
! grep -qF -- "$BUILD_DIR" "$TMP/plugins.out" ||
  { cat "$TMP/plugins.out" >&2; fail "a plugin was loaded from the build tree"; }
rc=0
(cd "$TMP" && "${example[@]}") >"$TMP/example.out" 2>"$TMP/example.err" || rc=$?
if [[ $rc != 0 ]] || ! grep -q PASSED "$TMP/example.out" "$TMP/example.err"; then
  cat "$TMP/example.out" "$TMP/example.err" >&2
  fail "the example case did not pass (exit $rc)"
fi
log=$(ls "$TMP"/repo/work_dirs/hello_case_*/*.log 2>/dev/null | head -n 1)
[[ -n $log ]] && grep -q "GREETING=hi there" "$log" || fail "the example's log lacks its output: $log"
echo "   PASSED (build tree hidden: $hidden)"

echo "== apt-get purge trtllm-run"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q trtllm-run >"$TMP/remove.log" 2>&1 ||
  { cat "$TMP/remove.log" >&2; fail "apt-get purge failed"; }
installed=0
[[ ! -e /usr/bin/trtllm-run && ! -e /usr/lib/trtllm-run/plugins ]] ||
  fail "apt-get purge left /usr/bin/trtllm-run or /usr/lib/trtllm-run/plugins behind"
echo "deb package: OK"
