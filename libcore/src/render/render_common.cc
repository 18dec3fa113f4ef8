// Pieces shared by the job renderers: the install command, MPI variable cleanup and the
// shipped data directory.
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/filesystem/path.hpp>

#include "render/render.h"

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
  boost::system::error_code error;
  boost::filesystem::path library = boost::dll::this_line_location(error);
  if (error) return std::string();
  return (library.parent_path() / TRTLLM_RUN_DATA_RELDIR).lexically_normal().string();
}

std::string CustomRunScriptPath() { return DataDirectory() + "/" + kCustomRunScriptName; }

}  // namespace trtllm_run
