// SlurmWatcher (slurm_watch.h): the end of a job: when its verdict can be given, the
// accounting records it needs, its evidence and its verdict.
#include <sys/stat.h>

#include <algorithm>

#include "slurm/watch/slurm_watch_job.h"
#include "trtllm_run/sdk/slurm/verdict.h"
#include "trtllm_run/sdk/slurm/watch.h"

namespace trtllm_run {

using internal::Clock;
using internal::Dur;
using internal::kErrHeadBytes;
using internal::kHeadBytes;
using internal::kHeadLines;
using internal::kMaxAccountingTries;
using internal::ReadRange;
using internal::Seconds;
using internal::SplitLines;
using internal::UserName;

std::vector<SlurmWatcher::Job*> SlurmWatcher::ReadyJobs(Clock::time_point now) {
  double confirm_limit =
      config_.kill_wait_seconds.value_or(30) + options_.kill_grace_seconds + 30.0;
  bool lost_contact =
      failing_since_ && Seconds(now - *failing_since_) > options_.lost_contact_limit;
  std::vector<Job*> ready;
  for (auto& job : jobs_) {
    if (job->done) continue;
    bool is_ready = false;
    if (job->action != SlurmAction::kNone) {
      if (job->cancel_sent && (job->terminal || job->purged)) {
        is_ready = true;
      } else if (job->cancel_sent && Seconds(now - *job->cancel_sent) > confirm_limit) {
        job->cancel_problem = "still " +
                              (job->record ? job->record->state : std::string("queued")) + " " +
                              std::to_string(static_cast<int>(confirm_limit)) + "s after scancel";
        is_ready = true;
      } else if (!job->cancel_sent && job->cancel_first_try &&
                 Seconds(now - *job->cancel_first_try) > confirm_limit) {
        is_ready = true;  // scancel kept failing: cancel_problem says why
      }
    } else {
      // An end line is evidence, not the end: the controller decides.
      is_ready = job->terminal || job->purged;
    }
    if (!is_ready && lost_contact) {
      // The job's own end line still tells how it ended (its exit code); without one the
      // verdict is unknown.
      if (job->end_line && job->action == SlurmAction::kNone) {
        job->judged_unconfirmed = true;
        job->acct_done = true;  // the scheduler does not answer: accounting is not asked
      } else {
        job->lost = true;
      }
      is_ready = true;
    }
    if (is_ready) ready.push_back(job.get());
  }
  return ready;
}

void SlurmWatcher::QueryAccountingFor(const std::vector<Job*>& ready, Clock::time_point now) {
  // Accounting for the jobs whose records say more than the controller: everything but a
  // plain COMPLETED, and jobs the controller forgot.
  std::vector<Job*> need_acct;
  for (Job* job : ready) {
    if (job->acct_done) continue;
    bool completed = job->terminal && job->record && job->record->state == "COMPLETED";
    bool unconfirmed_clean = job->end_clean && !job->terminal && !job->purged;
    if (accounting_ == false || job->action != SlurmAction::kNone || completed ||
        unconfirmed_clean || job->lost) {
      job->acct_done = true;
      continue;
    }
    if (job->next_acct && now < *job->next_acct) continue;
    need_acct.push_back(job);
  }
  if (!need_acct.empty()) {
    std::vector<std::string> ids;
    for (Job* job : need_acct) ids.push_back(job->spec.job_id);
    Result<SlurmClient::Accounting> accounting = client_->QueryAccounting(ids);
    for (Job* job : need_acct) {
      ++job->acct_tries;
      if (!accounting.ok()) {
        job->acct_error = accounting.status().message();
      } else if (accounting->disabled) {
        accounting_ = false;
        job->acct_done = true;
        continue;
      } else {
        accounting_ = true;
        job->acct.clear();
        bool final_row = false;
        for (const SlurmAcctRecord& record : accounting->records) {
          std::string base = record.id.substr(0, record.id.find('.'));
          if (base != job->spec.job_id) continue;
          job->acct.push_back(record);
          if (record.step.empty() && IsTerminalSlurmState(record.state)) final_row = true;
        }
        job->acct_error.clear();
        if (final_row) {
          job->acct_done = true;
          continue;
        }
        // slurmdbd receives the end of a job asynchronously: ask again shortly.
        job->acct_error = job->acct.empty() ? "no record yet" : "no final record yet";
      }
      if (job->acct_tries >= kMaxAccountingTries) {
        job->acct_done = true;
      } else {
        job->next_acct = now + Dur(std::min(4.0, 0.5 * (1 << job->acct_tries)));
      }
    }
  }
}

// The evidence of a finished job; *out_bytes: the size of its output file.
SlurmJobEvidence SlurmWatcher::EvidenceOf(const Job& job, std::uint64_t* out_bytes) const {
  SlurmJobEvidence e;
  e.job_id = job.spec.job_id;
  e.workflow_type = job.spec.workflow_type;
  e.scenario = job.spec.scenario;
  e.log_file = job.spec.local_out;
  e.err_file = job.err ? job.spec.local_err : "";
  e.monitor_timeout_seconds = job.spec.monitor_timeout_seconds;
  e.max_pending_seconds = job.spec.max_pending_seconds;
  e.silence_timeout_seconds = job.spec.silence_timeout_seconds;
  e.time_limit = job.spec.time_limit;
  e.action = job.action;
  e.cancel_signal = job.cancel_signal;
  e.action_detail = job.action_detail;
  e.action_confirmed = job.cancel_sent && (job.terminal || job.purged);
  e.action_problem = job.cancel_problem;
  e.controller = job.record;
  e.controller_final = job.terminal;
  e.purged = job.purged;
  if (accounting_ == false) {
    e.accounting_available = false;  // disabled on the cluster
  } else if (!job.acct.empty()) {
    e.accounting_available = true;
  } else if (job.acct_tries > 0 && !job.acct_error.empty() && job.acct_error != "no record yet") {
    e.accounting_error = job.acct_error;  // sacct kept failing
  } else {
    e.accounting_available = accounting_ == true || job.acct_tries > 0;
  }
  e.accounting = job.acct;
  e.accounting_queried = job.acct_tries > 0;
  if (job.judged_unconfirmed && accounting_ != false) {
    e.accounting_error = "not asked: the scheduler does not answer";
  }
  JobOutputScan scan;
  scan.out = &job.out->scanner();
  scan.err = job.err ? &job.err->scanner() : nullptr;
  scan.failure_count = job.spec.failure_patterns.size();
  scan.success_count = job.spec.success_patterns.size();
  scan.end_token = job.spec.end_marker_token;
  struct stat st;
  scan.out_exists = ::stat(job.spec.local_out.c_str(), &st) == 0;
  scan.out_bytes = scan.out_exists ? static_cast<std::uint64_t>(st.st_size) : 0;
  scan.out_head = SplitLines(ReadRange(job.spec.local_out, 0, kHeadBytes), kHeadLines);
  scan.out_tail = job.out->Tail();
  if (job.err) scan.err_head = SplitLines(ReadRange(job.spec.local_err, 0, kErrHeadBytes), 200);
  AddOutputEvidence(scan, &e);
  for (const SlurmAcctRecord& record : job.acct) {
    if (record.step.empty() && !record.cancelled_by.empty() && !client_->remote()) {
      e.cancelled_by_name = UserName(record.cancelled_by);
    }
  }
  *out_bytes = scan.out_bytes;
  return e;
}

RunResult SlurmWatcher::VerdictOf(const Job& job, const SlurmJobEvidence& e,
                                  Clock::time_point now) const {
  RunResult result;
  if (job.lost) {
    result.status = RunStatus::kError;
    result.reason = "lost contact with the scheduler for " +
                    std::to_string(static_cast<int>(Seconds(now - *failing_since_))) +
                    "s (last error: " + last_failure_ + "); job " + job.spec.job_id +
                    " may still be " + (job.record ? job.record->state : "queued");
    result.errors.push_back(result.reason);
    result.diagnosis = "The verdict is unknown. Check `squeue -j " + job.spec.job_id +
                       "`, and `trtllm-run cancel WORK_DIR` to stop it.";
    result.details["job_id"] = job.spec.job_id;
    result.log_file = job.spec.local_out;
    result.log_tail = job.out->Tail();
  } else {
    result = JudgeSlurmJob(e);
    if (job.judged_unconfirmed) {
      result.notes.push_back("lost contact with the scheduler for " +
                             std::to_string(static_cast<int>(Seconds(now - *failing_since_))) +
                             "s (last error: " + last_failure_ +
                             "); the verdict rests on the job's end line, unconfirmed by Slurm");
    }
  }
  return result;
}

std::vector<SlurmVerdict> SlurmWatcher::Finalize(Clock::time_point now) {
  std::vector<SlurmVerdict> verdicts;
  std::vector<Job*> ready = ReadyJobs(now);
  if (ready.empty()) return verdicts;
  QueryAccountingFor(ready, now);
  bool any_final = std::any_of(ready.begin(), ready.end(), [](Job* job) { return job->acct_done; });
  if (!any_final) return verdicts;
  ReadOutputs(true);  // the last bytes the job wrote
  for (Job* job : ready) {
    if (!job->acct_done) continue;
    std::uint64_t out_bytes = 0;
    SlurmJobEvidence evidence = EvidenceOf(*job, &out_bytes);
    RunResult result = VerdictOf(*job, evidence, now);
    result.log_bytes_read = job->out->bytes_read() + (job->err ? job->err->bytes_read() : 0);
    result.log_bytes_written = out_bytes;
    job->done = true;
    job->done_at = now;
    verdicts.push_back({job->spec.job_id, std::move(result)});
  }
  return verdicts;
}

}  // namespace trtllm_run
