// The stage table of TensorRT-LLM's jenkins/L0_Test.groovy, read as text (never run): the
// map literals whose entries are
//   "DGX_B200-4_GPUs-PyTorch-1": ["b200-x4", "l0_dgx_b200", 1, 2, 4, 1, true],
//   (name: [platform, test-db context, split id, split count, GPU count?, node count?, ...])
// and the `buildStageConfigs("<family>", "<platform>", "<context>", <splits>, <gpus>,
// <nodes>)` calls that expand to "<family>-1" .. "<family>-<splits>", and the families a
// range generates, `(1..N).collectEntries { i -> ["<family>-${i}".toString(), [platform,
// context, i, N, gpus, nodes]] }` with N a number or a variable set to one earlier in the
// text. Commented-out lines (`//`, `/* */`) are not stages. And the match keys CI derives
// from a stage's name.
#ifndef TRTLLM_RUN_STAGE_STAGE_TABLE_H_
#define TRTLLM_RUN_STAGE_STAGE_TABLE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/status.h"

namespace trtllm_run {

struct StageEntry {
  std::string name;      // "DGX_B200-4_GPUs-PyTorch-1"
  std::string platform;  // "b200-x4"
  std::string context;   // "l0_dgx_b200": tests/integration/test_lists/test-db/<context>.yml
  int split_id = 1;      // 1-based
  int split_count = 1;
  int gpu_count = 1;   // all nodes together; 1 when the entry does not say
  int node_count = 1;  // 1 when the entry does not say
  int line = 0;        // 1-based line of the entry (of the call, for buildStageConfigs)
};

// The stage entries of `groovy` (the text of L0_Test.groovy), in file order; a name given
// twice keeps its first entry. Never fails: text that is not an entry is skipped.
std::vector<StageEntry> ReadStageTable(std::string_view groovy);

// The match keys getMakoArgsFromStageName derives from a stage name: stage (pre_merge, or
// post_merge when the name holds "Post-Merge"), backend (from "-PyTorch-", "-TensorRT-",
// "-CPP-", "-Triton-", "-FMHA-", "-AutoDeploy-", "-Verl-"; absent otherwise),
// auto_trigger (deepseek, gpt_oss or others), orchestrator (ray or mpi); and, from
// "<GPU>-<N>_GPUs[-<M>_Nodes]" as its multi-node form does, gpu=<GPU> (lower-cased, so
// the YAML's wildcards such as '*b200*' match) and system_gpu_count=<N>. gpu and
// system_gpu_count are absent when the name has no "_GPUs" part.
std::map<std::string, std::string> MatchKeysFromStageName(std::string_view name);

// The GPU segment of a stage name: what precedes its first '-' ("DGX_B200", "A10").
std::string StageGpuSegment(std::string_view name);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_STAGE_STAGE_TABLE_H_
