// Pieces shared by the job renderers: the install command, MPI variable cleanup, the
// command's shell options, the shipped data directory, and the per-workflow names and
// log patterns.
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/filesystem/path.hpp>

#include "trtllm_run/render.h"

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

std::vector<std::string> CommandShellOptions(const std::string& workflow_type) {
  if (workflow_type == "custom") return {"-u", "-o", "pipefail"};
  return {};
}

std::string DataDirectory() {
  boost::system::error_code error;
  boost::filesystem::path library = boost::dll::this_line_location(error);
  if (error) return std::string();
  return (library.parent_path() / TRTLLM_RUN_DATA_RELDIR).lexically_normal().string();
}

std::string CustomRunScriptPath() { return DataDirectory() + "/" + kCustomRunScriptName; }

std::string SlurmKind(const std::string& workflow_type) {
  return workflow_type == "pytest" ? "auto_test" : workflow_type;
}

WorkflowPatterns PatternsFor(const std::string& workflow_type, const std::string& model_name) {
  WorkflowPatterns patterns;
  if (workflow_type == "perf_sanity") {
    patterns.log_file_pattern = "slurm-%j.out";
    patterns.success = {"8_done_"};
    patterns.failure = {"FAILED", "Error"};
    return patterns;
  }
  patterns.log_file_pattern = model_name + "_" + SlurmKind(workflow_type) + "_%j.out";
  if (workflow_type == "pytest") {
    patterns.success = {"passed"};
    patterns.failure = {"FAILED", "ERROR"};
  } else if (workflow_type == "eval") {
    patterns.success = {"accuracy:", "score:"};
    patterns.failure = {"AssertionError", "Error"};
  } else if (workflow_type == "bench") {
    patterns.success = {"token/s", "throughput"};
    patterns.failure = {"Error", "Traceback"};
  } else {
    patterns.failure = {"Error", "Traceback"};
  }
  return patterns;
}

}  // namespace trtllm_run
