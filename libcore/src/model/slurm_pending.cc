// Pending reasons of a Slurm job that waiting cannot clear (slurm_pending.h).
#include "model/slurm_pending.h"

namespace trtllm_run {

namespace {

// `name` matches `pattern`, where '*' stands for any run of characters.
bool Matches(const std::string& pattern, const std::string& name) {
  std::size_t star = pattern.find('*');
  if (star == std::string::npos) return pattern == name;
  std::string head = pattern.substr(0, star);
  if (name.compare(0, head.size(), head) != 0) return false;
  std::string rest = pattern.substr(star + 1);
  std::size_t next = rest.find('*');
  if (next == std::string::npos) {
    return name.size() >= head.size() + rest.size() &&
           name.compare(name.size() - rest.size(), rest.size(), rest) == 0;
  }
  std::string middle = rest.substr(0, next);
  std::size_t found = name.find(middle, head.size());
  return found != std::string::npos &&
         Matches("*" + rest.substr(next + 1), name.substr(found + middle.size()));
}

}  // namespace

const std::vector<HopelessPendingReason>& HopelessPendingReasons() {
  static const std::vector<HopelessPendingReason> kReasons = {
      {"PartitionDown", "its partition is down",
       "give a --partition that is up (sinfo shows each partition's state), or ask the "
       "administrators to bring this one up"},
      {"PartitionInactive", "its partition is inactive",
       "give a --partition that is up (sinfo shows each partition's state)"},
      {"PartitionConfig", "the request does not fit the partition's configuration",
       "ask for fewer nodes, GPUs or memory, or give a --partition that has them "
       "(scontrol show partition)"},
      {"PartitionTimeLimit", "its time limit is above the partition's MaxTime",
       "give a shorter --time-limit, or a --partition that allows it"},
      {"BadConstraints", "no node of the partition can satisfy its constraints",
       "drop or change the --constraint / --gres / --mem request, or give a --partition "
       "whose nodes have it"},
      {"InvalidAccount", "its account is not valid for the user or the partition",
       "give an --account you belong to (sacctmgr show assoc user=$USER)"},
      {"InvalidQOS", "its QOS is not valid for the account",
       "give a QOS the account may use (sacctmgr show assoc user=$USER format=account,qos)"},
      {"DependencyNeverSatisfied",
       "the job it depends on ended in a way that never satisfies "
       "the dependency",
       "drop the dependency or submit again after the job it names"},
      {"QOSMax*PerJob*", "the request exceeds a per-job limit of its QOS",
       "ask for less (nodes, GPUs, CPUs, memory or time; sacctmgr show qos shows the limits), "
       "or use a QOS with a higher limit"},
      {"AssocMax*PerJob*", "the request exceeds a per-job limit of its account",
       "ask for less (nodes, GPUs, CPUs, memory or time; sacctmgr show assoc shows the "
       "limits), or use another --account"},
  };
  return kReasons;
}

std::optional<HopelessPendingReason> FindHopelessPendingReason(const std::string& reason) {
  std::string name = reason.substr(0, reason.find(','));
  while (!name.empty() && name.back() == ' ') name.pop_back();
  if (name.empty()) return std::nullopt;
  for (const HopelessPendingReason& row : HopelessPendingReasons()) {
    if (Matches(row.reason, name)) {
      HopelessPendingReason found = row;
      found.reason = name;
      return found;
    }
  }
  return std::nullopt;
}

}  // namespace trtllm_run
