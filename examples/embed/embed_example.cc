// Runs one case through libtrtllm_run_core, as a tool embedding trtllm-run would:
// build a Runtime (it loads the installed plugins), describe the case in a CaseRequest,
// run it and map the verdict to an exit code. Every call returns a Status or Result;
// nothing here throws.
//
//   embed_example [repo_root]
#include <stdlib.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "trtllm_run/runtime.h"

int main(int argc, char** argv) {
  // The work dir goes to <repo_root>/work_dirs/; default to a fresh temp directory.
  std::string repo_root;
  if (argc > 1) {
    repo_root = argv[1];
  } else {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "embed_example_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::cerr << "error: cannot create a temp dir from " << pattern << "\n";
      return trtllm_run::kExitError;
    }
    repo_root = pattern;
  }

  // Built-in plugins plus $TRTLLM_RUN_PLUGIN_PATH; plugins that fail to load are reported.
  auto runtime = trtllm_run::Runtime::Create(trtllm_run::RuntimeOptions{});
  if (!runtime.ok()) {
    std::cerr << "error: " << runtime.status().ToString() << "\n";
    return trtllm_run::kExitBadInput;
  }
  for (const trtllm_run::PluginProblem& problem : runtime.value()->registry().problems()) {
    std::cerr << "warning: " << problem.status.ToString() << "\n";
  }

  trtllm_run::CaseRequest request;
  request.custom_cmd = "echo hello from an embedded trtllm-run";
  request.model_name = "embed_demo";
  request.repo_root = repo_root;
  request.scenario = "local_direct";  // run here, directly; omit to let routing choose
  request.monitor_timeout = "60s";

  trtllm_run::RunOptions options;
  options.terminal = &std::cout;  // the command's output
  options.progress = &std::cerr;  // status lines
  trtllm_run::Result<trtllm_run::RunResult> result = runtime.value()->Run(request, options);
  if (!result.ok()) {  // nothing ran: bad input or a missing plugin
    std::cerr << "error: " << result.status().ToString() << "\n";
    return trtllm_run::kExitBadInput;
  }

  std::cout << "status: " << trtllm_run::RunStatusName(result->status) << "\n"
            << "work dir: " << result->work_dir << "\n";
  return trtllm_run::ExitCodeFor(result.value());
}
