// A work dir's state as the front ends show it (`trtllm-run status`, the MCP server's
// case_status / wait_case / cancel_case): one reader, so the CLI and the MCP server tell
// the same story. Built on InspectWorkDir (workdir.h): it reads the same files the same
// way (regular files inside the work dir, no symlink on the way) and adds what the log
// and the executor say.
#ifndef TRTLLM_RUN_WORKDIR_STATE_H_
#define TRTLLM_RUN_WORKDIR_STATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/registry.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/status.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {

struct WorkDirStateOptions {
  // How many of the log's last non-empty lines to read (0: none).
  int log_lines = 1;
  // When set, the work dir's executor is asked (Executor::DescribeJob) about a run of this
  // host that has not finished. Not owned; null: nobody is asked, only files are read.
  const Registry* registry = nullptr;
};

struct WorkDirState {
  WorkDirInfo info;                     // InspectWorkDir
  std::string job_id;                   // run_state.json's, else result.json's details.job_id
  std::string container_name;           // run_state.json's, else job_spec.json's
  std::string started_at;               // run_state.json's (ISO 8601 UTC); empty before the run
  std::uint64_t log_bytes = 0;          // info.log_file's size; 0 when it cannot be read
  std::vector<std::string> last_lines;  // ReadLastLines of info.log_file
  bool described = false;               // the executor was asked
  JobDescription job;                   // what it said
  // Why the executor could not be asked or could not tell (its JobDescription::problem);
  // empty otherwise.
  std::string describe_problem;
};

// Reads the work dir's state. kNotFound naming `work_dir` when it is no directory;
// kInvalidInput "'<dir>' is not a trtllm-run work dir: ..." when it holds no valid
// job_spec.json. `work_dir` should be absolute and normalized.
TRTLLM_RUN_API Result<WorkDirState> ReadWorkDirState(const std::string& work_dir,
                                                     const WorkDirStateOptions& options);

// Asks the executor that ran `info` (info.spec.scenario) what it knows of the job, when
// the run is of this host and has not finished (Executor::DescribeJob); an executor that
// cannot be created, or that throws, is a JobDescription whose `problem` says so. Empty
// for finished runs and runs of another host.
TRTLLM_RUN_API JobDescription DescribeWorkDirJob(const Registry& registry, const WorkDirInfo& info);

// The last `count` non-empty lines of a file of work dir `dir` (opened as OpenWorkDirFile
// does; `recorded_dir` as there), read from its last 32 KiB: oldest first, each at most
// 400 bytes ("..." marks a cut) and valid UTF-8; a line cut by the 32 KiB window is left
// out. Empty when the file cannot be read.
TRTLLM_RUN_API std::vector<std::string> ReadLastLines(const std::string& dir,
                                                      const std::string& path, int count,
                                                      const std::string& recorded_dir = "");

// The size of a file of work dir `dir` (opened as OpenWorkDirFile does); 0 when it cannot
// be read.
TRTLLM_RUN_API std::uint64_t WorkDirFileSize(const std::string& dir, const std::string& path,
                                             const std::string& recorded_dir = "");

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_WORKDIR_STATE_H_
