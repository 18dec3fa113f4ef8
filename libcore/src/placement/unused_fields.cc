#include "placement/unused_fields.h"

#include <functional>
#include <map>
#include <set>

#include "placement/routing.h"

namespace trtllm_run {

namespace {

using Reads = std::function<bool(const std::string& scenario, const ExecutorTraits& traits)>;

// Which executors read a field that not all executors read (unused_fields.h).
const std::map<std::string, Reads>& ExecutorOnlyFields() {
  static const std::map<std::string, Reads> fields = [] {
    std::map<std::string, Reads> out;
    const Reads slurm = [](const std::string&, const ExecutorTraits& t) { return t.slurm; };
    const Reads remote = [](const std::string&, const ExecutorTraits& t) { return t.remote; };
    const Reads container = [](const std::string&, const ExecutorTraits& t) { return t.container; };
    const Reads docker = [](const std::string& name, const ExecutorTraits&) {
      return name == kLocalDockerExecutor;
    };
    for (const char* name :
         {"partition", "account", "time_limit", "max_pending", "alloc_time_limit",
          "persistent_mode", "release_allocation", "slurm_env_file"}) {
      out[name] = slurm;
    }
    for (const char* name :
         {"remote_cwd", "remote_repo_path", "repo_url", "repo_branch", "extra_files"}) {
      out[name] = remote;
    }
    for (const char* name : {"container_image", "llm_models_root"}) out[name] = container;
    for (const char* name : {"docker_memory", "docker_pull"}) out[name] = docker;
    return out;
  }();
  return fields;
}

// "--partition (-p)" for the flags that have an sbatch short form (cli.cc ShortFlags).
std::string FlagName(const std::string& field) {
  static const std::map<std::string, std::string> shorts = {
      {"partition", "-p"}, {"account", "-A"}, {"time_limit", "-t"}};
  std::string flag = field;
  for (char& c : flag) c = c == '_' ? '-' : c;
  auto s = shorts.find(field);
  return s == shorts.end() ? "--" + flag : s->second + "/--" + flag;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

Status UnusedFieldsError(const CaseRequest& given, const std::string& scenario,
                         const ExecutorTraits& traits,
                         const std::vector<RoutingCandidate>& executors) {
  std::vector<std::string> unused;
  std::set<std::string> readers;
  for (const auto& [field, text] : GivenRequestFields(given)) {
    auto only = ExecutorOnlyFields().find(field);
    if (only == ExecutorOnlyFields().end() || only->second(scenario, traits)) continue;
    if (!unused.empty() && unused.back() == FlagName(field)) continue;  // a list field
    unused.push_back(FlagName(field));
    for (const RoutingCandidate& candidate : executors) {
      if (candidate.name != scenario && only->second(candidate.name, candidate.traits)) {
        readers.insert(candidate.name);
      }
    }
  }
  if (unused.empty()) return Status::Ok();
  const std::string these = unused.size() == 1 ? "it" : "them";
  std::string hint = "leave " + these + " out to run on " + scenario;
  if (!readers.empty()) {
    std::string scenarios;
    for (const std::string& reader : readers) {
      scenarios += (scenarios.empty() ? "--scenario " : ", --scenario ") + reader;
    }
    hint += std::string(", or run where ") + (unused.size() == 1 ? "it applies" : "they apply") +
            ": " + scenarios;
  }
  return Status::InvalidInput(
      Join(unused) + (unused.size() == 1 ? " is" : " are") + " not used by scenario " + scenario +
          (readers.empty() ? "" : " (used by " + Join({readers.begin(), readers.end()}) + ")"),
      hint);
}

}  // namespace trtllm_run
