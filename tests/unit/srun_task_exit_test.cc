// srun's "NODE: task N: Exited with exit code X" lines name the node and rank that failed
// in a multi-node step; the Slurm verdict carries them into the failing step.
#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/slurm/verdict.h"
#include "trtllm_run/sdk/supervise/log_follower.h"

using namespace trtllm_run;

TEST_CASE("srun task exit lines: node, tasks and exit code", "[slurm_verdict]") {
  std::optional<SrunTaskExit> one =
      ParseSrunTaskExit("srun: error: gpunode2: task 3: Exited with exit code 1");
  REQUIRE(one);
  CHECK(one->node == "gpunode2");
  CHECK(one->tasks == "task 3");
  CHECK(one->exit_code == 1);
  std::optional<SrunTaskExit> many =
      ParseSrunTaskExit("srun: error: localhost: tasks 0-1: Exited with exit code 4");
  REQUIRE(many);
  CHECK(many->node == "localhost");
  CHECK(many->tasks == "tasks 0-1");
  CHECK(many->exit_code == 4);
  CHECK_FALSE(ParseSrunTaskExit("srun: error: localhost: task 0: Killed"));
  CHECK_FALSE(ParseSrunTaskExit("3: the child Exited with exit code 2"));
  CHECK_FALSE(ParseSrunTaskExit(""));
}

TEST_CASE("a failed multi-node job names the first failing task and its node", "[slurm_verdict]") {
  const std::vector<std::string> failure = {"FAILED"}, success = {"passed"};
  PatternScanner out{JobOutputPatterns(failure, success, "")};
  out.Feed(
      "0: 1 passed in 0.01s\n"
      "srun: error: gpunode2: task 3: Exited with exit code 1\n"
      "srun: error: localhost: tasks 0-1: Exited with exit code 9\n"
      "3: FAILED test_x.py::test_e2e - AssertionError\n");
  JobOutputScan scan;
  scan.out = &out;
  scan.failure_count = failure.size();
  scan.success_count = success.size();
  scan.out_exists = true;
  SlurmJobEvidence e;
  e.job_id = "42";
  AddOutputEvidence(scan, &e);
  CHECK(e.task_exit_line == "srun: error: gpunode2: task 3: Exited with exit code 1");
  CHECK(e.success_patterns_seen == std::vector<std::string>{"passed"});

  SlurmJobRecord record;
  record.job_id = "42";
  record.state = "FAILED";
  record.exit.code = 1;
  e.controller = record;
  e.controller_final = true;
  RunResult result = JudgeSlurmJob(e);
  CHECK(result.status == RunStatus::kFailed);
  CHECK(result.reason.find("task 3 on node gpunode2 exited with exit code 1") != std::string::npos);
}
