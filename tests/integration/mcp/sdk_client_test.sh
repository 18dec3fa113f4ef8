#!/bin/bash
# The MCP SDK-client test (sdk_client_test.mjs): the official TypeScript SDK drives
# `trtllm-run mcp`. Node and npm come from Debian (installed here when missing, as root);
# the SDK, pinned, is installed from the npm registry into a cache in the build tree
# (the only network this needs). Fails (never skips) when any of that is missing.
#   tests/integration/mcp/sdk_client_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$2")
sdk_version=1.32.2

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "FAIL: node and npm are missing (run cmake/install_deps.sh nodejs npm as root)" >&2
    exit 1
  fi
  "$src/cmake/install_deps.sh" nodejs npm
fi
command -v node >/dev/null && command -v npm >/dev/null || {
  echo "FAIL: node and npm are still missing" >&2
  exit 1
}

cache=$build/mcp-sdk-client
installed=$(node -p "try { require('$cache/node_modules/@modelcontextprotocol/sdk/package.json').version } catch (e) { '' }")
if [[ $installed != "$sdk_version" ]]; then
  echo "installing @modelcontextprotocol/sdk@$sdk_version into $cache" >&2
  mkdir -p "$cache"
  printf '{"name": "trtllm-run-mcp-sdk-test", "private": true, "type": "module"}\n' >"$cache/package.json"
  npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/sdk@$sdk_version" >&2
fi
# ESM resolves packages from the script's own directory: run a copy next to node_modules.
cp "$src/tests/integration/mcp/sdk_client_test.mjs" "$cache/"
TRTLLM_RUN_BIN=$build/bin/trtllm-run exec timeout 540 node "$cache/sdk_client_test.mjs"
