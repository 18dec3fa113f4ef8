// What a handle tells, read from disk only: the server keeps no state of its own, so a
// restarted server (or `trtllm-run status`) sees exactly what the last one saw.
//
// A handle is a directory:
//   - a case work dir (job_spec.json; result.json and run_state.json once it ran), with
//     mcp_exec.json + supervisor.log when run_case started its `trtllm-run exec`;
//   - a run_cases dir (mcp_cases.json, supervisor.log, and run/result.json, the combined
//     result, at the end), or a `run --cases` dir whose result.json has kind "cases";
//   - a run_stage dir (mcp_stage.json, supervisor.log, and run/, the `trtllm-run stage`
//     run dir: shards/ and rerun_<n>/ as they start, result.json at the end).
#ifndef TRTLLM_RUN_APPS_MCP_CASE_STATE_H_
#define TRTLLM_RUN_APPS_MCP_CASE_STATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "json.h"
#include "trtllm_run/registry.h"
#include "trtllm_run/status.h"

namespace trtllm_run::mcp {

// Files the server writes into a handle.
inline constexpr char kExecRecordFile[] = "mcp_exec.json";
inline constexpr char kCasesRecordFile[] = "mcp_cases.json";
inline constexpr char kStageRecordFile[] = "mcp_stage.json";
inline constexpr char kSupervisorLogFile[] = "supervisor.log";
// The HTML report (docs/report.md) the supervisor writes at the verdict: run_case,
// run_cases and run_stage start theirs with `--html <handle>/report.html`.
inline constexpr char kReportFile[] = "report.html";

// The supervisor the server started for a handle (`trtllm-run exec` or `run --cases`).
struct SpawnRecord {
  int pid = 0;
  std::uint64_t start_time = 0;  // /proc/<pid>/stat field 22: identifies the process
  std::string started_at;        // ISO 8601 UTC
  std::vector<std::string> argv;
  std::string cases_file;  // run_cases only
  std::string run_dir;     // run_cases only: where the combined result.json goes
};

Status WriteSpawnRecord(const std::string& path, const SpawnRecord& record);
Result<SpawnRecord> ReadSpawnRecord(const std::string& path);

// True when the record's process is alive and proven to be the supervisor the server
// started for `handle`: pid > 1, its start time as recorded, its command line exactly the
// recorded argv, which names the handle. A record written by anyone else cannot make the
// server signal another process.
bool SupervisorProven(const SpawnRecord& record, const std::string& handle);

// An absolute, normalized handle without a trailing '/', or kInvalidInput/kNotFound
// naming it when it is no directory trtllm-run made.
Result<std::string> CheckHandle(const std::string& handle);

// One case of a run_cases handle.
struct CaseItem {
  std::string name, status, handle, job_id;
};

struct CaseState {
  std::string handle;
  std::string kind = "case";  // "case" | "cases" | "stage"
  // A verdict (PASSED, FAILED, TIMEOUT, HANG_DETECTED, CANCELLED, OUT_OF_MEMORY, ERROR,
  // SKIPPED) or: running, starting (the supervisor is starting it), not_started
  // (planned only), abandoned (its supervisor ended without a verdict).
  std::string status;
  bool finished = false;
  std::optional<int> exit_code;  // the CLI's exit code for the verdict
  std::string reason, diagnosis, scenario, workflow, model_name;
  std::string job_id, slurm_state, slurm_reason;
  std::optional<double> elapsed_s;  // since the run started (its duration once finished)
  double waited_s = 0;              // how long this call waited
  std::string log_file;
  std::string recorded_dir;  // job_spec.json's work_dir (another one for a copied dir)
  std::uint64_t log_bytes = 0;
  std::vector<std::string> last_lines;
  int supervisor_pid = 0;
  bool supervisor_alive = false;
  std::string result_json;      // result.json as written ("" until finished)
  std::vector<CaseItem> cases;  // run_cases: its cases; run_stage: its shard jobs
  std::string next;             // what to do next, for the agent
  // <handle>/report.html once its supervisor wrote it; "" before (and for a work dir run
  // without --html). report_pending: finished, but the supervisor is still writing it.
  std::string report;
  bool report_pending = false;
};

struct StateOptions {
  int log_lines = 10;
  // When set, a case's executor is asked about its running job (ReadWorkDirState,
  // Executor::DescribeJob: e.g. the Slurm controller, on the cluster for remote_slurm).
  const Registry* registry = nullptr;
};

Result<CaseState> ReadCaseState(const std::string& handle, const StateOptions& options);

// The state as the tools' structuredContent object (schemas.cc "case state").
Value CaseStateToJson(const CaseState& state, Allocator& alloc);
// The same as a document of its own, for a tool result's structuredContent.
Document CaseStateDocument(const CaseState& state);

// Two or three lines for people and models: status, reason, what to do next.
std::string CaseStateText(const CaseState& state);

// A piece of the state's log (read as the CLI reads work dir files): `offset` >= 0 from
// the start, < 0 that many bytes before the end; at most `max_bytes`, cut at UTF-8
// character boundaries.
struct LogChunk {
  std::string text;
  std::uint64_t offset = 0, next_offset = 0, size = 0;
};
Result<LogChunk> ReadLogChunk(const CaseState& state, std::int64_t offset, std::size_t max_bytes);

// The repo root as the CLI finds it: `given`, else the nearest directory above the cwd
// that holds .git, else the cwd.
Result<std::string> ResolveRepoRootDir(const std::string& given);

// The most recent handles under <repo_root>/work_dirs (newest first), at most `limit`.
std::vector<CaseState> ListCases(const std::string& repo_root, int limit);

// Seconds since an ISO 8601 UTC time ("2026-01-02T03:04:05Z"); nullopt when unreadable.
std::optional<double> SecondsSince(const std::string& iso_utc);

}  // namespace trtllm_run::mcp

#endif  // TRTLLM_RUN_APPS_MCP_CASE_STATE_H_
