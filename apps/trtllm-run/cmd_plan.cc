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
      "json", po::bool_switch(),
      "print the plan as JSON on stdout (work dir, scenario, notes, job_spec; with --cases: "
      "every case's plan); the summary then goes to stderr");
  po::options_description visible;
  visible.add(CaseOptions()).add(plan_options).add(PluginOptions());
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
