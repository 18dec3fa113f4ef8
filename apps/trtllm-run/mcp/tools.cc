#include "tools.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "case_state.h"
#include "model/edit_distance.h"
#include "model/trust.h"
#include "schemas.h"
#include "spawn.h"
#include "trtllm_run/multi_run.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run::mcp {
namespace fs = std::filesystem;

namespace {

// How long run_case and run_cases wait for the supervisor to record its run (and, on
// Slurm, the job id) before they answer: long enough for sbatch, short against the
// hosts' tool-call limits.
constexpr double kStartWaitSeconds = 5;

std::string Kebab(std::string name) {
  for (char& c : name) {
    if (c == '_') c = '-';
  }
  return name;
}

// The text form of an argument value, as the CLI would get it on its command line.
Status ArgumentText(const std::string& name, const Value& value, std::vector<std::string>* out) {
  if (value.IsString()) {
    out->emplace_back(value.GetString(), value.GetStringLength());
  } else if (value.IsBool()) {
    out->push_back(value.GetBool() ? "true" : "false");
  } else if (value.IsInt64()) {
    out->push_back(std::to_string(value.GetInt64()));
  } else if (value.IsNumber()) {
    out->push_back(ToJson(value));
  } else if (value.IsArray()) {
    for (const Value& item : value.GetArray()) {
      if (!item.IsString()) {
        return Status::InvalidInput(name + " must be a list of strings, got an item that is not");
      }
      out->emplace_back(item.GetString(), item.GetStringLength());
    }
  } else if (value.IsObject() && name == "custom_env") {
    std::string env;  // {KEY: VALUE} as request files take it
    for (auto it = value.MemberBegin(); it != value.MemberEnd(); ++it) {
      std::vector<std::string> text;
      TRTLLM_RUN_RETURN_IF_ERROR(ArgumentText(name, it->value, &text));
      if (text.size() != 1) return Status::InvalidInput("custom_env values must be scalars");
      env += (env.empty() ? "" : " ") + std::string(it->name.GetString()) + "=" +
             (text[0].empty() ? "" : ShellQuote(text[0]));
    }
    out->push_back(env);
  } else {
    return Status::InvalidInput(name + " must be " +
                                    (value.IsNull() ? "given a value (or left out)"
                                                    : std::string("a string, number or boolean")),
                                "see the tool's inputSchema");
  }
  return Status::Ok();
}

// Waits until the work dir's supervisor recorded its run (run_state.json; on Slurm the
// job id too) or ended, at most kStartWaitSeconds.
CaseState AwaitStart(const std::string& handle, bool want_job_id, CallContext& context) {
  StateOptions options;
  options.log_lines = 5;
  double waited = 0;
  Result<CaseState> state = ReadCaseState(handle, options);
  while (state.ok() && waited < kStartWaitSeconds && !state->finished &&
         state->status != "abandoned" &&
         (state->status == "starting" || (want_job_id && state->job_id.empty()))) {
    if (!context.Sleep(0.05)) break;
    waited += 0.05;
    state = ReadCaseState(handle, options);
  }
  CaseState result = state.ok() ? state.value() : CaseState();
  result.waited_s = waited;
  return result;
}

// "YYYYmmdd_HHMMSS" in local time, as work dir names have it.
std::string LocalTime() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%d_%H%M%S", &local);
  return buffer;
}

}  // namespace

std::string ArgumentsForFlags(const std::string& text) {
  static const std::map<std::string, std::string, std::less<>> kFieldOfFlag = [] {
    std::map<std::string, std::string, std::less<>> fields;
    for (const RequestField& field : RequestFields()) fields["--" + field.flag] = field.name;
    fields["--executor-option"] = "executor_option";
    return fields;
  }();
  auto is_name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  };
  std::string out;
  bool in_command = false;  // between backticks: a command line quoted whole, kept as is
  for (std::size_t at = 0; at < text.size();) {
    if (text[at] == '`') in_command = !in_command;
    const bool starts_word = at == 0 || !is_name_char(text[at - 1]);
    if (!in_command && starts_word && text.compare(at, 2, "--") == 0) {
      std::size_t end = at + 2;
      while (end < text.size() && is_name_char(text[end])) ++end;
      auto field = kFieldOfFlag.find(std::string_view(text).substr(at, end - at));
      if (field != kFieldOfFlag.end() && (end == text.size() || text[end] != '=')) {
        // "-p/--partition": the short form goes with it.
        if (out.size() >= 3 && out[out.size() - 1] == '/' && out[out.size() - 3] == '-' &&
            (out.size() == 3 || !is_name_char(out[out.size() - 4]))) {
          out.resize(out.size() - 3);
        }
        out += "argument '" + field->second + "'";
        at = end;
        continue;
      }
    }
    out += text[at++];
  }
  return out;
}

ToolOutcome ToolError(const std::string& subcommand, const Status& status) {
  std::string message = ArgumentsForFlags(status.ToString());
  std::string shown;
  std::istringstream lines(message);
  bool first = true;
  for (std::string line; std::getline(lines, line); first = false) {
    shown += (first ? "" : "\n") + EscapeControl(line);
  }
  ToolOutcome outcome;
  outcome.is_error = true;
  outcome.text = "trtllm-run " + subcommand + ": error: " + shown;
  return outcome;
}

ToolOutcome ToolResult(Document structured, std::string text) {
  ToolOutcome outcome;
  outcome.structured = std::make_unique<Document>();
  outcome.structured->Swap(structured);
  outcome.text = std::move(text);
  return outcome;
}

std::string StringArg(const Value& args, const char* name, const std::string& fallback) {
  const Value* value = Member(args, name);
  return value && value->IsString() ? std::string(value->GetString(), value->GetStringLength())
                                    : fallback;
}

double NumberArg(const Value& args, const char* name, double fallback) {
  const Value* value = Member(args, name);
  return value && value->IsNumber() ? value->GetDouble() : fallback;
}

Status RequestFromArguments(std::string_view tool, const Value& args, CaseRequest* request) {
  for (auto it = args.MemberBegin(); it != args.MemberEnd(); ++it) {
    std::string name(it->name.GetString(), it->name.GetStringLength());
    if (IsToolOption(tool, name)) continue;
    if (LooksLikeSecretName(name)) {
      return Status::InvalidInput(
          "'" + EscapeControl(name) + "': passwords are never tool arguments",
          "use SSH keys, or a ControlMaster connection a person opened once "
          "($TRTLLM_RUN_SSH_CONTROL_DIR, see the trtllm-run skill)");
    }
    if (name != "executor_option") {
      // Named as the agent named it (an argument, not a CLI flag), with the nearest of the
      // tool's own argument names: its inputSchema already lists them all.
      std::vector<std::string> fields;
      for (const RequestField& field : RequestFields()) fields.push_back(field.name);
      if (std::find(fields.begin(), fields.end(), name) == fields.end()) {
        const std::string closest = ClosestName(name, ToolArgumentNames(tool));
        return Status::InvalidInput(
            "unknown argument '" + EscapeControl(name) + "' of tool " + std::string(tool),
            (closest.empty() ? std::string() : "did you mean '" + closest + "'? ") +
                "the tool's inputSchema lists its arguments");
      }
    }
    std::vector<std::string> values;
    TRTLLM_RUN_RETURN_IF_ERROR(ArgumentText(name, it->value, &values));
    const std::string origin = "argument '" + name + "'";
    for (const std::string& value : values) {
      if (name == "ssh_option") {  // an agent's ssh options: the one filter (model/trust.h)
        TRTLLM_RUN_RETURN_IF_ERROR(CheckUntrustedSshOption(value, origin));
      }
      TRTLLM_RUN_RETURN_IF_ERROR(name == "executor_option"
                                     ? SetExecutorOption(request, value, origin)
                                     // Its message starts with the field's name, which
                                     // is the argument's: no origin to repeat it.
                                     : SetRequestField(request, name, value, ""));
    }
  }
  return Status::Ok();
}

Tools::Tools(Runtime* runtime, ToolsOptions options)
    : runtime_(runtime), options_(std::move(options)) {}

std::vector<std::string> Tools::Command(const std::string& subcommand, bool plugin_options) const {
  std::vector<std::string> argv = {options_.trtllm_run, subcommand};
  if (plugin_options) {
    for (const std::string& dir : options_.plugin_dirs)
      argv.insert(argv.end(), {"--plugin-dir", dir});
  }
  if (!options_.clusters_file.empty())
    argv.insert(argv.end(), {"--clusters", options_.clusters_file});
  if (subcommand == "exec" || subcommand == "run" || subcommand == "stage") {
    argv.insert(argv.end(), options_.history_args.begin(), options_.history_args.end());
  }
  return argv;
}

ToolOutcome Tools::Call(std::string_view tool, const Value& arguments, CallContext& context) {
  static const std::pair<const char*, const char*> kCli[] = {
      {"plan_case", "plan"},   {"run_case", "run"},         {"run_cases", "run"},
      {"wait_case", "attach"}, {"case_status", "status"},   {"cancel_case", "cancel"},
      {"case_log", "status"},  {"list_cases", "status"},    {"probe_slurm", "env"},
      {"run_stage", "stage"},  {"test_history", "history"}, {"flaky_tests", "history"},
      {"perf_compare", "perf"}};
  std::string cli = "mcp";
  for (const auto& [name, subcommand] : kCli) {
    if (tool == name) cli = subcommand;
  }
  Status checked = CheckToolArguments(tool, arguments);
  if (!checked.ok()) return ToolError(cli, checked);
  if (tool == "plan_case") return PlanCase(arguments);
  if (tool == "run_case") return RunCase(arguments, context);
  if (tool == "run_cases") return RunCasesTool(arguments, context);
  if (tool == "run_stage") return RunStage(arguments, context);
  if (tool == "wait_case") return WaitCase(arguments, context);
  if (tool == "case_status") return CaseStatus(arguments);
  if (tool == "cancel_case") return CancelCase(arguments, context);
  if (tool == "case_log") return CaseLog(arguments);
  if (tool == "list_cases") return ListCasesTool(arguments);
  if (tool == "probe_slurm") return ProbeSlurm(arguments);
  if (tool == "perf_compare") return PerfCompare(arguments);
  if (tool == "test_history") return TestHistory(arguments);
  if (tool == "flaky_tests") return FlakyTests(arguments);
  return ToolError(cli, Status::InvalidInput("unknown tool '" + std::string(tool) + "'"));
}

ToolOutcome Tools::PlanCase(const Value& args) {
  CaseRequest request;
  Status parsed = RequestFromArguments("plan_case", args, &request);
  if (!parsed.ok()) return ToolError("plan", parsed);
  Result<PreparedCase> prepared = [&] {
    std::lock_guard<std::mutex> lock(runtime_mu_);
    return runtime_->Prepare(request);
  }();
  if (!prepared.ok()) return ToolError("plan", prepared.status());
  const JobSpec& spec = prepared->spec;
  Document doc(rapidjson::kObjectType);
  Allocator& a = doc.GetAllocator();
  auto or_null = [&](const std::string& text) { return text.empty() ? Value() : Str(text, a); };
  SetStr(&doc, "handle", spec.work_dir, a);
  SetStr(&doc, "scenario", spec.scenario, a);
  SetStr(&doc, "workflow", spec.workflow_type, a);
  SetStr(&doc, "model_name", spec.model_name, a);
  Set(&doc, "image", or_null(spec.container_image), a);
  Set(&doc, "script_path", or_null(spec.script_path), a);
  SetStr(&doc, "job_spec", spec.work_dir + "/job_spec.json", a);
  Value devices(rapidjson::kObjectType);
  Set(&devices, "required_devices", Value(spec.required_devices), a);
  Set(&devices, "per_node", Value(spec.required_devices_per_node), a);
  Set(&devices, "total", Value(spec.total_required_devices), a);
  Set(&doc, "devices", devices, a);
  Set(&doc, "nodes", Value(spec.node_count), a);
  SetStr(&doc, "command", prepared->planned.plan.command, a);
  Set(&doc, "notes", StrArray(PlanNotes(prepared.value()), a), a);
  return ToolResult(std::move(doc), FormatPlanSummary(prepared.value()) +
                                        "Next: run_case with {\"handle\": \"" + spec.work_dir +
                                        "\"} runs it.");
}

ToolOutcome Tools::RunCase(const Value& args, CallContext& context) {
  std::string handle = StringArg(args, "handle");
  std::string work_dir;
  std::string scenario;
  if (!handle.empty()) {
    CaseRequest extra;
    Status parsed = RequestFromArguments("run_case", args, &extra);
    if (!parsed.ok()) return ToolError("exec", parsed);
    for (auto it = args.MemberBegin(); it != args.MemberEnd(); ++it) {
      if (!IsToolOption("run_case", it->name.GetString())) {
        return ToolError("exec",
                         Status::InvalidInput("give either handle or request fields, not both ('" +
                                                  std::string(it->name.GetString()) + "' given)",
                                              "the work dir of handle already holds its plan"));
      }
    }
    Result<CaseState> state = ReadCaseState(handle, StateOptions{0, nullptr});
    if (!state.ok()) return ToolError("exec", state.status());
    if (state->kind != "case" || state->status != "not_started") {
      return ToolError("exec", Status::InvalidInput(
                                   "'" + state->handle + "' was already started (" + state->status +
                                       "): one run per work dir",
                                   "wait_case or case_status shows it; plan it again to rerun"));
    }
    work_dir = state->handle;
    scenario = state->scenario;
  } else {
    CaseRequest request;
    Status parsed = RequestFromArguments("run_case", args, &request);
    if (!parsed.ok()) return ToolError("run", parsed);
    Result<PreparedCase> prepared = [&] {
      std::lock_guard<std::mutex> lock(runtime_mu_);
      return runtime_->Prepare(request);
    }();
    if (!prepared.ok()) return ToolError("run", prepared.status());
    work_dir = prepared->spec.work_dir;
    scenario = prepared->spec.scenario;
  }
  if (options_.trtllm_run.empty()) {
    return ToolError("run", Status::ExecutionError("this server cannot start supervisors"));
  }
  std::vector<std::string> argv = Command("exec", true);
  argv.insert(argv.end(), {"--kill-grace",
                           std::to_string(static_cast<int>(NumberArg(args, "kill_grace", 30)))});
  argv.insert(argv.end(), {"--html", work_dir + "/" + kReportFile});
  argv.push_back(work_dir);
  Result<DetachedProcess> started =
      SpawnDetached(argv, "/dev/null", work_dir + "/" + kSupervisorLogFile);
  if (!started.ok()) return ToolError("run", started.status().WithContext(work_dir));
  SpawnRecord record;
  record.pid = started->pid;
  record.start_time = started->start_time;
  record.started_at = NowIso8601();
  record.argv = argv;
  Status written = WriteSpawnRecord(work_dir + "/" + kExecRecordFile, record);
  if (!written.ok()) std::cerr << "trtllm-run mcp: warning: " << written.ToString() << "\n";
  bool slurm = false;  // the executor submits to Slurm (ExecutorTraits::slurm)
  {
    std::lock_guard<std::mutex> lock(runtime_mu_);
    Result<ExecutorTraits> traits = runtime_->registry().ExecutorTraitsOf(scenario);
    slurm = traits.ok() && traits->slurm;
  }
  CaseState state = AwaitStart(work_dir, slurm, context);
  std::string text = "started " + work_dir + " (" + scenario +
                     (state.job_id.empty() ? "" : ", Slurm job " + state.job_id) +
                     "): call wait_case with {\"handle\": \"" + work_dir + "\"} for the verdict";
  return ToolResult(CaseStateDocument(state), text);
}

ToolOutcome Tools::RunCasesTool(const Value& args, CallContext& context) {
  const std::string cases_file = StringArg(args, "cases_file");
  CaseRequest shared;
  Status parsed = RequestFromArguments("run_cases", args, &shared);
  if (!parsed.ok()) return ToolError("run", parsed);
  Status valid = ValidateRequestValues(shared);
  if (!valid.ok()) return ToolError("run", valid);
  Result<std::vector<CaseEntry>> cases = LoadCasesFile(cases_file, shared);
  if (!cases.ok()) return ToolError("run", cases.status());
  for (const CaseEntry& entry : cases.value()) {  // the agent named the file: same filter
    for (const std::string& option : entry.request.ssh_option) {
      Status allowed = CheckUntrustedSshOption(option, entry.origin + ": ssh_option");
      if (!allowed.ok()) return ToolError("run", allowed);
    }
  }
  Result<std::vector<PlannedCase>> planned = [&] {
    std::lock_guard<std::mutex> lock(runtime_mu_);
    return PlanCases(*runtime_, cases.value(), nullptr);
  }();
  if (!planned.ok()) return ToolError("run", planned.status());
  if (options_.trtllm_run.empty()) {
    return ToolError("run", Status::ExecutionError("this server cannot start supervisors"));
  }
  // The handle: a fresh dir beside the cases' work dirs, holding the supervisor's record
  // and log; the combined result goes to <handle>/run.
  std::string root = planned->front().request.repo_root.value_or(".");
  std::string planned_dir = (fs::path(root) / "work_dirs" / ("cases_" + LocalTime())).string();
  std::error_code error;
  fs::create_directories(fs::path(planned_dir).parent_path(), error);
  std::string handle = planned_dir;
  for (int attempt = 2; !fs::create_directory(handle, error); ++attempt) {
    if (error || attempt > 999) {
      return ToolError("run", Status::IoError("cannot create the run dir '" + handle + "'" +
                                              (error ? ": " + error.message() : "")));
    }
    handle = planned_dir + "_" + std::to_string(attempt);
  }
  // The shared request fields travel as a request file (JSON is YAML).
  Value shared_args(rapidjson::kObjectType);
  Document holder;
  for (auto it = args.MemberBegin(); it != args.MemberEnd(); ++it) {
    if (IsToolOption("run_cases", it->name.GetString())) continue;
    Value copy(it->value, holder.GetAllocator());
    Set(&shared_args, it->name.GetString(), std::move(copy), holder.GetAllocator());
  }
  std::vector<std::string> argv = Command("run", true);
  argv.insert(argv.end(), {"--cases", fs::absolute(cases_file, error).string(), "--run-dir",
                           handle + "/run", "--html", handle + "/" + kReportFile});
  if (shared_args.MemberCount() > 0) {
    std::string request_file = handle + "/shared_request.json";
    Status saved = WriteFileAtomic(request_file, ToJson(shared_args) + "\n");
    if (!saved.ok()) return ToolError("run", saved);
    argv.insert(argv.end(), {"--request", request_file});
  }
  for (const char* option : {"max_parallel", "max_parallel_local", "kill_grace"}) {
    if (Member(args, option)) {
      argv.insert(argv.end(), {"--" + Kebab(option),
                               std::to_string(static_cast<int>(NumberArg(args, option, 0)))});
    }
  }
  Result<DetachedProcess> started =
      SpawnDetached(argv, "/dev/null", handle + "/" + kSupervisorLogFile);
  if (!started.ok()) return ToolError("run", started.status());
  SpawnRecord record;
  record.pid = started->pid;
  record.start_time = started->start_time;
  record.started_at = NowIso8601();
  record.argv = argv;
  record.cases_file = cases_file;
  record.run_dir = handle + "/run";
  Status written = WriteSpawnRecord(handle + "/" + kCasesRecordFile, record);
  if (!written.ok()) return ToolError("run", written);
  context.Sleep(0.2);  // the supervisor's first lines
  Result<CaseState> state = ReadCaseState(handle, StateOptions{5, nullptr});
  if (!state.ok()) return ToolError("run", state.status());
  return ToolResult(CaseStateDocument(state.value()), "started " + std::to_string(cases->size()) +
                                                          " case(s) of " + cases_file +
                                                          ": call wait_case with {\"handle\": \"" +
                                                          handle + "\"} for the combined verdict");
}

ToolOutcome Tools::RunStage(const Value& args, CallContext& context) {
  const std::string stage = StringArg(args, "stage");
  if (stage.empty() || stage.front() == '-') {
    return ToolError("stage",
                     Status::InvalidInput("stage '" + EscapeControl(stage) + "' is no stage name",
                                          "e.g. DGX_B200-4_GPUs-PyTorch-1"));
  }
  // The request fields: checked as the CLI checks its flags (secrets refused, ssh options
  // only from the allow-list); a stage's jobs run its tests, so no command fields.
  CaseRequest shared;
  Status parsed = RequestFromArguments("run_stage", args, &shared);
  if (!parsed.ok()) return ToolError("stage", parsed);
  Status valid = ValidateRequestValues(shared);
  if (!valid.ok()) return ToolError("stage", valid);
  if (options_.trtllm_run.empty()) {
    return ToolError("stage", Status::ExecutionError("this server cannot start supervisors"));
  }
  // The handle: a fresh dir under <repo>/work_dirs holding the supervisor's record and log;
  // the stage runs in <handle>/run.
  Result<std::string> root = ResolveRepoRootDir(shared.repo_root.value_or(""));
  if (!root.ok()) return ToolError("stage", root.status());
  std::string planned_dir =
      (fs::path(root.value()) / "work_dirs" / ("stage_mcp_" + LocalTime())).string();
  std::error_code error;
  fs::create_directories(fs::path(planned_dir).parent_path(), error);
  std::string handle = planned_dir;
  for (int attempt = 2; !fs::create_directory(handle, error); ++attempt) {
    if (error || attempt > 999) {
      return ToolError("stage", Status::IoError("cannot create the run dir '" + handle + "'" +
                                                (error ? ": " + error.message() : "")));
    }
    handle = planned_dir + "_" + std::to_string(attempt);
  }
  std::vector<std::string> argv = Command("stage", true);
  argv.insert(argv.end(),
              {stage, "--run-dir", handle + "/run", "--html", handle + "/" + kReportFile});
  if (!shared.repo_root) argv.insert(argv.end(), {"--repo-root", root.value()});
  Value shared_args(rapidjson::kObjectType);
  Document holder;
  for (auto it = args.MemberBegin(); it != args.MemberEnd(); ++it) {
    const std::string name(it->name.GetString(), it->name.GetStringLength());
    if (!IsToolOption("run_stage", name)) {
      Value copy(it->value, holder.GetAllocator());
      Set(&shared_args, it->name.GetString(), std::move(copy), holder.GetAllocator());
      continue;
    }
    if (name == "stage") continue;
    std::vector<std::string> values;
    if (it->value.IsBool()) {  // a switch: its flag alone
      if (it->value.GetBool()) argv.push_back("--" + Kebab(name));
      continue;
    }
    if (it->value.IsNumber()) {
      values.push_back(std::to_string(static_cast<long long>(it->value.GetDouble())));
    } else {
      Status text = ArgumentText(name, it->value, &values);
      if (!text.ok()) return ToolError("stage", text);
    }
    for (const std::string& value : values) argv.insert(argv.end(), {"--" + Kebab(name), value});
  }
  if (shared_args.MemberCount() > 0) {  // the shared request fields as a request file
    std::string request_file = handle + "/shared_request.json";
    Status saved = WriteFileAtomic(request_file, ToJson(shared_args) + "\n");
    if (!saved.ok()) return ToolError("stage", saved);
    argv.insert(argv.end(), {"--request", request_file});
  }
  Result<DetachedProcess> started =
      SpawnDetached(argv, "/dev/null", handle + "/" + kSupervisorLogFile);
  if (!started.ok()) return ToolError("stage", started.status());
  SpawnRecord record;
  record.pid = started->pid;
  record.start_time = started->start_time;
  record.started_at = NowIso8601();
  record.argv = argv;
  record.run_dir = handle + "/run";
  Status written = WriteSpawnRecord(handle + "/" + kStageRecordFile, record);
  if (!written.ok()) return ToolError("stage", written);
  // Planning errors (an unknown stage, an empty render) end the supervisor at once with
  // exit 2: wait for that briefly so that they come back as this call's error.
  double waited = 0;
  Result<CaseState> state = ReadCaseState(handle, StateOptions{5, nullptr});
  while (state.ok() && state->supervisor_alive && state->cases.empty() &&
         waited < kStartWaitSeconds && context.Sleep(0.1)) {
    waited += 0.1;
    state = ReadCaseState(handle, StateOptions{5, nullptr});
  }
  if (!state.ok()) return ToolError("stage", state.status());
  if (state->status == "abandoned") {
    std::string log;
    for (const std::string& line : state->last_lines) log += (log.empty() ? "" : "\n") + line;
    // Refused before it started a shard (bad input: exit 2): nothing is left behind. The
    // handle is this call's own fresh dir and its supervisor has ended.
    if (state->cases.empty()) fs::remove_all(handle, error);
    return ToolError("stage", Status::InvalidInput("trtllm-run stage " + EscapeControl(stage) +
                                                   " ended before it started a shard:\n" + log));
  }
  state->waited_s = waited;
  return ToolResult(CaseStateDocument(state.value()),
                    "started stage " + stage + ": call wait_case with {\"handle\": \"" + handle +
                        "\"} for each shard's progress and the stage's verdict");
}

}  // namespace trtllm_run::mcp
