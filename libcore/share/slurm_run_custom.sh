#!/bin/bash
# trtllm-run: runs a custom command inside a Slurm job step (spec 001 Category 3).
# The batch script exports:
#   CUSTOM_COMMAND  the command, run with `bash -E -u -o pipefail -c` after an ERR trap
#                   that exits: an unset variable, a failing stage of a pipeline or any
#                   failing command ends it with that command's exit code, the same on
#                   every executor (the custom workflow's shell_options and command_prelude)
#   CUSTOM_ENV      KEY=VALUE pairs to export first (values shell-quoted)
#   CUSTOM_WORKDIR  where to run it (default: llmSrcNode)
#   llmSrcNode      the TensorRT-LLM checkout as the job sees it
# Exits with the command's exit code, after printing
#   Rank<SLURM_PROCID> Custom command finished with exit code <N>
set -Eeuo pipefail
trap 'echo "slurm_run_custom.sh: error in ${BASH_SOURCE[0]}:${LINENO}: ${BASH_COMMAND}" >&2' ERR
set -x

rank=${SLURM_PROCID:-0}

# Values may be secrets: keep them out of the trace.
{ set +x; } 2>/dev/null
if [ -n "${CUSTOM_ENV:-}" ]; then
  eval "export ${CUSTOM_ENV}"
fi
set -x

# One node: no MPI launcher is involved, so srun's PMI/MPI variables would only make
# mpi4py initialise MPI against them. Keep the rank.
if [ "${SLURM_JOB_NUM_NODES:-${SLURM_NNODES:-1}}" -le 1 ]; then
  { set +x; } 2>/dev/null
  for trtllm_run_var in $(compgen -e); do
    case "$trtllm_run_var" in
      SLURM_PROCID) ;;
      PMI*|PMIX*|MPI*|OMPI*|SLURM*) unset "$trtllm_run_var" ;;
    esac
  done
  unset trtllm_run_var
  set -x
fi

cd "${CUSTOM_WORKDIR:-${llmSrcNode:?llmSrcNode is not set}}"

{ set +x; } 2>/dev/null
set +eE
trap - ERR
# The ERR trap on the first line, the command from the second: line numbers are the command's.
err_trap='trap '\''trtllm_run_rc=$?; echo "custom command: error at line $((LINENO - 1)): ${BASH_COMMAND} (exit code ${trtllm_run_rc})" >&2; exit "${trtllm_run_rc}"'\'' ERR'
bash -E -u -o pipefail -c "${err_trap}"$'\n'"${CUSTOM_COMMAND:?CUSTOM_COMMAND is not set}"
exit_code=$?
echo "Rank${rank} Custom command finished with exit code ${exit_code}"
exit "${exit_code}"
