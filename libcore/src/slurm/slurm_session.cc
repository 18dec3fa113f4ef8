// The local_slurm session (slurm_run.h NewLocalSlurmSession): many jobs submitted from
// their own threads, followed by one SlurmWatcher on one thread of the session.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/plugin_call.h"
#include "slurm/slurm_internal.h"
#include "slurm/slurm_run.h"
#include "slurm/slurm_session.h"
#include "slurm/slurm_watch.h"

namespace trtllm_run {
namespace {

using Clock = std::chrono::steady_clock;

class LocalSlurmSession : public ExecutorSession {
 public:
  LocalSlurmSession(const SessionOptions& options, const std::string& executor)
      : cancel_(options.cancel ? options.cancel : &own_cancel_),
        scenario_(MakeLocalScenario()),
        client_(scenario_.get()),
        watcher_(&client_, WatchOptionsFor(options, executor)),
        thread_([this] { Loop(); }) {}

  ~LocalSlurmSession() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  RunResult Execute(const JobSpec& spec, const ExecContext& context) override {
    if (spec.persistent_mode) return RunLocalSlurmJob(spec, context);
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

    std::future<RunResult> verdict = Watch(submitted.job);
    RunResult judged = verdict.get();
    SlurmClientStats stats;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stats = stats_;
    }
    RunResult result =
        internal::FinishJob(submitted, judged, stats, /*remote=*/false, spec, request);
    result.details["shared_watcher"] = "true";
    result.duration_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return result;
  }

  std::map<std::string, std::string> Stats() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return {{"watchers", "1"},
            {"jobs", std::to_string(jobs_)},
            {"submits", std::to_string(submits_.load())},
            {"controller_queries", std::to_string(stats_.controller_queries)},
            {"accounting_queries", std::to_string(stats_.accounting_queries)},
            {"config_queries", std::to_string(stats_.config_queries)},
            {"cancels", std::to_string(stats_.cancels)}};
  }

 private:
  struct Pending {
    SlurmWatchJob job;
    std::promise<RunResult> promise;
  };

  static SlurmWatchOptions WatchOptionsFor(const SessionOptions& options,
                                           const std::string& executor) {
    JobSpec spec;
    spec.scenario = executor;
    ExecContext context;
    context.progress = options.progress;
    context.kill_grace_seconds = options.kill_grace_seconds;
    SlurmWatchOptions watch = internal::WatchOptions(spec, context, /*remote=*/false);
    watch.terminal = nullptr;
    return watch;
  }

  std::future<RunResult> Watch(const SlurmWatchJob& job) {
    Pending pending;
    pending.job = job;
    std::future<RunResult> future = pending.promise.get_future();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!failure_.empty()) {
        pending.promise.set_value(ErrorRunResult(Status::ExecutionError(
            failure_, "check `squeue -j " + job.job_id + "`: the job may still be running")));
        return future;
      }
      pending_.push_back(std::move(pending));
      ++jobs_;
    }
    cv_.notify_all();
    return future;
  }

  // The watcher's thread entry: what Follow() throws ends every job it follows, and every
  // job submitted later, as ERROR naming the exception (best effort: the jobs are
  // cancelled), instead of ending the process.
  void Loop() {
    std::map<std::string, std::promise<RunResult>> waiting;
    try {
      Follow(&waiting);
    } catch (...) {
      const std::string failure = "the Slurm session's watcher failed: " + CurrentExceptionText();
      std::vector<Pending> added;
      {
        std::lock_guard<std::mutex> lock(mu_);
        failure_ = failure;
        added = std::move(pending_);
        pending_.clear();
      }
      for (Pending& item : added) waiting.emplace(item.job.job_id, std::move(item.promise));
      std::vector<std::string> ids;
      for (const auto& [job_id, promise] : waiting) ids.push_back(job_id);
      try {
        if (!ids.empty()) client_.Cancel(ids).IgnoreError();
      } catch (...) {  // the failure above is what the jobs report
      }
      for (auto& [job_id, promise] : waiting) {
        promise.set_value(ErrorRunResult(Status::ExecutionError(
            failure, "check `squeue -j " + job_id + "`: the job may still be running")));
      }
    }
  }

  // Follows every job handed to Watch() until stop_ and none is left. The only code that
  // touches watcher_ and client_ (besides Loop()'s cleanup).
  void Follow(std::map<std::string, std::promise<RunResult>>* waiting_jobs) {
    std::map<std::string, std::promise<RunResult>>& waiting = *waiting_jobs;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      std::vector<Pending> added = std::move(pending_);
      pending_.clear();
      if (added.empty() && waiting.empty()) {
        if (stop_) break;
        cv_.wait(lock, [this] { return stop_ || !pending_.empty(); });
        continue;
      }
      lock.unlock();
      for (Pending& item : added) {
        watcher_.Add(item.job);
        waiting.emplace(item.job.job_id, std::move(item.promise));
      }
      // Jobs submitted after the cancellation was handled are cancelled too.
      if (!added.empty() && cancel_->cancelled()) {
        watcher_.CancelAll(cancel_->signal(), "request");
      }
      std::vector<SlurmVerdict> verdicts = watcher_.Poll(cancel_, 0.25);
      lock.lock();
      stats_ = client_.stats();
      lock.unlock();
      for (SlurmVerdict& verdict : verdicts) {
        auto it = waiting.find(verdict.job_id);
        if (it == waiting.end()) continue;
        it->second.set_value(std::move(verdict.result));
        waiting.erase(it);
      }
      lock.lock();
    }
  }

  CancellationToken own_cancel_;
  CancellationToken* cancel_;
  std::unique_ptr<Scenario> scenario_;
  SlurmClient client_;
  SlurmWatcher watcher_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Pending> pending_;  // guarded by mu_
  bool stop_ = false;             // guarded by mu_
  std::string failure_;           // guarded by mu_: why Follow() ended, once it threw
  int jobs_ = 0;                  // guarded by mu_
  SlurmClientStats stats_;        // guarded by mu_: client_'s, after each round
  std::atomic<int> submits_{0};
  std::thread thread_;  // last: starts once everything above is built
};

}  // namespace

std::unique_ptr<ExecutorSession> NewLocalSlurmSession(const SessionOptions& options,
                                                      const std::string& executor) {
  return std::make_unique<LocalSlurmSession>(options, executor);
}

}  // namespace trtllm_run
