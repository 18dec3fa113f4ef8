// A custom command runs under nounset and pipefail without errexit, the same on every
// executor: the shipped Slurm run script (run here with bash, as a job step runs it),
// local_direct's argv and local_docker's payload all use the plan's shell options.
#include "docker/render_docker.h"
#include "plan_test_support.h"

using namespace plan_test;

namespace {

// The bash options the built-in workflow `workflow` plans its command under.
std::vector<std::string> CommandShellOptions(const std::string& workflow) {
  CaseRequest request;
  if (workflow == "custom") request.custom_cmd = "true";
  if (workflow == "bench") request.bench_cmd = "trtllm-bench --model /m/Llama-3.1-8B throughput";
  if (workflow == "eval") request.eval_cmd = "trtllm-eval --model /m/Qwen3-8B gsm8k";
  if (workflow == "pytest") {
    request.test_cmd =
        "pytest -v \"tests/integration/defs/accuracy/test_llm_api_pytorch.py"
        "::TestDeepSeekV3Lite::test_bfloat16\"";
  }
  if (workflow == "perf_sanity") {
    request.test_cmd =
        "pytest tests/integration/defs/perf/test_perf_sanity.py -v \"test_e2e["
        "aggr-gpt_oss_120b_fp4_blackwell-gpt_oss_fp4_tp2_mtp0_1k1k]\"";
  }
  Result<JobPlan> plan = PlanCase(request);
  INFO(workflow << ": " << plan.status().ToString());
  REQUIRE(plan.ok());
  CHECK(plan->workflow_type == workflow);
  return plan->launch.shell_options;
}

// Runs the shipped slurm_run_custom.sh with `command` as CUSTOM_COMMAND, in `dir`.
CommandOutput RunCustomRunScript(const TempDir& dir, const std::string& command) {
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  Result<CommandOutput> out =
      local->Run({"env", "-u", "TRTLLM_RUN_SURELY_UNSET", "CUSTOM_COMMAND=" + command,
                  "CUSTOM_ENV=", "CUSTOM_WORKDIR=" + dir.path(), "llmSrcNode=" + dir.path(), "bash",
                  CustomRunScriptPath()},
                 "");
  REQUIRE(out.ok());
  return out.value();
}

// Runs `bash OPTIONS -c command` as local_direct does.
CommandOutput RunWithOptions(const std::string& workflow, const std::string& command) {
  std::vector<std::string> argv = {"env", "-u", "TRTLLM_RUN_SURELY_UNSET", "bash"};
  for (const std::string& option : CommandShellOptions(workflow)) argv.push_back(option);
  argv.insert(argv.end(), {"-c", command});
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  Result<CommandOutput> out = local->Run(argv, "");
  REQUIRE(out.ok());
  return out.value();
}

}  // namespace

TEST_CASE("custom commands: nounset and pipefail, no errexit; other workflows plain bash -c",
          "[render][custom]") {
  CHECK(CommandShellOptions("custom") == std::vector<std::string>{"-u", "-o", "pipefail"});
  for (const char* workflow : {"pytest", "bench", "eval", "perf_sanity"}) {
    CHECK(CommandShellOptions(workflow).empty());
  }
  CHECK(RunWithOptions("custom", "false | cat").exit_code == 1);
  CHECK(RunWithOptions("pytest", "false | cat").exit_code == 0);
  CommandOutput unset = RunWithOptions("custom", "echo \"x=$TRTLLM_RUN_SURELY_UNSET\"; echo after");
  CHECK(unset.exit_code != 0);
  CHECK_THAT(unset.stderr_text, Catch::Contains("TRTLLM_RUN_SURELY_UNSET: unbound variable"));
  CommandOutput no_errexit = RunWithOptions("custom", "false; echo after");
  CHECK(no_errexit.exit_code == 0);
  CHECK(no_errexit.stdout_text == "after\n");
}

TEST_CASE("the Slurm run script runs the command with the same options", "[render][custom]") {
  TempDir dir;
  SECTION("a failing first stage of a pipeline fails the command") {
    CommandOutput out = RunCustomRunScript(dir, "echo piped; false | cat");
    INFO(out.stdout_text << out.stderr_text);
    CHECK(out.exit_code == 1);
    CHECK_THAT(out.stdout_text, Catch::Contains("Custom command finished with exit code 1"));
  }
  SECTION("an unset variable fails the command") {
    CommandOutput out = RunCustomRunScript(dir, "echo \"x=$TRTLLM_RUN_SURELY_UNSET\"");
    INFO(out.stdout_text << out.stderr_text);
    CHECK(out.exit_code == 127);  // bash's status for an unbound variable
    CHECK(out.stdout_text.find("x=") == std::string::npos);
    CHECK_THAT(out.stderr_text, Catch::Contains("TRTLLM_RUN_SURELY_UNSET: unbound variable"));
  }
  SECTION("a failing line does not stop it; a passing pipeline passes") {
    CommandOutput out = RunCustomRunScript(dir, "false; echo after | cat");
    INFO(out.stdout_text << out.stderr_text);
    CHECK(out.exit_code == 0);
    CHECK_THAT(out.stdout_text, Catch::StartsWith("after\n"));
  }
}

TEST_CASE("local_docker: the options are set just before a custom command", "[render][custom]") {
  DockerRunInput in;
  in.image = "img";
  in.container_name = "c";
  in.repo_root = "/repo";
  in.home_dir = "/home/u";
  in.work_dir = "/repo/work_dirs/x";
  in.command = "false | cat";
  in.shell_options = CommandShellOptions("custom");
  DockerRun custom = RenderDockerRun(in);
  CHECK_THAT(custom.payload, Catch::EndsWith("\nset -u -o pipefail\nfalse | cat"));
  in.skip_install = true;
  CHECK(RenderDockerRun(in).payload == "set -u -o pipefail\nfalse | cat");
  in.shell_options = CommandShellOptions("pytest");
  CHECK(RenderDockerRun(in).payload == "false | cat");
}
