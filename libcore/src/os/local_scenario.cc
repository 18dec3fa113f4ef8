// LocalScenario: runs commands on this host. Run() is RunCaptured (captured_run.h): stdin
// fed and stdout and stderr read concurrently, so no pipe can fill up and deadlock, and
// the command in a process group of its own, so a deadline ends what it started. Start()
// is a ChildProcess.
#include <string>
#include <vector>

#include "os/captured_run.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/scenario.h"

namespace trtllm_run {

namespace {

class LocalScenario : public Scenario {
 public:
  using Scenario::Run;

  std::string Name() const override { return "local"; }
  bool IsRemote() const override { return false; }

  Result<CommandOutput> Run(const Command& command, Deadline deadline) override {
    if (command.argv.empty()) return Status::Internal("Scenario::Run called with an empty argv");
    // The inherited environment without trtllm-run's secrets: sbatch exports its own
    // environment into the job by default, and docker or srun pass theirs on too.
    return internal::RunCaptured(command.argv, command.env, command.stdin_data, command.working_dir,
                                 command.merge_stderr, deadline);
  }

  Result<std::unique_ptr<ChildProcess>> Start(const Command& command) override {
    if (command.argv.empty()) {
      return Status::Internal("Scenario::Start called with an empty argv");
    }
    if (!command.stdin_data.empty()) {
      return Status::InvalidInput("Scenario::Start feeds no stdin",
                                  "run the command with Scenario::Run");
    }
    ProcessOptions options;
    if (!command.merge_stderr) {
      options.argv = {"/bin/sh", "-c", "exec 2>/dev/null; exec \"$@\"", "trtllm-run-stream"};
    }
    options.argv.insert(options.argv.end(), command.argv.begin(), command.argv.end());
    options.env = command.env;
    options.working_dir = command.working_dir;
    return ChildProcess::Spawn(options);
  }
};

}  // namespace

std::unique_ptr<Scenario> MakeLocalScenario() { return std::make_unique<LocalScenario>(); }

}  // namespace trtllm_run
