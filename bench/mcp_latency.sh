#!/bin/bash
# MCP plan latency benchmark (bench/README.md): a `tools/call plan_case` round trip to a
# warm server (in-process, and over stdio) against `trtllm-run plan` as a process, the
# same requests, interleaved in the same run (median and p90 of 50 rounds). ~20 s.
#   bench/mcp_latency.sh [mcp_latency_bench options]   (BUILD_DIR: the build, default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
exec "$build_dir/bin/mcp_latency_bench" "$@"
