// The held-allocation runners and the cleanup of leftover steps (held_runner.h).
#include "slurm/alloc/held_runner.h"

#include <signal.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/supervise/output_pump.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace internal {

namespace {

// This host: a ChildProcess in its own process group.
class LocalRunner : public HeldRunner {
 public:
  LocalRunner(std::string allocation_id, ProgressReporter* progress, std::string script,
              std::string dir, const std::string& log, std::string work_dir, std::ostream* terminal)
      : HeldRunner(std::move(allocation_id), progress),
        script_(std::move(script)),
        dir_(std::move(dir)),
        work_dir_(std::move(work_dir)),
        pump_(log, terminal) {
    pump_.set_before_terminal_write([progress] { progress->Clear(); });
  }
  Status Start(const std::string& job_name) override {
    TRTLLM_RUN_RETURN_IF_ERROR(pump_.Open());
    ProcessOptions options;
    options.argv = {"bash", script_};
    options.working_dir = dir_;
    options.env = {{"SLURM_JOB_ID", allocation_id_},
                   {"SLURM_JOBID", allocation_id_},
                   {"SLURM_JOB_NAME", job_name},
                   WorkDirMarker(work_dir_)};  // what `trtllm-run cancel` checks
    options.env.insert(options.env.end(), job_env_.begin(), job_env_.end());
    Result<std::unique_ptr<ChildProcess>> spawned = ChildProcess::Spawn(options);
    if (!spawned.ok()) return spawned.status();
    child_ = std::move(spawned.value());
    return Status::Ok();
  }
  int OutputFd() const override { return child_->output_fd(); }
  int ExitFd() const override { return child_->exit_fd(); }
  void PumpOutput() override { pump_.Drain(child_.get()); }
  std::optional<ProcessExit> PollExit() override {
    if (!exit_) exit_ = child_->TryWait();
    if (exit_ && child_->output_fd() >= 0 && !child_->GroupAlive()) child_->CloseOutput();
    return exit_;
  }
  void Signal(int signal) override { child_->SignalGroup(signal); }
  bool GroupAlive() override { return child_->GroupAlive(); }
  RunState State(RunState state) const override {
    state.pid = child_->pid();
    state.pgid = child_->pgid();
    state.pid_start_time = ProcessStartTime(child_->pid());
    return state;
  }
  const std::vector<std::string>& PumpErrors() const override { return pump_.errors(); }

 private:
  std::string script_, dir_, work_dir_;
  OutputPump pump_;
  std::unique_ptr<ChildProcess> child_;
  std::optional<ProcessExit> exit_;
};

// A login node over SSH: the script runs detached (setsid, its own session) so that a
// dropped connection does not end it; its output file is copied like a job's. Nothing
// signals its end here: the supervisor polls.
class RemoteRunner : public HeldRunner {
 public:
  RemoteRunner(std::string allocation_id, ProgressReporter* progress, Scenario* scenario,
               std::string script, std::string dir, std::string remote_log,
               const std::string& local_log, std::ostream* terminal)
      : HeldRunner(std::move(allocation_id), progress),
        scenario_(scenario),
        client_(scenario),
        script_(std::move(script)),
        dir_(std::move(dir)),
        remote_log_(std::move(remote_log)),
        pump_(local_log, terminal) {
    pump_.set_before_terminal_write([progress] { progress->Clear(); });
  }
  Status Start(const std::string& job_name) override {
    static const char kLaunch[] =
        "cd -- \"$1\" || exit 1\n"
        "export SLURM_JOB_ID=$2 SLURM_JOBID=$2 SLURM_JOB_NAME=$3\n"
        "rm -f -- \"$5.exit\"\n"
        "setsid bash -c 'bash \"$0\" >\"$1\" 2>&1; echo $? >\"$1.exit\"' \"$4\" \"$5\" "
        "</dev/null >/dev/null 2>&1 &\n"
        "echo $!\n";
    TRTLLM_RUN_RETURN_IF_ERROR(pump_.Open());
    std::vector<std::string> argv = {"env"};
    for (const EnvVar& var : job_env_) argv.push_back(var.name + "=" + var.value);
    argv.insert(argv.end(), {"bash", "-c", kLaunch, "trtllm-run-held", dir_, allocation_id_,
                             job_name, script_, remote_log_});
    Result<CommandOutput> out = scenario_->Run(argv, "");
    if (!out.ok()) return out.status();
    pid_ = std::atoi(out->stdout_text.c_str());
    if (out->exit_code != 0 || pid_ <= 0) {
      return Status::ExecutionError("cannot start " + script_ +
                                    " on the login node: " + out->stderr_text);
    }
    return Status::Ok();
  }
  int OutputFd() const override { return -1; }
  void PumpOutput() override {
    std::vector<SlurmClient::FileChunk> chunks = {{remote_log_, offset_, -1, ""},
                                                  {remote_log_ + ".exit", 0, -1, ""}};
    if (!client_.FetchFiles(&chunks).ok()) return;  // retried on the next round
    if (chunks[0].size >= 0 && !chunks[0].bytes.empty()) {
      pump_.Write(chunks[0].bytes);
      offset_ += chunks[0].bytes.size();
    }
    if (chunks[1].size > 0 && !exit_) {
      std::string code = chunks[1].bytes;
      if (!code.empty() && code.back() == '\n') {
        exit_ = ProcessExit{std::atoi(code.c_str()), std::nullopt};
      }
    }
  }
  std::optional<ProcessExit> PollExit() override { return exit_; }
  void Signal(int signal) override {
    scenario_->Run({"kill", "-" + std::to_string(signal), "--", "-" + std::to_string(pid_)}, "")
        .IgnoreError();
  }
  bool GroupAlive() override {
    Result<CommandOutput> out =
        scenario_->Run({"kill", "-0", "--", "-" + std::to_string(pid_)}, "");
    return !out.ok() || out->exit_code == 0;  // unknown counts as alive
  }
  RunState State(RunState state) const override {
    state.extra["remote_pgid"] = std::to_string(pid_);
    state.extra["remote_log_file"] = remote_log_;
    return state;
  }
  const std::vector<std::string>& PumpErrors() const override { return pump_.errors(); }

 private:
  Scenario* scenario_;
  SlurmClient client_;
  std::string script_, dir_, remote_log_;
  OutputPump pump_;
  int pid_ = 0;
  std::uint64_t offset_ = 0;
  std::optional<ProcessExit> exit_;
};

}  // namespace

std::unique_ptr<HeldRunner> MakeHeldRunner(std::string allocation_id, ProgressReporter* progress,
                                           Scenario& scenario, std::string script, std::string dir,
                                           std::string run_log, const std::string& local_log,
                                           std::string work_dir, std::ostream* terminal) {
  // The process group is signalled and waited for here only when it runs here.
  if (!scenario.IsRemote()) {
    return std::make_unique<LocalRunner>(std::move(allocation_id), progress, std::move(script),
                                         std::move(dir), local_log, std::move(work_dir), terminal);
  }
  return std::make_unique<RemoteRunner>(std::move(allocation_id), progress, &scenario,
                                        std::move(script), std::move(dir), std::move(run_log),
                                        local_log, terminal);
}

// Cancels the steps of the allocation that outlived the script (srun killed before it
// could end its step), so that nothing of this run is left. False when some could not be.
bool CancelLeftoverSteps(SlurmClient* client, const std::string& allocation_id) {
  Result<CommandOutput> steps =
      client->Run({"squeue", "-h", "-s", "-j", allocation_id, "-o", "%i"});
  if (!steps.ok() || steps->exit_code != 0) return true;
  std::vector<std::string> ids;
  std::size_t pos = 0;
  const std::string& out = steps->stdout_text;
  while (pos < out.size()) {
    std::size_t nl = out.find('\n', pos);
    if (nl == std::string::npos) nl = out.size();
    std::string id = out.substr(pos, nl - pos);
    while (!id.empty() && id.back() == ' ') id.pop_back();
    if (!id.empty() && id.find(".extern") == std::string::npos) ids.push_back(id);
    pos = nl + 1;
  }
  return ids.empty() || client->Cancel(ids).ok();
}

}  // namespace internal
}  // namespace trtllm_run
