// Which step of a Slurm job failed (slurm_failing_step.h).
#include "slurm/verdict/slurm_failing_step.h"

#include <cstddef>
#include <string>

namespace trtllm_run {
namespace {

bool IsNumberedStep(const SlurmAcctRecord& record) {
  return !record.step.empty() && record.step != "batch" && record.step != "extern" &&
         record.step != "interactive";
}

bool StepFailed(const SlurmAcctRecord& record) {
  if (record.state == "FAILED" || record.state == "CANCELLED" || record.state == "OUT_OF_MEMORY" ||
      record.state == "TIMEOUT" || record.state == "NODE_FAIL") {
    return true;
  }
  return (record.exit.code && *record.exit.code != 0) ||
         (record.exit.signal && *record.exit.signal != 0);
}

}  // namespace

std::string ExitText(const SlurmExit& exit) {
  std::string text = exit.code ? std::to_string(*exit.code) : "?";
  text += ":";
  text += exit.signal ? std::to_string(*exit.signal) : "?";
  return text;
}

// "step run (49.1, bash): exit code 3" from the step records and the step lines.
std::string FailingStep(const SlurmJobEvidence& e) {
  const SlurmAcctRecord* record = nullptr;
  std::size_t index = 0;
  std::size_t numbered = 0;
  for (const SlurmAcctRecord& step : e.accounting) {
    if (!IsNumberedStep(step)) continue;
    if (!record && StepFailed(step)) {
      record = &step;
      index = numbered;
    }
    ++numbered;
  }
  const StepExitLine* line = nullptr;
  for (const StepExitLine& step : e.step_exits) {
    if (step.exit_code != 0) {
      line = &step;
      break;
    }
  }
  // The k-th "[trtllm-run] step" line belongs to the k-th srun step when every step line
  // had one srun step (the rendered scripts run one srun per step).
  if (record && !line && e.step_exits.size() == numbered && index < e.step_exits.size()) {
    line = &e.step_exits[index];
  }
  std::string text;
  if (line) text = "step " + line->step;
  if (record) {
    std::string what = record->id + (record->name.empty() ? "" : ", " + record->name) + ", " +
                       record->state_text + " " + ExitText(record->exit);
    text += text.empty() ? "step " + what : " (" + what + ")";
  } else if (line) {
    text += ": exit code " + std::to_string(line->exit_code);
  }
  // Which node and rank of a multi-task step failed first, as srun reported it.
  if (std::optional<SrunTaskExit> task = ParseSrunTaskExit(e.task_exit_line)) {
    text += (text.empty() ? "" : "; ") + task->tasks + " on node " + task->node +
            " exited with exit code " + std::to_string(task->exit_code);
  }
  return text;
}

}  // namespace trtllm_run
