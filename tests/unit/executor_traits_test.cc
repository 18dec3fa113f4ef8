// Core acts on what an executor declares (ExecutorTraits), not on its name: routing asks
// executors' claims and traits, the runtime probes and validates Slurm placement for any
// executor with the slurm trait, and executor_options reach the executor that checks them.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "placement/routing.h"
#include "trtllm_run/registry.h"
#include "trtllm_run/request.h"
#include "trtllm_run/runtime.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/sdk/workflow.h"

namespace fs = std::filesystem;
using namespace trtllm_run;

namespace {

// A planning error's own message, without the route line planning errors end with.
std::string MessageBeforeRoute(const Status& status) {
  const std::string& message = status.message();
  return message.substr(0, message.find("\n  route: "));
}

std::string SlurmEnvFixture(const std::string& name) {
  return (fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / "slurm_env" / name).string();
}

struct ScratchDir {
  ScratchDir() {
    char pattern[] = "/tmp/trtllm_run_traits_XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~ScratchDir() { fs::remove_all(path); }
  std::string path;
};

// A third-party executor whose traits, claim and options the test chooses.
class ThirdPartyExecutor : public Executor {
 public:
  ThirdPartyExecutor(std::string name, ExecutorTraits traits, bool claims)
      : name_(std::move(name)), traits_(traits), claims_(claims) {}
  std::string Name() const override { return name_; }
  ExecutorTraits Traits() const override { return traits_; }
  std::optional<RouteClaim> Claim(const CaseRequest& /*request*/,
                                  const EnvFacts& env) const override {
    if (!claims_) return std::nullopt;
    return RouteClaim{"this host has " + std::to_string(env.gpu_count) + " GPUs of ours"};
  }
  Status CheckExecutorOptions(const std::map<std::string, std::string>& options) const override {
    for (const auto& [key, value] : options) {
      if (key != "queue") {
        return Status::InvalidInput("unknown executor option '" + key + "'", "takes: queue");
      }
      if (value != "fast" && value != "slow") {
        return Status::InvalidInput("executor option queue=" + value + " is not a queue",
                                    "queue is fast or slow");
      }
    }
    return Status::Ok();
  }
  Status Validate(const CaseRequest&, const JobPlan&, const Placement& placement) const override {
    seen_placement = placement;
    return Status::Ok();
  }
  Status Prepare(const CaseRequest&, const JobPlan&, const Placement&, JobSpec* spec) override {
    seen_options = spec->executor_options;
    return WriteJobSpec(*spec);
  }
  RunResult Execute(const JobSpec&, const ExecContext&) override { return RunResult(); }

  static inline Placement seen_placement;
  static inline std::map<std::string, std::string> seen_options;

 private:
  std::string name_;
  ExecutorTraits traits_;
  bool claims_;
};

std::unique_ptr<Runtime> RuntimeWith(const std::string& name, ExecutorTraits traits) {
  auto registry = std::make_unique<Registry>();
  registry->LoadDirectory(BuiltinPluginDirectory());
  PluginInfo info;
  info.name = name;
  REQUIRE(registry
              ->AddExecutor(info,
                            [name, traits] {
                              return std::make_unique<ThirdPartyExecutor>(name, traits, false);
                            })
              .ok());
  return std::make_unique<Runtime>(std::move(registry));
}

JobPlan OneGpuPlan(const std::string& workflow = "custom") {
  JobPlan plan;
  plan.workflow_type = workflow;
  plan.command = "echo hi";
  return plan;
}

EnvFacts Host(int gpus) {
  EnvFacts env;
  env.gpu_count = gpus;
  env.gpus_per_node = gpus;
  env.device_type = gpus > 0 ? "A100" : "";
  env.docker_available = true;
  env.arch = "x86_64";
  return env;
}

}  // namespace

TEST_CASE("traits: the built-in executors declare what core does for them", "[traits]") {
  Registry registry;
  registry.LoadDirectory(BuiltinPluginDirectory());
  auto traits = [&](const std::string& name) {
    Result<ExecutorTraits> t = registry.ExecutorTraitsOf(name);
    REQUIRE(t.ok());
    return t.value();
  };
  CHECK(traits("local_direct").host_bound);
  CHECK_FALSE(traits("local_direct").slurm);
  CHECK(traits("local_docker").host_bound);
  CHECK(traits("local_docker").needs_env_check);
  CHECK(traits("local_slurm").slurm);
  CHECK_FALSE(traits("local_slurm").remote);
  CHECK(traits("remote_slurm").slurm);
  CHECK(traits("remote_slurm").remote);
  CHECK(registry.ExecutorTraitsOf("no_such").status().code() == StatusCode::kNotFound);
}

TEST_CASE("routing: an executor's claim routes a case that names no scenario", "[traits]") {
  auto claiming = std::make_shared<ThirdPartyExecutor>("my_cluster", ExecutorTraits{}, true);
  std::vector<RoutingCandidate> executors = {
      {"local_direct", {}, nullptr}, {"local_docker", {}, nullptr}, {"my_cluster", {}, claiming}};
  CaseRequest request;
  Result<Placement> placement = RouteAmong(request, OneGpuPlan(), Host(2), nullptr, executors);
  REQUIRE(placement.ok());
  CHECK(placement->scenario == "my_cluster");
  CHECK(placement->notes.front() ==
        "scenario my_cluster: claimed by the executor: this host has 2 GPUs of ours");

  request.scenario = "local_direct";  // --scenario wins over any claim
  placement = RouteAmong(request, OneGpuPlan(), Host(2), nullptr, executors);
  REQUIRE(placement.ok());
  CHECK(placement->scenario == "local_direct");
}

TEST_CASE("routing: a third-party remote executor gets the SSH destination", "[traits]") {
  ExecutorTraits remote;
  remote.slurm = true;
  remote.remote = true;
  std::vector<RoutingCandidate> executors = {{"far_slurm", remote, nullptr}};
  CaseRequest request;
  request.scenario = "far_slurm";
  Result<Placement> none = RouteAmong(request, OneGpuPlan(), Host(0), nullptr, executors);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message() == "--scenario far_slurm needs a cluster");
  request.ssh_host = "alice@login.example.com";
  Result<Placement> placement = RouteAmong(request, OneGpuPlan(), Host(0), nullptr, executors);
  REQUIRE(placement.ok());
  CHECK(placement->scenario == "far_slurm");
  CHECK(placement->ssh_host == "alice@login.example.com");
}

TEST_CASE("routing: perf-sanity runs only on executors with the slurm trait", "[traits]") {
  ExecutorTraits slurm;
  slurm.slurm = true;
  std::vector<RoutingCandidate> executors = {{"batch_x", {}, nullptr}, {"slurm_x", slurm, nullptr}};
  CaseRequest request;
  request.scenario = "batch_x";
  Result<Placement> refused =
      RouteAmong(request, OneGpuPlan(kPerfSanityWorkflow), Host(1), nullptr, executors);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message() ==
        "perf-sanity tests run only on Slurm; --scenario batch_x cannot run them");
  request.scenario = "slurm_x";
  CHECK(RouteAmong(request, OneGpuPlan(kPerfSanityWorkflow), Host(1), nullptr, executors).ok());
}

TEST_CASE("runtime: an executor with the slurm trait gets a validated Slurm placement",
          "[traits]") {
  ScratchDir repo;
  ExecutorTraits slurm;
  slurm.slurm = true;
  std::unique_ptr<Runtime> runtime = RuntimeWith("site_slurm", slurm);
  CaseRequest request;
  request.custom_cmd = "echo hi";
  request.repo_root = repo.path;
  request.scenario = "site_slurm";
  request.slurm_env_file = SlurmEnvFixture("cluster_a.json");
  request.partition = "small";
  Result<PlannedCase> planned = runtime->Plan(request);
  INFO(planned.status().ToString());
  REQUIRE(planned.ok());
  const Placement& seen = ThirdPartyExecutor::seen_placement;
  REQUIRE(seen.slurm_env.has_value());
  CHECK(seen.slurm_env->partitions.size() == 5);
  CHECK(seen.partition == "small");
  CHECK(seen.account == "team_a");

  request.partition = "nope";
  Result<PlannedCase> bad = runtime->Plan(request);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidInput);
  CHECK(MessageBeforeRoute(bad.status()) ==
        "partition 'nope' (--partition) does not exist on this cluster");
}

TEST_CASE("executor_options: checked by the executor, carried into the job spec", "[traits]") {
  ScratchDir repo;
  std::unique_ptr<Runtime> runtime = RuntimeWith("queued", ExecutorTraits{});
  CaseRequest request;
  request.custom_cmd = "echo hi";
  request.repo_root = repo.path;
  request.scenario = "queued";
  REQUIRE(SetExecutorOption(&request, "queue=sideways", "--executor-option").ok());
  Result<PreparedCase> bad = runtime->Prepare(request);
  REQUIRE_FALSE(bad.ok());
  CHECK(MessageBeforeRoute(bad.status()) == "executor option queue=sideways is not a queue");
  CHECK_FALSE(fs::exists(repo.path + "/work_dirs"));

  REQUIRE(SetExecutorOption(&request, "queue=fast", "--executor-option").ok());
  Result<PreparedCase> prepared = runtime->Prepare(request);
  INFO(prepared.status().ToString());
  REQUIRE(prepared.ok());
  CHECK(ThirdPartyExecutor::seen_options == std::map<std::string, std::string>{{"queue", "fast"}});
  Result<JobSpec> spec = ReadJobSpec(prepared->spec.work_dir);
  REQUIRE(spec.ok());
  CHECK(spec->executor_options == std::map<std::string, std::string>{{"queue", "fast"}});

  // A built-in executor takes none.
  request.scenario = "local_direct";
  Result<PlannedCase> builtin = runtime->Plan(request);
  REQUIRE_FALSE(builtin.ok());
  CHECK(MessageBeforeRoute(builtin.status()) ==
        "executor option 'queue' (executor_options): the local_direct executor takes no "
        "executor options");
}

TEST_CASE("executor_options: request files and --executor-option forms", "[traits][request]") {
  CaseRequest request;
  REQUIRE(LoadRequestText("custom_cmd: x\nexecutor_options:\n  queue: fast\n  depth: 3\n",
                          "case.yaml", &request)
              .ok());
  CHECK(request.executor_options == ExecutorOptions{{"depth", "3"}, {"queue", "fast"}});

  Status list = LoadRequestText("executor_options: [queue]\n", "case.yaml", &request);
  CHECK(list.code() == StatusCode::kInvalidInput);
  CHECK_THAT(list.message(), Catch::StartsWith("case.yaml:1"));
  CHECK_THAT(list.message(), Catch::Contains("executor_options must be a mapping"));

  Status no_equals = SetExecutorOption(&request, "queue", "--executor-option");
  CHECK(no_equals.message() == "--executor-option: 'queue' is not KEY=VALUE");
  Status bad_key = SetExecutorOption(&request, "a b=1", "--executor-option");
  CHECK(bad_key.message() == "--executor-option: executor option key 'a b' is not a key");

  CaseRequest flags;
  REQUIRE(SetExecutorOption(&flags, "queue=slow", "--executor-option").ok());
  MergeRequest(flags, &request);
  CHECK(request.executor_options->at("queue") == "slow");
  CHECK(request.executor_options->at("depth") == "3");
}

namespace {

// A third-party workflow whose after_placement hook counts its calls and leaves a mark
// (the job kind) that shows whether Validate and Prepare saw the plan as it left it.
class CountingWorkflow : public Workflow {
 public:
  explicit CountingWorkflow(std::string repo) : repo_(std::move(repo)) {}
  std::string Name() const override { return "counting"; }
  int ClaimOrder() const override { return 5; }
  bool Claims(const CaseRequest& request) const override {
    return request.custom_cmd.value_or("") == "echo counted";
  }
  Result<JobPlan> Plan(const CaseRequest& request) const override {
    JobPlan plan;
    plan.workflow_type = "counting";
    plan.model_name = "counted";
    plan.command = *request.custom_cmd;
    plan.repo_root = repo_;
    plan.steps.push_back(PlanStep{"run", plan.command, 1, false});
    plan.launch.after_placement = [](const PlacementFacts& facts, JobPlan* changed) {
      ++calls;
      changed->launch.job_kind = "seen_" + facts.partition + "_" +
                                 std::to_string(facts.gpus_per_node.value_or(0)) + "gpus";
      changed->notes.push_back("counting: partition " + facts.partition);
      return Status::Ok();
    };
    return plan;
  }
  static inline int calls = 0;

 private:
  std::string repo_;
};

std::unique_ptr<Runtime> RuntimeWithCounting(const std::string& repo) {
  auto registry = std::make_unique<Registry>();
  registry->LoadDirectory(BuiltinPluginDirectory());
  PluginInfo info;
  info.name = "counting";
  info.kind = PluginKind::kWorkflow;
  REQUIRE(registry->AddWorkflow(info, [repo] { return std::make_unique<CountingWorkflow>(repo); })
              .ok());
  info.name = "site_slurm";
  info.kind = PluginKind::kExecutor;
  ExecutorTraits slurm;
  slurm.slurm = true;
  REQUIRE(
      registry
          ->AddExecutor(
              info,
              [slurm] { return std::make_unique<ThirdPartyExecutor>("site_slurm", slurm, false); })
          .ok());
  return std::make_unique<Runtime>(std::move(registry));
}

}  // namespace

TEST_CASE("runtime: the after_placement hook runs once per case, before Validate and Prepare",
          "[traits][slurm]") {
  ScratchDir repo;
  std::unique_ptr<Runtime> runtime = RuntimeWithCounting(repo.path);
  CaseRequest request;
  request.custom_cmd = "echo counted";
  request.repo_root = repo.path;
  request.scenario = "local_slurm";
  request.slurm_env_file = SlurmEnvFixture("cluster_a.json");
  request.partition = "small";
  request.container_image = "nvcr.io/nvidia/pytorch:25.01-py3";
  request.models_path = "/data/models";
  request.llm_models_root = "/llm-models";

  // The built-in Slurm executor validates and prepares: the hook ran once (before: once in
  // ValidateSlurmJob, again in PrepareSlurmJob), and both saw the plan it left.
  CountingWorkflow::calls = 0;
  Result<PreparedCase> prepared = runtime->Prepare(request);
  INFO(prepared.status().ToString());
  REQUIRE(prepared.ok());
  CHECK(CountingWorkflow::calls == 1);
  const JobSpec& spec = prepared->spec;
  CHECK_THAT(spec.script_path, Catch::EndsWith("/counted_seen_small_4gpus.slurm"));
  bool noted = false;
  for (const std::string& note : prepared->planned.notes)
    noted |= note == "counting: partition small";
  CHECK(noted);

  // Planning alone (trtllm-run plan) also asks it once.
  CountingWorkflow::calls = 0;
  REQUIRE(runtime->Plan(request).ok());
  CHECK(CountingWorkflow::calls == 1);

  // A third-party executor with the slurm trait gets the plan as the hook left it, though
  // it prepares nothing through the Slurm kit (before: the hook never ran for it).
  // Its traits say it runs no container: container flags would be refused as unused.
  CountingWorkflow::calls = 0;
  request.scenario = "site_slurm";
  request.container_image.reset();
  request.llm_models_root.reset();
  Result<PlannedCase> planned = runtime->Plan(request);
  INFO(planned.status().ToString());
  REQUIRE(planned.ok());
  CHECK(CountingWorkflow::calls == 1);
  CHECK(planned->plan.launch.job_kind == "seen_small_4gpus");
  CHECK_FALSE(planned->plan.launch.after_placement);
}
