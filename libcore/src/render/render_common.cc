// Pieces shared by the job renderers: the install command, MPI variable cleanup and the
// shipped data directory.
#include <boost/filesystem/path.hpp>

#include "os/library_location.h"
#include "trtllm_run/sdk/render.h"

#ifndef TRTLLM_RUN_DATA_RELDIR
#define TRTLLM_RUN_DATA_RELDIR "../share/trtllm-run"
#endif

namespace trtllm_run {

std::string InstallCommand(bool eval_requirements) {
  std::string command =
      "set -o pipefail\n"
      "echo \"[trtllm-run] installing $(pwd) (pip install -e .)\"\n"
      "pip install -e . 2>&1 | tail -n 20 || exit $?\n"
      "pip install -r requirements-dev.txt 2>&1 | tail -n 20 || exit $?\n";
  if (eval_requirements) {
    command +=
        "if [ -f examples/trtllm-eval/requirements.txt ]; then\n"
        "  pip install -r examples/trtllm-eval/requirements.txt 2>&1 | tail -n 20 || exit $?\n"
        "fi\n";
  }
  return command;
}

std::string MpiCleanupSnippet(const std::vector<std::string>& keep) {
  std::string keep_pattern;
  for (const std::string& name : keep) keep_pattern += (keep_pattern.empty() ? "" : "|") + name;
  std::string snippet = "for trtllm_run_var in $(compgen -e); do\n  case \"$trtllm_run_var\" in\n";
  if (!keep_pattern.empty()) snippet += "    " + keep_pattern + ") ;;\n";
  snippet +=
      "    PMI*|PMIX*|MPI*|OMPI*|SLURM*) unset \"$trtllm_run_var\" ;;\n"
      "  esac\n"
      "done\n"
      "unset trtllm_run_var\n";
  return snippet;
}

std::string DataDirectory() {
  const std::string library_dir = CoreLibraryDirectory();
  if (library_dir.empty()) return std::string();
  return (boost::filesystem::path(library_dir) / TRTLLM_RUN_DATA_RELDIR)
      .lexically_normal()
      .string();
}

std::string CustomRunScriptPath() { return DataDirectory() + "/" + kCustomRunScriptName; }

void CopyPlanToSpec(const JobPlan& plan, JobSpec* spec) {
  spec->workflow_type = plan.workflow_type;
  spec->model_name = plan.model_name;
  spec->repo_root = plan.repo_root;
  spec->working_dir = plan.working_dir;
  spec->shell_options = plan.launch.shell_options;
  spec->command_prelude = plan.launch.command_prelude;
  spec->custom_env = plan.env;
  spec->monitor_timeout_seconds = plan.monitor_timeout_seconds;
  spec->silence_timeout_seconds = plan.silence_timeout_seconds;
  spec->success_patterns = plan.success_patterns;
  spec->failure_patterns = plan.failure_patterns;
  spec->required_devices = plan.required_devices;
  spec->total_required_devices = plan.total_required_devices;
  spec->required_devices_per_node = plan.required_devices_per_node;
}

}  // namespace trtllm_run
