// Scenario: where commands run and where files live. LocalHost runs processes here; a
// remote scenario runs them over one multiplexed SSH connection. Executors that share
// scheduler logic (local_slurm, remote_slurm) differ only in their Scenario.
#ifndef TRTLLM_RUN_SDK_SCENARIO_H_
#define TRTLLM_RUN_SDK_SCENARIO_H_

#include <memory>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

struct CommandOutput {
  int exit_code = -1;  // -1 when ended by a signal
  int signal = 0;
  std::string stdout_text;
  std::string stderr_text;
};

class TRTLLM_RUN_API Scenario {
 public:
  virtual ~Scenario();

  // "local", or "ssh:<destination>".
  virtual std::string Name() const = 0;
  virtual bool IsRemote() const = 0;

  // Runs `argv` (no shell) to completion, feeding `stdin_data`, and captures its output.
  // Returns non-OK only when the command could not be started; a non-zero exit is a
  // normal CommandOutput. Blocks the calling thread.
  virtual Result<CommandOutput> Run(const std::vector<std::string>& argv,
                                    const std::string& stdin_data) = 0;
};

// The scenario for this host.
TRTLLM_RUN_API std::unique_ptr<Scenario> MakeLocalScenario();

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SCENARIO_H_
