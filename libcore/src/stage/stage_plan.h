// Planning a TensorRT-LLM CI stage as its CI does (jenkins/L0_Test.groovy): the stage
// table gives the test-db context, split count, GPU and node counts; the stage name gives
// the match keys; the test-db YAML rendered with those keys gives the test list; waives.txt
// turns tests into SKIP; pytest-split's least_duration over .test_durations gives the
// shards. Planning reads files only: it submits nothing and writes nothing.
#ifndef TRTLLM_RUN_STAGE_STAGE_PLAN_H_
#define TRTLLM_RUN_STAGE_STAGE_PLAN_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stage/stage_target.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

struct StageTest {
  // The list line without its prefix and markers, selectors kept, as pytest is given it:
  // "accuracy/test_llm_api.py::TestX::test_y[a]", `unittest/x.py -k "a and b"`
  // (ParseTestListLine reads it back).
  std::string id;
  bool isolation = false;                    // ISOLATION: its own pytest process
  double expected_seconds = 0;               // from .test_durations, or the mean of the known
  std::optional<std::string> waived_reason;  // set when waived: SKIPPED, never submitted
  // Set by --reuse-passed ("passed on <commit> at <time> (<work dir>)"): SKIPPED, never
  // submitted, and kept in its shard, so the split is the one without reuse (as CI's
  // reused tests are waive-list entries pytest-split still counts).
  std::optional<std::string> reused_reason;
  int timeout_seconds = 0;  // from a TIMEOUT (N minutes) marker; 0 none
};

struct StageShard {
  int split_id = 0;  // 1-based
  std::vector<StageTest> tests;
  double expected_seconds = 0;  // sum of the tests' expected_seconds
};

struct StagePlan {
  std::string stage_name;       // as given (a family name when every split is covered)
  std::string test_db_context;  // the YAML's name without .yml
  int split_count = 1;
  std::vector<int> splits;  // which splits this run covers, 1-based, ascending
  int gpu_count = 0;  // the stage table's GPU count: all nodes together (8 for 8_GPUs-2_Nodes);
                      // 0 when --test-db skipped the table
  int node_count = 1;
  std::map<std::string, std::string> match_keys;  // stage, backend, orchestrator, gpu, ...
  // Where each key's value came from: "stage name", "--match", "nvidia-smi on this host",
  // "GRES gpu:b200:8 of partition batch", ... (one entry per key of match_keys).
  std::map<std::string, std::string> key_origins;
  std::vector<std::string> matched_blocks_explained;  // one line per block, matched or not
  std::vector<StageShard> shards;                     // one per covered split, in `splits` order
  std::vector<StageTest> waived;  // rendered tests that waives.txt turns into SKIP
  // Where the split's durations came from: a file's path, "history <store>", or "" (none:
  // every test counted 1 s).
  std::string durations_source;
  std::vector<std::string> warnings;
};

struct StageRequest {
  std::string repo_root;  // the TensorRT-LLM checkout
  // A stage name ("DGX_B200-4_GPUs-PyTorch-1") or a family without its split suffix
  // ("DGX_B200-4_GPUs-PyTorch": every split). May be empty when test_db_context is given.
  std::string stage;
  std::optional<std::string> test_db_context;  // --test-db: skips the stage table
  std::map<std::string, std::string> match;    // --match key=value: overrides any key
  std::optional<std::string> waives_file;      // --waives; default: the checkout's waives.txt
  std::optional<std::string> durations_file;   // default: tests/integration/defs/.test_durations
  // Durations given as a map (`--durations history`): used instead of any file. Their
  // origin names them in the plan ("history /path/history.sqlite").
  std::optional<std::map<std::string, double>> durations;
  std::string durations_origin;
  // Used only when neither of the above is given and the checkout has no .test_durations
  // (the history's, when it has some); named by fallback_durations_origin.
  std::map<std::string, double> fallback_durations;
  std::string fallback_durations_origin;
  std::optional<int> splits;  // --splits N: overrides the split count
  // Facts of the target the caller probed (GRES and nodes on Slurm, nvidia-smi locally).
  // --match gpu= / system_gpu_count= win over these; the stage table's gpu count is used
  // for system_gpu_count when neither gives one.
  std::optional<std::string> target_gpu;  // e.g. "B200" (wildcards match case-insensitively)
  std::optional<int> target_system_gpu_count;
  std::string target_origin;  // where target_gpu / target_system_gpu_count came from
  // A Slurm target: the partition the stage's jobs go to. Used for gpu / system_gpu_count
  // (StageKeysFromPartition, with the stage table's counts) when target_gpu and
  // target_system_gpu_count are not given.
  std::optional<StagePartitionFacts> target_partition;
};

// The plan of `request`. Every rendered test, waived or not, takes part in the split, as
// in CI (waives mark collected tests SKIP; pytest-split splits them all); the waived ones
// of the covered splits then go to `waived` instead of their shard. kInvalidInput (CLI exit 2)
// naming what and where: an unknown stage (with near names), a missing or malformed stage table /
// test-db / waives / durations file, a bad --match or --splits, an empty render (naming the keys it
// was rendered with).
Result<StagePlan> PlanStage(const StageRequest& request);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_STAGE_STAGE_PLAN_H_
