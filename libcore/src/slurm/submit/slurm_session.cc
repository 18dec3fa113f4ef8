// The local_slurm session (slurm_run.h NewLocalSlurmSession): many jobs submitted from
// their own threads, followed by one SlurmWatcher on one thread of the session.
#include <atomic>
#include <chrono>
#include <map>

#include "slurm/submit/slurm_internal.h"
#include "slurm/watch/shared_watcher.h"
#include "trtllm_run/sdk/slurm/session.h"
#include "trtllm_run/sdk/slurm/submit.h"

namespace trtllm_run {
namespace {

using Clock = std::chrono::steady_clock;

class LocalSlurmSession : public ExecutorSession {
 public:
  LocalSlurmSession(const SessionOptions& options, const std::string& executor)
      : cancel_(options.cancel ? options.cancel : &own_cancel_),
        scenario_(MakeLocalScenario()),
        watcher_(scenario_.get(), WatchOptionsFor(options, executor, *scenario_), cancel_) {}

  RunResult Execute(const JobSpec& spec, const ExecContext& context) override {
    if (spec.persistent_mode) return ExecuteSlurmJob(spec, context);
    RunResult base = internal::BaseResult(spec);
    if (spec.script_path.empty()) {
      return internal::ErrorResult(base, "job_spec.json has no script_path",
                                   "prepare the case with the local_slurm executor");
    }
    auto started = Clock::now();
    std::unique_ptr<Scenario> own;
    Scenario* scenario = context.scenario;
    if (scenario == nullptr || scenario->IsRemote()) {
      own = MakeLocalScenario();
      scenario = own.get();
    }
    // sbatch from this thread (many at once); the shared watcher's client is its own.
    SlurmClient submitter(scenario);
    internal::SubmitRequest request = internal::LocalSubmitRequest(spec);
    request.echo = false;
    internal::SubmitOutcome submitted = internal::SubmitJob(&submitter, spec, context, request);
    submits_ += submitter.stats().submits;
    if (!submitted.submitted) return submitted.result;

    RunResult judged = watcher_.Watch(submitted.job).get();
    RunResult result = internal::FinishJob(submitted, judged, watcher_.stats(), spec, request);
    result.details["shared_watcher"] = "true";
    result.duration_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return result;
  }

  std::map<std::string, std::string> Stats() const override {
    SlurmClientStats stats = watcher_.stats();
    return {{"watchers", "1"},
            {"jobs", std::to_string(watcher_.jobs())},
            {"submits", std::to_string(submits_.load())},
            {"controller_queries", std::to_string(stats.controller_queries)},
            {"accounting_queries", std::to_string(stats.accounting_queries)},
            {"config_queries", std::to_string(stats.config_queries)},
            {"cancels", std::to_string(stats.cancels)}};
  }

 private:
  static SlurmWatchOptions WatchOptionsFor(const SessionOptions& options,
                                           const std::string& executor, const Scenario& scenario) {
    JobSpec spec;
    spec.scenario = executor;
    ExecContext context;
    context.progress = options.progress;
    context.kill_grace_seconds = options.kill_grace_seconds;
    SlurmWatchOptions watch = internal::WatchOptions(spec, context, scenario);
    watch.terminal = nullptr;
    // A bulk run: the controller confirms every job's end, but the confirmations ride on
    // the shared watcher's queries within the bulk query budget.
    watch.confirm_queries_per_job_minute = internal::kBulkConfirmQueriesPerJobMinute;
    return watch;
  }

  CancellationToken own_cancel_;
  CancellationToken* cancel_;
  std::unique_ptr<Scenario> scenario_;
  std::atomic<int> submits_{0};
  SharedSlurmWatcher watcher_;  // last: its thread ends before the scenario goes
};

}  // namespace

std::unique_ptr<ExecutorSession> NewLocalSlurmSession(const SessionOptions& options,
                                                      const std::string& executor) {
  return std::make_unique<LocalSlurmSession>(options, executor);
}

}  // namespace trtllm_run
