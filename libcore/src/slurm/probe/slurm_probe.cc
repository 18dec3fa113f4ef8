#include "slurm/probe/slurm_probe.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <random>
#include <set>
#include <sstream>

#include "os/probe_script.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

const char kSlurmToolsNotFound[] = "SLURM client tools not found";

using probe::Contains;

namespace {

using probe::FirstLine;
using probe::NonEmptyLines;

// The probe after its variables (F, CHECK): every query once, concurrently; the raw
// outputs as sections.
constexpr char kProbeScriptBody[] =
    R"SH(# The login name: bash's prompt expansion of \u (getpwuid, no process), else id.
U=
if [ "${BASH_VERSINFO[0]:-0}" -gt 4 ] || { [ "${BASH_VERSINFO[0]:-0}" = 4 ] && [ "${BASH_VERSINFO[1]:-0}" -ge 4 ]; }; then
  u='\u'
  eval 'U=${u@P}'
fi
case "$U" in ''|*\\u*) U=$(id -un 2>/dev/null || whoami 2>/dev/null || printf '%s' "${USER:-}") ;; esac
put user "$U"
miss=
for t in sacctmgr sinfo; do command -v "$t" >/dev/null 2>&1 || miss="$miss $t"; done
opt=
for t in scontrol srun sbatch; do command -v "$t" >/dev/null 2>&1 || opt="$opt $t"; done
put missing "$miss"
put missing_optional "$opt"
if [ -n "$miss" ]; then
  emit_all
  exit 0
fi
# The accounts come from slurmctld's association cache (`scontrol show assoc_mgr`: one
# RPC answered from memory, what slurmctld enforces at submission); only when it holds
# no association of the user (accounting disabled, the query failed, the user is not
# listed) from slurmdbd with sacctmgr (~200 ms), started as soon as that is known.
# Section assoc_mgr keeps the cache's lines about the user (not the other records).
AM=
if command -v scontrol >/dev/null 2>&1; then
  { $T scontrol -o show assoc_mgr users="$U" flags=users,assoc >"$D/am.raw" 2>"$D/assoc_mgr.err" </dev/null; echo $? >"$D/am.status"; } </dev/null &
  AM=$!
  q nodes scontrol -o show node &
fi
if command -v srun >/dev/null 2>&1; then q mpi srun --mpi=list & fi
q sinfo sinfo -h -o '%P|%a|%l|%D|%G' &
SI=$!
DA=
A=
FB=1
if [ -n "$AM" ]; then
  wait "$AM"
  read -r rc <"$D/am.status"
  lft=
  while IFS= read -r l || [ -n "$l" ]; do
    case "$l" in
      "UserName=$U("*)
        x=${l#* DefAccount=}
        [ "$x" = "$l" ] || DA=${x%% *}
        ;;
      ClusterName=*" UserName=$U("*)
        x=${l#* Lft=}
        x=${x%% *}
        case "$x" in ''|*[!0-9]*) x=999999999999 ;; esac
        if [ -z "$lft" ] || [ "$x" -lt "$lft" ]; then
          lft=$x
          A=${l#* Account=}
          A=${A%% *}
        fi
        ;;
      ClusterName=*|UserName=*|[[:space:]]*) continue ;;
    esac
    printf '%s\n' "$l"
  done <"$D/am.raw" >"$D/assoc_mgr.out"
  echo "$rc" >"$D/assoc_mgr.rc"
  if [ "$rc" = 0 ] && [ -n "$lft" ]; then
    FB=
    [ -n "$DA" ] && A=$DA
  else
    DA=
    A=
  fi
fi
if [ -n "$FB" ]; then
  q defacct sacctmgr -nP show user "$U" format=DefaultAccount &
  q assoc sacctmgr -nP show assoc where user="$U" format=account &
fi
wait "$SI"
# Access checks (sbatch --test-only), in the order the default partition is chosen: plain
# names, then *-backfill, then *-hp/*-admin, sinfo's default first within each. Only the
# first is checked, the others (concurrently) only when it is refused: the first accepted
# one is the default. Without --account a check uses the user's default account, the
# same as --account=<DefaultAccount>; when there is no DefaultAccount but an
# association, the checks are redone with --account=<that account> below.
order=
order_partitions() {
  local p a rest d r l0= l0d= l1= l1d= l2= l2d= seen=' '
  while IFS='|' read -r p a rest; do
    d=
    case "$p" in *\*) p=${p%\*}; d=d ;; esac
    [ -n "$p" ] && [ "$a" = up ] || continue
    case "$seen" in *" $p "*) continue ;; esac
    seen="$seen$p "
    if [ -n "$F" ]; then case "$F" in *" $p "*) ;; *) continue ;; esac; fi
    case "$p" in *-backfill) r=1 ;; *-hp|*-admin) r=2 ;; *) r=0 ;; esac
    case "$r$d" in
      0) l0="$l0$p " ;; 0d) l0d="$l0d$p " ;; 1) l1="$l1$p " ;; 1d) l1d="$l1d$p " ;;
      2) l2="$l2$p " ;; *) l2d="$l2d$p " ;;
    esac
  done <"$D/sinfo.out"
  order="$l0d$l0$l1d$l1$l2d$l2"
}
check() {  # $1 partition, $2 account ("" = the user's default)
  if [ -n "$2" ]; then
    q "access=$1" sbatch --test-only --partition="$1" --account="$2" --nodes=1 --time=00:01:00 --ntasks=1 --wrap=true
  else
    q "access=$1" sbatch --test-only --partition="$1" --nodes=1 --time=00:01:00 --ntasks=1 --wrap=true
  fi
}
checks() {  # $1 account
  local best=${order%% *} rest=${order#* } p rc=
  [ -n "$best" ] || return 0
  check "$best" "$1"
  read -r rc <"$D/access=$best.rc"
  [ "$rc" = 0 ] && return 0
  set -f
  for p in $rest; do check "$p" "$1" & done
  set +f
  wait
}
read -r rc <"$D/sinfo.rc"
CHECKED=
if [ "$CHECK" = 1 ] && command -v sbatch >/dev/null 2>&1 && [ "$rc" = 0 ]; then
  order_partitions
  checks ""
  CHECKED=1
fi
wait
first_line() {  # LINE= the first non-blank line of file $1, trimmed
  local l
  LINE=
  while IFS= read -r l || [ -n "$l" ]; do
    l=${l#"${l%%[![:space:]]*}"}
    l=${l%"${l##*[![:space:]]}"}
    if [ -n "$l" ]; then LINE=$l; return; fi
  done <"$1"
}
if [ -n "$FB" ]; then
  read -r rc <"$D/defacct.rc"
  [ "$rc" = 0 ] && first_line "$D/defacct.out" && DA=$LINE
  A=$DA
  read -r rc <"$D/assoc.rc"
  [ -z "$A" ] && [ "$rc" = 0 ] && first_line "$D/assoc.out" && A=$LINE
fi
put access_account "$A"
if [ -n "$CHECKED" ] && [ -z "$DA" ] && [ -n "$A" ]; then
  rm -f "$D"/access=*
  checks "$A"
fi
emit_all
)SH";

}  // namespace

std::string SlurmProbeScript(const ProbeOptions& options, const std::string& marker) {
  std::string filter;
  for (const std::string& name : options.partitions) filter += " " + name;
  if (!filter.empty()) filter += " ";
  std::string script =
      "# trtllm-run Slurm probe: every query once, concurrently; raw outputs as sections.\n";
  script += probe::Prelude(marker, options.command_timeout_seconds);
  script += "F=" + ShellQuote(filter) + "\n";
  script += std::string("CHECK=") + (options.check_access ? "1" : "0") + "\n";
  script += kProbeScriptBody;
  return script;
}

namespace {

// A partition the probe looked into: up, and in the filter (when there is one).
bool Probed(const SinfoPartition& partition, const ProbeOptions& options) {
  return partition.state == "up" &&
         (options.partitions.empty() || Contains(options.partitions, partition.name));
}

void AddAccounts(const ProbeOutput& output, SlurmEnv* env) {
  // Accounts: the associations, and the user's DefaultAccount (else the first one);
  // from slurmctld's association cache, else (no association of the user there) from
  // the sacctmgr queries the script ran instead.
  AssocMgrUser cached;
  const ProbeSection* assoc_mgr = output.Find("assoc_mgr");
  if (assoc_mgr != nullptr && assoc_mgr->exit_code == 0) {
    cached = ParseAssocMgr(assoc_mgr->out, env->user);
  }
  const ProbeSection* assoc = output.Find("assoc");
  if (!cached.accounts.empty()) {
    env->accounts = cached.accounts;
    env->default_account =
        cached.default_account.empty() ? cached.accounts.front() : cached.default_account;
  } else if (assoc != nullptr && assoc->exit_code == 0) {
    for (const std::string& line : NonEmptyLines(assoc->out)) {
      if (!Contains(env->accounts, line)) env->accounts.push_back(line);
    }
  } else if (assoc != nullptr) {
    env->errors.push_back(probe::DescribeFailure("sacctmgr show assoc", *assoc) +
                          "; accounts unavailable");
  }
  const ProbeSection* defacct = output.Find("defacct");
  if (!cached.accounts.empty()) {
    // Taken from the cache above.
  } else if (defacct != nullptr && defacct->exit_code == 0 && !FirstLine(defacct->out).empty()) {
    env->default_account = FirstLine(defacct->out);
  } else if (!env->accounts.empty()) {
    env->default_account = env->accounts.front();
  }
  if (!env->default_account) {
    env->errors.push_back("no SLURM account associations for user " + env->user);
  }
}

// The partitions, their gres (sinfo) and arch (scontrol); returns what sinfo listed.
std::vector<SinfoPartition> AddPartitions(const ProbeOutput& output, const ProbeOptions& options,
                                          const std::vector<std::string>& missing_optional,
                                          SlurmEnv* env) {
  // Partitions, their gres (sinfo) and arch (scontrol).
  std::vector<SinfoPartition> sinfo;
  const ProbeSection* sinfo_section = output.Find("sinfo");
  if (sinfo_section != nullptr && sinfo_section->exit_code == 0) {
    sinfo = ParseSinfoPartitions(sinfo_section->out);
    if (sinfo.empty()) env->errors.push_back("'sinfo' reported no partitions");
  } else {
    env->errors.push_back(sinfo_section == nullptr
                              ? "'sinfo' did not run"
                              : probe::DescribeFailure("sinfo", *sinfo_section));
  }
  std::vector<std::string> names;
  for (const SinfoPartition& partition : sinfo) names.push_back(partition.name);
  for (const std::string& wanted : options.partitions) {
    if (!Contains(names, wanted) && !sinfo.empty()) {
      env->errors.push_back("partition '" + wanted + "' (partition filter) does not exist; " +
                            "partitions: " + Join(names, ", "));
    }
  }
  auto probed = [&](const SinfoPartition& partition) { return Probed(partition, options); };

  std::vector<NodeInfo> nodes;
  std::string nodes_problem;
  const ProbeSection* nodes_section = output.Find("nodes");
  if (Contains(missing_optional, "scontrol")) {
    nodes_problem = "'scontrol' not found";
  } else if (nodes_section == nullptr) {
    nodes_problem = "'scontrol show node' did not run";
  } else if (nodes_section->exit_code != 0) {
    nodes_problem = probe::DescribeFailure("scontrol -o show node", *nodes_section);
  } else {
    nodes = ParseScontrolNodes(nodes_section->out);
  }
  for (const SinfoPartition& partition : sinfo) {
    SlurmPartition out;
    out.name = partition.name;
    out.state = partition.state;
    out.time_limit = partition.time_limit;
    out.nodes = std::to_string(partition.nodes);
    if (probed(partition)) {
      out.gres = partition.gres;
      out.gpus_per_node = GpusPerNodeFromGres(out.gres);
      out.requires_gres = GresRequiresGpu(out.gres);
      for (const NodeInfo& node : nodes) {
        if (!node.arch.empty() && Contains(node.partitions, partition.name)) {
          out.arch = node.arch;
          break;
        }
      }
      if (!out.arch) {
        env->errors.push_back("partition " + partition.name + ": arch not found (" +
                              (nodes_problem.empty() ? "no node of it reports Arch= in "
                                                       "'scontrol show node'"
                                                     : nodes_problem) +
                              ")");
      }
    }
    env->partitions.push_back(out);
  }

  return sinfo;
}

void AddDefaultPartition(const ProbeOutput& output, const ProbeOptions& options,
                         const std::vector<std::string>& missing_optional,
                         const std::vector<SinfoPartition>& sinfo, SlurmEnv* env) {
  // Default partition: the access rule over the sbatch --test-only checks.
  std::vector<std::string> accepted;
  bool checked = false;
  for (const auto& [name, section] : output.sections) {
    if (name.rfind("access=", 0) != 0) continue;
    checked = true;
    if (section.exit_code == 0) accepted.push_back(name.substr(7));
  }
  env->default_partition = ChooseDefaultPartition(sinfo, accepted);
  if (!options.check_access) {
    // Unchecked: the partition sinfo marks default, when it is up.
    for (const SinfoPartition& partition : sinfo) {
      if (partition.default_marked && Probed(partition, options))
        env->default_partition = partition.name;
    }
  }
  if (!env->default_partition && !sinfo.empty()) {
    // The first listed partition, preferring one that is up (and in the filter).
    const SinfoPartition* fallback = &sinfo.front();
    for (const SinfoPartition& partition : sinfo) {
      if (Probed(partition, options)) {
        fallback = &partition;
        break;
      }
    }
    env->default_partition = fallback->name;
    if (options.check_access) {
      std::string why;
      if (Contains(missing_optional, "sbatch")) {
        why = " ('sbatch' not found)";
      } else if (!checked) {
        why = " (no partition is up)";
      }
      env->errors.push_back(
          "partition access verification failed; falling back to first "
          "available partition" +
          why);
    }
  }
}

void AddPmix(const ProbeOutput& output, const std::vector<std::string>& missing_optional,
             SlurmEnv* env) {
  // PMIx plugins.
  const ProbeSection* mpi = output.Find("mpi");
  if (Contains(missing_optional, "srun") || mpi == nullptr) {
    env->errors.push_back("no pmix MPI plugin reported by 'srun --mpi=list' ('srun' not found)");
  } else if (mpi->exit_code != 0) {
    env->errors.push_back(probe::DescribeFailure("srun --mpi=list", *mpi));
  } else {
    env->pmix_available = ParsePmixPlugins(mpi->out + "\n" + mpi->err);
    env->pmix_preferred = PreferredPmix(env->pmix_available);
    if (!env->pmix_preferred) {
      env->errors.push_back("no pmix MPI plugin reported by 'srun --mpi=list'");
    }
  }
}

}  // namespace

SlurmEnv SlurmEnvFromProbe(const ProbeOutput& output, const ProbeOptions& options) {
  SlurmEnv env;
  if (const ProbeSection* user = output.Find("user")) env.user = std::string(Trim(user->out));
  const ProbeSection* missing = output.Find("missing");
  if (missing == nullptr || !Trim(missing->out).empty()) {
    env.errors.push_back(kSlurmToolsNotFound);
    return env;
  }
  std::vector<std::string> missing_optional;
  if (const ProbeSection* optional = output.Find("missing_optional")) {
    missing_optional = SplitWhitespace(optional->out);
  }

  AddAccounts(output, &env);
  std::vector<SinfoPartition> sinfo = AddPartitions(output, options, missing_optional, &env);
  AddDefaultPartition(output, options, missing_optional, sinfo, &env);
  AddPmix(output, missing_optional, &env);
  return env;
}

Result<SlurmEnv> ProbeSlurm(Scenario& scenario, const ProbeOptions& options) {
  std::string marker = probe::RandomMarker();
  Result<ProbeOutput> output =
      probe::Run(scenario, SlurmProbeScript(options, marker), marker, "the Slurm probe");
  if (!output.ok()) return output.status();
  return SlurmEnvFromProbe(output.value(), options);
}

int SlurmProbeExitStatus(const SlurmEnv& env) {
  if (env.errors.size() == 1 && env.errors.front() == kSlurmToolsNotFound) return 1;
  return env.errors.empty() ? 0 : 2;
}

SlurmAccounting SlurmAccountingState(const SlurmEnv& env) {
  if (!env.accounts.empty()) return SlurmAccounting::kAccounts;
  for (const std::string& error : env.errors) {
    if (error.rfind("'sacctmgr show assoc'", 0) != 0) continue;
    // sacctmgr's words when AccountingStorageType is not slurmdbd.
    return error.find("not running a supported accounting_storage plugin") != std::string::npos
               ? SlurmAccounting::kDisabled
               : SlurmAccounting::kUnreadable;
  }
  return SlurmAccounting::kNoAssociation;
}

std::vector<std::string> SplitPartitionList(std::string_view partition) {
  std::vector<std::string> names;
  size_t start = 0;
  while (true) {
    size_t comma = partition.find(',', start);
    names.emplace_back(Trim(partition.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return names;
}

std::string SlurmEnvToText(const SlurmEnv& env) {
  auto value = [](const std::optional<std::string>& v) { return v ? *v : std::string("(none)"); };
  std::string out;
  out += "user: " + env.user + "\n";
  out += "default_account: " + value(env.default_account) + "\n";
  out += "accounts: " + (env.accounts.empty() ? "(none)" : Join(env.accounts, ", ")) + "\n";
  out += "default_partition: " + value(env.default_partition) + "\n";
  out += "partitions:";
  if (env.partitions.empty()) {
    out += " (none)\n";
  } else {
    out += "\n";
    std::vector<std::vector<std::string>> rows = {
        {"NAME", "STATE", "TIME_LIMIT", "NODES", "ARCH", "GRES", "GPUS/NODE", "REQUIRES_GRES"}};
    for (const SlurmPartition& p : env.partitions) {
      rows.push_back({p.name, p.state, p.time_limit, p.nodes, p.arch.value_or("-"), p.gres,
                      p.gpus_per_node ? std::to_string(*p.gpus_per_node) : "-",
                      p.requires_gres ? "yes" : "no"});
    }
    std::vector<size_t> widths(rows.front().size(), 0);
    for (const auto& row : rows) {
      for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    }
    for (const auto& row : rows) {
      std::string line = " ";
      for (size_t i = 0; i < row.size(); ++i) {
        line += " " + row[i];
        if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size(), ' ');
      }
      out += line + "\n";
    }
  }
  out += "pmix: available " +
         (env.pmix_available.empty() ? "(none)" : Join(env.pmix_available, ", ")) + "; preferred " +
         value(env.pmix_preferred) + "\n";
  if (env.policy_merged) {
    out += "cluster_name: " + value(env.cluster_name) + "\n";
    out += "mounts: " + (env.mounts ? Join(*env.mounts, ", ") : "(none)") + "\n";
    out += "ssh_host: " + value(env.ssh_host) + "\n";
    out += "slurm_user: " + value(env.slurm_user) + "\n";
    out += "remote_cwd: " + value(env.remote_cwd) + "\n";
    out += "mfa_style: " +
           std::string(env.mfa_style ? (*env.mfa_style ? "true" : "false") : "(none)") + "\n";
  }
  out += "errors:";
  if (env.errors.empty()) {
    out += " (none)\n";
  } else {
    out += "\n";
    for (const std::string& error : env.errors) out += "  - " + error + "\n";
  }
  return out;
}

Status SaveSlurmEnv(const SlurmEnv& env, const std::string& path) {
  return WriteFileAtomic(path, SlurmEnvToJson(env));
}

}  // namespace trtllm_run
