// The tools that look at or stop what run_case and run_cases started, list work dirs and
// probe Slurm (tools.h).
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <sstream>

#include "case_state.h"
#include "model/trust.h"
#include "perf/perf_compare.h"
#include "tools.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"
#include "trtllm_run/workdir_cancel.h"

namespace trtllm_run::mcp {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kPollSeconds = 0.25;             // how often a wait looks at the work dir
constexpr double kProgressIntervalSeconds = 2.0;  // notifications/progress while waiting
constexpr double kReportGraceSeconds = 30.0;      // a finished case's report, past timeout_s

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string ProgressMessage(const CaseState& state) {
  std::string message = state.status;
  if (state.elapsed_s)
    message += " for " + std::to_string(static_cast<long long>(*state.elapsed_s)) + " s";
  if (!state.job_id.empty()) message += ", Slurm job " + state.job_id;
  if (!state.last_lines.empty()) message += "; last line: " + state.last_lines.back();
  return message;
}

// Finished with its report written (the supervisor writes it just after the verdict).
bool Settled(const CaseState& state) {
  return (state.finished && !state.report_pending) || state.status == "not_started" ||
         state.status == "abandoned";
}

// Values that reach ssh or the probe's command line: no control characters, no option
// lookalikes, only the ssh options of the one allow-list (model/trust.h).
Status CheckProbeValue(const std::string& name, const std::string& value) {
  for (char c : value) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      return Status::InvalidInput(name + " '" + EscapeControl(value) +
                                  "' holds a control character");
    }
  }
  if (!value.empty() && value[0] == '-') {
    return Status::InvalidInput(name + " '" + value + "' starts with '-'");
  }
  if (name == "ssh_options") return CheckUntrustedSshOption(value, name);
  return Status::Ok();
}

}  // namespace

Result<CommandOutput> RunBounded(const std::vector<std::string>& argv, double seconds) {
  Command command;
  command.argv = argv;
  return MakeLocalScenario()->Run(command, DeadlineIn(seconds));
}

ToolOutcome Tools::WaitCase(const Value& args, CallContext& context) {
  const std::string handle = StringArg(args, "handle");
  const double timeout = NumberArg(args, "timeout_s", 45);
  StateOptions options;
  options.log_lines = static_cast<int>(NumberArg(args, "log_lines", 10));
  Clock::time_point start = Clock::now();
  Result<CaseState> state = ReadCaseState(handle, options);
  if (!state.ok()) return ToolError("attach", state.status());
  double next_progress = 0;
  while (!Settled(state.value())) {
    double waited = Since(start);
    // A verdict whose report its supervisor is still writing is waited for a little past
    // timeout_s, so that a finished state comes with its report.
    const bool report_coming = state->finished && state->report_pending;
    if (waited >= timeout + (report_coming ? kReportGraceSeconds : 0)) break;
    if (waited >= next_progress) {
      context.Progress(waited, timeout, ProgressMessage(state.value()));
      next_progress = waited + kProgressIntervalSeconds;
    }
    const double left = timeout - waited;  // <= 0 while waiting for the report only
    if (!context.Sleep(left > 0 ? std::min(kPollSeconds, left) : kPollSeconds)) break;
    Result<CaseState> again = ReadCaseState(handle, options);
    if (!again.ok()) return ToolError("attach", again.status());
    state = again;
  }
  if (!state->finished) {
    options.registry = &runtime_->registry();
    Result<CaseState> last = ReadCaseState(handle, options);
    if (last.ok()) state = last;
  }
  state->waited_s = Since(start);
  return ToolResult(CaseStateDocument(state.value()), CaseStateText(state.value()));
}

ToolOutcome Tools::CaseStatus(const Value& args) {
  StateOptions options;
  options.log_lines = static_cast<int>(NumberArg(args, "log_lines", 10));
  options.registry = &runtime_->registry();
  Result<CaseState> state = ReadCaseState(StringArg(args, "handle"), options);
  if (!state.ok()) return ToolError("status", state.status());
  return ToolResult(CaseStateDocument(state.value()), CaseStateText(state.value()));
}

ToolOutcome Tools::CancelCase(const Value& args, CallContext& context) {
  const std::string handle_arg = StringArg(args, "handle");
  const double wait = NumberArg(args, "wait_s", 40);
  const int kill_grace = static_cast<int>(NumberArg(args, "kill_grace", 10));
  Result<CaseState> state = ReadCaseState(handle_arg, StateOptions{0, nullptr});
  if (!state.ok()) return ToolError("cancel", state.status());
  const std::string handle = state->handle;
  std::string output;
  Clock::time_point start = Clock::now();
  // A supervisor that has not recorded its run yet (or a run_cases supervisor) is
  // asked directly, as Ctrl-C would: it cancels what it started and writes the verdict.
  auto stop_supervisor = [&](const std::string& record_file) {
    Result<SpawnRecord> record = ReadSpawnRecord(handle + "/" + record_file);
    if (!record.ok() || !SupervisorProven(record.value(), handle)) return;
    ::kill(record->pid, SIGTERM);
    output += "asked trtllm-run (pid " + std::to_string(record->pid) + ") to stop (SIGTERM)\n";
    while (Since(start) < wait && SupervisorProven(record.value(), handle)) {
      if (!context.Sleep(kPollSeconds)) break;
    }
  };
  if (state->finished) {
    output = "nothing to cancel: " + handle + " already finished: " + state->status;
  } else if (state->kind == "cases") {
    stop_supervisor(kCasesRecordFile);
  } else if (state->kind == "stage") {
    stop_supervisor(kStageRecordFile);
  } else if (state->status == "not_started") {
    output = "nothing to cancel: nothing was started in " + handle;
  } else {
    if (state->status == "starting") stop_supervisor(kExecRecordFile);
    Result<CaseState> now = ReadCaseState(handle, StateOptions{0, nullptr});
    if (now.ok() && !now->finished && now->status != "starting") {
      // `trtllm-run cancel`'s protocol, in this process (workdir_cancel.h).
      std::ostringstream lines;
      CancelWorkDirOptions cancel;
      cancel.kill_grace_seconds = kill_grace;
      cancel.wait_seconds = std::max(0.0, wait - Since(start));
      cancel.progress = &lines;
      cancel.sleep = [&context](double seconds) { return context.Sleep(seconds); };
      Result<CancelWorkDirReport> report = CancelWorkDir(runtime_->registry(), handle, cancel);
      if (!report.ok()) return ToolError("cancel", report.status());
      output += lines.str();
      if (!report->summary.empty()) output += report->summary + "\n";
      if (!report->stop_status.ok()) return ToolError("cancel", report->stop_status);
    }
  }
  StateOptions final_options;
  final_options.registry = &runtime_->registry();
  Result<CaseState> final_state = ReadCaseState(handle, final_options);
  if (!final_state.ok()) return ToolError("cancel", final_state.status());
  final_state->waited_s = Since(start);
  Document doc = CaseStateDocument(final_state.value());
  while (!output.empty() && output.back() == '\n') output.pop_back();
  SetStr(&doc, "cancel_output", output, doc.GetAllocator());
  return ToolResult(std::move(doc), CaseStateText(final_state.value()));
}

ToolOutcome Tools::CaseLog(const Value& args) {
  Result<CaseState> state = ReadCaseState(StringArg(args, "handle"), StateOptions{0, nullptr});
  if (!state.ok()) return ToolError("status", state.status());
  const Value* offset_arg = Member(args, "offset");
  std::int64_t offset = offset_arg && offset_arg->IsInt64() ? offset_arg->GetInt64() : 0;
  std::size_t max_bytes = static_cast<std::size_t>(NumberArg(args, "max_bytes", 16384));
  LogChunk chunk;
  Result<LogChunk> read = ReadLogChunk(state.value(), offset, max_bytes);
  if (read.ok()) chunk = read.value();
  Document doc(rapidjson::kObjectType);
  Allocator& a = doc.GetAllocator();
  SetStr(&doc, "handle", state->handle, a);
  SetStr(&doc, "log_file", state->log_file, a);
  Set(&doc, "offset", Value(static_cast<uint64_t>(chunk.offset)), a);
  Set(&doc, "next_offset", Value(static_cast<uint64_t>(chunk.next_offset)), a);
  Set(&doc, "log_bytes", Value(static_cast<uint64_t>(chunk.size)), a);
  Set(&doc, "eof", Value(chunk.next_offset >= chunk.size), a);
  Set(&doc, "finished", Value(state->finished), a);
  SetStr(&doc, "status", state->status, a);
  SetStr(&doc, "text", chunk.text, a);
  std::string header = "bytes " + std::to_string(chunk.offset) + "-" +
                       std::to_string(chunk.next_offset) + " of " + std::to_string(chunk.size) +
                       " of " + state->log_file +
                       (read.ok() ? "" : " (" + read.status().message() + ")") + ":\n";
  return ToolResult(std::move(doc), header + chunk.text);
}

ToolOutcome Tools::PerfCompare(const Value& args) {
  Result<perf::Comparison> comparison =
      perf::CompareWorkDirs(StringArg(args, "run_a"), StringArg(args, "run_b"));
  if (!comparison.ok()) {
    const Status& status = comparison.status();
    return ToolError("perf", status.code() == StatusCode::kNotFound
                                 ? Status::InvalidInput(status.message(), status.hint())
                                 : status);
  }
  Document doc;
  // Full precision: the numbers must read back as the CLI prints them.
  doc.Parse<rapidjson::kParseFullPrecisionFlag>(perf::ComparisonJson(comparison.value()).c_str());
  return ToolResult(std::move(doc), perf::FormatComparison(comparison.value()));
}

ToolOutcome Tools::ListCasesTool(const Value& args) {
  Result<std::string> root = ResolveRepoRootDir(StringArg(args, "repo_root"));
  if (!root.ok()) return ToolError("status", root.status());
  std::vector<CaseState> states =
      ListCases(root.value(), static_cast<int>(NumberArg(args, "limit", 20)));
  Document doc(rapidjson::kObjectType);
  Allocator& a = doc.GetAllocator();
  SetStr(&doc, "repo_root", root.value(), a);
  Value cases(rapidjson::kArrayType);
  std::ostringstream text;
  text << states.size() << " recent case(s) under " << root.value() << "/work_dirs\n";
  for (const CaseState& state : states) {
    Value item(rapidjson::kObjectType);
    SetStr(&item, "handle", state.handle, a);
    SetStr(&item, "kind", state.kind, a);
    SetStr(&item, "status", state.status, a);
    Set(&item, "finished", Value(state.finished), a);
    Set(&item, "exit_code", state.exit_code ? Value(*state.exit_code) : Value(), a);
    SetStr(&item, "scenario", state.scenario, a);
    SetStr(&item, "model_name", state.model_name, a);
    Set(&item, "job_id", state.job_id.empty() ? Value() : Str(state.job_id, a), a);
    Set(&item, "elapsed_s", state.elapsed_s ? Value(*state.elapsed_s) : Value(), a);
    cases.PushBack(item, a);
    text << state.status << "  " << state.handle << "\n";
  }
  Set(&doc, "cases", cases, a);
  return ToolResult(std::move(doc), text.str());
}

ToolOutcome Tools::ProbeSlurm(const Value& args) {
  if (options_.trtllm_run.empty()) {
    return ToolError("env", Status::ExecutionError("this server cannot run trtllm-run env"));
  }
  const double timeout = NumberArg(args, "timeout_s", 60);
  std::vector<std::string> argv = Command("env", false);
  argv.insert(argv.end(), {"--format", "json", "--timeout",
                           std::to_string(std::max(1, static_cast<int>(timeout) - 5))});
  static const std::pair<const char*, const char*> kFlags[] = {
      {"ssh_host", "--ssh-host"},      {"slurm_cluster", "--slurm-cluster"},
      {"slurm_user", "--slurm-user"},  {"user_name", "--user-name"},
      {"identity_file", "--identity"}, {"output_file", "--output"}};
  bool remote = false;
  for (const auto& [name, flag] : kFlags) {
    if (!Member(args, name)) continue;
    std::string value = StringArg(args, name);
    Status checked = CheckProbeValue(name, value);
    if (!checked.ok()) return ToolError("env", checked);
    argv.insert(argv.end(), {flag, value});
    remote = remote || std::string(name) == "ssh_host" || std::string(name) == "slurm_cluster";
  }
  if (const Value* port = Member(args, "ssh_port")) {
    argv.insert(argv.end(), {"--ssh-port", std::to_string(port->GetInt())});
  }
  for (const char* list : {"partitions", "ssh_options"}) {
    const Value* items = Member(args, list);
    for (rapidjson::SizeType i = 0; items && i < items->Size(); ++i) {
      std::string value = (*items)[i].GetString();
      Status checked = CheckProbeValue(list, value);
      if (!checked.ok()) return ToolError("env", checked);
      argv.insert(argv.end(),
                  {std::string(list) == "partitions" ? "--partitions" : "--ssh-option", value});
    }
  }
  if (Member(args, "no_access_check") && (*Member(args, "no_access_check")).GetBool()) {
    argv.push_back("--no-access-check");
  }
  const std::string target =
      remote ? "ssh:" + StringArg(args, "ssh_host", StringArg(args, "slurm_cluster")) : "local";
  Result<CommandOutput> ran = RunBounded(argv, timeout);
  if (!ran.ok()) return ToolError("env", ran.status());
  Document doc(rapidjson::kObjectType);
  Allocator& a = doc.GetAllocator();
  Value env;
  if (!ParseInto(ran->stdout_text, a, &env) || !env.IsObject()) {
    std::string why = ran->timed_out ? "the probe took longer than " +
                                           std::to_string(static_cast<int>(timeout)) + " s"
                                     : ValidUtf8(ran->stderr_text);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return ToolError(
        "env", Status::ExecutionError("the Slurm probe of " + target + " failed (exit " +
                                          std::to_string(ran->exit_code) + "): " + why,
                                      remote ? "SSH never prompts here: use a key (ssh-agent or "
                                               "identity_file), or a ControlMaster connection a "
                                               "person opened once (see the trtllm-run skill)"
                                             : "is this a Slurm login node?"));
  }
  std::vector<std::string> errors;
  if (const Value* listed = Member(env, "errors"); listed && listed->IsArray()) {
    for (const Value& error : listed->GetArray()) {
      if (error.IsString()) errors.push_back(error.GetString());
    }
  }
  SetStr(&doc, "target", target, a);
  Set(&doc, "exit_status", Value(ran->exit_code), a);
  Set(&doc, "errors", StrArray(errors, a), a);
  Set(&doc, "slurm_env", env, a);
  std::string saved = StringArg(args, "output_file");
  Set(&doc, "saved_to", saved.empty() ? Value() : Str(saved, a), a);
  std::string text =
      "Slurm probe of " + target + ": exit " + std::to_string(ran->exit_code) +
      (errors.empty() ? ", no errors"
                      : ", " + std::to_string(errors.size()) + " error(s): " + errors.front()) +
      (saved.empty() ? "" : "; saved to " + saved + " (plan against it with slurm_env_file)");
  return ToolResult(std::move(doc), text);
}

}  // namespace trtllm_run::mcp
