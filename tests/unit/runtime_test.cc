// The case pipeline: classification, planning, routing, and the work-dir guarantees
// (bad input leaves nothing behind; a prepared run always ends with result.json).
#include <catch2/catch.hpp>
#include <filesystem>

#include "trtllm_run/runtime.h"
#include "trtllm_run/sdk/text.h"

namespace fs = std::filesystem;
using namespace trtllm_run;

namespace {

struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/trtllm_run_runtime_XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string path;
};

std::unique_ptr<Runtime> BuiltinRuntime() {
  RuntimeOptions options;
  options.use_plugin_path_env = false;
  Result<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
  REQUIRE(runtime.ok());
  return std::move(runtime).value();
}

// An in-process executor whose behaviour the test chooses.
class ScriptedExecutor : public Executor {
 public:
  explicit ScriptedExecutor(bool fail_prepare) : fail_prepare_(fail_prepare) {}
  std::string Name() const override { return "scripted"; }
  Status Validate(const CaseRequest&, const JobPlan&, const Placement&) const override {
    return Status::Ok();
  }
  Status Prepare(const CaseRequest&, const JobPlan& plan, const Placement&,
                 JobSpec* spec) override {
    spec->direct_cmd = plan.command;
    TRTLLM_RUN_RETURN_IF_ERROR(WriteJobSpec(*spec));
    if (fail_prepare_) return Status::InvalidInput("scripted prepare failure");
    return Status::Ok();
  }
  RunResult Execute(const JobSpec& spec, const ExecContext&) override {
    RunResult result;
    result.status = RunStatus::kPassed;
    result.exit_code = 0;
    result.reason = "scripted pass of " + spec.direct_cmd;
    return result;
  }

 private:
  bool fail_prepare_;
};

std::unique_ptr<Runtime> ScriptedRuntime(bool fail_prepare) {
  auto registry = std::make_unique<Registry>();
  registry->LoadDirectory(BuiltinPluginDirectory());
  PluginInfo info;
  info.name = "scripted";
  info.kind = PluginKind::kExecutor;
  REQUIRE(registry
              ->AddExecutor(
                  info, [fail_prepare] { return std::make_unique<ScriptedExecutor>(fail_prepare); })
              .ok());
  return std::make_unique<Runtime>(std::move(registry));
}

}  // namespace

TEST_CASE("the built-in plugins plan a custom command for local_direct", "[runtime]") {
  TempDir repo;
  std::unique_ptr<Runtime> runtime = BuiltinRuntime();
  CaseRequest request;
  request.custom_cmd = "python3 run.py --model=/models/Llama-3.1-8B-Instruct";
  request.repo_root = repo.path;
  request.monitor_timeout = "30m";
  request.scenario = "local_direct";
  Result<PlannedCase> planned = runtime->Plan(request);
  REQUIRE(planned.ok());
  CHECK(planned->scenario == "local_direct");
  CHECK(planned->plan.workflow_type == "custom");
  CHECK(planned->plan.model_name == "llama_3_1_8b_instruct");
  CHECK(planned->plan.monitor_timeout_seconds == 1800);
  CHECK(planned->plan.repo_root == fs::canonical(repo.path).string());
  CHECK(fs::path(planned->work_dir).parent_path() == fs::canonical(repo.path) / "work_dirs");
  CHECK(fs::path(planned->work_dir).filename().string().rfind("llama_3_1_8b_instruct_", 0) == 0);
  CHECK_FALSE(fs::exists(fs::path(repo.path) / "work_dirs"));  // planning writes nothing
}

TEST_CASE("planning rejects bad input with the field named", "[runtime]") {
  TempDir repo;
  std::unique_ptr<Runtime> runtime = BuiltinRuntime();
  CaseRequest request;
  request.repo_root = repo.path;

  SECTION("no command") {
    Result<PlannedCase> planned = runtime->Plan(request);
    REQUIRE_FALSE(planned.ok());
    CHECK(planned.status().code() == StatusCode::kInvalidInput);
    CHECK_THAT(planned.status().hint(), Catch::Contains("--custom-cmd"));
  }
  SECTION("two kinds of command") {
    request.custom_cmd = "true";
    request.test_cmd = "pytest x.py";
    Result<PlannedCase> planned = runtime->Plan(request);
    REQUIRE_FALSE(planned.ok());
    CHECK_THAT(planned.status().message(), Catch::Contains("custom_cmd"));
    CHECK_THAT(planned.status().message(), Catch::Contains("test_cmd"));
  }
  SECTION("bad monitor_timeout") {
    request.custom_cmd = "true";
    request.monitor_timeout = "ten minutes";
    Result<PlannedCase> planned = runtime->Plan(request);
    REQUIRE_FALSE(planned.ok());
    CHECK_THAT(planned.status().message(), Catch::Contains("monitor_timeout"));
    CHECK_THAT(planned.status().message(), Catch::Contains("ten minutes"));
  }
  SECTION("missing custom_script") {
    request.custom_script = repo.path + "/nope.sh";
    Result<PlannedCase> planned = runtime->Plan(request);
    REQUIRE_FALSE(planned.ok());
    CHECK_THAT(planned.status().message(), Catch::Contains("nope.sh"));
    CHECK_THAT(planned.status().message(), Catch::Contains("does not exist"));
  }
  SECTION("unknown scenario lists the registered executors") {
    request.custom_cmd = "true";
    request.scenario = "moon_cluster";
    Result<PlannedCase> planned = runtime->Plan(request);
    REQUIRE_FALSE(planned.ok());
    CHECK(planned.status().code() == StatusCode::kNotFound);
    CHECK_THAT(planned.status().ToString(), Catch::Contains("moon_cluster"));
    CHECK_THAT(planned.status().ToString(), Catch::Contains("local_direct"));
  }
  SECTION("a command no loaded workflow handles") {
    request.test_cmd = "pytest tests/test_x.py";
    Result<PlannedCase> planned = runtime->Plan(request);
    if (!planned.ok()) {  // until the pytest workflow ships, test_cmd is unclaimed
      CHECK_THAT(planned.status().message(), Catch::Contains("test_cmd"));
    }
  }
  SECTION("repo_root that is not a directory") {
    request.custom_cmd = "true";
    request.repo_root = repo.path + "/missing";
    Result<PlannedCase> planned = runtime->Plan(request);
    REQUIRE_FALSE(planned.ok());
    CHECK_THAT(planned.status().message(), Catch::Contains("repo_root"));
  }
  CHECK_FALSE(fs::exists(fs::path(repo.path) / "work_dirs"));
}

TEST_CASE("custom_script becomes bash <absolute script>", "[runtime]") {
  TempDir repo;
  std::string script = repo.path + "/my run.sh";
  REQUIRE(WriteFileAtomic(script, "echo hi\n").ok());
  std::unique_ptr<Runtime> runtime = BuiltinRuntime();
  CaseRequest request;
  request.repo_root = repo.path;
  request.custom_script = script;
  request.custom_cmd = "ignored";
  request.custom_env = "A=1 B='two words'";
  request.scenario = "local_direct";
  Result<PlannedCase> planned = runtime->Plan(request);
  REQUIRE(planned.ok());
  CHECK(planned->plan.command == "bash " + ShellQuote(script));
  REQUIRE(planned->plan.env.size() == 2);
  CHECK(planned->plan.env[1].value == "two words");
  CHECK(planned->plan.model_name == "custom");
}

TEST_CASE("a failed prepare leaves no work dir behind", "[runtime]") {
  TempDir repo;
  std::unique_ptr<Runtime> runtime = ScriptedRuntime(/*fail_prepare=*/true);
  CaseRequest request;
  request.repo_root = repo.path;
  request.custom_cmd = "true";
  request.scenario = "scripted";
  Result<RunResult> result = runtime->Run(request, RunOptions{});
  REQUIRE_FALSE(result.ok());
  CHECK_THAT(result.status().message(), Catch::Contains("scripted prepare failure"));
  // Not even the work_dirs/ it made (before: an empty work_dirs/ stayed).
  CHECK_FALSE(fs::exists(fs::path(repo.path) / "work_dirs"));
  // A work_dirs/ that was there before stays.
  fs::create_directories(fs::path(repo.path) / "work_dirs");
  REQUIRE_FALSE(runtime->Run(request, RunOptions{}).ok());
  REQUIRE(fs::exists(fs::path(repo.path) / "work_dirs"));
  CHECK(fs::is_empty(fs::path(repo.path) / "work_dirs"));
}

TEST_CASE("a run writes job_spec.json and result.json, and names never collide", "[runtime]") {
  TempDir repo;
  std::unique_ptr<Runtime> runtime = ScriptedRuntime(/*fail_prepare=*/false);
  CaseRequest request;
  request.repo_root = repo.path;
  request.custom_cmd = "echo same second";
  request.model_name = "twin";
  request.scenario = "scripted";
  Result<RunResult> first = runtime->Run(request, RunOptions{});
  Result<RunResult> second = runtime->Run(request, RunOptions{});
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first->work_dir != second->work_dir);
  for (const RunResult* result : {&first.value(), &second.value()}) {
    CHECK(result->status == RunStatus::kPassed);
    CHECK(result->workflow_type == "custom");
    CHECK(result->model_name == "twin");
    CHECK(result->scenario == "scripted");
    Result<JobSpec> spec = ReadJobSpec(result->work_dir);
    REQUIRE(spec.ok());
    CHECK(spec->direct_cmd == "echo same second");
    Result<std::string> text = ReadFile(result->work_dir + "/result.json");
    REQUIRE(text.ok());
    Result<RunResult> parsed = ResultFromJson(text.value(), "result.json");
    REQUIRE(parsed.ok());
    CHECK(parsed->status == RunStatus::kPassed);
    CHECK(parsed->reason == "scripted pass of echo same second");
  }
}
