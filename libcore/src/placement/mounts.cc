// Container mounts resolution (spec 001/002 Step 2).
#include "placement/mounts.h"

#include <algorithm>
#include <utility>

#include "model/problems.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

std::string StripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

std::string Parent(const std::string& path) {
  std::string trimmed = StripTrailingSlashes(path);
  size_t slash = trimmed.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return trimmed.substr(0, slash);
}

std::string HostSide(const std::string& entry) {
  size_t colon = entry.find(':');
  return StripTrailingSlashes(colon == std::string::npos ? entry : entry.substr(0, colon));
}

void Add(std::vector<std::string>* entries, const std::string& entry) {
  if (std::find(entries->begin(), entries->end(), entry) == entries->end()) {
    entries->push_back(entry);
  }
}

}  // namespace

std::string MountResolution::Joined() const {
  std::string joined;
  for (const std::string& entry : entries) joined += (joined.empty() ? "" : ",") + entry;
  return joined;
}

bool MountsCover(const std::vector<std::string>& entries, const std::string& dir) {
  std::string wanted = StripTrailingSlashes(dir);
  for (const std::string& entry : entries) {
    std::string host = HostSide(entry);
    if (wanted == host) return true;
    if (host == "/" || (wanted.size() > host.size() && wanted.compare(0, host.size(), host) == 0 &&
                        wanted[host.size()] == '/')) {
      return true;
    }
  }
  return false;
}

namespace {

Status MissingModelsRoot(const std::string& mount) {
  return Status::InvalidInput(
      "llm_models_root is not set: " + mount + " needs a target inside the container",
      "give --llm-models-root DIR (e.g. the path your tests read LLM_MODELS_ROOT from), or "
      "set container_models_root for the cluster in clusters.yaml");
}

}  // namespace

Result<MountResolution> ResolveMounts(const MountInputs& in) {
  // pyxis's --container-mounts is a comma-separated list of SRC:DST[:FLAGS] entries.
  for (const auto& [what, dir] :
       {std::pair<std::string, std::string>{"the home directory", in.home},
        {"the project (repo) path", in.project},
        {"checkpoint_path", in.checkpoint_path.value_or("")},
        {"models_path", in.models_path.value_or("")},
        {"the default models repo", in.default_models_repo},
        {"llm_models_root", in.llm_models_root},
        {"custom_script's directory", in.extra_dir}}) {
    if (dir.find_first_of(",:") != std::string::npos) {
      return Status::InvalidInput(what + " '" + EscapeControl(dir) +
                                      "' holds ',' or ':', which split container mounts "
                                      "(SRC:DST entries, comma-separated)",
                                  "use a path without ',' and ':' (a symlink to it works)");
    }
  }
  if (in.cluster_mounts) {
    for (const std::string& entry : *in.cluster_mounts) {
      if (entry.find(',') != std::string::npos ||
          entry.find_first_of("\r\n") != std::string::npos) {
        return Status::InvalidInput(
            "slurm_env mount entry '" + EscapeControl(entry) + "' holds ',' or a line break",
            "each mounts entry of slurm_env.json / clusters.yaml is one "
            "SRC:DST[:FLAGS]");
      }
    }
  }
  MountResolution out;
  if (!in.home.empty()) {
    Add(&out.entries, StripTrailingSlashes(in.home) + ":" + StripTrailingSlashes(in.home));
  } else {
    out.notes.push_back(
        "mounts: no home directory mounted (the remote home is unknown: set "
        "remote_cwd so its parent can be used)");
  }
  if (!in.project.empty()) {
    std::string project = StripTrailingSlashes(in.project);
    Add(&out.entries, project + ":" + project);
  }

  std::string models_host;
  std::string rule;
  if (in.checkpoint_path && !in.checkpoint_path->empty()) {
    models_host = Parent(*in.checkpoint_path);
    rule = "rule 1: the parent of checkpoint_path " + *in.checkpoint_path;
  } else if (in.models_path && !in.models_path->empty()) {
    models_host = StripTrailingSlashes(*in.models_path);
    rule = "rule 2: models_path";
  } else if (in.cluster_mounts && !in.cluster_mounts->empty()) {
    for (const std::string& entry : *in.cluster_mounts) Add(&out.entries, entry);
    out.notes.push_back("mounts: the cluster's mounts from slurm_env.mounts (rule 3), verbatim");
  } else if (!in.default_models_repo.empty()) {
    models_host = StripTrailingSlashes(in.default_models_repo);
    rule = "rule 4: the default models repo";
  } else {
    // Both are missing in one go: the mount needs a source and, once it has one, a target.
    ProblemList problems;
    problems.Add(Status::InvalidInput(
        "cannot resolve the models mount: no checkpoint_path, models_path, cluster mounts "
        "(slurm_env.mounts) or default models repo",
        "give --models-path HOST_DIR (the host directory holding the models) or "
        "--checkpoint-path, or set models_repo_host / mounts for the cluster in clusters.yaml"));
    if (in.llm_models_root.empty()) problems.Add(MissingModelsRoot("the models mount"));
    return problems.ToStatus("with the models mount");
  }
  if (!models_host.empty()) {
    if (in.llm_models_root.empty()) return MissingModelsRoot("the models mount " + models_host);
    out.models_host_path = models_host;
    Add(&out.entries, models_host + ":" + StripTrailingSlashes(in.llm_models_root));
    out.notes.push_back("mounts: models " + models_host + " -> " + in.llm_models_root + " (" +
                        rule + ")");
  }
  if (!in.extra_dir.empty()) {
    std::string extra = StripTrailingSlashes(in.extra_dir);
    if (MountsCover(out.entries, extra)) {
      out.notes.push_back("mounts: " + extra + " (custom_script's directory) is already mounted");
    } else {
      Add(&out.entries, extra + ":" + extra);
      out.notes.push_back("mounts: added " + extra + " (custom_script's directory)");
    }
  }
  return out;
}

}  // namespace trtllm_run
