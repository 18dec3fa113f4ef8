// SlurmClient (slurm_client.h).
#include "trtllm_run/sdk/slurm/client.h"

#include <algorithm>
#include <sstream>

#include "slurm/client/job_file_io.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

using internal::SplitLines;

namespace {

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string CommandError(const std::string& what, const CommandOutput& out) {
  std::string message = !out.stderr_text.empty() ? out.stderr_text : out.stdout_text;
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  if (message.size() > 500) message = message.substr(0, 500) + "...";
  std::string how = out.timed_out        ? "timed out"
                    : out.exit_code >= 0 ? "exited with code " + std::to_string(out.exit_code)
                                         : "was killed by " + SignalName(out.signal);
  return what + " " + how + (message.empty() ? "" : ": " + message);
}

// Prints, for each (path, offset) argument pair: "<size> <count>\n" then <count> bytes
// read from <offset> (size -1: no such file). The bytes go through a temp file so that
// the count is exact even when the file changes meanwhile.
const char kFetchScript[] = R"SH(tmp=$(mktemp) || exit 70
trap 'rm -f "$tmp"' EXIT
max=$1
shift
while [ $# -ge 2 ]; do
  f=$1 off=$2
  shift 2
  if [ -f "$f" ]; then s=$(stat -c %s -- "$f") || s=-1; else s=-1; fi
  : >"$tmp"
  if [ "$s" -gt "$off" ]; then
    tail -c +$((off + 1)) -- "$f" 2>/dev/null | head -c "$max" >"$tmp"
  fi
  printf '%s %s\n' "$s" "$(stat -c %s -- "$tmp")"
  cat -- "$tmp"
done
)SH";

// The controller query for several jobs: every job in one RPC, filtered to ours.
const char kQueryScript[] = R"SH(set -o pipefail
pattern="^JobId=($(IFS='|'; echo "$*")) "
declare -A arrays  # array tasks (A_T) are in their array's records: " ArrayJobId=A "
for id; do [[ $id == *_* ]] && arrays[${id%%_*}]=1; done
[[ ${#arrays[@]} -gt 0 ]] && pattern="$pattern| ArrayJobId=($(IFS='|'; echo "${!arrays[*]}")) "
scontrol --local -o show job | { grep -E "$pattern" || true; }
)SH";

}  // namespace

SlurmClient::SlurmClient(Scenario* scenario, SlurmClientOptions options)
    : scenario_(scenario), options_(std::move(options)) {}

Result<std::unique_ptr<ChildProcess>> SlurmClient::StartStream(
    const std::vector<std::string>& argv) {
  if (!can_stream()) return Status::Internal("this Slurm client cannot stream");
  ++stats_.stream_starts;
  Command command;
  command.argv = argv;  // stdout alone: ssh's messages would break a stream's framing
  Result<std::unique_ptr<ChildProcess>> process = scenario_->Start(command);
  if (!process.ok()) ++stats_.failures;
  return process;
}

Result<CommandOutput> SlurmClient::Run(const std::vector<std::string>& argv,
                                       const std::string& stdin_data) {
  Command command;
  command.argv = argv;
  command.stdin_data = stdin_data;
  return scenario_->Run(command, DeadlineIn(std::max(1, options_.command_timeout_seconds)));
}

Result<std::string> SlurmClient::Submit(const std::string& script, const std::string& dir,
                                        const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv = {"bash", "-c",
                                   "cd -- \"$1\" || exit 1; shift; exec sbatch --parsable \"$@\"",
                                   "trtllm-run-submit", dir};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  argv.push_back(script);
  ++stats_.submits;
  Result<CommandOutput> out = Run(argv);
  if (!out.ok()) return out.status().WithContext("sbatch " + script);
  if (out->exit_code != 0) {
    return Status::ExecutionError(CommandError("sbatch --parsable " + script, out.value()));
  }
  std::string id = FirstLine(out->stdout_text);
  id = id.substr(0, id.find(';'));  // "123;cluster" on multi-cluster setups
  if (id.empty() ||
      !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return Status::ExecutionError("sbatch --parsable " + script + " printed no job id: " +
                                  FirstLine(out->stdout_text + " " + out->stderr_text));
  }
  return id;
}

Result<SlurmClient::JobsSnapshot> SlurmClient::QueryJobs(const std::vector<std::string>& ids) {
  JobsSnapshot snapshot;
  if (ids.empty()) return snapshot;
  ++stats_.controller_queries;
  Result<CommandOutput> out = Status::Ok();
  if (ids.size() == 1) {
    out = Run({"scontrol", "--local", "-o", "show", "job", "--", ids[0]});
  } else {
    std::vector<std::string> argv = {"bash", "-c", kQueryScript, "trtllm-run-query"};
    argv.insert(argv.end(), ids.begin(), ids.end());
    out = Run(argv);
  }
  if (!out.ok()) {
    ++stats_.failures;
    return out.status().WithContext("scontrol show job");
  }
  if (out->exit_code != 0) {
    if (ids.size() == 1 && IsInvalidJobIdError(out->stderr_text + out->stdout_text)) {
      snapshot.unknown = ids;
      return snapshot;
    }
    ++stats_.failures;
    return Status::ExecutionError(CommandError("scontrol --local -o show job", out.value()));
  }
  snapshot.records = ParseScontrolJobs(out->stdout_text);
  for (const std::string& id : ids) {
    bool found = std::any_of(snapshot.records.begin(), snapshot.records.end(),
                             [&](const SlurmJobRecord& r) { return r.job_id == id; });
    if (!found) snapshot.unknown.push_back(id);
  }
  return snapshot;
}

Result<SlurmClient::Accounting> SlurmClient::QueryAccounting(const std::vector<std::string>& ids) {
  Accounting accounting;
  if (ids.empty()) return accounting;
  ++stats_.accounting_queries;
  Result<CommandOutput> out =
      Run({"sacct", "-n", "-P", "-j", Join(ids, ","), std::string("--format=") + kSacctFormat});
  if (!out.ok()) {
    ++stats_.failures;
    return out.status().WithContext("sacct");
  }
  if (out->exit_code != 0) {
    if (IsAccountingDisabledError(out->stderr_text + out->stdout_text)) {
      accounting.disabled = true;
      return accounting;
    }
    ++stats_.failures;
    return Status::ExecutionError(CommandError("sacct -j " + Join(ids, ","), out.value()));
  }
  accounting.records = ParseSacct(out->stdout_text);
  return accounting;
}

Status SlurmClient::Cancel(const std::vector<std::string>& ids) {
  if (ids.empty()) return Status::Ok();
  ++stats_.cancels;
  std::vector<std::string> argv = {"scancel", "--"};  // ids never read as options
  argv.insert(argv.end(), ids.begin(), ids.end());
  Result<CommandOutput> out = Run(argv);
  if (!out.ok()) {
    ++stats_.failures;
    return out.status().WithContext("scancel");
  }
  if (out->exit_code == 0) return Status::Ok();
  std::string text = out->stderr_text + out->stdout_text;
  // Jobs that already ended, or that the controller forgot, need no cancel.
  bool benign = true;
  for (const std::string& line : SplitLines(text, 1000)) {
    if (line.empty()) continue;
    if (line.find("already completing or completed") == std::string::npos &&
        !IsInvalidJobIdError(line)) {
      benign = false;
    }
  }
  if (benign) return Status::Ok();
  ++stats_.failures;
  return Status::ExecutionError(CommandError("scancel " + Join(ids, " "), out.value()));
}

Result<SlurmConfigFacts> SlurmClient::Config() {
  // The slurm.conf the client tools read, when it is a plain file here (no Include lines,
  // which the file alone cannot resolve): no RPC. Otherwise (configless clusters, includes)
  // `scontrol show config`.
  Result<CommandOutput> file =
      Run({"bash", "-c",
           "f=${SLURM_CONF:-/etc/slurm/slurm.conf}; [ -f \"$f\" ] && "
           "[ -r \"$f\" ] || exit 3; grep -qi '^[[:space:]]*include' \"$f\" "
           "&& exit 4; cat -- \"$f\""});
  if (file.ok() && file->exit_code == 0 && !file->stdout_text.empty()) {
    SlurmConfigFacts facts = ParseSlurmConfFile(file->stdout_text);
    facts.source = "slurm.conf";
    return facts;
  }
  ++stats_.config_queries;
  Result<CommandOutput> out = Run({"scontrol", "show", "config"});
  if (!out.ok()) return out.status().WithContext("scontrol show config");
  if (out->exit_code != 0) {
    return Status::ExecutionError(CommandError("scontrol show config", out.value()));
  }
  SlurmConfigFacts facts = ParseSlurmConfig(out->stdout_text);
  facts.source = "scontrol show config";
  return facts;
}

Status SlurmClient::FetchFiles(std::vector<FileChunk>* chunks, std::size_t max_bytes) {
  if (chunks->empty()) return Status::Ok();
  ++stats_.log_fetches;
  std::vector<std::string> argv = {"bash", "-c", kFetchScript, "trtllm-run-fetch",
                                   std::to_string(max_bytes)};
  for (const FileChunk& chunk : *chunks) {
    argv.push_back(chunk.path);
    argv.push_back(std::to_string(chunk.offset));
  }
  Result<CommandOutput> out = Run(argv);
  if (!out.ok()) {
    ++stats_.failures;
    return out.status().WithContext("reading the job's output");
  }
  if (out->exit_code != 0) {
    ++stats_.failures;
    return Status::ExecutionError(CommandError("reading the job's output", out.value()));
  }
  const std::string& text = out->stdout_text;
  std::size_t pos = 0;
  for (FileChunk& chunk : *chunks) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      return Status::ExecutionError("reading the job's output: the reply was cut short");
    }
    std::istringstream header(text.substr(pos, nl - pos));
    long long size = -1;
    std::size_t count = 0;
    if (!(header >> size >> count) || nl + 1 + count > text.size()) {
      return Status::ExecutionError("reading the job's output: unexpected reply \"" +
                                    text.substr(pos, std::min<std::size_t>(80, nl - pos)) + "\"");
    }
    chunk.size = size;
    chunk.bytes = text.substr(nl + 1, count);
    pos = nl + 1 + count;
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- SlurmWatcher

}  // namespace trtllm_run
