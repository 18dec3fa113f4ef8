// The Slurm probe's parsers (slurm_probe_parsers.h).
#include "slurm/probe/slurm_probe_parsers.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "os/probe_script.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

using probe::Contains;
using probe::NonEmptyLines;

namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Splits a gres list on the commas outside parentheses: "gpu:4(S:0,1),nvme:1".
std::vector<std::string> GresElements(std::string_view gres) {
  std::vector<std::string> elements;
  std::string current;
  int depth = 0;
  for (char c : gres) {
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      elements.emplace_back(Trim(current));
      current.clear();
    } else {
      current += c;
    }
  }
  elements.emplace_back(Trim(current));
  return elements;
}

int PartitionRank(const std::string& name) {
  if (EndsWith(name, "-backfill")) return 1;
  if (EndsWith(name, "-hp") || EndsWith(name, "-admin")) return 2;
  return 0;
}

}  // namespace

std::vector<SinfoPartition> ParseSinfoPartitions(std::string_view text) {
  std::vector<SinfoPartition> partitions;
  for (const std::string& line : NonEmptyLines(text)) {
    std::vector<std::string> fields;
    size_t start = 0;
    while (true) {
      size_t bar = line.find('|', start);
      fields.emplace_back(Trim(std::string_view(line).substr(
          start, bar == std::string::npos ? std::string::npos : bar - start)));
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
    if (fields.empty() || fields[0].empty()) continue;
    SinfoPartition partition;
    partition.name = fields[0];
    if (!partition.name.empty() && partition.name.back() == '*') {
      partition.name.pop_back();
      partition.default_marked = true;
    }
    if (partition.name.empty()) continue;  // a line "*|..." names no partition
    if (fields.size() > 1) partition.state = fields[1];
    if (fields.size() > 2) partition.time_limit = fields[2];
    if (fields.size() > 3) {
      partition.nodes = ParseInteger(fields[3], LONG_MIN, LONG_MAX).value_or(0);
    }
    partition.gres = fields.size() > 4 && !fields[4].empty() ? fields[4] : "(null)";
    auto same = std::find_if(partitions.begin(), partitions.end(),
                             [&](const SinfoPartition& p) { return p.name == partition.name; });
    if (same != partitions.end()) {
      same->nodes += partition.nodes;
      same->default_marked = same->default_marked || partition.default_marked;
      if (same->gres == "(null)") same->gres = partition.gres;
      continue;
    }
    partitions.push_back(partition);
  }
  return partitions;
}

std::vector<NodeInfo> ParseScontrolNodes(std::string_view text) {
  std::vector<NodeInfo> nodes;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::vector<std::string> words = SplitWhitespace(text.substr(start, end - start));
    start = end + 1;
    for (size_t i = 0; i < words.size(); ++i) {
      const std::string& word = words[i];
      size_t eq = word.find('=');
      if (eq == std::string::npos) continue;
      std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      if (key == "NodeName") {
        // A record starts with NodeName= at the start of a line.
        if (i != 0) continue;
        nodes.push_back(NodeInfo{value, "", {}});
        continue;
      }
      if (nodes.empty()) continue;
      if (key == "Arch") {
        nodes.back().arch = value == "(null)" ? "" : value;
      } else if (key == "Partitions") {
        std::stringstream list(value);
        std::string name;
        while (std::getline(list, name, ',')) {
          if (!name.empty()) nodes.back().partitions.push_back(name);
        }
      }
    }
  }
  return nodes;
}

AssocMgrUser ParseAssocMgr(std::string_view text, const std::string& user) {
  // Records: a line starting with UserName= (a user) or ClusterName= (an association),
  // and in the multi-line format the indented lines after it.
  struct Association {
    std::string account;
    bool mine = false;               // UserName=<user>(<uid>); "" is an account's own
    unsigned long long lft = ~0ULL;  // unknown: last
  };
  std::vector<Association> associations;
  AssocMgrUser result;
  enum { kNone, kUser, kAssociation } record = kNone;
  const std::string owner = "UserName=" + user + "(";
  bool my_user_record = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    std::vector<std::string> words = SplitWhitespace(line);
    if (words.empty()) continue;
    if (!std::isspace(static_cast<unsigned char>(line[0]))) {
      record = kNone;
      if (words[0].rfind("UserName=", 0) == 0) {
        record = kUser;
        my_user_record = words[0].rfind(owner, 0) == 0;
      } else if (words[0].rfind("ClusterName=", 0) == 0) {
        record = kAssociation;
        associations.emplace_back();
      }
    }
    if (record == kNone) continue;
    for (const std::string& word : words) {
      size_t eq = word.find('=');
      if (eq == std::string::npos) continue;
      std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      if (record == kUser) {
        if (my_user_record && key == "DefAccount") result.default_account = value;
        continue;
      }
      Association& association = associations.back();
      if (key == "Account") {
        association.account = value;
      } else if (key == "UserName") {
        association.mine = word.rfind(owner, 0) == 0;
      } else if (key == "Lft") {
        if (std::optional<long long> lft = ParseInteger(value, 0, LLONG_MAX)) {
          association.lft = static_cast<unsigned long long>(*lft);
        }
      }
    }
  }
  std::stable_sort(associations.begin(), associations.end(),
                   [](const Association& a, const Association& b) { return a.lft < b.lft; });
  for (const Association& association : associations) {
    if (association.mine && !association.account.empty() &&
        !Contains(result.accounts, association.account)) {
      result.accounts.push_back(association.account);
    }
  }
  return result;
}

std::optional<int> GpusPerNodeFromGres(std::string_view gres) {
  for (std::string element : GresElements(gres)) {
    if (element.rfind("gpu:", 0) != 0) continue;
    size_t paren = element.find('(');
    if (paren != std::string::npos) element.resize(paren);
    size_t colon = element.rfind(':');
    std::optional<long long> count =
        ParseInteger(std::string_view(element).substr(colon + 1), 0, INT_MAX);
    if (!count) return std::nullopt;
    return static_cast<int>(*count);
  }
  return std::nullopt;
}

bool GresRequiresGpu(std::string_view gres) {
  for (const std::string& element : GresElements(gres)) {
    if (element.rfind("gpu:", 0) == 0) return true;
  }
  return false;
}

std::vector<std::string> ParsePmixPlugins(std::string_view text) {
  std::vector<std::string> plugins;
  std::string token;
  auto flush = [&]() {
    while (!token.empty() && token.front() == '-') token.erase(token.begin());
    while (!token.empty() && (token.back() == ':' || token.back() == '.' || token.back() == ';')) {
      token.pop_back();
    }
    if (token.rfind("pmix", 0) == 0 && !Contains(plugins, token)) plugins.push_back(token);
    token.clear();
  };
  for (char c : text) {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      flush();
    } else {
      token += c;
    }
  }
  flush();
  return plugins;
}

std::optional<std::string> PreferredPmix(const std::vector<std::string>& available) {
  std::optional<std::string> best;
  long best_version = -1;
  for (const std::string& plugin : available) {
    if (plugin.rfind("pmix_v", 0) != 0 || plugin.size() == 6) continue;
    // More than 9 digits is no PMIx version.
    std::optional<long long> parsed =
        ParseInteger(std::string_view(plugin).substr(6), 0, 999999999);
    if (!parsed) continue;
    long version = static_cast<long>(*parsed);
    if (version > best_version) {
      best_version = version;
      best = plugin;
    }
  }
  if (best) return best;
  if (Contains(available, "pmix")) return std::string("pmix");
  return std::nullopt;
}

std::optional<std::string> ChooseDefaultPartition(const std::vector<SinfoPartition>& partitions,
                                                  const std::vector<std::string>& accepted) {
  const SinfoPartition* best = nullptr;
  for (const SinfoPartition& partition : partitions) {
    if (!Contains(accepted, partition.name)) continue;
    if (best == nullptr) {
      best = &partition;
      continue;
    }
    int rank = PartitionRank(partition.name), best_rank = PartitionRank(best->name);
    if (rank < best_rank ||
        (rank == best_rank && partition.default_marked && !best->default_marked)) {
      best = &partition;
    }
  }
  if (best == nullptr) return std::nullopt;
  return best->name;
}

}  // namespace trtllm_run
