// Slurm jobs sized against the probed partitions before submission: GPUs asked for where
// there is no GPU GRES or too few per node, time limits against MaxTime, monitor_timeout
// against the time limit, CPU-only work (required_devices 0), partition lists, clusters
// without accounting, and custom_env with a command that is not custom.
#include <rapidjson/document.h>

#include "placement/routing.h"
#include "plan_test_support.h"
#include "slurm/probe/slurm_probe.h"
#include "trtllm_run/sdk/commands/derive.h"

using namespace plan_test;

namespace {

struct Sized {
  Status status;
  std::string script;
  std::string notes;  // job_spec.json resolution_notes
  JobPlan plan;
};

// Plans `request` with the built-in workflows and prepares it as local_slurm against
// `placement` in a fresh work dir; Validate and Prepare must agree.
Sized Size(CaseRequest request, const Placement& placement) {
  TempDir root("trtllm_sizing");
  Sized out;
  if (!request.repo_root) request.repo_root = FakeRepo();
  Result<JobPlan> plan = PlanCase(request);
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  out.plan = plan.value();
  if (request.monitor_timeout) {
    Result<int> seconds = ParseDurationSeconds(*request.monitor_timeout, "monitor_timeout");
    REQUIRE(seconds.ok());
    out.plan.monitor_timeout_seconds = seconds.value();
  }
  std::string work_dir = root / "work_dirs/case";
  fs::create_directories(work_dir);
  JobSpec spec;
  spec.scenario = "local_slurm";
  spec.work_dir = work_dir;
  SlurmJobOptions options;
  options.executor = "local_slurm";
  Status validated = ValidateSlurmJob(request, out.plan, placement, options);
  out.status = PrepareSlurmJob(request, out.plan, placement, options, &spec);
  CHECK(validated.ok() == out.status.ok());
  if (out.status.ok()) {
    out.script = ReadText(spec.script_path);
    rapidjson::Document doc;
    doc.Parse(ReadText(work_dir + "/job_spec.json").c_str());
    REQUIRE_FALSE(doc.HasParseError());
    if (doc.HasMember("resolution_notes")) out.notes = doc["resolution_notes"].GetString();
  }
  return out;
}

bool Mentions(const std::vector<std::string>& notes, const std::string& text) {
  for (const std::string& note : notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

// cluster_a: batch (8 GPUs, MaxTime 08:00:00), small (4, 04:00:00), grace (4, aarch64),
// cpu (no gres, 01:00:00), maint (down).
Placement On(const SlurmEnv& env, const std::string& partition) {
  Placement placement;
  placement.slurm_env = env;
  placement.partition = partition;
  placement.llm_models_root = "/llm-models";
  placement.models_host_path = "/data/models";
  placement.container_image = "nvcr.io/nvidia/pytorch:25.01";
  return placement;
}

Placement ClusterA(const std::string& partition) { return On(LoadEnv("cluster_a"), partition); }

// A cluster without slurmdbd, as the probe records it.
SlurmEnv NoAccounting() {
  SlurmEnv env;
  env.user = "alice";
  env.default_partition = "batch";
  SlurmPartition batch;
  batch.name = "batch";
  batch.state = "up";
  batch.time_limit = "infinite";
  batch.nodes = "1";
  batch.arch = "x86_64";
  env.partitions = {batch};
  env.errors = {
      "'sacctmgr show assoc' failed (exit 1): You are not running a supported "
      "accounting_storage plugin; accounts unavailable",
      "no SLURM account associations for user alice"};
  return env;
}

const std::string kAcc = "tests/integration/defs/accuracy/test_llm_api_pytorch.py";

}  // namespace

TEST_CASE("required_devices 0 is CPU only, other counts stay positive", "[sizing][request]") {
  CaseRequest r;
  REQUIRE(SetRequestField(&r, "required_devices", "0", "--required-devices").ok());
  CHECK(r.required_devices == 0);
  Status negative = SetRequestField(&r, "required_devices", "-1", "--required-devices");
  CHECK(negative.message() ==
        "required_devices must be a non-negative integer, got '-1' (from --required-devices)");
  CHECK_FALSE(SetRequestField(&r, "required_devices_per_node", "0", "x").ok());

  JobPlan plan;
  CaseRequest zero;
  REQUIRE(ApplyDeviceCounts(zero, 0, &plan).ok());
  CHECK(plan.required_devices == 0);
  CHECK(plan.total_required_devices == 0);
  CHECK(plan.required_devices_per_node == 0);
  CHECK(plan.node_count == 1);
  zero.total_required_devices = 4;
  Status contradicts = ApplyDeviceCounts(zero, 0, &plan);
  CHECK(contradicts.code() == StatusCode::kInvalidInput);
  CHECK_THAT(contradicts.message(), Catch::Contains("total_required_devices 4"));

  CaseRequest bench;
  bench.bench_cmd = "trtllm-bench --model m throughput";
  bench.required_devices = 0;
  Result<JobPlan> refused = PlanCase(bench);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::StartsWith("trtllm-bench needs GPUs"));
}

TEST_CASE("a plan says whether its GPU count was asked for", "[sizing]") {
  CaseRequest custom;
  custom.custom_cmd = "./app";
  CHECK_FALSE(PlanCase(custom)->devices_requested);  // the default of 1
  custom.required_devices = 1;
  CHECK(PlanCase(custom)->devices_requested);

  CaseRequest pytest;
  pytest.test_cmd = "pytest " + kAcc + "::TestLlama3_1_8BInstruct::test_fp8_tp2";
  Result<JobPlan> marked = PlanCase(pytest);
  REQUIRE(marked.ok());
  CHECK(marked->devices_requested);
  CHECK(marked->required_devices == 2);

  CaseRequest bench;
  bench.bench_cmd = "trtllm-bench --model m throughput";
  CHECK(PlanCase(bench)->devices_requested);  // tp x pp, 1 x 1
}

TEST_CASE("GPUs asked for on a partition without GPU GRES are refused", "[sizing][slurm]") {
  SECTION("given") {
    CaseRequest request;
    request.custom_cmd = "./app";
    request.required_devices = 1;
    Sized job = Size(request, ClusterA("cpu"));
    REQUIRE(job.status.code() == StatusCode::kInvalidInput);
    CHECK(job.status.message() ==
          "the job asks for 1 GPU(s) per node (--required-devices 1), but partition cpu has no "
          "GPU GRES (gres (null))");
    CHECK(job.status.hint() ==
          "give a --partition with GPUs (batch, small, grace), or --required-devices 0 for work "
          "that needs no GPU");
  }
  SECTION("derived from tp x pp") {
    CaseRequest request;
    request.bench_cmd = "trtllm-bench --model m throughput --tp 2";
    Sized job = Size(request, ClusterA("cpu"));
    REQUIRE_FALSE(job.status.ok());
    CHECK_THAT(job.status.message(),
               Catch::StartsWith("the job asks for 2 GPU(s) per node (tp x pp of the bench "
                                 "command), but partition cpu has no GPU GRES"));
    CHECK(job.status.hint() == "give a --partition with GPUs (batch, small, grace)");
  }
  SECTION("derived from the test's marker") {
    CaseRequest request;
    request.test_cmd = "pytest " + kAcc + "::TestLlama3_1_8BInstruct::test_fp8_tp2";
    Sized job = Size(request, ClusterA("cpu"));
    REQUIRE_FALSE(job.status.ok());
    CHECK_THAT(job.status.message(), Catch::Contains("(the test's GPU marker)"));
  }
}

TEST_CASE("nothing asked for on a GPU-less partition: no --gres, a note, 0 is CPU only",
          "[sizing][slurm]") {
  CaseRequest request{};
  request.custom_cmd = "./cpu_app";
  request.time_limit = "00:30:00";
  Sized job = Size(request, ClusterA("cpu"));
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  CHECK(One(Sbatch(job.script), "--gres") == "<absent>");
  CHECK_THAT(job.notes, Catch::Contains("partition cpu has no GPU GRES (gres (null)): the job "
                                        "runs without --gres, as no GPU count was asked for"));

  request.required_devices = 0;
  for (const char* partition : {"cpu", "batch"}) {
    Sized cpu_only = Size(request, ClusterA(partition));
    INFO(partition);
    REQUIRE(cpu_only.status.ok());
    CHECK(One(Sbatch(cpu_only.script), "--gres") == "<absent>");
    CHECK(One(Sbatch(cpu_only.script), "--ntasks") == "1");
    CHECK(cpu_only.notes.find("no GPU GRES") == std::string::npos);
  }
}

TEST_CASE("more GPUs per node than the partition has are refused naming the fix",
          "[sizing][slurm]") {
  SECTION("trtllm-eval sized past the partition by --gpus_per_node") {
    CaseRequest request;
    request.eval_cmd = "trtllm-eval --model m --tp_size 8 --gpus_per_node 8 gsm8k";
    Sized job = Size(request, ClusterA("small"));
    REQUIRE_FALSE(job.status.ok());
    CHECK(job.status.message() ==
          "the job asks for 8 GPU(s) per node (tp x pp of the eval command), but partition "
          "small has 4 GPUs per node (gres gpu:4(IDX:0-3))");
    CHECK(job.status.hint() ==
          "use --tp_size x --pp_size of at most 4 in --eval-cmd (or its --gpus_per_node 4), or "
          "a --partition with at least 8 GPUs per node (batch)");
  }
  SECTION("a custom command names --required-devices") {
    CaseRequest request;
    request.custom_cmd = "./app";
    request.required_devices = 6;
    Sized job = Size(request, ClusterA("small"));
    REQUIRE_FALSE(job.status.ok());
    CHECK_THAT(job.status.hint(), Catch::Contains("--required-devices 4"));
    CHECK_THAT(job.status.hint(), Catch::Contains("--partition"));
  }
}

TEST_CASE("time_limit against the partition's MaxTime, monitor_timeout against it",
          "[sizing][slurm]") {
  CaseRequest request;
  request.custom_cmd = "./app";
  SECTION("a --time-limit above MaxTime is refused") {
    request.time_limit = "05:00:00";
    Sized job = Size(request, ClusterA("small"));
    REQUIRE(job.status.code() == StatusCode::kInvalidInput);
    CHECK(job.status.message() ==
          "time_limit 05:00:00 (--time-limit) is above the MaxTime 04:00:00 of partition small");
    CHECK(job.status.hint() ==
          "give --time-limit 04:00:00 or less, or a --partition that allows 05:00:00 (batch "
          "MaxTime 08:00:00)");
    request.time_limit = "UNLIMITED";
    CHECK_FALSE(Size(request, ClusterA("small")).status.ok());
    request.time_limit = "04:00:00";
    CHECK(Size(request, ClusterA("small")).status.ok());
  }
  SECTION("the default is lowered to a shorter MaxTime, with a note") {
    Sized job = Size(request, ClusterA("cpu"));
    REQUIRE(job.status.ok());
    CHECK(One(Sbatch(job.script), "--time") == "01:00:00");
    CHECK_THAT(job.notes, Catch::Contains("time_limit 01:00:00: the MaxTime of partition cpu"));
  }
  SECTION("a longer monitor_timeout is a note, not an error") {
    request.time_limit = "01:00:00";
    request.monitor_timeout = "3h";
    Sized job = Size(request, ClusterA("batch"));
    REQUIRE(job.status.ok());
    CHECK(One(Sbatch(job.script), "--time") == "01:00:00");
    CHECK_THAT(job.notes, Catch::Contains("note: monitor_timeout 03:00:00 (--monitor-timeout) is "
                                          "longer than the job's time limit 01:00:00"));
    request.monitor_timeout = "1h";
    CHECK(Size(request, ClusterA("batch")).notes.find("monitor_timeout") == std::string::npos);
  }
}

TEST_CASE("a partition list: every member validated, the job must fit each",
          "[sizing][slurm][routing]") {
  CHECK(SplitPartitionList("batch") == std::vector<std::string>{"batch"});
  CHECK(SplitPartitionList("batch, small") == std::vector<std::string>{"batch", "small"});
  CHECK(SplitPartitionList("batch,") == std::vector<std::string>{"batch", ""});

  SlurmEnv env = LoadEnv("cluster_a");
  CaseRequest request;
  request.partition = "batch,small";
  Placement placement;
  Status listed = ResolveAccountPartition(request, env, nullptr, &placement);
  REQUIRE(listed.ok());
  CHECK(placement.partition == "batch,small");
  CHECK(placement.arch == "x86_64");
  request.partition = "batch,nosuch";
  Status unknown = ResolveAccountPartition(request, env, nullptr, &placement);
  CHECK(unknown.message() ==
        "partition 'nosuch' (in 'batch,nosuch', --partition) does not exist on this cluster");
  request.partition = "batch,maint";
  CHECK(ResolveAccountPartition(request, env, nullptr, &placement).message() ==
        "partition 'maint' (in 'batch,maint', --partition) is down, not up");
  request.partition = "batch,grace";
  CHECK_THAT(ResolveAccountPartition(request, env, nullptr, &placement).message(),
             Catch::Contains("different architectures"));

  CaseRequest job_request;
  job_request.custom_cmd = "./app";
  job_request.required_devices = 2;
  Sized job = Size(job_request, ClusterA("batch,small"));
  REQUIRE(job.status.ok());
  CHECK(One(Sbatch(job.script), "--partition") == "batch,small");
  CHECK(One(Sbatch(job.script), "--gres") == "gpu:2");
  job_request.required_devices = 6;  // fits batch (8), not small (4)
  CHECK_THAT(Size(job_request, ClusterA("batch,small")).status.message(),
             Catch::Contains("(gpus_per_node = 4)"));
  job_request.required_devices.reset();
  job_request.time_limit = "06:00:00";  // batch allows it, small does not
  CHECK_THAT(Size(job_request, ClusterA("batch,small")).status.message(),
             Catch::Contains("MaxTime 04:00:00 of partition small"));
  CHECK_THAT(Size(job_request, ClusterA("batch,nope")).status.message(),
             Catch::Contains("partition 'nope' (in 'batch,nope') does not exist"));
}

TEST_CASE("without accounting: no account needed, a given one used as is",
          "[sizing][slurm][routing]") {
  SlurmEnv env = NoAccounting();
  CHECK(SlurmAccountingState(env) == SlurmAccounting::kDisabled);
  SlurmEnv down = env;
  down.errors = {"'sacctmgr show assoc' failed (exit 1): Connection refused; accounts unavailable"};
  CHECK(SlurmAccountingState(down) == SlurmAccounting::kUnreadable);
  CHECK(SlurmAccountingState(LoadEnv("cluster_a")) == SlurmAccounting::kAccounts);
  SlurmEnv none = env;
  none.errors.clear();
  CHECK(SlurmAccountingState(none) == SlurmAccounting::kNoAssociation);

  CaseRequest request;
  request.custom_cmd = "./app";
  Placement placement = On(env, "");
  REQUIRE(ResolveAccountPartition(request, env, nullptr, &placement).ok());
  CHECK(placement.account.empty());
  CHECK(placement.partition == "batch");
  CHECK(Mentions(placement.notes,
                 "account: none needed, submitting without --account: accounting is disabled"));
  Sized job = Size(request, placement);
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  CHECK(One(Sbatch(job.script), "--account") == "<absent>");
  CHECK(One(Sbatch(job.script), "--job-name") == "custom_custom");
  CHECK_THAT(job.notes, Catch::Contains("account: none, no #SBATCH --account line"));

  request.account = "team_x";
  Placement given = On(env, "");
  REQUIRE(ResolveAccountPartition(request, env, nullptr, &given).ok());
  CHECK(given.account == "team_x");
  CHECK(Mentions(given.notes, "account team_x (--account) used as is, not validated"));
  Sized with_account = Size(request, given);
  REQUIRE(with_account.status.ok());
  CHECK(One(Sbatch(with_account.script), "--account") == "team_x");
}

TEST_CASE("custom_env with a command that is not custom is refused with a prefix hint",
          "[sizing][request]") {
  CaseRequest request;
  request.test_cmd = "pytest tests/test_a.py";
  request.custom_env = "A=1 B='x y'";
  Result<CommandKind> kind = ClassifyCommand(request);
  REQUIRE_FALSE(kind.ok());
  CHECK(kind.status().code() == StatusCode::kInvalidInput);
  CHECK(kind.status().message() ==
        "custom_env (--custom-env) applies only to the custom workflow (custom_cmd, "
        "custom_script); the test_cmd would run without it");
  CHECK(kind.status().hint() ==
        "prefix the command with the assignments instead, e.g. --test-cmd 'A=1 B='\\''x y'\\'' "
        "pytest tests/test_a.py'");
  request.test_cmd.reset();
  request.bench_cmd = "trtllm-bench --model m throughput";
  CHECK_FALSE(ClassifyCommand(request).ok());
  request.bench_cmd.reset();
  request.custom_cmd = "./app";
  CHECK(ClassifyCommand(request).value() == CommandKind::kCustom);
}
