// The Failure Diagnosis table of spec 000, as code: from a verdict and the evidence (exit
// code, workflow, log head and tail, the scheduler's .err file, errors raised on the way)
// to what the failure likely means and what to do. Used for every executor.
#ifndef TRTLLM_RUN_SUPERVISE_DIAGNOSIS_H_
#define TRTLLM_RUN_SUPERVISE_DIAGNOSIS_H_

#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/result.h"
#include "trtllm_run/sdk/job_spec.h"

namespace trtllm_run {

// What kind of target ran the job, for advice worded for it. kUnknown: the wording of
// spec 000's table (a batch job's).
enum class DiagnosisTarget { kUnknown, kHost, kContainer, kBatch };

struct DiagnosisInput {
  RunStatus status = RunStatus::kError;
  DiagnosisTarget target = DiagnosisTarget::kUnknown;
  std::optional<int> exit_code;
  std::string workflow_type;  // the job's; the pytest findings read the log instead
  std::string scenario;
  bool remote = false;                 // the job ran over SSH (a remote executor's job spec)
  std::string log_file;                // named in advice; may be empty
  bool log_empty = false;              // the log exists with 0 bytes, or does not exist
  std::vector<std::string> log_head;   // the first lines of the log (spec: first 50)
  std::vector<std::string> log_tail;   // the last lines
  std::string err_file;                // the scheduler's stderr file (Slurm .err), if any
  std::vector<std::string> err_lines;  // its first lines
  std::vector<std::string> errors;     // RunResult::errors and reason: ssh, srun, docker
  std::string reason;
  int monitor_timeout_seconds = 0;
  // HANG_DETECTED by the silence timeout (details["silence_timeout_seconds"]); 0: not so.
  int silence_timeout_seconds = 0;
  std::string time_limit;      // Slurm walltime, when one applied
  std::string job_id;          // Slurm job id, for the sacct hint
  bool container_oom = false;  // the container runtime reported an OOM kill
  std::string memory_limit;    // the container's memory limit, when one was set
  // Slurm: the job was cancelled while still pending for this reason (it never started);
  // details["pending_reason"] of the result.
  std::string pending_reason;
};

// The diagnosis text: one finding per line, most specific first; "" for PASSED or when no
// rule of the table applies. Pure: reads no files.
std::string DiagnoseFailure(const DiagnosisInput& input);

// Failing pytest tests in `lines` as pytest_log::ParseLog reads them ("FAILED path::test -
// message" summary lines, "path::test FAILED" verbose lines), each "<id>" or "<id> -
// <message>", in order, without duplicates.
std::vector<std::string> FailedPytestTests(const std::vector<std::string>& lines);

// Fills a DiagnosisInput from `result` and the files of `spec`'s work dir (the log's
// first 50 lines, the tail, *.err files next to the log), then sets result->diagnosis
// when a rule applies; otherwise the executor's diagnosis is kept. PASSED results are left
// unchanged. Reads at most a few hundred KiB, whatever the log size.
void Diagnose(RunResult* result, const JobSpec& spec);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SUPERVISE_DIAGNOSIS_H_
