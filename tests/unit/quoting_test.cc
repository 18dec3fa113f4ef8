// Commands reach the job's shell byte for byte: for each nasty command, the rendered
// Slurm script is run with bash and a stand-in srun that runs its command, and the step
// prints exactly what the command prints when run directly with bash -c.
#include "plan_test_support.h"

using namespace plan_test;

namespace {

const std::vector<std::string>& NastyCommands() {
  static const std::vector<std::string> commands = {
      "echo \"double $HOME\" 'single $HOME'",
      "printf '%s|\\n' \"it's\" 'say \"hi\"' \"back\\\\slash\"",
      "X=inner; echo \"$X\" $(echo sub \"$X\") `echo tick`",
      "echo a; echo b && echo c || echo d; false && echo never; echo e",
      "echo line1\necho 'line 2'\n  echo \"line 3\"",
      "echo 'héllo wörld ✓ 日本語' \"ünïcode $((1 + 2))\"",
      "echo '$(not run)' \"\\$(escaped)\" '`not run`' \\$HOME",
      "for i in 1 2 3; do printf 'n=%s;' \"$i\"; done; echo",
      "echo '&&' \"a && b\" '||' ';' && echo after",
      "cat <<'EOF'\nheredoc $HOME `x`\nEOF",
      "echo \"tab\there\" 'trailing backslash \\' && echo 'quote '\\''inside'\\'''",
      "echo {a,b}c ~nouser* \"glob*\" >&2; echo to-stdout",
  };
  return commands;
}

// What `bash -c command` prints in `dir`.
std::string Direct(const TempDir& root, const std::string& command, const std::string& dir) {
  CommandOutput out = RunScript(root / "shims", {"bash", "-c", command}, dir);
  return out.stdout_text;
}

struct Rendered {
  std::string script;
  std::string work_dir;
};

Rendered Render(const TempDir& root, CaseRequest request, const std::string& name) {
  request.repo_root = root / "repo";
  request.skip_install = true;
  Result<JobPlan> plan = PlanCase(request);
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  Placement placement;
  placement.slurm_env = LoadEnv("cluster_a");
  placement.llm_models_root = "/llm-models";
  placement.models_host_path = "/data/models";
  JobSpec spec;
  spec.scenario = "local_slurm";
  spec.work_dir = root / ("work_dirs/" + name);
  fs::create_directories(spec.work_dir);
  SlurmJobOptions options;
  options.executor = "local_slurm";
  Status status = PrepareSlurmJob(request, plan.value(), placement, options, &spec);
  INFO(status.ToString());
  REQUIRE(status.ok());
  REQUIRE(BashSyntaxError(spec.script_path).empty());
  return {spec.script_path, spec.work_dir};
}

std::string RunStep(const TempDir& root, const Rendered& rendered) {
  CommandOutput out = RunScript(root / "shims", {"bash", rendered.script});
  INFO(out.stdout_text << "\n--- stderr:\n" << out.stderr_text);
  REQUIRE(out.exit_code == 0);
  return StepOutput(out.stdout_text, "run");
}

}  // namespace

TEST_CASE("nasty commands reach the job byte for byte", "[quoting][render]") {
  TempDir root;
  WriteShims(root / "shims");
  CopyFakeRepo(root / "repo");
  const std::string repo = root / "repo";
  int index = 0;
  for (const std::string& command : NastyCommands()) {
    ++index;
    INFO("command #" << index << ":\n" << command);
    const std::string expected = Direct(root, command, repo);
    REQUIRE_FALSE(expected.empty());

    CaseRequest custom;
    custom.custom_cmd = command;
    custom.model_name = "q" + std::to_string(index);
    std::string got = RunStep(root, Render(root, custom, "custom" + std::to_string(index)));
    const std::string trailer = "Rank0 Custom command finished with exit code 0\n";
    REQUIRE(got.size() >= trailer.size());
    CHECK(got.substr(got.size() - trailer.size()) == trailer);
    CHECK(got.substr(0, got.size() - trailer.size()) == expected);

    CaseRequest test;
    test.test_cmd = command;
    test.model_name = "q" + std::to_string(index);
    CHECK(RunStep(root, Render(root, test, "test" + std::to_string(index))) == expected);
  }
}

TEST_CASE("bench and eval commands reach the job byte for byte", "[quoting][render]") {
  TempDir root;
  WriteShims(root / "shims");
  CopyFakeRepo(root / "repo");
  // Stand-ins that print their arguments one per line.
  for (const char* tool : {"trtllm-bench", "trtllm-eval"}) {
    WriteText(root / (std::string("shims/") + tool),
              "#!/bin/bash\nfor a in \"$@\"; do printf '<%s>\\n' \"$a\"; done\n", true);
  }
  const std::string repo = root / "repo";

  const std::string bench =
      "trtllm-bench --model /m/x throughput --note \"a && b; 'c'\" --tag 'ü $HOME `x`' "
      "--tp 1 --extra \"$(echo sub)\"";
  CaseRequest request;
  request.bench_cmd = "echo 'prep && quoted' && " + bench;
  Rendered rendered = Render(root, request, "bench");
  CommandOutput out = RunScript(root / "shims", {"bash", rendered.script});
  INFO(out.stdout_text << out.stderr_text);
  REQUIRE(out.exit_code == 0);
  CHECK(StepOutput(out.stdout_text, "prepare") == "prep && quoted\n");
  CHECK(StepOutput(out.stdout_text, "run") == Direct(root, bench, repo));

  const std::string eval =
      "trtllm-eval --model \"/m/with space\" --tp_size 1 gsm8k --system_prompt 'Say \"hi\"; $X'";
  CaseRequest eval_request;
  eval_request.eval_cmd = eval;
  CHECK(RunStep(root, Render(root, eval_request, "eval")) == Direct(root, eval, repo));
}

TEST_CASE("custom_env values reach the command unexpanded", "[quoting][render]") {
  TempDir root;
  WriteShims(root / "shims");
  CopyFakeRepo(root / "repo");
  CaseRequest request;
  request.custom_cmd = "printf '%s|' \"$A\" \"$B\" \"$C\"; echo";
  request.custom_env = "A='x y' B='$(echo no)' C=\"q'uote\"";
  std::string got = RunStep(root, Render(root, request, "env"));
  CHECK(got == "x y|$(echo no)|q'uote|\nRank0 Custom command finished with exit code 0\n");
}
