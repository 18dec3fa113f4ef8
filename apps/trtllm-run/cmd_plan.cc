// trtllm-run plan: classify, derive, route and render one case without running it. The
// work dir gets job_spec.json, the script and (Slurm) slurm_env.json; stdout gets the
// summary of spec 001 Step 6 (with --json: a JSON object, the summary on stderr).
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <iostream>

#include "cli.h"

namespace trtllm_run::cli {

namespace {

// {"work_dir", "scenario", "workflow_type", "script", "notes", "job_spec": job_spec.json}.
std::string PlanJson(const PreparedCase& prepared) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  auto str = [&](const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  const JobSpec& spec = prepared.spec;
  w.StartObject();
  str("work_dir", spec.work_dir);
  str("scenario", spec.scenario);
  str("workflow_type", spec.workflow_type);
  str("script", spec.script_path);
  w.Key("notes");
  w.StartArray();
  for (const std::string& note : PlanNotes(prepared)) {
    w.String(note.c_str(), static_cast<rapidjson::SizeType>(note.size()));
  }
  w.EndArray();
  w.Key("job_spec");
  rapidjson::Document doc;
  const std::string text = JobSpecToJson(spec);
  doc.Parse(text.c_str());
  doc.Accept(w);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace

int PlanMain(int argc, char** argv) {
  po::options_description plan_options("Plan");
  plan_options.add_options()(
      "slurm-env", po::value<std::string>()->value_name("FILE"),
      "plan against a saved slurm_env.json instead of probing the cluster (same as "
      "--slurm-env-file)")(
      "cases", po::value<std::string>()->value_name("FILE"),
      "plan every case of FILE (the cases files of `run --cases`) and print a table that fits "
      "the terminal (workflow, scenario, model, GPUs, nodes, timeout, partition, account; "
      "cases with warnings marked !), then each case's notes and warnings; with --json, every "
      "case's plan as JSON. Nothing is written or submitted; every problem of every case is "
      "reported at once (exit 2)")(
      "stage", po::value<std::string>()->value_name("NAME"),
      "plan a TensorRT-LLM CI stage of the checkout's jenkins/L0_Test.groovy as CI runs it "
      "(a family name without its -N suffix: every split): the match keys from the name and, "
      "with --scenario, gpu/system_gpu_count from the target (nvidia-smi here, the Slurm "
      "partition's GPU GRES and nodes), each with where it came from, "
      "the test-db rendered with them and which blocks matched and why, waives.txt's SKIPs, "
      "the least_duration shards over .test_durations. Nothing is written or submitted")(
      "test-db", po::value<std::string>()->value_name("CONTEXT"),
      "with --stage or alone: render tests/integration/test_lists/test-db/CONTEXT.yml, "
      "skipping the stage table")(
      "match", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
      "with --stage/--test-db: set a match key (gpu, system_gpu_count, stage, backend, ...) "
      "over what the stage name gives; repeatable")(
      "waives", po::value<std::string>()->value_name("FILE"),
      "with --stage/--test-db: the waives list (default: the checkout's "
      "tests/integration/test_lists/waives.txt)")(
      "splits", po::value<int>()->value_name("N"),
      "with --stage/--test-db: split the tests N ways instead of the stage's split count")(
      "durations", po::value<std::string>()->value_name("FILE|history"),
      "with --stage/--test-db: the split's durations: a pytest-split .test_durations file, or "
      "`history` for the mean durations the history recorded (default: the checkout's "
      "tests/integration/defs/.test_durations, else the history's when it has some)")(
      "json", po::bool_switch(),
      "print the plan as JSON on stdout (work dir, scenario, notes, job_spec; with --cases: "
      "every case's plan); the summary then goes to stderr");
  po::options_description visible;
  visible.add(CaseOptions()).add(plan_options).add(HistoryOptions()).add(PluginOptions());
  po::variables_map vm;
  if (std::optional<int> done = Parse("plan", argc, argv, visible, &vm)) return *done;

  Result<CaseRequest> request = RequestFromOptions(vm);
  if (!request.ok()) return Fail("plan", request.status());
  if (vm.count("slurm-env")) {
    if (vm.count("slurm-env-file")) {
      return UsageError("plan", "give --slurm-env or --slurm-env-file, not both");
    }
    request.value().slurm_env_file = vm["slurm-env"].as<std::string>();
  }
  if (vm.count("stage") || vm.count("test-db")) {
    if (vm.count("cases")) return UsageError("plan", "give --stage or --cases, not both");
    return PlanStageMain(vm, request.value());
  }
  for (const char* flag : {"match", "waives", "splits", "durations"}) {
    if (vm.count(flag)) {
      return UsageError("plan", std::string("--") + flag + " goes with --stage or --test-db");
    }
  }
  if (vm.count("cases")) return PlanCasesMain(vm, request.value());
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("plan", runtime.status());
  PrintPluginProblems(runtime.value()->registry());

  Result<PreparedCase> prepared = runtime.value()->Prepare(request.value());
  if (!prepared.ok()) return Fail("plan", prepared.status());
  if (vm["json"].as<bool>()) {
    std::cerr << FormatPlanSummary(prepared.value()) << std::flush;
    std::cout << PlanJson(prepared.value()) << std::flush;
  } else {
    std::cout << FormatPlanSummary(prepared.value()) << std::flush;
  }
  return kExitPassed;
}

}  // namespace trtllm_run::cli
