// trtllm-run plan: classify, derive, route and render one case without running it. The
// work dir gets job_spec.json, the script and (Slurm) slurm_env.json; stdout gets the
// summary of spec 001 Step 6.
#include <iostream>
#include <sstream>

#include "cli.h"

namespace trtllm_run::cli {

namespace {

std::string Summary(const PreparedCase& prepared) {
  const JobSpec& spec = prepared.spec;
  std::ostringstream out;
  out << "Generated: " << spec.work_dir << "/job_spec.json\n";
  out << "Script: "
      << (spec.script_path.empty() ? "(none: " + spec.scenario + " runs the command directly)"
                                   : spec.script_path)
      << "\n";
  out << "Workflow: " << spec.workflow_type << "\n";
  out << "Model: " << spec.model_name << "\n";
  out << "Docker image: " << (spec.container_image.empty() ? "(none)" : spec.container_image)
      << "\n";
  // As the executor placed them (job_spec.json), not as the workflow first sized them.
  out << "Devices: " << spec.required_devices << " GPUs across " << spec.node_count << " node"
      << (spec.node_count == 1 ? "" : "s") << " (" << spec.required_devices_per_node
      << " per node, " << spec.total_required_devices << " in total)\n";
  out << "Scenario: " << spec.scenario << "\n";
  out << "Work dir: " << spec.work_dir << "\n";
  std::vector<std::string> notes = prepared.planned.notes;
  auto extra = spec.extra.find("resolution_notes");
  if (extra != spec.extra.end()) {
    std::istringstream lines(extra->second);
    for (std::string line; std::getline(lines, line);) notes.push_back(line);
  }
  if (!notes.empty()) {
    out << "Notes:\n";
    for (const std::string& note : notes) out << "  - " << note << "\n";
  }
  return out.str();
}

}  // namespace

int PlanMain(int argc, char** argv) {
  po::options_description plan_options("Plan");
  plan_options.add_options()(
      "slurm-env", po::value<std::string>(),
      "plan against a saved slurm_env.json instead of probing the cluster (same as "
      "--slurm-env-file)");
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
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("plan", runtime.status());
  PrintPluginProblems(runtime.value()->registry());

  Result<PreparedCase> prepared = runtime.value()->Prepare(request.value());
  if (!prepared.ok()) return Fail("plan", prepared.status());
  std::cout << Summary(prepared.value()) << std::flush;
  return kExitPassed;
}

}  // namespace trtllm_run::cli
