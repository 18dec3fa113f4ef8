// A custom command runs as the original run script runs it, the same on every executor:
// nounset, pipefail and (set -E with an ERR trap that exits) the first failing command ends
// it with its exit code. The shipped Slurm run script (run here with bash, as a job step
// runs it), local_direct's argv and local_docker's payload all give the same results.
#include "plan_test_support.h"
#include "render_docker.h"

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

// The prelude the built-in workflow `workflow` plans before its command.
std::string CommandPrelude(const std::string& workflow) {
  CaseRequest request;
  request.custom_cmd = "true";
  if (workflow != "custom") request.custom_cmd.reset();
  if (workflow == "bench") request.bench_cmd = "trtllm-bench --model /m/Llama-3.1-8B throughput";
  Result<JobPlan> plan = PlanCase(request);
  REQUIRE(plan.ok());
  return plan->launch.command_prelude;
}

// Runs `bash OPTIONS -c "PRELUDE<newline>command"` as local_direct does.
CommandOutput RunWithOptions(const std::string& workflow, const std::string& command) {
  std::vector<std::string> argv = {"env", "-u", "TRTLLM_RUN_SURELY_UNSET", "bash"};
  for (const std::string& option : CommandShellOptions(workflow)) argv.push_back(option);
  std::string prelude = workflow == "custom" ? CommandPrelude(workflow) : "";
  argv.insert(argv.end(), {"-c", prelude.empty() ? command : prelude + "\n" + command});
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  Result<CommandOutput> out = local->Run(argv, "");
  REQUIRE(out.ok());
  return out.value();
}

}  // namespace

TEST_CASE("custom commands: nounset, pipefail, ERR trap, other workflows plain bash -c",
          "[render][custom]") {
  CHECK(CommandShellOptions("custom") == std::vector<std::string>{"-E", "-u", "-o", "pipefail"});
  for (const char* workflow : {"pytest", "bench", "eval", "perf_sanity"}) {
    CHECK(CommandShellOptions(workflow).empty());
  }
  CHECK(CommandPrelude("bench").empty());
  CHECK(RunWithOptions("custom", "false | cat").exit_code == 1);
  CHECK(RunWithOptions("pytest", "false | cat").exit_code == 0);
  CommandOutput unset = RunWithOptions("custom", "echo \"x=$TRTLLM_RUN_SURELY_UNSET\"; echo after");
  CHECK(unset.exit_code == 127);
  CHECK(unset.stdout_text.empty());
  CHECK_THAT(unset.stderr_text, Catch::Contains("TRTLLM_RUN_SURELY_UNSET: unbound variable"));
  CommandOutput first = RunWithOptions("custom", "false; echo after");
  CHECK(first.exit_code == 1);
  CHECK(first.stdout_text.empty());
  CHECK_THAT(first.stderr_text, Catch::Contains("error at line 1: false (exit code 1)"));
  CommandOutput subshell = RunWithOptions("custom", "true\n(exit 3)\necho no");
  CHECK(subshell.exit_code == 3);
  CHECK(subshell.stdout_text.empty());
  CHECK_THAT(subshell.stderr_text, Catch::Contains("error at line 2: ( exit 3 ) (exit code 3)"));
  // Conditions and || lists are not failures, as under errexit.
  CommandOutput tested = RunWithOptions("custom", "if false; then :; fi; false || echo ok");
  CHECK(tested.exit_code == 0);
  CHECK(tested.stdout_text == "ok\n");  // a passing command's output is unchanged
  CHECK(RunWithOptions("custom", "exit 4").exit_code == 4);
}

TEST_CASE("the Slurm run script runs the command with the same semantics", "[render][custom]") {
  TempDir dir;
  SECTION("a failing first stage of a pipeline fails the command") {
    CommandOutput out = RunCustomRunScript(dir, "echo piped; false | cat; echo no_such_line");
    INFO(out.stdout_text << out.stderr_text);
    CHECK(out.exit_code == 1);
    CHECK(out.stdout_text == "piped\nRank0 Custom command finished with exit code 1\n");
  }
  SECTION("an unset variable fails the command") {
    CommandOutput out = RunCustomRunScript(dir, "echo \"x=$TRTLLM_RUN_SURELY_UNSET\"");
    INFO(out.stdout_text << out.stderr_text);
    CHECK(out.exit_code == 127);  // bash's status for an unbound variable
    CHECK(out.stdout_text.find("x=") == std::string::npos);
    CHECK_THAT(out.stderr_text, Catch::Contains("TRTLLM_RUN_SURELY_UNSET: unbound variable"));
  }
  SECTION("the first failing command ends it with its exit code") {
    CommandOutput out = RunCustomRunScript(dir, "false; true");
    CHECK(out.exit_code == 1);
    CHECK(out.stdout_text == "Rank0 Custom command finished with exit code 1\n");
    out = RunCustomRunScript(dir, "true; (exit 3); echo no");
    INFO(out.stdout_text << out.stderr_text);
    CHECK(out.exit_code == 3);
    CHECK(out.stdout_text == "Rank0 Custom command finished with exit code 3\n");
    CHECK_THAT(out.stderr_text, Catch::Contains("error at line 1: ( exit 3 ) (exit code 3)"));
  }
  SECTION("a passing command passes") {
    CommandOutput out = RunCustomRunScript(dir, "false || echo after | cat");
    INFO(out.stdout_text << out.stderr_text);
    CHECK(out.exit_code == 0);
    CHECK(out.stdout_text == "after\nRank0 Custom command finished with exit code 0\n");
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
  in.command_prelude = CommandPrelude("custom");
  DockerRun custom = RenderDockerRun(in);
  CHECK_THAT(custom.payload,
             Catch::EndsWith("\nset -E -u -o pipefail\n" + in.command_prelude + "\nfalse | cat"));
  in.skip_install = true;
  CHECK(RenderDockerRun(in).payload ==
        "set -E -u -o pipefail\n" + in.command_prelude + "\nfalse | cat");
  in.shell_options = CommandShellOptions("pytest");
  in.command_prelude.clear();
  CHECK(RenderDockerRun(in).payload == "false | cat");
}

TEST_CASE("the custom workflow's plan reads no models, bench's does", "[routing][custom]") {
  CaseRequest custom;
  custom.custom_cmd = "true";
  Result<JobPlan> custom_plan = PlanCase(custom);
  REQUIRE(custom_plan.ok());
  CHECK_FALSE(custom_plan->launch.uses_models_root);
  CaseRequest bench;
  bench.bench_cmd = "trtllm-bench --model /m/Llama-3.1-8B throughput";
  Result<JobPlan> bench_plan = PlanCase(bench);
  REQUIRE(bench_plan.ok());
  CHECK(bench_plan->launch.uses_models_root);
}
