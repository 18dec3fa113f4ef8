// Container mounts (spec 001/002 Step 2): home, project, the models mount chosen by four
// rules in order, and (custom only) the custom script's directory.
#ifndef TRTLLM_RUN_PLACEMENT_MOUNTS_H_
#define TRTLLM_RUN_PLACEMENT_MOUNTS_H_

#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/status.h"

namespace trtllm_run {

struct MountInputs {
  std::string home;             // mounted to itself; empty: not mounted (a note says why)
  std::string project;          // repo root (local) or remote_repo_path (remote); mounted to itself
  std::string llm_models_root;  // container side of the models mount
  std::optional<std::string> checkpoint_path;              // rule 1: its parent directory
  std::optional<std::string> models_path;                  // rule 2
  std::optional<std::vector<std::string>> cluster_mounts;  // rule 3: slurm_env.mounts, verbatim
  std::string default_models_repo;                         // rule 4: env check / catalog
  std::string extra_dir;  // custom_script's directory: added unless already covered
};

struct MountResolution {
  std::vector<std::string> entries;  // "host:container", in order, without duplicates
  std::string models_host_path;      // host side of the models mount ("" under rule 3)
  std::vector<std::string> notes;    // which rule applied, and why entries were skipped
  std::string Joined() const;        // comma-separated, for --container-mounts
};

// Assembles <home>:<home>,<project>:<project>,<models mount(s)>[,<extra>:<extra>]. The
// models host path comes from the first rule that applies: checkpoint_path's parent,
// models_path, the cluster's mounts (all entries, no separate models entry), the
// default models repo. kInvalidInput when no rule applies, or a rule needs
// llm_models_root and it is empty; the message names the inputs that would supply it.
Result<MountResolution> ResolveMounts(const MountInputs& inputs);

// True when `dir` is the host side of an entry in `entries`, or below one.
bool MountsCover(const std::vector<std::string>& entries, const std::string& dir);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_PLACEMENT_MOUNTS_H_
