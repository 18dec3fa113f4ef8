// Running a batch script in a held allocation (slurm_alloc.cc): the runners that start it
// on this host or on a login node and let the supervision loop stop it, and the cleanup of
// the steps it left.
#ifndef TRTLLM_RUN_SLURM_ALLOC_HELD_RUNNER_H_
#define TRTLLM_RUN_SLURM_ALLOC_HELD_RUNNER_H_

#include <signal.h>

#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/slurm/client.h"
#include "trtllm_run/sdk/supervise/progress.h"
#include "trtllm_run/sdk/supervise/supervisor.h"
#include "trtllm_run/status.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace internal {

// Runs the batch script on the submit host with SLURM_JOB_ID set to the allocation, so
// that its srun lines become steps of it, and moves its output into the local log. The
// supervision loop (supervisor.h) drives it: SIGTERM to its process group (srun ends its
// step on SIGTERM), SIGKILL after the grace.
class HeldRunner : public SupervisedJob {
 public:
  HeldRunner(std::string allocation_id, ProgressReporter* progress)
      : allocation_id_(std::move(allocation_id)), progress_(progress) {}
  virtual Status Start(const std::string& job_name) = 0;
  virtual void Signal(int signal) = 0;  // its whole process group
  virtual bool GroupAlive() = 0;
  virtual RunState State(RunState state) const = 0;
  virtual const std::vector<std::string>& PumpErrors() const = 0;

  AfterExit CheckAfterExit(double /*seconds_since_exit*/) override {
    return Gone() ? AfterExit::kDone : AfterExit::kWait;
  }
  bool Gone() override {
    if (!group_gone_) group_gone_ = !GroupAlive();
    return group_gone_;
  }
  void BeginStop(StopReason reason, const std::string& /*why*/) override {
    Signal(SIGTERM);
    progress_->Message(std::string("stopping the run (") +
                       (reason == StopReason::kHang      ? "hang detected"
                        : reason == StopReason::kTimeout ? "monitor timeout"
                        : reason == StopReason::kSilence ? "no output for the silence timeout"
                                                         : "cancelled") +
                       ")");
  }
  bool Escalate() override {
    Signal(SIGKILL);
    return true;
  }
  bool GiveUp() override { return true; }  // reported: the action is not confirmed
  std::string Label() const override { return "held allocation " + allocation_id_; }
  bool group_gone() const { return group_gone_; }
  // Set before Start(): what the script gets besides SLURM_JOB_ID, as the batch step of a
  // job of the allocation's shape would (SLURM_NTASKS, ...), so that its srun lines
  // without sizing options run as many tasks as they would in a batch job.
  void set_job_env(std::vector<EnvVar> env) { job_env_ = std::move(env); }

 protected:
  std::string allocation_id_;
  std::vector<EnvVar> job_env_;
  ProgressReporter* progress_;
  bool group_gone_ = false;
};

// The runner of `script` (run in `dir`, as `scenario` sees both) for the allocation.
// On this host (`scenario` not remote): a ChildProcess in its own process group, marked
// with `work_dir` for `trtllm-run cancel`, its output written to `local_log` (which is
// `run_log`). On a login node (Scenario::IsRemote): the script runs detached there, its
// output goes to `run_log` on that host and is copied to `local_log` as it grows.
std::unique_ptr<HeldRunner> MakeHeldRunner(std::string allocation_id, ProgressReporter* progress,
                                           Scenario& scenario, std::string script, std::string dir,
                                           std::string run_log, const std::string& local_log,
                                           std::string work_dir, std::ostream* terminal);

// Cancels the steps of the allocation that outlived the script (srun killed before it
// could end its step), so that nothing of this run is left. False when some could not be.
bool CancelLeftoverSteps(SlurmClient* client, const std::string& allocation_id);

}  // namespace internal
}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SLURM_ALLOC_HELD_RUNNER_H_
