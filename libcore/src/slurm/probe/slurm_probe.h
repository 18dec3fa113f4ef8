// The one-pass Slurm probe (replaces detect_slurm_env.sh; spec-notes "The one-pass
// Slurm probe"). One bash script, sent on stdin to `bash -s` through a Scenario, runs
// every query concurrently on the target (this host, or a login node over one SSH
// round trip) and prints the raw outputs as one delimited stream; C++ parses it into a
// SlurmEnv. The number of Slurm commands does not grow with the partitions, apart from
// the `sbatch --test-only` access checks (which also run concurrently).
#ifndef TRTLLM_RUN_SLURM_PROBE_SLURM_PROBE_H_
#define TRTLLM_RUN_SLURM_PROBE_SLURM_PROBE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/probe/slurm_probe_parsers.h"
#include "trtllm_run/environment.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// The errors[] entry (and only entry) of the document when sacctmgr or sinfo is absent.
extern const char kSlurmToolsNotFound[];

struct ProbeOptions {
  // Restricts the hardware probe (arch, gres) and the access checks to these
  // partitions; empty: every partition. Names that do not exist are an error entry.
  std::vector<std::string> partitions;
  // Run the sbatch --test-only checks. Without them the default partition is the one
  // sinfo marks default (else the first one up), unverified.
  bool check_access = true;
  int command_timeout_seconds = 60;  // per query on the target (`timeout`, when present)
};

// The bash script ProbeSlurm sends. `marker` delimits the sections (any token without
// whitespace that the outputs cannot contain; ProbeSlurm uses a random one).
std::string SlurmProbeScript(const ProbeOptions& options, const std::string& marker);

// Builds the document from the raw outputs: pure, so captured outputs can be replayed.
SlurmEnv SlurmEnvFromProbe(const ProbeOutput& output, const ProbeOptions& options);

// Runs the probe through `scenario` (argv {"bash", "-s"}, the script on stdin). Non-OK
// only when the script could not run or its output is not the probe's stream (for
// SSH: the connection failed); Slurm problems are errors[] entries in the document.
Result<SlurmEnv> ProbeSlurm(Scenario& scenario, const ProbeOptions& options);

// The probe's exit status: 0 no errors, 1 the Slurm client tools are missing, 2 errors.
int SlurmProbeExitStatus(const SlurmEnv& env);

// What the probe learned about the cluster's accounting, for the account rules of a run.
enum class SlurmAccounting {
  kAccounts,       // accounts[] holds the user's associations
  kNoAssociation,  // the accounts were read and the user has none
  kDisabled,       // sacctmgr says the cluster runs no accounting storage (no slurmdbd)
  kUnreadable,     // sacctmgr failed otherwise (slurmdbd down, timeout, ...)
};
SlurmAccounting SlurmAccountingState(const SlurmEnv& env);

// The members of a --partition value: sbatch takes one name or a comma-separated list
// ("batch,debug": the job starts in whichever can run it first). Blanks around names are
// dropped; an empty member stays "" for the caller to refuse.
std::vector<std::string> SplitPartitionList(std::string_view partition);

// The text format: one "key: value" line per field and a partition table.
std::string SlurmEnvToText(const SlurmEnv& env);

// Writes SlurmEnvToJson(env) to `path` atomically.
Status SaveSlurmEnv(const SlurmEnv& env, const std::string& path);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SLURM_PROBE_SLURM_PROBE_H_
