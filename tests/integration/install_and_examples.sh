#!/bin/bash
# The install tree works for third parties: install the build into a temp prefix, build
# examples/executor_plugin and examples/embed against it out of tree, load the
# out-of-tree plugin through TRTLLM_RUN_PLUGIN_PATH and run the embedding program.
#
#   install_and_examples.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
BUILD_DIR=$(cd "$1" && pwd -P)
SOURCE_DIR=$(cd "$2" && pwd -P)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/trtllm_run_install_test.XXXXXX")
TMP=$(cd "$TMP" && pwd -P)  # the registry reports canonical paths
trap 'rm -rf "$TMP"' EXIT
PREFIX="$TMP/prefix"
unset TRTLLM_RUN_PLUGIN_PATH

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Runs a command, keeping its output in $TMP/<name>.out and .err; prints both on failure.
run_logged() {
  local name=$1
  shift
  if ! "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"; then
    echo "--- stdout of $name:" >&2
    cat "$TMP/$name.out" >&2
    echo "--- stderr of $name:" >&2
    cat "$TMP/$name.err" >&2
    fail "$name failed: $*"
  fi
}

echo "== install $BUILD_DIR into $PREFIX"
run_logged install cmake --install "$BUILD_DIR" --prefix "$PREFIX"

echo "== check the installed layout"
for path in bin/trtllm-run \
  lib/trtllm-run/plugins/workflow_custom.so \
  lib/trtllm-run/plugins/executor_local_direct.so \
  include/trtllm_run/runtime.h \
  include/trtllm_run/sdk/plugin_api.h \
  include/trtllm_run/sdk/executor.h \
  lib/cmake/TrtllmRun/TrtllmRunConfig.cmake \
  lib/cmake/TrtllmRun/TrtllmRunConfigVersion.cmake \
  lib/cmake/TrtllmRun/TrtllmRunTargets.cmake \
  lib/cmake/TrtllmRun/TrtllmRunPlugin.cmake \
  share/trtllm-run/skills/trtllm-run/SKILL.md; do
  [[ -e "$PREFIX/$path" ]] || fail "install did not create $PREFIX/$path"
done
# Installed headers: the embedders' API and the plugin SDK, nothing of the implementation.
for header in $(cd "$PREFIX/include/trtllm_run" && find . -name '*.h' | sort); do
  [[ -e "$SOURCE_DIR/libcore/include/trtllm_run/$header" ]] ||
    fail "install added $PREFIX/include/trtllm_run/$header, which is not a public header"
done
for private in "$SOURCE_DIR"/libcore/src/*/*.h; do
  name=$(basename "$private")
  [[ -z $(find "$PREFIX/include" -name "$name") ]] ||
    fail "install exposed the private header $name"
done
compgen -G "$PREFIX/lib/libtrtllm_run_core.so*" >/dev/null ||
  fail "install did not create $PREFIX/lib/libtrtllm_run_core.so*"
[[ -x "$PREFIX/bin/trtllm-run" ]] || fail "$PREFIX/bin/trtllm-run is not executable"
# The skill in the format agents load: front matter with name and description first.
skill=$PREFIX/share/trtllm-run/skills/trtllm-run/SKILL.md
[[ $(sed -n 1p "$skill") == --- && $(sed -n 2p "$skill") == "name: trtllm-run" ]] &&
  sed -n 3p "$skill" | grep -q '^description: .' || fail "$skill lacks its front matter"
if compgen -G "$PREFIX/lib/trtllm-run/plugins/*" | grep -v -e workflow_ -e executor_ >/dev/null; then
  fail "unexpected files in $PREFIX/lib/trtllm-run/plugins: $(ls "$PREFIX/lib/trtllm-run/plugins")"
fi

echo "== the man page, shell completion and examples are installed"
for path in share/man/man1/trtllm-run.1 \
  share/bash-completion/completions/trtllm-run \
  share/zsh/site-functions/_trtllm-run \
  share/trtllm-run/examples/clusters.yaml \
  share/trtllm-run/examples/cases/hello.yaml \
  share/trtllm-run/examples/cases/many.yaml \
  share/trtllm-run/examples/cases/ids.txt; do
  [[ -s "$PREFIX/$path" ]] || fail "install did not create $PREFIX/$path"
done
page=$PREFIX/share/man/man1/trtllm-run.1
if command -v man >/dev/null; then
  echo "   rendering with man -l"
  MANWIDTH=100 man -l "$page" >"$TMP/man.out" 2>"$TMP/man.err" || fail "man -l $page failed"
else
  echo "   rendering with nroff -man (man is not installed)"
  nroff -man "$page" >"$TMP/man.out" 2>"$TMP/man.err" || fail "nroff -man $page failed"
fi
[[ ! -s "$TMP/man.err" ]] || fail "rendering $page warned: $(cat "$TMP/man.err")"
col -b <"$TMP/man.out" | grep -- '--time-limit DURATION' >/dev/null || fail "$page lacks --time-limit"
completion=$PREFIX/share/bash-completion/completions/trtllm-run
bash -c "source '$completion' && complete -p trtllm-run" | grep -qx 'complete -F _trtllm_run trtllm-run' ||
  fail "sourcing $completion does not register the completion of trtllm-run"
completed=$(bash -c "source '$completion' && COMP_WORDS=(trtllm-run pl) && COMP_CWORD=1 &&
  _trtllm_run && echo \"\${COMPREPLY[*]}\"")
[[ $completed == "plugins plan" ]] || fail "completing 'trtllm-run pl' gave '$completed'"
# Hints about the cluster catalog name the installed sample.
XDG_CONFIG_HOME=$TMP/no-config TRTLLM_RUN_CLUSTERS= "$PREFIX/bin/trtllm-run" env \
  --slurm-cluster eos >"$TMP/hint.out" 2>"$TMP/hint.err" && fail "env --slurm-cluster eos passed"
grep -qF "$PREFIX/share/trtllm-run/examples/clusters.yaml" "$TMP/hint.err" ||
  fail "the catalog hint does not name the installed clusters.yaml: $(cat "$TMP/hint.err")"

echo "== build the examples out of tree against $PREFIX"
PLUGIN_BUILD="$TMP/build-executor-plugin"
EMBED_BUILD="$TMP/build-embed"
for example in executor_plugin:"$PLUGIN_BUILD" embed:"$EMBED_BUILD"; do
  name=${example%%:*}
  dir=${example#*:}
  run_logged "configure-$name" cmake -S "$SOURCE_DIR/examples/$name" -B "$dir" -G Ninja \
    -DCMAKE_PREFIX_PATH="$PREFIX"
  run_logged "build-$name" cmake --build "$dir"
done
PLUGIN_FILE="$PLUGIN_BUILD/executor_dry_run.so"
[[ -f "$PLUGIN_FILE" ]] || fail "the executor_plugin example did not build $PLUGIN_FILE"
[[ -x "$EMBED_BUILD/embed_example" ]] || fail "the embed example did not build embed_example"

echo "== trtllm-run plugins lists the out-of-tree plugin only when it is on the path"
run_logged plugins-with env TRTLLM_RUN_PLUGIN_PATH="$PLUGIN_BUILD" "$PREFIX/bin/trtllm-run" plugins
# One line per plugin: <kind> <name> <version> <path>.
awk -v path="$PLUGIN_FILE" '$1 == "executor" && $2 == "dry_run" && $NF == path { found = 1 }
  END { exit !found }' "$TMP/plugins-with.out" || {
  cat "$TMP/plugins-with.out" >&2
  fail "'trtllm-run plugins' with TRTLLM_RUN_PLUGIN_PATH=$PLUGIN_BUILD does not list" \
    "'executor dry_run <version> $PLUGIN_FILE'"
}
for builtin in custom local_direct; do
  awk -v name="$builtin" '$2 == name { found = 1 } END { exit !found }' "$TMP/plugins-with.out" ||
    fail "'trtllm-run plugins' does not list the built-in plugin '$builtin'"
done
if grep -q '^warning:' "$TMP/plugins-with.err"; then
  cat "$TMP/plugins-with.err" >&2
  fail "'trtllm-run plugins' reported plugin problems in the install tree"
fi
run_logged plugins-without "$PREFIX/bin/trtllm-run" plugins
if grep -q 'dry_run' "$TMP/plugins-without.out"; then
  cat "$TMP/plugins-without.out" >&2
  fail "'trtllm-run plugins' lists dry_run without TRTLLM_RUN_PLUGIN_PATH"
fi

echo "== the embed example runs a case through the installed library"
EMBED_REPO="$TMP/embed-repo"
mkdir -p "$EMBED_REPO"
set +e
"$EMBED_BUILD/embed_example" "$EMBED_REPO" >"$TMP/embed.out" 2>"$TMP/embed.err"
embed_rc=$?
set -e
if [[ $embed_rc -ne 0 ]] || ! grep -q 'PASSED' "$TMP/embed.out"; then
  echo "--- stdout:" >&2
  cat "$TMP/embed.out" >&2
  echo "--- stderr:" >&2
  cat "$TMP/embed.err" >&2
  fail "embed_example exited $embed_rc (want 0) or did not print PASSED"
fi
grep -q 'hello from an embedded trtllm-run' "$TMP/embed.out" ||
  fail "embed_example did not show the command's output"
compgen -G "$EMBED_REPO/work_dirs/embed_demo_*/result.json" >/dev/null ||
  fail "no $EMBED_REPO/work_dirs/embed_demo_*/result.json after the embed example"

echo "== trtllm-run run --scenario dry_run uses the out-of-tree executor"
RUN_REPO="$TMP/repo"
mkdir -p "$RUN_REPO"
run_logged run-dry-run env TRTLLM_RUN_PLUGIN_PATH="$PLUGIN_BUILD" "$PREFIX/bin/trtllm-run" run \
  --scenario dry_run --custom-cmd 'echo hi' --repo-root "$RUN_REPO"
grep -q 'would run: echo hi' "$TMP/run-dry-run.err" "$TMP/run-dry-run.out" ||
  fail "the dry_run executor did not print 'would run: echo hi'"
script=$(compgen -G "$RUN_REPO/work_dirs/*/dry_run.sh" | head -n 1) ||
  fail "no work_dirs/*/dry_run.sh under $RUN_REPO"
grep -q "^exec bash -c 'echo hi'\$" "$script" ||
  fail "$script does not run 'echo hi': $(cat "$script")"
[[ -f "$(dirname "$script")/job_spec.json" ]] || fail "no job_spec.json next to $script"

echo "PASS: install tree, out-of-tree plugin and embedding example work"
