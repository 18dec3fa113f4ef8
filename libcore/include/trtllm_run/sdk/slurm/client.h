// SlurmClient: Slurm's client commands (sbatch, scontrol, sacct, scancel, remote file
// copies) run through a Scenario, with a time limit each, their output parsed
// (sdk/slurm/records.h) and counted.
#ifndef TRTLLM_RUN_SDK_SLURM_CLIENT_H_
#define TRTLLM_RUN_SDK_SLURM_CLIENT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/slurm/file_follow_stream.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// Counters of what a client asked, for reports and the benchmark.
struct SlurmClientStats {
  int controller_queries = 0;  // scontrol show job (one RPC each)
  int accounting_queries = 0;  // sacct (slurmdbd)
  int config_queries = 0;      // scontrol show config
  int cancels = 0;             // scancel calls
  int submits = 0;
  int log_fetches = 0;    // remote log copies (no scheduler RPC)
  int stream_starts = 0;  // remote output streams started (one round trip each)
  int failures = 0;       // commands that failed and were retried
};

struct SlurmClientOptions {
  int command_timeout_seconds = 60;  // each scheduler command's deadline (Scenario::Run)
  // A remote scenario's job output streams back (Scenario::Start); false: the watcher
  // copies what the files gained (FetchFiles) instead.
  bool stream_output = true;
};

// Runs Slurm's client commands through `scenario` (not owned; outlives the client).
class TRTLLM_RUN_API SlurmClient {
 public:
  explicit SlurmClient(Scenario* scenario, SlurmClientOptions options = {});

  Scenario* scenario() const { return scenario_; }
  bool remote() const { return scenario_->IsRemote(); }

  // `sbatch --parsable [extra_args] SCRIPT` run in `dir`. Returns the job id.
  // kExecutionError carrying sbatch's message when it refuses the job.
  Result<std::string> Submit(const std::string& script, const std::string& dir,
                             const std::vector<std::string>& extra_args = {});

  struct JobsSnapshot {
    std::vector<SlurmJobRecord> records;
    std::vector<std::string> unknown;  // ids the controller does not know (purged)
  };
  // One controller query for `ids` (non-empty). kExecutionError for a failed query (a
  // transient condition: retry later).
  Result<JobsSnapshot> QueryJobs(const std::vector<std::string>& ids);

  struct Accounting {
    bool disabled = false;  // accounting is not configured on this cluster (permanent)
    std::vector<SlurmAcctRecord> records;
  };
  Result<Accounting> QueryAccounting(const std::vector<std::string>& ids);

  // `scancel IDS`; OK also when the jobs already ended or are unknown.
  Status Cancel(const std::vector<std::string>& ids);

  // The cluster's configuration: its slurm.conf when that is a plain readable file (no
  // RPC), else `scontrol show config` (two RPCs: BUILD_INFO and PING).
  Result<SlurmConfigFacts> Config();

  // Copies what was appended to remote files since `offset` (`tail -c +OFFSET`, one
  // command for all files). size -1: the file does not exist.
  struct FileChunk {
    std::string path;
    std::uint64_t offset = 0;
    long long size = -1;  // the file's size when read
    std::string bytes;    // from `offset`, at most max_bytes
  };
  Status FetchFiles(std::vector<FileChunk>* chunks, std::size_t max_bytes = 4 << 20);

  // Whether StartStream() is used here: on a remote scenario, where the job's files are
  // not readable here (a local watcher reads them itself).
  bool can_stream() const { return remote() && options_.stream_output; }
  // Starts a long-lived command through the scenario (Scenario::Start), its stdout alone
  // streaming back (counted in stats).
  Result<std::unique_ptr<ChildProcess>> StartStream(const std::vector<std::string>& argv);

  // Runs argv through the scenario with command_timeout_seconds as its deadline.
  Result<CommandOutput> Run(const std::vector<std::string>& argv,
                            const std::string& stdin_data = "");

  const SlurmClientStats& stats() const { return stats_; }

 private:
  Scenario* scenario_;
  SlurmClientOptions options_;
  SlurmClientStats stats_;
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_CLIENT_H_
