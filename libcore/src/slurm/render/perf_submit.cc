// submit.py runs where its Slurm questions have the target cluster's answers: stand-ins
// for the Slurm client tools, generated from slurm_env, come first on its PATH. This
// works the same for local_slurm, remote_slurm and planning without any cluster (the
// spec's script builder must not probe Slurm itself: slurm_env is the only source).
#include "slurm/render/perf_submit.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <memory>
#include <sstream>

#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::internal {
namespace {

namespace fs = std::filesystem;

constexpr size_t kOutputKept = 64 * 1024;  // of submit.py's output, for messages
constexpr size_t kOutputShown = 2000;

std::string Tail(const std::string& text) {
  return text.size() <= kOutputShown ? text : "..." + text.substr(text.size() - kOutputShown);
}

std::string ClusterLabel(const SlurmEnv& env) {
  return env.cluster_name && !env.cluster_name->empty() ? *env.cluster_name : "(unnamed)";
}

// The lines every stand-in starts with: what it is, the query log, and fail().
std::string StandInPreamble(const std::string& tool, const std::string& dir,
                            const std::string& cluster) {
  std::ostringstream s;
  s << "#!/bin/sh\n"
    << "# " << tool << " stand-in written by trtllm-run while the repo's submit.py plans a job\n"
    << "# for cluster " << cluster << ": it answers from that cluster's slurm_env.json, never\n"
    << "# from the Slurm of the machine it runs on, and fails at once where it cannot.\n"
    << "cluster=" << ShellQuote(cluster) << "\n"
    << "queries=" << ShellQuote(dir + "/queries.log") << "\n"
    << "unanswered=" << ShellQuote(dir + "/unanswered.log") << "\n"
    << "call=\"" << tool << " $*\"\n"
    << "printf '%s\\n' \"$call\" >>\"$queries\"\n"
    << "fail() {\n"
    << "  printf '%s\\n' \"$call ($1)\" >>\"$unanswered\"\n"
    << "  printf '%s\\n' \"" << tool
    << ": trtllm-run's stand-in for cluster $cluster cannot answer this while planning: $1\" >&2\n"
    << "  exit 1\n"
    << "}\n";
  return s.str();
}

std::string SinfoStandIn(const SlurmEnv& env) {
  std::ostringstream s;
  s << R"(header=1
filter=
format=
while [ $# -gt 0 ]; do
  case $1 in
    -h|--noheader) header=0 ;;
    -a|--all) ;;
    -p|--partition|-o|--format)
      [ $# -ge 2 ] || fail "option $1 needs a value"
      case $1 in -p|--partition) filter=$2 ;; *) format=$2 ;; esac
      shift ;;
    --partition=*) filter=${1#--partition=} ;;
    --format=*) format=${1#--format=} ;;
    -p?*) filter=${1#-p} ;;
    -o?*) format=${1#-o} ;;
    *) fail "option '$1' is not known from slurm_env" ;;
  esac
  shift
done
[ -n "$format" ] || fail "only -o/--format output is known from slurm_env"
# render NAME STATE TIMELIMIT NODES GRES DEFAULT_MARK: $format filled in, in $line.
render() {
  line=
  rest=$format
  while [ -n "$rest" ]; do
    c=${rest%"${rest#?}"}
    rest=${rest#?}
    if [ "$c" != % ]; then
      line=$line$c
      continue
    fi
    while :; do
      c=${rest%"${rest#?}"}
      case $c in
        -|.|[0-9]) rest=${rest#?} ;;
        *) break ;;
      esac
    done
    c=${rest%"${rest#?}"}
    rest=${rest#?}
    case $c in
      P) line=$line$1$6 ;;
      R) line=$line$1 ;;
      a) line=$line$2 ;;
      l) line=$line$3 ;;
      D) line=$line$4 ;;
      G) line=$line$5 ;;
      %) line=$line% ;;
      *) fail "format field %$c is not known from slurm_env" ;;
    esac
  done
}
render PARTITION AVAIL TIMELIMIT NODES GRES ''
[ "$header" = 0 ] || printf '%s\n' "$line"
row() {
  if [ -n "$filter" ]; then
    case ",$filter," in
      *",$1,"*) ;;
      *) return 0 ;;
    esac
  fi
  render "$@"
  printf '%s\n' "$line"
}
)";
  for (const SlurmPartition& p : env.partitions) {
    bool is_default = env.default_partition && *env.default_partition == p.name;
    s << "row " << ShellQuote(p.name) << " " << ShellQuote(p.state.empty() ? "up" : p.state) << " "
      << ShellQuote(p.time_limit.empty() ? "UNLIMITED" : p.time_limit) << " "
      << ShellQuote(p.nodes.empty() ? "1" : p.nodes) << " "
      << ShellQuote(p.gres.empty() ? "(null)" : p.gres) << " " << (is_default ? "'*'" : "''")
      << "\n";
  }
  s << "exit 0\n";
  return s.str();
}

std::string Upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

std::string ScontrolStandIn(const SlurmEnv& env) {
  std::ostringstream s;
  s << "cluster_name=" << ShellQuote(env.cluster_name.value_or("")) << "\n";
  s << R"(oneline=0
while [ $# -gt 0 ]; do
  case $1 in
    -o|--oneliner) oneline=1 ;;
    -a|--all|-d|--details) ;;
    -*) fail "option '$1' is not known from slurm_env" ;;
    *) break ;;
  esac
  shift
done
[ "${1-}" = show ] || fail "only 'show config' and 'show partition' are known from slurm_env"
wanted=${3-}
found=0
# part NAME DEFAULT STATE MAXTIME TOTALNODES
part() {
  if [ -n "$wanted" ] && [ "$wanted" != "$1" ]; then return 0; fi
  found=1
  if [ "$oneline" = 1 ]; then
    printf 'PartitionName=%s Default=%s State=%s MaxTime=%s TotalNodes=%s\n' "$@"
  else
    printf 'PartitionName=%s\n   Default=%s State=%s\n   MaxTime=%s TotalNodes=%s\n\n' "$@"
  fi
}
case ${2-} in
  config)
    [ -n "$cluster_name" ] || fail "slurm_env has no cluster_name"
    printf 'Configuration data from slurm_env (trtllm-run planning stand-in)\n'
    printf 'ClusterName             = %s\n' "$cluster_name"
    exit 0 ;;
  partition|partitions) ;;
  *) fail "only 'show config' and 'show partition' are known from slurm_env" ;;
esac
)";
  for (const SlurmPartition& p : env.partitions) {
    bool is_default = env.default_partition && *env.default_partition == p.name;
    s << "part " << ShellQuote(p.name) << " " << (is_default ? "YES" : "NO") << " "
      << ShellQuote(Upper(p.state.empty() ? "up" : p.state)) << " "
      << ShellQuote(p.time_limit.empty() ? "UNLIMITED" : p.time_limit) << " "
      << ShellQuote(p.nodes.empty() ? "1" : p.nodes) << "\n";
  }
  s << R"(if [ "$found" = 0 ] && [ -n "$wanted" ]; then
  printf 'Partition %s not found\n' "$wanted" >&2
  exit 1
fi
exit 0
)";
  return s.str();
}

// GPUs a --gres value asks for: the count of its gpu entry ("gpu:4", "gpu:a100:4",
// "gpu" = 1), 0 without one; nullopt when the count is not a number.
std::optional<int> GresGpus(const std::string& gres) {
  std::stringstream entries(gres);
  std::string entry;
  while (std::getline(entries, entry, ',')) {
    entry = Trim(entry);
    if (entry != "gpu" && entry.rfind("gpu:", 0) != 0) continue;
    size_t paren = entry.find('(');
    if (paren != std::string::npos) entry.resize(paren);
    if (entry == "gpu") return 1;
    std::optional<long long> count =
        ParseInteger(std::string_view(entry).substr(entry.find_last_of(':') + 1), 0, 999999);
    if (!count) {
      // "gpu:a100" is one GPU of that type.
      if (std::count(entry.begin(), entry.end(), ':') == 1) return 1;
      return std::nullopt;
    }
    return static_cast<int>(*count);
  }
  return 0;
}

std::string Shown(const std::optional<std::string>& value) {
  return value ? *value : "(no such line)";
}

// Removes a directory tree when it goes out of scope.
struct TempDirectory {
  std::string path;
  ~TempDirectory() {
    if (path.empty()) return;
    std::error_code error;
    fs::remove_all(path, error);
  }
};

Result<std::string> MakeTempDirectory() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/trtllm-run-slurm-stand-ins.XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    return Status::IoError("cannot create a temporary directory like " + pattern,
                           "set TMPDIR to a writable directory");
  }
  return std::string(buffer.data());
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::vector<std::string> lines;
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return lines;
  std::stringstream in(text.value());
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace

Result<int> SubmitTimeoutSeconds() {
  const char* raw = std::getenv(kSubmitTimeoutVariable);
  if (raw == nullptr || *raw == '\0') return kDefaultSubmitTimeoutSeconds;
  std::string value = raw;
  std::optional<long long> seconds = ParseInteger(value, 1, 86400);
  if (!seconds) {
    return Status::InvalidInput(std::string(kSubmitTimeoutVariable) + "='" + value +
                                    "' is not a number of seconds from 1 to 86400",
                                "give whole seconds (e.g. 120), or unset it for the default of " +
                                    std::to_string(kDefaultSubmitTimeoutSeconds) + " s");
  }
  return static_cast<int>(*seconds);
}

const std::vector<std::string>& SlurmToolNames() {
  static const std::vector<std::string> names = {"sinfo",  "scontrol", "squeue", "sbatch",  "srun",
                                                 "salloc", "scancel",  "sacct",  "sacctmgr"};
  return names;
}

Status WriteSlurmToolStandIns(const std::string& dir, const SlurmEnv& env) {
  const std::string cluster = ClusterLabel(env);
  for (const std::string& tool : SlurmToolNames()) {
    std::string text = StandInPreamble(tool, dir, cluster);
    if (tool == "sinfo") {
      text += SinfoStandIn(env);
    } else if (tool == "scontrol") {
      text += ScontrolStandIn(env);
    } else {
      text += "fail \"" + tool +
              " is not available while trtllm-run plans (slurm_env holds the cluster's "
              "probed facts only)\"\n";
    }
    const std::string path = dir + "/" + tool;
    TRTLLM_RUN_RETURN_IF_ERROR(WriteFileAtomic(path, text));
    if (::chmod(path.c_str(), 0755) != 0) {
      return Status::IoError("cannot make " + path + " executable");
    }
  }
  return Status::Ok();
}

LaunchSizing ReadLaunchSizing(const std::string& script) {
  LaunchSizing sizing;
  std::stringstream lines(script);
  std::string line;
  while (std::getline(lines, line)) {
    line = Trim(line);
    if (line.empty()) continue;
    if (line.front() != '#') break;  // sbatch reads directives up to the first command
    if (line.rfind("#SBATCH", 0) != 0) continue;
    std::stringstream words(line.substr(7));
    std::vector<std::string> args;
    std::string word;
    while (words >> word) {
      if (word.front() == '#') break;  // a comment after the options
      args.push_back(word);
    }
    for (size_t i = 0; i < args.size(); ++i) {
      std::string name = args[i];
      std::optional<std::string> value;
      size_t equals = name.find('=');
      if (name.rfind("--", 0) == 0 && equals != std::string::npos) {
        value = name.substr(equals + 1);
        name.resize(equals);
      } else if (name.size() > 2 && name[0] == '-' && name[1] != '-') {
        value = name.substr(2);  // -N2
        name.resize(2);
      }
      auto take = [&]() -> std::optional<std::string> {
        if (value) return value;
        if (i + 1 < args.size()) return args[++i];
        return std::string();
      };
      if (name == "--nodes" || name == "-N") {
        sizing.nodes = take();
      } else if (name == "--ntasks" || name == "-n") {
        sizing.ntasks = take();
      } else if (name == "--ntasks-per-node") {
        sizing.ntasks_per_node = take();
      } else if (name == "--gpus-per-node") {
        sizing.gpus_per_node = take();
      } else if (name == "--gres") {
        sizing.gres = take();
      }
    }
  }
  return sizing;
}

Status CheckLaunchSizing(const LaunchSizing& sizing, const PerfSubmitTarget& target,
                         const std::string& script_path) {
  const SlurmParams& p = target.params;
  const std::string where = "partition " + p.partition + " of cluster " + target.cluster;
  const std::string hint =
      "submit.py sized the job differently from trtllm-run's plan (the perf config's "
      "hardware section and slurm_env); nothing was submitted: check the perf config, "
      "the partition, or the repo's submit.py";
  auto mismatch = [&](const std::string& directive, const std::string& script_value,
                      const std::string& planned) {
    return Status::InvalidInput(script_path + " (written by submit.py) has #SBATCH " + directive +
                                    " = " + script_value + ", but the plan for " + where + " has " +
                                    planned,
                                hint);
  };
  const std::string nodes = std::to_string(p.nodes);
  if (!sizing.nodes || Trim(*sizing.nodes) != nodes) {
    return mismatch("--nodes", Shown(sizing.nodes), "--nodes = " + nodes);
  }
  const std::string per_node = std::to_string(p.ntasks_per_node);
  if (!sizing.ntasks_per_node || Trim(*sizing.ntasks_per_node) != per_node) {
    return mismatch("--ntasks-per-node", Shown(sizing.ntasks_per_node),
                    "--ntasks-per-node = " + per_node);
  }
  const std::string ntasks = std::to_string(p.ntasks);
  if (sizing.ntasks && Trim(*sizing.ntasks) != ntasks) {
    return mismatch("--ntasks", *sizing.ntasks, "--ntasks = " + ntasks);
  }
  const std::optional<int> planned_gpus = GresGpus(p.gres);
  const std::string partition_gres =
      target.partition.gres.empty() ? "(null)" : target.partition.gres;
  const std::string planned_gres =
      p.gres.empty() ? "no --gres (the partition's gres is " + partition_gres + ")"
                     : "--gres = " + p.gres + " (the partition's gres is " + partition_gres + ")";
  std::optional<int> script_gpus = sizing.gres ? GresGpus(*sizing.gres) : 0;
  if (!script_gpus || script_gpus != planned_gpus) {
    return mismatch("--gres", Shown(sizing.gres), planned_gres);
  }
  if (sizing.gpus_per_node) {
    const std::string value(Trim(*sizing.gpus_per_node));
    if (p.gres.empty() || value != std::to_string(planned_gpus.value_or(0))) {
      return mismatch("--gpus-per-node", *sizing.gpus_per_node,
                      p.gres.empty()
                          ? "no GPU request (the partition's gres is " + partition_gres + ")"
                          : "--gpus-per-node = " + std::to_string(planned_gpus.value_or(0)));
    }
  }
  return Status::Ok();
}

Status RunPerfSubmit(const PerfSubmitInputs& inputs, const SlurmEnv& env,
                     const PerfSubmitTarget& target, int timeout_seconds,
                     std::vector<std::string>* notes) {
  TempDirectory tools;
  Result<std::string> dir = MakeTempDirectory();
  if (!dir.ok()) return dir.status();
  tools.path = dir.value();
  TRTLLM_RUN_RETURN_IF_ERROR(WriteSlurmToolStandIns(tools.path, env));

  Command command;
  command.argv = PerfSubmitArgv(inputs);
  const char* path = std::getenv("PATH");
  command.env = {{"PATH", tools.path + ":" + (path && *path ? path : "/usr/bin:/bin")},
                 {"SLURM_CLUSTER_NAME", env.cluster_name.value_or("")}};
  command.merge_stderr = true;
  // At the deadline the whole process group is stopped: nothing is left running.
  Result<CommandOutput> ran = MakeLocalScenario()->Run(command, DeadlineIn(timeout_seconds));
  if (!ran.ok()) {
    return Status::InvalidInput("cannot run submit.py: " + ran.status().message(),
                                "install python3 (submit.py runs with the python3 on PATH)");
  }
  std::string output = std::move(ran->stdout_text);
  if (output.size() > kOutputKept) output.erase(0, output.size() - kOutputKept);
  std::optional<ProcessExit> exit;
  if (!ran->timed_out) {
    exit = ran->signal != 0 ? ProcessExit{std::nullopt, ran->signal}
                            : ProcessExit{ran->exit_code, std::nullopt};
  }

  const std::string cluster = ClusterLabel(env);
  const std::vector<std::string> queries = ReadLines(tools.path + "/queries.log");
  const std::vector<std::string> unanswered = ReadLines(tools.path + "/unanswered.log");
  notes->push_back(queries.empty()
                       ? "submit.py: made no Slurm queries"
                       : "submit.py: its Slurm queries were answered from slurm_env (cluster " +
                             cluster + "), not from this host's Slurm: " + Join(queries, "; "));
  const std::string refused =
      unanswered.empty() ? ""
                         : "; Slurm queries slurm_env could not answer: " + Join(unanswered, "; ");
  const std::string shown = Tail(std::string(Trim(output)));

  if (!exit) {
    return Status::InvalidInput(
        inputs.submit_py + " did not finish within " + std::to_string(timeout_seconds) +
            " s and was stopped with its child processes" + refused +
            (shown.empty() ? "" : "; its last output: " + shown),
        "it may be waiting for something it cannot reach from here; nothing was submitted. "
        "Allow more time with " +
            std::string(kSubmitTimeoutVariable) + "=SECONDS (default " +
            std::to_string(kDefaultSubmitTimeoutSeconds) + ")");
  }
  if (!exit->exit_code || *exit->exit_code != 0) {
    const std::string how = exit->exit_code ? "exit " + std::to_string(*exit->exit_code)
                                            : SignalName(exit->signal.value_or(0));
    return Status::InvalidInput(inputs.submit_py + " failed (" + how + ")" + refused + ": " + shown,
                                "check the perf config and the test id; nothing was submitted");
  }
  struct stat info {};
  if (::stat(inputs.launch_sh.c_str(), &info) != 0) {
    return Status::InvalidInput(inputs.submit_py + " exited 0 but wrote no launch script at " +
                                inputs.launch_sh);
  }
  Result<std::string> script = ReadFile(inputs.launch_sh);
  if (!script.ok()) return script.status();
  PerfSubmitTarget checked = target;
  if (checked.cluster.empty()) checked.cluster = cluster;
  Status sizing = CheckLaunchSizing(ReadLaunchSizing(script.value()), checked, inputs.launch_sh);
  if (!sizing.ok()) return Status::InvalidInput(sizing.message() + refused, sizing.hint());
  return Status::Ok();
}

std::string ReplacePathPrefix(const std::string& text, const std::string& from,
                              const std::string& to) {
  if (from.empty() || from == to) return text;
  std::string out;
  size_t done = 0;
  size_t at = text.find(from);
  while (at != std::string::npos) {
    const size_t end = at + from.size();
    const char next = end < text.size() ? text[end] : '/';
    const bool ends_component = std::string("/'\" \t\n:,=;)").find(next) != std::string::npos;
    const bool starts_component =
        at == 0 || std::string("'\" \t\n:,=(").find(text[at - 1]) != std::string::npos;
    if (ends_component && starts_component) {
      out.append(text, done, at - done);
      out += to;
      done = end;
      at = text.find(from, end);
    } else {
      at = text.find(from, at + 1);
    }
  }
  out.append(text, done, std::string::npos);
  return out;
}

Status MapPerfFilesToRemote(const std::string& work_dir, const std::set<std::string>& before,
                            const std::vector<std::pair<std::string, std::string>>& mapping,
                            const std::string& launch_script,
                            std::vector<std::string>* extra_files) {
  namespace fs = std::filesystem;
  std::error_code error;
  std::vector<std::string> written;
  for (const fs::directory_entry& entry : fs::directory_iterator(work_dir, error)) {
    if (entry.is_regular_file(error) && before.count(entry.path().string()) == 0) {
      written.push_back(entry.path().string());
    }
  }
  if (error) return Status::IoError("cannot list " + work_dir + ": " + error.message());
  std::sort(written.begin(), written.end());
  for (const std::string& path : written) {
    Result<std::string> text = ReadFile(path);
    if (!text.ok()) return text.status();
    std::string mapped = text.value();
    for (const auto& [local, remote] : mapping) {
      mapped = ReplacePathPrefix(mapped, fs::path(local).lexically_normal().string(), remote);
    }
    const fs::perms perms = fs::status(path, error).permissions();
    TRTLLM_RUN_RETURN_IF_ERROR(WriteFileAtomic(path, mapped));
    fs::permissions(path, perms, error);
    if (error) return Status::IoError("cannot restore the permissions of " + path);
    if (path != launch_script) extra_files->push_back(path);
  }
  return Status::Ok();
}

}  // namespace trtllm_run::internal
